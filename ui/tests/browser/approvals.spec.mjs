// The approval side panel and the audit log, with the fake backend's in-memory approvals,
// rules and audit log (tests/browser/mock/tauri-mock.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useApp } from './harness.mjs';
import { notebook } from './notebooks.mjs';

const { app } = useApp({ before, after }, { notebook: null });

const calls = (page, cmd) => page.evaluate((c) => window.__mock.calls.filter((x) => x.cmd === c).map((x) => x.args), cmd);
const request = (page, r = {}) => page.evaluate((req) => window.__mock.requestApproval(req), r);
const cards = (page) => page.locator('#approval-list .approval-request');

describe('pending requests', () => {
  it('a request opens the panel by itself, shows in plain words, and counts on the badge; the notebook keeps the focus', async () => {
    const { page, errors, close } = await app();
    assert.equal(await page.locator('#right-panel').isHidden(), true);
    assert.equal(await page.locator('#approvals-badge').isHidden(), true);
    const focusBefore = await page.evaluate(() => document.activeElement?.className);

    await request(page, { id: 7, asked_at: Date.now() - 12_000, arguments: { owner: 'acme', repo: 'site', body: 'b'.repeat(600) } });
    await page.waitForSelector('#right-panel:not([hidden])');
    assert.equal(await page.locator('#side-tab-approvals').getAttribute('aria-selected'), 'true');
    assert.equal(await page.locator('#approvals-badge').textContent(), '1');
    assert.equal(await page.locator('#toggle-approvals').getAttribute('aria-expanded'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement?.className), focusBefore);

    const card = cards(page).first();
    assert.equal(await card.locator('.approval-title').textContent(), 'github.create_issue wants to run — from cell 3 of analysis.ipynb');
    // The time left before the session's approval timeout (60 s) rejects it.
    assert.match(await card.locator('.approval-asked').textContent(), /^Asked 1[2-4] s ago · rejected in 4[6-8] s unless you decide$/);
    assert.equal(await page.locator('#approval-timeout-hint').textContent(), ' A call nobody decides within 60 s is rejected. Change');
    // Arguments: JSON with a 2-space indent, the long value shortened, "Show all" shows it whole.
    const args = card.locator('.approval-args');
    assert.match(await args.textContent(), /^\{\n {2}"owner": "acme",\n/);
    assert.match(await args.textContent(), /b{200}… \(400 more characters\)/);
    await card.locator('.show-all').click();
    assert.ok((await args.textContent()).includes('b'.repeat(600)));
    assert.equal(await card.locator('.show-all').textContent(), 'Show less');

    // A second one from unknown code; oldest first; the badge follows.
    await request(page, { id: 8, origin: null, server: 'filesystem', tool: 'write_file' });
    await page.waitForFunction(() => document.querySelector('#approvals-badge')?.textContent === '2');
    assert.deepEqual(await cards(page).evaluateAll((els) => els.map((e) => e.dataset.requestId)), ['7', '8']);
    assert.equal(await cards(page).nth(1).locator('.approval-title').textContent(), 'filesystem.write_file wants to run — from code in this notebook');
    assert.equal(await page.locator('#side-tab-approvals .badge').textContent(), '2');
    assert.deepEqual(errors, []);
    await close();
  });

  it('requests made before the UI listened are fetched at start', async () => {
    const { page, close } = await app({ approvals: [{ id: 3, server: 'fetch', tool: 'fetch', arguments: { url: 'https://docs.python.org/3/' } }] });
    await page.waitForSelector('#approval-list .approval-request[data-request-id="3"]');
    assert.equal(await page.locator('#approvals-badge').textContent(), '1');
    assert.ok((await calls(page, 'approvals_pending')).length >= 1);
    await close();
  });

  it('Approve and Reject call decide_approval; the request leaves and joins the recent decisions', async () => {
    const { page, close } = await app();
    await request(page, { id: 11 });
    await request(page, { id: 12, server: 'filesystem', tool: 'write_file' });
    await page.waitForFunction(() => document.querySelectorAll('#approval-list .approval-request').length === 2);

    await page.click('.approval-request[data-request-id="11"] .approve');
    await page.waitForSelector('.approval-request[data-request-id="11"]', { state: 'detached' });
    await page.click('.approval-request[data-request-id="12"] .reject');
    await page.waitForSelector('.approval-request[data-request-id="12"]', { state: 'detached' });
    assert.deepEqual(await calls(page, 'decide_approval'), [
      { id: 11, decision: 'accept' },
      { id: 12, decision: 'reject' },
    ]);
    assert.equal(await page.locator('#approvals-badge').isHidden(), true);
    assert.equal(await page.locator('#approvals-empty').isVisible(), true);

    await page.waitForFunction(() => document.querySelectorAll('#recent-calls .recent-call').length === 2);
    const recent = await page.locator('#recent-calls .recent-call').allTextContents();
    assert.match(recent[0], /filesystem\.write_file.*Rejected.*by you/);
    assert.match(recent[1], /github\.create_issue.*Approved.*by you · OK · 120 ms/);
    await close();
  });

  it('"Approve all N pending calls to X" decides only X’s; "Reject all pending" decides the rest', async () => {
    const { page, close } = await app();
    await request(page, { id: 21 });
    await request(page, { id: 22, server: 'filesystem', tool: 'write_file' });
    await request(page, { id: 23 });
    await request(page, { id: 24 });
    await request(page, { id: 25, server: 'filesystem', tool: 'write_file' });
    await page.waitForFunction(() => document.querySelectorAll('#approval-list .approval-request').length === 5);
    const groupButtons = await page.locator('#approval-group-actions button').allTextContents();
    // All five come from one run of cell 3: approving "the rest of this cell's calls" is offered too.
    assert.deepEqual(groupButtons, ['Approve all 3 pending calls to github.create_issue', 'Approve all 2 pending calls to filesystem.write_file', 'Approve all 5 pending calls from cell 3 of analysis.ipynb', 'Reject all 5 pending']);

    await page.click('#approval-group-actions .approve-group[data-tool="create_issue"]');
    await page.waitForFunction(() => document.querySelectorAll('#approval-list .approval-request').length === 2);
    assert.deepEqual(await calls(page, 'decide_all_pending'), [{ decision: 'accept', ids: [21, 23, 24] }], 'exactly the calls shown, by id');
    assert.deepEqual(await cards(page).evaluateAll((els) => els.map((e) => e.dataset.requestId)), ['22', '25']);
    assert.match(await page.locator('#approvals-status').textContent(), /Approved 3 calls to github\.create_issue/);
    await page.waitForFunction(() => document.querySelector('#recent-calls')?.textContent.includes('all pending approved at once'));

    await page.click('#reject-all-pending');
    await page.waitForFunction(() => document.querySelectorAll('#approval-list .approval-request').length === 0);
    assert.deepEqual((await calls(page, 'decide_all_pending'))[1], { decision: 'reject', ids: [22, 25] });
    assert.deepEqual(await page.evaluate(() => window.__mock.approvals()), []);
    assert.equal(await page.locator('#approval-group-actions').isHidden(), true);
    await close();
  });

  it('a withdrawn request shows why, then leaves', async () => {
    const { page, close } = await app();
    await request(page, { id: 31 });
    await page.waitForSelector('.approval-request[data-request-id="31"]');
    await page.evaluate(() => window.__mock.withdrawApproval(31, 'nobody decided in time'));
    const card = page.locator('.approval-request[data-request-id="31"]');
    await page.waitForFunction(() => document.querySelector('.approval-request[data-request-id="31"]')?.dataset.state === 'withdrawn');
    assert.equal(await card.locator('.approval-note').textContent(), 'Withdrawn: nobody decided in time');
    assert.equal(await card.locator('.approve').isDisabled(), true);
    assert.equal(await page.locator('#approvals-badge').isHidden(), true);
    await page.waitForSelector('.approval-request[data-request-id="31"]', { state: 'detached', timeout: 8000 });
    await close();
  });

  it('"Always allow this tool" adds a rule first and decides the request by it', async () => {
    const { page, close } = await app();
    await request(page, { id: 41, server: 'weather', tool: 'forecast' });
    await page.click('.approval-request[data-request-id="41"] .always-allow');
    await page.waitForSelector('.approval-request[data-request-id="41"]', { state: 'detached' });
    assert.deepEqual(await calls(page, 'add_approval_rule'), [{ rule: { server: 'weather', tool: 'forecast', decision: 'allow', comment: 'added from the approval panel' }, decideId: 41 }]);
    await page.waitForFunction(() => document.querySelector('#rule-list .rule .rule-text')?.textContent === 'Always allow weather.forecast');
    assert.equal(await page.locator('#rule-list .rule').first().locator('.rule-comment').textContent(), 'added from the approval panel');
    await page.waitForFunction(() => document.querySelector('#recent-calls')?.textContent.includes('by a rule'));

    await request(page, { id: 42, server: 'github', tool: 'delete_repo' });
    await page.click('.approval-request[data-request-id="42"] .always-reject');
    await page.waitForSelector('.approval-request[data-request-id="42"]', { state: 'detached' });
    assert.deepEqual((await calls(page, 'add_approval_rule'))[1], { rule: { server: 'github', tool: 'delete_repo', decision: 'reject', reason: 'rejected by a rule made in the approval panel' }, decideId: 42 });
    await page.waitForFunction(() => document.querySelector('#rule-list .rule .rule-text')?.textContent === 'Always reject github.delete_repo — rejected by a rule made in the approval panel');
    await close();
  });

  it('"Always allow this tool" cancelled in its native confirmation adds nothing and the call still waits', async () => {
    const { page, errors, close } = await app({ dialog: 'cancel' });
    await request(page, { id: 43, server: 'weather', tool: 'forecast' });
    await page.waitForFunction(() => document.querySelectorAll('#rule-list .rule').length > 0);
    const rulesBefore = await page.locator('#rule-list .rule').allTextContents();
    await page.click('.approval-request[data-request-id="43"] .always-allow');
    await page.waitForFunction(() => document.querySelector('#approvals-status, .approvals-status')?.textContent.includes('No rule was added'));
    assert.equal(await page.locator('.approval-request[data-request-id="43"]').getAttribute('data-state'), 'waiting');
    assert.deepEqual(await page.locator('#rule-list .rule').allTextContents(), rulesBefore);
    assert.equal((await calls(page, 'add_approval_rule')).length, 1, 'asked once, and the person said no');
    assert.deepEqual(errors, []);
    await close();
  });

  it('the toolbar button opens and closes the panel; the tabs switch', async () => {
    const { page, close } = await app();
    await page.click('#toggle-approvals');
    await page.waitForSelector('#right-panel:not([hidden])');
    assert.equal(await page.locator('#approvals-empty').isVisible(), true);
    await page.click('#side-tab-audit');
    assert.equal(await page.locator('#side-panel-audit').isVisible(), true);
    assert.equal(await page.locator('#side-panel-approvals').isHidden(), true);
    // The button brings the Approvals tab back; pressed again, it closes the panel.
    await page.click('#toggle-approvals');
    assert.equal(await page.locator('#side-panel-approvals').isVisible(), true);
    await page.click('#toggle-approvals');
    assert.equal(await page.locator('#right-panel').isHidden(), true);
    assert.equal(await page.locator('#toggle-approvals').getAttribute('aria-expanded'), 'false');
    // The notebook still works beside it.
    await page.click('#toggle-approvals');
    await page.locator('.cell .cell-editor').first().click();
    await page.keyboard.insertText('1 + 2');
    await page.keyboard.press('Escape');
    await page.keyboard.press('b');
    assert.equal(await page.locator('.cell').count(), 2);
    await close();
  });
});

/** Run cell `i` in place (Ctrl+Enter in command mode). */
async function runCell(page, i) {
  await page.locator('.cell').nth(i).locator('.prompt').click();
  await page.keyboard.press('Control+Enter');
}

const NO_RULES = { version: 1, rules: [] };
const waitingCard = (page) => page.locator('#approval-list .approval-request[data-state="waiting"]');

describe('rules made from a request’s arguments', () => {
  it('"Always allow this command" allows `ls -la` from now on, not `rm -rf`; removing the rule asks again', async () => {
    const { page, errors, close } = await app({ rules: NO_RULES, notebook: notebook('!ls -la', '!rm -rf build', '!ls -la') });
    await runCell(page, 0);
    await waitingCard(page).waitFor();
    const card = waitingCard(page);
    assert.deepEqual(await card.locator('.approval-always button').allTextContents(), ['Always allow this command', 'Always allow this tool', 'Always reject this tool']);
    await card.locator('.always-allow-args').click();
    await page.waitForFunction(() => document.querySelector('.cell .tool-call')?.dataset.status === 'done');
    const added = (await calls(page, 'add_approval_rule'))[0];
    assert.deepEqual(added, { rule: { server: 'ipybox', tool: 'shell', args: { command: { equals: 'ls -la' } }, exact_args: true, decision: 'allow', comment: 'added from the approval panel' }, decideId: added.decideId });
    assert.equal(typeof added.decideId, 'number', 'the request is decided by the new rule');
    assert.equal(await page.locator('.cell').nth(0).locator('.tool-call-words').textContent(), 'allowed by a rule', 'the cell says a rule decided it');
    await page.waitForFunction(() => document.querySelector('#rule-list .rule-text')?.textContent === 'Always allow the shell command “ls -la”');

    // Another command still asks.
    await runCell(page, 1);
    await waitingCard(page).waitFor();
    assert.equal(await waitingCard(page).locator('.approval-args').textContent(), '{\n  "command": "rm -rf build"\n}');
    await waitingCard(page).locator('.reject').click();
    await page.waitForFunction(() => document.querySelectorAll('.cell')[1]?.querySelector('.tool-call')?.dataset.decision === 'rejected');

    // The same command again: decided by the rule, nothing waits.
    await runCell(page, 2);
    await page.waitForFunction(() => document.querySelectorAll('.cell')[2]?.querySelector('.tool-call')?.dataset.status === 'done');
    assert.equal(await page.locator('.cell').nth(2).locator('.tool-call-words').textContent(), 'allowed by a rule');
    assert.equal(await page.locator('#approvals-badge').isHidden(), true);

    // Removed, the command asks again.
    await page.locator('#rule-list .rule').first().locator('.rule-remove').click();
    await page.waitForFunction(() => document.querySelectorAll('#rule-list .rule').length === 0);
    await runCell(page, 2);
    await waitingCard(page).waitFor();
    await waitingCard(page).locator('.approve').click();
    assert.deepEqual(errors, []);
    await close();
  });

  it('"Always allow calls with these arguments" for an MCP tool: equal values of each argument, listed in words', async () => {
    const cells = ['call_tool("github", "create_issue", {"owner": "acme", "repo": "site"})', 'call_tool("github", "create_issue", {"owner": "acme", "repo": "docs"})', 'call_tool("github", "create_issue", {"owner": "acme", "repo": "site"})'];
    const { page, close } = await app({ rules: NO_RULES, notebook: notebook(...cells) });
    await runCell(page, 0);
    await waitingCard(page).waitFor();
    assert.equal(await waitingCard(page).locator('.always-allow-args').textContent(), 'Always allow calls with these arguments');
    await waitingCard(page).locator('.always-allow-args').click();
    await page.waitForFunction(() => document.querySelector('#rule-list .rule-text')?.textContent.startsWith('Always allow github.create_issue when'));
    assert.equal(await page.locator('#rule-list .rule-text').first().textContent(), 'Always allow github.create_issue when owner is “acme” and repo is “site”, with no other arguments');
    assert.match(await page.locator('#approvals-status').textContent(), /^Rule added: Always allow github\.create_issue when owner is “acme” and repo is “site”, with no other arguments\.$/);
    // Other values ask; the same values do not.
    await runCell(page, 1);
    await waitingCard(page).waitFor();
    await waitingCard(page).locator('.reject').click();
    await runCell(page, 2);
    await page.waitForFunction(() => document.querySelectorAll('.cell')[2]?.querySelector('.tool-call')?.dataset.status === 'done');
    assert.equal(await page.locator('.cell').nth(2).locator('.tool-call-words').textContent(), 'allowed by a rule · OK · 120 ms');
    await close();
  });

  it('a call without arguments offers no such rule: it would allow the whole tool', async () => {
    const { page, close } = await app();
    await request(page, { id: 61, server: 'github', tool: 'get_me', arguments: {} });
    await page.waitForSelector('.approval-request[data-request-id="61"]');
    assert.equal(await page.locator('.approval-request[data-request-id="61"] .always-allow-args').count(), 0);
    await close();
  });

  it('a recent call you decided becomes a rule for next time; a second time says a rule exists; rule-decided calls offer none', async () => {
    const { page, close } = await app({ rules: NO_RULES });
    await request(page, { id: 71, server: 'weather', tool: 'forecast', arguments: { city: 'Oslo' } });
    await page.click('.approval-request[data-request-id="71"] .approve');
    await page.waitForSelector('#recent-calls .recent-call');
    const first = page.locator('#recent-calls .recent-call').first();
    assert.equal(await first.locator('.recent-allow-args').textContent(), 'Always allow calls with these arguments');
    await first.locator('.recent-allow-args').click();
    await page.waitForFunction(() => document.querySelector('#recent-calls .recent-rule-made')?.textContent === 'Rule added: Always allow weather.forecast when city is “Oslo”, with no other arguments.');
    assert.deepEqual(await calls(page, 'add_approval_rule'), [{ rule: { server: 'weather', tool: 'forecast', args: { city: { equals: 'Oslo' } }, exact_args: true, decision: 'allow', comment: 'added from the approval panel' }, decideId: null }]);
    await page.waitForFunction(() => document.querySelector('#rule-list .rule-text')?.textContent === 'Always allow weather.forecast when city is “Oslo”, with no other arguments');

    // The same arguments decided by hand once more (from before the rule): no second copy.
    await request(page, { id: 72, server: 'weather', tool: 'forecast', arguments: { city: 'Oslo' } });
    await page.evaluate(() => window.__mock.decideApproval(72, 'accept'));
    await page.waitForFunction(() => document.querySelectorAll('#recent-calls .recent-call').length === 2);
    await page.locator('#recent-calls .recent-call').first().locator('.recent-allow-args').click();
    await page.waitForFunction(() => document.querySelector('#recent-calls .recent-call .recent-rule-made')?.textContent === 'A rule already allows these arguments.');
    assert.equal((await calls(page, 'add_approval_rule')).length, 1);

    await request(page, { id: 73, server: 'weather', tool: 'forecast', arguments: { city: 'Lima' } });
    await page.evaluate(() => window.__mock.decideApproval(73, 'accept', 'rule'));
    await page.waitForFunction(() => document.querySelectorAll('#recent-calls .recent-call').length === 3);
    assert.equal(await page.locator('#recent-calls .recent-call').first().locator('.recent-allow-args').count(), 0);
    await close();
  });
});

describe('rules', () => {
  it('lists the rules in words; Remove removes one', async () => {
    const { page, close } = await app();
    await page.click('#toggle-approvals');
    await page.waitForSelector('#rule-list .rule');
    const texts = await page.locator('#rule-list .rule-text').allTextContents();
    assert.deepEqual(texts, ['Always reject *.delete_* — deletions are never allowed', 'Always allow filesystem.read_text_file when path is under /home/ana/projects/weather']);
    assert.equal(await page.locator('#rule-list .rule').first().locator('.rule-comment').textContent(), 'first, so that no later rule can allow a deletion');

    await page.locator('#rule-list .rule').nth(1).locator('.rule-remove').click();
    await page.waitForFunction(() => document.querySelectorAll('#rule-list .rule').length === 1);
    const saved = (await calls(page, 'set_approval_rules')).at(-1);
    assert.equal(saved.rules.version, 1);
    assert.deepEqual(saved.rules.rules.map((r) => r.tool), ['delete_*']);
    await close();
  });

  it('Edit as JSON: a backend error is shown under the text, which stays; a fixed text is saved', async () => {
    const { page, close } = await app();
    await page.click('#toggle-approvals');
    await page.waitForSelector('#rule-list .rule');
    await page.click('#edit-rules-json');
    const text = await page.inputValue('#rules-json');
    assert.deepEqual(JSON.parse(text).rules.length, 2);

    // Not JSON: said at once, nothing sent.
    await page.fill('#rules-json', '{"version": 1, "rules": [');
    await page.click('#save-rules-json');
    assert.match(await page.locator('#rules-json-error').textContent(), /not valid JSON/);
    assert.equal((await calls(page, 'set_approval_rules')).length, 0);

    // The backend names the bad rule; the text is kept.
    const bad = '{"version": 1, "rules": [{"server": "github", "tool": "get_*", "decison": "allow"}]}';
    await page.fill('#rules-json', bad);
    await page.click('#save-rules-json');
    await page.waitForFunction(() => !document.querySelector('#rules-json-error')?.hidden && document.querySelector('#rules-json-error')?.textContent.includes('rules[0]'));
    assert.match(await page.locator('#rules-json-error').textContent(), /rules\[0\]: unknown field `decison`/);
    assert.equal(await page.inputValue('#rules-json'), bad);
    assert.equal(await page.locator('#rules-json').isVisible(), true);

    await page.fill('#rules-json', '{"version": 1, "rules": [{"server": "github", "tool": "get_*", "decision": "allow", "comment": "reading is fine"}]}');
    await page.click('#save-rules-json');
    await page.waitForSelector('#rules-json', { state: 'hidden' });
    await page.waitForFunction(() => document.querySelector('#rule-list .rule-text')?.textContent === 'Always allow github.get_*');
    assert.equal(await page.locator('#rule-list .rule-comment').textContent(), 'reading is fine');
    assert.deepEqual(await page.evaluate(() => window.__mock.rules()), { version: 1, rules: [{ server: 'github', tool: 'get_*', decision: 'allow', comment: 'reading is fine' }] });
    await close();
  });
});

describe('audit log', () => {
  async function openAudit(page) {
    await page.click('#toggle-approvals');
    await page.click('#side-tab-audit');
    await page.waitForSelector('#audit-table tbody tr');
  }

  it('shows the log newest first, filters by text, decision and how; Show more', async () => {
    const { page, close } = await app({ auditCount: 450 }, { width: 1600 });
    await openAudit(page);
    assert.equal(await page.locator('#audit-table tbody tr').count(), 200);
    assert.match(await page.locator('#audit-count').textContent(), /450 entries · showing the newest 200/);
    const first = page.locator('#audit-table tbody tr').first();
    assert.match(await first.locator('.audit-args').textContent(), /station-449/);
    assert.match(await first.locator('.audit-time').textContent(), /^(\d+ \w{3} )?\d\d:\d\d:\d\d$/);

    await page.click('#audit-more');
    assert.equal(await page.locator('#audit-table tbody tr').count(), 400);

    await page.fill('#audit-search', 'station-44');
    // station-44 and station-440..449
    assert.equal(await page.locator('#audit-table tbody tr').count(), 11);
    assert.match(await page.locator('#audit-count').textContent(), /11 of 450 entries match/);

    await page.fill('#audit-search', 'forecast');
    await page.selectOption('#audit-decision', 'approved');
    const decisions = await page.locator('#audit-table tbody .audit-decision').allTextContents();
    assert.ok(decisions.length > 0 && decisions.every((d) => d === 'Approved'));
    const tools = await page.locator('#audit-table tbody .audit-call').allTextContents();
    assert.ok(tools.every((t) => t === 'weather.forecast'));

    await page.fill('#audit-search', '');
    await page.selectOption('#audit-decision', 'all');
    await page.selectOption('#audit-how', 'rule');
    const how = await page.locator('#audit-table tbody .audit-how').allTextContents();
    assert.ok(how.length > 0 && how.every((x) => x === 'by a rule'));

    await page.fill('#audit-search', 'no such thing anywhere');
    assert.equal(await page.locator('#audit-empty').textContent(), 'No entries match the search.');
    await close();
  });

  it('arguments expand in place; Export shows where it went; new tool calls appear while shown', async () => {
    const { page, close } = await app({ auditCount: 3 });
    await openAudit(page);
    const first = page.locator('#audit-table tbody tr').first();
    await first.locator('.audit-args-toggle').click();
    assert.match(await first.locator('.audit-args pre').textContent(), /^\{\n {2}"path": /);

    await page.click('#audit-export');
    await page.waitForFunction(() => document.querySelector('#audit-status')?.textContent.startsWith('Exported to'));
    assert.equal(await page.locator('#audit-status').textContent(), 'Exported to /home/ana/Documents/ipybox-audit-weather.jsonl');
    assert.equal((await calls(page, 'export_audit_log')).length, 1);

    // A call decided from the native dialog: the tab reads the log again.
    await request(page, { id: 51, server: 'weather', tool: 'forecast', arguments: { city: 'Oslo' } });
    await page.evaluate(() => window.__mock.decideApproval(51, 'accept'));
    await page.waitForFunction(() => document.querySelectorAll('#audit-table tbody tr').length === 4);
    assert.match(await page.locator('#audit-table tbody tr').first().textContent(), /weather\.forecast.*Oslo.*Approved.*by you/);
    await close();
  });
});
