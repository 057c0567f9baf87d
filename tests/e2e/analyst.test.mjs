// The analyst's notebook in the real window under Xvfb: Tab on `pd.` offers the kernel's
// `DataFrame`, Shift+Tab shows its signature, and a renamed open notebook keeps its kernel
// (a variable survives the rename); a frame a cell made is listed in the Variables tab and
// opens in the data grid, which sorts and filters its million rows in the kernel; find and
// replace across cells, and the outline's jumps. Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, cell, invoke, Keys, notebook, quitAll, renameNotebook, settled, workspace } from './webdriver.mjs';

const Tab = '\uE004';
const End = '\uE010';

const apps = [];
afterEach((t) => quitAll(apps, t));

async function open(files) {
  const dir = workspace(files);
  const app = await App.launch(['open', join(dir, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  return { app, dir };
}

/** Edit cell `i` with the cursor at its end. */
async function editAtEnd(app, i) {
  await app.execute('document.querySelectorAll(".cell")[arguments[0]].dispatchEvent(new MouseEvent("mousedown", {bubbles: true})); return true;', i);
  await app.press(Keys.Escape);
  await app.press(Keys.Enter);
  await app.until('edit mode', async () => (await cell(app, i))?.editing);
  await app.press(Keys.Control, End);
}

test('Tab on pd. offers the kernel’s DataFrame and Shift+Tab shows its signature', async () => {
  const { app } = await open({ 'test.ipynb': notebook('import pandas as pd', 'pd.') });
  await app.press(Keys.Shift, Keys.Enter);
  let first = await settled(app, 0);
  if (/ModuleNotFoundError/.test(first.output)) {
    // The environment the tests share may lack pandas: installed once, as the side panel does.
    await invoke(app, 'install_package', { spec: 'pandas' });
    await editAtEnd(app, 0);
    await app.press(Keys.Escape);
    await app.press(Keys.Shift, Keys.Enter);
    first = await settled(app, 0);
  }
  assert.equal(first.state, 'done', first.output);

  await editAtEnd(app, 1);
  await app.press(Tab);
  const labels = await app.until('the completion list', () =>
    app.execute('const l = [...document.querySelectorAll(".cm-tooltip-autocomplete li .cm-completionLabel")].map((e) => e.textContent); return l.length ? l : null;'),
    30000,
  );
  assert.ok(labels.includes('DataFrame'), `pd. offers DataFrame: ${labels.slice(0, 20)}`);
  assert.ok(!labels.includes('print'), 'after a dot only attributes are offered');
  // Jedi's types come within IPython's 400 ms budget for them: on a cold pandas they may not
  // (tests/tests/completion.rs checks them on `os`).
  await app.press(Keys.Escape);
  await app.type('DataFrame(');
  await app.press(Keys.Shift, Tab);
  const help = await app.until('the help tooltip', () => app.text('.kernel-help .kernel-help-text'), 30000);
  assert.match(help, /signature:[\s\S]*DataFrame\(/i, help.slice(0, 300));
  assert.ok(!help.includes('\x1b'), 'no raw escape sequences');
  assert.equal((await cell(app, 1)).editing, true, 'still editing the cell');
});

test('a renamed open notebook keeps its kernel: a variable survives the rename', async () => {
  const { app, dir } = await open({ 'test.ipynb': notebook('survivor = 4242', 'print(survivor)') });
  await app.press(Keys.Shift, Keys.Enter);
  assert.equal((await settled(app, 0)).state, 'done');
  await renameNotebook(app, 'renamed');
  assert.ok(existsSync(join(dir, 'renamed.ipynb')), 'the file has its new name');
  assert.ok(!existsSync(join(dir, 'test.ipynb')), 'and not the old one');
  await app.execute('document.querySelectorAll(".cell")[1].dispatchEvent(new MouseEvent("mousedown", {bubbles: true})); return true;');
  await app.press(Keys.Escape);
  await app.press(Keys.Shift, Keys.Enter);
  const second = await settled(app, 1);
  assert.equal(second.state, 'done', second.output);
  assert.match(second.output, /4242/, 'the variable is still in the kernel');
});

test('a frame a cell made is listed in the Variables tab, opens in the grid, and sorts and filters there; shown as a result, it opens from its output', async () => {
  const make = "import numpy as np, pandas as pd\nsales = pd.DataFrame({'n': np.arange(1_000_000), 'g': np.arange(1_000_000) % 10})";
  const { app } = await open({ 'test.ipynb': notebook(make, 'sales') });
  await app.press(Keys.Shift, Keys.Enter);
  let first = await settled(app, 0);
  if (/ModuleNotFoundError/.test(first.output)) {
    await invoke(app, 'install_package', { spec: 'pandas' });
    await editAtEnd(app, 0);
    await app.press(Keys.Escape);
    await app.press(Keys.Shift, Keys.Enter);
    first = await settled(app, 0);
  }
  assert.equal(first.state, 'done', first.output);
  const ran = Number(/\d+/.exec(first.prompt)?.[0]);

  await app.click('#open-variables');
  const shape = await app.until('sales in the Variables tab', () =>
    app.execute('return document.querySelector(\'#variables-body tr[data-name="sales"] .variable-shape\')?.textContent || null;'),
    30000,
  );
  assert.equal(shape, '1,000,000 × 2');
  await app.execute('document.querySelector(\'#variables-body tr[data-name="sales"] .variable-open\').click(); return true;');
  const summary = () => app.execute('return document.querySelector("#data-grid[open] #data-grid-summary")?.textContent || null;');
  const shown = await app.until('the grid\'s first page', async () => {
    const text = await summary();
    return text && text !== 'Loading…' ? text : null;
  }, 30000);
  assert.equal(shown, '1,000,000 rows × 2 columns');
  const firstCell = () => app.execute('return document.querySelector("#data-grid-table tbody tr td")?.textContent ?? null;');
  assert.equal(await firstCell(), '0');

  await app.execute('document.querySelector(\'.data-grid-sort[data-column="0"]\').click(); return true;');
  await app.until('sorted up', () => app.execute('return document.querySelector("#data-grid-table thead th:nth-child(2)")?.getAttribute("aria-sort") === "ascending";'), 30000);
  await app.execute('document.querySelector(\'.data-grid-sort[data-column="0"]\').click(); return true;');
  await app.until('sorted down', async () => (await firstCell()) === '999999', 30000);

  await app.execute(`
    const set = (sel, v) => { const e = document.querySelector(sel); e.value = v; e.dispatchEvent(new Event('change')); };
    set('#data-grid-filter-column', '1'); set('#data-grid-filter-op', 'eq'); set('#data-grid-filter-value', '3');
    document.querySelector('#data-grid-add-filter').click();
    return true;`);
  await app.until('filtered', async () => (await summary()) === '100,000 of 1,000,000 rows × 2 columns', 30000);
  assert.equal(await firstCell(), '999993', 'the largest n with g == 3');
  assert.equal(await app.text('#data-grid-code'), "sales[(sales['g'] == 3)].sort_values(['n'], ascending=[False])");
  assert.equal(await app.text('#data-grid-where'), 'Rows 1–100 of 100,000');

  // Nothing of this showed in the notebook: the next cell is [2].
  await app.press(Keys.Escape);
  await app.until('the grid closed', () => app.execute('return !document.querySelector("#data-grid[open]");'));
  await app.click('.cell:first-child .prompt');
  await app.until('the first cell active', () => app.execute('return document.querySelector(".cell.active") === document.querySelectorAll(".cell")[0];'));
  await app.press(Keys.Control, Keys.Enter);
  const again = await app.until('the cell ran again', async () => {
    const c = await cell(app, 0);
    return c?.state === 'done' && c.prompt !== first.prompt ? c : null;
  }, 60000);
  assert.equal(again.prompt, `[${ran + 1}]`, 'the listing and the grid ran nothing the notebook counts');

  // The frame shown as the second cell's result: "Open in grid" under it opens the same grid.
  await app.execute('document.querySelectorAll(".cell")[1].dispatchEvent(new MouseEvent("mousedown", {bubbles: true})); return true;');
  await app.press(Keys.Escape);
  await app.until('the second cell active', () => app.execute('return document.querySelector(".cell.active") === document.querySelectorAll(".cell")[1];'));
  await app.press(Keys.Control, Keys.Enter);
  await app.until('the frame shown with its action', () => app.execute('return !!document.querySelectorAll(".cell")[1].querySelector(".frame-open-row[data-frame=\'sales\'] .frame-open");'), 60000);
  await app.click('.frame-open-row[data-frame="sales"] .frame-open');
  const fromOutput = await app.until('the grid opened from the output', async () => {
    const text = await summary();
    return text && text !== 'Loading…' ? text : null;
  }, 30000);
  assert.equal(fromOutput, '1,000,000 rows × 2 columns');
  assert.equal(await app.text('#data-grid-title'), 'sales');
  assert.equal(await firstCell(), '0', 'a new opening: unsorted, unfiltered');
});

/** The active cell's label and its top, relative to the notebook's view. */
const activeCell = (app) =>
  app.execute(`const c = document.querySelector('.cell.active'); const s = document.querySelector('#notebook-scroller').getBoundingClientRect();
    return c ? { label: c.getAttribute('aria-label'), top: c.getBoundingClientRect().top - s.top } : null;`);

test('find and replace across cells: every cell’s source, outputs read-only, saved as replaced', async () => {
  const { app, dir } = await open({
    'test.ipynb': notebook('total = 40', 'total += 2\nprint("total", total)', 'assert total == 42'),
  });
  for (let i = 0; i < 3; i++) await app.press(Keys.Shift, Keys.Enter);
  const printed = await settled(app, 1);
  assert.equal(printed.state, 'done', printed.output);
  assert.equal((await settled(app, 2)).state, 'done');
  // Command mode on the first cell, then Ctrl+F.
  await app.execute('document.querySelectorAll(".cell")[0].dispatchEvent(new MouseEvent("mousedown", {bubbles: true})); return true;');
  await app.press(Keys.Escape);
  await app.press(Keys.Control, 'f');
  await app.until('the find bar', () => app.execute('return document.activeElement?.id === "find-input";'));
  await app.type('total');
  const count = await app.until('the count', async () => {
    const t = await app.text('#find-count');
    return t && t !== 'No matches' ? t : null;
  });
  // 1 + 3 + 1 in the sources, 1 in the printed output ("total 42").
  assert.equal(count, '1 of 6');
  const painted = await app.execute(
    'return (CSS.highlights?.get("find-match")?.size ?? 0) + (CSS.highlights?.get("find-current")?.size ?? 0) + document.querySelectorAll(".cm-find-match").length;',
  );
  assert.equal(painted, 6, 'every match is painted in the window’s engine');
  await app.press(Keys.Enter);
  assert.equal(await app.text('#find-count'), '2 of 6');

  await app.press(Keys.Control, 'h');
  await app.until('the replace field', () => app.execute('return document.activeElement?.id === "replace-input";'));
  await app.type('amount');
  await app.click('#replace-all');
  assert.match(await app.text('#find-message'), /^Replaced 5 matches in 3 cells\. The match in an output stays as printed\.$/);
  assert.equal(await app.text('#find-count'), '1 of 1');
  assert.match((await cell(app, 1)).output, /total 42/, 'the output is as printed');
  await app.press(Keys.Escape);
  await app.until('the find bar to close', () => app.execute('return document.querySelector("#find-bar").hidden;'));

  await app.press(Keys.Control, 's');
  await app.until('the file saved as replaced', () => {
    const saved = JSON.parse(readFileSync(join(dir, 'test.ipynb'), 'utf8'));
    const src = saved.cells.map((c) => (Array.isArray(c.source) ? c.source.join('') : c.source));
    // (Shift+Enter on the last cell added an empty one.)
    return JSON.stringify(src.slice(0, 3)) === JSON.stringify(['amount = 40', 'amount += 2\nprint("amount", amount)', 'assert amount == 42']);
  });
  // The replaced code runs in the same kernel.
  const firstRun = (await cell(app, 2)).prompt;
  await app.execute('document.querySelectorAll(".cell")[0].dispatchEvent(new MouseEvent("mousedown", {bubbles: true})); return true;');
  await app.press(Keys.Escape);
  for (let i = 0; i < 3; i++) await app.press(Keys.Shift, Keys.Enter);
  await app.until('the replaced code to run', async () => {
    const [printedAgain, last] = [await cell(app, 1), await cell(app, 2)];
    return /amount 42/.test(printedAgain.output) && last.state === 'done' && last.prompt !== firstRun;
  }, 60000);
});

test('the outline lists the Markdown headings and jumps to a heading’s cell', async () => {
  const cells = [];
  for (let s = 1; s <= 6; s++) {
    cells.push({ cell_type: 'markdown', id: `h${s}`, metadata: {}, source: `## Section ${s}\n\nNotes.` });
    for (let i = 0; i < 5; i++) cells.push({ cell_type: 'code', id: `c${s}-${i}`, metadata: {}, execution_count: null, outputs: [], source: `x_${s}_${i} = ${i}\n` + '# a line\n'.repeat(4) });
  }
  const { app } = await open({ 'test.ipynb': { ...notebook(), cells } });
  await app.press(Keys.Control, Keys.Shift, 'c');
  await app.until('the palette', () => app.execute('return document.activeElement?.id === "palette-input";'));
  await app.type('outline');
  await app.press(Keys.Enter);
  const items = await app.until('the outline', () =>
    app.execute('const l = [...document.querySelectorAll("#outline .outline-item")].map((e) => e.textContent); return l.length ? l : null;'),
  );
  assert.deepEqual(items, ['Section 1', 'Section 2', 'Section 3', 'Section 4', 'Section 5', 'Section 6']);
  await app.click('#outline li:nth-child(5) .outline-item');
  const active = await app.until('the jump', async () => {
    const a = await activeCell(app);
    return a?.label === 'Markdown cell 25' ? a : null;
  });
  assert.ok(active.top >= 0 && active.top < 40, `Section 5's cell is at the top of the view: ${active.top}`);
  assert.equal(await app.execute('return document.activeElement?.classList.contains("cell");'), true, 'the keyboard is on the cell');
  assert.equal(await app.text('#outline .outline-item[aria-current="true"]'), 'Section 5');
});
