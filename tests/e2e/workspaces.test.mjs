// Switching workspaces in the real app under Xvfb: "Open folder" raises the native folder picker
// (answered with xdotool: the location typed, Enter), the window moves to that folder with a kernel
// of its own; the recent list then offers the first workspace, and picking it moves back, its
// kernel fresh. Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { basename, join } from 'node:path';
import { App, notebook, quitAll, settled, workspace } from './webdriver.mjs';

const apps = [];
afterEach((t) => quitAll(apps, t));

const where = 'import os; print("in", os.path.basename(os.getcwd()))';

/** The notebook path the status bar shows. */
const shownPath = (app) => app.text('.status-item.path');

test('the folder picker opens another workspace, and the recent list brings the first one back', async () => {
  const first = workspace({ 'test.ipynb': notebook(where) });
  const second = workspace({ 'analysis.ipynb': notebook(where) });
  const app = await App.launch(['open', join(first, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 60000);

  // Open folder → the native picker; type the second workspace's path and press Enter.
  await app.click('#open-folder');
  const found = spawnSync('timeout', ['15', 'xdotool', 'search', '--sync', '--name', '^Open a workspace folder$'], { encoding: 'utf8' });
  const picker = found.stdout.trim().split('\n')[0];
  assert.ok(picker, 'the native folder picker opened');
  spawnSync('xdotool', ['windowfocus', '--sync', picker, 'key', 'ctrl+l'], { encoding: 'utf8' });
  spawnSync('xdotool', ['type', '--delay', '5', `${second}/`], { encoding: 'utf8' });
  spawnSync('xdotool', ['key', 'Return'], { encoding: 'utf8' });
  // A folder typed in the location field opens it in the picker; Enter again chooses it.
  await new Promise((r) => setTimeout(r, 500));
  if (spawnSync('xdotool', ['search', '--name', '^Open a workspace folder$'], { encoding: 'utf8' }).stdout.trim()) {
    spawnSync('xdotool', ['windowfocus', '--sync', picker, 'key', 'Return'], { encoding: 'utf8' });
  }
  spawnSync('timeout', ['2', 'xdotool', 'search', '--sync', '--onlyvisible', '--name', '^ipybox — ', 'windowfocus', '--sync'], { encoding: 'utf8' });
  await app.until('the second workspace', async () => (await shownPath(app)).startsWith(second), 30000);
  await app.until('its kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  await app.click('#run-cell');
  assert.match((await settled(app, 0)).output, new RegExp(`in ${basename(second)}`), 'its kernel runs in the second workspace');

  // The recent list: the first workspace, one click away.
  await app.click('#recent-workspaces');
  const items = await app.until('the recent list', () => app.execute(
    `const items = [...document.querySelectorAll('[role=menu][aria-label="Recent workspaces"] .menu-item')];
     return items.length ? items.map((b) => b.textContent) : null;`));
  assert.ok(items.some((t) => t.includes(first)), `the first workspace is listed: ${items}`);
  assert.ok(!items.some((t) => t.includes(second)), 'the open one is not');
  await app.execute(
    `[...document.querySelectorAll('[role=menu][aria-label="Recent workspaces"] .menu-item')].find((b) => b.textContent.includes(arguments[0])).click(); return true;`,
    first,
  );
  await app.until('the first workspace again', async () => (await shownPath(app)).startsWith(first), 30000);
  await app.until('its kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  await app.click('#run-cell');
  assert.match((await settled(app, 0)).output, new RegExp(`in ${basename(first)}`));
});
