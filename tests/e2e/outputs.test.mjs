// Outputs that change in place, in the real app: a `display_id` handle updated from a later
// line, `clear_output(wait=True)` redrawing a counter, and a progress line overwritten with
// `\r` as tqdm does. Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { App, Keys, workspace, notebook, settled, quitAll } from './webdriver.mjs';

const apps = [];
afterEach((t) => quitAll(apps, t));

const UPDATE = [
  'from IPython.display import display, clear_output',
  'import time, sys',
  'h = display("first value", display_id=True)',
  'time.sleep(0.2)',
  'h.update("second value")',
].join('\n');

const CLEAR = 'for i in range(3):\n    clear_output(wait=True)\n    print(f"step {i}")\n    time.sleep(0.1)';

const PROGRESS = 'for i in range(0, 101, 25):\n    print(f"\\rprogress {i:3d}%", end="", flush=True)\n    time.sleep(0.1)\nprint()';

test('display updates, clear_output(wait=True) and \\r progress lines change the output in place', async () => {
  const dir = workspace({ 'test.ipynb': notebook(UPDATE, CLEAR, PROGRESS) });
  const app = await App.launch(['open', join(dir, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  await app.click('#run-all');
  const text = async (i) => (await settled(app, i)).output.trim();

  const updated = await text(0);
  assert.match(updated, /second value/);
  assert.doesNotMatch(updated, /first value/, 'the handle replaced its output');

  const cleared = await text(1);
  assert.equal(cleared, 'step 2', 'only the last step is left');

  const progress = await text(2);
  assert.equal(progress, 'progress 100%', 'the line was overwritten, not appended');
  assert.equal(await app.execute('return document.querySelectorAll(".cell")[2].querySelectorAll(".outputs .output").length;'), 1);
});
