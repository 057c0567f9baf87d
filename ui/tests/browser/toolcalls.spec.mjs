// Each cell lists the tool calls its last run made, as the session events tell them (the fake
// backend decides them as ipybox does: rules first, then the person, within the approval
// timeout). Session state: never saved, gone when the cell runs again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useApp } from './harness.mjs';
import { notebook } from './notebooks.mjs';

const { app } = useApp({ before, after });

const cell = (page, i) => page.locator('.cell').nth(i);
const callsOf = (page, i) => cell(page, i).locator('.cell-tool-calls .tool-call');

/** Run cell `i` in place (Ctrl+Enter in command mode). */
async function run(page, i) {
  await cell(page, i).locator('.prompt').click();
  await page.keyboard.press('Control+Enter');
}

const ALLOW_ECHO = { version: 1, rules: [{ server: 'fx', tool: 'echo', decision: 'allow' }, { server: 'fx', tool: 'delete', decision: 'reject', reason: 'deletions are never allowed' }] };

describe('the tool calls of a cell', () => {
  it('a call a rule allowed says so in the cell; one a rule rejected says which rule and why', async () => {
    const { page, errors, close } = await app({ rules: ALLOW_ECHO, notebook: notebook('call_tool("fx", "echo", {"text": "hi"})', 'call_tool("fx", "delete", {"path": "/tmp/x"})') });
    await run(page, 0);
    await page.waitForFunction(() => document.querySelector('.cell:nth-child(1) .tool-call')?.dataset.status === 'done');
    const row = callsOf(page, 0).first();
    assert.equal(await row.textContent(), '✓fx.echoallowed by a rule · OK · 120 ms');
    assert.equal(await row.getAttribute('data-decided-by'), 'rule');
    assert.equal(await row.locator('.tool-call-verdict').textContent(), 'allowed by a rule');
    assert.match(await row.getAttribute('title'), /"text": "hi"/);

    await run(page, 1);
    await page.waitForFunction(() => document.querySelectorAll('.cell')[1]?.querySelector('.tool-call')?.dataset.status === 'done');
    const rejected = callsOf(page, 1).first();
    assert.equal(await rejected.locator('.tool-call-verdict').textContent(), 'rejected by a rule');
    assert.equal(await rejected.locator('.tool-call-detail').textContent(), ': fx.delete is rejected by rules[1]: deletions are never allowed');
    assert.match(await cell(page, 1).locator('.outputs').textContent(), /ApprovalRejected: fx\.delete: fx\.delete is rejected by rules\[1\]: deletions are never allowed/, 'the code is told the same');
    // Calls a rule decided do not open the approval panel; its recent list says the same.
    await page.waitForTimeout(300);
    assert.equal(await page.locator('#right-panel').isHidden(), true, 'nothing waits for the person');
    await page.click('#toggle-approvals');
    assert.match(await page.locator('#recent-calls').textContent(), /fx\.echo.*Approved.*by a rule/);
    assert.deepEqual(errors, []);
    await close();
  });

  it('a call waits in the cell while you decide, then says you approved it; a rejected one says you rejected it', async () => {
    const { page, close } = await app({ notebook: notebook('call_tool("github", "create_issue", {"title": "March is missing"})\nprint("after")') });
    await run(page, 0);
    const row = callsOf(page, 0).first();
    await page.waitForFunction(() => document.querySelector('.tool-call')?.dataset.status === 'waiting');
    assert.equal(await row.locator('.tool-call-verdict').textContent(), 'waiting for your decision');
    assert.equal(await cell(page, 0).getAttribute('data-state'), 'running');
    await page.click('#approval-list .approval-request .approve');
    await page.waitForFunction(() => document.querySelector('.tool-call')?.dataset.status === 'done');
    assert.equal(await row.textContent(), '✓github.create_issueapproved by you · OK · 120 ms');
    await page.waitForFunction(() => document.querySelector('.cell')?.dataset.state === 'done');
    assert.match(await cell(page, 0).locator('.outputs').textContent(), /after/);

    // Run again and reject: the earlier call goes, the new one says who rejected it.
    await run(page, 0);
    await page.waitForFunction(() => document.querySelector('.tool-call')?.dataset.status === 'waiting');
    assert.equal(await callsOf(page, 0).count(), 1, 'the calls of the run before are gone');
    await page.click('#approval-list .approval-request .reject');
    await page.waitForFunction(() => document.querySelector('.tool-call')?.dataset.decision === 'rejected');
    assert.equal(await callsOf(page, 0).first().locator('.tool-call-words').textContent(), 'rejected by you');
    await close();
  });

  it('a call nobody decides in time shows as rejected — timed out, with the reason; the code is told', async () => {
    const { page, close } = await app({ approvalTimeoutSecs: 1, notebook: notebook('call_tool("github", "create_issue", {"title": "x"})') });
    await run(page, 0);
    await page.waitForFunction(() => document.querySelector('.tool-call')?.dataset.decision === 'timed_out', null, { timeout: 5000 });
    const row = callsOf(page, 0).first();
    assert.equal(await row.locator('.tool-call-mark').textContent(), '✕');
    assert.equal(await row.locator('.tool-call-words').textContent(), 'rejected — timed out: nobody decided within 1 s');
    assert.match(await cell(page, 0).locator('.outputs').textContent(), /ApprovalTimeout: github\.create_issue: nobody approved the call within 1 s/);
    await page.waitForFunction(() => document.querySelector('.cell')?.dataset.state === 'failed');
    // The panel lost the request, with the reason, and lists the call.
    assert.match(await page.locator('#recent-calls').textContent(), /github\.create_issue.*Timed out.*nobody decided in time/);
    await close();
  });

  it('shell commands show their command; many calls fold into a summary that opens', async () => {
    const rules = { version: 1, rules: [{ server: 'ipybox', tool: 'shell', args: { command: { glob: 'ls*' } }, decision: 'allow' }, { server: 'fx', tool: '*', decision: 'allow' }] };
    const code = ['!ls -la', ...Array.from({ length: 5 }, (_, i) => `call_tool("fx", "echo", {"n": ${i}})`)].join('\n');
    const { page, close } = await app({ rules, notebook: notebook(code) });
    await run(page, 0);
    await page.waitForFunction(() => document.querySelectorAll('.tool-call[data-status="done"]').length === 6);
    const summary = cell(page, 0).locator('.tool-calls-summary');
    assert.equal(await summary.textContent(), '6 tool calls: 6 allowed by a rule');
    assert.equal(await cell(page, 0).locator('.tool-calls-folder').getAttribute('open'), null, 'folded at first');
    assert.equal(await callsOf(page, 0).first().isVisible(), false);
    await summary.click();
    assert.equal(await callsOf(page, 0).first().isVisible(), true);
    assert.equal(await callsOf(page, 0).first().locator('.tool-call-name').textContent(), 'ipybox.shell ls -la');
    assert.equal(await callsOf(page, 0).first().locator('.tool-call-words').textContent(), 'allowed by a rule', 'a shell command has no outcome of its own');
    await close();
  });

  it('the list is never saved into the notebook, and Clear outputs clears it', async () => {
    const { page, close } = await app({ rules: ALLOW_ECHO, notebook: notebook('call_tool("fx", "echo", {"text": "kept out of the file"})') });
    await run(page, 0);
    await page.waitForFunction(() => document.querySelector('.tool-call')?.dataset.status === 'done');
    await page.waitForFunction(() => document.querySelector('.cell')?.dataset.state === 'done');
    await page.keyboard.press('Control+s');
    await page.waitForFunction(() => window.__mock.lastSaved() !== null);
    const saved = await page.evaluate(() => window.__mock.lastSaved());
    assert.ok(saved.includes('fx.echo answered'), 'the outputs are saved');
    assert.ok(!saved.includes('allowed by a rule') && !saved.includes('tool-call'), 'the call list is not');
    await page.click('#clear-outputs');
    // The list is redrawn at the next frame.
    await cell(page, 0).locator('.cell-tool-calls').waitFor({ state: 'hidden', timeout: 2000 });
    await close();
  });

  it('calls of code outside this notebook (another notebook, an agent) stay out of its cells', async () => {
    const { page, close } = await app({ notebook: notebook('1 + 2') });
    await page.evaluate(() =>
      window.__mock.emitSession({ type: 'tool_call', id: 900, server: 'fx', tool: 'echo', arguments: {}, execution_id: 'exec-elsewhere', origin: 'agent session 4f2a', decision: 'approved', decided_by: 'rule', reason: null, outcome: { kind: 'ok' }, duration_ms: 3 }),
    );
    await page.waitForFunction(() => document.querySelector('#recent-calls')?.textContent.includes('fx.echo'));
    assert.equal(await page.locator('.cell-tool-calls .tool-call').count(), 0);
    await close();
  });

  it('a long call shows its server’s progress under it as a bar that moves, with the server’s words as text; it goes when the call ends', async () => {
    const { page, errors, close } = await app({ rules: ALLOW_ECHO, toolCallRunMs: 1500, notebook: notebook('call_tool("fx", "echo", {"text": "hi"})') });
    await run(page, 0);
    await page.waitForFunction(() => document.querySelector('.tool-call')?.dataset.status === 'running');
    const id = Number(await callsOf(page, 0).first().getAttribute('data-request-id'));
    const report = (progress, total, message) =>
      page.evaluate(([id, progress, total, message]) => window.__mock.emitSession({ type: 'tool_progress', id, execution_id: null, server: 'fx', tool: 'echo', progress, total, message }), [id, progress, total, message]);
    await report(1, 4, 'page 1 <b>of</b> 4\u202e');
    const bar = callsOf(page, 0).first().locator('progress.tool-call-progress-bar');
    await bar.waitFor({ timeout: 2000 });
    assert.equal(await bar.evaluate((b) => b.value), 0.25);
    const words = callsOf(page, 0).first().locator('.tool-call-progress-words');
    await page.waitForFunction(() => document.querySelector('.tool-call-progress-words')?.textContent.startsWith('1 of 4'));
    assert.equal(await words.textContent(), '1 of 4 · page 1 <b>of</b> 4\\u202e', 'the server’s words are text, escaped');
    assert.equal(await page.locator('.tool-call-progress b').count(), 0, 'never HTML');
    await report(3, 4, null);
    await page.waitForFunction(() => document.querySelector('progress.tool-call-progress-bar')?.value === 0.75);
    assert.equal(await words.textContent(), '3 of 4');
    // Without a whole, the bar says work goes on (no value) and the words count.
    await report(7, null, null);
    await page.waitForFunction(() => document.querySelector('.tool-call-progress-words')?.textContent === '7 done');
    assert.equal(await bar.evaluate((b) => b.hasAttribute('value')), false);
    // A report for a call of no cell, or a malformed one, changes nothing.
    await page.evaluate(() => window.__mock.emitSession({ type: 'tool_progress', id: 99999, execution_id: null, server: 'fx', tool: 'echo', progress: 1, total: 2, message: null }));
    await page.evaluate(() => window.__mock.emitSession({ type: 'tool_progress', id: 1, progress: 'lots' }));
    await page.waitForFunction(() => document.querySelector('.tool-call')?.dataset.status === 'done', null, { timeout: 5000 });
    await page.waitForFunction(() => !document.querySelector('.tool-call-progress'));
    // A report after the end does not bring the bar back.
    await report(8, 8, 'late');
    await page.waitForTimeout(100);
    assert.equal(await page.locator('.tool-call-progress').count(), 0);
    assert.deepEqual(errors, []);
    await close();
  });
});
