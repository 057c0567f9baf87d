// Text from kernel code, notebooks and MCP servers (tool and server names, arguments, origins,
// reasons, descriptions, stderr) is shown as a person can read it: a right-to-left override,
// a line separator or an escape sequence is written as \uXXXX (src/model/untrusted.ts, the
// rules of src-tauri/src/display.rs), never obeyed; and however long it is, the card's
// buttons stay in reach.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useApp } from './harness.mjs';
import { notebook } from './notebooks.mjs';

const { app } = useApp({ before, after }, { notebook: null });

const RLO = '\u202e';
const LS = '\u2028';
const ESC = '\u001b';
/** A tool name that, obeyed, conceals what follows and sets the window title. */
const TOOL = `write_file${ESC}[8m${ESC}]0;pwned\u0007`;
const TOOL_SHOWN = 'write_file\\u001b[8m\\u001b]0;pwned\\u0007';
/** Shown as it is, this reads "/home/ana/reports.txt". */
const PATH = `/home/ana/${RLO}txt.stroper`;
const PATH_SHOWN = '/home/ana/\\u202etxt.stroper';
const ARGS = { path: PATH, note: `a${LS.repeat(150)}b`, body: 'lorem ipsum '.repeat(300) };
const ORIGIN = `cell 3 of ${LS.repeat(150)}analysis.ipynb`;
const ORIGIN_SHOWN = `cell 3 of ${'\\u2028'.repeat(150)}analysis.ipynb`;

/** Every raw control, separator, bidi or invisible character left in the text or the
 *  attributes (but data-*, which nobody reads) under `selector`; newlines and tabs may stay. */
function hiddenLeft(page, selector) {
  return page.evaluate((sel) => {
    const re = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ue000-\uf8ff]/u;
    const root = document.querySelector(sel);
    if (!root) return [`no ${sel}`];
    const out = [];
    const name = (el) => `${el.tagName.toLowerCase()}${typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}`;
    for (const el of [root, ...root.querySelectorAll('*')]) {
      for (const a of el.attributes) if (!a.name.startsWith('data-') && re.test(a.value)) out.push(`${name(el)} [${a.name}]`);
      for (const n of el.childNodes) if (n.nodeType === Node.TEXT_NODE && re.test(n.data)) out.push(`${name(el)}: ${JSON.stringify(n.data.slice(0, 60))}`);
    }
    return out;
  }, selector);
}

/**
 * Whether the text from `start` to the end of `end` (in one text node under `selector`) is laid
 * out in reading order: each character right of the one before on its line, or on a later line.
 * A right-to-left override lays "txt.stroper" out from the right: out of order.
 */
function readingOrder(page, selector, start, end) {
  return page.evaluate(
    ([sel, start, end]) => {
      const root = document.querySelector(sel);
      if (!root) return `no ${sel}`;
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const from = n.data.indexOf(start);
        const to = from < 0 ? -1 : n.data.indexOf(end, from);
        if (to < 0) continue;
        const range = document.createRange();
        let prev = null;
        for (let i = from; i < to + end.length; i++) {
          range.setStart(n, i);
          range.setEnd(n, i + 1);
          const r = range.getBoundingClientRect();
          if (r.width === 0) continue;
          if (prev) {
            const sameLine = Math.abs(r.top - prev.top) < 2;
            if (sameLine ? r.left < prev.right - 0.5 : r.top < prev.bottom - 2) return `${JSON.stringify(n.data.slice(from, to + end.length))}: ${JSON.stringify(n.data[i])} (at ${i - from}) is laid out before the character ahead of it`;
          }
          prev = r;
        }
        return 'in order';
      }
      return `no text from ${JSON.stringify(start)} to ${JSON.stringify(end)} under ${sel}`;
    },
    [selector, start, end],
  );
}

/** A click that does not scroll the element into view first (as Playwright's does). */
const clickInPlace = (page, selector) => page.locator(selector).evaluate((el) => el.click());

/** 'reachable' when `selector`'s box is inside the window and the shown tab's panel (not
 *  scrolled: as it opened), and a click at its centre lands on it; else what is wrong. */
function reach(page, selector) {
  return page.evaluate((sel) => {
    const el = document.querySelector(sel);
    if (!el) return `no ${sel}`;
    const r = el.getBoundingClientRect();
    const tab = document.querySelector('#right-panel .side-tabpanel:not([hidden])');
    if (!tab) return 'no panel shown';
    if (tab.scrollTop !== 0) return `the panel is scrolled (${tab.scrollTop} px)`;
    const panel = tab.getBoundingClientRect();
    const box = (b) => `${Math.round(b.left)},${Math.round(b.top)} – ${Math.round(b.right)},${Math.round(b.bottom)}`;
    if (r.width === 0 || r.height === 0) return 'not laid out';
    if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) return `outside the window (${box(r)}; window ${innerWidth}×${innerHeight})`;
    if (r.top < panel.top || r.bottom > panel.bottom || r.left < panel.left || r.right > panel.right) return `outside the panel (${box(r)}; panel ${box(panel)})`;
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return hit && el.contains(hit) ? 'reachable' : `covered by ${hit?.tagName.toLowerCase()}.${hit?.className}`;
  }, selector);
}

describe('untrusted text in the window', () => {
  it('a pending request shows a bidi override, line separators and an escape sequence as \\uXXXX, reads in order, and keeps its buttons in reach', async () => {
    const { page, errors, close } = await app();
    await page.evaluate((r) => window.__mock.requestApproval(r), { id: 61, server: 'filesystem', tool: TOOL, arguments: ARGS, origin: ORIGIN, server_description: `Files ${RLO}eliFeliF` });
    const card = '.approval-request[data-request-id="61"]';
    await page.waitForSelector(card);
    const seen = async () => ({
      title: await page.locator(`${card} .approval-title`).textContent(),
      description: await page.locator(`${card} .approval-server`).textContent(),
      path: (await page.locator(`${card} .approval-args`).textContent()).includes(`"path": "${PATH_SHOWN}"`),
      note: (await page.locator(`${card} .approval-args`).textContent()).includes(`"note": "a${'\\u2028'.repeat(150)}b"`),
      order: await readingOrder(page, `${card} .approval-args`, '/home/ana/', 'stroper'),
      hidden: await hiddenLeft(page, '#right-panel'),
      approve: await reach(page, `${card} .approve`),
      reject: await reach(page, `${card} .reject`),
    });
    const expected = {
      title: `filesystem.${TOOL_SHOWN} wants to run — from ${ORIGIN_SHOWN}`,
      description: ' · Files \\u202eeliFeliF',
      path: true,
      note: true,
      order: 'in order',
      hidden: [],
      approve: 'reachable',
      reject: 'reachable',
    };
    assert.deepEqual(await seen(), expected);
    // The whole of the long value: still in reach.
    await clickInPlace(page, `${card} .show-all`);
    assert.ok((await page.locator(`${card} .approval-args`).textContent()).includes('lorem ipsum '.repeat(300).trimEnd()));
    assert.deepEqual(await seen(), expected);

    // Decided: the recent decisions show it the same way.
    await page.click(`${card} .approve`);
    await page.waitForSelector('#recent-calls .recent-call');
    assert.equal(await page.locator('#recent-calls .recent-call .call-name').first().textContent(), `filesystem.${TOOL_SHOWN}`);
    assert.deepEqual(await hiddenLeft(page, '#right-panel'), []);
    assert.deepEqual(errors, []);
    await close();
  });

  it('an audit-log entry shows the same text escaped, in order, and its row stays small', async () => {
    const entry = {
      time: Date.now() - 5000,
      workspace: '/home/ana/projects/weather',
      execution_id: 'exec-1',
      origin: ORIGIN,
      server: 'filesystem',
      tool: TOOL,
      arguments: ARGS,
      decision: 'approved',
      decided_by: 'person',
      reason: `because${RLO}`,
      outcome: { kind: 'failed', message: `boom${ESC}[2J${LS.repeat(150)}` },
      duration_ms: 12,
    };
    const { page, errors, close } = await app({ audit: [entry] });
    await page.click('#toggle-approvals');
    await page.click('#side-tab-audit');
    const row = '#audit-table tbody tr';
    await page.waitForSelector(row);
    const args = await page.locator(`${row} .audit-args-toggle`).textContent();
    const rowHeight = () => page.locator(row).evaluate((tr) => tr.getBoundingClientRect().height);
    assert.deepEqual(
      {
        call: await page.locator(`${row} .audit-call`).textContent(),
        who: await page.locator(`${row} .audit-who`).textContent(),
        outcome: (await page.locator(`${row} .audit-outcome`).textContent()).startsWith('Failed: boom\\u001b[2J\\u2028'),
        args: args.startsWith(`{"path":"${PATH_SHOWN}","note":"a\\u2028`),
        order: await readingOrder(page, `${row} .audit-args-toggle`, '/home/ana/', 'stroper'),
        hidden: await hiddenLeft(page, '#side-panel-audit'),
        small: (await rowHeight()) <= 300,
      },
      { call: `filesystem.${TOOL_SHOWN}`, who: ORIGIN_SHOWN, outcome: true, args: true, order: 'in order', hidden: [], small: true },
    );

    // The arguments whole: indented JSON, in order, and "Show less" in reach under them.
    await clickInPlace(page, `${row} .audit-args-toggle`);
    await page.waitForSelector(`${row} .audit-args pre`);
    assert.deepEqual(
      {
        path: (await page.locator(`${row} .audit-args pre`).textContent()).includes(`"path": "${PATH_SHOWN}"`),
        order: await readingOrder(page, `${row} .audit-args pre`, '/home/ana/', 'stroper'),
        hidden: await hiddenLeft(page, '#side-panel-audit'),
        less: await reach(page, `${row} .audit-args-toggle`),
      },
      { path: true, order: 'in order', hidden: [], less: 'reachable' },
    );
    // The search finds it by what is shown, and by the character itself.
    await page.fill('#audit-search', '\\u202etxt');
    assert.equal(await page.locator(row).count(), 1);
    await page.fill('#audit-search', `${RLO}txt`);
    assert.equal(await page.locator(row).count(), 1);
    assert.deepEqual(errors, []);
    await close();
  });

  it('a cell’s tool calls show the name and arguments escaped', async () => {
    const { page, close } = await app({
      rules: { version: 1, rules: [{ server: 'fx', tool: '*', decision: 'allow' }] },
      notebook: notebook(`call_tool("fx", "echo${ESC}[8m", {"path": "/home/ana/\\u202etxt.stroper"})`),
    });
    await page.locator('.cell').first().locator('.prompt').click();
    await page.keyboard.press('Control+Enter');
    await page.waitForFunction(() => document.querySelector('.tool-call')?.dataset.status === 'done');
    const row = page.locator('.cell-tool-calls .tool-call').first();
    assert.equal(await row.locator('.tool-call-name').textContent(), 'fx.echo\\u001b[8m');
    assert.ok((await row.getAttribute('title')).includes(`"path": "${PATH_SHOWN}"`));
    assert.deepEqual(await hiddenLeft(page, '.cell-tool-calls'), []);
    await close();
  });

  it('the MCP servers tab shows tool descriptions, generated code and stderr escaped', async () => {
    const tool = {
      tool: 'echo',
      module: 'echo',
      description: `Echoes ${RLO}txt.stroper\nand${LS}more`,
      interface: `def run(params: Params) -> str:\n    """Echoes ${RLO}txt.stroper"""\n    ...\n`,
    };
    const { page, errors, close } = await app({ servers: { registered: { fx: { command: 'ipybox-fixture-mcp' } }, tools: [tool] } });
    await page.click('#toggle-approvals');
    await page.click('#side-tab-servers');
    const card = '.server-card[data-server="fx"]';
    await page.waitForSelector(card);
    await page.evaluate((stderr) => window.__mock.emitSession({ type: 'mcp_server_exited', server: 'fx', stderr }), `panic${ESC}[2J${ESC}[8m hidden\u202e\n`);
    await page.waitForSelector(`${card}[data-state="crashed"]`);
    assert.deepEqual(
      {
        desc: await page.locator(`${card} .server-tool-desc`).textContent(),
        more: await page.locator(`${card} .server-tool-more`).textContent(),
        iface: (await page.locator(`${card} .server-interface`).textContent()).includes('"""Echoes \\u202etxt.stroper"""'),
        stderr: await page.locator(`${card} .server-stderr`).textContent(),
        hidden: await hiddenLeft(page, '#mcp-servers'),
      },
      { desc: ' — Echoes \\u202etxt.stroper', more: 'Echoes \\u202etxt.stroper\nand\\u2028more', iface: true, stderr: 'panic\\u001b[2J\\u001b[8m hidden\\u202e', hidden: [] },
    );
    assert.deepEqual(errors, []);
    await close();
  });
});
