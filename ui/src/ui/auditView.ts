/**
 * The Audit log tab: the workspace's log newest first, as a table, with a search field and two
 * selects. The entries are indexed once per load (AuditIndex); a filter change re-renders only
 * the first 200 matches ("Show more" adds 200), so typing stays instant with thousands.
 */
import * as ipc from '../ipc';
import type { AuditEntry, CallDecision, DecidedBy } from '../ipc';
import { DECIDED_BY, howWords, prettyArguments } from '../model/approvals';
import { AuditIndex, formatAuditTime, NO_FILTER, whoWords, type AuditFilter, type AuditRow } from '../model/audit';
import { clipEscaped, escapeUntrusted, escapeUntrustedLines } from '../model/untrusted';
import { h } from './dom';
import { icon } from './icons';

export interface AuditBackend {
  auditLog(): Promise<AuditEntry[]>;
  exportAuditLog(): Promise<string | null>;
}

const defaultBackend: AuditBackend = {
  auditLog: () => ipc.auditLog(),
  exportAuditLog: () => ipc.exportAuditLog(),
};

/** Rows rendered at first, and added by each "Show more". */
export const PAGE = 200;
/** Characters of arguments shown in a row before "…". */
const ARGS_SHOWN = 90;
/** Characters of arguments in a row's tooltip. */
const ARGS_TITLE = 2000;
/** New tool calls re-read the log at most this often while the tab is shown. */
const REFRESH_DEBOUNCE_MS = 400;

const DECISIONS: readonly [CallDecision | 'all', string][] = [
  ['all', 'Any decision'],
  ['approved', 'Approved'],
  ['rejected', 'Rejected'],
  ['timed_out', 'Timed out'],
];

function isDecision(v: string): v is CallDecision | 'all' {
  return DECISIONS.some(([d]) => d === v);
}

function isDecidedBy(v: string): v is DecidedBy | 'all' {
  return v === 'all' || (DECIDED_BY as readonly string[]).includes(v);
}

export class AuditView {
  readonly element: HTMLElement;
  private index = new AuditIndex([]);
  private filter: AuditFilter = { ...NO_FILTER };
  private matches: AuditRow[] = [];
  private limit = PAGE;
  private loaded = false;
  private stale = true;
  private visible = false;
  private loading: Promise<void> | null = null;
  private refreshTimer: ReturnType<typeof setTimeout> | null = null;
  /** Rows whose arguments are shown whole. */
  private readonly expanded = new WeakSet<AuditEntry>();
  /** Each row's element once built (a filter shows mostly rows it showed before). */
  private rowElements = new WeakMap<AuditRow, HTMLTableRowElement>();
  /** The rows in the table now. */
  private rendered: AuditRow[] = [];
  private readonly search: HTMLInputElement;
  private readonly decisionSelect: HTMLSelectElement;
  private readonly howSelect: HTMLSelectElement;
  private readonly count: HTMLElement;
  private readonly status: HTMLElement;
  private readonly table: HTMLTableElement;
  private readonly body: HTMLTableSectionElement;
  private readonly more: HTMLButtonElement;
  private readonly empty: HTMLElement;
  private readonly exportButton: HTMLButtonElement;

  constructor(private readonly backend: AuditBackend = defaultBackend) {
    const refresh = h('button', { id: 'audit-refresh', class: 'button button-secondary', type: 'button' }, icon('refresh'), h('span', { text: 'Refresh' }));
    refresh.addEventListener('click', () => void this.load());
    this.exportButton = h('button', { id: 'audit-export', class: 'button button-secondary', type: 'button', title: 'Save the whole audit log to a file' }, icon('export'), h('span', { text: 'Export…' }));
    this.exportButton.addEventListener('click', () => void this.export());
    this.status = h('span', { id: 'audit-status', class: 'audit-status', role: 'status', 'aria-live': 'polite' });

    this.search = h('input', { id: 'audit-search', class: 'text-input', type: 'search', placeholder: 'Search tools, arguments, cells…', 'aria-label': 'Search the audit log', autocomplete: 'off', spellcheck: 'false' });
    this.search.addEventListener('input', () => this.setFilter({ text: this.search.value }));
    this.decisionSelect = h('select', { id: 'audit-decision', class: 'select', 'aria-label': 'Decision' });
    for (const [value, label] of DECISIONS) this.decisionSelect.appendChild(h('option', { value, text: label }));
    this.decisionSelect.addEventListener('change', () => {
      const v = this.decisionSelect.value;
      if (isDecision(v)) this.setFilter({ decision: v });
    });
    this.howSelect = h('select', { id: 'audit-how', class: 'select', 'aria-label': 'How it was decided' });
    this.howSelect.appendChild(h('option', { value: 'all', text: 'Decided any way' }));
    for (const by of DECIDED_BY) this.howSelect.appendChild(h('option', { value: by, text: capitalize(howWords(by)) }));
    this.howSelect.addEventListener('change', () => {
      const v = this.howSelect.value;
      if (isDecidedBy(v)) this.setFilter({ how: v });
    });

    this.count = h('div', { id: 'audit-count', class: 'audit-count', 'aria-live': 'polite' });
    this.body = h('tbody');
    this.table = h(
      'table',
      { id: 'audit-table', class: 'audit-table' },
      h(
        'thead',
        {},
        h('tr', {}, ...['Time', 'Who', 'Tool', 'Arguments', 'Decision', 'How', 'Outcome', 'Duration'].map((t) => h('th', { scope: 'col', text: t }))),
      ),
      this.body,
    );
    this.table.addEventListener('click', (e) => this.onTableClick(e));
    this.more = h('button', { id: 'audit-more', class: 'button button-secondary', type: 'button', text: 'Show more', hidden: true });
    this.more.addEventListener('click', () => {
      this.limit += PAGE;
      this.render();
    });
    this.empty = h('p', { id: 'audit-empty', class: 'panel-empty', hidden: true });

    this.element = h(
      'div',
      { class: 'audit' },
      h('div', { class: 'audit-toolbar' }, refresh, this.exportButton, this.status),
      h('div', { class: 'audit-filters', role: 'search' }, this.search, this.decisionSelect, this.howSelect),
      this.count,
      h('div', { class: 'audit-table-wrap' }, this.table),
      this.empty,
      h('div', { class: 'audit-more-row' }, this.more),
    );
  }

  onShow(): void {
    this.visible = true;
    if (this.stale || !this.loaded) void this.load();
  }

  onHide(): void {
    this.visible = false;
  }

  /** A tool call ended: the log has a new entry (re-read soon while shown, else on showing). */
  onToolCall(): void {
    this.stale = true;
    if (!this.visible) return;
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      void this.load();
    }, REFRESH_DEBOUNCE_MS);
  }

  /** Another workspace: its own log. */
  invalidate(): void {
    this.stale = true;
    this.loaded = false;
    this.index = new AuditIndex([]);
    this.matches = [];
    if (this.visible) void this.load();
    else this.render();
  }

  /** Read the whole log again (one read at a time; a request meanwhile reads once more after). */
  async load(): Promise<void> {
    if (this.loading) {
      this.stale = true;
      return this.loading;
    }
    this.stale = false;
    this.loading = (async () => {
      try {
        const entries = await this.backend.auditLog();
        this.index = new AuditIndex(entries);
        this.loaded = true;
        this.applyFilter(false);
      } catch (err) {
        this.say(`The audit log could not be read: ${ipc.toBackendError(err).message}`);
      } finally {
        this.loading = null;
      }
    })();
    await this.loading;
    if (this.stale && this.visible) await this.load();
  }

  private setFilter(change: Partial<AuditFilter>): void {
    this.filter = { ...this.filter, ...change };
    this.applyFilter(true);
  }

  private applyFilter(resetLimit: boolean): void {
    if (resetLimit) this.limit = PAGE;
    this.matches = this.index.filter(this.filter);
    this.render();
  }

  private render(): void {
    const total = this.index.size;
    const shown = Math.min(this.limit, this.matches.length);
    const rows = this.matches.slice(0, shown);
    if (rows.length !== this.rendered.length || rows.some((r, i) => r !== this.rendered[i])) {
      const now = Date.now();
      const frag = document.createDocumentFragment();
      for (const row of rows) {
        let tr = this.rowElements.get(row);
        if (!tr) {
          tr = this.renderRow(row, now);
          this.rowElements.set(row, tr);
        }
        frag.appendChild(tr);
      }
      this.body.replaceChildren(frag);
      this.rendered = rows;
    }
    const filtered = this.filter.text.trim() !== '' || this.filter.decision !== 'all' || this.filter.how !== 'all';
    const n = (x: number): string => x.toLocaleString('en-US');
    if (!this.loaded) this.count.textContent = 'Loading…';
    else if (total === 0) this.count.textContent = '';
    else if (filtered) this.count.textContent = `${n(this.matches.length)} of ${n(total)} entries match${shown < this.matches.length ? ` · showing the newest ${n(shown)}` : ''}`;
    else this.count.textContent = `${n(total)} ${total === 1 ? 'entry' : 'entries'}${shown < total ? ` · showing the newest ${n(shown)}` : ''}`;
    this.table.hidden = shown === 0;
    this.empty.hidden = !this.loaded || shown > 0;
    this.empty.textContent = total === 0 ? 'No tool calls have been made in this workspace yet.' : 'No entries match the search.';
    this.more.hidden = shown >= this.matches.length;
    this.more.textContent = `Show ${n(Math.min(PAGE, this.matches.length - shown))} more`;
  }

  private renderRow(row: AuditRow, now: number): HTMLTableRowElement {
    const e = row.entry;
    const who = whoWords(e);
    const tr = document.createElement('tr');
    tr.dataset.decision = e.decision;
    tr.dataset.decidedBy = e.decided_by;
    const td = (cls: string, text: string, title?: string): HTMLTableCellElement => {
      const c = document.createElement('td');
      c.className = cls;
      c.textContent = text;
      if (title) c.title = title;
      return c;
    };
    tr.appendChild(td('audit-time', formatAuditTime(e.time, now), new Date(e.time).toLocaleString()));
    tr.appendChild(td('audit-who', who, e.execution_id && e.origin ? `${who} (run ${escapeUntrusted(e.execution_id)})` : who));
    // The name may wrap after the dot (server. / tool), not inside a word.
    const call = td('audit-call', `${escapeUntrusted(e.server)}.`);
    call.append(document.createElement('wbr'), escapeUntrusted(e.tool));
    tr.appendChild(call);
    const args = document.createElement('td');
    args.className = 'audit-args';
    const full = this.expanded.has(e);
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'audit-args-toggle';
    button.setAttribute('aria-expanded', String(full));
    if (full) {
      const pre = document.createElement('pre');
      pre.textContent = prettyArguments(e.arguments, true).text;
      button.textContent = 'Show less';
      args.append(pre, button);
    } else {
      // Escaped already; cut where no escape or emoji is cut in two.
      button.textContent = clipEscaped(row.argsJson, ARGS_SHOWN);
      button.title = clipEscaped(row.argsJson, ARGS_TITLE);
      args.appendChild(button);
    }
    tr.appendChild(args);
    const decision = td('audit-decision', row.decision);
    decision.dataset.decision = e.decision;
    tr.appendChild(decision);
    tr.appendChild(td('audit-how', row.how, e.reason ? escapeUntrustedLines(e.reason) : undefined));
    tr.appendChild(td('audit-outcome', row.outcome, row.outcome));
    tr.appendChild(td('audit-duration', row.duration));
    (tr as HTMLTableRowElement & { auditEntry?: AuditEntry }).auditEntry = e;
    return tr;
  }

  private onTableClick(e: MouseEvent): void {
    const target = e.target;
    if (!(target instanceof Element)) return;
    const button = target.closest('.audit-args-toggle');
    const tr = button?.closest('tr') as (HTMLTableRowElement & { auditEntry?: AuditEntry }) | null | undefined;
    const entry = tr?.auditEntry;
    if (!tr || !entry) return;
    if (this.expanded.has(entry)) this.expanded.delete(entry);
    else this.expanded.add(entry);
    const row = this.matches.find((r) => r.entry === entry);
    if (!row) return;
    const fresh = this.renderRow(row, Date.now());
    this.rowElements.set(row, fresh);
    tr.replaceWith(fresh);
    fresh.querySelector<HTMLButtonElement>('.audit-args-toggle')?.focus();
  }

  private async export(): Promise<void> {
    this.exportButton.disabled = true;
    try {
      const path = await this.backend.exportAuditLog();
      if (path) this.say(`Exported to ${path}`);
    } catch (err) {
      this.say(`The audit log could not be exported: ${ipc.toBackendError(err).message}`);
    } finally {
      this.exportButton.disabled = false;
    }
  }

  private say(text: string): void {
    this.status.textContent = escapeUntrustedLines(text);
  }
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
