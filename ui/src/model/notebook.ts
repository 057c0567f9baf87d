import { Cell, isPersistentChange, type CellChange } from './cell';
import type { JsonObject } from '../util/json';
import { needsTrust, type MimeBundle } from './outputs';

export type NotebookChange =
  /** Cells were inserted, removed or reordered: views reconcile by cell id. */
  | { type: 'structure' }
  | { type: 'cell'; cell: Cell; change: CellChange }
  | { type: 'metadata' }
  /** The notebook became trusted (or not): stored outputs render differently. */
  | { type: 'trust' };

/**
 * A notebook: ordered cells plus notebook metadata and any unknown top-level keys.
 * Pure data with change notifications; no DOM.
 */
export class Notebook {
  private _cells: Cell[] = [];
  metadata: JsonObject;
  /** Unknown top-level keys, written back. */
  extra: JsonObject;
  /** Bumped on every change that alters the saved file. */
  version = 0;
  /**
   * Whether the outputs read from its file may render as HTML, SVG and Markdown (the backend
   * knows which notebooks this machine produced or the person trusted). Outputs of runs in this
   * session render whatever this says. Session state: never saved.
   */
  private _trusted = true;
  private listeners = new Set<(change: NotebookChange) => void>();
  private unsubscribers = new Map<Cell, () => void>();

  constructor(cells: Cell[] = [], metadata: JsonObject = {}, extra: JsonObject = {}) {
    this.metadata = metadata;
    this.extra = extra;
    for (const c of cells) this.adopt(c);
    this._cells = [...cells];
  }

  get trusted(): boolean {
    return this._trusted;
  }

  setTrusted(trusted: boolean): void {
    if (trusted === this._trusted) return;
    this._trusted = trusted;
    this.emit({ type: 'trust' });
  }

  /** Whether every output that needs trust to render may render (what a signature may vouch for). */
  get contentTrusted(): boolean {
    return this._trusted || !this._cells.some((c) => c.outputs.some(needsTrust));
  }

  get cells(): readonly Cell[] {
    return this._cells;
  }

  get length(): number {
    return this._cells.length;
  }

  cell(index: number): Cell | undefined {
    return this._cells[index];
  }

  indexOf(cell: Cell): number {
    return this._cells.indexOf(cell);
  }

  byId(id: string): Cell | undefined {
    return this._cells.find((c) => c.id === id);
  }

  subscribe(listener: (change: NotebookChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(change: NotebookChange): void {
    for (const l of [...this.listeners]) l(change);
  }

  private adopt(cell: Cell): void {
    if (this.unsubscribers.has(cell)) return;
    const off = cell.subscribe((change) => {
      if (isPersistentChange(change)) this.version++;
      this.emit({ type: 'cell', cell, change });
    });
    this.unsubscribers.set(cell, off);
  }

  private release(cell: Cell): void {
    this.unsubscribers.get(cell)?.();
    this.unsubscribers.delete(cell);
  }

  insert(index: number, cells: Cell[]): void {
    const at = Math.max(0, Math.min(index, this._cells.length));
    for (const c of cells) this.adopt(c);
    this._cells.splice(at, 0, ...cells);
    this.version++;
    this.emit({ type: 'structure' });
  }

  /** Remove the cells at these indices; returns them with their indices (ascending). */
  remove(indices: number[]): { index: number; cell: Cell }[] {
    const sorted = [...new Set(indices)].filter((i) => i >= 0 && i < this._cells.length).sort((a, b) => a - b);
    const removed: { index: number; cell: Cell }[] = [];
    for (const i of sorted) {
      const cell = this._cells[i];
      if (cell) removed.push({ index: i, cell });
    }
    for (let k = sorted.length - 1; k >= 0; k--) this._cells.splice(sorted[k] ?? 0, 1);
    for (const r of removed) this.release(r.cell);
    if (removed.length > 0) {
      this.version++;
      this.emit({ type: 'structure' });
    }
    return removed;
  }

  /** Move the contiguous block [start, end] by delta (−1 up, +1 down). Returns false at the edges. */
  moveBlock(start: number, end: number, delta: number): boolean {
    const n = this._cells.length;
    if (start < 0 || end >= n || start > end) return false;
    if (start + delta < 0 || end + delta >= n) return false;
    const block = this._cells.splice(start, end - start + 1);
    this._cells.splice(start + delta, 0, ...block);
    this.version++;
    this.emit({ type: 'structure' });
    return true;
  }

  /** update_display_data: update every output with this display id, in any cell. */
  updateDisplay(displayId: string, data: MimeBundle, metadata: JsonObject): number {
    let hits = 0;
    for (const cell of this._cells) if (cell.updateDisplay(displayId, data, metadata)) hits++;
    return hits;
  }

  touchMetadata(): void {
    this.version++;
    this.emit({ type: 'metadata' });
  }
}
