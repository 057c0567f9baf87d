/**
 * The notebook view: one CellView per cell, kept in model order (reconciled by cell, so
 * existing DOM and editors survive inserts, deletes and moves), plus selection and mode classes.
 */
import type { Cell } from '../model/cell';
import type { NotebookEditor } from '../model/commands';
import { CellView, type CellViewHost } from './cellView';
import { h } from './dom';

export class NotebookView {
  readonly element: HTMLElement;
  private readonly list: HTMLElement;
  private views = new Map<Cell, CellView>();
  private editor: NotebookEditor;
  private offNotebook: () => void = () => {};
  private offEditor: () => void = () => {};

  constructor(editor: NotebookEditor, private readonly host: CellViewHost) {
    this.editor = editor;
    this.list = h('div', { class: 'cells', role: 'list', 'aria-label': 'Cells' });
    this.element = h('div', { class: 'notebook', id: 'notebook' }, this.list);
    this.attach(editor);
  }

  /** Show another notebook editor (after opening another notebook). */
  attach(editor: NotebookEditor): void {
    this.offNotebook();
    this.offEditor();
    for (const v of this.views.values()) v.dispose();
    this.views.clear();
    this.editor = editor;
    this.offNotebook = editor.notebook.subscribe((change) => {
      if (change.type === 'structure') {
        this.reconcile();
      } else if (change.type === 'trust') {
        for (const view of this.views.values()) view.setTrusted(editor.notebook.trusted);
      } else if (change.type === 'cell' && change.change.type === 'cell-type') {
        const i = editor.notebook.indexOf(change.cell);
        if (i >= 0) this.views.get(change.cell)?.setIndex(i);
      }
    });
    this.offEditor = editor.subscribe(() => this.syncSelection());
    this.reconcile();
  }

  private reconcile(): void {
    const cells = this.editor.notebook.cells;
    const alive = new Set(cells);
    for (const [cell, view] of this.views) {
      if (!alive.has(cell)) {
        view.dispose();
        this.views.delete(cell);
      }
    }
    let prev: Element | null = null;
    cells.forEach((cell, i) => {
      let view = this.views.get(cell);
      if (!view) {
        view = new CellView(cell, this.host, this.editor.notebook.trusted);
        this.views.set(cell, view);
      }
      const expected: Element | null = prev ? prev.nextElementSibling : this.list.firstElementChild;
      if (expected !== view.element) this.list.insertBefore(view.element, expected);
      view.setIndex(i);
      prev = view.element;
    });
    this.editor.clampSelection();
    this.syncSelection();
  }

  syncSelection(): void {
    const ed = this.editor;
    const editing = ed.mode === 'edit';
    ed.notebook.cells.forEach((cell, i) => {
      const view = this.views.get(cell);
      if (!view) return;
      const active = i === ed.active;
      view.setSelected(ed.isSelected(i), active);
      view.setEditing(editing && active);
    });
    this.element.dataset.mode = ed.mode;
    this.element.dataset.multi = ed.selectedIndices.length > 1 ? 'true' : 'false';
  }

  viewOf(cell: Cell | undefined): CellView | undefined {
    return cell ? this.views.get(cell) : undefined;
  }

  get activeView(): CellView | undefined {
    return this.viewOf(this.editor.activeCell);
  }

  /** Scroll the active cell into view (only as far as needed). */
  revealActive(): void {
    const el = this.activeView?.element;
    if (!el) return;
    const scroller = this.element.parentElement;
    if (!scroller) return;
    const r = el.getBoundingClientRect();
    const s = scroller.getBoundingClientRect();
    const margin = 24;
    if (r.top < s.top + margin) scroller.scrollTop += r.top - s.top - margin;
    else if (r.bottom > s.bottom - margin) {
      const delta = Math.min(r.bottom - s.bottom + margin, r.top - s.top - margin);
      if (delta > 0) scroller.scrollTop += delta;
    }
  }
}
