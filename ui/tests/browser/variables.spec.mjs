// The Variables tab and the data grid in headless Chromium with the Tauri IPC mocked: the tab lists
// the kernel's variables and asks again only after a cell's run ended; names, values, column labels
// and cells are text, escaped; a frame opens in the grid, which pages, sorts and filters through
// the backend (one page at a time), shows types and null counts, gives the pandas expression, and
// keeps its rows when a filter is refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useApp } from './harness.mjs';

const { app } = useApp({ before, after });
const calls = (page, cmd) => page.evaluate((c) => window.__mock.calls.filter((x) => x.cmd === c), cmd);
const names = (page) => page.locator('#variables-body tr .variable-name').allTextContents();

async function openVariables(page) {
  await page.click('#open-variables');
  await page.waitForSelector('#variables-body tr');
}

async function openGrid(page) {
  await openVariables(page);
  await page.click('#variables-body tr[data-name="sales"] .variable-open');
  await page.waitForSelector('#data-grid[open] #data-grid-table tbody tr');
}

const cellText = (page, row, col) => page.locator(`#data-grid-table tbody tr:nth-child(${row + 1}) td:nth-child(${col + 2})`).textContent();

describe('the Variables tab', () => {
  it('lists the kernel’s variables and asks again after a cell ends, not before', async () => {
    const { page, errors, close } = await app({ notebook: null, runMs: 300 });
    assert.equal((await calls(page, 'kernel_variables')).length, 0, 'nothing is asked while the tab is closed');
    await openVariables(page);
    assert.deepEqual(await names(page), ['count', 'greeting', 'sales']);
    const sales = page.locator('#variables-body tr[data-name="sales"]');
    assert.equal(await sales.locator('.variable-shape').textContent(), '10,000 × 4');
    assert.equal(await sales.locator('.variable-size').textContent(), '313 KB');
    assert.equal(await page.locator('#variables-body tr[data-name="greeting"] .variable-shape').textContent(), '5 chars');

    const asked = (await calls(page, 'kernel_variables')).length;
    await page.click('.cell .cm-content');
    await page.keyboard.insertText('x = 1');
    await page.keyboard.press('Shift+Enter');
    await page.waitForSelector('.cell[data-state="done"]');
    await page.waitForFunction((n) => window.__mock.calls.filter((c) => c.cmd === 'kernel_variables').length > n, asked);
    const all = await page.evaluate(() => window.__mock.calls.map((c) => c.cmd));
    const lastExec = all.lastIndexOf('execute');
    assert.ok(all.indexOf('kernel_variables', lastExec) > lastExec, `the list is asked after the cell: ${all.slice(lastExec)}`);
    assert.equal((await calls(page, 'kernel_variables')).length, asked + 1, 'one request per ended cell');

    await page.click('#close-side-panel');
    await page.click('.cell .cm-content');
    await page.keyboard.press('Shift+Enter');
    await page.waitForTimeout(600);
    assert.equal((await calls(page, 'kernel_variables')).length, asked + 1, 'a closed tab asks nothing');
    assert.deepEqual(errors, []);
    await close();
  });

  it('lists again after a restart, and the grid of the old kernel closes', async () => {
    const { page, errors, close } = await app({});
    await openGrid(page);
    await page.keyboard.press('Escape');
    await page.click('#open-variables');
    await page.click('#open-variables');
    await page.waitForSelector('#variables-body tr');
    const asked = (await calls(page, 'kernel_variables')).length;
    await page.evaluate(() => document.querySelector('#data-grid-close')?.closest('dialog')?.showModal());
    await page.evaluate(() => document.querySelector('#restart').click());
    await page.waitForFunction((n) => window.__mock.calls.filter((c) => c.cmd === 'kernel_variables').length > n, asked);
    assert.equal(await page.locator('#data-grid[open]').count(), 0, 'the grid showed a frame of the old kernel');
    assert.deepEqual(errors, []);
    await close();
  });

  it('shows hostile names and values as text', async () => {
    const variables = [
      { name: 'x\u202eevil', type: '<img src=x onerror=alert(1)>', repr: "'<script>alert(1)</script>\u2028\nline'" },
      { name: '<b>bold</b>', type: 'DataFrame', shape: [3, 4], frame: 'pandas' },
    ];
    const { page, errors, close } = await app({ variables: { variables } });
    await openVariables(page);
    assert.deepEqual(await names(page), ['x\\u202eevil', '<b>bold</b>']);
    const first = page.locator('#variables-body tr').first();
    assert.equal(await first.locator('.variable-type').textContent(), '<img src=x onerror=alert(1)>');
    assert.equal(await first.locator('.variable-value').textContent(), "'<script>alert(1)</script>\\u2028\\u000aline'");
    assert.equal(await page.locator('#variables img, #variables script, #variables b').count(), 0, 'nothing of it is markup');
    assert.deepEqual(errors, []);
    await close();
  });
});

describe('the data grid', () => {
  it('opens a frame at its first page, then counts its nulls', async () => {
    const { page, errors, close } = await app({});
    await openGrid(page);
    assert.equal(await page.locator('#data-grid-title').textContent(), 'sales');
    assert.equal(await page.locator('#data-grid-summary').textContent(), '10,000 rows × 4 columns');
    assert.equal(await page.locator('#data-grid-table tbody tr').count(), 100, 'one page');
    assert.equal(await cellText(page, 1, 2), '0.5');
    assert.equal(await cellText(page, 0, 2), 'NA', 'a missing value');
    assert.equal(await cellText(page, 1, 3), '<b>odd</b>', 'cells are text');
    await page.waitForFunction(() => document.querySelectorAll('#data-grid-table thead .data-grid-nulls')[2]?.textContent === '3,334 nulls');
    assert.deepEqual(await page.locator('#data-grid-table thead .data-grid-dtype').allTextContents(), ['int64', 'int64', 'float64', 'str']);
    const pages = (await calls(page, 'frame_page')).map((c) => c.args.query);
    assert.deepEqual(pages.map((q) => [q.offset, q.limit, q.nulls]), [[0, 100, false], [0, 100, true]], 'the page first, then the null counts');
    assert.equal(await page.locator('#data-grid-table b').count(), 0);

    await page.click('#data-grid-next');
    await page.waitForFunction(() => document.querySelector('#data-grid-where')?.textContent === 'Rows 101–200 of 10,000');
    await page.click('#data-grid-last');
    await page.waitForFunction(() => document.querySelector('#data-grid-where')?.textContent === 'Rows 9,901–10,000 of 10,000');
    assert.equal(await page.locator('#data-grid-next').isDisabled(), true);
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('#data-grid[open]').count(), 0, 'Escape closes the grid');
    assert.deepEqual(errors, []);
    await close();
  });

  it('sorts and filters in the backend and copies the pandas expression', async () => {
    const { page, errors, close } = await app({});
    await openGrid(page);
    await page.click('#data-grid-table thead .data-grid-sort[data-column="2"]');
    await page.waitForFunction(() => document.querySelector('#data-grid-table thead th:nth-child(4)')?.getAttribute('aria-sort') === 'ascending');
    assert.equal(await cellText(page, 0, 2), '0.5', 'smallest v first');
    await page.click('#data-grid-table thead .data-grid-sort[data-column="2"]');
    await page.waitForFunction(() => document.querySelector('#data-grid-table thead th:nth-child(4)')?.getAttribute('aria-sort') === 'descending');
    assert.equal(await cellText(page, 0, 2), '4999', 'largest v first (9999 has none)');

    await page.selectOption('#data-grid-filter-column', '1');
    await page.selectOption('#data-grid-filter-op', 'eq');
    await page.fill('#data-grid-filter-value', '3');
    await page.click('#data-grid-add-filter');
    await page.waitForFunction(() => document.querySelector('#data-grid-summary')?.textContent === '1,000 of 10,000 rows × 4 columns');
    assert.equal(await cellText(page, 0, 1), '3');
    assert.equal(await page.locator('#data-grid-code').textContent(), "sales[(sales['g'] == 3)].sort_values(['v'], ascending=[False])");
    assert.deepEqual(await page.locator('#data-grid-filters li').allTextContents(), ['g = 3']);
    const last = (await calls(page, 'frame_page')).at(-1).args.query;
    assert.deepEqual([last.sort, last.filters], [[{ column: 2, ascending: false }], [{ column: 1, op: 'eq', value: '3' }]], 'sorted and filtered by the backend');

    // A value the kernel refuses: said in plain words, the rows shown stay.
    await page.selectOption('#data-grid-filter-column', '0');
    await page.selectOption('#data-grid-filter-op', 'gt');
    await page.fill('#data-grid-filter-value', 'lots');
    await page.click('#data-grid-add-filter');
    await page.waitForSelector('#data-grid-error:not([hidden])');
    assert.match(await page.locator('#data-grid-error').textContent(), /'lots' is not a value of this column's type/);
    assert.equal(await page.locator('#data-grid-summary').textContent(), '1,000 of 10,000 rows × 4 columns', 'the rows shown stay');
    assert.deepEqual(await page.locator('#data-grid-filters li').allTextContents(), ['g = 3'], 'the refused filter is not kept');

    await page.click('#data-grid-filters li button');
    await page.waitForFunction(() => document.querySelector('#data-grid-summary')?.textContent === '10,000 rows × 4 columns');
    await page.click('#data-grid-copy-code');
    await page.waitForFunction(() => /Copied|clipboard/.test(document.querySelector('.data-grid-codeline .panel-status')?.textContent ?? ''));
    assert.deepEqual(errors, []);
    await close();
  });

  it('shows a hostile column label as text', async () => {
    const { page, errors, close } = await app({ variables: { columnName: '<img src=x onerror=alert(1)>\u202e' } });
    await openGrid(page);
    assert.equal(await page.locator('#data-grid-table thead .data-grid-colname').nth(3).textContent(), '<img src=x onerror=alert(1)>\\u202e');
    assert.equal(await page.locator('#data-grid img').count(), 0);
    assert.deepEqual(errors, []);
    await close();
  });
});

describe('a frame shown as a cell’s result', () => {
  const run = async (page, code) => {
    await page.click('.cell .cm-content');
    await page.keyboard.insertText(code);
    await page.keyboard.press('Shift+Enter');
    await page.waitForSelector('.cell[data-state="done"]');
  };

  it('opens in the grid from its output, after the kernel lists it as a frame', async () => {
    const { page, errors, close } = await app({ notebook: null });
    await run(page, 'sales');
    const action = page.locator('.cell .output .frame-open');
    await action.waitFor();
    assert.equal(await action.getAttribute('aria-label'), 'Open sales in the data grid');
    const [button, body] = [await action.boundingBox(), await page.locator('.cell .output .output-body').first().boundingBox()];
    assert.ok(button.x >= body.x - 1 && button.height < 40, `under the output, on one line, not in its prompt column: ${JSON.stringify({ button, body })}`);
    assert.equal(await page.locator('.user-content .frame-open').count(), 0, 'the action is the app’s, outside the output’s own box');
    await action.click();
    await page.waitForSelector('#data-grid[open] #data-grid-table tbody tr');
    assert.equal(await page.locator('#data-grid-title').textContent(), 'sales');
    const asked = await page.evaluate(() => window.__mock.calls.map((c) => c.cmd).filter((c) => c === 'kernel_variables' || c === 'frame_page'));
    assert.deepEqual(asked.slice(0, 2), ['kernel_variables', 'frame_page'], 'the name is looked up among the variables first');
    assert.equal((await calls(page, 'frame_page'))[0].args.query.name, 'sales');
    assert.deepEqual(errors, []);
    await close();
  });

  it('is offered only from the kernel’s metadata, and a name from a notebook file is only looked up', async () => {
    const result = (n, name, text) => ({ output_type: 'execute_result', execution_count: n, data: { 'text/plain': text }, metadata: name === null ? {} : { ipybox: { frame: name } } });
    const cell = (n, output) => ({ cell_type: 'code', id: `c${n}`, metadata: {}, execution_count: n, source: `x${n}`, outputs: [output] });
    const notebook = JSON.stringify({
      nbformat: 4,
      nbformat_minor: 5,
      metadata: {},
      cells: [
        cell(1, result(1, "__import__('os').system('touch /tmp/pwned')", 'code as a name')),
        cell(2, result(2, 'sales.T', 'an attribute path')),
        cell(3, result(3, 'gone', 'a variable the kernel no longer has')),
        cell(4, result(4, 'count', 'a variable that is no frame now')),
        cell(5, { ...result(5, null, 'fake'), data: { 'text/html': '<div class="frame-open-row" data-frame="sales"><button class="button frame-open" type="button">Open in grid</button></div>', 'text/plain': 'fake' } }),
      ],
    });
    const { page, errors, close } = await app({ notebook });
    await page.waitForSelector('.user-content .frame-open');
    const offered = await page.locator('.frame-open-row:not(.user-content *)').evaluateAll((rows) => rows.map((r) => r.dataset.frame));
    assert.deepEqual(offered, ['gone', 'count'], 'only plain names are offered');

    await page.locator('.frame-open-row[data-frame="gone"] .frame-open').click();
    await page.waitForFunction(() => /no variable gone now/.test(document.querySelector('.frame-open-row[data-frame="gone"] .frame-open-status')?.textContent ?? ''));
    await page.locator('.frame-open-row[data-frame="count"] .frame-open').click();
    await page.waitForFunction(() => document.querySelector('.frame-open-row[data-frame="count"] .frame-open-status')?.textContent === 'count is not a data frame now: its type is int.');
    assert.equal((await calls(page, 'frame_page')).length, 0, 'no frame was asked for');
    assert.equal(await page.locator('#data-grid[open]').count(), 0);

    // An output that draws the action in its own HTML makes nothing that opens the grid.
    const fake = page.locator('.user-content .frame-open');
    assert.equal(await fake.count(), 1, 'the fake is drawn, as its HTML says');
    await fake.click();
    await page.waitForTimeout(200);
    assert.equal((await calls(page, 'kernel_variables')).length, 2, 'the fake button asked nothing (the two asks are the two clicks above)');
    assert.equal(await page.locator('#data-grid[open]').count(), 0);
    assert.deepEqual(errors, []);
    await close();
  });
});
