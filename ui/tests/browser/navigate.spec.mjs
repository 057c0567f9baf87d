// Navigating a notebook in headless Chromium with the Tauri IPC mocked: the outline of
// Markdown headings (jumps, marks the running cell's section, shows headings as text), the
// command palette (every command with its key, filtered, Enter runs), and the cell commands
// around them: run above / below, restart and run all, following a running cell's output.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useApp } from './harness.mjs';
import { analysisNotebook } from './notebooks.mjs';

const { app } = useApp({ before, after });

/** The analysis notebook with a hostile heading in front. */
function withHostileHeading() {
  const nb = JSON.parse(analysisNotebook());
  nb.cells.unshift({ cell_type: 'markdown', id: 'evil', metadata: {}, source: '# <img src=x onerror="window.__pwned=1">Report \u202eevil' });
  return JSON.stringify(nb);
}

const activeLabel = (page) => page.locator('.cell.active').getAttribute('aria-label');

async function palette(page, filter) {
  await page.keyboard.press('Control+Shift+c');
  await page.waitForSelector('#palette:not([hidden])');
  await page.keyboard.type(filter);
}

describe('outline', () => {
  it('lists the headings as text, jumps to a heading’s cell, marks the running cell’s section', async () => {
    const { page, errors, close } = await app({ notebook: withHostileHeading() });
    await palette(page, 'outline');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#outline .outline-item');
    const items = await page.locator('#outline .outline-item').allTextContents();
    assert.equal(items.length, 11, 'the hostile heading and ten steps');
    assert.equal(items[0], 'Report \\u202eevil', 'markup is dropped, the bidi control shown as its code');
    assert.equal(await page.locator('#outline img').count(), 0);
    assert.equal(items[7], 'Step 7');
    await page.locator('#outline .outline-item', { hasText: 'Step 7' }).click();
    // Step 7 is cell 31 of the analysis notebook, 32 here.
    assert.equal(await activeLabel(page), 'Markdown cell 32');
    const box = await page.evaluate(() => {
      const s = document.querySelector('#notebook-scroller').getBoundingClientRect();
      const c = document.querySelector('.cell.active').getBoundingClientRect();
      return { offset: c.top - s.top };
    });
    assert.ok(box.offset >= 0 && box.offset < 40, `the cell is at the top of the view: ${box.offset}`);
    assert.ok(await page.evaluate(() => document.activeElement?.classList.contains('cell')), 'the keyboard is on the cell');
    assert.equal(await page.locator('#outline .outline-item[aria-current="true"]').textContent(), 'Step 7');
    // A cell of step 3 runs (held until released): its heading is marked.
    await page.evaluate(() => {
      window.__mock.onExecute = (ctx) => new Promise((resolve) => (window.__release = () => resolve('finished')));
    });
    await page.locator('.cell').nth(13).click();
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('#outline .outline-item[data-running="true"]');
    assert.equal(await page.locator('#outline .outline-item[data-running="true"]').textContent(), 'Step 3');
    await page.evaluate(() => window.__release());
    await page.waitForSelector('#outline .outline-item[data-running="true"]', { state: 'detached' });
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(errors, []);
    await close();
  });
});

describe('command palette', () => {
  it('lists every command with its key, filters as one types, Enter runs, Escape gives the focus back', async () => {
    const { page, errors, close } = await app({ notebook: analysisNotebook() });
    await page.keyboard.press('Control+Shift+c');
    await page.waitForSelector('#palette:not([hidden])');
    const all = await page.locator('#palette .palette-item').count();
    assert.ok(all >= 45, `every command: ${all}`);
    const find = page.locator('#palette-find');
    assert.equal(await find.locator('.palette-key').textContent(), 'Ctrl+F', 'with its key');
    assert.equal(await page.locator('#palette-merge .palette-key').textContent(), 'Shift+M');
    await page.keyboard.type('split');
    assert.deepEqual(await page.locator('#palette .palette-label').allTextContents(), ['Split the cell at the cursor']);
    assert.equal(await page.locator('#palette-split .palette-key').textContent(), 'Ctrl+Shift+-');
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('#palette').isHidden(), true);
    assert.ok(await page.evaluate(() => document.activeElement?.classList.contains('cell')), 'the keyboard is back on the cell');
    // Enter runs the chosen command: select the cell below, twice, from the palette.
    await palette(page, 'select cell below');
    await page.keyboard.press('Enter');
    assert.equal(await activeLabel(page), 'Code cell 2');
    await palette(page, 'nothing like this');
    assert.equal(await page.locator('#palette .palette-empty').textContent(), 'No command matches.');
    await page.keyboard.press('Escape');
    assert.deepEqual(errors, []);
    await close();
  });

  it('the Run menu reads the same list: labels and keys', async () => {
    const { page, errors, close } = await app({ notebook: analysisNotebook() });
    await page.locator('#run-menu').click();
    const labels = await page.locator('.menu:not([hidden]) .menu-label').allTextContents();
    assert.ok(labels.includes('Restart the kernel and run all cells'), labels.join(' | '));
    assert.ok(labels.includes('Run all cells above the selected cell'));
    assert.deepEqual(errors, []);
    await close();
  });
});

describe('cell commands', () => {
  it('run all above / below and restart and run all, from the palette', async () => {
    const { page, errors, close } = await app({ notebook: analysisNotebook() });
    const executes = () => page.evaluate(() => window.__mock.calls.filter((c) => c.cmd === 'execute').map((c) => c.args.code));
    await page.locator('.cell').nth(3).click();
    await palette(page, 'run all cells above');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => window.__mock.pending() === 0 && window.__mock.calls.some((c) => c.cmd === 'execute'));
    assert.deepEqual(await executes(), ['result_1 = analyse(df, 1)\nresult_1', 'result_2 = analyse(df, 2)\nresult_2'], 'the code cells above cell 4');
    await palette(page, 'restart the kernel and run');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === 'restart_kernel'));
    await page.waitForFunction(() => window.__mock.calls.filter((c) => c.cmd === 'execute').length === 42);
    const after = await executes();
    assert.equal(after.length, 2 + 40, 'every code cell ran after the restart');
    assert.deepEqual(errors, []);
    await close();
  });

  it("a running cell's newest output is scrolled into view, until the person scrolls away", async () => {
    const { page, errors, close } = await app({ notebook: analysisNotebook() }, { height: 600 });
    await page.evaluate(() => {
      window.__mock.onExecute = async (ctx) => {
        for (let i = 0; i < 10; i++) {
          ctx.outputs({ type: 'display_data', data: { 'text/plain': `line ${i}` }, metadata: {} });
          await ctx.sleep(20);
        }
        await new Promise((resolve) => (window.__release = resolve));
      };
    });
    // A code cell at the bottom of the view: its outputs grow below it.
    await page.locator('.cell').nth(38).click();
    await page.evaluate(() => {
      const s = document.querySelector('#notebook-scroller');
      const c = document.querySelector('.cell.active').getBoundingClientRect();
      s.scrollTop += c.bottom - s.getBoundingClientRect().bottom + 4;
    });
    await page.keyboard.press('Control+Enter');
    await page.waitForFunction(() => document.querySelectorAll('.cell.active .output').length === 10);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const shown = () =>
      page.evaluate(() => {
        const s = document.querySelector('#notebook-scroller').getBoundingClientRect();
        const last = [...document.querySelectorAll('.cell.active .output')].at(-1).getBoundingClientRect();
        return last.bottom <= s.bottom && last.top >= s.top;
      });
    assert.equal(await shown(), true, 'the newest output is in view');
    await page.evaluate(() => window.__release());
    // Now the person scrolls up while the next run streams: the view stays where they put it.
    await page.evaluate(() => {
      window.__mock.onExecute = async (ctx) => {
        await new Promise((resolve) => (window.__go = resolve));
        for (let i = 0; i < 30; i++) {
          ctx.outputs({ type: 'display_data', data: { 'text/plain': `again ${i}` }, metadata: {} });
          await ctx.sleep(20);
        }
      };
    });
    await page.keyboard.press('Control+Enter');
    await page.waitForFunction(() => typeof window.__go === 'function');
    await page.mouse.move(600, 300);
    await page.mouse.wheel(0, -400);
    await page.waitForTimeout(100);
    const top = await page.evaluate(() => document.querySelector('#notebook-scroller').scrollTop);
    await page.evaluate(() => window.__go());
    await page.waitForFunction(() => document.querySelector('.cell.active').dataset.state === 'done');
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const now = await page.evaluate(() => document.querySelector('#notebook-scroller').scrollTop);
    assert.ok(now <= top, `not scrolled back down: ${top} → ${now}`);
    assert.equal(await shown(), false, 'the newest output is left below, where the person scrolled from');
    assert.deepEqual(errors, []);
    await close();
  });
});
