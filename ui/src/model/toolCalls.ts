/**
 * The tool calls of one run of a cell, without DOM: each call as its session events tell it
 * (asked, decided, ended), merged by request id, and in words ("allowed by a rule",
 * "rejected — timed out"). Session state: never saved in the notebook.
 */
import type { ApprovalDecision, ApprovalRequest, CallDecision, CallOutcome, DecidedBy, ToolCallEvent, ToolProgressEvent } from '../ipc';
import type { JsonValue } from '../util/json';
import { callName, formatDuration, outcomeWords, ruleWords, shortenText } from './approvals';
import { escapeUntrusted } from './untrusted';

/** Where a call is: waiting for a decision, approved and running, or ended (ran or refused). */
export type CallStatus = 'waiting' | 'running' | 'done';

export interface CellToolCall {
  /** The approval request's id. */
  readonly id: number;
  readonly server: string;
  readonly tool: string;
  readonly arguments: JsonValue;
  readonly status: CallStatus;
  /** Known once decided. */
  readonly decision: CallDecision | null;
  readonly decidedBy: DecidedBy | null;
  /** Why it was refused. */
  readonly reason: string | null;
  /** What it returned, when it ran. */
  readonly outcome: CallOutcome | null;
  readonly durationMs: number | null;
  /** Which rule decided it, as the backend says (raw; escaped when shown). */
  readonly rule?: string | null;
  /** How far a running call has got, as its server last said. */
  readonly progress?: CallProgress | null;
}

/** A server's report on a running call. */
export interface CallProgress {
  readonly done: number;
  /** Null when the server does not know the whole. */
  readonly total: number | null;
  /** What it says it is doing (raw; escaped when shown). */
  readonly message: string | null;
}

const RANK: Record<CallStatus, number> = { waiting: 0, running: 1, done: 2 };

/** A request that waits for a decision. */
export function askedCall(request: ApprovalRequest): CellToolCall {
  return { id: request.id, server: request.server, tool: request.tool, arguments: request.arguments, status: 'waiting', decision: null, decidedBy: null, reason: null, outcome: null, durationMs: null };
}

/** The request was decided: an approved call runs now; a rejected one is done (its reason follows with the end). */
export function decidedCall(call: CellToolCall, decision: ApprovalDecision, decidedBy: DecidedBy): CellToolCall {
  if (call.status === 'done') return call;
  return decision === 'accept' ? { ...call, status: 'running', decision: 'approved', decidedBy } : { ...call, status: 'done', decision: 'rejected', decidedBy };
}

/** The call ended: how it was decided and what came of it. */
export function endedCall(event: ToolCallEvent): CellToolCall {
  return {
    id: event.id,
    server: event.server,
    tool: event.tool,
    arguments: event.arguments,
    status: 'done',
    decision: event.decision,
    decidedBy: event.decided_by,
    reason: event.reason ?? null,
    outcome: event.outcome,
    durationMs: event.outcome ? event.duration_ms : null,
    rule: event.rule ?? null,
  };
}

/** A call first heard of by its progress (a rule approved it before anyone was told of it): running, approved. */
export function reportingCall(event: ToolProgressEvent): CellToolCall {
  return { id: event.id, server: event.server, tool: event.tool, arguments: null, status: 'running', decision: 'approved', decidedBy: null, reason: null, outcome: null, durationMs: null };
}

/** A running call's server reported progress: kept on the call while it runs, dropped once it ends. */
export function progressedCall(call: CellToolCall, event: ToolProgressEvent): CellToolCall {
  if (call.status !== 'running') return call;
  return { ...call, progress: { done: event.progress, total: event.total ?? null, message: event.message ?? null } };
}

/** The fraction done (0 to 1), or null when the server gave no whole to measure against. */
export function progressFraction(progress: CallProgress): number | null {
  if (progress.total === null || !(progress.total > 0)) return null;
  return Math.min(1, Math.max(0, progress.done / progress.total));
}

/** "40 of 100 · Downloading page 4" / "7 done"; escaped. */
export function progressWords(progress: CallProgress): string {
  const n = (x: number): string => x.toLocaleString('en-US', { maximumFractionDigits: 2 });
  const amount = progress.total !== null && progress.total > 0 ? `${n(progress.done)} of ${n(progress.total)}` : `${n(progress.done)} done`;
  return progress.message ? `${amount} · ${escapeUntrusted(shortenText(progress.message, 120))}` : amount;
}

/** `list` with `call` in it: a call already listed (same id) is updated in place, never back to an earlier status; a new one is appended. */
export function mergeCall(list: readonly CellToolCall[], call: CellToolCall): CellToolCall[] {
  const i = list.findIndex((c) => c.id === call.id);
  if (i < 0) return [...list, call];
  const old = list[i];
  if (!old || RANK[call.status] < RANK[old.status]) return [...list];
  const out = [...list];
  // A late end without a reason keeps the one known.
  out[i] = call.status === 'done' && old.status === 'done' && call.reason === null ? { ...call, reason: old.reason } : call;
  return out;
}

const isShell = (c: { server: string; tool: string }): boolean => c.server === 'ipybox' && c.tool === 'shell';

/** Who or what decided, in words: "approved by you", "allowed by a rule", "rejected — timed out", "waiting for your decision". */
export function verdictWords(call: CellToolCall): string {
  if (call.status === 'waiting') return 'waiting for your decision';
  if (call.decision === 'timed_out' || call.decidedBy === 'timeout') return 'rejected — timed out';
  const approved = call.decision === 'approved';
  const verdict = ((): string => {
    switch (call.decidedBy) {
      case 'person':
        return approved ? 'approved by you' : 'rejected by you';
      case 'batch':
        return approved ? 'approved by you (all pending at once)' : 'rejected by you (all pending at once)';
      case 'rule': {
        const which = ruleWords(call.rule);
        if (which) return approved ? `allowed by the rule “${which}”` : `rejected by the rule “${which}”`;
        return approved ? 'allowed by a rule' : 'rejected by a rule';
      }
      case 'grant':
        return approved ? 'allowed for this session' : 'rejected';
      case 'policy':
        return approved ? 'approved by the session’s policy' : 'rejected by the session’s policy';
      case 'nobody':
        return approved ? 'approved' : 'rejected — nobody could decide';
      default:
        return approved ? 'approved' : 'rejected';
    }
  })();
  return call.status === 'running' ? `${verdict} · running` : verdict;
}

/** What follows the verdict: the reason of a refusal not made by the person, or the outcome and duration of a call that ran; escaped. */
export function detailWords(call: CellToolCall): string {
  if (call.status !== 'done') return '';
  if (call.decision !== 'approved') {
    // The person knows why they rejected it; a rule, the timeout or the session says why.
    const own = call.decidedBy === 'person' || call.decidedBy === 'batch';
    return !own && call.reason ? escapeUntrusted(call.reason) : '';
  }
  // A shell command is only approved here; the kernel runs it, so there is no outcome to tell.
  if (isShell(call) || !call.outcome) return '';
  const parts = [outcomeWords(call.outcome)];
  if (call.durationMs !== null) parts.push(formatDuration(call.durationMs));
  return parts.join(' · ');
}

/** The call's name, with the command for a shell command: "ipybox.shell ls -la"; escaped. */
export function callLabel(call: CellToolCall): string {
  const name = callName(call.server, call.tool);
  if (isShell(call) && call.arguments !== null && typeof call.arguments === 'object' && !Array.isArray(call.arguments)) {
    const command = call.arguments.command;
    if (typeof command === 'string') return `${name} ${escapeUntrusted(shortenText(command.replace(/\s+/g, ' ').trim(), 80))}`;
  }
  return name;
}

/** "3 tool calls: 2 allowed by a rule, 1 rejected — timed out" (kinds in order of first appearance). */
export function summarizeCalls(calls: readonly CellToolCall[]): string {
  const counts = new Map<string, number>();
  for (const c of calls) {
    const words = verdictWords(c).replace(/ · running$/, '');
    counts.set(words, (counts.get(words) ?? 0) + 1);
  }
  const n = calls.length;
  const head = `${n.toLocaleString('en-US')} ${n === 1 ? 'tool call' : 'tool calls'}`;
  return counts.size === 0 ? head : `${head}: ${[...counts].map(([w, k]) => `${k.toLocaleString('en-US')} ${w}`).join(', ')}`;
}
