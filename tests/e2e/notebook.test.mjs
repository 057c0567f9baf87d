// The real app under Xvfb, driven through tauri-driver: open a notebook, run cells,
// plots, interrupt, restart, save. Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Keys, workspace, notebook, python, answerDialog, cell, settled, quitAll } from './webdriver.mjs';

const apps = [];
// tauri-driver runs one app at a time: each test's app quits when it ends.
afterEach((t) => quitAll(apps, t));

async function open(files, env) {
  const dir = workspace(files);
  const app = await App.launch(['open', join(dir, 'test.ipynb')], { env });
  apps.push(app);
  await app.ready();
  return { app, dir };
}



test('opens with the first cell selected in command mode; Shift+Enter runs it and moves on', async () => {
  const { app } = await open({ 'test.ipynb': notebook("print('hello from the notebook')", 'x = 41\nx + 1') });
  const first = await cell(app, 0);
  assert.equal(first.selected, true, 'the first cell is selected on opening');
  assert.equal(first.editing, false, 'in command mode, as JupyterLab');
  await app.press(Keys.Shift, Keys.Enter);
  const done = await settled(app, 0);
  assert.equal(done.state, 'done');
  assert.match(done.output, /hello from the notebook/);
  assert.match(done.prompt, /\[1\]/, 'the execution count is shown');
  assert.equal((await cell(app, 1)).selected, true, 'Shift+Enter selects the next cell');
  await app.press(Keys.Shift, Keys.Enter);
  const second = await settled(app, 1);
  assert.match(second.output, /42/, 'the value of the last expression is shown');
  assert.equal(await app.kernelStatus(), 'idle');
});

test('a plot appears inline in the cell', async () => {
  const { app } = await open({
    'test.ipynb': notebook(
      'import matplotlib.pyplot as plt\nplt.plot([1, 3, 2, 4])\nplt.title("inline")\nplt.show()',
    ),
  });
  await app.press(Keys.Shift, Keys.Enter);
  const done = await settled(app, 0);
  assert.equal(done.state, 'done', done.output);
  assert.equal(done.images, 1, 'one image in the cell');
  const size = await app.execute(
    'const i = document.querySelector(".cell img.output-image"); return [i.naturalWidth, i.naturalHeight];',
  );
  assert.ok(size[0] > 100 && size[1] > 100, `the image decoded: ${size}`);
});

test('interrupt stops `while True: pass` and the kernel keeps its state', async () => {
  const { app } = await open({ 'test.ipynb': notebook('kept = 7', 'while True:\n    pass', 'kept') });
  await app.click('#run-all');
  await app.until('the loop to run', async () => (await cell(app, 1))?.state === 'running');
  await new Promise((r) => setTimeout(r, 300));
  await app.click('#interrupt');
  const stopped = await settled(app, 1);
  assert.equal(stopped.state, 'failed');
  assert.match(stopped.output, /KeyboardInterrupt/);
  await app.click('.cell[data-cell-id="cell-2"] .prompt');
  await app.until('the third cell to be selected', async () => (await cell(app, 2)).selected);
  await app.press(Keys.Control, Keys.Enter);
  const third = await settled(app, 2);
  assert.match(third.output, /7/, 'state survives an interrupt');
});

test('restart forgets the state; Ctrl+S saves a notebook nbformat validates', async () => {
  const { app, dir } = await open({ 'test.ipynb': notebook('y = 5\nprint(y)', 'y') });
  await app.press(Keys.Shift, Keys.Enter);
  await settled(app, 0);
  await app.click('#restart');
  answerDialog('Restart kernel');
  await app.until('the kernel to restart', async () => (await app.kernelStatus()) === 'idle');
  await app.click('.cell[data-cell-id="cell-1"] .prompt');
  await app.press(Keys.Shift, Keys.Enter);
  const after = await settled(app, 1);
  assert.equal(after.state, 'failed');
  assert.match(after.output, /NameError/, 'a restarted kernel has no y');
  await app.press(Keys.Control, 's');
  await app.until('the save', () => app.execute('return document.body.dataset.dirty === "false";'));
  const path = join(dir, 'test.ipynb');
  const saved = JSON.parse(readFileSync(path, 'utf8'));
  assert.equal(saved.cells.length, 3, 'Shift+Enter on the last cell added one, as JupyterLab does');
  assert.match(JSON.stringify(saved.cells[0].outputs), /5/);
  const check = python('import nbformat, sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4)); print("valid")', path);
  assert.equal(check.stdout.trim(), 'valid', check.stderr);
});
