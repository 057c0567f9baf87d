/**
 * Document tabs above the notebook: the notebook, then one tab per agent session on the app's
 * MCP endpoint. An agent's tab is a read-only notebook of the cells the agent ran, with their
 * output as it streams (the agent owns it; the person watches and approves its tool calls).
 * The strip shows only once an agent has run a cell. A tab closes with its ✕: a running
 * session ends first (after "End this agent's session?"), stopping its kernel. Tabs that do
 * not fit the strip's width go into a "more" menu; the one shown always stays in the strip.
 */
import * as ipc from '../ipc';
import type { AgentSession, AgentSessions } from '../model/agents';
import type { Cell } from '../model/cell';
import { escapeUntrusted } from '../model/untrusted';
import { CellView, type CellViewHost } from './cellView';
import { h } from './dom';
import { icon } from './icons';
import { MenuButton } from './menu';

type TabId = 'notebook' | number;

interface AgentTab {
  /** The tab and its close button. */
  wrap: HTMLElement;
  button: HTMLButtonElement;
  close: HTMLButtonElement;
  label: HTMLElement;
  dot: HTMLElement;
}

export interface AgentTabsBackend {
  /** End an agent's session and stop its kernel (the session's number as the `agent` events give it). */
  endAgentSession(session: string): Promise<boolean>;
}

const defaultBackend: AgentTabsBackend = { endAgentSession: (session) => ipc.endAgentSession(session) };

export class DocumentTabs {
  /** The tab strip (goes above the notebook). */
  readonly strip: HTMLElement;
  /** Where an agent's notebook shows (goes beside the notebook's scroller). */
  readonly pane: HTMLElement;
  private readonly notebookTab: HTMLButtonElement;
  private readonly notebookLabel: HTMLElement;
  private readonly tabs = new Map<number, AgentTab>();
  /** Sessions whose tab the person closed: they do not come back. */
  private readonly closed = new Set<number>();
  private active: TabId = 'notebook';
  private view: AgentView | null = null;
  private readonly tabList: HTMLElement;
  private readonly more: MenuButton;
  private readonly confirmBar: HTMLElement;
  private confirming: number | null = null;

  /** `onSwitch(true)`: the notebook shows again. */
  constructor(
    private readonly sessions: AgentSessions,
    private readonly onSwitch: (notebookShown: boolean) => void,
    private readonly backend: AgentTabsBackend = defaultBackend,
  ) {
    this.notebookLabel = h('span', { text: 'Notebook' });
    this.notebookTab = h('button', { id: 'doc-tab-notebook', class: 'doc-tab', type: 'button', role: 'tab', 'aria-selected': 'true', 'aria-controls': 'notebook-scroller' }, icon('file'), this.notebookLabel);
    this.notebookTab.addEventListener('click', () => this.select('notebook'));
    this.tabList = h('div', { class: 'doc-tab-list', role: 'tablist', 'aria-label': 'Notebook and agent sessions' }, this.notebookTab);
    this.tabList.addEventListener('keydown', (e) => this.onKey(e));
    const moreButton = h('button', { id: 'doc-tabs-more', class: 'doc-tabs-more', type: 'button', title: 'More agent sessions', 'aria-label': 'More agent sessions', hidden: true });
    this.more = new MenuButton(moreButton, 'Agent sessions that do not fit');
    this.more.element.classList.add('doc-tabs-more-anchor');
    this.confirmBar = h('div', { id: 'agent-end-confirm', class: 'agent-end-confirm', role: 'alertdialog', 'aria-modal': 'false', 'aria-labelledby': 'agent-end-text', hidden: true });
    this.strip = h('div', { id: 'doc-tabs', class: 'doc-tabs', hidden: true }, h('div', { class: 'doc-tabs-row' }, this.tabList, this.more.element), this.confirmBar);
    if (typeof ResizeObserver !== 'undefined') new ResizeObserver(() => this.fit()).observe(this.tabList);
    this.pane = h('main', { id: 'agent-scroller', class: 'notebook-scroller agent-scroller', role: 'tabpanel', hidden: true, 'aria-label': 'Agent session' });
    sessions.subscribe((change) => {
      if (change.type === 'added') this.addTab(change.session);
      else this.syncTab(change.session);
    });
  }

  /** Is an agent's session showing (the notebook's keys are off)? */
  get showingAgent(): boolean {
    return this.active !== 'notebook';
  }

  setNotebookName(name: string): void {
    this.notebookLabel.textContent = name;
  }

  select(id: TabId): void {
    if (id !== 'notebook' && !this.sessions.get(id)) return;
    this.active = id;
    this.notebookTab.setAttribute('aria-selected', String(id === 'notebook'));
    this.notebookTab.tabIndex = id === 'notebook' ? 0 : -1;
    for (const [sid, tab] of this.tabs) {
      tab.button.setAttribute('aria-selected', String(sid === id));
      tab.button.tabIndex = sid === id ? 0 : -1;
    }
    this.view?.dispose();
    this.view = null;
    if (id === 'notebook') {
      this.pane.hidden = true;
      this.pane.replaceChildren();
      this.onSwitch(true);
      return;
    }
    const session = this.sessions.get(id);
    if (!session) return;
    this.view = new AgentView(session, this.sessions);
    this.pane.replaceChildren(this.view.element);
    this.pane.setAttribute('aria-labelledby', `doc-tab-agent-${id}`);
    this.pane.hidden = false;
    this.onSwitch(false);
    this.view.scrollToEnd(this.pane);
    this.fit();
  }

  private addTab(session: AgentSession): void {
    if (this.closed.has(session.id) || this.tabs.has(session.id)) return;
    const dot = h('span', { class: 'doc-tab-dot', 'aria-hidden': 'true' });
    const label = h('span', { class: 'doc-tab-label' });
    const button = h('button', { id: `doc-tab-agent-${session.id}`, class: 'doc-tab doc-tab-agent', type: 'button', role: 'tab', 'aria-selected': 'false', 'aria-controls': 'agent-scroller', tabindex: -1 }, icon('agent'), label, dot);
    button.addEventListener('click', () => this.select(session.id));
    const close = h('button', { class: 'doc-tab-close', type: 'button', tabindex: -1, 'data-session': session.id }, icon('close'));
    close.addEventListener('click', () => this.askClose(session.id));
    const wrap = h('span', { class: 'doc-tab-wrap', 'data-session': session.id }, button, close);
    this.tabs.set(session.id, { wrap, button, close, label, dot });
    this.tabList.append(wrap);
    this.strip.hidden = false;
    this.syncTab(session);
    this.fit();
  }

  /** The ✕ of a tab: an ended session's tab just closes; a running one asks first. */
  private askClose(id: number): void {
    const session = this.sessions.get(id);
    if (!session || session.ended) {
      this.removeTab(id);
      return;
    }
    this.confirming = id;
    const text = h('span', { id: 'agent-end-text', class: 'agent-end-text', text: `End ${titleOf(session)}’s session? Its kernel stops, and the agent can no longer run code here.` });
    const end = h('button', { id: 'agent-end-yes', class: 'button button-danger', type: 'button', text: 'End session' });
    const cancel = h('button', { id: 'agent-end-cancel', class: 'button button-secondary', type: 'button', text: 'Cancel' });
    const note = h('span', { class: 'agent-end-note', role: 'status' });
    end.addEventListener('click', () => void this.endSession(id, end, note));
    cancel.addEventListener('click', () => this.cancelClose());
    this.confirmBar.replaceChildren(text, h('span', { class: 'agent-end-buttons' }, end, cancel), note);
    this.confirmBar.addEventListener('keydown', this.onConfirmKey);
    this.confirmBar.hidden = false;
    cancel.focus();
  }

  private readonly onConfirmKey = (e: KeyboardEvent): void => {
    if (e.key !== 'Escape') return;
    e.preventDefault();
    e.stopPropagation();
    this.cancelClose();
  };

  private cancelClose(): void {
    const id = this.confirming;
    this.confirming = null;
    this.confirmBar.hidden = true;
    this.confirmBar.replaceChildren();
    if (id !== null) this.tabs.get(id)?.button.focus();
  }

  private async endSession(id: number, button: HTMLButtonElement, note: HTMLElement): Promise<void> {
    button.disabled = true;
    note.textContent = 'Ending the session…';
    try {
      await this.backend.endAgentSession(String(id));
      this.confirming = null;
      this.confirmBar.hidden = true;
      this.confirmBar.replaceChildren();
      this.removeTab(id);
    } catch (err) {
      button.disabled = false;
      const e = ipc.toBackendError(err);
      note.textContent = `The session could not be ended: ${escapeUntrusted(e.message.trim() || ipc.describeError(e))}`;
    }
  }

  private removeTab(id: number): void {
    const tab = this.tabs.get(id);
    if (!tab) return;
    this.closed.add(id);
    this.tabs.delete(id);
    tab.wrap.remove();
    if (this.active === id) {
      this.select('notebook');
      this.notebookTab.focus();
    }
    if (this.tabs.size === 0) this.strip.hidden = true;
    this.fit();
  }

  /**
   * Tabs that do not fit the strip go into the "more" menu (newest last), never the one
   * shown; nothing scrolls sideways, nothing pushes the window wider.
   */
  fit(): void {
    const tabs = [...this.tabs.entries()];
    for (const [, t] of tabs) t.wrap.hidden = false;
    const moreButton = this.more.button;
    moreButton.hidden = true;
    const width = this.tabList.clientWidth;
    // Not laid out (hidden, or a test without layout): nothing to measure.
    if (width === 0 || this.tabList.scrollWidth <= width) {
      this.more.setItems([]);
      return;
    }
    moreButton.hidden = false;
    const hidden: [number, AgentTab][] = [];
    for (let i = tabs.length - 1; i >= 0 && this.tabList.scrollWidth > this.tabList.clientWidth; i--) {
      const entry = tabs[i];
      if (!entry || entry[0] === this.active) continue;
      entry[1].wrap.hidden = true;
      hidden.unshift(entry);
    }
    moreButton.textContent = `+${hidden.length} more`;
    moreButton.setAttribute('aria-label', `${hidden.length} more agent ${hidden.length === 1 ? 'session' : 'sessions'}`);
    this.more.setItems(
      hidden.map(([id]) => {
        const session = this.sessions.get(id);
        const ended = session?.ended ? ' (ended)' : '';
        return { id: `doc-tab-menu-${id}`, label: `${session ? titleOf(session) : `Agent ${id}`}${ended}`, action: () => this.select(id) };
      }),
    );
    moreButton.hidden = hidden.length === 0;
  }

  private syncTab(session: AgentSession): void {
    const tab = this.tabs.get(session.id);
    if (!tab) return;
    const busy = this.sessions.isBusy(session);
    tab.label.textContent = titleOf(session);
    tab.dot.className = `doc-tab-dot ${session.ended ? 'ended' : busy ? 'busy' : 'idle'}`;
    const state = session.ended ? 'ended' : busy ? 'running a cell' : 'idle';
    tab.button.setAttribute('aria-label', `${titleOf(session)}, ${state}`);
    tab.button.title = session.ended ? `This session ended: ${escapeUntrusted(session.ended)}` : `${titleOf(session)} (${state}); read-only`;
    const closeWords = session.ended ? `Close the tab of ${titleOf(session)}` : `End ${titleOf(session)}’s session and close its tab`;
    tab.close.setAttribute('aria-label', closeWords);
    tab.close.title = closeWords;
    if (this.active === session.id) this.view?.syncHeader();
  }

  private onKey(e: KeyboardEvent): void {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
    const ids: TabId[] = ['notebook', ...[...this.tabs.entries()].filter(([, t]) => !t.wrap.hidden).map(([id]) => id)];
    const at = ids.indexOf(this.active);
    const next = ids[(at + (e.key === 'ArrowRight' ? 1 : ids.length - 1)) % ids.length];
    if (next === undefined) return;
    e.preventDefault();
    this.select(next);
    (next === 'notebook' ? this.notebookTab : this.tabs.get(next)?.button)?.focus();
  }
}

/** The session's name (the agent chose it), escaped. */
function titleOf(session: AgentSession): string {
  const name = escapeUntrusted(session.name.replace(/^agent session /, 'Agent '));
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** One agent session, read-only. */
class AgentView implements CellViewHost {
  readonly element: HTMLElement;
  readonly readOnly = true;
  private readonly header: HTMLElement;
  private readonly list: HTMLElement;
  private readonly views = new Map<Cell, CellView>();
  private readonly off: () => void;
  private scroller: HTMLElement | null = null;

  constructor(
    private readonly session: AgentSession,
    private readonly sessions: AgentSessions,
  ) {
    this.header = h('div', { class: 'agent-header', role: 'status', 'aria-live': 'polite' });
    this.list = h('div', { class: 'cells', role: 'list', 'aria-label': 'Cells the agent ran' });
    this.element = h('div', { class: 'notebook agent-notebook', id: `agent-notebook-${session.id}` }, this.header, this.list);
    this.off = session.notebook.subscribe((change) => {
      if (change.type === 'structure') this.reconcile(true);
    });
    this.reconcile(false);
    this.syncHeader();
  }

  syncHeader(): void {
    const s = this.session;
    const busy = this.sessions.isBusy(s);
    const what = s.ended ? `This session ended: ${escapeUntrusted(s.ended)}.` : busy ? 'The agent is running a cell.' : 'Waiting for the agent.';
    this.header.replaceChildren(
      h('strong', { text: titleOf(s) }),
      h('span', { text: ` — ${s.cells} cell${s.cells === 1 ? '' : 's'}. ${what} ` }),
      h('span', { class: 'agent-readonly', text: 'Read-only: the agent owns this notebook; its tool calls ask you.' }),
    );
  }

  scrollToEnd(scroller: HTMLElement): void {
    this.scroller = scroller;
    scroller.scrollTop = scroller.scrollHeight;
  }

  dispose(): void {
    this.off();
    for (const v of this.views.values()) v.dispose();
    this.views.clear();
  }

  private reconcile(follow: boolean): void {
    const s = this.scroller;
    const atEnd = s !== null && s.scrollTop + s.clientHeight >= s.scrollHeight - 40;
    for (const cell of this.session.notebook.cells) {
      if (this.views.has(cell)) continue;
      const view = new CellView(cell, this);
      view.setIndex(this.session.notebook.indexOf(cell));
      this.views.set(cell, view);
      this.list.append(view.element);
    }
    this.syncHeader();
    if (follow && atEnd && s) s.scrollTop = s.scrollHeight;
  }

  onCellClick(): void {}
  onEditorFocus(): void {}
  onEditRequest(): void {}
  onBoundary(): boolean {
    return false;
  }
  onInputReply(): void {}
  onToggleOutputScroll(view: CellView): void {
    view.cell.setOutputsScrolled(!view.cell.outputsScrolled);
  }
  onToggleOutputCollapse(view: CellView): void {
    view.cell.setOutputsHidden(!view.cell.outputsHidden);
  }
}
