/**
 * The data grid: a data frame of the kernel, a page at a time, in a dialog over the notebook.
 * Sorting and filtering happen in the kernel (`frame_page`), so a frame of millions of rows opens
 * as fast as a small one; the grid only ever holds one page. A column header sorts (click: up,
 * down, off; Shift+click adds a key); the filter bar adds conditions; "Copy as code" copies the
 * pandas expression for the current sort and filter, as Positron's data explorer does. Every
 * label and cell is text from the kernel: escaped, set as text, never HTML.
 */
import * as ipc from '../ipc';
import type { FilterOp, FrameFilter, FramePage, FrameQuery, FrameSort } from '../ipc';
import { clipEscaped, escapeUntrusted } from '../model/untrusted';
import { h } from './dom';
import { copyText } from './endpointDialog';
import { icon } from './icons';

export type FramePageSource = (query: FrameQuery) => Promise<FramePage>;

export const PAGE_ROWS = 100;

const OPS: { op: FilterOp; label: string; needsValue: boolean }[] = [
  { op: 'eq', label: '=', needsValue: true },
  { op: 'ne', label: '≠', needsValue: true },
  { op: 'lt', label: '<', needsValue: true },
  { op: 'le', label: '≤', needsValue: true },
  { op: 'gt', label: '>', needsValue: true },
  { op: 'ge', label: '≥', needsValue: true },
  { op: 'contains', label: 'contains', needsValue: true },
  { op: 'startswith', label: 'starts with', needsValue: true },
  { op: 'endswith', label: 'ends with', needsValue: true },
  { op: 'null', label: 'is missing', needsValue: false },
  { op: 'notnull', label: 'is not missing', needsValue: false },
];

const count = (n: number): string => n.toLocaleString('en-US');

export class DataGrid {
  readonly element: HTMLDialogElement;
  private readonly title: HTMLElement;
  private readonly summary: HTMLElement;
  private readonly error: HTMLElement;
  private readonly filterList: HTMLElement;
  private readonly columnSelect: HTMLSelectElement;
  private readonly opSelect: HTMLSelectElement;
  private readonly valueInput: HTMLInputElement;
  private readonly table: HTMLTableElement;
  private readonly codeEl: HTMLElement;
  private readonly copyStatus: HTMLElement;
  private readonly pager: { first: HTMLButtonElement; prev: HTMLButtonElement; next: HTMLButtonElement; last: HTMLButtonElement; where: HTMLElement };
  private name = '';
  private offset = 0;
  private sort: FrameSort[] = [];
  private filters: FrameFilter[] = [];
  private page: FramePage | null = null;
  /** Null counts of the open frame, once counted. */
  private nulls: (number | null)[] | null = null;
  private seq = 0;

  constructor(private readonly source: FramePageSource = ipc.framePage) {
    this.title = h('h2', { id: 'data-grid-title', class: 'settings-title data-grid-title' });
    this.summary = h('span', { id: 'data-grid-summary', class: 'data-grid-summary', role: 'status', 'aria-live': 'polite' });
    this.error = h('p', { id: 'data-grid-error', class: 'panel-error', role: 'alert', hidden: true });
    const close = h('button', { id: 'data-grid-close', class: 'tool tool-small', type: 'button', 'aria-label': 'Close the data grid', title: 'Close' }, icon('close'));
    close.addEventListener('click', () => this.close());

    this.filterList = h('ul', { id: 'data-grid-filters', class: 'data-grid-filters', 'aria-label': 'Filters' });
    this.columnSelect = h('select', { id: 'data-grid-filter-column', class: 'select', 'aria-label': 'Column to filter' });
    this.opSelect = h('select', { id: 'data-grid-filter-op', class: 'select', 'aria-label': 'Condition' });
    for (const o of OPS) this.opSelect.append(h('option', { value: o.op, text: o.label }));
    this.valueInput = h('input', { id: 'data-grid-filter-value', class: 'text-input', type: 'text', placeholder: 'value', 'aria-label': 'Value to compare with', autocomplete: 'off', spellcheck: 'false' });
    this.opSelect.addEventListener('change', () => {
      this.valueInput.disabled = !OPS.find((o) => o.op === this.opSelect.value)?.needsValue;
    });
    const add = h('button', { id: 'data-grid-add-filter', class: 'button button-secondary button-small', type: 'submit', text: 'Add filter' });
    const filterForm = h('form', { class: 'data-grid-filter-form', 'aria-label': 'Add a filter' }, this.columnSelect, this.opSelect, this.valueInput, add);
    filterForm.addEventListener('submit', (e) => {
      e.preventDefault();
      this.addFilter();
    });

    this.table = h('table', { id: 'data-grid-table', class: 'data-grid-table', 'aria-labelledby': 'data-grid-title' });
    const scroller = h('div', { class: 'data-grid-scroller', tabindex: 0 }, this.table);

    const button = (id: string, text: string, label: string, go: () => number): HTMLButtonElement => {
      const b = h('button', { id, class: 'button button-secondary button-small', type: 'button', text, 'aria-label': label });
      b.addEventListener('click', () => this.goTo(go()));
      return b;
    };
    const lastOffset = (): number => Math.max(0, Math.floor(((this.page?.rows ?? 1) - 1) / PAGE_ROWS) * PAGE_ROWS);
    this.pager = {
      first: button('data-grid-first', '«', 'First page', () => 0),
      prev: button('data-grid-prev', '‹', 'Previous page', () => this.offset - PAGE_ROWS),
      next: button('data-grid-next', '›', 'Next page', () => this.offset + PAGE_ROWS),
      last: button('data-grid-last', '»', 'Last page', lastOffset),
      where: h('span', { id: 'data-grid-where', class: 'data-grid-where' }),
    };

    this.codeEl = h('code', { id: 'data-grid-code', class: 'data-grid-code' });
    this.copyStatus = h('span', { class: 'panel-status', role: 'status', 'aria-live': 'polite' });
    const copy = h('button', { id: 'data-grid-copy-code', class: 'button button-secondary button-small', type: 'button', text: 'Copy as code', 'aria-label': 'Copy the code for this sort and filter' });
    copy.addEventListener('click', () => {
      const code = this.page?.code ?? '';
      void copyText(code).then((ok) => {
        this.copyStatus.textContent = ok ? 'Copied.' : 'The clipboard is not available: select the code and copy it.';
      });
    });

    const body = h(
      'div',
      { class: 'data-grid' },
      h('div', { class: 'data-grid-header' }, this.title, this.summary, close),
      filterForm,
      this.filterList,
      this.error,
      scroller,
      h('div', { class: 'data-grid-footer' }, h('div', { class: 'data-grid-pager' }, this.pager.first, this.pager.prev, this.pager.where, this.pager.next, this.pager.last), h('div', { class: 'data-grid-codeline' }, this.codeEl, copy, this.copyStatus)),
    );
    this.element = h('dialog', { id: 'data-grid', class: 'settings-dialog data-grid-dialog', 'aria-labelledby': 'data-grid-title' }, body);
  }

  get isOpen(): boolean {
    return this.element.open;
  }

  get current(): FramePage | null {
    return this.page;
  }

  /** Open the frame in variable `name` at its first page, unsorted and unfiltered. */
  async open(name: string): Promise<void> {
    this.name = name;
    this.offset = 0;
    this.sort = [];
    this.filters = [];
    this.page = null;
    this.nulls = null;
    this.title.textContent = escapeUntrusted(name);
    this.summary.textContent = 'Loading…';
    this.table.replaceChildren();
    this.codeEl.textContent = '';
    this.copyStatus.textContent = '';
    this.renderFilters();
    if (!this.element.open) this.element.showModal();
    await this.load();
    // Counting nulls reads every row: after the first page is shown.
    if (this.page && this.nulls === null) await this.load(true);
  }

  close(): void {
    if (this.element.open) this.element.close();
  }

  /** Sort by column `index`: up, then down, then off. With `add`, as a further key. */
  async sortBy(index: number, add = false): Promise<void> {
    const before = this.sort;
    const at = this.sort.findIndex((s) => s.column === index);
    const current = at >= 0 ? this.sort[at] : undefined;
    const next: FrameSort | null = !current ? { column: index, ascending: true } : current.ascending ? { column: index, ascending: false } : null;
    if (add) {
      const rest = this.sort.filter((s) => s.column !== index);
      this.sort = next ? (at >= 0 ? this.sort.map((s) => (s.column === index ? next : s)) : [...rest, next]) : rest;
    } else {
      this.sort = next ? [next] : [];
    }
    const offset = this.offset;
    this.offset = 0;
    // A sort the kernel could not do (values that do not compare) is taken off again.
    if (!(await this.load())) {
      this.sort = before;
      this.offset = offset;
    }
  }

  /** Add a filter (what the filter bar does). */
  async filter(filter: FrameFilter): Promise<void> {
    this.filters = [...this.filters, filter];
    this.offset = 0;
    const ok = await this.load();
    // A filter the kernel refused (a value not of its column's type) is taken off again: the
    // grid keeps showing the rows it showed.
    if (!ok) {
      this.filters = this.filters.slice(0, -1);
      this.renderFilters();
    }
  }

  private addFilter(): void {
    const column = Number(this.columnSelect.value);
    const op = OPS.find((o) => o.op === this.opSelect.value);
    if (!op || !Number.isInteger(column) || column < 0) return;
    void this.filter({ column, op: op.op, value: op.needsValue ? this.valueInput.value : '' });
  }

  private async removeFilter(index: number): Promise<void> {
    this.filters = this.filters.filter((_, i) => i !== index);
    this.offset = 0;
    await this.load();
  }

  private async goTo(offset: number): Promise<void> {
    const rows = this.page?.rows ?? 0;
    const clamped = Math.max(0, Math.min(offset, Math.max(0, rows - 1)));
    this.offset = clamped - (clamped % PAGE_ROWS);
    await this.load();
  }

  /** Ask for the current page; show it, or say why not and keep the page shown. */
  private async load(nulls = false): Promise<boolean> {
    const seq = ++this.seq;
    const query: FrameQuery = { name: this.name, offset: this.offset, limit: PAGE_ROWS, sort: this.sort, filters: this.filters, nulls };
    try {
      const page = await this.source(query);
      if (seq !== this.seq) return true;
      if (nulls) this.nulls = page.columns.map((c) => c.nulls);
      this.page = page;
      this.error.hidden = true;
      this.render(page);
      return true;
    } catch (err) {
      if (seq !== this.seq) return false;
      this.error.textContent = `The frame could not be shown: ${escapeUntrusted(ipc.toBackendError(err).message)}`;
      this.error.hidden = false;
      if (this.page) this.summary.textContent = this.summaryText(this.page);
      else this.summary.textContent = '';
      return false;
    }
  }

  private summaryText(page: FramePage): string {
    const cols = `${count(page.columns.length)} column${page.columns.length === 1 ? '' : 's'}`;
    return page.rows === page.totalRows ? `${count(page.totalRows)} rows × ${cols}` : `${count(page.rows)} of ${count(page.totalRows)} rows × ${cols}`;
  }

  private render(page: FramePage): void {
    this.summary.textContent = this.summaryText(page);
    this.renderColumnChoices(page);
    this.renderFilters();
    const head = h('tr', {}, h('th', { class: 'data-grid-index', scope: 'col' }));
    page.columns.forEach((col, i) => {
      const key = this.sort.findIndex((s) => s.column === i);
      const dir = key >= 0 ? (this.sort[key]?.ascending ? 'ascending' : 'descending') : 'none';
      const name = escapeUntrusted(col.name);
      const sortButton = h(
        'button',
        { class: 'data-grid-sort', type: 'button', 'data-column': i, title: 'Sort (Shift+click: by this too)', 'aria-label': `Sort by ${name}` },
        h('span', { class: 'data-grid-colname', text: name }),
        h('span', { class: 'data-grid-arrow', 'aria-hidden': 'true', text: dir === 'ascending' ? '▲' : dir === 'descending' ? '▼' : '' }),
        key >= 0 && this.sort.length > 1 ? h('sub', { text: String(key + 1) }) : null,
      );
      sortButton.addEventListener('click', (e) => void this.sortBy(i, e.shiftKey));
      const nulls = this.nulls?.[i] ?? col.nulls;
      head.append(
        h(
          'th',
          { scope: 'col', 'aria-sort': dir },
          sortButton,
          h('span', { class: 'data-grid-dtype', text: escapeUntrusted(col.type) }),
          h('span', { class: 'data-grid-nulls', text: nulls === null || nulls === undefined ? 'nulls: …' : `${count(nulls)} null${nulls === 1 ? '' : 's'}` }),
        ),
      );
    });
    const body = h('tbody', {});
    page.cells.forEach((row, r) => {
      const tr = h('tr', {}, h('th', { class: 'data-grid-index', scope: 'row', text: escapeUntrusted(page.index[r] ?? '') }));
      for (const cell of row) {
        tr.append(cell === null ? h('td', { class: 'data-grid-missing', text: 'NA' }) : h('td', { text: clipEscaped(escapeUntrusted(cell), 200) }));
      }
      body.append(tr);
    });
    this.table.replaceChildren(h('thead', {}, head), body);
    const first = page.rows === 0 ? 0 : page.offset + 1;
    const last = page.offset + page.cells.length;
    this.pager.where.textContent = page.rows === 0 ? 'No rows' : `Rows ${count(first)}–${count(last)} of ${count(page.rows)}`;
    this.pager.first.disabled = this.pager.prev.disabled = page.offset === 0;
    this.pager.next.disabled = this.pager.last.disabled = last >= page.rows;
    this.codeEl.textContent = escapeUntrusted(page.code);
  }

  private renderColumnChoices(page: FramePage): void {
    const names = page.columns.map((c) => escapeUntrusted(c.name));
    const current = [...this.columnSelect.options].map((o) => o.text);
    if (current.length === names.length && current.every((t, i) => t === names[i])) return;
    const chosen = this.columnSelect.value;
    this.columnSelect.replaceChildren(...names.map((n, i) => h('option', { value: String(i), text: n })));
    if (chosen && Number(chosen) < names.length) this.columnSelect.value = chosen;
  }

  private renderFilters(): void {
    const columns = this.page?.columns ?? [];
    this.filterList.replaceChildren(
      ...this.filters.map((f, i) => {
        const op = OPS.find((o) => o.op === f.op);
        const text = `${escapeUntrusted(columns[f.column]?.name ?? `column ${f.column + 1}`)} ${op?.label ?? f.op}${op?.needsValue ? ` ${escapeUntrusted(f.value)}` : ''}`;
        const remove = h('button', { class: 'tool tool-small data-grid-remove-filter', type: 'button', 'aria-label': `Remove the filter ${text}`, title: 'Remove' }, icon('close'));
        remove.addEventListener('click', () => void this.removeFilter(i));
        return h('li', { class: 'data-grid-filter' }, h('span', { text }), remove);
      }),
    );
    this.filterList.hidden = this.filters.length === 0;
  }
}
