/**
 * The view of one cell: prompt, editor (or rendered Markdown), outputs, the run's tool calls,
 * notices and input().
 * Owns its DOM; updates only the parts a model change touches.
 */
import type { Cell, CellChange } from '../model/cell';
import { assertNever } from '../util/assert';
import { createOutputView, StreamOutputView, type OutputView } from '../render/outputs';
import { renderMarkdown } from '../render/markdown';
import { frames } from '../util/frame';
import { CellEditor, renderStaticCode } from './editor';
import { rangesFor, staticPieces, type FindMarks } from './findMarks';
import { h } from './dom';
import { SandboxBlockView } from './sandboxBlockView';
import { ToolCallsView } from './toolCallsView';
import { QuestionsView } from './questionForm';
import type { KernelHelpSource } from './kernelHelp';
import { packageForMissingModule } from '../model/missingModule';
import { frameOfOutput } from '../model/frameOutput';

export interface CellViewHost {
  /** A click on the cell (not in its editor). */
  onCellClick(view: CellView, extend: boolean): void;
  /** The editor got focus: edit mode on this cell. */
  onEditorFocus(view: CellView): void;
  /** Double click on rendered Markdown: edit it. */
  onEditRequest(view: CellView): void;
  onBoundary(view: CellView, direction: 'up' | 'down'): boolean;
  onInputReply(view: CellView, value: string): void;
  onToggleOutputScroll(view: CellView): void;
  onToggleOutputCollapse(view: CellView): void;
  /** Run the cell again, after a block was allowed. */
  onRunAgain?(view: CellView): void;
  /** Cells shown but not editable (an agent's). */
  readonly readOnly?: boolean;
  /** Completion and help from the kernel for code cells. */
  readonly kernelHelp?: () => KernelHelpSource | null;
  /** "Install X" under a ModuleNotFoundError was clicked. */
  onInstallRequest?(spec: string): void;
  /**
   * "Open in grid" under a frame shown as a result: open variable `name` in the data grid.
   * Resolves to what went wrong, in words, or null.
   */
  onOpenFrame?(name: string): Promise<string | null>;
}

export function promptText(cell: Cell): string {
  if (cell.type !== 'code') return '';
  if (cell.runState === 'queued' || cell.runState === 'running') return '[*]';
  return cell.executionCount !== null ? `[${cell.executionCount}]` : '[ ]';
}

function promptLabel(cell: Cell): string {
  switch (cell.runState) {
    case 'queued':
      return 'Queued';
    case 'running':
      return cell.executionCount !== null ? `Running, execution ${cell.executionCount}` : 'Running';
    case 'done':
    case 'failed':
    case 'idle':
      return cell.executionCount !== null ? `Execution ${cell.executionCount}${cell.runState === 'failed' ? ', failed' : ''}` : 'Not run';
    default:
      return assertNever(cell.runState, 'run state');
  }
}

export class CellView {
  readonly element: HTMLElement;
  readonly cell: Cell;
  private readonly host: CellViewHost;
  private readonly promptEl: HTMLElement;
  private readonly editorWrap: HTMLElement;
  private readonly renderedEl: HTMLElement;
  private readonly outputsWrap: HTMLElement;
  private readonly outputsEl: HTMLElement;
  private readonly collapsedNote: HTMLButtonElement;
  private readonly noticeEl: HTMLElement;
  private readonly toolCalls: ToolCallsView;
  private readonly sandboxBlock: SandboxBlockView;
  private readonly questions: QuestionsView;
  private editor: CellEditor | null = null;
  private outputViews: OutputView[] = [];
  private stdinEl: HTMLElement | null = null;
  private unsubscribe: () => void;
  private stickToBottom = true;
  private measureScheduled = false;
  private renderedSource: string | null = null;
  private editing = false;
  /** The static text in `editorWrap` is current (no editor yet). */
  private staticShown = false;
  /** Find's matches in the source (painted by the editor once it is made). */
  private findMarks: FindMarks = { spans: [], current: -1 };

  /** `trusted`: the notebook is trusted, so outputs read from its file render (see `Notebook.trusted`). */
  constructor(cell: Cell, host: CellViewHost, private trusted = true) {
    this.cell = cell;
    this.host = host;
    this.promptEl = h('div', { class: 'prompt' });
    this.editorWrap = h('div', { class: 'cell-editor' });
    // Sanitized and contained like an output (see `.user-content`).
    this.renderedEl = h('div', { class: 'markdown-rendered rendered-markdown user-content' });
    const inputArea = h('div', { class: 'cell-input' }, this.promptEl, h('div', { class: 'cell-input-body' }, this.editorWrap, this.renderedEl));
    this.outputsEl = h('div', { class: 'outputs', role: 'log', 'aria-live': 'off' });
    const collapser = h('button', { class: 'output-collapser', type: 'button', 'aria-label': 'Hide or show the outputs', title: 'Hide or show the outputs (O)' });
    this.collapsedNote = h('button', { class: 'outputs-collapsed', type: 'button', hidden: true, 'aria-label': 'Outputs hidden; show them' });
    this.outputsWrap = h('div', { class: 'outputs-wrap' }, collapser, this.outputsEl, this.collapsedNote);
    this.noticeEl = h('div', { class: 'cell-notice', role: 'alert', hidden: true });
    this.toolCalls = new ToolCallsView(cell);
    this.sandboxBlock = new SandboxBlockView(cell, () => this.host.onRunAgain?.(this));
    // A server's question sits right under the tool-call line it came during.
    this.questions = new QuestionsView('cell-questions');
    this.element = h('div', { class: 'cell', tabindex: -1, role: 'listitem' }, inputArea, this.outputsWrap, this.sandboxBlock.element, this.toolCalls.element, this.questions.element, this.noticeEl);
    this.element.dataset.cellId = cell.id;

    // The editor is made when the pointer comes over the text, so that a click lands in it;
    // a click without a hover first (a touch) places the cursor where it fell.
    this.editorWrap.addEventListener('pointerenter', () => this.ensureEditor());
    this.editorWrap.addEventListener('mousedown', (e) => {
      if (this.editor || !(e.target instanceof Element) || !e.target.closest('.cell-static')) return;
      e.preventDefault();
      const editor = this.ensureEditor();
      const pos = editor.view.posAtCoords({ x: e.clientX, y: e.clientY });
      if (pos !== null) editor.view.dispatch({ selection: { anchor: pos } });
      editor.focus();
    });
    this.element.addEventListener('mousedown', (e) => {
      const target = e.target;
      if (!(target instanceof Element)) return;
      if (target.closest('.cm-editor, .cell-static') || target.closest('input, button, a, summary, select')) {
        if (target.closest('.cm-editor') && e.shiftKey) return;
        if (!target.closest('.cm-editor')) this.host.onCellClick(this, e.shiftKey);
        return;
      }
      this.host.onCellClick(this, e.shiftKey);
    });
    this.renderedEl.addEventListener('dblclick', () => this.host.onEditRequest(this));
    collapser.addEventListener('click', () => this.host.onToggleOutputCollapse(this));
    this.collapsedNote.addEventListener('click', () => this.host.onToggleOutputCollapse(this));
    this.outputsEl.addEventListener('click', (e) => {
      if (e.target instanceof Element && e.target.closest('.output-prompt')) this.host.onToggleOutputScroll(this);
    });
    this.outputsEl.addEventListener('scroll', () => {
      const el = this.outputsEl;
      this.stickToBottom = el.scrollTop + el.clientHeight >= el.scrollHeight - 8;
    }, { passive: true });

    this.unsubscribe = cell.subscribe((change) => this.onChange(change));
    this.syncType();
    for (const output of cell.outputs) this.addOutput(output);
    this.syncPrompt();
    this.syncMetadata();
    this.syncNotice();
    this.syncPendingClear();
    if (cell.inputRequest) this.syncInputRequest();
  }

  private onChange(change: CellChange): void {
    switch (change.type) {
      case 'source':
        if (!change.fromEditor) {
          if (this.editor) this.editor.setText(this.cell.source);
          else this.staticShown = false;
        }
        this.syncRendered();
        return;
      case 'cell-type':
        this.syncType();
        this.syncPrompt();
        return;
      case 'outputs-reset':
        for (const v of this.outputViews) {
          v.dispose();
          v.element.remove();
        }
        this.outputViews = [];
        this.stickToBottom = true;
        this.syncPendingClear();
        this.syncOutputsVisibility();
        this.keepAtBottom();
        return;
      case 'output-added': {
        const output = this.cell.outputs[change.index];
        if (output) this.addOutput(output);
        this.syncPendingClear();
        return;
      }
      case 'output-replaced': {
        const output = this.cell.outputs[change.index];
        const old = this.outputViews[change.index];
        if (!output || !old) return;
        const view = this.makeOutputView(output);
        old.element.replaceWith(view.element);
        old.dispose();
        this.outputViews[change.index] = view;
        return;
      }
      case 'stream-appended': {
        const view = this.outputViews[change.index];
        if (view instanceof StreamOutputView) view.append(change.delta);
        return;
      }
      case 'execution-count':
      case 'run-state':
        this.syncPrompt();
        return;
      case 'notice':
        this.syncNotice();
        return;
      case 'input-request':
        this.syncInputRequest();
        return;
      case 'metadata':
        this.syncMetadata();
        this.keepAtBottom();
        return;
      case 'pending-clear':
        this.syncPendingClear();
        return;
      case 'tool-calls':
        this.toolCalls.changed();
        return;
      case 'questions':
        this.questions.sync(this.cell.questions);
        this.keepAtBottom();
        return;
      case 'sandbox-block':
        this.sandboxBlock.changed();
        return;
      default:
        assertNever(change, 'cell change');
    }
  }

  private makeOutputView(output: (typeof this.cell.outputs)[number]): OutputView {
    const view = createOutputView(output, { trusted: this.trusted, onStreamRendered: () => this.keepAtBottom() });
    const install = this.host.onInstallRequest?.bind(this.host);
    const spec = output.kind === 'error' && install ? packageForMissingModule(output.ename, output.evalue) : null;
    if (spec && install) {
      const button = h('button', { class: 'button button-small install-offer', type: 'button', text: `Install ${spec}`, title: `Install ${spec} with pip into the kernel's Python environment` });
      button.addEventListener('click', () => install(spec));
      view.element.append(button);
    }
    const openFrame = this.host.onOpenFrame?.bind(this.host);
    const frame = openFrame ? frameOfOutput(output) : null;
    if (frame !== null && openFrame) view.element.append(frameAction(frame, openFrame));
    return view;
  }

  /** The notebook was trusted (or not): outputs read from the file render anew. */
  setTrusted(trusted: boolean): void {
    if (trusted === this.trusted) return;
    this.trusted = trusted;
    this.cell.outputs.forEach((output, index) => {
      const old = this.outputViews[index];
      if (!old || (output.kind !== 'display_data' && output.kind !== 'execute_result') || !output.fromFile) return;
      const view = this.makeOutputView(output);
      old.element.replaceWith(view.element);
      old.dispose();
      this.outputViews[index] = view;
    });
  }

  private addOutput(output: (typeof this.cell.outputs)[number]): void {
    const view = this.makeOutputView(output);
    this.outputViews.push(view);
    this.outputsEl.insertBefore(view.element, this.stdinEl);
    this.syncOutputsVisibility();
    this.keepAtBottom();
  }

  /**
   * After the next render: a scroll area that was at its bottom stays there while output
   * streams in, and an area that overflows gets a visible edge. One layout read per frame.
   */
  private keepAtBottom(): void {
    if (this.measureScheduled) return;
    this.measureScheduled = true;
    frames.afterRender(() => {
      this.measureScheduled = false;
      const el = this.outputsEl;
      const overflowing = el.scrollHeight > el.clientHeight + 1;
      el.classList.toggle('overflowing', overflowing);
      if (this.stickToBottom && overflowing) el.scrollTop = el.scrollHeight;
    });
  }

  private syncType(): void {
    const type = this.cell.type;
    this.element.dataset.cellType = type;
    this.outputsWrap.hidden = type !== 'code';
    if (this.editor) this.editor.setType(type);
    else this.staticShown = false;
    this.syncRendered();
    this.syncOutputsVisibility();
  }

  /** The text as the editor shows it, until the editor is made. */
  private ensureInput(): void {
    if (this.editor || this.staticShown) return;
    renderStaticCode(this.editorWrap, this.cell.source, this.cell.type);
    this.staticShown = true;
  }

  private ensureEditor(): CellEditor {
    if (this.editor) return this.editor;
    this.editorWrap.replaceChildren();
    const label = `${this.cell.type === 'code' ? 'Code' : this.cell.type === 'markdown' ? 'Markdown' : 'Raw'} cell editor`;
    this.editor = new CellEditor(
      this.editorWrap,
      this.cell.source,
      this.cell.type,
      {
        onChange: (text) => this.cell.setSource(text, true),
        onFocus: () => this.host.onEditorFocus(this),
        onBoundary: (direction) => this.host.onBoundary(this, direction),
        help: this.host.kernelHelp,
      },
      label,
      this.host.readOnly === true,
    );
    if (this.findMarks.spans.length > 0) this.editor.setFindMarks(this.findMarks);
    return this.editor;
  }

  /** Markdown: show the rendered text unless the cell is being edited or was not rendered yet. */
  private syncRendered(): void {
    const showRendered = this.cell.type === 'markdown' && this.cell.rendered && !this.editing;
    this.renderedEl.hidden = !showRendered;
    this.editorWrap.hidden = showRendered;
    this.element.classList.toggle('rendered', showRendered);
    if (showRendered && this.renderedSource !== this.cell.source) {
      this.renderedSource = this.cell.source;
      if (this.cell.source.trim()) {
        this.renderedEl.replaceChildren(renderMarkdown(this.cell.source, this.cell.attachments));
      } else {
        this.renderedEl.replaceChildren(h('p', { class: 'markdown-empty', text: 'Empty Markdown cell. Double-click or press Enter to edit.' }));
      }
    }
    if (!showRendered) this.ensureInput();
  }

  private syncPrompt(): void {
    const cell = this.cell;
    this.element.dataset.state = cell.runState;
    this.promptEl.textContent = promptText(cell);
    this.promptEl.setAttribute('aria-label', cell.type === 'code' ? promptLabel(cell) : '');
    this.promptEl.title = cell.type === 'code' ? promptLabel(cell) : '';
  }

  private syncNotice(): void {
    const notice = this.cell.notice;
    this.noticeEl.hidden = notice === null;
    this.noticeEl.textContent = notice?.text ?? '';
    this.noticeEl.dataset.kind = notice?.kind ?? '';
  }

  private syncPendingClear(): void {
    this.outputsEl.classList.toggle('stale', this.cell.pendingClear === 'run' && this.outputViews.length > 0);
  }

  private syncMetadata(): void {
    const hidden = this.cell.outputsHidden;
    this.outputsWrap.classList.toggle('collapsed', hidden);
    this.outputsEl.hidden = hidden;
    this.collapsedNote.hidden = !hidden;
    this.collapsedNote.textContent = `Outputs hidden (${this.cell.outputs.length}). Show`;
    this.outputsEl.classList.toggle('expanded', !this.cell.outputsScrolled);
  }

  private syncOutputsVisibility(): void {
    const empty = this.outputViews.length === 0 && this.stdinEl === null;
    this.outputsWrap.classList.toggle('empty', empty);
  }

  private syncInputRequest(): void {
    const req = this.cell.inputRequest;
    if (this.stdinEl) {
      this.stdinEl.remove();
      this.stdinEl = null;
    }
    if (req) {
      const input = h('input', {
        class: 'stdin-input',
        type: req.password ? 'password' : 'text',
        'aria-label': req.prompt ? `Input requested: ${req.prompt}` : 'Input requested by the code',
        autocomplete: 'off',
        spellcheck: 'false',
      });
      const label = h('span', { class: 'stdin-label', text: req.prompt });
      const row = h('div', { class: 'stdin-prompt' }, label, input);
      input.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' && !e.shiftKey && !e.ctrlKey && !e.altKey && !e.metaKey) {
          e.preventDefault();
          e.stopPropagation();
          this.host.onInputReply(this, input.value);
        }
      });
      this.stdinEl = row;
      this.outputsEl.appendChild(row);
      // The code waits for an answer: take the focus, as JupyterLab does.
      queueMicrotask(() => input.focus());
      this.keepAtBottom();
    }
    this.syncOutputsVisibility();
  }

  // ---- called by the notebook view

  setSelected(selected: boolean, active: boolean): void {
    this.element.classList.toggle('selected', selected);
    this.element.classList.toggle('active', active);
    if (active) this.element.setAttribute('aria-current', 'true');
    else this.element.removeAttribute('aria-current');
    // The active cell is one Enter from being edited: its editor is ready.
    if (active && !this.editorWrap.hidden) this.ensureEditor();
  }

  setEditing(editing: boolean): void {
    if (editing === this.editing) {
      this.element.classList.toggle('editing', editing);
      return;
    }
    this.editing = editing;
    this.element.classList.toggle('editing', editing);
    this.syncRendered();
  }

  setIndex(index: number): void {
    const kind = this.cell.type === 'code' ? 'Code' : this.cell.type === 'markdown' ? 'Markdown' : 'Raw';
    this.element.setAttribute('aria-label', `${kind} cell ${index + 1}`);
  }

  focusEditor(where: 'start' | 'end' | 'keep' = 'keep'): void {
    this.ensureEditor().focus(where);
  }

  get editorHasFocus(): boolean {
    return this.editor?.hasFocus ?? false;
  }

  get editorWantsEscape(): boolean {
    return this.editor?.wantsEscape ?? false;
  }

  /** The editor's selected text ('' without an editor or a selection). */
  get selectedText(): string {
    return this.editor?.selectedText ?? '';
  }

  get cursorOffsets(): number[] {
    return this.editor?.cursorOffsets ?? [];
  }

  /**
   * Find's matches in the source: the editor paints them; before it is made, the DOM ranges
   * of the static text are returned for the caller to highlight (none while rendered Markdown shows).
   */
  markFind(marks: FindMarks): { ranges: Range[]; current: Range | null } {
    const had = this.findMarks.spans.length > 0;
    this.findMarks = marks;
    const none = { ranges: [], current: null };
    if (this.editor) {
      if (had || marks.spans.length > 0) this.editor.setFindMarks(marks);
      return none;
    }
    const root = this.editorWrap.hidden ? null : this.editorWrap.querySelector('.cell-static');
    if (marks.spans.length === 0 || !root) return none;
    const ranges = rangesFor(staticPieces(root), marks.spans);
    return { ranges, current: ranges[marks.current] ?? null };
  }

  /** Replace ranges of the source through the editor, so that Undo takes it back. */
  replaceInSource(changes: readonly { from: number; to: number; insert: string }[]): void {
    this.ensureEditor().replace(changes);
  }

  /** Edit the cell with this range of its source selected. */
  selectInSource(from: number, to: number): void {
    const editor = this.ensureEditor();
    editor.select(from, to);
    editor.focus();
  }

  /** Where a source offset is drawn by the editor (null without an editor). */
  sourceCoords(offset: number): { top: number; bottom: number } | null {
    return this.editor?.coordsAt(offset) ?? null;
  }

  get outputsElement(): HTMLElement {
    return this.outputsEl;
  }

  focusStdin(): boolean {
    const input = this.stdinEl?.querySelector('input');
    if (!input) return false;
    input.focus();
    return true;
  }

  dispose(): void {
    this.unsubscribe();
    for (const v of this.outputViews) v.dispose();
    this.editor?.destroy();
    this.element.remove();
  }
}

/**
 * "Open in grid" under a frame shown as a result. Made from the name the kernel put in the
 * result's metadata (checked by `frameOfOutput`), outside the output's own box: nothing the
 * output's HTML contains makes or reaches it.
 */
function frameAction(name: string, open: (name: string) => Promise<string | null>): HTMLElement {
  const button = h('button', { class: 'button button-secondary button-small frame-open', type: 'button', text: 'Open in grid', title: `Open ${name} in the data grid`, 'aria-label': `Open ${name} in the data grid` });
  const status = h('span', { class: 'panel-status frame-open-status', role: 'status', 'aria-live': 'polite' });
  button.addEventListener('click', () => {
    status.textContent = '';
    void open(name).then((problem) => {
      status.textContent = problem ?? '';
    });
  });
  return h('div', { class: 'frame-open-row', 'data-frame': name }, button, status);
}
