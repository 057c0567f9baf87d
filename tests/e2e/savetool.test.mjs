// "Save cell as tool" in the real app: a cell that calls a fixture MCP tool is saved as
// gentools.demo.shout (its variable `text` a parameter, its last value the result); another
// cell calls the saved tool, and the MCP call inside it still raises the approval dialog.
// Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Keys, ROOT, SHOTS, answerDialog, fixtureWorkspace, quitAll, settled } from './webdriver.mjs';

const apps = [];
afterEach((t) => quitAll(apps, t));

const SOURCE = 'from mcptools.fx.echo import Params, run\ntext = "hello"\nreply = run(Params(text=text))\nreply';
const CALLER = 'from gentools.demo.shout.api import run as shout\nprint(shout(text="from a saved tool"))';

/** Set a text field's value as typing would (an input event follows). */
async function fill(app, css, value) {
  await app.execute('const e = document.querySelector(arguments[0]); e.value = arguments[1]; e.dispatchEvent(new Event("input", { bubbles: true }));', css, value);
}

test('a cell saved as a tool is callable from another cell, and its MCP call still asks', async () => {
  const ws = fixtureWorkspace(SOURCE, CALLER);
  const app = await App.launch(['open', join(ws, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  await app.until('the kernel to be ready', async () => (await app.kernelStatus()) === 'idle', 90000);

  // The first cell is selected on opening: Run menu → Save selected cell as a tool.
  await app.click('#run-menu');
  await app.click('#save-cell-as-tool');
  await app.until('the dialog', () => app.execute('return document.querySelector("#save-tool-dialog").open;'));
  assert.deepEqual(await app.execute('return [...document.querySelectorAll(".tool-param-check")].map((b) => b.value);'), ['text', 'reply']);
  await fill(app, '#tool-category', 'demo');
  await fill(app, '#tool-name', 'shout');
  await fill(app, '#tool-description', 'Echo a text through the fixture server.');
  await app.click('#tool-param-text');
  await app.until('the generated interface', async () => /def run\(text: str = "hello"\) -> object:/.test(await app.text('#tool-preview') ?? ''), 10000);
  mkdirSync(SHOTS, { recursive: true });
  spawnSync('import', ['-window', 'root', join(SHOTS, 'save-cell-as-tool.png')]);
  if (process.env.IPYBOX_UPDATE_SCREENSHOTS === '1') copyFileSync(join(SHOTS, 'save-cell-as-tool.png'), join(ROOT, 'docs', 'images', 'save-cell-as-tool.png'));
  await app.click('#save-tool');
  await app.until('the tool saved', async () => /Saved as gentools\.demo\.shout/.test(await app.text('#tool-status') ?? ''), 60000);
  assert.match(await app.text('#tool-usage'), /from gentools\.demo\.shout\.api import run/);
  const api = readFileSync(join(ws, 'gentools', 'demo', 'shout', 'api.py'), 'utf8');
  assert.match(api, /def run\(text: str = "hello"\) -> object:/);
  assert.ok(existsSync(join(ws, 'gentools', 'demo', 'shout', 'impl.py')));
  await app.click('#close-save-tool');

  // Listed in the MCP servers tab, beside the servers.
  await app.click('#toggle-approvals');
  await app.click('#side-tab-servers');
  await app.until('the saved tool in the MCP servers tab', async () => /gentools\.demo\.shout/.test(await app.text('#saved-tool-list') ?? ''), 10000);

  // Another cell calls it; the echo inside asks the person.
  await app.click('.cell[data-cell-id="cell-1"] .prompt');
  await app.press(Keys.Shift, Keys.Enter);
  answerDialog('Approve tool call — fx.echo', 'Return', 60);
  const done = await settled(app, 1);
  assert.equal(done.state, 'done', done.output);
  assert.match(done.output, /from a saved tool/);
});
