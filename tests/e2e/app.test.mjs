// The real app under Xvfb: tool calls asked in a native dialog, input() in a cell, the
// first-run progress bar, a kernel that cannot start explained in words, nothing left running after the window closes, and a notebook
// that survives the app being killed while it saves. Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, APP, Keys, ROOT, SHOTS, workspace, notebook, answerDialog, cell, python, settled, quitAll } from './webdriver.mjs';

const apps = [];
afterEach((t) => quitAll(apps, t));

async function open(dir, file = 'test.ipynb', env = {}) {
  const app = await App.launch(['open', join(dir, file)], { env });
  apps.push(app);
  await app.ready();
  return app;
}



const pids = (pattern) =>
  new Set(spawnSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean));

test('a tool call from a cell asks the person in a native dialog: Approve runs it, Escape rejects it', async () => {
  const call = [
    'from mcptools.everything import echo',
    'from mcptools._runtime import ApprovalRejected',
    'try:',
    '    print(echo.run(echo.Params(message="hi from a cell")))',
    'except ApprovalRejected as e:',
    '    print("rejected:", e)',
  ].join('\n');
  const dir = workspace({ 'test.ipynb': notebook(call, call) });
  const server = join(ROOT, 'tests/servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  const reg = spawnSync(APP, ['register', 'everything', '--workspace', dir, '--params',
    JSON.stringify({ command: 'node', args: [server, 'stdio'] })], { encoding: 'utf8' });
  assert.equal(reg.status, 0, reg.stderr);
  const app = await open(dir);
  await app.press(Keys.Shift, Keys.Enter);
  // The whole screen, dialog and window (the README's picture of an approval).
  spawnSync('timeout', ['15', 'xdotool', 'search', '--sync', '--name', '^Approve tool call — everything.echo$']);
  await new Promise((r) => setTimeout(r, 300));
  spawnSync('import', ['-window', 'root', join(SHOTS, 'approval-dialog.png')]);
  answerDialog('Approve tool call — everything.echo', 'Return');
  const approved = await settled(app, 0);
  assert.match(approved.output, /Echo: hi from a cell/, 'approved: the tool ran');
  await app.press(Keys.Shift, Keys.Enter);
  answerDialog('Approve tool call — everything.echo', 'Escape');
  const rejected = await settled(app, 1);
  assert.match(rejected.output, /rejected:/, 'rejected: the tool did not run and the code was told');
  assert.doesNotMatch(rejected.output, /Echo:/);
});

test('input() asks inside the cell', async () => {
  const dir = workspace({ 'test.ipynb': notebook('name = input("Your name: ")\nprint("hello", name)') });
  const app = await open(dir);
  await app.press(Keys.Shift, Keys.Enter);
  await app.click('.cell input.stdin-input');
  await app.type('Ada');
  await app.press(Keys.Enter);
  const done = await settled(app, 0);
  assert.equal(done.state, 'done');
  assert.match(done.output, /hello Ada/);
});

test('first run: the window shows a progress bar while the Python environment is built', async () => {
  const home = mkdtempSync(join(tmpdir(), 'ipybox-e2e-home-'));
  const dir = workspace({ 'test.ipynb': notebook('print("provisioned")') });
  const app = await App.launch(['open', join(dir, 'test.ipynb')], { env: { IPYBOX_HOME: home } });
  apps.push(app);
  const seen = await app.until('the progress bar', () => app.execute(
    `const p = document.querySelector('#provisioning');
     return p && !p.hidden ? p.textContent : null;`), 30000);
  assert.match(seen, /Python/i, `the banner says what happens: ${seen}`);
  await app.screenshot('first-run-progress');
  await app.ready();
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 300000);
  assert.equal(await app.execute('return document.querySelector("#provisioning").hidden;'), true,
    'the bar goes away when the kernel is ready');
  await app.press(Keys.Shift, Keys.Enter);
  assert.match((await settled(app, 0)).output, /provisioned/);
});

test('a kernel that cannot start is explained in the window with the fix; a cell run then says so, and the notebook stays editable', async () => {
  const dir = workspace({ 'test.ipynb': notebook('print("never ran")') });
  const app = await App.launch(['open', join(dir, 'test.ipynb')], { env: { IPYBOX_PYTHON: '/nonexistent/python3' } });
  apps.push(app);
  await app.ready();
  const said = await app.until('the start-up error', () => app.execute(
    `const e = document.querySelector('#startup-error');
     return e && !e.hidden ? e.textContent : null;`), 30000);
  assert.match(said, /The Python kernel could not be started/);
  assert.match(said, /cannot run the Python at \/nonexistent\/python3 \(set by IPYBOX_PYTHON or --python\)/);
  assert.match(said, /unset it to use the environment ipybox makes itself/, 'the fix is in the words');
  assert.equal(await app.kernelStatus(), 'dead');
  await app.press(Keys.Shift, Keys.Enter);
  const ran = await settled(app, 0);
  assert.equal(ran.state, 'failed', 'the cell fails rather than waiting forever');
  const why = await app.execute(`const c = document.querySelectorAll('.cell')[0];
    return (c.querySelector('.outputs')?.textContent ?? '') + (c.querySelector('.cell-notice')?.textContent ?? '');`);
  assert.match(why, /The kernel is not running: it could not start.*Restart it/, `the cell says why and what to do: ${why}`);
  assert.doesNotMatch(why, /never ran/);
});

test('%pip install in a cell, approved as the shell command it is, installs into the kernel\'s environment; the next cell imports it', async () => {
  const name = `ipybox_e2e_probe_${process.pid}`;
  const dir = workspace({ 'test.ipynb': notebook(`%pip install --no-deps ./${name}-1.0-py3-none-any.whl`, `import ${name}\nprint(${name}.VALUE)`, `%pip uninstall -y ${name}`) });
  // A wheel made here, so the test needs no network.
  const made = python([
    'import sys, zipfile',
    'name, path = sys.argv[1], sys.argv[2]',
    'with zipfile.ZipFile(path, "w") as z:',
    '    z.writestr(f"{name}.py", "VALUE = 42\\n")',
    '    z.writestr(f"{name}-1.0.dist-info/METADATA", f"Metadata-Version: 2.1\\nName: {name}\\nVersion: 1.0\\n")',
    '    z.writestr(f"{name}-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")',
    '    z.writestr(f"{name}-1.0.dist-info/RECORD", "")',
  ].join('\n'), name, join(dir, `${name}-1.0-py3-none-any.whl`));
  assert.equal(made.status, 0, made.stderr);
  const app = await open(dir);
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  await app.press(Keys.Shift, Keys.Enter);
  // pip is a shell command: the person approves it, as any.
  answerDialog('Approve tool call — ipybox.shell', 'Return', 30);
  const installed = await settled(app, 0, 'pip to finish');
  assert.equal(installed.state, 'done', installed.output);
  assert.match(installed.output, /Processing .*\.whl/);
  assert.match(installed.output, new RegExp(`Successfully installed ${name.replaceAll('_', '-')}-1\\.0`));
  await app.press(Keys.Shift, Keys.Enter);
  assert.match((await settled(app, 1)).output, /^42/);
  await app.press(Keys.Shift, Keys.Enter);
  answerDialog('Approve tool call — ipybox.shell', 'Return', 30);
  assert.match((await settled(app, 2, 'the uninstall')).output, /Successfully uninstalled/);
});

test('closing the window stops the kernel and the gateway', async () => {
  const before = pids('kernel_gateway');
  const dir = workspace({ 'test.ipynb': notebook('print(1)') });
  const app = await open(dir);
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle');
  const ours = [...pids('kernel_gateway')].filter((p) => !before.has(p));
  assert.ok(ours.length >= 1, 'the app started a gateway');
  await app.execute(`window.__TAURI_INTERNALS__.invoke('plugin:window|close', { label: 'main' }); return true;`).catch(() => undefined);
  const deadline = Date.now() + 10000;
  let left = ours;
  while (Date.now() < deadline && left.length) {
    await new Promise((r) => setTimeout(r, 100));
    const now = pids('kernel_gateway');
    left = ours.filter((p) => now.has(p));
  }
  assert.deepEqual(left, [], 'nothing outlives the app');
});

test('killing the app while it saves leaves the notebook whole', async () => {
  // A large notebook (about 10 MB of outputs), so a save takes a while to write.
  const big = notebook(...Array.from({ length: 20 }, (_, i) => `print(${i})`));
  for (const c of big.cells) c.outputs = [{ output_type: 'stream', name: 'stdout', text: 'x'.repeat(500000) + '\n' }];
  for (const delay of [5, 40, 150]) {
    const dir = workspace({ 'test.ipynb': big });
    const app = await open(dir);
    await app.press('a'); // a new cell above: the notebook changed
    await app.press(Keys.Control, 's');
    await new Promise((r) => setTimeout(r, delay));
    spawnSync('pkill', ['-KILL', '-f', `ipybox open ${dir}`]);
    await apps.pop().quit();
    const text = readFileSync(join(dir, 'test.ipynb'), 'utf8');
    const saved = JSON.parse(text); // throws on a torn file
    assert.ok(saved.cells.length === 20 || saved.cells.length === 21,
      `either the old notebook or the new one (killed after ${delay} ms): ${saved.cells.length} cells`);
  }
});
