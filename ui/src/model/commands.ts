import { Cell, type CellType } from './cell';
import { Notebook } from './notebook';

export type Mode = 'command' | 'edit';

export type SelectionChange = { type: 'selection' } | { type: 'mode' };

interface DeletedBatch {
  cells: { index: number; cell: Cell }[];
}

/**
 * Selection, mode and the structural editing commands of a notebook (JupyterLab's notebook
 * actions), without DOM. The active cell is `active`; a range from `anchor` to `active` is selected.
 */
export class NotebookEditor {
  readonly notebook: Notebook;
  private _active = 0;
  private _anchor = 0;
  private _mode: Mode = 'command';
  private deleted: DeletedBatch[] = [];
  private clipboard: Cell[] = [];
  private listeners = new Set<(change: SelectionChange) => void>();

  constructor(notebook: Notebook) {
    this.notebook = notebook;
    if (notebook.length === 0) notebook.insert(0, [new Cell()]);
  }

  subscribe(listener: (change: SelectionChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(change: SelectionChange): void {
    for (const l of [...this.listeners]) l(change);
  }

  get active(): number {
    return this._active;
  }

  get anchor(): number {
    return this._anchor;
  }

  get mode(): Mode {
    return this._mode;
  }

  get activeCell(): Cell | undefined {
    return this.notebook.cell(this._active);
  }

  /** Selected indices, ascending. */
  get selectedIndices(): number[] {
    const lo = Math.min(this._anchor, this._active);
    const hi = Math.max(this._anchor, this._active);
    const out: number[] = [];
    for (let i = lo; i <= hi; i++) out.push(i);
    return out;
  }

  get selectedCells(): Cell[] {
    return this.selectedIndices.map((i) => this.notebook.cell(i)).filter((c): c is Cell => c !== undefined);
  }

  isSelected(index: number): boolean {
    return index >= Math.min(this._anchor, this._active) && index <= Math.max(this._anchor, this._active);
  }

  get canUndoDelete(): boolean {
    return this.deleted.length > 0;
  }

  private clamp(i: number): number {
    return Math.max(0, Math.min(i, this.notebook.length - 1));
  }

  /** Select one cell (clears a range). */
  select(index: number): void {
    const i = this.clamp(index);
    if (i === this._active && i === this._anchor) return;
    this._active = i;
    this._anchor = i;
    this.emit({ type: 'selection' });
  }

  selectCell(cell: Cell): void {
    const i = this.notebook.indexOf(cell);
    if (i >= 0) this.select(i);
  }

  /** Extend the selection to this index (Shift+click). */
  extendTo(index: number): void {
    const i = this.clamp(index);
    if (i === this._active) return;
    this._active = i;
    this.emit({ type: 'selection' });
  }

  selectAll(): void {
    this._anchor = 0;
    this._active = this.notebook.length - 1;
    this.emit({ type: 'selection' });
  }

  /** Move the active cell by delta; a range collapses (J/K, arrows). */
  moveSelection(delta: number): void {
    const lo = Math.min(this._anchor, this._active);
    const hi = Math.max(this._anchor, this._active);
    const from = lo !== hi ? (delta < 0 ? lo : hi) : this._active;
    const i = this.clamp(from + delta);
    this._active = i;
    this._anchor = i;
    this.emit({ type: 'selection' });
  }

  /** Extend the selection by delta (Shift+J/K, Shift+arrows). */
  extendSelection(delta: number): void {
    this.extendTo(this._active + delta);
  }

  setMode(mode: Mode): void {
    if (mode === this._mode) return;
    this._mode = mode;
    if (mode === 'edit') this._anchor = this._active;
    this.emit({ type: 'mode' });
  }

  /** Insert a new cell above/below the active cell and select it. */
  insert(where: 'above' | 'below', type: CellType = 'code'): Cell {
    const lo = Math.min(this._anchor, this._active);
    const hi = Math.max(this._anchor, this._active);
    const at = where === 'above' ? lo : hi + 1;
    const cell = new Cell({ type });
    if (type === 'markdown') cell.rendered = false;
    this.notebook.insert(at, [cell]);
    this._active = at;
    this._anchor = at;
    this.emit({ type: 'selection' });
    return cell;
  }

  /** Append a new cell at the end and select it. */
  append(type: CellType = 'code'): Cell {
    const cell = new Cell({ type });
    if (type === 'markdown') cell.rendered = false;
    this.notebook.insert(this.notebook.length, [cell]);
    this._active = this.notebook.length - 1;
    this._anchor = this._active;
    this.emit({ type: 'selection' });
    return cell;
  }

  /** Delete the selected cells (D D); they can be restored with undoDelete (Z). */
  deleteSelected(): void {
    const indices = this.selectedIndices;
    const removed = this.notebook.remove(indices);
    if (removed.length === 0) return;
    this.deleted.push({ cells: removed });
    if (this.deleted.length > 50) this.deleted.shift();
    if (this.notebook.length === 0) this.notebook.insert(0, [new Cell()]);
    const i = this.clamp(removed[0]?.index ?? 0);
    this._active = i;
    this._anchor = i;
    this._mode = 'command';
    this.emit({ type: 'selection' });
  }

  /** Restore the most recently deleted cells at their positions (Z). */
  undoDelete(): boolean {
    const batch = this.deleted.pop();
    if (!batch) return false;
    for (const { index, cell } of batch.cells) this.notebook.insert(index, [cell]);
    const first = batch.cells[0]?.index ?? 0;
    const last = batch.cells[batch.cells.length - 1]?.index ?? first;
    this._anchor = this.clamp(first);
    this._active = this.clamp(last);
    this.emit({ type: 'selection' });
    return true;
  }

  /** Move the selected cells up (−1) or down (+1). */
  moveSelected(delta: -1 | 1): boolean {
    const lo = Math.min(this._anchor, this._active);
    const hi = Math.max(this._anchor, this._active);
    if (!this.notebook.moveBlock(lo, hi, delta)) return false;
    this._anchor += delta;
    this._active += delta;
    this.emit({ type: 'selection' });
    return true;
  }

  /** Change the type of the selected cells (M, Y, R). */
  changeType(type: CellType): void {
    for (const cell of this.selectedCells) cell.setType(type);
  }

  copy(): void {
    this.clipboard = this.selectedCells.map((c) => c.duplicate());
  }

  cut(): void {
    this.copy();
    this.deleteSelected();
  }

  get hasClipboard(): boolean {
    return this.clipboard.length > 0;
  }

  paste(where: 'above' | 'below'): void {
    if (this.clipboard.length === 0) return;
    const cells = this.clipboard.map((c) => c.duplicate());
    const lo = Math.min(this._anchor, this._active);
    const hi = Math.max(this._anchor, this._active);
    const at = where === 'above' ? lo : hi + 1;
    this.notebook.insert(at, cells);
    this._anchor = at;
    this._active = at + cells.length - 1;
    this.emit({ type: 'selection' });
  }

  /**
   * Split the active cell at these source offsets (Ctrl+Shift+-): the parts become consecutive
   * cells of the same type; the last part is selected.
   */
  split(offsets: number[]): void {
    const cell = this.activeCell;
    if (!cell) return;
    const src = cell.source;
    const cuts = [...new Set(offsets.map((o) => Math.max(0, Math.min(o, src.length))))].sort((a, b) => a - b);
    const parts: string[] = [];
    let prev = 0;
    for (const c of cuts) {
      parts.push(src.slice(prev, c));
      prev = c;
    }
    parts.push(src.slice(prev));
    const trimmed = parts.map((p, i) => (i < parts.length - 1 ? p.replace(/\n$/, '') : p.replace(/^\n/, '')));
    const first = trimmed[0] ?? '';
    cell.setSource(first);
    const rest = trimmed.slice(1).map((s) => {
      const c = new Cell({ type: cell.type, source: s });
      if (cell.type === 'markdown') c.rendered = false;
      return c;
    });
    const at = this._active + 1;
    this.notebook.insert(at, rest);
    this._active = at + rest.length - 1;
    this._anchor = this._active;
    this.emit({ type: 'selection' });
  }

  /** Merge the selected cells into one (Shift+M). */
  mergeSelected(): void {
    const indices = this.selectedIndices;
    if (indices.length < 2) {
      const next = this.notebook.cell(this._active + 1);
      if (!next) return;
      indices.push(this._active + 1);
    }
    const cells = indices.map((i) => this.notebook.cell(i)).filter((c): c is Cell => c !== undefined);
    const first = cells[0];
    if (!first) return;
    first.setSource(cells.map((c) => c.source).join('\n\n'));
    if (first.type === 'code') first.clearOutputs();
    const rest = indices.slice(1);
    this.notebook.remove(rest);
    const i = indices[0] ?? 0;
    this._active = i;
    this._anchor = i;
    this.emit({ type: 'selection' });
  }

  /** Re-point the selection after the notebook was replaced. */
  reset(): void {
    this.deleted = [];
    if (this.notebook.length === 0) this.notebook.insert(0, [new Cell()]);
    this._active = 0;
    this._anchor = 0;
    this._mode = 'command';
    this.emit({ type: 'selection' });
    this.emit({ type: 'mode' });
  }

  /** Keep indices in range after an outside structural change. */
  clampSelection(): void {
    const a = this.clamp(this._active);
    const b = this.clamp(this._anchor);
    if (a !== this._active || b !== this._anchor) {
      this._active = a;
      this._anchor = b;
      this.emit({ type: 'selection' });
    }
  }
}
