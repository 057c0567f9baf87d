// The real app on a workspace whose kernel runs on a Jupyter Server in namespaces with no route
// back to this machine and no sight of the workspace (tests/servers/remote-gateway.sh): chosen in
// Settings (URL, token, Test connection, Apply), the status bar says where the kernel runs, a
// cell runs there, a cell's tool call raises the approval dialog here and the tool runs here (the
// generated module reaches the kernel over its own channel); opened again, the workspace's kernel
// starts on the server with the kept token; back on this computer, the kernel sees the workspace.
// Run by tests/e2e/run.sh.
import { test, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { App, ROOT, SHOTS, answerDialog, fixtureWorkspace, notebook, quitAll, settled } from './webdriver.mjs';

const apps = [];
afterEach((t) => quitAll(apps, t));

const gateways = [];
after(() => {
  for (const p of gateways) p.kill('SIGKILL');
});

/** Keep a screenshot for the docs with IPYBOX_UPDATE_SCREENSHOTS=1. */
function forDocs(shot, name) {
  if (process.env.IPYBOX_UPDATE_SCREENSHOTS === '1') copyFileSync(shot, join(ROOT, 'docs/images', name));
}

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function kernelspecs(port, token) {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/kernelspecs', headers: { authorization: `token ${token}` }, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** A Jupyter Server with `hide` out of its sight and no route back; its URL on this machine. */
async function remoteServer(hide) {
  const home = process.env.IPYBOX_HOME ?? join(process.env.HOME, '.local', 'share', 'ipybox');
  // Outside /tmp, which holds the workspace the namespace hides.
  const base = join(ROOT, 'target', 'remote-gateways');
  mkdirSync(base, { recursive: true });
  const state = mkdtempSync(join(base, 'e2e-'));
  const token = `e2e-${process.pid}`;
  const inside = spawn('bash', [join(ROOT, 'tests/servers/remote-gateway.sh'), 'jupyter-server', hide, state, token], {
    env: { ...process.env, PYTHON: join(home, 'venv', 'bin', 'python') },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  inside.stderr.on('data', (d) => (log += d));
  gateways.push(inside);
  const port = await freePort();
  const forward = spawn('socat', [`TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr`, `UNIX-CONNECT:${join(state, 'gw.sock')}`], { stdio: 'ignore' });
  gateways.push(forward);
  const deadline = Date.now() + 60000;
  while ((await kernelspecs(port, token)) !== 200) {
    if (Date.now() > deadline) throw new Error(`the Jupyter Server in its namespace did not come up: ${log}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url: `http://127.0.0.1:${port}`, token };
}

async function open(dir) {
  const app = await App.launch(['open', join(dir, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 90000);
  return app;
}

/** Run cell `i`: select it, then the toolbar's Run. */
async function run(app, i) {
  await app.click(`.cell[data-cell-id="cell-${i}"] .prompt`);
  await app.click('#run-cell');
  return settled(app, i);
}

const status = (app) => app.text('#sandbox-policy-status');
/** Wait until the status bar says `text` (it follows the session's events). */
const statusIs = (app, text) => app.until(`the status bar to say ${text}`, async () => (await status(app)) === text, 15000);

test('Settings moves the kernel to a Jupyter server with no route back: cells run there, tool calls are approved and run here, the choice is kept', async () => {
  const ws = fixtureWorkspace();
  const marker = join(ws, 'marker.txt');
  const where = `import os; print("sees the workspace:", os.path.exists(${JSON.stringify(join(ws, 'test.ipynb'))}))`;
  const call = `from mcptools.fx.write_file import Params, run\nprint(run(Params(path=${JSON.stringify(marker)}, text="asked from the server")))`;
  writeFileSync(join(ws, 'test.ipynb'), JSON.stringify(notebook(where, call, where)));
  const server = await remoteServer(ws);

  let app = await open(ws);
  await statusIs(app, 'Not sandboxed');

  // Settings → A Jupyter server.
  await app.click('#open-settings');
  await app.until('the settings', () => app.execute('return document.querySelector("#remote-running")?.textContent === "The kernel runs on this computer.";'));
  await app.click('#remote-on');
  await app.click('#remote-url');
  await app.type(server.url);
  await app.click('#test-remote');
  const refused = await app.until('the refusal', () => app.execute('const e = document.querySelector("#remote-error"); return e && !e.hidden ? e.textContent : null;'), 30000);
  assert.match(refused, /refused the request: it needs a token/);
  await app.click('#remote-token');
  await app.type(server.token);
  await app.click('#test-remote');
  const answered = await app.until('the server to answer', () => app.execute('const s = document.querySelector("#remote-status")?.textContent ?? ""; return s.startsWith("The server answers") ? s : null;'), 30000);
  assert.match(answered, /Kernels it offers: .*python3/);
  const t0 = Date.now();
  await app.click('#apply-remote');
  // Moving the kernel to a server is confirmed natively.
  answerDialog('Run the kernel on a server?', 'alt+r', 60);
  const applied = await app.until('Apply', () => app.execute(`
    const e = document.querySelector('#remote-error');
    if (e && !e.hidden) return 'error: ' + e.textContent;
    const s = document.querySelector('#remote-status')?.textContent ?? '';
    return s.startsWith('Applied') ? s : null;`), 90000);
  assert.equal(applied, `Applied: the kernel restarted on ${server.url}.`);
  await app.until('the kernel on the server', async () => (await app.kernelStatus()) === 'idle', 90000);
  process.stdout.write(`# Apply to a kernel ready on the server: ${Date.now() - t0} ms\n`);
  const shot = join(SHOTS, 'remote-settings.png');
  spawnSync('import', ['-window', 'root', shot]);
  forDocs(shot, 'remote-settings.png');
  await app.click('#close-settings');
  await statusIs(app, `On server: ${server.url.replace('http://', '')}`);

  // A cell runs there: it does not see the workspace.
  assert.match((await run(app, 0)).output, /sees the workspace: False/);
  // A tool call: the dialog here, the tool here (the marker is in the workspace, which the
  // kernel cannot see), the module over the channel.
  await app.click('.cell[data-cell-id="cell-1"] .prompt');
  await app.click('#run-cell');
  answerDialog('Approve tool call — fx.write_file', 'Return', 60);
  const called = await settled(app, 1);
  assert.equal(called.state, 'done', called.output);
  assert.equal(readFileSync(marker, 'utf8'), 'asked from the server');
  await app.quit();
  apps.pop();

  // Opened again: the kernel starts on the server, with the kept token.
  app = await open(ws);
  await statusIs(app, `On server: ${server.url.replace('http://', '')}`);
  assert.match((await run(app, 0)).output, /sees the workspace: False/);

  // Back to this computer.
  await app.click('#open-settings');
  await app.until('the settings', () => app.execute('return document.querySelector("#remote-on")?.checked === true;'));
  assert.match(await app.text('#remote-kept'), /^Kept in (your keyring|a file only you can read \(no keyring answered\)): a token\./);
  await app.click('#remote-off');
  await app.click('#apply-remote');
  await app.until('Apply', () => app.execute('return document.querySelector("#remote-status")?.textContent === "Applied: the kernel restarted on this computer.";'), 90000);
  await app.until('the kernel here', async () => (await app.kernelStatus()) === 'idle', 90000);
  await app.click('#close-settings');
  await statusIs(app, 'Not sandboxed');
  assert.match((await run(app, 2)).output, /sees the workspace: True/);
  assert.ok(existsSync(marker));
});
