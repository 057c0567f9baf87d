import type { IopubOutput, SandboxBlock, ServerQuestion } from '../ipc';
import { assertNever } from '../util/assert';
import { cloneJson, isJsonObject, type JsonObject, type JsonValue } from '../util/json';
import { newCellId } from './ids';
import {
  mimeBundleFromJson,
  outputFromJson,
  outputToJson,
  StreamOutput,
  type DisplayDataOutput,
  type MimeBundle,
  type Output,
  type StreamDelta,
} from './outputs';
import { joinMultiline, splitLines } from './text';
import { mergeCall, type CellToolCall } from './toolCalls';

export type CellType = 'code' | 'markdown' | 'raw';
export type RunState = 'idle' | 'queued' | 'running' | 'done' | 'failed';

export interface InputRequest {
  id: number;
  prompt: string;
  password: boolean;
}

export interface CellNotice {
  kind: 'error' | 'info';
  text: string;
}

/** What changed in a cell, for its view. */
export type CellChange =
  | { type: 'source'; fromEditor: boolean }
  | { type: 'cell-type' }
  | { type: 'outputs-reset' }
  | { type: 'output-added'; index: number }
  | { type: 'output-replaced'; index: number }
  | { type: 'stream-appended'; index: number; delta: StreamDelta }
  | { type: 'execution-count' }
  | { type: 'run-state' }
  | { type: 'notice' }
  | { type: 'input-request' }
  | { type: 'metadata' }
  | { type: 'pending-clear' }
  | { type: 'questions' }
  | { type: 'tool-calls' }
  | { type: 'sandbox-block' };

/** Changes that alter the saved file (the rest is session state). */
export function isPersistentChange(change: CellChange): boolean {
  switch (change.type) {
    case 'source':
    case 'cell-type':
    case 'outputs-reset':
    case 'output-added':
    case 'output-replaced':
    case 'stream-appended':
    case 'execution-count':
    case 'metadata':
      return true;
    case 'run-state':
    case 'sandbox-block':
    case 'notice':
    case 'input-request':
    case 'pending-clear':
    case 'tool-calls':
    case 'questions':
      return false;
    default:
      return assertNever(change, 'cell change');
  }
}

const KNOWN_CELL_KEYS = ['id', 'cell_type', 'source', 'metadata', 'outputs', 'execution_count', 'attachments'];

export interface CellInit {
  id?: string;
  type?: CellType;
  source?: string;
  metadata?: JsonObject;
}

/** Pending clear of the outputs: 'run' when a new execution was requested, 'wait' for clear_output(wait=True). */
export type PendingClear = 'run' | 'wait' | null;

export class Cell {
  id: string;
  private _type: CellType;
  private _source: string;
  /** The source as stored in the file (string or array of lines) while it is unchanged. */
  private rawSource: JsonValue | null = null;
  /** A `cell_type` this UI does not know (kept while the cell stays raw). */
  private unknownType: string | null = null;
  metadata: JsonObject;
  attachments: JsonObject | null = null;
  outputs: Output[] = [];
  executionCount: number | null = null;
  /** Unknown keys of the stored cell, written back. */
  extra: JsonObject = {};

  // Session state, never saved.
  runState: RunState = 'idle';
  notice: CellNotice | null = null;
  inputRequest: InputRequest | null = null;
  pendingClear: PendingClear = null;
  /** Markdown: showing the rendered text (not the editor). */
  rendered = true;
  /** The tool calls of the last run, in the order they were asked. */
  toolCalls: readonly CellToolCall[] = [];
  /** Which run they belong to (the runner's number for it). */
  private toolCallsRun: number | null = null;
  /** What the sandbox blocked in the last run, as ipybox checked it. */
  sandboxBlock: SandboxBlock | null = null;
  /** Questions MCP servers ask during this cell's tool calls, waiting for an answer. */
  questions: readonly ServerQuestion[] = [];

  private listeners = new Set<(change: CellChange) => void>();

  constructor(init: CellInit = {}) {
    this.id = init.id ?? newCellId();
    this._type = init.type ?? 'code';
    this._source = init.source ?? '';
    this.metadata = init.metadata ?? {};
  }

  get type(): CellType {
    return this._type;
  }

  get source(): string {
    return this._source;
  }

  subscribe(listener: (change: CellChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(change: CellChange): void {
    for (const l of [...this.listeners]) l(change);
  }

  setSource(source: string, fromEditor = false): void {
    if (source === this._source) return;
    this._source = source;
    this.rawSource = null;
    this.emit({ type: 'source', fromEditor });
  }

  setType(type: CellType): void {
    if (type === this._type) return;
    this._type = type;
    this.unknownType = null;
    this.rendered = type === 'markdown' ? false : true;
    if (type !== 'code') {
      this.runState = 'idle';
      this.notice = null;
      this.inputRequest = null;
      this.pendingClear = null;
    }
    this.emit({ type: 'cell-type' });
  }

  setMetadata(key: string, value: JsonValue | undefined): void {
    if (value === undefined) {
      if (!(key in this.metadata)) return;
      delete this.metadata[key];
    } else {
      this.metadata[key] = value;
    }
    this.emit({ type: 'metadata' });
  }

  /** Outputs hidden (JupyterLab writes both `collapsed` and `jupyter.outputs_hidden`). */
  get outputsHidden(): boolean {
    const j = this.metadata.jupyter;
    return this.metadata.collapsed === true || (isJsonObject(j) && j.outputs_hidden === true);
  }

  setOutputsHidden(hidden: boolean): void {
    if (hidden === this.outputsHidden) return;
    const j = this.metadata.jupyter;
    if (hidden) {
      this.metadata.collapsed = true;
      this.metadata.jupyter = { ...(isJsonObject(j) ? j : {}), outputs_hidden: true };
    } else {
      delete this.metadata.collapsed;
      if (isJsonObject(j)) {
        const rest = { ...j };
        delete rest.outputs_hidden;
        if (Object.keys(rest).length > 0) this.metadata.jupyter = rest;
        else delete this.metadata.jupyter;
      }
    }
    this.emit({ type: 'metadata' });
  }

  /** Output height limited with a scroll area (`scrolled` false: shown in full). */
  get outputsScrolled(): boolean {
    return this.metadata.scrolled !== false;
  }

  setOutputsScrolled(scrolled: boolean): void {
    if (scrolled === this.outputsScrolled && this.metadata.scrolled !== undefined) return;
    this.metadata.scrolled = scrolled;
    this.emit({ type: 'metadata' });
  }

  setRunState(state: RunState): void {
    if (state === this.runState) return;
    this.runState = state;
    this.emit({ type: 'run-state' });
  }

  setNotice(notice: CellNotice | null): void {
    this.notice = notice;
    this.emit({ type: 'notice' });
  }

  setInputRequest(request: InputRequest | null): void {
    this.inputRequest = request;
    this.emit({ type: 'input-request' });
  }

  setExecutionCount(count: number | null): void {
    if (count === this.executionCount) return;
    this.executionCount = count;
    this.emit({ type: 'execution-count' });
  }

  setRendered(rendered: boolean): void {
    if (rendered === this.rendered) return;
    this.rendered = rendered;
    this.emit({ type: 'cell-type' });
  }

  setSandboxBlock(block: SandboxBlock | null): void {
    if (block === this.sandboxBlock) return;
    this.sandboxBlock = block;
    this.emit({ type: 'sandbox-block' });
  }

  /** Run `run` began: the tool calls (and the block) of an earlier run go. */
  beginToolCalls(run: number): void {
    if (this.toolCallsRun !== null && run <= this.toolCallsRun) return;
    this.toolCallsRun = run;
    this.setSandboxBlock(null);
    if (this.toolCalls.length === 0) return;
    this.toolCalls = [];
    this.emit({ type: 'tool-calls' });
  }

  /** A tool call of run `run` was asked, decided or ended: a newer run's replaces the list, an older run's is dropped. */
  putToolCall(run: number, call: CellToolCall): void {
    if (this.toolCallsRun !== null && run < this.toolCallsRun) return;
    if (this.toolCallsRun !== run) {
      this.toolCallsRun = run;
      this.toolCalls = [];
    }
    this.toolCalls = mergeCall(this.toolCalls, call);
    this.emit({ type: 'tool-calls' });
  }

  /** A server asks a question during one of this cell's calls. */
  addQuestion(question: ServerQuestion): void {
    if (this.questions.some((q) => q.id === question.id)) return;
    this.questions = [...this.questions, question];
    this.emit({ type: 'questions' });
  }

  /** A question ended (answered, or its call ended): its form goes. */
  removeQuestion(id: number): void {
    if (!this.questions.some((q) => q.id === id)) return;
    this.questions = this.questions.filter((q) => q.id !== id);
    this.emit({ type: 'questions' });
  }

  clearToolCalls(): void {
    if (this.toolCalls.length === 0) return;
    this.toolCalls = [];
    this.emit({ type: 'tool-calls' });
  }

  clearOutputs(): void {
    this.pendingClear = null;
    if (this.outputs.length === 0) return;
    this.outputs = [];
    this.emit({ type: 'outputs-reset' });
  }

  /** Mark the outputs as about to be replaced: they stay (dimmed) until the first new output. */
  setPendingClear(pending: PendingClear): void {
    if (pending === this.pendingClear) return;
    this.pendingClear = pending;
    this.emit({ type: 'pending-clear' });
  }

  private flushPendingClear(): void {
    if (this.pendingClear !== null) {
      this.pendingClear = null;
      if (this.outputs.length > 0) {
        this.outputs = [];
        this.emit({ type: 'outputs-reset' });
      } else {
        this.emit({ type: 'pending-clear' });
      }
    }
  }

  /** An execution ended: a clear requested by the run itself happens now (a clear_output(wait) stays pending). */
  settlePendingClear(): void {
    if (this.pendingClear === 'run') this.flushPendingClear();
  }

  /** The execution was cancelled before it started: keep the old outputs. */
  cancelPendingClear(): void {
    if (this.pendingClear === 'run') this.setPendingClear(null);
  }

  /**
   * Apply one iopub output of this cell's execution. `update_display_data` is not handled here
   * (it targets outputs in any cell); the caller passes it to the notebook.
   */
  applyOutput(output: Exclude<IopubOutput, { type: 'update_display_data' }>): void {
    switch (output.type) {
      case 'clear_output':
        if (output.wait) this.setPendingClear('wait');
        else {
          this.pendingClear = null;
          this.outputs = [];
          this.emit({ type: 'outputs-reset' });
        }
        return;
      case 'stream': {
        this.flushPendingClear();
        const last = this.outputs[this.outputs.length - 1];
        if (last instanceof StreamOutput && last.name === output.name) {
          const delta = last.append(output.text);
          this.emit({ type: 'stream-appended', index: this.outputs.length - 1, delta });
        } else {
          const stream = new StreamOutput(output.name);
          stream.append(output.text);
          this.pushOutput(stream);
        }
        return;
      }
      case 'display_data':
        this.flushPendingClear();
        this.pushOutput({
          kind: 'display_data',
          data: mimeBundleFromJson(output.data),
          metadata: isJsonObject(output.metadata) ? output.metadata : {},
          displayId: output.display_id ?? null,
          fromFile: false,
          extra: {},
          raw: null,
        });
        return;
      case 'execute_result':
        this.flushPendingClear();
        this.pushOutput({
          kind: 'execute_result',
          executionCount: output.execution_count,
          data: mimeBundleFromJson(output.data),
          metadata: isJsonObject(output.metadata) ? output.metadata : {},
          fromFile: false,
          extra: {},
          raw: null,
        });
        return;
      case 'error':
        this.flushPendingClear();
        this.pushOutput({
          kind: 'error',
          ename: output.ename,
          evalue: output.evalue,
          traceback: output.traceback,
          extra: {},
          raw: null,
        });
        return;
      default:
        return assertNever(output, 'output type');
    }
  }

  /** Plain text appended by the UI itself (the echo of an input() answer). */
  appendStdout(text: string): void {
    this.applyOutput({ type: 'stream', name: 'stdout', text });
  }

  private pushOutput(output: Output): void {
    this.outputs.push(output);
    this.emit({ type: 'output-added', index: this.outputs.length - 1 });
  }

  /** update_display_data: replace the data of this cell's outputs with that display id. */
  updateDisplay(displayId: string, data: MimeBundle, metadata: JsonObject): boolean {
    let hit = false;
    this.outputs.forEach((o, index) => {
      if (o.kind === 'display_data' && o.displayId === displayId) {
        const updated: DisplayDataOutput = { ...o, data: { ...data }, metadata: cloneJson(metadata), raw: null };
        this.outputs[index] = updated;
        hit = true;
        this.emit({ type: 'output-replaced', index });
      }
    });
    return hit;
  }

  /** Copy for paste: same content, new id, no session state (outputs keep where they came from). */
  duplicate(): Cell {
    const json = this.toJson();
    const copy = Cell.fromJson(json, new Set());
    copy.id = newCellId();
    copy.outputs.forEach((output, i) => {
      const original = this.outputs[i];
      if ((output.kind === 'display_data' || output.kind === 'execute_result') && original && 'fromFile' in original) output.fromFile = original.fromFile;
    });
    return copy;
  }

  static fromJson(obj: JsonObject, usedIds: Set<string>): Cell {
    const typeName = typeof obj.cell_type === 'string' ? obj.cell_type : 'raw';
    const known = typeName === 'code' || typeName === 'markdown' || typeName === 'raw';
    const type: CellType = typeName === 'code' ? 'code' : typeName === 'markdown' ? 'markdown' : 'raw';
    let id = typeof obj.id === 'string' && /^[a-zA-Z0-9-_]{1,64}$/.test(obj.id) ? obj.id : '';
    if (!id || usedIds.has(id)) id = newCellId();
    usedIds.add(id);
    const cell = new Cell({
      id,
      type,
      source: joinMultiline(obj.source) ?? '',
      metadata: isJsonObject(obj.metadata) ? cloneJson(obj.metadata) : {},
    });
    if (!known) cell.unknownType = typeName;
    if (obj.source !== undefined) cell.rawSource = cloneJson(obj.source);
    if (isJsonObject(obj.attachments)) cell.attachments = cloneJson(obj.attachments);
    if (Array.isArray(obj.outputs)) {
      cell.outputs = obj.outputs.filter(isJsonObject).map(outputFromJson);
    }
    if (typeof obj.execution_count === 'number') cell.executionCount = obj.execution_count;
    for (const [k, v] of Object.entries(obj)) {
      if (!KNOWN_CELL_KEYS.includes(k)) cell.extra[k] = cloneJson(v);
    }
    return cell;
  }

  toJson(): JsonObject {
    const out: JsonObject = cloneJson(this.extra);
    out.cell_type = this._type === 'raw' && this.unknownType ? this.unknownType : this._type;
    out.id = this.id;
    out.metadata = cloneJson(this.metadata);
    out.source = this.rawSource !== null ? cloneJson(this.rawSource) : splitLines(this._source);
    if (this._type === 'code') {
      out.execution_count = this.executionCount;
      out.outputs = this.outputs.map(outputToJson);
    } else if (this.attachments) {
      out.attachments = cloneJson(this.attachments);
    }
    return out;
  }
}
