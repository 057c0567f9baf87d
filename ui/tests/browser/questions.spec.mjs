// A question an MCP server asks during a cell's tool call: a form under the cell's call line,
// headed "The MCP server … asks:", the server's words escaped, defaults filled in; a bad value
// is named by ipybox and the form stays; the answer reaches the server; a question of no cell
// heads the approvals panel, and goes when its call ends.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useApp } from './harness.mjs';
import { notebook } from './notebooks.mjs';

const { app } = useApp({ before, after });

const ALLOW_ASK = { version: 1, rules: [{ server: 'asker', tool: 'ask', decision: 'allow' }] };
const SHOUTING = 'Confirm\u001b[2J your \u202edetails\u2066 now\nsecond line';

async function runFirst(page) {
  await page.locator('.cell').first().locator('.prompt').click();
  await page.keyboard.press('Control+Enter');
}

describe('a server’s question', () => {
  it('is a form under the cell’s call, its words escaped and its defaults filled in; a bad value is named; the answer reaches the server', async () => {
    const { page, errors, close } = await app({ rules: ALLOW_ASK, questionMessage: SHOUTING, notebook: notebook('call_tool("asker", "ask", {})') });
    await runFirst(page);
    const form = page.locator('.cell .cell-questions .server-question');
    await form.waitFor();
    // Right under the cell's tool-call line.
    assert.equal(await page.evaluate(() => document.querySelector('.cell .cell-tool-calls')?.nextElementSibling?.classList.contains('cell-questions')), true);
    assert.equal(await form.locator('.server-question-heading').textContent(), 'The MCP server asker asks:');
    const message = await form.locator('.server-question-message').textContent();
    assert.equal(message, 'Confirm\\u001b[2J your \\u202edetails\\u2066 now\nsecond line', 'controls and bidi shown as \\uXXXX, lines kept');
    assert.ok(!/[\u001b\u202e\u2066]/.test(await form.textContent()), 'no hidden character reaches the page');
    assert.match(await form.locator('.server-question-call').textContent(), /during its tool call asker\.ask/);
    const field = (name) => form.locator(`[data-field="${name}"]`);
    assert.equal(await field('name').locator('input').inputValue(), 'Ada Lovelace', 'a default is filled in');
    assert.equal(await field('subscribe').locator('input').isChecked(), true);
    assert.equal(await field('api_token').locator('input').getAttribute('type'), 'password', 'a secret is typed hidden');
    assert.match(await field('email').textContent(), /Email \(required\) — an email address/);
    assert.match(await field('email').textContent(), /Where the report goes/);
    assert.equal(await field('color').locator('option').allTextContents().then((o) => o.join('|')), '(none)|Red|Green|Blue');
    // The server's look is not ipybox's: no approval-request styling, a frame of its own.
    assert.equal(await form.evaluate((el) => getComputedStyle(el).borderTopStyle), 'dashed');
    assert.equal(await form.locator('.approval-request').count(), 0);

    await field('email').locator('input').fill('ada');
    await field('age').locator('input').fill('forty');
    await form.locator('.server-question-accept').click();
    const error = form.locator('.server-question-error');
    await error.waitFor();
    assert.equal(await error.textContent(), 'Email: it must be an email address, like name@example.com');
    await field('email').locator('input').fill('ada@example.org');
    await form.locator('.server-question-accept').click();
    await page.waitForFunction(() => document.querySelector('.server-question-error')?.textContent === 'Age: it must be a number');
    assert.equal(await field('email').locator('input').inputValue(), 'ada@example.org', 'what was typed stays');
    await field('age').locator('input').fill('36');
    await field('color').locator('select').selectOption('green');
    await form.locator('.server-question-accept').click();
    await page.waitForFunction(() => document.querySelector('.cell')?.dataset.state === 'done');
    assert.equal(await page.locator('.server-question').count(), 0, 'the form goes once the question ended');
    assert.match(
      await page.locator('.cell .outputs').textContent(),
      /server received: \{"action":"accept","content":\{"name":"Ada Lovelace","email":"ada@example.org","age":36,"subscribe":true,"color":"green"\}\}/,
    );
    assert.deepEqual(errors, []);
    await close();
  });

  it('a question of no cell heads the approvals panel; Decline goes back; a question whose call ended goes', async () => {
    const { page, close } = await app({ notebook: notebook('1 + 1') });
    const question = (id) => ({ id, server: 'remote\u202e', message: 'Pick one', form: { fields: [] }, call: null, asked_at: Date.now() });
    await page.evaluate((q) => window.__mock.emitSession({ type: 'elicitation_requested', question: q }), question(41));
    const form = page.locator('.approvals .approval-questions .server-question');
    await form.waitFor();
    assert.equal(await form.locator('.server-question-heading').textContent(), 'The MCP server remote\\u202e asks:');
    await form.locator('.server-question-decline').click();
    const error = form.locator('.server-question-error');
    await error.waitFor();
    assert.match(await error.textContent(), /no question 41 waits for an answer/, 'an answer to a question that no longer waits is refused in words');
    const sent = await page.evaluate(() => window.__mock.calls.filter((c) => c.cmd === 'answer_elicitation').map((c) => c.args));
    assert.deepEqual(sent, [{ id: 41, action: 'decline', values: null }], 'Decline sends no values');
    await page.evaluate(() => window.__mock.emitSession({ type: 'elicitation_ended', id: 41, server: 'remote', action: 'cancel', reason: 'the tool call it was asked in ended' }));
    await page.waitForFunction(() => document.querySelectorAll('.server-question').length === 0);
    await close();
  });

  it('a window opened after a server asked (a reload) shows the waiting question; the answer reaches the server', async () => {
    const waiting = { id: 7, server: 'asker', message: 'Still there?', form: { fields: [] }, call: { id: 3, execution_id: 'before-the-reload', tool: 'ask' }, asked_at: Date.now() };
    const { page, errors, close } = await app({ notebook: notebook('1 + 1'), questions: [waiting] });
    // Its cell's run is not in this window: the form heads the approvals, which open.
    const form = page.locator('.approvals .approval-questions .server-question');
    await form.waitFor();
    assert.equal(await form.locator('.server-question-heading').textContent(), 'The MCP server asker asks:');
    assert.equal(await form.locator('.server-question-message').textContent(), 'Still there?');
    assert.equal(await page.locator('.approvals').isVisible(), true, 'the approvals open on it');
    await form.locator('.server-question-decline').click();
    await page.waitForFunction(() => document.querySelectorAll('.server-question').length === 0);
    const sent = await page.evaluate(() => window.__mock.calls.filter((c) => c.cmd === 'answer_elicitation').map((c) => c.args));
    assert.deepEqual(sent, [{ id: 7, action: 'decline', values: null }]);
    assert.deepEqual(errors, []);
    await close();
  });

  it('a question that ended while the window asked which wait is not shown', async () => {
    const ended = { id: 8, server: 'asker', message: 'Gone soon', form: { fields: [] }, call: null, asked_at: Date.now() };
    const { page, close } = await app({ notebook: notebook('1 + 1'), questions: [ended], waitingQuestionsMs: 400 });
    // The window is listening and its question list is on its way: the question ends now.
    await page.evaluate(() => window.__mock.emitSession({ type: 'elicitation_ended', id: 8, server: 'asker', action: 'cancel', reason: 'the tool call it was asked in ended' }));
    await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === 'waiting_questions'));
    await page.waitForTimeout(700);
    assert.equal(await page.locator('.server-question').count(), 0, 'no form for a question that ended');
    await close();
  });
});
