/**
 * The Variables tab: the kernel's user variables (name, type, shape or length, size, a one-line
 * value), asked for after each cell while the tab is shown, with one silent request that the
 * notebook never shows and that goes only after the cell's own reply. A data frame opens in the
 * data grid. Names and values are text from the kernel: escaped and set as text.
 */
import * as ipc from '../ipc';
import type { KernelVariable, KernelVariables } from '../ipc';
import { clipEscaped, escapeUntrusted } from '../model/untrusted';
import { DataGrid } from './dataGrid';
import { h } from './dom';
import '../styles/variables.css';

export interface VariablesSource {
  list(): Promise<KernelVariables>;
}

const ipcSource: VariablesSource = { list: ipc.kernelVariables };

/** Bytes in words a person reads at a glance. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** Shape (`1,000 × 3`) or length (`5 items`), when known. */
export function formatShape(v: KernelVariable): string {
  if (v.shape) return v.shape.map((n) => n.toLocaleString('en-US')).join(' × ');
  if (v.length !== undefined) {
    const unit = v.type === 'str' ? 'char' : v.type === 'bytes' || v.type === 'bytearray' ? 'byte' : 'item';
    return `${v.length.toLocaleString('en-US')} ${unit}${v.length === 1 ? '' : 's'}`;
  }
  return '';
}

export class VariablesView {
  readonly element: HTMLElement;
  readonly grid: DataGrid;
  private readonly body: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly error: HTMLElement;
  private readonly more: HTMLElement;
  private shown = false;
  private inFlight = false;
  /** A cell ended while a list was on its way: ask once more after it. */
  private again = false;
  private lastPending = 0;

  constructor(
    private readonly source: VariablesSource = ipcSource,
    grid?: DataGrid,
  ) {
    this.grid = grid ?? new DataGrid();
    this.body = h('tbody', { id: 'variables-body' });
    const table = h(
      'table',
      { id: 'variables-table', class: 'variables-table', 'aria-label': 'Variables' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'Name' }), h('th', { scope: 'col', text: 'Type' }), h('th', { scope: 'col', text: 'Shape' }), h('th', { scope: 'col', text: 'Size' }), h('th', { scope: 'col', text: 'Value' }))),
      this.body,
    );
    this.empty = h('p', { id: 'variables-empty', class: 'panel-empty', text: 'No variables yet: run a cell that assigns one.', hidden: true });
    this.error = h('p', { id: 'variables-error', class: 'panel-error', role: 'alert', hidden: true });
    this.more = h('p', { id: 'variables-more', class: 'panel-hint', hidden: true });
    this.element = h(
      'section',
      { id: 'variables', class: 'panel-section variables', 'aria-labelledby': 'variables-heading' },
      h('h3', { id: 'variables-heading', class: 'panel-heading' }, h('span', { class: 'panel-heading-text', text: 'Variables' })),
      h('p', { class: 'panel-hint', text: 'What the kernel holds, after each cell. Values of your own classes show their type only: ipybox runs none of their code.' }),
      this.error,
      h('div', { class: 'variables-scroller' }, table),
      this.empty,
      this.more,
    );
  }

  onShow(): void {
    this.shown = true;
    void this.refresh();
  }

  onHide(): void {
    this.shown = false;
  }

  /**
   * The notebook's run queue changed to `pending` executions: when one ended (the count fell),
   * list again if the tab is shown. The cell's own output is all in by then.
   */
  runsChanged(pending: number): void {
    const ended = pending < this.lastPending;
    this.lastPending = pending;
    if (ended && this.shown) void this.refresh();
  }

  /** Another kernel (a restart, another notebook): its frames are not the grid's; list again. */
  kernelChanged(): void {
    this.lastPending = 0;
    this.grid.close();
    if (this.shown) void this.refresh();
  }

  /** Ask the kernel again (one request at a time; a cell that ended meanwhile asks once more). */
  async refresh(): Promise<void> {
    if (this.inFlight) {
      this.again = true;
      return;
    }
    this.inFlight = true;
    try {
      do {
        this.again = false;
        try {
          this.render(await this.source.list());
        } catch (err) {
          this.error.textContent = `The variables could not be listed: ${escapeUntrusted(ipc.toBackendError(err).message)}`;
          this.error.hidden = false;
        }
      } while (this.again && this.shown);
    } finally {
      this.inFlight = false;
    }
  }

  /**
   * An output's "Open in grid": open variable `name` when the kernel lists it as a frame now
   * (the output may be older than the variable's value, or come from a file). The name is
   * looked up among the listed variables, never run. Resolves to what went wrong, or null.
   */
  async openFrame(name: string): Promise<string | null> {
    let list: KernelVariables;
    try {
      list = await this.source.list();
    } catch (err) {
      return `The variables could not be listed: ${escapeUntrusted(ipc.toBackendError(err).message)}`;
    }
    if (this.shown) this.render(list);
    const found = list.variables.find((v) => v.name === name);
    if (!found) return `The kernel has no variable ${escapeUntrusted(name)} now: run the cell that makes it.`;
    if (!found.frame) return `${escapeUntrusted(name)} is not a data frame now: its type is ${escapeUntrusted(found.type)}.`;
    void this.grid.open(name);
    return null;
  }

  private render(list: KernelVariables): void {
    this.error.hidden = true;
    this.body.replaceChildren(...list.variables.map((v) => this.row(v)));
    this.empty.hidden = list.variables.length > 0;
    this.more.hidden = list.more <= 0;
    this.more.textContent = list.more > 0 ? `${list.more.toLocaleString('en-US')} more not listed.` : '';
  }

  private row(v: KernelVariable): HTMLElement {
    const name = escapeUntrusted(v.name);
    const type = escapeUntrusted(v.type);
    const value = v.repr === undefined ? '' : clipEscaped(escapeUntrusted(v.repr), 160);
    const nameCell = h('td', { class: 'variable-name' });
    if (v.frame) {
      const open = h('button', { class: 'link-button variable-open', type: 'button', text: name, title: 'Open in the data grid', 'aria-label': `Open ${name} in the data grid` });
      open.addEventListener('click', () => void this.grid.open(v.name));
      nameCell.append(open);
    } else {
      nameCell.append(h('code', { text: name }));
    }
    return h(
      'tr',
      { class: 'variable', 'data-name': v.name },
      nameCell,
      h('td', { class: 'variable-type', text: type, title: v.module ? escapeUntrusted(`${v.module}.${v.type}`) : type }),
      h('td', { class: 'variable-shape', text: formatShape(v) }),
      h('td', { class: 'variable-size', text: v.size === undefined ? '' : formatBytes(v.size) }),
      h('td', { class: 'variable-value', text: value, title: value }),
    );
  }
}
