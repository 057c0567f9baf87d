/**
 * Notebook-wide find and replace (Ctrl+F, Ctrl+H, as in JupyterLab): matches in every cell's
 * source — replaceable, one at a time or all, each replacement an edit the cell's Undo takes
 * back — and, read-only, in the text of outputs. Regular expressions and case as options; a
 * count ("3 of 12"); Enter and Shift+Enter go to the next and previous match; Escape closes
 * and gives the keyboard back to the notebook.
 *
 * Searching reads the cells' sources and the outputs' drawn text; painting adds no DOM nodes
 * and makes no editors (see `findMarks.ts`), so a keystroke in a 50-cell notebook is repainted
 * within the frame.
 */
import type { Cell } from '../model/cell';
import type { NotebookEditor } from '../model/commands';
import { compileQuery, findAll, replacementFor, type FindOptions, type Query, type Span } from '../model/find';
import type { Notebook } from '../model/notebook';
import { frames } from '../util/frame';
import { h } from './dom';
import { highlights, outputPieces, rangesFor } from './findMarks';
import { icon } from './icons';
import type { NotebookView } from './notebookView';
import '../styles/navigate.css';

export interface FindHost {
  readonly notebook: Notebook;
  readonly editor: NotebookEditor;
  readonly view: NotebookView;
  /** The notebook's scroll area. */
  readonly scroller: HTMLElement;
  /** Give the keyboard back to the notebook (the active cell, in its mode). */
  focusNotebook(): void;
}

type Match =
  | { kind: 'source'; cell: Cell; from: number; to: number }
  | { kind: 'output'; cell: Cell; range: Range };

/** More than this many matches are not listed: the count says so. */
const MAX_MATCHES = 5000;

export class FindBar {
  readonly element: HTMLElement;
  readonly findInput: HTMLInputElement;
  readonly replaceInput: HTMLInputElement;
  private readonly replaceRow: HTMLElement;
  private readonly countEl: HTMLElement;
  private readonly messageEl: HTMLElement;
  private readonly regexButton: HTMLButtonElement;
  private readonly caseButton: HTMLButtonElement;
  private readonly replaceToggle: HTMLButtonElement;
  private readonly options: FindOptions = { regex: false, caseSensitive: false };
  private query: Query = { kind: 'empty' };
  private matches: Match[] = [];
  private current = -1;
  private errorShown = false;
  private truncated = false;
  /** Cells whose sources show marks, to clear them on the next paint. */
  private marked = new Set<Cell>();
  /** The current match's range when its cell's text shows without an editor. */
  private currentStatic: Range | null = null;
  private offNotebook: (() => void) | null = null;
  private returnTo: Element | null = null;
  private wasEditing = false;
  private readonly researchSoon = (): void => this.search('keep');

  constructor(private readonly host: FindHost) {
    this.findInput = h('input', { id: 'find-input', class: 'text-input find-input', type: 'text', placeholder: 'Find', 'aria-label': 'Find in the notebook', autocomplete: 'off', spellcheck: 'false' });
    this.replaceInput = h('input', { id: 'replace-input', class: 'text-input find-input', type: 'text', placeholder: 'Replace', 'aria-label': 'Replace with', autocomplete: 'off', spellcheck: 'false' });
    const toggle = (id: string, text: string, label: string): HTMLButtonElement => {
      const b = h('button', { id, class: 'find-option', type: 'button', 'aria-pressed': 'false', 'aria-label': label, title: label, text });
      b.addEventListener('click', () => {
        const on = b.getAttribute('aria-pressed') !== 'true';
        b.setAttribute('aria-pressed', String(on));
        if (id === 'find-regex') this.options.regex = on;
        else this.options.caseSensitive = on;
        this.search('first');
        this.findInput.focus();
      });
      return b;
    };
    this.caseButton = toggle('find-case', 'Aa', 'Match case');
    this.regexButton = toggle('find-regex', '.*', 'Use a regular expression');
    this.countEl = h('span', { id: 'find-count', class: 'find-count', role: 'status', 'aria-live': 'polite' });
    const button = (id: string, label: string, content: Node | string, action: () => void): HTMLButtonElement => {
      const b = h('button', { id, class: typeof content === 'string' ? 'button button-small' : 'tool tool-small', type: 'button', 'aria-label': label, title: label });
      b.append(content);
      // The keyboard stays in the bar's fields (WebKit gives a clicked button no focus either):
      // Enter and Escape keep working after a click.
      b.addEventListener('mousedown', (e) => e.preventDefault());
      b.addEventListener('click', () => {
        action();
        if (this.isOpen && !this.element.contains(document.activeElement)) this.findInput.focus();
      });
      return b;
    };
    this.replaceToggle = button('find-toggle-replace', 'Show or hide replace (Ctrl+H)', icon('chevron'), () => this.showReplace(this.replaceRow.hidden));
    this.replaceToggle.setAttribute('aria-expanded', 'false');
    this.replaceRow = h(
      'div',
      { class: 'find-row', hidden: true },
      this.replaceInput,
      button('replace-one', 'Replace this match', 'Replace', () => this.replaceCurrent()),
      button('replace-all', 'Replace all matches in cells', 'Replace all', () => this.replaceAll()),
    );
    this.messageEl = h('div', { id: 'find-message', class: 'find-message', role: 'alert', hidden: true });
    this.element = h(
      'div',
      { id: 'find-bar', class: 'find-bar', role: 'search', 'aria-label': 'Find and replace in the notebook', hidden: true },
      h(
        'div',
        { class: 'find-row' },
        this.replaceToggle,
        this.findInput,
        this.caseButton,
        this.regexButton,
        this.countEl,
        button('find-prev', 'Previous match (Shift+Enter)', icon('up'), () => this.step(-1)),
        button('find-next', 'Next match (Enter)', icon('down'), () => this.step(1)),
        button('find-close', 'Close find (Escape)', icon('close'), () => this.close()),
      ),
      this.replaceRow,
      this.messageEl,
    );
    this.findInput.addEventListener('input', () => {
      this.search('first');
      // As a browser's find does: the first match shows as one types (the active cell stays).
      this.scrollToCurrent();
    });
    this.findInput.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter' || e.isComposing) return;
      e.preventDefault();
      this.step(e.shiftKey ? -1 : 1);
    });
    this.replaceInput.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter' || e.isComposing) return;
      e.preventDefault();
      this.replaceCurrent();
    });
    this.element.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      e.stopPropagation();
      this.close();
    });
  }

  get isOpen(): boolean {
    return !this.element.hidden;
  }

  /** The count as shown ("3 of 12"), for tests and the status. */
  get countText(): string {
    return this.countEl.textContent ?? '';
  }

  /** Open (or focus again) the bar; `replace` shows the replace row too. `prefill` is the
   *  selected text of the cell being edited, if any. */
  open(replace: boolean, prefill = ''): void {
    if (!this.isOpen) {
      const active = document.activeElement;
      this.returnTo = active && active !== document.body ? active : null;
      this.wasEditing = this.host.editor.mode === 'edit';
      this.element.hidden = false;
      this.listen();
    }
    if (prefill && !prefill.includes('\n')) this.findInput.value = prefill;
    if (replace) this.showReplace(true);
    this.search('first');
    const input = replace && this.findInput.value !== '' ? this.replaceInput : this.findInput;
    input.focus();
    input.select();
  }

  close(): void {
    if (!this.isOpen) return;
    const match = this.matches[this.current];
    this.element.hidden = true;
    this.offNotebook?.();
    this.offNotebook = null;
    this.matches = [];
    this.current = -1;
    this.paint();
    const back = this.returnTo;
    this.returnTo = null;
    if (match?.kind === 'source' && this.wasEditing) {
      this.host.editor.selectCell(match.cell);
      this.host.editor.setMode('edit');
      this.host.view.viewOf(match.cell)?.selectInSource(match.from, match.to);
    } else if (back instanceof HTMLElement && back.isConnected && !match) {
      back.focus({ preventScroll: true });
    } else {
      this.host.focusNotebook();
    }
  }

  /** Another notebook was opened: search it instead. */
  notebookChanged(): void {
    this.marked.clear();
    if (!this.isOpen) return;
    this.listen();
    this.search('first');
  }

  private listen(): void {
    this.offNotebook?.();
    this.offNotebook = this.host.notebook.subscribe((change) => {
      if (change.type === 'trust' || change.type === 'structure' || (change.type === 'cell' && change.change.type !== 'run-state' && change.change.type !== 'execution-count' && change.change.type !== 'pending-clear')) {
        // After the outputs are drawn: their text is what is searched.
        frames.afterRender(this.researchSoon);
      }
    });
  }

  private showReplace(show: boolean): void {
    this.replaceRow.hidden = !show;
    this.replaceToggle.setAttribute('aria-expanded', String(show));
    this.element.classList.toggle('with-replace', show);
  }

  /**
   * Search again. `first`: the current match becomes the first one at or after the active
   * cell; `keep`: the same position, as near as it still exists; `after`: the first match at
   * or after a replacement.
   */
  search(at: 'first' | 'keep' | { cell: Cell; offset: number }): void {
    if (!this.isOpen) return;
    const previous = this.matches[this.current];
    this.query = compileQuery(this.findInput.value, this.options);
    this.matches = [];
    this.truncated = false;
    const invalid = this.query.kind === 'invalid';
    this.findInput.setAttribute('aria-invalid', String(invalid));
    // A new query clears what the bar said; a search after an edit keeps what a replacement said.
    if (this.query.kind === 'invalid') this.setMessage(this.query.message);
    else if (at === 'first' || this.errorShown) this.setMessage(null);
    this.errorShown = invalid;
    if (this.query.kind === 'ok') this.collect(this.query.re);
    const cells = this.host.notebook.cells;
    const order = (m: Match): number => cells.indexOf(m.cell);
    if (this.matches.length === 0) this.current = -1;
    else if (at === 'first') {
      const active = this.host.editor.active;
      const i = this.matches.findIndex((m) => order(m) >= active);
      this.current = i < 0 ? 0 : i;
    } else if (at === 'keep') {
      let i = previous ? this.matches.findIndex((m) => m.cell === previous.cell && (m.kind === 'output' || previous.kind === 'output' || m.from >= previous.from)) : 0;
      if (i < 0) i = previous ? this.matches.findIndex((m) => order(m) > order(previous)) : 0;
      this.current = i < 0 ? 0 : i;
    } else {
      const target = cells.indexOf(at.cell);
      const i = this.matches.findIndex((m) => order(m) > target || (m.cell === at.cell && (m.kind === 'output' || m.from >= at.offset)));
      this.current = i < 0 ? 0 : i;
    }
    this.paint();
    this.renderCount();
  }

  private collect(re: RegExp): void {
    for (const cell of this.host.notebook.cells) {
      for (const s of findAll(cell.source, re, MAX_MATCHES - this.matches.length)) this.matches.push({ kind: 'source', cell, from: s.from, to: s.to });
      if (cell.type !== 'code' || cell.outputsHidden || cell.outputs.length === 0) continue;
      const view = this.host.view.viewOf(cell);
      if (!view) continue;
      for (const output of view.outputsElement.querySelectorAll(':scope > .output')) {
        const { text, pieces } = outputPieces(output);
        const spans = findAll(text, re, MAX_MATCHES - this.matches.length);
        for (const range of rangesFor(pieces, spans)) this.matches.push({ kind: 'output', cell, range });
      }
      if (this.matches.length >= MAX_MATCHES) {
        this.truncated = true;
        return;
      }
    }
  }

  private renderCount(): void {
    const n = this.matches.length;
    let text: string;
    if (this.query.kind !== 'ok') text = '';
    else if (n === 0) text = 'No matches';
    else text = `${this.current + 1} of ${n}${this.truncated ? '+' : ''}`;
    this.countEl.textContent = text;
    const match = this.matches[this.current];
    const replaceOne = this.element.querySelector<HTMLButtonElement>('#replace-one');
    if (replaceOne) replaceOne.disabled = match?.kind !== 'source';
    const replaceAll = this.element.querySelector<HTMLButtonElement>('#replace-all');
    if (replaceAll) replaceAll.disabled = !this.matches.some((m) => m.kind === 'source');
    this.element.dataset.where = match?.kind ?? '';
  }

  private setMessage(text: string | null): void {
    this.messageEl.hidden = text === null;
    this.messageEl.textContent = text ?? '';
  }

  /** Highlight every match, the current one apart. */
  private paint(): void {
    const hl = highlights();
    hl?.match.clear();
    hl?.current.clear();
    this.currentStatic = null;
    const bySource = new Map<Cell, { spans: Span[]; current: number }>();
    this.matches.forEach((m, i) => {
      if (m.kind === 'output') {
        (i === this.current ? hl?.current : hl?.match)?.add(m.range);
        return;
      }
      let entry = bySource.get(m.cell);
      if (!entry) bySource.set(m.cell, (entry = { spans: [], current: -1 }));
      if (i === this.current) entry.current = entry.spans.length;
      entry.spans.push({ from: m.from, to: m.to });
    });
    for (const cell of this.marked) {
      if (!bySource.has(cell)) this.host.view.viewOf(cell)?.markFind({ spans: [], current: -1 });
    }
    this.marked = new Set(bySource.keys());
    for (const [cell, marks] of bySource) {
      const view = this.host.view.viewOf(cell);
      if (!view) continue;
      const { ranges, current } = view.markFind(marks);
      for (const r of ranges) (r === current ? hl?.current : hl?.match)?.add(r);
      if (current) this.currentStatic = current;
    }
  }

  /** Go to the next (1) or previous (-1) match: its cell becomes the active one, scrolled to. */
  step(delta: 1 | -1): void {
    const n = this.matches.length;
    if (n === 0) return;
    this.current = (((this.current + delta) % n) + n) % n;
    this.reveal();
    this.renderCount();
  }

  private reveal(): void {
    const match = this.matches[this.current];
    if (!match) return;
    const ed = this.host.editor;
    ed.selectCell(match.cell);
    ed.setMode('command');
    // A match in rendered Markdown shows in its source, as JupyterLab does.
    if (match.kind === 'source' && match.cell.type === 'markdown' && match.cell.rendered) match.cell.setRendered(false);
    this.paint();
    this.scrollToCurrent();
  }

  /** Scroll the current match into view. */
  private scrollToCurrent(): void {
    const match = this.matches[this.current];
    if (!match) return;
    const view = this.host.view.viewOf(match.cell);
    let rect: { top: number; bottom: number } | null = null;
    if (match.kind === 'output') {
      revealIn(view?.outputsElement ?? null, match.range.getBoundingClientRect());
      rect = match.range.getBoundingClientRect();
    } else {
      rect = view?.sourceCoords(match.from) ?? this.currentStatic?.getBoundingClientRect() ?? view?.element.getBoundingClientRect() ?? null;
    }
    if (rect) revealIn(this.host.scroller, rect);
  }

  private replaceCurrent(): void {
    const match = this.matches[this.current];
    if (this.query.kind !== 'ok' || !match) return;
    if (match.kind === 'output') {
      this.setMessage('This match is in an output: outputs show what the code printed and are not changed. Run the cell again to change them.');
      return;
    }
    const insert = replacementFor(match.cell.source, match, this.query, this.replaceInput.value);
    if (insert === null) {
      this.search('keep');
      return;
    }
    this.host.view.viewOf(match.cell)?.replaceInSource([{ from: match.from, to: match.to, insert }]);
    this.setMessage(null);
    this.search({ cell: match.cell, offset: match.from + insert.length });
    this.reveal();
  }

  private replaceAll(): void {
    const query = this.query;
    if (query.kind !== 'ok') return;
    const byCell = new Map<Cell, { from: number; to: number; insert: string }[]>();
    let outputs = 0;
    for (const m of this.matches) {
      if (m.kind === 'output') {
        outputs++;
        continue;
      }
      const insert = replacementFor(m.cell.source, m, query, this.replaceInput.value);
      if (insert === null) continue;
      let list = byCell.get(m.cell);
      if (!list) byCell.set(m.cell, (list = []));
      list.push({ from: m.from, to: m.to, insert });
    }
    let count = 0;
    for (const [cell, changes] of byCell) {
      this.host.view.viewOf(cell)?.replaceInSource(changes);
      count += changes.length;
    }
    const cells = byCell.size;
    const left = outputs === 0 ? '' : outputs === 1 ? ' The match in an output stays as printed.' : ` The ${outputs} matches in outputs stay as printed.`;
    this.setMessage(`Replaced ${count} ${count === 1 ? 'match' : 'matches'} in ${cells} ${cells === 1 ? 'cell' : 'cells'}.${left}`);
    this.search('keep');
  }
}

/** Scroll `container` so that `rect` shows, centred when it has to move. */
function revealIn(container: HTMLElement | null, rect: { top: number; bottom: number }): void {
  if (!container) return;
  const box = container.getBoundingClientRect();
  const margin = 32;
  if (rect.top >= box.top + margin && rect.bottom <= box.bottom - margin) return;
  container.scrollTop += (rect.top + rect.bottom) / 2 - (box.top + box.bottom) / 2;
}
