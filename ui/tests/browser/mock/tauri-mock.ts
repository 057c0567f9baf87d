/**
 * A fake ipybox backend for browser tests and screenshots: Tauri's IPC mocked with
 * `@tauri-apps/api/mocks`, a small "demo kernel" that answers `execute` through the Channel the
 * way the Rust side does (indexed messages via `__TAURI_INTERNALS__.runCallback`), and a log of
 * every command for assertions. Loaded with `page.addInitScript` before the app.
 *
 * Configure before load with `window.__MOCK_CONFIG__` (see MockConfig).
 */
import { emit } from '@tauri-apps/api/event';
import { mockIPC, mockWindows } from '@tauri-apps/api/mocks';
import { type PolicyMockConfig, policyBackend } from './policy-mock';
import { type ServersMockConfig, serversBackend } from './servers-mock';
import { type RemoteMockConfig, remoteBackend } from './remote-mock';
import { type HelpMockConfig, helpBackend } from './help-mock';
import { type VariablesMockConfig, variablesBackend } from './variables-mock';
import { type PythonMockConfig, pythonBackend } from './python-mock';
import { checkRules, decideByRules, globMatch } from './rules-mock';
import { demoKernel, type ExecContext, type Send, type ToolVerdict } from './kernel-mock';
import type { AppState, ApprovalRequest, DecidedBy, SessionEvent, ToolCallEvent } from '../../../src/ipc';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

interface MockConfig {
  notebook?: string | null;
  notebookPath?: string;
  workspace?: string;
  recent?: string[];
  notebooks?: string[];
  kernel?: 'starting' | 'idle' | 'busy' | 'dead';
  sandbox?: boolean;
  /** Emit these session events shortly after start (e.g. provisioning steps). */
  sessionScript?: { delay: number; event: Json }[];
  /** Answer of message/ask dialogs: 'ok' (first button) or 'cancel'. */
  dialog?: 'ok' | 'cancel';
  /** Milliseconds a cell "runs" before finishing (default 30). */
  runMs?: number;
  /** Tool calls already waiting for approval when the app starts (partial requests are completed). */
  approvals?: Partial<ApprovalRequest>[];
  /** The workspace's approval rules (default: two example rules). */
  rules?: Json;
  /** The audit log, oldest first; or `auditCount` generated entries. */
  audit?: Json[];
  auditCount?: number;
  /** What export_audit_log and export_notebook resolve (default a path; null = the dialog was cancelled). */
  exportPath?: string | null;
  /** export_notebook fails with this IoError message (a notebook that is not one, a PDF not printed). */
  exportError?: string;
  /** The approval timeout saved in the settings, in force (default 60). */
  approvalTimeoutSecs?: number;
  /** How long an approved tool call runs before it ends, in ms (default 10). */
  toolCallRunMs?: number;
  /** What the `ask` tool's server asks (untrusted text). */
  questionMessage?: string;
  /** Questions servers asked before the window listened (a reload): `waiting_questions` lists them, an answer ends them. */
  questions?: Json[];
  /** Milliseconds `waiting_questions` takes to answer (default 0). */
  waitingQuestionsMs?: number;
  /** The Sandbox tab's backend. */
  policy?: PolicyMockConfig;
  servers?: ServersMockConfig;
  /** Where the kernel runs. */
  remote?: RemoteMockConfig;
  /** Contents of other notebooks by path, for open_notebook (default: none, a new notebook). */
  files?: Record<string, string>;
  /** Whether the notebook and `files` are trusted (signed) here (default true); `trust_notebook`
   *  trusts one unless `dialog` is 'cancel' (the person declined in the native confirmation). */
  trusted?: boolean;
  /** The grants "for this session" in force; `false`: the backend has no grants (an older one: approval_grants and end_agent_session are unknown commands). */
  grants?: Json[] | false;
  /** false: the backend has no rule_would_match (the rules editor then shows no preview). */
  ruleWouldMatch?: boolean;
  /** The kernel's completion and help. */
  help?: HelpMockConfig;
  /** The kernel's variables and the data grid's frame. */
  variables?: VariablesMockConfig;
  /** Each notebook's Python. */
  python?: PythonMockConfig;
  /** The server the notebook's kernel runs on, as the app state says (default: none). */
  stateRemote?: string;
}

interface Call {
  cmd: string;
  args: Json;
  at: number;
}

type Handler = (ctx: ExecContext) => Promise<'finished' | 'failed' | void>;

interface MockApi {
  calls: Call[];
  config: MockConfig;
  /** Override the demo kernel for one test. */
  onExecute: Handler | null;
  emitSession(event: Json): Promise<void>;
  emit(name: string, payload?: Json): Promise<void>;
  lastSaved(): string | null;
  pending(): number;
  /** A tool call asks for approval (emits approval_requested); resolves its id. */
  requestApproval(request?: Partial<ApprovalRequest>): Promise<number>;
  /** Someone decides a request outside the panel (the native dialog, a rule): as the backend does. */
  decideApproval(id: number, decision: 'accept' | 'reject', decidedBy?: DecidedBy): boolean;
  /** The backend withdraws a request (emits approval_withdrawn). */
  withdrawApproval(id: number, reason?: string): Promise<void>;
  /** The requests waiting now. */
  approvals(): ApprovalRequest[];
  /** The rules as stored now. */
  rules(): Json;
  audit(): Json[];
  /** The settings as saved and in force. */
  settings(): { approvalTimeoutSecs: number };
  /** The fake MCP server offers one more tool from now on (for Regenerate). */
  growServer(): void;
  /** The person finished signing in in the browser (`ok`), or gave up. */
  finishSignIn(ok: boolean): boolean;
  /** The OAuth server revoked a server's sign-in. */
  revokeSignIn(name: string): void;
  /** Replace the grants in force and emit `approval-grants`. */
  setGrants(list: Json[]): Promise<void>;
  grants(): Json[] | false;
  /** The agent sessions ended with end_agent_session. */
  endedSessions(): string[];
}

declare global {
  interface Window {
    __MOCK_CONFIG__?: MockConfig;
    __mock: MockApi;
    __TAURI_INTERNALS__: {
      runCallback(id: number, data: unknown): void;
    };
  }
}

const config: MockConfig = window.__MOCK_CONFIG__ ?? {};
const calls: Call[] = [];
const workspace = config.workspace ?? '/home/ana/projects/weather';
const policy = policyBackend(workspace, config.policy ?? {});
const servers = serversBackend(config.servers ?? {});
const remote = remoteBackend(config.remote ?? {}, (url) => policy.setRemote(url));
const notebookPath = config.notebookPath ?? `${workspace}/analysis.ipynb`;
const variables = variablesBackend(config.variables ?? {});
const python = pythonBackend(workspace, config.python ?? {});
const help = helpBackend(config.help ?? {}, () => config.notebooks ?? [notebookPath, `${workspace}/exploration/cleaning.ipynb`, `${workspace}/report.ipynb`]);
/** The notebook the window shows, as the backend's session knows it. */
let currentPath = notebookPath;
/** Notebook texts the person trusted (every one is, unless `config.trusted` is false). */
const trustedContents = new Set<string>();

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function toJson(v: unknown): Json {
  if (v === null || typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(toJson);
  if (isRecord(v)) {
    if (typeof v.id === 'number' && typeof v.toJSON === 'function') return `__CHANNEL__:${v.id}`;
    const out: { [k: string]: Json } = {};
    for (const [k, x] of Object.entries(v)) out[k] = toJson(x);
    return out;
  }
  return null;
}

function channelId(v: unknown): number | null {
  return isRecord(v) && typeof v.id === 'number' ? v.id : null;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---- the demo kernel: executions run one after another, as in a real kernel.

let executionCount = 0;
let execSeq = 0;
let queue: Promise<void> = Promise.resolve();
const inputWaiters = new Map<number, (value: string) => void>();
let inputSeq = 0;
const cancelled = new Set<string>();
let interruptRequested = false;
let pendingExecutions = 0;

function execute(args: Record<string, unknown>): string {
  const code = typeof args.code === 'string' ? args.code : '';
  const origin = typeof args.origin === 'string' ? args.origin : null;
  const chId = channelId(args.onEvent);
  const id = `exec-${++execSeq}`;
  let index = 0;
  const send: Send = (event) => {
    if (chId === null) return;
    window.__TAURI_INTERNALS__.runCallback(chId, { index: index++, message: event });
  };
  pendingExecutions++;
  queue = queue.then(async () => {
    try {
      if (cancelled.has(id)) {
        send({ type: 'failed', error: { code: 'Cancelled', message: 'Cancelled before it started.' } });
        return;
      }
      const count = ++executionCount;
      void emit('session', { type: 'kernel_busy', execution_id: id });
      send({ type: 'started', executionCount: count });
      const ctx: ExecContext = {
        id,
        origin,
        code,
        count,
        send,
        outputs: (...outputs) => send({ type: 'outputs', outputs }),
        waitForInput: (prompt, password = false) =>
          new Promise((resolve) => {
            const inputId = ++inputSeq;
            inputWaiters.set(inputId, resolve);
            send({ type: 'input', id: inputId, prompt, password });
          }),
        sleep,
        cancelled: () => cancelled.has(id),
        interrupted: () => {
          const was = interruptRequested;
          interruptRequested = false;
          return was;
        },
        received: () => lastReceived,
        runMs: config.runMs ?? 30,
        callTool: (server, tool, toolArgs) => callTool(id, origin, server, tool, toolArgs),
      };
      const handler = window.__mock.onExecute ?? demoKernel;
      const result = (await handler(ctx)) ?? 'finished';
      if (result === 'failed') {
        const reason = cancelled.has(id) ? { code: 'Cancelled', message: 'Cancelled.' } : { code: 'CodeExecutionError', message: 'The code raised an exception.' };
        send({ type: 'failed', error: reason });
      } else {
        send({ type: 'finished' });
      }
      void emit('session', { type: 'kernel_idle' });
    } finally {
      pendingExecutions--;
    }
  });
  return id;
}


// ---- tool call approvals, rules and the audit log (in memory)

let approvalSeq = 100;
const pendingApprovals: ApprovalRequest[] = [];
let rules: Json = config.rules ?? {
  version: 1,
  rules: [
    { server: '*', tool: 'delete_*', decision: 'reject', reason: 'deletions are never allowed', comment: 'first, so that no later rule can allow a deletion' },
    { server: 'filesystem', tool: 'read_text_file', args: { path: { under: '/home/ana/projects/weather' } }, decision: 'allow' },
  ],
};

function makeAudit(n: number): Json[] {
  const servers: [string, string][] = [
    ['github', 'get_issue'],
    ['github', 'create_issue'],
    ['filesystem', 'read_text_file'],
    ['filesystem', 'write_file'],
    ['fetch', 'fetch'],
    ['weather', 'forecast'],
  ];
  const decisions = ['approved', 'approved', 'approved', 'rejected', 'timed_out'];
  const how = ['person', 'rule', 'batch', 'person', 'timeout'];
  const start = Date.now() - n * 60_000;
  const out: Json[] = [];
  for (let i = 0; i < n; i++) {
    const [server, tool] = servers[i % servers.length] ?? ['x', 'y'];
    const d = i % decisions.length;
    const decision = decisions[d] ?? 'approved';
    out.push({
      time: start + i * 60_000,
      workspace,
      execution_id: `exec-${1000 + i}`,
      origin: i % 7 === 0 ? null : `cell ${(i % 9) + 1} of analysis.ipynb`,
      server,
      tool,
      arguments: { path: `/home/ana/projects/weather/data/station-${i}.csv`, city: ['Berlin', 'Lisbon', 'Zürich', 'Oslo'][i % 4] ?? 'Berlin', n: i },
      decision,
      decided_by: decision === 'timed_out' ? 'timeout' : (how[d] ?? 'person'),
      reason: decision === 'rejected' ? 'rejected by you' : null,
      outcome: decision === 'approved' ? (i % 11 === 0 ? { kind: 'failed', message: 'the server did not answer' } : { kind: 'ok' }) : null,
      duration_ms: decision === 'approved' ? 40 + (i % 17) * 13 : 0,
    });
  }
  return out;
}

const audit: Json[] = config.audit ?? makeAudit(config.auditCount ?? 0);
let grants: Json[] | false = config.grants === undefined ? [] : config.grants;
/** Agent sessions the UI ended (end_agent_session), in order. */
const endedSessions: string[] = [];

/** A session event, as the backend sends it (typed by the generated types the window reads). */
function session(event: SessionEvent): void {
  void emit('session', event);
}

/** The settings as saved and in force (set_app_settings changes them). */
const settings = { approvalTimeoutSecs: config.approvalTimeoutSecs ?? 60 };

/** A request as the backend completes it: its deadline from the timeout in force when it is asked. */
function completeRequest(r: Partial<ApprovalRequest>): ApprovalRequest {
  const askedAt = r.asked_at ?? Date.now();
  return {
    id: r.id ?? ++approvalSeq,
    server: r.server ?? 'github',
    tool: r.tool ?? 'create_issue',
    arguments: r.arguments ?? { owner: 'acme', repo: 'site', title: 'Weather data for March is missing' },
    server_description: r.server_description ?? 'GitHub (npx @modelcontextprotocol/server-github)',
    execution_id: r.execution_id === undefined ? 'exec-1' : r.execution_id,
    origin: r.origin === undefined ? 'cell 3 of analysis.ipynb' : r.origin,
    asked_at: askedAt,
    deadline: r.deadline ?? askedAt + settings.approvalTimeoutSecs * 1000,
    details: r.details ?? {},
    rule: r.rule ?? null,
  };
}

for (const r of config.approvals ?? []) {
  const req = completeRequest(r);
  approvalSeq = Math.max(approvalSeq, req.id);
  pendingApprovals.push(req);
}

/** Code waiting for the decision of its tool call, by request id. */
const waiters = new Map<number, (verdict: ToolVerdict) => void>();

/** Decide a pending request as the backend does: events approval_decided and tool_call, an audit entry. */
function decidePending(id: number, decision: 'accept' | 'reject', decidedBy: DecidedBy, reason: string | null = null): boolean {
  const i = pendingApprovals.findIndex((r) => r.id === id);
  const r = pendingApprovals[i];
  if (i < 0 || !r) return false;
  pendingApprovals.splice(i, 1);
  session({ type: 'approval_decided', id, decision, decided_by: decidedBy });
  const approved = decision === 'accept';
  const why = approved ? null : (reason ?? (decidedBy === 'person' ? 'the person rejected it in the approval dialog' : 'the call was rejected'));
  const call: ToolCallEvent = {
    type: 'tool_call',
    ...r,
    decision: approved ? 'approved' : 'rejected',
    decided_by: decidedBy,
    reason: why,
    outcome: approved ? { kind: 'ok' } : null,
    duration_ms: approved ? 120 : 0,
  };
  audit.push({ time: Date.now(), workspace, execution_id: r.execution_id, origin: r.origin, server: r.server, tool: r.tool, arguments: r.arguments, decision: call.decision, decided_by: decidedBy, reason: why, outcome: call.outcome, duration_ms: call.duration_ms });
  // The `ask` tool asks the person a question in the middle of its call, then ends.
  const during = approved && r.tool === 'ask' ? askDuringCall(r) : Promise.resolve();
  void during.then(() =>
    setTimeout(() => {
      session(call);
      waiters.get(id)?.({ decision: approved ? 'approved' : 'rejected', reason: why });
      waiters.delete(id);
    }, approved ? (config.toolCallRunMs ?? 10) : 10),
  );
  return true;
}

// ---- questions servers ask during a call (elicitation)

/** The form the fake `ask` tool asks for (as ipybox sends it: fields, defaults checked). */
const QUESTION_FIELDS: Json[] = [
  { name: 'name', title: 'Your name', description: null, required: false, secret: false, default: 'Ada Lovelace', kind: 'text', format: null, min_length: null, max_length: null },
  { name: 'email', title: 'Email', description: 'Where the report goes', required: true, secret: false, default: null, kind: 'text', format: 'email', min_length: null, max_length: null },
  { name: 'age', title: 'Age', description: null, required: true, secret: false, default: null, kind: 'number', integer: true, minimum: 0, maximum: 150 },
  { name: 'subscribe', title: 'Subscribe to updates', description: null, required: false, secret: false, default: true, kind: 'boolean' },
  { name: 'color', title: 'Favourite colour', description: null, required: false, secret: false, default: null, kind: 'choice', options: [{ value: 'red', title: 'Red' }, { value: 'green', title: 'Green' }, { value: 'blue', title: 'Blue' }] },
  { name: 'api_token', title: 'API token', description: null, required: false, secret: true, default: null, kind: 'text', format: null, min_length: null, max_length: null },
];

let questionSeq = 0;
const questionWaiters = new Map<number, (answer: { action: string; values: Json }) => void>();
/** The questions that wait for an answer, as `waiting_questions` lists them. */
const waitingQuestions = new Map<number, Json>();
for (const q of config.questions ?? []) {
  if (!isRecord(q) || typeof q.id !== 'number') continue;
  const id = q.id;
  questionSeq = Math.max(questionSeq, id);
  waitingQuestions.set(id, q);
  questionWaiters.set(id, ({ action, values }) => {
    waitingQuestions.delete(id);
    void emit('session', { type: 'elicitation_ended', id, server: q.server, message: q.message, call: q.call, action, values, withheld: [], reason: null });
  });
}
/** What the fake server received last, as its tool returns it. */
let lastReceived = '';

function askDuringCall(r: ApprovalRequest): Promise<void> {
  const id = ++questionSeq;
  const question = {
    id,
    server: r.server,
    message: config.questionMessage ?? 'Who is running this analysis?',
    form: { fields: QUESTION_FIELDS },
    call: { id: r.id, execution_id: r.execution_id, tool: r.tool },
    asked_at: Date.now(),
  };
  const answered = new Promise<{ action: string; values: Json }>((resolve) => questionWaiters.set(id, resolve));
  waitingQuestions.set(id, question);
  void emit('session', { type: 'elicitation_requested', question });
  return answered.then(async ({ action, values }) => {
    waitingQuestions.delete(id);
    lastReceived = JSON.stringify({ action, content: values });
    await emit('session', { type: 'elicitation_ended', id, server: r.server, message: question.message, call: question.call, action, values, withheld: [], reason: null });
  });
}

/** A part of ipybox's check of an answer, with its words. */
function checkAnswer(values: Record<string, unknown>): { ok: Json } | { problem: string } {
  const out: Record<string, Json> = {};
  for (const f of QUESTION_FIELDS) {
    if (!isRecord(f) || typeof f.name !== 'string') continue;
    const label = typeof f.title === 'string' ? f.title : f.name;
    const v = values[f.name];
    if (v === undefined || v === '') {
      if (f.default !== null && f.default !== undefined) out[f.name] = f.default;
      else if (f.required) return { problem: `${label}: it is required` };
      continue;
    }
    if (f.format === 'email' && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(String(v))) return { problem: `${label}: it must be an email address, like name@example.com` };
    if (f.kind === 'number') {
      const n = Number(String(v).trim());
      if (String(v).trim() === '' || !Number.isFinite(n)) return { problem: `${label}: it must be a number` };
      out[f.name] = n;
      continue;
    }
    out[f.name] = toJson(v);
  }
  return { ok: out };
}

function answerQuestion(args: Record<string, unknown>): null {
  const id = typeof args.id === 'number' ? args.id : -1;
  const waiter = questionWaiters.get(id);
  if (!waiter) throw { code: 'InvalidAnswer', message: `no question ${id} waits for an answer: it was answered already, or its tool call ended` };
  const action = typeof args.action === 'string' ? args.action : 'cancel';
  let values: Json = null;
  if (action === 'accept') {
    const checked = checkAnswer(isRecord(args.values) ? args.values : {});
    if ('problem' in checked) throw { code: 'InvalidAnswer', message: checked.problem };
    values = checked.ok;
  }
  questionWaiters.delete(id);
  waiter({ action, values });
  return null;
}

// ---- settings

/** A tool call of execution `executionId`: rules first, then a person, within the approval timeout in force when it is asked (as the backend: a later change is for the next calls). */
function callTool(executionId: string, origin: string | null, server: string, tool: string, args: Json): Promise<ToolVerdict> {
  const req = completeRequest({ server, tool, arguments: args, execution_id: executionId, origin, server_description: server === 'ipybox' ? 'a shell command the code runs in its kernel' : `${server} (mock)` });
  pendingApprovals.push(req);
  const verdict = new Promise<ToolVerdict>((resolve) => waiters.set(req.id, resolve));
  session({ type: 'approval_requested', request: req });
  const byRule = decideByRules(rules, server, tool, args);
  if (byRule) {
    setTimeout(() => decidePending(req.id, byRule.allow ? 'accept' : 'reject', 'rule', byRule.allow ? null : byRule.message), 5);
    return verdict;
  }
  const timeoutSecs = settings.approvalTimeoutSecs;
  const timer = setTimeout(() => {
    const i = pendingApprovals.findIndex((r) => r.id === req.id);
    if (i < 0) return;
    pendingApprovals.splice(i, 1);
    const reason = `nobody decided within ${timeoutSecs} s`;
    session({ type: 'approval_withdrawn', id: req.id, reason: 'nobody decided in time' });
    const call: ToolCallEvent = { type: 'tool_call', ...req, decision: 'timed_out', decided_by: 'timeout', reason, outcome: null, duration_ms: 0 };
    audit.push({ time: Date.now(), workspace, execution_id: executionId, origin, server, tool, arguments: args, decision: 'timed_out', decided_by: 'timeout', reason, outcome: null, duration_ms: 0 });
    session(call);
    waiters.get(req.id)?.({ decision: 'timed_out', reason: `nobody approved the call within ${timeoutSecs} s` });
    waiters.delete(req.id);
  }, timeoutSecs * 1000);
  return verdict.finally(() => clearTimeout(timer));
}

function approvalCommand(cmd: string, args: Record<string, unknown>): { handled: boolean; value?: unknown } {
  switch (cmd) {
    case 'approvals_pending':
      return { handled: true, value: pendingApprovals.map((r) => ({ ...r })) };
    case 'decide_approval': {
      const id = typeof args.id === 'number' ? args.id : -1;
      return { handled: true, value: decidePending(id, args.decision === 'accept' ? 'accept' : 'reject', 'person') };
    }
    case 'decide_all_pending': {
      const decision = args.decision === 'accept' ? 'accept' : 'reject';
      const ids = Array.isArray(args.ids) ? args.ids : [];
      const chosen = pendingApprovals.filter((r) => ids.includes(r.id));
      for (const r of chosen) decidePending(r.id, decision, 'batch');
      return { handled: true, value: chosen.length };
    }
    case 'approval_rules':
      return { handled: true, value: JSON.parse(JSON.stringify(rules)) as unknown };
    case 'set_approval_rules': {
      const problem = checkRules(args.rules);
      if (problem) throw { code: 'InvalidConfig', message: `approval rules ${workspace}/.ipybox/approval-rules.json: ${problem}` };
      // Rules that allow more are confirmed natively first: the mock's dialog answers.
      const before = JSON.stringify(isRecord(rules) && Array.isArray(rules.rules) ? rules.rules : []);
      const next = isRecord(args.rules) && Array.isArray(args.rules.rules) ? args.rules.rules : [];
      const widens = next.some((r) => isRecord(r) && r.decision === 'allow' && !before.includes(JSON.stringify(r)));
      if (widens && config.dialog === 'cancel') return { handled: true, value: false };
      rules = toJson(args.rules);
      return { handled: true, value: true };
    }
    case 'add_approval_rule': {
      const problem = checkRules({ version: 1, rules: [args.rule] });
      if (problem) throw { code: 'InvalidConfig', message: problem };
      // An allow rule is confirmed natively first: the mock's dialog answers.
      if (isRecord(args.rule) && args.rule.decision === 'allow' && config.dialog === 'cancel') return { handled: true, value: false };
      const current = isRecord(rules) && Array.isArray(rules.rules) ? rules.rules : [];
      rules = { version: 1, rules: [toJson(args.rule), ...current] };
      if (typeof args.decideId === 'number' && isRecord(args.rule)) decidePending(args.decideId, args.rule.decision === 'allow' ? 'accept' : 'reject', 'rule');
      return { handled: true, value: true };
    }
    case 'audit_log':
      return { handled: true, value: JSON.parse(JSON.stringify(audit)) as unknown };
    case 'rule_matches': {
      if (config.ruleWouldMatch === false) return { handled: false };
      const rule = args.rule;
      if (!isRecord(rule) || typeof rule.server !== 'string' || typeof rule.tool !== 'string') throw { code: 'InvalidConfig', message: 'a rule needs "server" and "tool"' };
      const { server, tool } = rule;
      const from = Math.max(0, audit.length - 100);
      const matched: Json[] = [];
      audit.forEach((e, i) => {
        if (i >= from && isRecord(e) && typeof e.server === 'string' && typeof e.tool === 'string' && globMatch(server, e.server) && globMatch(tool, e.tool)) matched.push(e);
      });
      return { handled: true, value: JSON.parse(JSON.stringify(matched)) as unknown };
    }
    case 'approval_grants':
      if (grants === false) return { handled: false };
      return { handled: true, value: JSON.parse(JSON.stringify(grants)) as unknown };
    case 'revoke_grant': {
      if (grants === false) return { handled: false };
      const before = grants.length;
      grants = grants.filter((g) => !(isRecord(g) && g.id === args.id));
      void emit('approval-grants', null);
      return { handled: true, value: grants.length !== before };
    }
    case 'end_agent_session': {
      if (grants === false) return { handled: false };
      endedSessions.push(String(args.session));
      return { handled: true, value: true };
    }
    case 'app_settings':
      return { handled: true, value: { ...settings } };
    case 'code_actions':
      return { handled: true, value: [] };
    case 'mcp_endpoint':
      return { handled: true, value: { enabled: false, url: null, token: null, error: null } };
    case 'set_app_settings': {
      const secs = args.approvalTimeoutSecs;
      if (typeof secs !== 'number' || !Number.isInteger(secs) || secs < 1 || secs > 86400) throw { code: 'InvalidConfig', message: `the approval timeout must be from 1 to 86400 seconds, got ${String(secs)}` };
      settings.approvalTimeoutSecs = secs;
      return { handled: true, value: { ...settings } };
    }
    case 'export_audit_log':
      return { handled: true, value: config.exportPath === undefined ? '/home/ana/Documents/ipybox-audit-weather.jsonl' : config.exportPath };
    case 'export_notebook': {
      // The native save dialog's answer: `exportPath` (null = cancelled), else the notebook's name with the format's extension.
      if (config.exportError) throw { code: 'IoError', message: config.exportError };
      const path = String(args.path);
      const value = config.exportPath === undefined ? path.replace(/\.ipynb$/, `.${String(args.format)}`) : config.exportPath;
      return { handled: true, value };
    }
    default:
      return { handled: false };
  }
}

mockWindows('main');
mockIPC(
  async (cmd, payload) => {
    const args = isRecord(payload) ? payload : {};
    calls.push({ cmd, args: toJson(args), at: performance.now() });
    switch (cmd) {
      case 'app_state':
        runSessionScript();
        return {
          workspace,
          workspaceName: workspace.split('/').pop() ?? workspace,
          notebookPath,
          notebook: config.notebook === undefined ? null : config.notebook,
          recent: config.recent ?? [workspace, '/home/ana/projects/sandbox-trials', '/home/ana/notes'],
          sandbox: config.sandbox ?? true,
          remote: config.stateRemote ?? null,
          kernel: config.kernel ?? 'idle',
          provisioning: null,
          startupError: null,
          python: python.state(),
        } satisfies AppState;
      case 'execute':
        return execute(args);
      case 'cancel_execution':
        if (typeof args.id === 'string') cancelled.add(args.id);
        return null;
      case 'answer_elicitation':
        return answerQuestion(args);
      case 'waiting_questions':
        await sleep(config.waitingQuestionsMs ?? 0);
        return [...waitingQuestions.values()];
      case 'reply_input': {
        const id = typeof args.id === 'number' ? args.id : -1;
        inputWaiters.get(id)?.(typeof args.value === 'string' ? args.value : '');
        inputWaiters.delete(id);
        return null;
      }
      case 'interrupt':
        interruptRequested = true;
        return null;
      case 'restart_kernel':
        executionCount = 0;
        return null;
      case 'save_notebook':
        await sleep(5);
        return null;
      case 'read_notebook':
        return config.notebook ?? '';
      case 'notebook_trusted':
        return config.trusted !== false || (typeof args.content === 'string' && trustedContents.has(args.content));
      case 'trust_notebook':
        await sleep(5);
        if (config.dialog === 'cancel' || typeof args.content !== 'string') return false;
        trustedContents.add(args.content);
        return true;
      case 'python_options':
      case 'check_python':
      case 'install_ipykernel':
      case 'create_project_env':
      case 'choose_python':
        return (await python.command(cmd, args)).value;
      case 'set_python': {
        await python.command(cmd, args);
        return {
          workspace,
          workspaceName: workspace.split('/').pop() ?? workspace,
          notebookPath: currentPath,
          notebook: config.notebook === undefined ? null : config.notebook,
          recent: [workspace],
          sandbox: config.sandbox ?? true,
          remote: config.stateRemote ?? null,
          kernel: 'starting',
          provisioning: null,
          startupError: null,
          python: python.state(),
        } satisfies AppState;
      }
      case 'kernel_variables':
      case 'frame_page':
        return (await variables.command(cmd, args)).value;
      case 'complete':
      case 'inspect':
      case 'list_notebooks':
      case 'duplicate_notebook':
      case 'trash_notebook':
        return (await help.command(cmd, args)).value;
      case 'rename_notebook':
      case 'save_notebook_as': {
        const to = cmd === 'rename_notebook' ? String(args.to) : String(args.path);
        await help.command(cmd, args);
        if (cmd === 'save_notebook_as' || args.from === currentPath) currentPath = to;
        return {
          workspace,
          workspaceName: workspace.split('/').pop() ?? workspace,
          notebookPath: currentPath,
          notebook: null,
          recent: [workspace],
          sandbox: config.sandbox ?? true,
          kernel: 'idle',
          python: python.state(),
        };
      }
      case 'install_package':
        await sleep(50);
        if (typeof args.spec === 'string' && args.spec.includes('does-not-exist')) {
          throw { code: 'PythonEnvError', message: 'ERROR: No matching distribution found for does-not-exist' };
        }
        return `Collecting ${String(args.spec)}\nInstalling collected packages: ${String(args.spec)}\nSuccessfully installed ${String(args.spec)}\n`;
      case 'set_title':
        return null;
      case 'choose_workspace':
        return null;
      case 'open_workspace':
      case 'open_notebook': {
        const path = typeof args.path === 'string' ? args.path : workspace;
        const ws = cmd === 'open_workspace' ? path : workspace;
        if (cmd === 'open_notebook') currentPath = path;
        return {
          workspace: ws,
          workspaceName: ws.split('/').pop() ?? ws,
          notebookPath: cmd === 'open_notebook' ? path : `${ws}/Untitled.ipynb`,
          notebook: cmd === 'open_notebook' ? (config.files?.[path] ?? null) : null,
          recent: [ws, workspace],
          sandbox: config.sandbox ?? true,
          kernel: 'idle',
          python: python.state(),
        };
      }
      case 'plugin:dialog|message': {
        // Answer with the first button (OK / Yes / its custom label), or Cancel.
        const buttons = args.buttons;
        const labels = isRecord(buttons) ? (buttons.OkCancelCustom ?? buttons.YesNoCancelCustom) : null;
        if (config.dialog === 'cancel') return Array.isArray(labels) ? labels[labels.length - 1] : 'Cancel';
        if (Array.isArray(labels) && typeof labels[0] === 'string') return labels[0];
        return buttons === 'YesNo' || buttons === 'YesNoCancel' ? 'Yes' : 'Ok';
      }
      default: {
        const approval = approvalCommand(cmd, args);
        if (approval.handled) return approval.value;
        const sandbox = policy.command(cmd, args);
        if (sandbox.handled) return sandbox.value;
        const where = remote.command(cmd, args);
        if (where.handled) return where.value;
        const server = servers.command(cmd, args);
        if (server.handled) return server.value;
        if (cmd.startsWith('plugin:window|') || cmd.startsWith('plugin:webview|')) return null;
        throw { code: 'IoError', message: `mock: unknown command ${cmd}` };
      }
    }
  },
  { shouldMockEvents: true },
);

window.__mock = {
  calls,
  config,
  onExecute: null,
  emitSession: (event) => emit('session', event),
  emit: (name, payload) => emit(name, payload ?? null),
  lastSaved: () => {
    for (let i = calls.length - 1; i >= 0; i--) {
      const c = calls[i];
      if (c && c.cmd === 'save_notebook' && isRecord(c.args) && typeof c.args.content === 'string') return c.args.content;
    }
    return null;
  },
  pending: () => pendingExecutions,
  requestApproval: async (partial = {}) => {
    const req = completeRequest(partial);
    pendingApprovals.push(req);
    await emit('session', { type: 'approval_requested', request: req } satisfies SessionEvent);
    return req.id;
  },
  decideApproval: (id, decision, decidedBy = 'person') => decidePending(id, decision, decidedBy),
  withdrawApproval: async (id, reason = 'nobody decided in time') => {
    const i = pendingApprovals.findIndex((r) => r.id === id);
    if (i >= 0) pendingApprovals.splice(i, 1);
    await emit('session', { type: 'approval_withdrawn', id, reason });
  },
  approvals: () => pendingApprovals.map((r) => ({ ...r })),
  rules: () => rules,
  audit: () => audit,
  settings: () => ({ ...settings }),
  growServer: () => servers.grow(),
  finishSignIn: (ok) => servers.finishSignIn(ok),
  revokeSignIn: (name) => servers.revoke(name),
  setGrants: async (list) => {
    grants = list;
    await emit('approval-grants', null);
  },
  grants: () => grants,
  endedSessions: () => [...endedSessions],
};

let scripted = false;
/** The scripted session events start once the app asked for its state (it listens by then). */
function runSessionScript(): void {
  if (scripted) return;
  scripted = true;
  for (const step of config.sessionScript ?? []) {
    setTimeout(() => void emit('session', step.event), step.delay);
  }
}
