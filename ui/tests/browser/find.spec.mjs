// Find and navigate in headless Chromium with the Tauri IPC mocked: notebook-wide find and
// replace (cells editable, outputs read-only; regex and case; the count; Enter / Shift+Enter;
// Escape), the outline of Markdown headings, the command palette, and how fast find repaints
// a 50-cell notebook.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useApp } from './harness.mjs';
import { analysisNotebook } from './notebooks.mjs';

const { app } = useApp({ before, after });

/** Three code cells naming `total`, one with an output that prints it, and a Markdown cell. */
function findNotebook() {
  const code = (id, source, outputs = []) => ({ cell_type: 'code', id, metadata: {}, execution_count: outputs.length ? 1 : null, source, outputs });
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {},
    cells: [
      { cell_type: 'markdown', id: 'm0', metadata: {}, source: '# Totals\n\nThe Total per region.' },
      code('c1', 'total = 0\nfor x in rows:\n    total += x'),
      code('c2', 'print(total)', [{ output_type: 'stream', name: 'stdout', text: 'total is 42\n' }]),
      code('c3', 'Total = total * 2'),
    ],
  });
}

const count = (page) => page.locator('#find-count').textContent();
/** The sources as saved (Ctrl+S writes them through the mock). */
async function savedSources(page) {
  await page.keyboard.press('Control+s');
  await page.waitForFunction(() => window.__mock.lastSaved() !== null);
  return page.evaluate(() => JSON.parse(window.__mock.lastSaved()).cells.map((c) => (Array.isArray(c.source) ? c.source.join('') : c.source)));
}
/** Painted matches: CSS highlights (text without an editor, outputs) and editor marks. */
const painted = (page) =>
  page.evaluate(() => ({
    match: CSS.highlights.get('find-match')?.size ?? 0,
    current: CSS.highlights.get('find-current')?.size ?? 0,
    marks: document.querySelectorAll('.cm-find-match').length,
    currentText: [...(CSS.highlights.get('find-current') ?? [])].map((r) => r.toString()).join('') || document.querySelector('.cm-find-current')?.textContent || '',
    currentInOutput: [...(CSS.highlights.get('find-current') ?? [])].some((r) => !!r.startContainer.parentElement?.closest('.outputs')),
  }));

describe('find and replace', () => {
  it('Ctrl+F finds in every cell and, read-only, in outputs; Enter and Shift+Enter step; Escape closes and gives the focus back', async () => {
    const { page, errors, close } = await app({ notebook: findNotebook() });
    await page.locator('.cell').nth(1).click();
    await page.keyboard.press('Control+f');
    await page.waitForSelector('#find-bar:not([hidden])');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'find-input', 'the find field takes the keyboard');
    await page.keyboard.type('total');
    // Case-insensitive by default: "Totals", "Total" (Markdown), 2 in cell 1, 1 in cell 2 and 1 in its output, 2 in cell 3.
    assert.equal(await count(page), '3 of 8', 'starts at the active cell (the second)');
    const p = await painted(page);
    assert.equal(p.match + p.current + p.marks, 8 - 2, 'every match in a shown text or output is painted (the rendered Markdown shows none)');
    await page.keyboard.press('Enter');
    assert.equal(await count(page), '4 of 8');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    assert.equal(await count(page), '6 of 8');
    assert.equal((await painted(page)).currentInOutput, true, 'the sixth is the printed output');
    await page.keyboard.press('Shift+Enter');
    assert.equal(await count(page), '5 of 8');
    assert.equal(await page.locator('.cell.active').getAttribute('aria-label'), 'Code cell 3', "the match's cell is the active one");
    await page.locator('#find-case').click();
    assert.equal(await count(page), '3 of 5', 'match case: "Total" and "Totals" drop out; still from the active cell');
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('#find-bar').isHidden(), true);
    assert.ok(await page.evaluate(() => !!document.activeElement?.closest('#notebook')), 'the keyboard is back in the notebook');
    assert.equal((await painted(page)).match + (await painted(page)).marks, 0, 'no highlights once closed');
    assert.deepEqual(errors, []);
    await close();
  });

  it('a regular expression finds; an invalid one is said in plain words and breaks nothing', async () => {
    const { page, errors, close } = await app({ notebook: findNotebook() });
    await page.keyboard.press('Control+f');
    await page.locator('#find-regex').click();
    await page.locator('#find-input').fill('tot(al');
    assert.match(await page.locator('#find-message').textContent(), /^Not a valid regular expression: .+/);
    assert.equal(await page.locator('#find-input').getAttribute('aria-invalid'), 'true');
    assert.equal(await count(page), '');
    await page.locator('#find-input').fill('^tot\\w+');
    assert.equal(await page.locator('#find-message').isHidden(), true, 'the message goes with the error');
    assert.equal(await count(page), '1 of 3', 'multi-line: a line starting "total" in cell 1, the output and cell 3 (case-insensitive); not after "# " or an indent');
    await page.locator('#find-input').fill('x*');
    assert.equal(await count(page), '1 of 2', 'empty matches are skipped');
    assert.deepEqual(errors, []);
    await close();
  });

  it('Ctrl+H replaces one, then all, in cells only; a match in an output is not replaceable; Undo takes a replacement back', async () => {
    const { page, errors, close } = await app({ notebook: findNotebook() });
    await page.keyboard.press('Control+h');
    await page.waitForSelector('#replace-input');
    await page.locator('#find-case').click();
    await page.locator('#find-input').fill('total');
    assert.equal(await count(page), '1 of 5');
    await page.locator('#replace-input').fill('amount');
    await page.locator('#replace-one').click();
    assert.equal(await count(page), '1 of 4', 'the next match is current');
    let sources = await savedSources(page);
    assert.equal(sources[1], 'amount = 0\nfor x in rows:\n    total += x');
    // Go to the output's match: it cannot be replaced.
    await page.locator('#find-input').focus();
    for (let i = 0; i < 2; i++) await page.keyboard.press('Enter');
    assert.equal(await count(page), '3 of 4');
    assert.equal((await painted(page)).currentInOutput, true);
    assert.equal(await page.locator('#replace-one').isDisabled(), true, 'Replace is off on an output match');
    await page.locator('#replace-input').press('Enter');
    assert.match(await page.locator('#find-message').textContent(), /in an output/);
    assert.equal(await page.locator('.cell').nth(2).locator('.stream-text').textContent(), 'total is 42\n', 'the output is as printed');
    await page.locator('#replace-all').click();
    assert.match(await page.locator('#find-message').textContent(), /^Replaced 3 matches in 3 cells\. The match in an output stays as printed\.$/);
    assert.equal(await count(page), '1 of 1', 'only the output match is left');
    sources = await savedSources(page);
    assert.deepEqual(sources.slice(1), ['amount = 0\nfor x in rows:\n    amount += x', 'print(amount)', 'Total = amount * 2']);
    assert.equal(await page.locator('.cell').nth(2).locator('.stream-text').textContent(), 'total is 42\n');
    // Undo in a cell is an ordinary edit's undo.
    await page.keyboard.press('Escape');
    await page.locator('.cell').nth(3).locator('.cm-content').click();
    await page.keyboard.press('Control+z');
    sources = await savedSources(page);
    assert.equal(sources[3], 'Total = total * 2', 'Undo takes the replacement back');
    assert.deepEqual(errors, []);
    await close();
  });

  it('with regex, $1 in the replacement is the group', async () => {
    const { page, errors, close } = await app({ notebook: findNotebook() });
    await page.keyboard.press('Control+h');
    await page.locator('#find-regex').click();
    await page.locator('#find-case').click();
    await page.locator('#find-input').fill('(t)otal');
    await page.locator('#replace-input').fill('$1_sum');
    await page.locator('#replace-all').click();
    const sources = await savedSources(page);
    assert.equal(sources[3], 'Total = t_sum * 2');
    assert.deepEqual(errors, []);
    await close();
  });

  it('a keystroke in find repaints a 50-cell notebook within a frame, making no editors', async () => {
    const { page, errors, close } = await app({ notebook: analysisNotebook() });
    await page.waitForSelector('.cell');
    const editorsBefore = await page.locator('.cm-editor').count();
    await page.keyboard.press('Control+f');
    await page.waitForSelector('#find-input:focus');
    const times = [];
    for (const ch of 'result_') {
      await page.evaluate(() => {
        window.__findT = null;
        const input = document.querySelector('#find-input');
        input.addEventListener(
          'keydown',
          (e) => {
            const t0 = e.timeStamp;
            // Find's own input listener runs first: this one marks the end of its work.
            input.addEventListener('input', () => (window.__findWork = performance.now() - t0), { once: true });
            // After the frame that paints the highlights.
            requestAnimationFrame(() => setTimeout(() => (window.__findT = performance.now() - t0), 0));
          },
          { once: true },
        );
      });
      await page.keyboard.type(ch);
      await page.waitForFunction(() => window.__findT !== null);
      times.push(await page.evaluate(() => [window.__findT, window.__findWork]));
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const painted_ = median(times.map((t) => t[0]));
    const work = median(times.map((t) => t[1]));
    const total = await count(page);
    console.log(
      `# find on 50 cells: keystroke → highlights painted, median ${painted_.toFixed(1)} ms (max ${Math.max(...times.map((t) => t[0])).toFixed(1)}); ` +
        `search and paint work median ${work.toFixed(1)} ms (max ${Math.max(...times.map((t) => t[1])).toFixed(1)}) over ${times.length} keys; ${total}`,
    );
    const median_ = painted_;
    assert.match(total, /^1 of 80$/, 'result_N twice in each of the 40 code cells');
    assert.ok(median_ < 50, `repainted within a few frames: ${median_.toFixed(1)} ms`);
    assert.equal(await page.locator('.cm-editor').count(), editorsBefore, 'find made no editors');
    const p = await painted(page);
    assert.equal(p.match + p.current + p.marks, 80, 'all matches painted');
    assert.deepEqual(errors, []);
    await close();
  });
});
