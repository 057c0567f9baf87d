// Notebook trust: the HTML, SVG and Markdown outputs of a notebook this machine did not
// produce are shown as text until the person trusts it (the backend asks in a native dialog);
// outputs produced in this session render at once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useApp } from './harness.mjs';

const { app } = useApp({ before, after });

const PATH = '/home/ana/projects/weather/analysis.ipynb';
const TABLE = '<table border="1" class="dataframe"><thead><tr><th>city</th></tr></thead><tbody><tr><td>Bern</td></tr></tbody></table>';
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><circle cx="10" cy="10" r="8"/></svg>';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

function storedNotebook() {
  const output = (id, data) => ({ cell_type: 'code', id, metadata: {}, execution_count: 1, source: `show_${id}()`, outputs: [{ output_type: 'display_data', data, metadata: {} }] });
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {},
    cells: [
      { cell_type: 'markdown', id: 'md', metadata: {}, source: 'Some **bold** words' },
      output('html', { 'text/html': TABLE, 'text/plain': 'df' }),
      output('svg', { 'image/svg+xml': SVG }),
      output('mdout', { 'text/markdown': '*emphasis*' }),
      output('png', { 'image/png': PNG }),
      { cell_type: 'code', id: 'new', metadata: {}, execution_count: null, source: 'HTML(df.to_html())', outputs: [] },
    ],
  });
}

const calls = (page, cmd) => page.evaluate((c) => window.__mock.calls.filter((x) => x.cmd === c).map((x) => x.args), cmd);
const out = (page, id) => page.locator(`.cell[data-cell-id="${id}"] .output`);

describe('a notebook that is not trusted', () => {
  it('shows stored HTML, SVG and Markdown outputs as text with a note; Markdown cells and images render; a banner offers trust', async () => {
    const { page, errors, close } = await app({ notebook: storedNotebook(), trusted: false });
    await page.waitForSelector('.cell[data-cell-id="new"]');
    const asked = await calls(page, 'notebook_trusted');
    assert.equal(asked.length, 1);
    assert.equal(asked[0].content, storedNotebook(), 'the backend is asked about the text shown, not a path');

    const html = out(page, 'html');
    assert.equal(await html.getAttribute('data-trusted'), 'false');
    assert.equal(await html.locator('pre.untrusted-source').textContent(), TABLE);
    assert.equal(await html.locator('.untrusted-note').textContent(), 'Not trusted: HTML output shown as text. Trust this notebook to render it.');
    assert.equal(await page.locator('table.dataframe').count(), 0);
    assert.equal(await out(page, 'svg').locator('pre.untrusted-source').textContent(), SVG);
    assert.equal(await out(page, 'svg').locator('img').count(), 0);
    assert.equal(await out(page, 'mdout').locator('pre.untrusted-source').textContent(), '*emphasis*');
    assert.equal(await out(page, 'png').locator('img.output-image').count(), 1);
    assert.equal(await page.locator('.cell[data-cell-id="md"] .markdown-rendered strong').textContent(), 'bold');

    const banner = page.locator('#trust-banner');
    assert.equal(await banner.isVisible(), true);
    assert.match(await banner.textContent(), /3 outputs/);
    assert.equal(await page.locator('#trust-notebook').textContent(), 'Trust notebook');
    assert.deepEqual(errors, []);
    await close();
  });

  it('an output produced by running a cell in this session renders at once', async () => {
    const { page, close } = await app({ notebook: storedNotebook(), trusted: false });
    await page.click('.cell[data-cell-id="new"] .prompt');
    await page.keyboard.press('Control+Enter');
    const live = out(page, 'new');
    await live.locator('table.dataframe').waitFor();
    assert.equal(await live.getAttribute('data-trusted'), null);
    // The stored ones are still text.
    assert.equal(await out(page, 'html').locator('table').count(), 0);
    // Saved while stored outputs are not trusted: the backend is told, so it does not sign it.
    await page.keyboard.press('Control+s');
    await page.waitForFunction(() => window.__mock.lastSaved() !== null);
    assert.equal((await calls(page, 'save_notebook')).at(-1).trusted, false);
    await close();
  });

  it('“Trust notebook” asks the backend (its native dialog); once trusted, the outputs render and the banner goes', async () => {
    const { page, close } = await app({ notebook: storedNotebook(), trusted: false });
    await page.click('#trust-notebook');
    await out(page, 'html').locator('table.dataframe').waitFor();
    assert.deepEqual(await calls(page, 'trust_notebook'), [{ path: PATH, content: storedNotebook() }]);
    assert.equal(await out(page, 'html').getAttribute('data-trusted'), null);
    assert.equal(await out(page, 'svg').locator('img.output-image').count(), 1);
    assert.equal(await out(page, 'mdout').locator('em').textContent(), 'emphasis');
    assert.equal(await page.locator('.untrusted-source').count(), 0);
    assert.equal(await page.locator('#trust-banner').isHidden(), true);
    // Rendered as any output: sanitized and contained.
    assert.equal(await out(page, 'html').locator('.user-content table').count(), 1);
    await page.click('.cell[data-cell-id="new"] .prompt');
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('.cell[data-cell-id="new"][data-state="done"]');
    await page.keyboard.press('Control+s');
    await page.waitForFunction(() => window.__mock.lastSaved() !== null);
    assert.equal((await calls(page, 'save_notebook')).at(-1).trusted, true);
    await close();
  });

  it('when the person declines in the dialog, the outputs stay text', async () => {
    const { page, close } = await app({ notebook: storedNotebook(), trusted: false, dialog: 'cancel' });
    await page.click('#trust-notebook');
    await page.waitForFunction(() => window.__mock.calls.filter((c) => c.cmd === 'notebook_trusted').length >= 2);
    await page.waitForTimeout(100);
    assert.equal(await out(page, 'html').locator('pre.untrusted-source').count(), 1);
    assert.equal(await page.locator('#trust-banner').isVisible(), true);
    await close();
  });
});

describe('a trusted notebook', () => {
  it('renders its stored outputs (sanitized and contained), with no banner', async () => {
    const { page, close } = await app({ notebook: storedNotebook() });
    await out(page, 'html').locator('table.dataframe').waitFor();
    assert.equal(await out(page, 'svg').locator('img.output-image').count(), 1);
    assert.equal(await page.locator('.untrusted-source').count(), 0);
    assert.equal(await page.locator('#trust-banner').isHidden(), true);
    await close();
  });
});
