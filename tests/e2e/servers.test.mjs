// The MCP servers tab in the real app under Xvfb: a stdio fixture server registered through
// the form (Test connection lists its tools, the generated signature is shown) and called
// from a cell; an HTTP server registered; a server that fails to start shows its stderr; a
// server that crashes mid-call shows as crashed with its last stderr lines.
// Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { App, ROOT, SHOTS, workspace, notebook, answerDialog, cell, settled, quitAll } from './webdriver.mjs';

const FIXTURE = join(ROOT, 'target', 'debug', 'ipybox-fixture-mcp');

/** Keep a screenshot for the docs with IPYBOX_UPDATE_SCREENSHOTS=1. */
function forDocs(shot, name) {
  if (process.env.IPYBOX_UPDATE_SCREENSHOTS === '1') copyFileSync(shot, join(ROOT, 'docs/images', name));
}

const apps = [];
afterEach((t) => quitAll(apps, t));

async function open(dir) {
  const app = await App.launch(['open', join(dir, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  return app;
}

async function openServersTab(app) {
  await app.click('#toggle-approvals');
  await app.click('#side-tab-servers');
  await app.until('the servers tab', () => app.execute('return !!document.querySelector("#mcp-servers") && document.querySelector("#side-panel-servers")?.hidden === false;'));
}

/** Type into the form's fields as a person would (the value, then an input event). */
async function fill(app, fields) {
  await app.execute(
    `for (const [id, value] of Object.entries(arguments[0])) {
       const el = document.getElementById(id);
       if (el.type === 'radio' || el.type === 'checkbox') { el.checked = value; el.dispatchEvent(new Event('change', { bubbles: true })); }
       else { el.value = value; el.dispatchEvent(new Event('input', { bubbles: true })); }
     }`,
    fields,
  );
}

const step = (what) => process.stdout.write(`# ${new Date().toISOString().slice(11, 19)} ${what}\n`);
const card = (name) => `.server-card[data-server="${name}"]`;

async function register(app, name, fields, tools) {
  step(`register ${name}`);
  await app.click('#add-server');
  await fill(app, { 'server-name': name, ...fields });
  let t0 = Date.now();
  await app.click('#test-server');
  const tested = await app.until('Test connection', () => app.text('#server-test-result .server-test-ok, #server-test-result .server-stderr'), 30000);
  step(`test connection: ${Date.now() - t0} ms`);
  assert.match(tested, tools, `Test connection lists the tools: ${tested}`);
  t0 = Date.now();
  await app.click('#save-server');
  await app.until(`${name} in the list`, () => app.execute('return !!document.querySelector(arguments[0]);', card(name)), 30000);
  step(`saved (registered and generated): ${Date.now() - t0} ms`);
}

test('a stdio server registered through the form: its tools, a generated signature, and a call from a cell', async () => {
  const dir = workspace({ 'test.ipynb': notebook('from mcptools.fx.echo import Params, run\nprint(run(Params(text="hello from the form")))') });
  const app = await open(dir);
  await openServersTab(app);
  await app.until('the empty list', () => app.execute('return !document.querySelector("#mcp-servers .panel-empty").hidden;'));
  await register(app, 'fx', { 'server-command': FIXTURE, 'server-args': 'stdio' }, /^Connected: the server offers \d+ tools\.$/);

  const count = await app.execute('return document.querySelectorAll(arguments[0] + " .server-tool").length;', card('fx'));
  assert.ok(count >= 10, `the fixture's tools are listed (${count})`);
  await app.click(`${card('fx')} .server-tool[data-tool="echo"] summary`);
  const iface = await app.text(`${card('fx')} .server-tool[data-tool="echo"] .server-interface`);
  assert.match(iface, /^class Params\(BaseModel\):/, iface);
  assert.match(iface, /text: str = Field\(\.\.\., description="Text to return unchanged\."\)/, iface);
  assert.match(iface, /def run\(params: Params\) -> str:\n {4}"""Return the given text unchanged\."""/, iface);
  assert.equal(await app.text(`${card('fx')} .server-tool[data-tool="echo"] .server-import code`), 'from mcptools.fx.echo import Params, run');
  step('screenshot');
  // X's own screenshot: WebKitWebDriver's sometimes never answers for a tall side panel.
  await new Promise((r) => setTimeout(r, 500));
  mkdirSync(SHOTS, { recursive: true });
  const shot = join(SHOTS, 'servers-panel.png');
  spawnSync('import', ['-window', 'root', shot]);
  forDocs(shot, 'servers-panel.png');

  step('run the cell');
  await app.click('#run-cell');
  try {
    answerDialog('Approve tool call — fx.echo', 'Return', 30);
  } catch (e) {
    throw new Error(`${e.message}; the cell: ${JSON.stringify(await cell(app, 0))}`);
  }
  step('approved');
  const done = await settled(app, 0);
  assert.equal(done.state, 'done', done.output);
  assert.match(done.output, /hello from the form/);
  await app.until('fx shown running', () => app.execute('return document.querySelector(arguments[0])?.dataset.state === "running";', card('fx')));
});

test('an HTTP server is registered by URL; a server that fails to start shows its stderr', async () => {
  const server = spawn(FIXTURE, ['http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    const addr = await new Promise((resolve, reject) => {
      let err = '';
      server.stderr.on('data', (d) => {
        err += d;
        const m = /listening on (\S+)\n/.exec(err);
        if (m) resolve(m[1]);
      });
      server.on('exit', () => reject(new Error(`the HTTP fixture exited: ${err}`)));
    });
    const dir = workspace({ 'test.ipynb': notebook('') });
    const app = await open(dir);
    await openServersTab(app);
    await register(app, 'web', { 'server-transport-streamable_http': true, 'server-url': `http://${addr}/mcp` }, /^Connected: the server offers \d+ tools\.$/);
    assert.equal(await app.text(`${card('web')} .server-params`), `http://${addr}/mcp`);
    assert.ok(await app.execute('return document.querySelectorAll(arguments[0] + " .server-tool").length >= 10;', card('web')));

    // A server that exits before it answers: its stderr, in the form, nothing lost.
    await app.click('#add-server');
    await fill(app, { 'server-name': 'broken', 'server-command': FIXTURE, 'server-args': 'stdio', 'server-env': 'FIXTURE_STDERR_ON_START=BROKEN_TOKEN is not set; cannot start' });
    await app.click('#test-server');
    const failed = await app.until('the failure', () => app.text('#server-test-result .server-stderr'), 30000);
    assert.match(failed, /BROKEN_TOKEN is not set; cannot start/);
    assert.equal(await app.execute('return document.getElementById("server-name").value;'), 'broken', 'the form keeps what was typed');
  } finally {
    server.kill();
  }
});

test('a server that crashes shows as crashed with its last stderr lines', async () => {
  const dir = workspace({ 'test.ipynb': notebook('from mcptools.crashy.crash import Params, run\nrun(Params())') });
  const app = await open(dir);
  await openServersTab(app);
  await register(app, 'crashy', { 'server-command': 'sh', 'server-args': `-c\necho "crashy: loaded 3 plugins" >&2; exec '${FIXTURE}' stdio` }, /^Connected/);
  await app.click('#run-cell');
  answerDialog('Approve tool call — crashy.crash', 'Return');
  await settled(app, 0);
  await app.until('crashy shown crashed', () => app.execute('return document.querySelector(arguments[0])?.dataset.state === "crashed";', card('crashy')), 20000);
  assert.match(await app.text(`${card('crashy')} .server-state`), /^Crashed \(exit code 3;/, 'the fixture’s crash tool exits with status 3');
  assert.match(await app.text(`${card('crashy')} .server-stderr`), /crashy: loaded 3 plugins/);
  spawnSync('import', ['-window', 'root', join(SHOTS, 'servers-crashed.png')]);
});

test('the sandbox switch runs a registered server under srt with the mcp-server profile', async () => {
  const dir = workspace({ 'test.ipynb': notebook('from mcptools.fx.env import Params, run\nprint("SANDBOX_RUNTIME =", run(Params(name="SANDBOX_RUNTIME")))') });
  const app = await open(dir);
  await openServersTab(app);
  await register(app, 'fx', { 'server-command': FIXTURE, 'server-args': 'stdio' }, /^Connected/);
  const t0 = Date.now();
  await app.click(`${card('fx')} .server-sandbox-switch`);
  const label = await app.until('the switch to take', async () => {
    const t = await app.text(`${card('fx')} .server-switch-label`);
    return t?.startsWith('Sandboxed with') ? t : null;
  }, 60000);
  step(`sandbox switched on (re-registered under srt): ${Date.now() - t0} ms`);
  assert.equal(label, 'Sandboxed with ipybox’s mcp-server profile');
  assert.match(await app.text(`${card('fx')} .server-changes`), /^Now sandboxed\. No tool was added, removed or changed\.$/);
  await app.click('#run-cell');
  answerDialog('Approve tool call — fx.env', 'Return', 30);
  const done = await settled(app, 0);
  // srt sets SANDBOX_RUNTIME=1 in what it runs; ipybox gives an unsandboxed server no such variable.
  assert.match(done.output, /SANDBOX_RUNTIME = 1/, `the call ran in the server's sandbox: ${done.output}`);
});

test('a server from the catalog, without a terminal: Install, its exact command in the sandbox, Save, and a call from a cell', async () => {
  const dir = workspace({ 'test.ipynb': notebook('from mcptools.time.get_current_time import Params, run\nprint(run(Params(timezone="UTC")).timezone)') });
  const app = await open(dir);
  await openServersTab(app);
  await app.click('#server-catalog > summary');
  await app.until('the catalog', () => app.execute('return !!document.querySelector("#server-catalog-install-time");'));
  const t0 = Date.now();
  await app.click('#server-catalog-install-time');
  await app.until('the installed server in the form', () => app.execute('const f = document.querySelector("#server-form"); return !!f && !f.hidden && document.querySelector("#server-command").value.endsWith("/bin/mcp-server-time");'), 180000);
  step(`installed: ${Date.now() - t0} ms`);
  const form = await app.execute('return { name: document.querySelector("#server-name").value, sandbox: document.querySelector("#server-sandbox").checked, command: document.querySelector("#server-command").value };');
  assert.equal(form.name, 'time');
  assert.equal(form.sandbox, true, 'in the sandbox by default');
  assert.match(form.command, /^\/.*\/mcp-servers\/pypi\/mcp-server-time\/bin\/mcp-server-time$/, 'an absolute program in ipybox\'s folder');
  mkdirSync(SHOTS, { recursive: true });
  spawnSync('import', ['-window', 'root', join(SHOTS, 'server-catalog.png')]);
  await app.click('#save-server');
  await app.until('time in the list', () => app.execute('return !!document.querySelector(arguments[0]);', card('time')), 60000);
  await app.click('#run-cell');
  answerDialog('Approve tool call — time.get_current_time', 'Return', 60);
  const done = await settled(app, 0);
  assert.match(done.output, /UTC/, done.output);
});
