// Each notebook's Python in the real window under Xvfb: a notebook switched to the
// workspace's own `.venv` (made with uv, holding a module no other environment has) from the
// status bar's picker restarts its kernel there and imports that module; sandboxed too, where
// the environment is read-only to the kernel. The choice is kept in ipybox's data directory,
// not in the workspace or the notebook. Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { App, Keys, notebook, quitAll, renameNotebook, settled, workspace } from './webdriver.mjs';

const apps = [];
afterEach((t) => quitAll(apps, t));

const CELL = 'import sys, only_in_project\nprint(only_in_project.MARK, sys.prefix)';

/** `dir/.venv` made with uv: ipykernel, and the module `only_in_project`. */
function projectVenv(dir) {
  const venv = join(dir, '.venv');
  for (const args of [['venv', '-q', venv], ['pip', 'install', '-q', '--python', join(venv, 'bin', 'python'), 'ipykernel']]) {
    const out = spawnSync('uv', args, { encoding: 'utf8' });
    assert.equal(out.status, 0, `uv ${args.join(' ')}: ${out.stderr}`);
  }
  const lib = join(venv, 'lib');
  const site = join(lib, readdirSync(lib).find((d) => d.startsWith('python3')), 'site-packages');
  mkdirSync(join(site, 'only_in_project'));
  writeFileSync(join(site, 'only_in_project', '__init__.py'), "MARK = 'project-env-' + 'ok'\n");
  return venv;
}

async function switchToProject(app) {
  await app.until('the Python in the status bar', async () => /· ipybox$/.test((await app.text('#python-status')) ?? ''));
  await app.click('#python-status');
  await app.until('the picker', () => app.execute('return document.querySelector("#python-dialog").open;'));
  await app.click('#python-project');
  await app.until('the .venv looked at', async () => /— ready$/.test((await app.text('#python-check')) ?? ''));
  const t0 = Date.now();
  await app.click('#python-switch');
  await app.until('the new Python in the status bar', async () => /· \.venv$/.test((await app.text('#python-status')) ?? ''), 30000);
  await app.until('the kernel idle on the .venv', async () => (await app.kernelStatus()) === 'idle', 60000);
  return Date.now() - t0;
}

async function runFirstCell(app) {
  await app.execute('document.querySelectorAll(".cell")[0].dispatchEvent(new MouseEvent("mousedown", {bubbles: true})); return true;');
  await app.press(Keys.Escape);
  await app.press(Keys.Shift, Keys.Enter);
  return settled(app, 0);
}

for (const sandboxed of [false, true]) {
  test(`a notebook switched to a project .venv imports a package installed only there${sandboxed ? ' (sandboxed)' : ''}`, async () => {
    const dir = workspace({ 'test.ipynb': notebook(CELL) });
    const venv = projectVenv(dir);
    const before = readdirSync(dir).sort();
    const app = await App.launch(['open', join(dir, 'test.ipynb'), ...(sandboxed ? ['--sandbox'] : [])]);
    apps.push(app);
    await app.ready();
    await app.until('the kernel idle', async () => (await app.kernelStatus()) === 'idle', 60000);
    const unchosen = await runFirstCell(app);
    assert.equal(unchosen.state, 'failed', 'ipybox’s own environment does not have the module');
    assert.match(unchosen.output, /No module named 'only_in_project'/);

    const ms = await switchToProject(app);
    process.stdout.write(`switch to .venv → kernel idle: ${ms} ms${sandboxed ? ' (sandboxed)' : ''}\n`);
    assert.equal(await app.execute('return document.querySelector("#python-status").title;'), join(venv, 'bin', 'python'), 'the full path in the tooltip');
    const ran = await runFirstCell(app);
    assert.equal(ran.state, 'done', ran.output);
    assert.match(ran.output, /project-env-ok/, 'the module only the .venv has is imported');
    assert.ok(ran.output.includes(venv), `the kernel runs the .venv: ${ran.output}`);
    // (srt leaves empty files where it keeps names from being created: .bashrc, .mcp.json, …)
    const added = readdirSync(dir).filter((n) => !before.includes(n));
    assert.deepEqual(added.filter((n) => /python|ipybox|choice/i.test(n)), [], `nothing written into the workspace for the choice: ${added}`);
    assert.ok(!readFileSync(join(dir, 'test.ipynb'), 'utf8').includes('.venv'), 'the notebook does not name its interpreter');
  });
}

test('the choice is each notebook’s own and kept: another notebook runs ipybox’s Python; reopened, the first runs its .venv', async () => {
  const dir = workspace({ 'a.ipynb': notebook(CELL), 'b.ipynb': notebook(CELL) });
  projectVenv(dir);
  const launch = async () => {
    const app = await App.launch(['open', join(dir, 'a.ipynb')]);
    apps.push(app);
    await app.ready();
    return app;
  };
  const label = (app, re) => app.until(`the status bar to say ${re}`, async () => re.test((await app.text('#python-status')) ?? ''), 30000);
  const idle = (app) => app.until('the kernel idle', async () => (await app.kernelStatus()) === 'idle', 60000);
  const openNotebook = (app, name) => app.execute('document.querySelector(`.notebook-link[title="${arguments[0]}"]`).click(); return true;', join(dir, name));

  let app = await launch();
  await idle(app);
  await switchToProject(app);
  await openNotebook(app, 'b.ipynb');
  await label(app, /· ipybox$/);
  await idle(app);
  const other = await runFirstCell(app);
  assert.equal(other.state, 'failed', 'b.ipynb, with no choice, runs ipybox’s own environment');
  assert.match(other.output, /No module named 'only_in_project'/);
  await openNotebook(app, 'a.ipynb');
  await label(app, /· \.venv$/);
  await idle(app);
  assert.match((await runFirstCell(app)).output, /project-env-ok/, 'a.ipynb is back on its .venv');

  await app.quit();
  apps.pop();
  app = await launch();
  await label(app, /· \.venv$/);
  await idle(app);
  const again = await runFirstCell(app);
  assert.equal(again.state, 'done', again.output);
  assert.match(again.output, /project-env-ok/, 'the choice was kept across a relaunch');
});

test('a renamed notebook keeps its Python and its kernel', async () => {
  const dir = workspace({ 'a.ipynb': notebook('kept = 4242', 'print(kept, __import__("sys").prefix)') });
  const venv = projectVenv(dir);
  const app = await App.launch(['open', join(dir, 'a.ipynb')]);
  apps.push(app);
  await app.ready();
  await app.until('the kernel idle', async () => (await app.kernelStatus()) === 'idle', 60000);
  await switchToProject(app);
  assert.equal((await runFirstCell(app)).state, 'done');
  await renameNotebook(app, 'renamed');
  assert.match((await app.text('#python-status')) ?? '', /· \.venv$/, 'the renamed notebook runs the .venv');
  await app.execute('document.querySelectorAll(".cell")[1].dispatchEvent(new MouseEvent("mousedown", {bubbles: true})); return true;');
  await app.press(Keys.Escape);
  await app.press(Keys.Shift, Keys.Enter);
  const second = await settled(app, 1);
  assert.equal(second.state, 'done', second.output);
  assert.match(second.output, /4242/, 'the kernel and its variable survived the rename');
  assert.ok(second.output.includes(venv), second.output);
});
