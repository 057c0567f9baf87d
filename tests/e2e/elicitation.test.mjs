// A server's question in the real window under Xvfb: a cell calls a tool whose server asks
// for a form in the middle of the call; the form shows under the cell's call line, headed
// "The MCP server asker asks:", the server's words escaped; it is filled in with real keys
// (xdotool), a bad value is named and fixed, and the cell prints what the server received.
// A window reloaded while a question waits shows its form again, and its answer goes back.
// Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { APP, App, Keys, ROOT, workspace, notebook, answerDialog, invoke, settled, quitAll } from './webdriver.mjs';

const apps = [];
afterEach((t) => quitAll(apps, t));

const CELL = 'from mcptools.asker import ask\nprint(ask.run(ask.Params(message="Please confirm\\u202e your details for the weekly report")))';

/** A workspace whose `asker` server asks a question in its `ask` tool. */
function askerWorkspace() {
  const dir = workspace({ 'test.ipynb': notebook(CELL) });
  const fixture = join(ROOT, 'target', 'debug', 'ipybox-fixture-elicit');
  const reg = spawnSync(APP, ['register', 'asker', '--workspace', dir, '--params', JSON.stringify({ command: fixture })], { encoding: 'utf8' });
  if (reg.status !== 0) throw new Error(`registering the fixture server failed: ${reg.stderr}`);
  return dir;
}

/** Focus the input of field `name` of the form with a click, then type `text` with real keys. */
async function typeInto(app, name, text, { clear = false } = {}) {
  await app.click(`.server-question [data-field="${name}"] input`);
  const main = spawnSync('xdotool', ['search', '--onlyvisible', '--name', '^(• )?ipybox — '], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  spawnSync('xdotool', ['windowactivate', '--sync', main]);
  if (clear) spawnSync('xdotool', ['key', 'ctrl+a', 'BackSpace']);
  spawnSync('xdotool', ['type', '--delay', '30', text]);
  // The keys reach the window after xdotool returns: the next click waits for them.
  await app.until(`${name} to read ${text}`, () => app.execute('return document.querySelector(arguments[0]).value === arguments[1];', `.server-question [data-field="${name}"] input`, text));
}

test('a server’s question is a form under the cell, filled in with real keys, and its answer reaches the server', async () => {
  const ws = askerWorkspace();
  const app = await App.launch(['open', join(ws, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  await app.press(Keys.Shift, Keys.Enter);
  answerDialog('Approve tool call — asker.ask', 'Return', 60);
  await app.until('the server’s form under the cell', () => app.execute('return !!document.querySelector(".cell .cell-questions .server-question");'), 30000);
  const shown = await app.execute(`const f = document.querySelector('.server-question');
    return { heading: f.querySelector('.server-question-heading').textContent, message: f.querySelector('.server-question-message').textContent,
             name: f.querySelector('[data-field="name"] input').value, afterCalls: f.closest('.cell-questions').previousElementSibling.classList.contains('cell-tool-calls'),
             call: document.querySelector('.cell .tool-call')?.dataset.status };`);
  assert.equal(shown.heading, 'The MCP server asker asks:');
  assert.equal(shown.message, 'Please confirm\\u202e your details for the weekly report', 'the bidi control is shown, not obeyed');
  assert.equal(shown.name, 'Ada Lovelace', 'the server’s default is filled in');
  assert.ok(shown.afterCalls, 'right under the cell’s tool-call line');
  assert.equal(shown.call, 'running', 'while the call runs');

  await typeInto(app, 'email', 'ada@example.org');
  await typeInto(app, 'age', 'forty');
  await typeInto(app, 'api_token', 'tok-SECRET-42');
  await app.execute('const s = document.querySelector(\'.server-question [data-field="color"] select\'); s.value = "green"; s.dispatchEvent(new Event("change"));');
  await app.click('.server-question .server-question-accept');
  const error = await app.until('the bad field named', () => app.text('.server-question-error:not([hidden])'));
  assert.equal(error, 'Age: it must be a number');
  await typeInto(app, 'age', '36', { clear: true });
  await app.screenshot('elicitation-form');
  await app.click('.server-question .server-question-accept');
  const c = await settled(app, 0);
  const received = JSON.parse(c.output.trim());
  assert.deepEqual(received, {
    action: 'accept',
    content: { name: 'Ada Lovelace', email: 'ada@example.org', age: 36, subscribe: true, color: 'green', api_token: 'tok-SECRET-42' },
    reason: null,
  }, 'the server received what was typed, with the defaults');
  assert.equal(await app.execute('return document.querySelectorAll(".server-question").length;'), 0, 'the form went with the question');
  // Nobody else may answer a finished question.
  const late = await invoke(app, 'answer_elicitation', { id: 1, action: 'accept', values: {} }).then(() => 'accepted', (e) => e?.message ?? String(e));
  assert.match(late, /no question 1 waits for an answer/);
});

test('a window reloaded while a server’s question waits shows its form again, and the answer reaches the server', async () => {
  const ws = askerWorkspace();
  const app = await App.launch(['open', join(ws, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  await app.press(Keys.Shift, Keys.Enter);
  answerDialog('Approve tool call — asker.ask', 'Return', 60);
  await app.until('the server’s form under the cell', () => app.execute('return !!document.querySelector(".cell .cell-questions .server-question");'), 30000);
  const before = await invoke(app, 'waiting_questions');
  assert.equal(before.length, 1, 'the engine says one question waits');
  assert.equal(before[0].server, 'asker');

  // The page is reloaded: its forms are gone with it, the question still waits on the server.
  await app.execute('window.__beforeReload = true; location.reload();');
  await app.until('the reloaded page', () => app.execute('return !window.__beforeReload && document.body.dataset.ready === "true";'), 30000);
  await app.until('the form again, at the head of the approvals', () => app.execute('return !!document.querySelector(".approval-questions .server-question");'), 20000);
  assert.equal(await app.text('.approval-questions .server-question .server-question-heading'), 'The MCP server asker asks:');
  assert.equal(await app.text('.approval-questions .server-question .server-question-message'), 'Please confirm\\u202e your details for the weekly report');
  await app.screenshot('elicitation-after-reload');
  await app.click('.approval-questions .server-question .server-question-decline');
  await app.until('the form to go', () => app.execute('return document.querySelectorAll(".server-question").length === 0;'), 20000);
  assert.deepEqual(await invoke(app, 'waiting_questions'), [], 'nothing waits any more');
  // The server had the answer: the audit log records the question declined during its call.
  const audit = await app.until('the question in the audit log', () => {
    const out = spawnSync(APP, ['audit', '--workspace', ws], { encoding: 'utf8' }).stdout;
    return /asker asked during asker\.ask: .*  declined/.test(out) ? out : null;
  }, 30000);
  assert.match(audit, /asker asked during asker\.ask: Please confirm\\u202e your details/);
});
