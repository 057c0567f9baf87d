/**
 * Runs cells: sends code to the kernel in order, applies the execution events of each run to
 * its cell (once per frame), tracks queued/running/done/failed, and stops a "run all" at the
 * first failure as JupyterLab does (cells queued after a failed one are cancelled). The tool
 * calls a run makes (session events naming its execution) are listed on its cell.
 */
import * as ipc from '../ipc';
import type { ApprovalDecision, ApprovalRequest, DecidedBy, ExecEvent, SandboxBlock, ServerQuestion, ToolCallEvent, ToolProgressEvent } from '../ipc';
import { assertNever } from '../util/assert';
import { frames, type FrameScheduler } from '../util/frame';
import { isJsonObject } from '../util/json';
import type { Cell, RunState } from '../model/cell';
import type { Notebook } from '../model/notebook';
import { askedCall, decidedCall, endedCall, progressedCall, reportingCall } from '../model/toolCalls';

export interface ExecBackend {
  execute(code: string, onEvent: (event: ExecEvent) => void, origin?: string | null): Promise<string>;
  cancelExecution(id: string): Promise<unknown>;
  replyInput(id: number, value: string): Promise<unknown>;
}

const ipcBackend: ExecBackend = {
  execute: ipc.execute,
  cancelExecution: ipc.cancelExecution,
  replyInput: ipc.replyInput,
};

interface Execution {
  seq: number;
  cell: Cell;
  code: string;
  id: string | null;
  /** Where the backend was told the code comes from ("cell 3 of analysis.ipynb"). */
  origin: string | null;
  /** Handed to the backend (the next one is sent when this one settles). */
  sent: boolean;
  started: boolean;
  /** Finished, failed or cancelled, as far as the run queue is concerned. */
  settled: boolean;
  /** Its outcome was applied to the cell. */
  done: boolean;
  cancelRequested: boolean;
  /** Cancelled because an earlier cell failed. */
  cascaded: boolean;
  /** The cell's state before it was queued (restored when it never runs). */
  previous: RunState;
  /** What the sandbox blocked in this run (its event and the run's start can come in either order). */
  block?: SandboxBlock;
}

/**
 * Executions are handed to the backend one at a time, the next when the previous one settled.
 * The backend could queue them itself, but then a cell queued after a failing one may already
 * have started before the failure reaches the UI; sending one at a time makes "stop at the
 * first failure" exact and cancelling a queued cell free. The cost is one IPC round trip
 * between cells.
 */
export class Executor {
  private pending: Execution[] = [];
  private seq = 0;
  private inFlight: Execution | null = null;
  private settledIds = new Set<string>();
  private listeners = new Set<() => void>();
  /** Executions by backend id, kept after they end: their last tool call events may come later. */
  private byId = new Map<string, Execution>();
  /** Blocks reported for an execution whose id `execute` has not answered yet. */
  private earlyBlocks = new Map<string, SandboxBlock>();
  /** The execution of each tool call request seen. */
  private byRequest = new Map<number, Execution>();
  /** Which cell shows each waiting question of a server. */
  private questionCells = new Map<number, Cell>();

  constructor(
    private readonly notebook: Notebook,
    private readonly backend: ExecBackend = ipcBackend,
    private readonly scheduler: FrameScheduler = frames,
    /** Where a cell's code comes from, in words ("cell 3 of analysis.ipynb"). */
    private readonly originOf: (cell: Cell) => string | null = () => null,
  ) {}

  /** Called whenever the set of pending executions changes. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of [...this.listeners]) l();
  }

  get pendingCount(): number {
    return this.pending.length;
  }

  isPending(cell: Cell): boolean {
    return this.pending.some((e) => e.cell === cell);
  }

  /** Run cells in order. Markdown cells are rendered; empty code cells are cleared, as JupyterLab does. */
  run(cells: readonly Cell[]): void {
    for (const cell of cells) {
      switch (cell.type) {
        case 'markdown':
          cell.setRendered(true);
          break;
        case 'raw':
          break;
        case 'code':
          if (!cell.source.trim()) {
            cell.clearOutputs();
            cell.clearToolCalls();
            cell.setExecutionCount(null);
            cell.setNotice(null);
            if (!this.isPending(cell)) cell.setRunState('idle');
          } else {
            this.submit(cell);
          }
          break;
        default:
          assertNever(cell.type, 'cell type');
      }
    }
    this.pump();
  }

  private submit(cell: Cell): void {
    // A queued (not yet sent) run of the same cell is replaced by this one.
    for (const old of this.pending) {
      if (old.cell === cell && !old.sent && !old.cancelRequested) {
        old.cancelRequested = true;
        this.settle(old);
        this.finishCancelled(old);
      }
    }
    const exec: Execution = {
      seq: ++this.seq,
      cell,
      code: cell.source,
      id: null,
      origin: null,
      sent: false,
      started: false,
      settled: false,
      done: false,
      cancelRequested: false,
      cascaded: false,
      previous: cell.runState === 'queued' || cell.runState === 'running' ? 'idle' : cell.runState,
    };
    this.pending.push(exec);
    // Send before updating the cell: the kernel starts while the window redraws.
    this.pump();
    cell.setNotice(null);
    cell.setPendingClear('run');
    this.refreshState(cell);
    this.changed();
  }

  /** Send the next queued execution when none is in flight. */
  private pump(): void {
    while (this.inFlight === null) {
      const next = this.pending.find((e) => !e.sent && !e.settled);
      if (!next) return;
      next.sent = true;
      if (next.cancelRequested) {
        this.settle(next);
        this.scheduler.enqueue(() => this.finishCancelled(next));
        continue;
      }
      this.inFlight = next;
      next.origin = this.originOf(next.cell);
      this.backend
        .execute(next.code, (event) => this.receive(next, event), next.origin)
        .then((id) => {
          next.id = id;
          remember(this.byId, id, next);
          const early = this.earlyBlocks.get(id);
          if (early) {
            this.earlyBlocks.delete(id);
            this.showBlock(next, early);
          }
          if (next.settled) this.settledIds.add(id);
          if (next.cancelRequested && !next.settled) void this.sendCancel(next);
        })
        .catch((err: unknown) => {
          const error = ipc.toBackendError(err);
          this.receive(next, { type: 'failed', error });
        });
    }
  }

  /** An event from the channel: bookkeeping of the run queue now, the cell at the next frame. */
  private receive(exec: Execution, event: ExecEvent): void {
    if (exec.done) return;
    if (event.type === 'started') exec.started = true;
    if (event.type === 'finished' || event.type === 'failed') {
      if (exec.settled) return;
      this.settle(exec);
      if (event.type === 'failed' && (exec.started || event.error.code !== 'Cancelled')) {
        // Like the kernel's stop_on_error: what was queued after a failed cell does not run.
        for (const later of this.pending) {
          if (later.seq > exec.seq && !later.settled) {
            later.cancelRequested = true;
            later.cascaded = true;
            if (!later.sent) {
              later.sent = true;
              this.settle(later);
              this.scheduler.enqueue(() => this.finishCancelled(later));
            }
          }
        }
      }
      this.pump();
    }
    this.scheduler.enqueue(() => this.handle(exec, event));
  }

  private settle(exec: Execution): void {
    exec.settled = true;
    if (exec.id !== null) {
      this.settledIds.add(exec.id);
      if (this.settledIds.size > 1000) this.settledIds.delete(this.settledIds.values().next().value ?? '');
    }
    if (this.inFlight === exec) this.inFlight = null;
  }

  /** This execution (by backend id) already ended here: a late kernel_busy for it is stale. */
  hasSettled(id: string): boolean {
    return this.settledIds.has(id);
  }

  private handle(exec: Execution, event: ExecEvent): void {
    if (exec.done) return;
    const cell = exec.cell;
    switch (event.type) {
      case 'started':
        cell.beginToolCalls(exec.seq);
        if (exec.block) cell.setSandboxBlock(exec.block);
        if (event.executionCount !== null) cell.setExecutionCount(event.executionCount);
        this.refreshState(cell);
        return;
      case 'outputs':
        for (const output of event.outputs) {
          if (output.type === 'update_display_data') this.notebook.updateDisplay(output.display_id, output.data, isJsonObject(output.metadata) ? output.metadata : {});
          else cell.applyOutput(output);
        }
        return;
      case 'input':
        cell.setInputRequest({ id: event.id, prompt: event.prompt, password: event.password });
        return;
      case 'finished':
        this.complete(exec, 'done');
        return;
      case 'failed':
        if (event.error.code === 'Cancelled' && !exec.started) {
          this.finishCancelled(exec);
          return;
        }
        this.complete(exec, 'failed');
        // An interrupted cell says so once: its KeyboardInterrupt traceback, when it has one.
        if (event.error.code === 'Cancelled' && cell.outputs.some((o) => o.kind === 'error' && o.ename === 'KeyboardInterrupt')) return;
        if (event.error.code !== 'CodeExecutionError') cell.setNotice({ kind: 'error', text: ipc.describeError(event.error) });
        return;
      default:
        assertNever(event, 'execution event');
    }
  }

  private complete(exec: Execution, result: 'done' | 'failed'): void {
    exec.done = true;
    const cell = exec.cell;
    this.pending = this.pending.filter((e) => e !== exec);
    if (cell.inputRequest) cell.setInputRequest(null);
    if (!this.isPending(cell)) cell.settlePendingClear();
    cell.setRunState(this.derivedState(cell, result));
    this.changed();
  }

  private finishCancelled(exec: Execution): void {
    if (exec.done) return;
    exec.done = true;
    const cell = exec.cell;
    this.pending = this.pending.filter((e) => e !== exec);
    if (cell.inputRequest && !this.isPending(cell)) cell.setInputRequest(null);
    if (!this.isPending(cell)) cell.cancelPendingClear();
    if (exec.cascaded) cell.setNotice({ kind: 'info', text: 'Not run: an earlier cell failed.' });
    cell.setRunState(this.derivedState(cell, exec.previous));
    this.changed();
  }

  private async sendCancel(exec: Execution): Promise<void> {
    if (exec.id === null) return;
    try {
      await this.backend.cancelExecution(exec.id);
    } catch {
      // Already finished: its own events tell.
    }
  }

  /** End every queued or running execution (the kernel was restarted or replaced). */
  cancelAll(reason: string | null): void {
    for (const exec of [...this.pending]) {
      exec.cancelRequested = true;
      if (exec.sent && !exec.settled && exec.id !== null) void this.sendCancel(exec);
      const wasStarted = exec.started;
      this.settle(exec);
      exec.sent = true;
      this.scheduler.enqueue(() => {
        if (exec.done) return;
        if (wasStarted) {
          this.complete(exec, 'failed');
          if (reason) exec.cell.setNotice({ kind: 'error', text: reason });
        } else {
          this.finishCancelled(exec);
          if (reason) exec.cell.setNotice({ kind: 'info', text: reason });
        }
      });
    }
    this.inFlight = null;
  }

  // ---- tool calls

  /**
   * The execution a tool call came from: by the backend's execution id, or, before `execute`
   * resolved that id, the one in flight with the call's origin. Null for other code (another
   * notebook, an agent) and calls from code that outlived its cell.
   */
  private executionOf(executionId: string | null, origin: string | null): Execution | null {
    if (executionId !== null) {
      const known = this.byId.get(executionId);
      if (known) return known;
    }
    const inFlight = this.inFlight;
    if (inFlight && inFlight.id === null && origin !== null && inFlight.origin === origin) return inFlight;
    return null;
  }

  /** The sandbox blocked a cell's file operation: the cell offers to allow it. */
  noteSandboxBlock(executionId: string, block: SandboxBlock): void {
    const exec = this.byId.get(executionId);
    if (exec) this.showBlock(exec, block);
    else if (!this.settledIds.has(executionId)) {
      // A cell that fails at once can be reported before `execute` answered with its id.
      this.earlyBlocks.set(executionId, block);
      if (this.earlyBlocks.size > 20) this.earlyBlocks.delete(this.earlyBlocks.keys().next().value ?? '');
    }
  }

  private showBlock(exec: Execution, block: SandboxBlock): void {
    // The run's start clears an earlier run's block; this run's is shown again then, for the
    // session event can arrive before the channel's start.
    exec.block = block;
    this.scheduler.enqueue(() => exec.cell.setSandboxBlock(block));
  }

  /** A tool call asks for approval: its cell lists it as waiting. */
  noteApprovalRequested(request: ApprovalRequest): void {
    const exec = this.executionOf(request.execution_id, request.origin);
    if (!exec) return;
    remember(this.byRequest, request.id, exec);
    exec.cell.putToolCall(exec.seq, askedCall(request));
  }

  /** A request was decided (it runs now, or it will not run). */
  noteApprovalDecided(id: number, decision: ApprovalDecision, decidedBy: DecidedBy): void {
    const exec = this.byRequest.get(id);
    const call = exec?.cell.toolCalls.find((c) => c.id === id);
    if (!exec || !call) return;
    exec.cell.putToolCall(exec.seq, decidedCall(call, decision, decidedBy));
  }

  /** A running tool call's server said how far it has got. */
  noteToolProgress(event: ToolProgressEvent): void {
    // A call a rule approved is first heard of here: nobody was asked about it.
    const exec = this.byRequest.get(event.id) ?? this.executionOf(event.execution_id, null);
    if (!exec) return;
    const call = exec.cell.toolCalls.find((c) => c.id === event.id) ?? reportingCall(event);
    if (call.status !== 'running') return;
    remember(this.byRequest, event.id, exec);
    exec.cell.putToolCall(exec.seq, progressedCall(call, event));
  }

  /** A server asks a question during a call: the cell that made the call shows it. False when no cell of ours made it. */
  noteQuestion(question: ServerQuestion): boolean {
    const call = question.call;
    if (!call) return false;
    const exec = this.byRequest.get(call.id) ?? this.executionOf(call.execution_id, null);
    if (!exec) return false;
    this.questionCells.set(question.id, exec.cell);
    exec.cell.addQuestion(question);
    return true;
  }

  /** A question ended: its form goes. */
  noteQuestionEnded(id: number): void {
    const cell = this.questionCells.get(id);
    this.questionCells.delete(id);
    cell?.removeQuestion(id);
  }

  /** A tool call ended: how it was decided and what came of it. */
  noteToolCall(event: ToolCallEvent): void {
    const exec = this.byRequest.get(event.id) ?? this.executionOf(event.execution_id, event.origin);
    if (!exec) return;
    this.byRequest.delete(event.id);
    exec.cell.putToolCall(exec.seq, endedCall(event));
  }

  /** Answer an input() request of a cell. The prompt and answer are echoed like a terminal. */
  async replyInput(cell: Cell, value: string): Promise<void> {
    const request = cell.inputRequest;
    if (!request) return;
    cell.setInputRequest(null);
    cell.appendStdout(`${request.prompt}${request.password ? '········' : value}\n`);
    try {
      await this.backend.replyInput(request.id, value);
    } catch (err) {
      cell.setNotice({ kind: 'error', text: ipc.describeError(ipc.toBackendError(err)) });
    }
  }

  private derivedState(cell: Cell, fallback: RunState): RunState {
    const mine = this.pending.filter((e) => e.cell === cell);
    if (mine.some((e) => e.started)) return 'running';
    if (mine.length > 0) return 'queued';
    return fallback;
  }

  private refreshState(cell: Cell): void {
    cell.setRunState(this.derivedState(cell, cell.runState));
  }
}

/** Keep `value` under `key`, forgetting the oldest beyond 500 entries. */
function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > 500) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
}
