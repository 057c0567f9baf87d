// The toolbar at the widths people use (1024, 1280, 1440 px) with several agents' tabs open,
// the words on its right-hand buttons, and agents' tabs: closing them (a running session ends
// after an in-app confirmation) and the menu the tabs that do not fit go into.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { join } from 'node:path';
import { useApp } from './harness.mjs';

/** IPYBOX_SHOTS=DIR: screenshots of the toolbar there. */
const SHOTS = process.env.IPYBOX_SHOTS;

const { app } = useApp({ before, after }, { notebook: null });

const calls = (page, cmd) => page.evaluate((c) => window.__mock.calls.filter((x) => x.cmd === c).map((x) => x.args), cmd);

/** `n` agents each queue a cell (their sessions are 1…n). */
async function agents(page, n, from = 1) {
  const batch = Array.from({ length: n }, (_, i) => i + from).map((s) => ({ type: 'cell_queued', session: s, name: `agent session ${s}f2a9c1e`, execution_id: `exec-agent-${s}`, code: 'print("hi")' }));
  await page.evaluate((b) => window.__mock.emit('agent', b), batch);
  await page.waitForSelector(`#doc-tab-agent-${from + n - 1}`, { state: 'attached' });
}

/** Each toolbar control that shows, with its left and right edges. */
const toolbarBoxes = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('header.toolbar button, header.toolbar select, #kernel-status')]
      .filter((el) => el.checkVisibility())
      .map((el) => {
        const r = el.getBoundingClientRect();
        return { id: el.id || el.className, left: r.left, right: r.right, top: r.top, bottom: r.bottom };
      }),
  );

describe('the toolbar', () => {
  for (const width of [1024, 1280, 1440, 1600]) {
    it(`stays on screen at ${width} px with seven agents’ tabs open`, async () => {
      const { page, errors, close } = await app({}, { width, height: 800 });
      await agents(page, 7);
      const boxes = await toolbarBoxes(page);
      if (SHOTS) await page.screenshot({ path: join(SHOTS, `toolbar-${width}.png`), clip: { x: 0, y: 0, width, height: 110 } });
      for (const id of ['open-settings', 'toggle-approvals', 'open-agents', 'open-servers', 'sandbox-badge', 'run-cell', 'save']) {
        assert.ok(boxes.some((b) => b.id === id), `${id} shows at ${width} px`);
      }
      const off = boxes.filter((b) => b.left < 0 || b.right > width || b.bottom > 800);
      assert.deepEqual(off, [], `every toolbar control within the ${width} px window`);
      // No control's words run out of it over the next one.
      const spilled = await page.evaluate(() =>
        [...document.querySelectorAll('header.toolbar button, #kernel-status')]
          .filter((el) => el.checkVisibility() && el.scrollWidth > el.clientWidth + 1)
          .map((el) => `${el.id || el.className}: ${el.scrollWidth} > ${el.clientWidth}`),
      );
      assert.deepEqual(spilled, [], `every control's words fit in it at ${width} px`);
      const sorted = [...boxes].filter((b) => b.bottom - b.top > 0).sort((a, b) => a.left - b.left);
      const overlapping = sorted.slice(1).filter((b, i) => b.left < sorted[i].right - 1 && b.top < sorted[i].bottom && sorted[i].top < b.bottom).map((b, i) => `${sorted[i].id} / ${b.id}`);
      assert.deepEqual(overlapping, [], `no two controls overlap at ${width} px`);
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), width, 'nothing widens the page past the window');
      // The strip of tabs fits as well: what does not fit is in the menu.
      const tabsRight = await page.evaluate(() => Math.max(...[...document.querySelectorAll('#doc-tabs .doc-tab, #doc-tabs-more')].filter((e) => e.checkVisibility()).map((e) => e.getBoundingClientRect().right)));
      assert.ok(tabsRight <= width, `the tabs end within the window (${tabsRight})`);
      assert.deepEqual(errors, []);
      await close();
    });
  }

  it('names Sandbox, MCP servers, Agents, Approvals and Settings in words from 1440 px on; below, their tooltips do', async () => {
    const labels = (page) =>
      page.evaluate(() => ['sandbox-badge', 'open-servers', 'open-agents', 'toggle-approvals', 'open-settings'].map((id) => [...document.getElementById(id).querySelectorAll('span:not(.badge)')].filter((s) => s.checkVisibility()).map((s) => s.textContent).join('')));
    const wide = await app({}, { width: 1440 });
    await wide.page.waitForSelector('#sandbox-badge[data-sandboxed="yes"]');
    assert.deepEqual(await labels(wide.page), ['Sandbox', 'MCP servers', 'Agents', 'Approvals', 'Settings']);
    await wide.close();

    const narrow = await app({}, { width: 1280 });
    await narrow.page.waitForSelector('#sandbox-badge[data-sandboxed="yes"]');
    assert.deepEqual(await labels(narrow.page), ['', '', '', '', '']);
    for (const id of ['sandbox-badge', 'open-servers', 'open-agents', 'toggle-approvals', 'open-settings']) {
      assert.ok((await narrow.page.getAttribute(`#${id}`, 'title'))?.length, `${id} has a tooltip`);
    }
    // The MCP servers entry opens the servers tab, and closes the panel when pressed again.
    await narrow.page.click('#open-servers');
    await narrow.page.waitForSelector('#side-panel-servers:not([hidden])');
    assert.equal(await narrow.page.getAttribute('#side-tab-servers', 'aria-selected'), 'true');
    await narrow.page.click('#open-servers');
    assert.equal(await narrow.page.locator('#right-panel').isHidden(), true);
    await narrow.close();
  });
});

describe('the toolbar’s menus', () => {
  it('open whole below their button: the toolbar clips what overflows it, never a menu, and does not scroll away', async () => {
    const { page, close } = await app({}, { width: 1280 });
    await page.click('#file-menu');
    const seen = await page.evaluate(() => {
      const items = [...document.querySelectorAll('.menu:not([hidden]) .menu-item')];
      const last = items[items.length - 1];
      const r = last.getBoundingClientRect();
      return {
        items: items.length,
        lastOnTop: document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)?.closest('.menu-item') === last,
        toolbarScrolled: document.querySelector('.toolbar').scrollTop,
      };
    });
    assert.ok(seen.items >= 5, `the File menu lists its commands (${seen.items})`);
    assert.ok(seen.lastOnTop, 'the File menu’s last item can be clicked where it shows');
    assert.equal(seen.toolbarScrolled, 0, 'the toolbar stays where it was');
    await close();
  });
});

describe('agents’ tabs', () => {
  it('closing a running agent’s tab asks in the window first; Cancel keeps it, End session ends it and its kernel', async () => {
    const { page, errors, close } = await app({}, { width: 1440 });
    await agents(page, 2);
    await page.click('#doc-tab-agent-2');
    assert.equal(await page.locator('#agent-scroller').isVisible(), true);

    const closeButton = page.locator('.doc-tab-wrap[data-session="2"] .doc-tab-close');
    assert.equal(await closeButton.getAttribute('aria-label'), 'End Agent 2f2a9c1e’s session and close its tab');
    await closeButton.click();
    const confirm = page.locator('#agent-end-confirm');
    await confirm.waitFor();
    assert.equal(await page.locator('#agent-end-text').textContent(), 'End Agent 2f2a9c1e’s session? Its kernel stops, and the agent can no longer run code here.');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'agent-end-cancel', 'the safe choice has the focus: Enter does not end a session');
    await page.keyboard.press('Enter');
    assert.equal(await confirm.isHidden(), true);
    assert.deepEqual(await calls(page, 'end_agent_session'), [], 'Cancel ends nothing');
    assert.equal(await page.locator('#doc-tab-agent-2').count(), 1);

    // Escape cancels as well.
    await closeButton.click();
    await confirm.waitFor();
    await page.keyboard.press('Escape');
    assert.equal(await confirm.isHidden(), true);

    await closeButton.click();
    await page.click('#agent-end-yes');
    await page.waitForSelector('#doc-tab-agent-2', { state: 'detached' });
    assert.deepEqual(await calls(page, 'end_agent_session'), [{ session: '2' }]);
    assert.equal(await page.getAttribute('#doc-tab-notebook', 'aria-selected'), 'true', 'the notebook shows again');
    assert.equal(await page.locator('#agent-scroller').isHidden(), true);
    assert.equal(await page.locator('#doc-tab-agent-1').count(), 1, 'the other agent keeps its tab');
    assert.deepEqual(errors, []);
    await close();
  });

  it('an ended session’s tab closes at once, without asking; the strip goes when the last tab does', async () => {
    const { page, close } = await app({}, { width: 1440 });
    await agents(page, 1);
    await page.evaluate(() => window.__mock.emit('agent', [{ type: 'session_ended', session: 1, reason: 'the agent disconnected' }]));
    const closeButton = page.locator('.doc-tab-wrap[data-session="1"] .doc-tab-close');
    await page.waitForFunction(() => document.querySelector('.doc-tab-wrap[data-session="1"] .doc-tab-close')?.getAttribute('aria-label') === 'Close the tab of Agent 1f2a9c1e');
    await closeButton.click();
    await page.waitForSelector('#doc-tab-agent-1', { state: 'detached' });
    assert.equal(await page.locator('#agent-end-confirm').isHidden(), true);
    assert.deepEqual(await calls(page, 'end_agent_session'), []);
    assert.equal(await page.locator('#doc-tabs').isHidden(), true);
    await close();
  });

  it('a backend that cannot end sessions says so; the tab stays', async () => {
    const { page, close } = await app({ grants: false }, { width: 1440 });
    await agents(page, 1);
    await page.click('.doc-tab-wrap[data-session="1"] .doc-tab-close');
    await page.click('#agent-end-yes');
    await page.waitForFunction(() => document.querySelector('.agent-end-note')?.textContent.startsWith('The session could not be ended: '));
    assert.equal(await page.locator('#doc-tab-agent-1').count(), 1);
    assert.equal(await page.locator('#agent-end-yes').isDisabled(), false, 'it can be tried again');
    await close();
  });

  it('tabs that do not fit go into a menu; choosing one shows it in the strip', async () => {
    const { page, errors, close } = await app({}, { width: 1024 });
    await agents(page, 6);
    const more = page.locator('#doc-tabs-more');
    await more.waitFor();
    const hiddenCount = Number((await more.textContent()).match(/^\+(\d+) more$/)?.[1]);
    assert.ok(hiddenCount >= 1, `some tabs are in the menu (${await more.textContent()})`);
    await more.click();
    const items = await page.locator('.doc-tabs-more-anchor .menu-item').allTextContents();
    assert.equal(items.length, hiddenCount);
    assert.equal(items.at(-1), 'Agent 6f2a9c1e', 'the newest is last');
    await page.locator('.doc-tabs-more-anchor .menu-item').last().click();
    await page.waitForFunction(() => document.querySelector('#doc-tab-agent-6')?.checkVisibility());
    assert.equal(await page.getAttribute('#doc-tab-agent-6', 'aria-selected'), 'true');
    const right = await page.evaluate(() => document.querySelector('#doc-tab-agent-6').getBoundingClientRect().right);
    assert.ok(right <= 1024, 'the chosen tab is in the window');
    assert.deepEqual(errors, []);
    await close();
  });
});
