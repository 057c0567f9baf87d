// @vitest-environment happy-dom
import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalRequest, ToolCallEvent } from '../../src/ipc';
import { Cell, isPersistentChange } from '../../src/model/cell';
import { Notebook } from '../../src/model/notebook';
import { askedCall, callLabel, decidedCall, detailWords, endedCall, mergeCall, progressedCall, progressFraction, progressWords, reportingCall, summarizeCalls, verdictWords, type CellToolCall } from '../../src/model/toolCalls';
import { Executor } from '../../src/runtime/executor';
import { FrameScheduler } from '../../src/util/frame';

const request = (id: number, over: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
  id,
  server: 'fx',
  tool: 'echo',
  arguments: { text: 'hi' },
  server_description: 'fx (stdio)',
  execution_id: 'e1',
  origin: 'cell 1 of test.ipynb',
  asked_at: 1_000,
  deadline: 61_000,
  details: {},
  rule: null,
  ...over,
});

const ended = (id: number, over: Partial<ToolCallEvent> = {}): ToolCallEvent => ({
  type: 'tool_call',
  id,
  server: 'fx',
  tool: 'echo',
  arguments: { text: 'hi' },
  server_description: 'fx (stdio)',
  execution_id: 'e1',
  origin: 'cell 1 of test.ipynb',
  asked_at: 1_000,
  deadline: 61_000,
  details: {},
  rule: null,
  decision: 'approved',
  decided_by: 'person',
  reason: null,
  outcome: { kind: 'ok' },
  duration_ms: 85,
  ...over,
});

const words = (call: CellToolCall): string => [verdictWords(call), detailWords(call)].filter(Boolean).join(' | ');

describe('a call in words', () => {
  it('says who decided: you, a rule, the timeout', () => {
    expect(words(endedCall(ended(1)))).toBe('approved by you | OK · 85 ms');
    expect(words(endedCall(ended(2, { decided_by: 'rule' })))).toBe('allowed by a rule | OK · 85 ms');
    expect(words(endedCall(ended(3, { decided_by: 'batch' })))).toBe('approved by you (all pending at once) | OK · 85 ms');
    expect(words(endedCall(ended(4, { decided_by: 'rule', decision: 'rejected', outcome: null, reason: 'fx.echo is rejected by rules[0]: no echoes' })))).toBe(
      'rejected by a rule | fx.echo is rejected by rules[0]: no echoes',
    );
    expect(words(endedCall(ended(5, { decided_by: 'person', decision: 'rejected', outcome: null, reason: 'the person rejected it in the approval dialog' })))).toBe('rejected by you');
    expect(words(endedCall(ended(6, { decided_by: 'policy', decision: 'rejected', outcome: null, reason: 'no execution is running to approve this call' })))).toBe(
      'rejected by the session’s policy | no execution is running to approve this call',
    );
    expect(words(endedCall(ended(8, { decided_by: 'nobody', decision: 'rejected', outcome: null, reason: 'the execution that made the call ended' })))).toBe(
      'rejected — nobody could decide | the execution that made the call ended',
    );
  });

  it('a timed-out call is a rejected call, with the reason the engine gave', () => {
    const call = endedCall(ended(7, { decision: 'timed_out', decided_by: 'timeout', outcome: null, duration_ms: 0, reason: 'nobody decided within 60 s' }));
    expect(words(call)).toBe('rejected — timed out | nobody decided within 60 s');
    expect(call.durationMs).toBeNull();
  });

  it('a call that failed or errored says so; a shell command has no outcome of its own', () => {
    expect(detailWords(endedCall(ended(1, { outcome: { kind: 'failed', message: 'the server did not answer' }, duration_ms: 30_000 })))).toBe('Failed: the server did not answer · 30 s');
    expect(detailWords(endedCall(ended(2, { outcome: { kind: 'tool_error' } })))).toBe('Tool error · 85 ms');
    const shell = endedCall(ended(3, { server: 'ipybox', tool: 'shell', arguments: { command: 'ls  -la\n' }, duration_ms: 0 }));
    expect(detailWords(shell)).toBe('');
    expect(callLabel(shell)).toBe('ipybox.shell ls -la');
    expect(callLabel(endedCall(ended(4)))).toBe('fx.echo');
  });

  it('a waiting call and a running one', () => {
    const waiting = askedCall(request(1));
    expect(verdictWords(waiting)).toBe('waiting for your decision');
    const running = decidedCall(waiting, 'accept', 'person');
    expect(running.status).toBe('running');
    expect(verdictWords(running)).toBe('approved by you · running');
    expect(decidedCall(waiting, 'reject', 'batch')).toMatchObject({ status: 'done', decision: 'rejected', decidedBy: 'batch' });
  });

  it('sums up many calls by kind, in order of first appearance', () => {
    const calls = [
      endedCall(ended(1, { decided_by: 'rule' })),
      endedCall(ended(2, { decided_by: 'rule' })),
      endedCall(ended(3, { decision: 'timed_out', decided_by: 'timeout', outcome: null })),
      askedCall(request(4)),
      endedCall(ended(5, { decided_by: 'rule' })),
    ];
    expect(summarizeCalls(calls)).toBe('5 tool calls: 3 allowed by a rule, 1 rejected — timed out, 1 waiting for your decision');
    expect(summarizeCalls(calls.slice(0, 1))).toBe('1 tool call: 1 allowed by a rule');
  });
});

describe('merging the events of a call', () => {
  it('asked → decided → ended updates one entry, in the order asked', () => {
    let list = mergeCall([], askedCall(request(1)));
    list = mergeCall(list, askedCall(request(2)));
    list = mergeCall(list, decidedCall(list[0] as CellToolCall, 'accept', 'rule'));
    list = mergeCall(list, endedCall(ended(2, { decision: 'rejected', decided_by: 'person', outcome: null })));
    expect(list.map((c) => [c.id, c.status, c.decision])).toEqual([
      [1, 'running', 'approved'],
      [2, 'done', 'rejected'],
    ]);
  });

  it('a late event never takes a call back to an earlier state', () => {
    let list = mergeCall([], endedCall(ended(1, { decision: 'timed_out', decided_by: 'timeout', outcome: null, reason: 'nobody decided within 60 s' })));
    list = mergeCall(list, askedCall(request(1)));
    expect(list[0]?.status).toBe('done');
    // A decision with no reason (approval_decided arriving after the end) keeps the known reason.
    list = mergeCall(list, { ...(list[0] as CellToolCall), reason: null });
    expect(list[0]?.reason).toBe('nobody decided within 60 s');
  });
});

describe('a cell keeps the calls of its last run', () => {
  it('a new run clears them; an older run’s late call is dropped; they are never saved', () => {
    const cell = new Cell({ source: 'x' });
    const changes: string[] = [];
    cell.subscribe((c) => changes.push(c.type));
    cell.beginToolCalls(1);
    cell.putToolCall(1, endedCall(ended(10)));
    expect(cell.toolCalls.map((c) => c.id)).toEqual([10]);
    cell.beginToolCalls(2);
    expect(cell.toolCalls).toEqual([]);
    cell.putToolCall(1, endedCall(ended(11)));
    expect(cell.toolCalls, 'a call of the run before is not shown with the new run').toEqual([]);
    cell.putToolCall(3, endedCall(ended(12)));
    cell.beginToolCalls(3);
    expect(cell.toolCalls.map((c) => c.id), 'a call that arrives before its run’s start is kept').toEqual([12]);
    expect(changes.filter((c) => c === 'tool-calls').length).toBeGreaterThan(0);
    expect(isPersistentChange({ type: 'tool-calls' })).toBe(false);
    expect(JSON.stringify(cell.toJson())).not.toContain('echo');
    cell.clearToolCalls();
    expect(cell.toolCalls).toEqual([]);
  });
});

// ---- the executor finds the cell of a call

interface Run {
  id: string;
  origin: unknown;
  send(event: unknown): void;
}
let runs: Run[] = [];
let resolveLater = false;
const held: (() => void)[] = [];

declare global {
  interface Window {
    __TAURI_INTERNALS__: { runCallback(id: number, data: unknown): void };
  }
}

beforeEach(() => {
  runs = [];
  resolveLater = false;
  held.length = 0;
  mockIPC((cmd, args) => {
    const a: Record<string, unknown> = typeof args === 'object' && args !== null && !Array.isArray(args) ? { ...args } : {};
    if (cmd !== 'execute') throw { code: 'IoError', message: `unexpected ${cmd}` };
    const on = a.onEvent;
    const ch = typeof on === 'object' && on !== null && 'id' in on && typeof on.id === 'number' ? on.id : -1;
    let index = 0;
    const id = `e${runs.length + 1}`;
    runs.push({ id, origin: a.origin, send: (message) => window.__TAURI_INTERNALS__.runCallback(ch, { index: index++, message }) });
    if (!resolveLater) return id;
    return new Promise<string>((resolve) => held.push(() => resolve(id)));
  });
});

afterEach(() => clearMocks());

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));
async function settle(frames: FrameScheduler): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await tick();
    frames.flush();
  }
}

function setup(n: number): { cells: Cell[]; ex: Executor; frames: FrameScheduler } {
  const cells = Array.from({ length: n }, (_, i) => new Cell({ source: `call_tool(${i})` }));
  const nb = new Notebook(cells);
  const frames = new FrameScheduler();
  const ex = new Executor(nb, undefined, frames, (cell) => `cell ${nb.indexOf(cell) + 1} of test.ipynb`);
  return { cells, ex, frames };
}

describe('the executor lists each call on the cell whose run made it', () => {
  it('by execution id, through asked, decided and ended; a re-run starts a fresh list', async () => {
    const { cells, ex, frames } = setup(2);
    const [a, b] = cells as [Cell, Cell];
    ex.run([a, b]);
    await settle(frames);
    const first = runs[0] as Run;
    first.send({ type: 'started', executionCount: 1 });
    await settle(frames);
    ex.noteApprovalRequested(request(1, { execution_id: first.id }));
    expect(a.toolCalls.map((c) => c.status)).toEqual(['waiting']);
    ex.noteApprovalDecided(1, 'accept', 'person');
    expect(a.toolCalls.map((c) => c.status)).toEqual(['running']);
    ex.noteToolCall(ended(1, { execution_id: first.id }));
    expect(a.toolCalls.map((c) => words(c))).toEqual(['approved by you | OK · 85 ms']);
    first.send({ type: 'finished' });
    await settle(frames);
    // The second cell's run: its calls go to it, even rule-decided ones that never waited.
    const second = runs[1] as Run;
    second.send({ type: 'started', executionCount: 2 });
    ex.noteApprovalRequested(request(2, { execution_id: second.id }));
    ex.noteApprovalDecided(2, 'accept', 'rule');
    ex.noteToolCall(ended(2, { execution_id: second.id, decided_by: 'rule' }));
    second.send({ type: 'finished' });
    await settle(frames);
    expect(b.toolCalls.map((c) => verdictWords(c))).toEqual(['allowed by a rule']);
    expect(a.toolCalls).toHaveLength(1);
    // A call that ends after its run finished still lands on its cell.
    ex.noteToolCall(ended(3, { execution_id: first.id, decision: 'rejected', decided_by: 'nobody', outcome: null }));
    expect(a.toolCalls).toHaveLength(2);
    // Re-running the first cell: its old calls go when the new run starts.
    ex.run([a]);
    await settle(frames);
    (runs[2] as Run).send({ type: 'started', executionCount: 3 });
    await settle(frames);
    expect(a.toolCalls).toEqual([]);
    // Calls of other code (another notebook, an agent, code that outlived its cell) go nowhere.
    ex.noteToolCall(ended(4, { execution_id: 'someone-else', origin: 'agent session 4f2a' }));
    ex.noteToolCall(ended(5, { execution_id: null, origin: null }));
    expect([...a.toolCalls, ...b.toolCalls].map((c) => c.id)).not.toContain(4);
    expect([...a.toolCalls, ...b.toolCalls].map((c) => c.id)).not.toContain(5);
  });

  it('by origin while the execution id is not known yet', async () => {
    resolveLater = true;
    const { cells, ex, frames } = setup(2);
    ex.run(cells);
    await settle(frames);
    const run = runs[0] as Run;
    expect(run.origin).toBe('cell 1 of test.ipynb');
    ex.noteApprovalRequested(request(1, { execution_id: 'e1', origin: 'cell 1 of test.ipynb' }));
    ex.noteToolCall(ended(1, { execution_id: 'e1', origin: 'cell 1 of test.ipynb', decided_by: 'rule' }));
    expect(cells[0]?.toolCalls.map((c) => verdictWords(c))).toEqual(['allowed by a rule']);
    ex.noteToolCall(ended(2, { execution_id: 'e9', origin: 'cell 2 of test.ipynb' }));
    expect(cells[1]?.toolCalls, 'the cell not in flight gets nothing by origin').toEqual([]);
    held.forEach((f) => f());
  });
});

describe('a running call’s progress', () => {
  const report = (progress: number, total: number | null, message: string | null) => ({ type: 'tool_progress' as const, id: 1, execution_id: 'e1', server: 'fx', tool: 'echo', progress, total, message });

  it('is kept on a running call only, and gone once the call ends', () => {
    const running = decidedCall(askedCall(request(1)), 'accept', 'person');
    const moved = progressedCall(running, report(2, 8, 'page 2'));
    expect(moved.progress).toEqual({ done: 2, total: 8, message: 'page 2' });
    expect(progressedCall(askedCall(request(1)), report(2, 8, null)).progress).toBeUndefined();
    const done = mergeCall([moved], endedCall(ended(1)));
    expect(done[0]?.progress ?? null).toBeNull();
    expect(progressedCall(done[0] as CellToolCall, report(3, 8, null))).toBe(done[0]);
  });

  it('makes a running call of a report for a call nobody was asked about (a rule approved it)', () => {
    const call = progressedCall(reportingCall(report(1, 4, null)), report(1, 4, null));
    expect(call).toMatchObject({ id: 1, server: 'fx', tool: 'echo', status: 'running', decision: 'approved', progress: { done: 1, total: 4 } });
    expect(verdictWords(call)).toBe('approved · running');
    const done = mergeCall([call], endedCall(ended(1, { decided_by: 'rule' })));
    expect(done).toHaveLength(1);
    expect(done[0]?.status).toBe('done');
  });

  it('reads as a fraction and as words, the server’s words escaped', () => {
    const p = (done: number, total: number | null, message: string | null = null) => ({ done, total, message });
    expect(progressFraction(p(1, 4))).toBe(0.25);
    expect(progressFraction(p(9, 4))).toBe(1);
    expect(progressFraction(p(3, null))).toBeNull();
    expect(progressFraction(p(3, 0))).toBeNull();
    expect(progressWords(p(1500, 3000))).toBe('1,500 of 3,000');
    expect(progressWords(p(7, null))).toBe('7 done');
    expect(progressWords(p(1, 2, 'rows\u202e'))).toBe('1 of 2 · rows\\u202e');
  });
});
