// An agent's code approved by a person in the real app: `ipybox mcp --approval desktop`,
// driven over stdio by the official MCP TypeScript SDK's client (as an agent would run it),
// raises the app's native dialog for each tool call; Approve runs it, Reject refuses it, both
// land in the workspace's audit log with the agent named; with the app closed the call is
// rejected with a message saying so. Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { App, APP, ARMING_MS, ROOT, SHOTS, answerDialog, auditLog, fixtureWorkspace, quitAll, windowOpen } from './webdriver.mjs';

// The SDK tests/servers/install.sh installs (with the reference servers).
const sdk = join(ROOT, 'tests', 'servers', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'client');
const { Client } = await import(pathToFileURL(join(sdk, 'index.js')).href);
const { StdioClientTransport } = await import(pathToFileURL(join(sdk, 'stdio.js')).href);

const apps = [];
const agents = [];
afterEach(async (t) => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
  return quitAll(apps, t);
});

/** `ipybox mcp` on `dir`, connected to by the SDK's client over its stdin/stdout. */
class Agent {
  static async connect(dir, approval) {
    // The whole environment: ipybox mcp must find the app's data and runtime directories.
    const env = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined));
    const transport = new StdioClientTransport({ command: APP, args: ['mcp', '--workspace', dir, '--approval', approval], env, stderr: 'pipe' });
    const agent = new Agent(transport);
    await agent.client.connect(transport);
    return agent;
  }

  constructor(transport) {
    this.stderr = '';
    transport.stderr?.on('data', (d) => { this.stderr += d; });
    // The dialog is answered by a blocking xdotool: the call must be on its way first.
    this.sent = [];
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      await send(message, options);
      if (message.method === 'tools/call') this.sent.shift()?.();
    };
    this.client = new Client({ name: 'e2e-agent', version: '1' });
  }

  /**
   * Start `code` with execute_ipython_cell; resolves once the request is written, to
   * `{ result }`: its text and whether it was an error.
   */
  start(code) {
    return this.call('execute_ipython_cell', { code });
  }

  /** Start register_mcp_server for `name` with `params`, as `start` does. */
  register(name, params) {
    return this.call('register_mcp_server', { server_name: name, server_params: params });
  }

  /** Start the tool call `name` with `args`; resolves once it is written, to `{ result }`. */
  async call(name, args) {
    const written = new Promise((resolve) => this.sent.push(resolve));
    const result = this.client
      .callTool({ name, arguments: args }, undefined, { timeout: 120000 })
      .then((answer) => ({ text: answer.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n'), error: answer.isError === true }))
      .catch((e) => { throw new Error(`${e.message}; stderr:\n${this.stderr}`); });
    await written;
    return { result };
  }

  close() {
    return this.client.close();
  }
}

const ECHO = (text) => `from mcptools.fx.echo import Params, run\nprint(run(Params(text=${JSON.stringify(text)})))`;
const TITLE = 'Approve tool call — fx.echo';

test("an agent's tool calls raise the app's dialog: approved, rejected, and rejected with the app closed", async () => {
  const ws = fixtureWorkspace('1 + 1');
  const app = await App.launch(['open', join(ws, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  // The app listens for agents once its kernel runs.
  await app.until('the kernel to be ready', async () => (await app.kernelStatus()) === 'idle', 60000);
  const agent = await Agent.connect(ws, 'desktop');
  agents.push(agent);
  assert.equal(agent.client.getServerVersion()?.name, 'ipybox', 'the SDK client is connected to ipybox mcp');

  const asked = Date.now();
  const approved = await agent.start(ECHO('approved by a person'));
  answerDialog(TITLE, 'Return', 60);
  const seen = Date.now() - asked;
  const r1 = await approved.result;
  assert.equal(r1.error, false, r1.text);
  assert.match(r1.text, /approved by a person/);

  const rejected = await agent.start(ECHO('rejected by a person'));
  answerDialog(TITLE, 'Escape', 60);
  const r2 = await rejected.result;
  assert.equal(r2.error, true, r2.text);
  assert.match(r2.text, /ApprovalRejected/);

  const entries = auditLog(ws);
  assert.deepEqual(entries.map((e) => [e.arguments.text, e.decision, e.decided_by]),
    [['approved by a person', 'approved', 'person'], ['rejected by a person', 'rejected', 'person']]);
  for (const e of entries) assert.match(e.origin ?? '', /via ipybox mcp/, JSON.stringify(e));
  assert.equal(entries[0].outcome?.kind, 'ok', JSON.stringify(entries[0]));

  // The app closes: the next call is rejected at once, saying why, and recorded by the agent.
  await quitAll(apps, { name: 'agent-app-closed' });
  const r3 = await (await agent.start(ECHO('nobody to ask'))).result;
  assert.equal(r3.error, true, r3.text);
  assert.match(r3.text, /no ipybox app approves calls/);
  assert.ok(!windowOpen(TITLE));
  const last = auditLog(ws).at(-1);
  assert.deepEqual([last.arguments.text, last.decision, last.decided_by], ['nobody to ask', 'rejected', 'nobody']);
  console.log(`# from the agent's call to its dialog answered: ${seen} ms (includes the kernel's first tool call)`);
});

const PROGRAM = 'Let an agent start a program?';

/** The window id of the dialog titled `title`, once it is on screen. */
function dialogId(title, timeoutSec = 60) {
  const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const found = spawnSync('timeout', [String(timeoutSec), 'xdotool', 'search', '--sync', '--onlyvisible', '--name', `^${escaped}$`], { encoding: 'utf8' });
  const id = found.stdout.trim().split('\n')[0];
  if (!id) throw new Error(`no dialog titled ${title} appeared`);
  return id;
}

// Finding 1 of the red team: an agent's register_mcp_server started any program on the host
// with no question. Now the app asks natively, with the whole command and what is risky
// about it; no key a person types by chance says yes, and the agent's other calls go on.
test("an agent's new server starts a program only after the person's deliberate yes", async () => {
  const ws = fixtureWorkspace('1 + 1');
  const app = await App.launch(['open', join(ws, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  await app.until('the kernel to be ready', async () => (await app.kernelStatus()) === 'idle', 60000);
  const agent = await Agent.connect(ws, 'desktop');
  agents.push(agent);

  const proof = join(ws, '..', `${ws.split('/').pop()}-ran-on-the-host`);
  const refused = await agent.register('helper', { command: 'sh', args: ['-c', 'touch "$0"', proof] });
  const id = dialogId(PROGRAM);
  // Keys a person typing elsewhere might press: at once (Alt+A too, before the buttons take
  // input) and once they do. None decides.
  spawnSync('xdotool', ['windowactivate', '--sync', id, 'key', 'Return', 'space', 'alt+a', 'KP_Enter'], { timeout: 3000 });
  await new Promise((r) => setTimeout(r, ARMING_MS));
  spawnSync('xdotool', ['windowactivate', '--sync', id, 'key', 'Return', 'space', 'KP_Enter'], { timeout: 3000 });
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(windowOpen(PROGRAM), 'no key but the yes button\'s mnemonic says yes');
  assert.ok(!existsSync(proof), 'nothing ran while the person reads');
  spawnSync('import', ['-window', 'root', join(SHOTS, 'agent-program-question.png')]);

  // The agent's other calls are not held up by the question.
  const other = await (await agent.start('print(6 * 7)')).result;
  assert.equal(other.error, false, other.text);
  assert.match(other.text, /42/);

  answerDialog(PROGRAM, 'Escape', 10);
  const r = await refused.result;
  assert.equal(r.error, true, r.text);
  assert.match(r.text, /did not let "helper" start a program/);
  assert.ok(!existsSync(proof), 'a refused program never runs');

  // Yes, with the button's mnemonic once it takes input: the server is added and works.
  const fixture = join(ROOT, 'target', 'debug', 'ipybox-fixture-mcp');
  const asked = Date.now();
  const accepted = await agent.register('fx2', { command: fixture, args: ['stdio'] });
  answerDialog(PROGRAM, 'alt+a', 30);
  const r2 = await accepted.result;
  assert.equal(r2.error, false, r2.text);
  console.log(`# an agent's registration with the person's yes: ${Date.now() - asked} ms (the dialog armed for ${ARMING_MS} ms of it)`);
});
