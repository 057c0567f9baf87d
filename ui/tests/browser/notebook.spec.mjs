// The notebook in headless Chromium with the Tauri IPC mocked (tests/browser/mock/tauri-mock.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Ajv from 'ajv-draft-04';
import { fixture, useApp } from './harness.mjs';

const { app } = useApp({ before, after });

/** Type code into the selected cell (Enter → edit mode), then leave it in edit mode. */
async function typeInto(page, code) {
  await page.keyboard.press('Enter');
  await page.waitForSelector('.cell.active.editing');
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText(code);
}

const cell = (page, i) => page.locator('.cell').nth(i);

describe('opening', () => {
  it('selects the first cell in command mode, the kernel indicator shows idle', async () => {
    const { page, errors, close } = await app({ notebook: fixture('jupyterlab-analysis.ipynb') });
    const first = cell(page, 0);
    assert.equal(await first.getAttribute('class').then((c) => c.includes('selected')), true);
    assert.equal(await first.evaluate((el) => el.classList.contains('editing')), false);
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('cell')), true);
    assert.equal(await page.locator('#kernel-status').getAttribute('data-status'), 'idle');
    assert.equal(await page.locator('#kernel-status').getAttribute('aria-label'), 'Kernel idle');
    assert.equal(await page.evaluate(() => document.body.dataset.dirty), 'false');
    assert.equal(await page.title(), 'ipybox — analysis.ipynb');
    // The stored outputs render: table, image, traceback, math.
    assert.equal(await page.locator('.output[data-mime="text/html"] table.dataframe').count(), 1);
    assert.equal(await page.locator('img.output-image').count() >= 2, true);
    assert.equal(await page.locator('.output[data-output-type="error"] .ansi-fg-1').count() > 0, true);
    // Math is typeset once KaTeX's chunk has loaded (the first formula asks for it).
    await page.locator('.markdown-rendered .katex').first().waitFor();
    assert.equal(await page.locator('.math-pending').count(), 0);
    assert.deepEqual(await page.locator('.cell .prompt').first().textContent(), '');
    assert.equal(await page.locator('.cell[data-cell-type="code"] .prompt').first().textContent(), '[1]');
    assert.deepEqual(errors, []);
    await close();
  });

  it('a new notebook starts with one empty code cell, [ ]', async () => {
    const { page, close } = await app({ notebook: null, notebookPath: '/w/Untitled.ipynb' });
    assert.equal(await page.locator('.cell').count(), 1);
    assert.equal(await page.locator('.cell .prompt').textContent(), '[ ]');
    assert.equal(await page.locator('.cell').getAttribute('data-state'), 'idle');
    await close();
  });

  it('a notebook without math never loads KaTeX; the first formula does', async () => {
    const { page, close } = await app({ notebook: null, notebookPath: '/w/Untitled.ipynb' });
    const katexLoaded = () =>
      page.evaluate(() => performance.getEntriesByType('resource').some((r) => /\/katex-[^/]*\.js$/.test(r.name)));
    await page.waitForTimeout(300);
    assert.equal(await katexLoaded(), false, 'no formula, no KaTeX');
    await page.keyboard.press('m');
    await page.keyboard.press('Enter');
    await page.keyboard.insertText('Energy $E = mc^2$');
    await page.keyboard.press('Shift+Enter');
    await cell(page, 0).locator('.katex').first().waitFor();
    assert.equal(await katexLoaded(), true);
    await close();
  });
});

describe('editors made on demand', () => {
  it('cells open as highlighted text in the box of the editor; the pointer or editing makes the editor, nothing moves', async () => {
    const { page, errors, close } = await app({ notebook: fixture('jupyterlab-analysis.ipynb') });
    const code = page.locator('.cell[data-cell-type="code"]').first();
    // No editor yet: the text, highlighted with the editor's colours.
    assert.equal(await page.locator('.cell .cm-editor').count(), 0);
    assert.equal(await code.locator('.cell-static').count(), 1);
    const keyword = code.locator('.cell-static span').filter({ hasText: /^import$/ }).first();
    const staticColor = await keyword.evaluate((el) => getComputedStyle(el).color);
    assert.notEqual(staticColor, await code.locator('.cell-static').evaluate((el) => getComputedStyle(el).color), 'keywords are coloured');
    const before = await code.locator('.cell-editor').boundingBox();
    const textBefore = await code.locator('.cell-static').innerText();
    // The pointer over it makes the editor, in the same box with the same text and colours.
    await code.locator('.cell-editor').hover();
    await code.locator('.cm-editor').waitFor();
    assert.equal(await code.locator('.cell-static').count(), 0);
    assert.deepEqual(await code.locator('.cell-editor').boundingBox(), before, 'the editor takes the text\'s place exactly');
    assert.equal(await code.locator('.cm-content').innerText(), textBefore);
    const editorKeyword = code.locator('.cm-content span').filter({ hasText: /^import$/ }).first();
    assert.equal(await editorKeyword.evaluate((el) => getComputedStyle(el).color), staticColor);
    // Only that cell has one; Enter on another makes its editor and edits it.
    assert.equal(await page.locator('.cell .cm-editor').count(), 1);
    const others = await page.locator('.cell .cell-static').count();
    await page.keyboard.press('Escape');
    await page.locator('.cell[data-cell-type="code"]').nth(1).locator('.prompt').click();
    await page.keyboard.press('Enter');
    await page.waitForSelector('.cell.active.editing .cm-editor.cm-focused');
    assert.equal(await page.locator('.cell .cell-static').count(), others - 1);
    assert.deepEqual(errors, []);
    await close();
  });

  it('a click on the text of a cell without a hover first puts the cursor where it fell', async () => {
    const { page, close } = await app({ notebook: fixture('jupyterlab-analysis.ipynb') });
    const code = page.locator('.cell[data-cell-type="code"]').first();
    const box = await code.locator('.cell-static > div').first().boundingBox();
    // A synthetic mousedown (no pointer movement before it), 3 characters in.
    await code.locator('.cell-static').evaluate((el, { x, y }) => {
      el.dispatchEvent(new MouseEvent('mousedown', { bubbles: true, cancelable: true, clientX: x, clientY: y }));
    }, { x: box.x + 8 + 3.5 * (await code.locator('.cell-static').evaluate((el) => {
      const probe = document.createElement('span'); probe.textContent = 'x'; el.append(probe);
      const w = probe.getBoundingClientRect().width; probe.remove(); return w;
    })), y: box.y + box.height / 2 });
    await page.waitForSelector('.cell.editing .cm-editor.cm-focused');
    const offset = await code.evaluate((el) => {
      const sel = getSelection(); const range = sel.getRangeAt(0);
      const pre = document.createRange(); pre.selectNodeContents(el.querySelector('.cm-content')); pre.setEnd(range.startContainer, range.startOffset);
      return pre.toString().length;
    });
    assert.equal(offset, 3);
    await close();
  });
});

describe('running cells', () => {
  it('Shift+Enter runs, shows [*] then [n], the output streams in, and the next (new) cell is selected', async () => {
    const { page, close } = await app({ notebook: null, runMs: 200 });
    await typeInto(page, 'print("hello")');
    await page.keyboard.press('Shift+Enter');
    const c0 = cell(page, 0);
    assert.match(await c0.locator('.prompt').textContent(), /^\[(\*|1)\]$/);
    await page.waitForSelector('.cell[data-state="done"]');
    assert.equal(await c0.locator('.prompt').textContent(), '[1]');
    assert.equal(await c0.locator('.output[data-output-type="stream"] .stream-text').textContent(), 'hello\n');
    // At the end, a new cell was added in edit mode.
    assert.equal(await page.locator('.cell').count(), 2);
    assert.equal(await cell(page, 1).evaluate((el) => el.classList.contains('editing') && el.classList.contains('selected')), true);
    await close();
  });

  it('Shift+Enter in the middle moves the selection on in command mode; Ctrl+Enter runs in place', async () => {
    const { page, close } = await app({ notebook: fixture('nbformat-test4.5.ipynb') });
    // Cell 3 is code (index 3); select it with J J J.
    for (let i = 0; i < 3; i++) await page.keyboard.press('j');
    assert.equal(await cell(page, 3).getAttribute('data-cell-type'), 'code');
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('.cell:nth-child(4)[data-state="done"]');
    assert.equal(await cell(page, 3).evaluate((el) => el.classList.contains('selected')), true);
    await page.keyboard.press('Shift+Enter');
    assert.equal(await cell(page, 4).evaluate((el) => el.classList.contains('selected') && !el.classList.contains('editing')), true);
    await close();
  });

  it('an image output renders', async () => {
    const { page, close } = await app({ notebook: null });
    await typeInto(page, 'plt.plot([1, 2, 3])');
    await page.keyboard.press('Control+Enter');
    const img = page.locator('.cell .output[data-output-type="display_data"] img.output-image');
    await img.waitFor();
    assert.equal(await img.evaluate((el) => el.complete && el.naturalWidth > 0), true);
    assert.equal(await img.getAttribute('width'), '96');
    assert.equal(await page.locator('.cell .output').getAttribute('data-mime'), 'image/png');
    await close();
  });

  it('an HTML table renders; its script, onerror handler and javascript: link do not run; nothing outside loads', async () => {
    const { page, outsideRequests, close } = await app({ notebook: null });
    await typeInto(page, 'HTML(df.to_html() + "<script>")');
    await page.keyboard.press('Control+Enter');
    const out = page.locator('.output[data-output-type="execute_result"][data-mime="text/html"]');
    await out.waitFor();
    assert.equal(await out.locator('table.dataframe tbody tr').count(), 3);
    assert.equal(await out.locator('script').count(), 0);
    await out.locator('a').click();
    await page.waitForTimeout(100);
    const ran = await page.evaluate(() => [window.__scriptRan, window.__onerrorRan, window.__jsLinkRan]);
    assert.deepEqual(ran, [undefined, undefined, undefined]);
    assert.deepEqual(outsideRequests, []);
    // The output's <style> did not leak into the app.
    assert.notEqual(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(255, 0, 0)');
    await close();
  });

  it('input() asks inside the cell and the answer goes back with reply_input', async () => {
    const { page, close } = await app({ notebook: null });
    await typeInto(page, 'name = input("Your name: ")\nprint("Hello,", name)');
    await page.keyboard.press('Control+Enter');
    const input = page.locator('.cell input.stdin-input');
    await input.waitFor();
    assert.equal(await input.evaluate((el) => el === document.activeElement), true);
    assert.equal(await page.locator('.cell .stdin-label').textContent(), 'Your name: ');
    await page.keyboard.type('Ada');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.cell[data-state="done"]');
    const calls = await page.evaluate(() => window.__mock.calls.filter((c) => c.cmd === 'reply_input').map((c) => c.args));
    assert.deepEqual(calls, [{ id: 1, value: 'Ada' }]);
    assert.equal(await page.locator('.cell .stream-text').textContent(), 'Your name: Ada\nHello, Ada!\n');
    assert.equal(await page.locator('input.stdin-input').count(), 0);
    await close();
  });

  it('the kernel indicator shows busy while a cell runs and idle after', async () => {
    const { page, close } = await app({ notebook: null });
    await typeInto(page, 'import time\ntime.sleep(0.6)');
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('#kernel-status[data-status="busy"]');
    assert.equal(await page.locator('.cell .prompt').textContent(), '[*]');
    await page.waitForSelector('#kernel-status[data-status="idle"]', { timeout: 5000 });
    assert.equal(await page.locator('.cell .prompt').textContent(), '[1]');
    await close();
  });

  it('a failing cell shows its traceback and stops run all (later cells are cancelled)', async () => {
    const nb = JSON.stringify({
      cells: [
        { cell_type: 'code', id: 'a', metadata: {}, outputs: [], execution_count: null, source: 'print("one")' },
        { cell_type: 'code', id: 'b', metadata: {}, outputs: [], execution_count: null, source: '1/0' },
        { cell_type: 'code', id: 'c', metadata: {}, outputs: [], execution_count: null, source: 'print("three")' },
      ],
      metadata: {},
      nbformat: 4,
      nbformat_minor: 5,
    });
    const { page, close } = await app({ notebook: nb });
    await page.click('#run-all');
    await page.waitForSelector('.cell[data-cell-id="b"][data-state="failed"]');
    await page.waitForSelector('.cell[data-cell-id="c"] .cell-notice:not([hidden])');
    assert.equal(await page.locator('.cell[data-cell-id="a"]').getAttribute('data-state'), 'done');
    assert.equal(await page.locator('.cell[data-cell-id="c"]').getAttribute('data-state'), 'idle');
    assert.equal(await page.locator('.cell[data-cell-id="c"] .prompt').textContent(), '[ ]');
    assert.match(await page.locator('.cell[data-cell-id="b"] .output[data-output-type="error"]').textContent(), /ZeroDivisionError/);
    assert.match(await page.locator('.cell[data-cell-id="c"] .cell-notice').textContent(), /earlier cell failed/);
    await close();
  });

  it('update_display_data and clear_output(wait) update outputs in place', async () => {
    const { page, close } = await app({ notebook: null });
    await typeInto(page, 'h = display("x", display_id=True)');
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('.cell[data-state="done"]');
    assert.deepEqual(await page.locator('.cell .output').allTextContents(), ['progress: 100%']);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Control+a');
    await page.keyboard.insertText('for i in steps: clear_output(wait=True); print(i)');
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('.cell[data-state="done"] .prompt:text("[2]")');
    assert.deepEqual(await page.locator('.cell .output').allTextContents(), ['step 3 of 3\n']);
    await close();
  });
});

describe('keyboard', () => {
  it('A/B insert, D D deletes, Z undoes, M/Y change the type, Esc/Enter switch modes', async () => {
    const { page, close } = await app({ notebook: fixture('nbformat-many_tracebacks.ipynb') });
    const count = () => page.locator('.cell').count();
    const n = await count();
    await page.keyboard.press('b');
    assert.equal(await count(), n + 1);
    assert.equal(await cell(page, 1).evaluate((el) => el.classList.contains('selected')), true);
    await page.keyboard.press('a');
    assert.equal(await count(), n + 2);
    await page.keyboard.press('d');
    await page.keyboard.press('d');
    assert.equal(await count(), n + 1);
    await page.keyboard.press('z');
    assert.equal(await count(), n + 2);
    await page.keyboard.press('m');
    assert.equal(await cell(page, 1).getAttribute('data-cell-type'), 'markdown');
    await page.keyboard.press('Enter');
    assert.equal(await cell(page, 1).evaluate((el) => el.classList.contains('editing')), true);
    assert.equal(await page.locator('#mode-indicator').textContent(), 'Edit');
    await page.keyboard.insertText('# Title with $x^2$');
    await page.keyboard.press('Shift+Enter');
    assert.equal(await cell(page, 1).locator('.markdown-rendered h1').count(), 1);
    await cell(page, 1).locator('.katex').first().waitFor();
    assert.equal(await cell(page, 1).locator('.katex').count(), 1);
    await page.keyboard.press('k');
    await page.keyboard.press('y');
    assert.equal(await cell(page, 1).getAttribute('data-cell-type'), 'code');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Escape');
    assert.equal(await cell(page, 1).evaluate((el) => !el.classList.contains('editing') && el.classList.contains('selected')), true);
    assert.equal(await page.locator('#mode-indicator').textContent(), 'Command');
    // Shift+Down extends the selection.
    await page.keyboard.press('Shift+ArrowDown');
    assert.equal(await page.locator('.cell.selected').count(), 2);
    await close();
  });

  it('arrow keys at the first/last line move between cells in edit mode; double-click edits Markdown', async () => {
    const { page, close } = await app({ notebook: fixture('jupyterlab-analysis.ipynb') });
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    assert.equal(await cell(page, 1).evaluate((el) => el.classList.contains('editing')), true);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    assert.equal(await cell(page, 2).evaluate((el) => el.classList.contains('editing')), true);
    await page.keyboard.press('ArrowUp');
    assert.equal(await cell(page, 1).evaluate((el) => el.classList.contains('editing')), true);
    await page.keyboard.press('Escape');
    await cell(page, 0).locator('.markdown-rendered').dblclick();
    assert.equal(await cell(page, 0).evaluate((el) => el.classList.contains('editing') && !el.classList.contains('rendered')), true);
    assert.match(await cell(page, 0).locator('.cm-content').textContent(), /# Weather analysis/);
    await page.keyboard.press('Control+Enter');
    assert.equal(await cell(page, 0).locator('.markdown-rendered img').getAttribute('src').then((s) => s.startsWith('data:image/png;base64,')), true);
    await close();
  });

  it('the recent-workspaces menu works with the keyboard and opens one', async () => {
    const { page, close } = await app({ notebook: null });
    await page.focus('#recent-workspaces');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.menu:not([hidden]) .menu-item');
    assert.equal(await page.locator('.menu:not([hidden]) .menu-item').count(), 2);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === 'open_workspace'));
    const args = await page.evaluate(() => window.__mock.calls.find((c) => c.cmd === 'open_workspace').args);
    assert.deepEqual(args, { path: '/home/ana/notes' });
    await close();
  });

  it('0 0 asks, then restarts the kernel; I I interrupts', async () => {
    const { page, close } = await app({ notebook: null });
    await page.keyboard.press('0');
    await page.keyboard.press('0');
    await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === 'restart_kernel'));
    const cmds = await page.evaluate(() => window.__mock.calls.map((c) => c.cmd));
    assert.ok(cmds.indexOf('plugin:dialog|message') < cmds.indexOf('restart_kernel'));
    await page.keyboard.press('i');
    await page.keyboard.press('i');
    await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === 'interrupt'));
    await close();
  });

  it('clicking toolbar buttons leaves the keyboard in the notebook (restart, then Shift+Enter)', async () => {
    const nb = JSON.stringify({
      cells: [
        { cell_type: 'code', id: 'cell-0', metadata: {}, outputs: [], execution_count: null, source: 'print("a")' },
        { cell_type: 'code', id: 'cell-1', metadata: {}, outputs: [], execution_count: null, source: 'print("b")' },
      ],
      metadata: {},
      nbformat: 4,
      nbformat_minor: 5,
    });
    const { page, close } = await app({ notebook: nb });
    await page.keyboard.press('Shift+Enter');
    await page.waitForSelector('.cell[data-cell-id="cell-0"][data-state="done"]');
    await page.click('#restart');
    await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === 'restart_kernel'));
    await page.keyboard.press('Escape');
    await page.keyboard.press('Shift+Enter');
    await page.waitForSelector('.cell[data-cell-id="cell-1"][data-state="done"]');
    assert.equal(await page.locator('.cell[data-cell-id="cell-1"] .prompt').textContent(), '[1]');
    const restarts = await page.evaluate(() => window.__mock.calls.filter((c) => c.cmd === 'restart_kernel').length);
    assert.equal(restarts, 1);
    // Escape from a focused toolbar control also returns to the notebook.
    await page.focus('#cell-type');
    await page.keyboard.press('Escape');
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('cell')), true);
    await close();
  });

  it('toolbar buttons are reachable and labelled', async () => {
    const { page, close } = await app({ notebook: null });
    for (const id of ['run-cell', 'run-all', 'interrupt', 'restart', 'save', 'add-cell', 'clear-outputs', 'open-folder']) {
      const b = page.locator(`#${id}`);
      assert.equal(await b.count(), 1, id);
      assert.ok((await b.getAttribute('aria-label'))?.length, id);
    }
    await page.click('#add-cell');
    assert.equal(await page.locator('.cell').count(), 2);
    await close();
  });
});

describe('saving', () => {
  it('Ctrl+S calls save_notebook with valid nbformat 4.5 JSON; the title loses its dirty marker', async () => {
    const { page, close } = await app({ notebook: fixture('jupyterlab-analysis.ipynb') });
    await page.keyboard.press('b');
    await page.keyboard.press('Enter');
    await page.keyboard.insertText('x = 41 + 1');
    assert.equal(await page.evaluate(() => document.body.dataset.dirty), 'true');
    assert.equal(await page.title(), '• ipybox — analysis.ipynb');
    await page.keyboard.press('Control+s');
    await page.waitForFunction(() => window.__mock.lastSaved() !== null);
    await page.waitForFunction(() => document.body.dataset.dirty === 'false');
    const { content, path } = await page.evaluate(() => {
      const c = window.__mock.calls.filter((x) => x.cmd === 'save_notebook').pop();
      return c.args;
    });
    assert.equal(path, '/home/ana/projects/weather/analysis.ipynb');
    const nb = JSON.parse(content);
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validate = ajv.compile(JSON.parse(fixture('nbformat.v4.5.schema.json')));
    assert.equal(validate(nb), true, JSON.stringify(validate.errors));
    assert.equal(nb.nbformat_minor, 5);
    assert.deepEqual(nb.cells[1].source, ['x = 41 + 1']);
    assert.ok(content.endsWith('\n'));
    assert.equal(await page.title(), 'ipybox — analysis.ipynb');
    const titles = await page.evaluate(() => window.__mock.calls.filter((c) => c.cmd === 'set_title').map((c) => c.args.title));
    assert.deepEqual(titles.slice(-2), ['• ipybox — analysis.ipynb', 'ipybox — analysis.ipynb']);
    assert.match(await page.locator('#save-status').textContent(), /Saved/);
    await close();
  });

  it('autosaves about 2 s after the last change', async () => {
    const { page, close } = await app({ notebook: null });
    await typeInto(page, 'a = 1');
    await page.waitForTimeout(500);
    assert.equal(await page.evaluate(() => window.__mock.lastSaved()), null);
    await page.waitForFunction(() => window.__mock.lastSaved() !== null, null, { timeout: 4000 });
    await close();
  });
});

describe('closing the window', () => {
  it('with unsaved changes: asks, saves, then closes', async () => {
    const { page, close } = await app({ notebook: null });
    await typeInto(page, 'x = 1');
    await page.keyboard.press('Escape');
    await page.evaluate(() => window.__mock.emit('tauri://close-requested'));
    await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === 'plugin:window|destroy'));
    const cmds = await page.evaluate(() => window.__mock.calls.map((c) => c.cmd));
    const ask = cmds.indexOf('plugin:dialog|message');
    const save = cmds.indexOf('save_notebook');
    assert.ok(ask >= 0 && ask < save && save < cmds.indexOf('plugin:window|destroy'), cmds.join(','));
    await close();
  });

  it('without changes: closes at once; Cancel keeps it open', async () => {
    const { page, close } = await app({ notebook: null });
    await page.evaluate(() => window.__mock.emit('tauri://close-requested'));
    await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === 'plugin:window|destroy'));
    assert.equal(await page.evaluate(() => window.__mock.calls.some((c) => c.cmd === 'plugin:dialog|message')), false);
    await close();
    const second = await app({ notebook: null, dialog: 'cancel' });
    await typeInto(second.page, 'y = 2');
    await second.page.evaluate(() => window.__mock.emit('tauri://close-requested'));
    await second.page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === 'plugin:dialog|message'));
    await second.page.waitForTimeout(100);
    assert.equal(await second.page.evaluate(() => window.__mock.calls.some((c) => c.cmd === 'plugin:window|destroy')), false);
    await second.close();
  });
});

describe('outputs', () => {
  it('a click on the output prompt area toggles the height limit; O hides and shows outputs', async () => {
    const { page, close } = await app({ notebook: fixture('jupyterlab-analysis.ipynb') });
    const c = page.locator('.cell[data-cell-id="e0f1a2b3-c4d5-4e6f-8a9b-0c1d2e3f4a5b"]');
    const outputs = c.locator('.outputs');
    assert.equal(await outputs.evaluate((el) => el.classList.contains('expanded')), false);
    await c.locator('.output-prompt').first().click();
    assert.equal(await outputs.evaluate((el) => el.classList.contains('expanded')), true);
    await c.locator('.output-prompt').first().click();
    assert.equal(await outputs.evaluate((el) => el.classList.contains('expanded')), false);
    await page.keyboard.press('o');
    assert.equal(await outputs.isHidden(), true);
    assert.match(await c.locator('.outputs-collapsed').textContent(), /Outputs hidden \(2\)/);
    await page.keyboard.press('o');
    assert.equal(await outputs.isVisible(), true);
    await close();
  });
});

describe('session events', () => {
  it('shows a provisioning progress bar until the session started', async () => {
    const { page, close } = await app({
      notebook: null,
      kernel: 'starting',
      sessionScript: [
        { delay: 50, event: { type: 'provisioning', step: 1, steps: 3, message: 'Creating the virtual environment' } },
        { delay: 300, event: { type: 'provisioning', step: 2, steps: 3, message: 'Installing ipykernel' } },
        { delay: 900, event: { type: 'started' } },
      ],
    });
    await page.waitForSelector('#provisioning:not([hidden])');
    assert.equal(await page.locator('#kernel-status').getAttribute('data-status'), 'starting');
    await page.waitForFunction(() => document.querySelector('#provisioning progress')?.value === 2);
    assert.match(await page.locator('#provisioning').textContent(), /Step 2 of 3: Installing ipykernel/);
    await page.waitForSelector('#provisioning', { state: 'hidden' });
    assert.equal(await page.locator('#kernel-status').getAttribute('data-status'), 'idle');
    await close();
  });

  it('shows a clear banner when the kernel cannot start; unknown events are ignored', async () => {
    const { page, errors, close } = await app({
      notebook: null,
      kernel: 'starting',
      sessionScript: [
        { delay: 30, event: { type: 'approval_requested', id: 'x' } },
        { delay: 40, event: { type: 'something_new', foo: 1 } },
        { delay: 60, event: { type: 'startup_failed', code: 'PythonEnvError', message: 'python3-venv is missing. Install it with: sudo apt install python3-venv' } },
      ],
    });
    await page.waitForSelector('#startup-error:not([hidden])');
    assert.match(await page.locator('#startup-error').textContent(), /sudo apt install python3-venv/);
    assert.equal(await page.locator('#kernel-status').getAttribute('data-status'), 'dead');
    assert.deepEqual(errors, []);
    await close();
  });
});

describe('side list and packages', () => {
  it('lists the workspace notebooks and installs a package, showing pip output or the error', async () => {
    const { page, close } = await app({ notebook: null });
    await page.waitForSelector('.notebook-list li:nth-child(3)');
    assert.equal(await page.locator('.notebook-link[aria-current="page"]').textContent(), 'analysis.ipynb');
    await page.fill('#package-spec', 'polars');
    await page.click('#install-package');
    await page.waitForSelector('#install-output:not([hidden])');
    assert.match(await page.locator('#install-output').textContent(), /Successfully installed polars/);
    await page.fill('#package-spec', 'does-not-exist');
    await page.press('#package-spec', 'Enter');
    await page.waitForFunction(() => document.querySelector('.install-status')?.dataset.state === 'error');
    assert.match(await page.locator('#install-output').textContent(), /No matching distribution/);
    await close();
  });

  it("the package field's example is read whole, and pip's log keeps its lines in the panel's width", async () => {
    const { page, close } = await app({ notebook: null });
    const fits = await page.locator('#package-spec').evaluate((input) => {
      const style = getComputedStyle(input, '::placeholder');
      const context = document.createElement('canvas').getContext('2d');
      context.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const room = input.clientWidth - parseFloat(getComputedStyle(input).paddingLeft) - parseFloat(getComputedStyle(input).paddingRight);
      return { text: context.measureText(input.placeholder).width, room };
    });
    assert.ok(fits.text <= fits.room, `the example takes ${fits.text} px of ${fits.room}`);
    await page.fill('#package-spec', 'polars');
    await page.click('#install-package');
    await page.waitForSelector('#install-output:not([hidden])');
    const log = await page.locator('#install-output').evaluate((pre) => ({ scroll: pre.scrollWidth, client: pre.clientWidth }));
    assert.ok(log.scroll <= log.client, "pip's lines wrap inside the panel");
    await close();
  });
});
