// Outputs and Markdown cannot reach or cover the app's controls: a stored notebook (or a live
// output) with a full-window, nearly transparent <label for="run-all"> or a fake approval
// panel in `position: fixed` can neither run a cell nor draw over the side panel.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useApp } from './harness.mjs';
import { ESCAPED_LABEL, FAKE_PANEL, hostileNotebook, RUN_ALL_LABEL } from './notebooks.mjs';

const { app } = useApp({ before, after });

const executions = (page) => page.evaluate(() => window.__mock.calls.filter((c) => c.cmd === 'execute').length);

/** Elements inside outputs or rendered Markdown that the browser positions fixed or sticky. */
const escaped = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('.outputs *, .markdown-rendered *')]
      .filter((el) => ['fixed', 'sticky'].includes(getComputedStyle(el).position))
      .map((el) => el.outerHTML.slice(0, 80)),
  );

describe('a stored hostile notebook', () => {
  it('one click in the middle of the window runs nothing (label for=run-all in a Markdown cell and an HTML output)', async () => {
    const { page, errors, close } = await app({ notebook: hostileNotebook(RUN_ALL_LABEL, ESCAPED_LABEL) });
    await page.waitForSelector('.cell[data-cell-id="victim"]');
    await page.mouse.click(640, 400);
    await page.waitForTimeout(400);
    assert.equal(await executions(page), 0, 'the click reached no Run button');
    assert.deepEqual(
      await page.locator('.cell').evaluateAll((els) => els.map((e) => e.dataset.state)),
      ['idle', 'idle', 'idle', 'idle'],
      'no cell ran',
    );
    assert.deepEqual(await escaped(page), [], 'nothing in an output is positioned fixed or sticky');
    // Neither are the app's ids reachable by an id of the output's own.
    assert.equal(await page.locator('[id="run-all"]').count(), 1);
    assert.deepEqual(errors, []);
    await close();
  });

  it('a fixed "waiting for your decision" panel in an output does not cover the approval panel', async () => {
    const { page, close } = await app({ notebook: hostileNotebook(FAKE_PANEL) });
    await page.waitForSelector('.cell[data-cell-id="victim"]');
    await page.evaluate(() => window.__mock.requestApproval({ id: 5 }));
    const card = page.locator('.approval-request[data-request-id="5"]');
    await card.waitFor();
    const hit = await card.evaluate((el) => {
      const r = el.getBoundingClientRect();
      const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return { inPanel: !!top?.closest('#right-panel'), inOutput: !!top?.closest('.outputs, .markdown-rendered'), text: top?.textContent?.slice(0, 60) };
    });
    assert.deepEqual([hit.inPanel, hit.inOutput], [true, false], `the panel's centre shows “${hit.text}”`);
    // The panel's Approve button is what a click there reaches.
    const approve = card.locator('button', { hasText: 'Approve' }).first();
    const box = await approve.boundingBox();
    const target = await page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.closest('.approval-request')?.dataset.requestId ?? null, [box.x + box.width / 2, box.y + box.height / 2]);
    assert.equal(target, '5');
    await close();
  });

  for (const [what, selector] of [
    ['an HTML output', '.output[data-mime="text/html"] .output-body > *'],
    ['a rendered Markdown cell', '.cell[data-cell-type="markdown"] .markdown-rendered'],
  ]) {
    it(`the box of ${what} holds even a fixed, window-filling element the sanitizer let through (CSS containment)`, async () => {
      const { page, close } = await app({ notebook: hostileNotebook('<p>plain output</p>') });
      const box = page.locator(selector).first();
      await box.waitFor();
      const result = await box.evaluate((el) => {
        const fixed = document.createElement('div');
        fixed.style.cssText = 'position:fixed;inset:0;z-index:2147483647;background:red';
        el.appendChild(fixed);
        const outer = el.getBoundingClientRect();
        const inner = fixed.getBoundingClientRect();
        const run = document.querySelector('#run-all').getBoundingClientRect();
        const atRun = document.elementFromPoint(run.left + run.width / 2, run.top + run.height / 2);
        const below = document.elementFromPoint(innerWidth / 2, innerHeight - 5);
        return {
          inside: inner.left >= outer.left - 0.5 && inner.top >= outer.top - 0.5 && inner.right <= outer.right + 0.5 && inner.bottom <= outer.bottom + 0.5,
          inner: [inner.left, inner.top, inner.width, inner.height].map(Math.round),
          outer: [outer.left, outer.top, outer.width, outer.height].map(Math.round),
          runReached: atRun?.closest('#run-all') !== null,
          belowCovered: below === fixed,
        };
      });
      assert.equal(result.inside, true, `the fixed element ${result.inner} stays in its box ${result.outer}`);
      assert.equal(result.runReached, true, 'the Run-all button is not covered');
      assert.equal(result.belowCovered, false, 'the window below the box is not covered');
      await close();
    });
  }
});

describe('a live output', () => {
  it('a cell whose output is a full-window label for Run all: later clicks run nothing more', async () => {
    const { page, close } = await app({ notebook: null });
    await page.evaluate((label) => {
      window.__mock.onExecute = async (ctx) => {
        ctx.outputs({ type: 'display_data', data: { 'text/html': label }, metadata: {} });
      };
    }, RUN_ALL_LABEL);
    await page.keyboard.press('Enter');
    await page.keyboard.insertText('display(HTML(payload))');
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('.cell[data-state="done"] .output[data-mime="text/html"]');
    assert.equal(await executions(page), 1);
    for (const [x, y] of [[640, 400], [300, 600], [900, 200], [640, 700]]) {
      await page.mouse.click(x, y);
      await page.waitForTimeout(150);
    }
    assert.equal(await executions(page), 1, 'four clicks ran nothing');
    assert.deepEqual(await escaped(page), []);
    await close();
  });
});
