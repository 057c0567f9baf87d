// The analyst's notebook in headless Chromium with the Tauri IPC mocked: Tab completes from the
// kernel (merged with the cell's words, with types), Shift+Tab shows the kernel's help, both as
// inert text; notebook files are renamed, saved as, duplicated and trashed from the File menu and
// the side list, and the open notebook keeps its cells (and kernel) under its new name.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useApp } from './harness.mjs';

const { app } = useApp({ before, after });
const calls = (page, cmd) => page.evaluate((c) => window.__mock.calls.filter((x) => x.cmd === c).map((x) => x.args), cmd);

/** Type `code` into the first cell and stay in edit mode with the cursor at the end. */
async function typeInto(page, code) {
  await page.keyboard.press('Enter');
  await page.waitForSelector('.cell.active.editing');
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText(code);
}

const labels = (page) => page.locator('.cm-tooltip-autocomplete li .cm-completionLabel').allTextContents();

describe('completion from the kernel', () => {
  it("Tab on pd. lists the kernel's matches with their types and signatures", async () => {
    const { page, errors, close } = await app({});
    await typeInto(page, 'import pandas as pd\npd.');
    await page.keyboard.press('Tab');
    await page.waitForSelector('.cm-tooltip-autocomplete li');
    const all = await labels(page);
    assert.deepEqual([...all].sort(), ['DataFrame', 'date_range', 'read_csv'], "only the kernel's attributes after a dot");
    const frame = page.locator('.cm-tooltip-autocomplete li', { hasText: 'DataFrame' });
    assert.equal(await frame.locator('.cm-completionIcon-class').count(), 1, 'typed as a class');
    assert.match(await frame.locator('.cm-completionDetail').textContent(), /^DataFrame\(data=None/, 'the signature beside it');
    const sent = (await calls(page, 'complete')).at(-1);
    assert.deepEqual(sent, { code: 'import pandas as pd\npd.', cursor: 23 });
    await frame.click();
    assert.equal(await page.locator('.cell.active .cm-content').textContent(), 'import pandas as pdpd.DataFrame');
    assert.deepEqual(errors, []);
    await close();
  });

  it('asks the kernel on the Tab key itself, not after CodeMirror waits to start its query', async () => {
    const { page, errors, close } = await app({});
    await typeInto(page, 'import pandas as pd\npd.');
    const askedAtKey = await page.evaluate(() => {
      const before = window.__mock.calls.filter((c) => c.cmd === 'complete').length;
      document.querySelector('.cell.active .cm-content').dispatchEvent(new KeyboardEvent('keydown', { key: 'Tab', bubbles: true, cancelable: true }));
      return window.__mock.calls.filter((c) => c.cmd === 'complete').length - before;
    });
    assert.equal(askedAtKey, 1, 'the question left while the key was handled (the kernel answers during the 50 ms CodeMirror waits)');
    await page.waitForSelector('.cm-tooltip-autocomplete li');
    assert.deepEqual([...(await labels(page))].sort(), ['DataFrame', 'date_range', 'read_csv']);
    assert.equal((await calls(page, 'complete')).length, 1, 'the list took that answer: the kernel was asked once');
    assert.deepEqual(errors, []);
    await close();
  });

  it("merges the cell's own words and counts code points after an emoji", async () => {
    const { page, errors, close } = await app({});
    await typeInto(page, "rows_local = '😀'\nro");
    await page.keyboard.press('Tab');
    await page.waitForSelector('.cm-tooltip-autocomplete li');
    const all = await labels(page);
    assert.ok(all.includes('rows_of_data'), `the kernel's variable: ${all}`);
    assert.ok(all.includes('rows_local'), `the cell's word: ${all}`);
    assert.equal((await calls(page, 'complete')).at(-1).cursor, 19, 'the emoji is one code point (two UTF-16 units)');
    // CodeMirror takes no Enter in the first 75 ms of a list (its interactionDelay: a key
    // meant for the editor never picks a completion), as a person would not press it so soon.
    await page.waitForTimeout(100);
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('.cell.active .cm-content').textContent(), `rows_local = '😀'${all[0]}`, 'Enter takes the first, replacing `ro`');
    assert.deepEqual(errors, []);
    await close();
  });

  it("shows a hostile completion as text, and inserts what it shows", async () => {
    const { page, errors, close } = await app({
      help: { extra: [{ text: 'ro<img src=x onerror="window.__pwned=1">', kind: 'instance' }, { text: 'ro_\u202etxt', signature: '<b>sig</b>' }] },
    });
    await typeInto(page, 'ro');
    await page.keyboard.press('Tab');
    await page.waitForSelector('.cm-tooltip-autocomplete li');
    const all = await labels(page);
    assert.ok(all.includes('ro<img src=x onerror="window.__pwned=1">'), `as text: ${all}`);
    assert.ok(all.includes('ro_\\u202etxt'), `the bidi control shown as its code: ${all}`);
    assert.equal(await page.locator('.cm-tooltip-autocomplete img, .cm-tooltip-autocomplete b').count(), 0);
    await page.locator('.cm-tooltip-autocomplete li', { hasText: 'ro_' }).click();
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(errors, []);
    await close();
  });
});

describe('help from the kernel', () => {
  it('Shift+Tab shows the signature and docstring, Expand shows the source, Escape closes it', async () => {
    const { page, errors, close } = await app({ help: { helpText: '\x1b[31mInit signature:\x1b[39m pd.DataFrame(data=None)\n<img src=x onerror="window.__pwned=1">\u202e' } });
    await typeInto(page, 'pd.DataFrame(');
    await page.keyboard.press('Shift+Tab');
    const tip = page.locator('.kernel-help');
    await tip.waitFor();
    const text = await tip.locator('.kernel-help-text').textContent();
    assert.match(text, /^Init signature: pd\.DataFrame\(data=None\)/, 'ANSI escapes are not shown as text');
    assert.ok(text.includes('<img src=x'), 'HTML stays text');
    assert.ok(text.includes('\\u202e'), 'a bidi control is shown as its code');
    assert.equal(await tip.locator('img').count(), 0);
    assert.equal(await tip.locator('.ansi-fg-1').count(), 1, 'colours become classes');
    assert.equal((await calls(page, 'inspect')).at(-1).detail, 0);
    await tip.locator('.kernel-help-expand').click();
    await page.waitForSelector('.kernel-help.expanded');
    assert.match(await page.locator('.kernel-help-text').textContent(), /Source:/);
    assert.equal((await calls(page, 'inspect')).at(-1).detail, 1);
    await page.keyboard.press('Escape');
    await page.waitForSelector('.kernel-help', { state: 'detached' });
    assert.equal(await page.locator('.cell.active.editing').count(), 1, 'Escape closed the help, not edit mode');
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(errors, []);
    await close();
  });

  it('Shift+Tab at the start of a line still dedents', async () => {
    const { page, errors, close } = await app({});
    await typeInto(page, 'if x:\n    ');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await page.locator('.cell.active .cm-line').nth(1).textContent(), '');
    assert.equal((await calls(page, 'inspect')).length, 0);
    assert.deepEqual(errors, []);
    await close();
  });
});

describe('notebook files', () => {
  it('renames the open notebook from the File menu, keeping its cells; a taken name is refused in words', async () => {
    const { page, errors, close } = await app({});
    await typeInto(page, 'x = 42');
    await page.keyboard.press('Escape');
    await page.click('#file-menu');
    await page.click('#file-rename');
    const input = page.locator('#notebook-name');
    await input.waitFor();
    assert.equal(await input.inputValue(), 'analysis.ipynb');
    await input.fill('report');
    await page.click('#notebook-name-ok');
    await page.locator('#notebook-name-error').waitFor();
    assert.match(await page.locator('#notebook-name-error').textContent(), /report\.ipynb already exists/);
    assert.equal(await input.inputValue(), 'report', 'what was typed is kept');
    await input.fill('weather 2024');
    await page.click('#notebook-name-ok');
    await page.waitForFunction(() => document.title === 'ipybox — weather 2024.ipynb');
    assert.equal(await page.locator('#notebook-name-dialog').evaluate((d) => d.open), false);
    const renamed = await calls(page, 'rename_notebook');
    assert.deepEqual(renamed.at(-1), { from: '/home/ana/projects/weather/analysis.ipynb', to: '/home/ana/projects/weather/weather 2024.ipynb' });
    assert.ok((await calls(page, 'save_notebook')).length >= 1, 'saved before it moved');
    assert.equal((await calls(page, 'open_notebook')).length, 0, 'not reopened: the cells and kernel stay');
    assert.equal(await page.locator('.cell').first().locator('.cell-static, .cm-content').first().textContent(), 'x = 42');
    assert.equal(await page.locator('.notebook-link[aria-current="page"]').textContent(), 'weather 2024.ipynb');
    assert.deepEqual(errors, []);
    await close();
  });

  it('saves as a new file and goes on in it; duplicates and trashes from the side list', async () => {
    const { page, errors, close } = await app({});
    await page.click('#file-menu');
    await page.click('#file-save-as');
    await page.locator('#notebook-name').fill('copy-of-analysis');
    await page.click('#notebook-name-ok');
    await page.waitForFunction(() => document.title === 'ipybox — copy-of-analysis.ipynb');
    const saved = (await calls(page, 'save_notebook_as')).at(-1);
    assert.equal(saved.path, '/home/ana/projects/weather/copy-of-analysis.ipynb');
    assert.match(saved.content, /"nbformat": 4/);

    const item = page.locator('.notebook-item', { hasText: 'report.ipynb' });
    await item.hover();
    await item.locator('.notebook-more').click();
    await item.locator('.menu-item', { hasText: 'Duplicate' }).click();
    await page.locator('.notebook-link', { hasText: 'report-Copy1.ipynb' }).waitFor();

    const copy = page.locator('.notebook-item', { hasText: 'report-Copy1.ipynb' });
    await copy.hover();
    await copy.locator('.notebook-more').click();
    await copy.locator('.menu-item', { hasText: 'Move to trash' }).click();
    await page.locator('.notebook-link', { hasText: 'report-Copy1.ipynb' }).waitFor({ state: 'detached' });
    assert.deepEqual((await calls(page, 'trash_notebook')).at(-1), { path: '/home/ana/projects/weather/report-Copy1.ipynb' });

    // Trashing the open notebook opens another without writing the trashed one back.
    const savesBefore = (await calls(page, 'save_notebook')).length;
    await page.click('#file-menu');
    await page.click('#file-trash');
    await page.waitForFunction(() => document.title !== 'ipybox — copy-of-analysis.ipynb');
    const opened = (await calls(page, 'open_notebook')).at(-1);
    assert.notEqual(opened.path, '/home/ana/projects/weather/copy-of-analysis.ipynb');
    assert.equal((await calls(page, 'save_notebook')).length, savesBefore, 'the trashed notebook is not saved again');
    assert.deepEqual(errors, []);
    await close();
  });
});

describe('export', () => {
  it('exports from the File menu after saving, and says in the status line where it went', async () => {
    const { page, errors, close } = await app({});
    await typeInto(page, 'x = 1');
    await page.keyboard.press('Escape');
    for (const [item, format] of [['#file-export-pdf', 'pdf'], ['#file-export-html', 'html'], ['#file-export-py', 'py']]) {
      const saves = (await calls(page, 'save_notebook')).length;
      await page.click('#file-menu');
      await page.click(item);
      await page.waitForFunction((f) => document.querySelector('#app-message')?.textContent === `Exported to analysis.${f}`, format);
      assert.deepEqual((await calls(page, 'export_notebook')).at(-1), { path: '/home/ana/projects/weather/analysis.ipynb', format });
      if (format === 'pdf') assert.ok((await calls(page, 'save_notebook')).length > saves, 'unsaved changes are saved first, so the file exported is what is on screen');
    }
    assert.deepEqual(errors, []);
    await close();
  });

  it('says in the status line why an export failed, in words, escaped', async () => {
    const { page, errors, close } = await app({ exportError: 'analysis.ipynb cannot be exported: this is not a notebook file\u202e' });
    await page.click('#file-menu');
    await page.click('#file-export-html');
    await page.waitForFunction(() => document.querySelector('#app-message')?.textContent?.startsWith('Not exported: '));
    assert.equal(
      await page.locator('#app-message').textContent(),
      'Not exported: A file or system operation failed. analysis.ipynb cannot be exported: this is not a notebook file\\u202e',
    );
    assert.deepEqual(errors, []);
    await close();
  });
});

describe('room for the notebook', () => {
  it('keeps the editor usable beside a wide side panel: the side list steps aside first', async () => {
    const { page, errors, close } = await app({}, { width: 1000, height: 700 });
    assert.equal(await page.locator('#sidebar').isVisible(), true, 'the side list shows at 1000 px');
    await page.click('#toggle-approvals');
    await page.click('#side-tab-audit');
    await page.waitForTimeout(100);
    const center = await page.locator('.center').evaluate((el) => el.getBoundingClientRect().width);
    const editor = await page.locator('.cell .cell-body, .cell .cell-static, .cell .cm-editor').first().evaluate((el) => el.getBoundingClientRect().width);
    assert.ok(center >= 550, `the notebook keeps its room: ${center} px`);
    assert.ok(editor >= 400, `a cell's text has a usable width: ${editor} px`);
    assert.equal(await page.locator('#sidebar').isVisible(), false, 'the side list made room');
    assert.deepEqual(errors, []);
    await close();
  });
});

describe('a missing module', () => {
  it('offers to install the package that provides it, asked natively, and installs it as the side list does', async () => {
    const { page, errors, close } = await app({ notebook: null });
    await page.evaluate(() => {
      window.__mock.onExecute = async (ctx) => {
        ctx.outputs({ type: 'error', ename: 'ModuleNotFoundError', evalue: ctx.code.includes('evil') ? "No module named '--index-url=http://x'" : "No module named 'sklearn.linear_model'", traceback: ['\x1b[31mModuleNotFoundError\x1b[0m: No module named ...'] });
        return 'failed';
      };
    });
    await typeInto(page, 'import sklearn.linear_model');
    await page.keyboard.press('Control+Enter');
    const offer = page.locator('.cell .install-offer');
    await offer.waitFor();
    assert.equal(await offer.textContent(), 'Install scikit-learn');
    const [button, error] = [await offer.boundingBox(), await page.locator('.cell .output[data-output-type="error"] .output-body').boundingBox()];
    assert.ok(button.x >= error.x - 1 && button.width > 80, `under the error, not squeezed into the prompt column: ${JSON.stringify({ button, error })}`);
    await offer.click();
    await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === 'install_package'));
    const dialog = await page.evaluate(() => window.__mock.calls.filter((c) => c.cmd === 'plugin:dialog|message' || c.cmd === 'plugin:dialog|ask').map((c) => JSON.stringify(c.args)));
    assert.ok(dialog.some((d) => d.includes('scikit-learn')), `asked in a native dialog first: ${dialog}`);
    assert.deepEqual((await calls(page, 'install_package')).at(-1), { spec: 'scikit-learn' });
    await page.locator('.install-status', { hasText: 'Installed scikit-learn' }).waitFor();

    await page.keyboard.press('Escape');
    await typeInto(page, 'import evil');
    await page.keyboard.press('Control+Enter');
    await page.waitForFunction(() => window.__mock.calls.filter((c) => c.cmd === 'execute').length === 2);
    await page.waitForTimeout(200);
    assert.equal(await page.locator('.cell .install-offer').count(), 0, 'nothing pip would read as an option is offered');
    assert.deepEqual(errors, []);
    await close();
  });
});
