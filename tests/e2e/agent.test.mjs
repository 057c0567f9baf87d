// An agent's code approved by a person in the real app: `ipybox mcp --approval desktop`,
// driven over stdio as an MCP client would, raises the app's native dialog for each tool
// call; Approve runs it, Reject refuses it, both land in the workspace's audit log with the
// agent named; with the app closed the call is rejected with a message saying so.
// Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { App, APP, answerDialog, auditLog, fixtureWorkspace, quitAll, windowOpen } from './webdriver.mjs';

const apps = [];
const agents = [];
afterEach((t) => {
  for (const agent of agents.splice(0)) agent.close();
  return quitAll(apps, t);
});

/** `ipybox mcp` on `dir` as an MCP client talks to it: JSON-RPC over its stdin/stdout. */
class Agent {
  constructor(dir, approval) {
    this.child = spawn(APP, ['mcp', '--workspace', dir, '--approval', approval], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.stderr = '';
    this.child.stderr.on('data', (d) => { this.stderr += d; });
    this.waiting = new Map();
    this.nextId = 1;
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const message = JSON.parse(line);
      const done = this.waiting.get(message.id);
      if (done) {
        this.waiting.delete(message.id);
        done(message);
      }
    });
  }

  request(method, params, timeoutMs = 120000) {
    const id = this.nextId++;
    this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method} within ${timeoutMs} ms; stderr:\n${this.stderr}`)), timeoutMs);
      this.waiting.set(id, (m) => { clearTimeout(timer); resolve(m); });
    });
  }

  async initialize() {
    await this.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e-agent', version: '1' } });
    this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  }

  /** Run `code` with execute_ipython_cell; its text and whether it was an error. */
  async run(code) {
    const answer = await this.request('tools/call', { name: 'execute_ipython_cell', arguments: { code } });
    assert.ok(answer.result, JSON.stringify(answer));
    const text = answer.result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
    return { text, error: answer.result.isError === true };
  }

  close() {
    this.child.kill('SIGTERM');
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
  const agent = new Agent(ws, 'desktop');
  agents.push(agent);
  await agent.initialize();

  const asked = Date.now();
  const approved = agent.run(ECHO('approved by a person'));
  answerDialog(TITLE, 'Return', 60);
  const seen = Date.now() - asked;
  const r1 = await approved;
  assert.equal(r1.error, false, r1.text);
  assert.match(r1.text, /approved by a person/);

  const rejected = agent.run(ECHO('rejected by a person'));
  answerDialog(TITLE, 'Escape', 60);
  const r2 = await rejected;
  assert.equal(r2.error, true, r2.text);
  assert.match(r2.text, /ApprovalRejected/);

  const entries = auditLog(ws);
  assert.deepEqual(entries.map((e) => [e.arguments.text, e.decision, e.decided_by]),
    [['approved by a person', 'approved', 'person'], ['rejected by a person', 'rejected', 'person']]);
  for (const e of entries) assert.match(e.origin ?? '', /via ipybox mcp/, JSON.stringify(e));
  assert.equal(entries[0].outcome?.kind, 'ok', JSON.stringify(entries[0]));

  // The app closes: the next call is rejected at once, saying why, and recorded by the agent.
  await quitAll(apps, { name: 'agent-app-closed' });
  const r3 = await agent.run(ECHO('nobody to ask'));
  assert.equal(r3.error, true, r3.text);
  assert.match(r3.text, /no ipybox app approves calls/);
  assert.ok(!windowOpen(TITLE));
  const last = auditLog(ws).at(-1);
  assert.deepEqual([last.arguments.text, last.decision, last.decided_by], ['nobody to ask', 'rejected', 'nobody']);
  console.log(`# from the agent's call to its dialog answered: ${seen} ms (includes the kernel's first tool call)`);
});
