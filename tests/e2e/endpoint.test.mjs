// The app serves MCP itself: switched on in the Agents dialog, it shows a URL and a bearer
// token; an MCP client (the official TypeScript SDK, over Streamable HTTP) then runs cells
// in a kernel of its own, which appear live in a read-only tab; its tool calls raise the
// app's native dialog and land in the workspace's audit log. Switching it off ends the
// agents' sessions. Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Keys, ROOT, SHOTS, answerDialog, answerDialogSoon, auditLog, fixtureWorkspace, quitAll, windowOpen } from './webdriver.mjs';

const SDK = join(ROOT, 'tests', 'servers', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'client');
const { Client } = await import(pathToFileURL(join(SDK, 'index.js')).href);
const { StreamableHTTPClientTransport } = await import(pathToFileURL(join(SDK, 'streamableHttp.js')).href);

const apps = [];
const clients = [];
afterEach(async (t) => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  return quitAll(apps, t);
});

const TITLE = 'Approve tool call — fx.echo';
const ECHO = (text) => `from mcptools.fx.echo import Params, run\nprint(run(Params(text=${JSON.stringify(text)})))`;

/** The whole screen (WebDriver's screenshot can hang while a modal dialog is open). */
function screen(name) {
  mkdirSync(SHOTS, { recursive: true });
  spawnSync('import', ['-window', 'root', join(SHOTS, `${name}.png`)]);
}

/** Keep a screenshot for the docs with IPYBOX_UPDATE_SCREENSHOTS=1. */
function forDocs(name) {
  if (process.env.IPYBOX_UPDATE_SCREENSHOTS === '1') copyFileSync(join(SHOTS, `${name}.png`), join(ROOT, 'docs', 'images', `${name}.png`));
}

/** Switch the endpoint on in the Agents dialog; its URL and token as the dialog shows them. */
async function serve(app) {
  await app.click('#open-agents');
  await app.click('#mcp-endpoint-toggle');
  // Serving agents is confirmed natively (the window's switch only asks).
  answerDialog('Serve agents on this workspace?', 'alt+s', 30);
  await app.until('the endpoint to serve', () => app.execute('const d = document.querySelector("#mcp-endpoint-details"); return d && !d.hidden;'), 30000);
  await app.click('#show-mcp-token');
  const url = await app.execute('return document.querySelector("#mcp-endpoint-url").value;');
  const token = await app.execute('return document.querySelector("#mcp-endpoint-token").value;');
  const config = await app.text('#mcp-config');
  return { url, token, config };
}

async function connect(url, token, name = 'e2e-agent', version = '1.0.0') {
  const client = new Client({ name, version });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function run(client, code) {
  const result = await client.callTool({ name: 'execute_ipython_cell', arguments: { code } }, undefined, { timeout: 180000 });
  const text = result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  return { text, error: result.isError === true, content: result.content };
}

test("the app's own MCP endpoint: an agent's cells show live in a tab of their own, its tool calls ask the person", async () => {
  const ws = fixtureWorkspace('1 + 1');
  const app = await App.launch(['open', join(ws, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  await app.until('the kernel to be ready', async () => (await app.kernelStatus()) === 'idle', 90000);

  // Cancelled: the dialog says nothing changed, and nothing serves.
  await app.click('#open-agents');
  await app.click('#mcp-endpoint-toggle');
  answerDialog('Serve agents on this workspace?', 'Escape', 30);
  await app.until('the status after Cancel', async () => (await app.text('#mcp-endpoint-status')) !== 'Starting…');
  assert.equal(await app.text('#mcp-endpoint-status'), 'Not serving: nothing was changed.');
  assert.equal(await app.execute('return document.querySelector("#mcp-endpoint-details").hidden;'), true);
  await app.press(Keys.Escape);

  const { url, token, config } = await serve(app);
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  assert.match(token, /^[0-9a-f]{32}$/);
  assert.ok(config.includes(url) && config.includes(token), config);
  // The notebook's own kernel is not sandboxed, but the sandbox works here: agents' code
  // runs in it, and the dialog says so.
  assert.equal(await app.execute('return document.querySelector("#mcp-endpoint-sandbox").dataset.sandboxed;'), 'true');
  assert.match(await app.text('#mcp-endpoint-sandbox'), /runs in the sandbox/);
  screen('agents-dialog');
  await app.click('#close-agents');

  // Without the token, nothing.
  const refused = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
  assert.equal(refused.status, 401);

  const client = await connect(url, token);
  const first = await run(client, 'import matplotlib.pyplot as plt\nprint("hello from the agent")\nplt.plot([1, 3, 2, 4])\nplt.show()');
  assert.equal(first.error, false, first.text);
  assert.match(first.text, /hello from the agent/);
  assert.ok(first.content.some((c) => c.type === 'image'), 'the agent gets the plot');
  // srt marks what it runs; the person's own kernel has no such mark.
  const where = await run(client, 'import os\nprint(os.environ.get("SANDBOX_RUNTIME"))');
  assert.equal(where.text.trim(), '1', `the agent's kernel runs in the sandbox: ${where.text}`);

  // Its session appears as a tab; its cell, output and plot are there, read-only.
  await app.until('the agent tab', async () => (await app.find('.doc-tab-agent')).length === 1, 10000);
  assert.equal(await app.execute('return document.querySelector("#doc-tabs").hidden;'), false);
  await app.click('.doc-tab-agent');
  await app.until('the agent notebook', () => app.execute(
    'const n = document.querySelector("#agent-scroller .agent-notebook"); return n && n.textContent.includes("hello from the agent") && !!n.querySelector(".outputs img");'), 10000);
  assert.equal(await app.execute('return document.querySelector("#notebook-scroller").hidden;'), true);
  assert.equal(await app.execute('return document.querySelector("#agent-scroller .cell-static").isContentEditable;'), false);
  // The pointer over a cell makes its editor, read-only as well.
  await app.click('#agent-scroller .cell-editor');
  await app.until('the agent cell\'s editor', () => app.execute('return !!document.querySelector("#agent-scroller .cm-content");'), 5000);
  const editable = await app.execute('return document.querySelector("#agent-scroller .cm-content").getAttribute("contenteditable");');
  assert.equal(editable, 'false', 'the agent notebook is read-only');

  // A tool call from the agent's code raises the app's dialog: approved, then rejected.
  const approving = answerDialogSoon(TITLE, 'Return');
  const approved = await run(client, ECHO('asked by the agent'));
  await approving;
  assert.equal(approved.error, false, approved.text);
  assert.match(approved.text, /asked by the agent/);
  // The server's card says the agent's call ran it (the notebook has not started its own).
  if (await app.execute('return document.querySelector("#right-panel").hidden;')) await app.click('#toggle-approvals');
  await app.click('#side-tab-servers');
  await app.until("the card to say an agent's call ran it", () => app.execute(
    'return document.querySelector(\'.server-card[data-server="fx"] .server-state\')?.textContent ?? "";').then((t) => t.startsWith('Ran an agent’s call')), 10000);
  const rejecting = answerDialogSoon(TITLE, 'Escape');
  const rejected = await run(client, ECHO('refused by the person'));
  await rejecting;
  assert.equal(rejected.error, true, rejected.text);
  assert.match(rejected.text, /ApprovalRejected/);

  // Live: the agent's tab grew by those cells, and shows the rejection.
  await app.until('the agent cells', () => app.execute('return document.querySelectorAll("#agent-scroller .cell").length === 4 && document.querySelector("#agent-scroller").textContent.includes("ApprovalRejected");'), 10000);
  await app.until('the agent to be idle', () => app.execute('return !!document.querySelector(".doc-tab-agent .doc-tab-dot.idle");'), 10000);
  screen('agent-tab');
  forDocs('agents-dialog');
  forDocs('agent-tab');

  const entries = auditLog(ws).filter((e) => e.server === 'fx');
  assert.deepEqual(entries.map((e) => [e.arguments.text, e.decision, e.decided_by]),
    [['asked by the agent', 'approved', 'person'], ['refused by the person', 'rejected', 'person']]);
  for (const e of entries) assert.match(e.origin ?? '', /^agent session [0-9a-f]{8}$/, JSON.stringify(e));
  assert.equal(entries[0].outcome?.kind, 'ok', JSON.stringify(entries[0]));

  // The notebook tab comes back with the person's own notebook, whose keys work again.
  await app.click('#doc-tab-notebook');
  assert.equal(await app.execute('return document.querySelector("#notebook-scroller").hidden;'), false);

  // Switched off: the agent's session ends (its tab says so), and nothing answers any more.
  await app.click('#open-agents');
  await app.click('#mcp-endpoint-toggle');
  await app.until('the endpoint to stop', () => app.execute('return document.querySelector("#mcp-endpoint-details").hidden && !document.querySelector("#mcp-endpoint-toggle").checked;'), 30000);
  await app.until('the ended session', () => app.execute('return !!document.querySelector(".doc-tab-agent .doc-tab-dot.ended");'), 10000);
  await assert.rejects(fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{}' }));
  assert.ok(!windowOpen(TITLE));
});

test('the endpoint comes back on the same URL and token when the workspace opens again', async () => {
  const ws = fixtureWorkspace('1 + 1');
  let app = await App.launch(['open', join(ws, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  const first = await serve(app);
  await app.click('#close-agents');
  await quitAll(apps, { name: 'endpoint-reopen' });

  app = await App.launch(['open', join(ws, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  await app.until('the kernel to be ready', async () => (await app.kernelStatus()) === 'idle', 90000);
  await app.until('the endpoint to serve again', () => app.execute('return document.querySelector("#open-agents").classList.contains("serving");'), 30000);
  await app.click('#open-agents');
  await app.until('the endpoint details', () => app.execute('return !document.querySelector("#mcp-endpoint-details").hidden;'), 10000);
  await app.click('#show-mcp-token');
  assert.equal(await app.execute('return document.querySelector("#mcp-endpoint-url").value;'), first.url);
  assert.equal(await app.execute('return document.querySelector("#mcp-endpoint-token").value;'), first.token);
  await app.click('#close-agents');
  const client = await connect(first.url, first.token);
  const r = await run(client, 'print(6 * 7)');
  assert.equal(r.error, false, r.text);
  assert.equal(r.text, '42');
});

test("three agents at 1024 px: each call names its client, the toolbar stays on screen, and each tab closes, ending its session", async () => {
  const ws = fixtureWorkspace('1 + 1');
  const app = await App.launch(['open', join(ws, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  await app.until('the kernel to be ready', async () => (await app.kernelStatus()) === 'idle', 90000);
  const { url, token } = await serve(app);
  await app.click('#close-agents');

  const agents = [];
  for (const [name, version] of [['Claude Code', '2.1.3'], ['agent-two', '0.1.0'], ['agent-three', '3.0.0']]) {
    const client = await connect(url, token, name, version);
    const r = await run(client, `print(${JSON.stringify(`${name} is here`)})`);
    assert.equal(r.error, false, r.text);
    agents.push(client);
  }
  await app.until('three agent tabs', () => app.execute('return document.querySelectorAll(".doc-tab-agent").length === 3;'), 10000);

  // A 1024-pixel-wide window: every toolbar control stays within it.
  spawnSync('xdotool', ['search', '--name', '^ipybox — ', 'windowsize', '1024', '768']);
  await app.until('the window at 1024 px', () => app.execute('return window.innerWidth === 1024;'), 10000);
  const off = await app.execute(`return [...document.querySelectorAll('header.toolbar button, header.toolbar select, #kernel-status')]
    .filter((el) => el.checkVisibility())
    .map((el) => ({ id: el.id || el.className, r: el.getBoundingClientRect() }))
    .filter(({ r }) => r.left < 0 || r.right > window.innerWidth)
    .map(({ id }) => id);`);
  assert.deepEqual(off, [], 'every toolbar control within the 1024 px window');
  assert.equal(await app.execute('return document.documentElement.scrollWidth;'), 1024, 'nothing widens the page');

  // The first agent's tool call: the panel says who asks, by the client's declared name.
  const asking = run(agents[0], ECHO('from Claude Code'));
  await app.until('the panel to name the client', () => app.execute(
    'return [...document.querySelectorAll(".approval-who")].some((p) => p.textContent.includes("Claude Code 2.1.3"));'), 30000);
  screen('agent-call-names-its-client');
  answerDialog(TITLE, 'Return', 30);
  const asked = await asking;
  assert.equal(asked.error, false, asked.text);
  const entry = auditLog(ws).find((e) => e.server === 'fx');
  assert.deepEqual([entry?.client?.name, entry?.client?.version], ['Claude Code', '2.1.3'], JSON.stringify(entry));

  // Each tab closes, after the window asks; its session ends, and the agent can no longer run code.
  for (let i = 0; i < 3; i++) {
    const id = await app.execute('const c = [...document.querySelectorAll(".doc-tab-close")].find((e) => e.checkVisibility()); return c ? c.dataset.session : null;');
    assert.ok(id, `a visible close button for the ${i + 1}. tab`);
    await app.click(`.doc-tab-close[data-session="${id}"]`);
    await app.until('the question', () => app.execute('return !document.querySelector("#agent-end-confirm").hidden;'), 5000);
    await app.click('#agent-end-yes');
    await app.until(`tab ${id} to close`, () => app.execute(`return !document.querySelector("#doc-tab-agent-${id}");`), 20000);
  }
  assert.equal(await app.execute('return document.querySelectorAll(".doc-tab-agent").length;'), 0);
  for (const client of agents) {
    const after = await run(client, '1 + 1').catch((e) => ({ error: true, text: String(e) }));
    assert.equal(after.error, true, `an ended session runs nothing: ${after.text}`);
  }
});
