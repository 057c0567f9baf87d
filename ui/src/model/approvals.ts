/**
 * Tool call approvals without DOM: the pending requests (oldest first), the recent decisions of
 * this session, and everything the panel says in words (rules, "how", outcomes, arguments).
 * The words are for a person to read: whatever came from kernel code, a notebook or an MCP
 * server is in them escaped (`escapeUntrusted`), so that nothing in it hides or reorders text.
 */
import type { ApprovalDecision, ApprovalRequest, ArgMatcher, CallDecision, CallOutcome, DecidedBy, Rule, ToolCallEvent } from '../ipc';
import { cloneJson, isJsonObject, sortKeysDeep, type JsonObject, type JsonValue } from '../util/json';
import { clipEscaped, escapeUntrusted, escapeUntrustedLines } from './untrusted';

// ---------------------------------------------------------------------------------------------
// Words

/** `server.tool`, escaped. */
export function callName(server: string, tool: string): string {
  return `${escapeUntrusted(server)}.${escapeUntrusted(tool)}`;
}

/** "from cell 3 of analysis.ipynb", or "from code in this notebook" when the origin is unknown. */
export function originWords(origin: string | null | undefined): string {
  const o = origin?.trim() ?? '';
  if (!o) return 'from code in this notebook';
  return escapeUntrusted(/^from\s/i.test(o) ? o : `from ${o}`);
}

/** "just now", "12 s ago", "3 min ago", "2 h ago", "4 days ago". */
export function timeAgo(then: number, now: number): string {
  const s = Math.max(0, Math.floor((now - then) / 1000));
  if (s < 2) return 'just now';
  if (s < 60) return `${s} s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ago`;
  const hours = Math.floor(m / 60);
  if (hours < 24) return `${hours} h ago`;
  const d = Math.floor(hours / 24);
  return d === 1 ? '1 day ago' : `${d} days ago`;
}

/** "85 ms", "1.2 s", "42 s", "2 min 5 s". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 9950) return `${(ms / 1000).toFixed(1)} s`;
  const total = Math.round(ms / 1000);
  if (total < 60) return `${total} s`;
  const m = Math.floor(total / 60);
  const s = total % 60;
  return s ? `${m} min ${s} s` : `${m} min`;
}

export function decisionWords(decision: CallDecision): string {
  switch (decision) {
    case 'approved':
      return 'Approved';
    case 'rejected':
      return 'Rejected';
    case 'timed_out':
      return 'Timed out';
    default:
      return String(decision);
  }
}

/** How a call was decided, in words ("by you", "by a rule", "all pending approved at once", …). */
export function howWords(decidedBy: DecidedBy, decision?: CallDecision | ApprovalDecision): string {
  switch (decidedBy) {
    case 'person':
      return 'by you';
    case 'batch':
      if (decision === 'approved' || decision === 'accept') return 'all pending approved at once';
      if (decision === 'rejected' || decision === 'reject') return 'all pending rejected at once';
      return 'all pending decided at once';
    case 'rule':
      return 'by a rule';
    case 'grant':
      return 'allowed for this session';
    case 'timeout':
      return 'timed out';
    case 'policy':
      return 'by policy';
    case 'nobody':
      return 'nobody could be asked';
    default:
      return String(decidedBy);
  }
}

/** The choices of the audit log's "how" filter, in order. */
export const DECIDED_BY: readonly DecidedBy[] = ['person', 'batch', 'rule', 'grant', 'timeout', 'policy', 'nobody'];

/** How a call was decided, naming the rule that decided it when the backend says which: "by the rule “Always allow fx.*”". */
export function howWithRule(decidedBy: DecidedBy, decision: CallDecision | ApprovalDecision | undefined, rule: string | null | undefined): string {
  const which = ruleWords(rule);
  if (!which) return howWords(decidedBy, decision);
  if (decidedBy === 'rule') return `by the rule “${which}”`;
  return `${howWords(decidedBy, decision)} (rule “${which}”)`;
}

/** Which rule decided a call, as the backend decided, when the backend says; escaped and bounded. */
export function ruleWords(rule: string | null | undefined): string | null {
  const text = (rule ?? '').replace(/\s+/g, ' ').trim();
  if (!text) return null;
  return clipEscaped(escapeUntrusted(ruleSummary(text) ?? text), 160);
}

/**
 * A rule as the rules file writes it (JSON), in words: which calls it covers — `fx.touch`,
 * "every tool of fx", "read-only tools of fx (as the server says)" — with its conditions
 * (`when path is "/tmp/x"`) and whose calls it decides when that is agents' or anyone's.
 * Null when the text is not such a rule (then it is shown as it is).
 */
export function ruleSummary(text: string): string | null {
  let rule: unknown;
  try {
    rule = JSON.parse(text);
  } catch {
    return null;
  }
  if (!rule || typeof rule !== 'object' || Array.isArray(rule)) return null;
  const r = rule as { server?: unknown; tool?: unknown; args?: unknown; read_only?: unknown; scope?: unknown };
  if (typeof r.server !== 'string') return null;
  const tool = typeof r.tool === 'string' ? r.tool : '*';
  let what = tool === '*' ? `every tool of ${r.server}` : `${r.server}.${tool}`;
  if (r.read_only === true) what = `read-only tools of ${r.server} (as the server says)${tool === '*' ? '' : ` named ${tool}`}`;
  const conditions: string[] = [];
  if (r.args && typeof r.args === 'object' && !Array.isArray(r.args)) {
    for (const [name, matcher] of Object.entries(r.args as Record<string, unknown>)) {
      const m = (matcher && typeof matcher === 'object' ? matcher : {}) as Record<string, unknown>;
      if ('equals' in m) conditions.push(`${name} is ${JSON.stringify(m.equals)}`);
      else if (m.absent === true) conditions.push(`without ${name}`);
      else conditions.push(`${name} matches a condition`);
    }
  }
  const whose = r.scope === 'agents' ? ', for agents' : r.scope === 'any' ? ', for notebooks and agents' : '';
  return `${what}${conditions.length ? ` when ${conditions.join(' and ')}` : ''}${whose}`;
}

/** "OK", "Tool error", "Failed: …", or "Did not run" (no outcome). */
export function outcomeWords(outcome: CallOutcome | null): string {
  if (!outcome) return 'Did not run';
  switch (outcome.kind) {
    case 'ok':
      return 'OK';
    case 'tool_error':
      return 'Tool error';
    case 'failed':
      return outcome.message ? `Failed: ${escapeUntrusted(outcome.message)}` : 'Failed';
    default:
      return 'Unknown';
  }
}

// ---------------------------------------------------------------------------------------------
// Arguments

/** Strings longer than this are shortened in the approval panel. */
export const SHORTEN_AT = 200;
/** Lists longer than this show their first items only. */
export const MAX_LIST_ITEMS = 50;

/** The first `limit` characters (not splitting a surrogate pair) and how many more there are. */
export function shortenText(text: string, limit = SHORTEN_AT): string {
  if (text.length <= limit) return text;
  let cut = limit;
  const c = text.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut--;
  return `${text.slice(0, cut)}… (${(text.length - cut).toLocaleString('en-US')} more characters)`;
}

/** A copy of `value` with long strings and lists shortened; `shortened` tells whether anything was. */
export function shortenJson(value: JsonValue, limit = SHORTEN_AT): { value: JsonValue; shortened: boolean } {
  let shortened = false;
  const walk = (v: JsonValue): JsonValue => {
    if (typeof v === 'string') {
      if (v.length <= limit) return v;
      shortened = true;
      return shortenText(v, limit);
    }
    if (Array.isArray(v)) {
      const out = v.slice(0, MAX_LIST_ITEMS).map(walk);
      if (v.length > MAX_LIST_ITEMS) {
        shortened = true;
        out.push(`… ${(v.length - MAX_LIST_ITEMS).toLocaleString('en-US')} more items`);
      }
      return out;
    }
    if (isJsonObject(v)) {
      const out: JsonObject = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x);
      return out;
    }
    return v;
  };
  return { value: walk(value), shortened };
}

/**
 * Arguments as JSON with a 2-space indent, shortened unless `full`, escaped: still JSON of the
 * same (shortened) value, with nothing in it hidden.
 */
export function prettyArguments(value: JsonValue, full = false): { text: string; shortened: boolean } {
  if (full) return { text: escapeUntrustedLines(JSON.stringify(value, null, 2) ?? 'null'), shortened: false };
  const s = shortenJson(value);
  return { text: escapeUntrustedLines(JSON.stringify(s.value, null, 2) ?? 'null'), shortened: s.shortened };
}

/** True for `{}`, `[]`, `null`: nothing worth a block of JSON. */
export function hasNoArguments(value: JsonValue): boolean {
  if (value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isJsonObject(value)) return Object.keys(value).length === 0;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Rules in words

function quote(value: JsonValue): string {
  const text = escapeUntrusted(typeof value === 'string' ? `“${value}”` : (JSON.stringify(value) ?? 'null'));
  return clipEscaped(text, 80);
}

/** An argument key: a name, or a JSON Pointer ("/options/path" → "options › path"); escaped. */
export function argumentName(key: string): string {
  if (!key.startsWith('/')) return escapeUntrusted(key);
  return key
    .slice(1)
    .split('/')
    .map((part) => escapeUntrusted(part.replace(/~1/g, '/').replace(/~0/g, '~')))
    .join(' › ');
}

/** "path is under /home/me/project and matches *.md". */
export function describeArgMatcher(key: string, matcher: ArgMatcher): string {
  const clauses: string[] = [];
  if (matcher.equals !== undefined) clauses.push(`is ${quote(matcher.equals)}`);
  if (matcher.one_of !== undefined) clauses.push(`is one of ${matcher.one_of.map(quote).join(', ')}`);
  if (matcher.under !== undefined) clauses.push(`is under ${escapeUntrusted(matcher.under)}`);
  if (matcher.glob !== undefined) clauses.push(`matches ${escapeUntrusted(matcher.glob)}`);
  if (matcher.absent === true) return `${argumentName(key)} is not given`;
  if (clauses.length === 0) clauses.push('is given');
  return `${argumentName(key)} ${clauses.join(' and ')}`;
}

/** What a rule's `server` and `tool` globs cover. */
export function describeTarget(server: string, tool: string): string {
  if (server === '*' && tool === '*') return 'every tool of every server';
  if (tool === '*') return `every tool of ${escapeUntrusted(server)}`;
  return callName(server, tool);
}

/** The server and tool under which shell commands of cells are approved. */
export const SHELL_SERVER = 'ipybox';
export const SHELL_TOOL = 'shell';

/** The command of a rule that names one exact shell command, else null. */
function exactShellCommand(rule: Rule): string | null {
  if (rule.server !== SHELL_SERVER || rule.tool !== SHELL_TOOL) return null;
  const keys = Object.keys(rule.args ?? {});
  const m = rule.args?.command;
  if (keys.length !== 1 || !m || Object.keys(m).length !== 1 || typeof m.equals !== 'string') return null;
  return m.equals;
}

/** "Always allow github.get_*", "Always reject *.delete_* — deletions are never allowed", with "when …" conditions. */
export function describeRule(rule: Rule): string {
  const verb = rule.decision === 'reject' ? 'Always reject' : 'Always allow';
  const command = exactShellCommand(rule);
  if (command !== null) {
    let text = `${verb} the shell command ${quote(command)}`;
    if (rule.decision === 'reject' && rule.reason?.trim()) text += ` — ${escapeUntrusted(rule.reason.trim())}`;
    return text;
  }
  let text = `${verb} ${describeTarget(rule.server, rule.tool)}`;
  const conditions = Object.entries(rule.args ?? {}).map(([k, m]) => describeArgMatcher(k, m));
  if (conditions.length > 0) text += ` when ${conditions.join(' and ')}`;
  if (rule.exact_args === true) text += conditions.length > 0 ? ', with no other arguments' : ' when it has no arguments';
  if (rule.decision === 'reject' && rule.reason?.trim()) text += ` — ${escapeUntrusted(rule.reason.trim())}`;
  return text;
}

/** The rule "Always allow this tool" adds. */
export function allowToolRule(server: string, tool: string): Rule {
  return { server, tool, decision: 'allow', comment: 'added from the approval panel' };
}

/** `name` as a rule's argument key: the name itself, or a JSON Pointer when a name could be read as one (it starts with `/`, or is empty). */
export function argumentKey(name: string): string {
  if (name !== '' && !name.startsWith('/')) return name;
  return `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/**
 * The rule "Always allow calls with these arguments" adds: `server.tool`, each top-level argument
 * equal to its value in this request (for a shell command, the command), and no other argument
 * (`exact_args`): a call that adds one asks again. Null when the request has no arguments: that
 * rule would allow the whole tool.
 */
export function allowArgumentsRule(server: string, tool: string, args: JsonValue): Rule | null {
  if (!isJsonObject(args) || Object.keys(args).length === 0) return null;
  const conditions: { [key: string]: ArgMatcher } = {};
  for (const [name, value] of Object.entries(args)) conditions[argumentKey(name)] = { equals: cloneJson(value) };
  return { server, tool, args: conditions, exact_args: true, decision: 'allow', comment: 'added from the approval panel' };
}

/** Do two rules decide the same calls the same way (comments and reasons aside)? */
export function sameRule(a: Rule, b: Rule): boolean {
  const key = (r: Rule): string => {
    const args: JsonObject = {};
    for (const [name, m] of Object.entries(r.args ?? {})) {
      const matcher: JsonObject = {};
      if (m.equals !== undefined) matcher.equals = m.equals;
      if (m.one_of !== undefined) matcher.one_of = m.one_of;
      if (m.glob !== undefined) matcher.glob = m.glob;
      if (m.under !== undefined) matcher.under = m.under;
      if (m.absent !== undefined) matcher.absent = m.absent;
      args[name] = matcher;
    }
    return JSON.stringify(sortKeysDeep({ server: r.server, tool: r.tool, args, exact: r.exact_args === true, decision: r.decision }));
  };
  return key(a) === key(b);
}

/** The rule "Always reject this tool" adds. */
export function rejectToolRule(server: string, tool: string): Rule {
  return { server, tool, decision: 'reject', reason: 'rejected by a rule made in the approval panel' };
}

// ---------------------------------------------------------------------------------------------
// The pending requests and the recent decisions

export type PendingState = 'waiting' | 'deciding' | 'withdrawn';

export interface PendingItem {
  readonly request: ApprovalRequest;
  state: PendingState;
  /** Why it was withdrawn, or what went wrong deciding it. */
  note: string | null;
  /** Order of arrival (for syncing with the backend's list). */
  readonly seq: number;
}

export interface PendingGroup {
  server: string;
  tool: string;
  count: number;
}

export class ApprovalsModel {
  /** Recent decisions kept (newest first). */
  static readonly RECENT = 20;

  private readonly items = new Map<number, PendingItem>();
  /** Requests that were decided or withdrawn: a late copy from the backend does not bring them back. */
  private readonly gone = new Set<number>();
  private seq = 0;
  private calls: ToolCallEvent[] = [];
  private readonly listeners = new Set<() => void>();

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    for (const fn of [...this.listeners]) fn();
  }

  /** Every request shown, oldest first (withdrawn ones until they leave). */
  get pending(): PendingItem[] {
    return [...this.items.values()].sort((a, b) => a.request.asked_at - b.request.asked_at || a.request.id - b.request.id);
  }

  /** The requests that still wait for a decision, oldest first. */
  get waiting(): PendingItem[] {
    return this.pending.filter((i) => i.state !== 'withdrawn');
  }

  get waitingCount(): number {
    let n = 0;
    for (const i of this.items.values()) if (i.state !== 'withdrawn') n++;
    return n;
  }

  item(id: number): PendingItem | undefined {
    return this.items.get(id);
  }

  /** A new request; false when it is already shown or was already decided. */
  add(request: ApprovalRequest): boolean {
    if (this.items.has(request.id) || this.gone.has(request.id)) return false;
    this.items.set(request.id, { request, state: 'waiting', note: null, seq: ++this.seq });
    this.changed();
    return true;
  }

  /** Decided (or withdrawn and shown long enough): it leaves the list. */
  remove(id: number): void {
    this.gone.add(id);
    if (this.items.delete(id)) this.changed();
  }

  /** No longer waits: shown with the reason until `remove`. False when it is not shown. */
  withdraw(id: number, reason: string): boolean {
    this.gone.add(id);
    const item = this.items.get(id);
    if (!item) return false;
    item.state = 'withdrawn';
    item.note = reason;
    this.changed();
    return true;
  }

  /** A decision is on its way to the backend (buttons off), or came back (on again). */
  setDeciding(ids: Iterable<number>, deciding: boolean): void {
    let any = false;
    for (const id of ids) {
      const item = this.items.get(id);
      if (!item || item.state === 'withdrawn') continue;
      item.state = deciding ? 'deciding' : 'waiting';
      if (deciding) item.note = null;
      any = true;
    }
    if (any) this.changed();
  }

  /** A message under a request (an error deciding it). */
  setNote(id: number, note: string | null): void {
    const item = this.items.get(id);
    if (!item) return;
    item.note = note;
    this.changed();
  }

  /** Call before asking the backend for its list; pass the token to `sync`. */
  beginSync(): number {
    return this.seq;
  }

  /**
   * The backend's pending list: requests missing here are added; requests shown that arrived
   * before the list was asked for (`token`) and are not in it were decided meanwhile.
   */
  sync(list: readonly ApprovalRequest[], token: number): void {
    const ids = new Set(list.map((r) => r.id));
    let any = false;
    for (const [id, item] of this.items) {
      if (item.seq <= token && !ids.has(id) && item.state !== 'withdrawn') {
        this.items.delete(id);
        this.gone.add(id);
        any = true;
      }
    }
    for (const r of list) {
      if (this.items.has(r.id) || this.gone.has(r.id)) continue;
      this.items.set(r.id, { request: r, state: 'waiting', note: null, seq: ++this.seq });
      any = true;
    }
    if (any) this.changed();
  }

  /** The distinct `server.tool` with two or more requests waiting, in the order of their oldest. */
  groups(): PendingGroup[] {
    const groups = new Map<string, PendingGroup>();
    for (const item of this.waiting) {
      const key = JSON.stringify([item.request.server, item.request.tool]);
      const g = groups.get(key);
      if (g) g.count++;
      else groups.set(key, { server: item.request.server, tool: item.request.tool, count: 1 });
    }
    return [...groups.values()].filter((g) => g.count >= 2);
  }

  /**
   * The runs (cells, or an agent's cells) with two or more requests waiting, in the order of
   * their oldest, with the ids shown: "the rest of this cell's calls" decides exactly those.
   */
  cellGroups(): { executionId: string; origin: string | null; ids: number[] }[] {
    const groups = new Map<string, { executionId: string; origin: string | null; ids: number[] }>();
    for (const item of this.waiting) {
      const ex = item.request.execution_id;
      if (!ex) continue;
      const g = groups.get(ex);
      if (g) g.ids.push(item.request.id);
      else groups.set(ex, { executionId: ex, origin: item.request.origin, ids: [item.request.id] });
    }
    return [...groups.values()].filter((g) => g.ids.length >= 2);
  }

  /** The ids waiting for `server.tool` (both null: every waiting request). */
  waitingIds(server: string | null, tool: string | null): number[] {
    return this.waiting.filter((i) => (server === null || i.request.server === server) && (tool === null || i.request.tool === tool)).map((i) => i.request.id);
  }

  /** A call ended: it joins the recent decisions (and its request, if still shown, leaves). */
  recordCall(event: ToolCallEvent): void {
    this.calls = [event, ...this.calls].slice(0, ApprovalsModel.RECENT);
    const item = this.items.get(event.id);
    if (item && item.state !== 'withdrawn') {
      this.items.delete(event.id);
      this.gone.add(event.id);
    }
    this.changed();
  }

  /** A recent call the person no longer wants to see (a timeout they know of) leaves the list. */
  dismissRecent(id: number): void {
    const before = this.calls.length;
    this.calls = this.calls.filter((c) => c.id !== id);
    if (this.calls.length !== before) this.changed();
  }

  /** The last tool calls of this session, newest first. */
  get recent(): readonly ToolCallEvent[] {
    return this.calls;
  }
}
