/**
 * Document tabs above the notebook: the notebook, then one tab per agent session on the app's
 * MCP endpoint. An agent's tab is a read-only notebook of the cells the agent ran, with their
 * output as it streams (the agent owns it; the person watches and approves its tool calls).
 * The strip shows only once an agent has run a cell.
 */
import type { AgentSession, AgentSessions } from '../model/agents';
import type { Cell } from '../model/cell';
import { escapeUntrusted } from '../model/untrusted';
import { CellView, type CellViewHost } from './cellView';
import { h } from './dom';
import { icon } from './icons';

type TabId = 'notebook' | number;

interface AgentTab {
  button: HTMLButtonElement;
  label: HTMLElement;
  dot: HTMLElement;
}

export class DocumentTabs {
  /** The tab strip (goes above the notebook). */
  readonly strip: HTMLElement;
  /** Where an agent's notebook shows (goes beside the notebook's scroller). */
  readonly pane: HTMLElement;
  private readonly notebookTab: HTMLButtonElement;
  private readonly notebookLabel: HTMLElement;
  private readonly tabs = new Map<number, AgentTab>();
  private active: TabId = 'notebook';
  private view: AgentView | null = null;

  /** `onSwitch(true)`: the notebook shows again. */
  constructor(
    private readonly sessions: AgentSessions,
    private readonly onSwitch: (notebookShown: boolean) => void,
  ) {
    this.notebookLabel = h('span', { text: 'Notebook' });
    this.notebookTab = h('button', { id: 'doc-tab-notebook', class: 'doc-tab', type: 'button', role: 'tab', 'aria-selected': 'true', 'aria-controls': 'notebook-scroller' }, icon('file'), this.notebookLabel);
    this.notebookTab.addEventListener('click', () => this.select('notebook'));
    this.strip = h('div', { id: 'doc-tabs', class: 'doc-tabs', role: 'tablist', 'aria-label': 'Notebook and agent sessions', hidden: true }, this.notebookTab);
    this.strip.addEventListener('keydown', (e) => this.onKey(e));
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
  }

  private addTab(session: AgentSession): void {
    const dot = h('span', { class: 'doc-tab-dot', 'aria-hidden': 'true' });
    const label = h('span');
    const button = h('button', { id: `doc-tab-agent-${session.id}`, class: 'doc-tab doc-tab-agent', type: 'button', role: 'tab', 'aria-selected': 'false', 'aria-controls': 'agent-scroller', tabindex: -1 }, icon('agent'), label, dot);
    button.addEventListener('click', () => this.select(session.id));
    this.tabs.set(session.id, { button, label, dot });
    this.strip.append(button);
    this.strip.hidden = false;
    this.syncTab(session);
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
    if (this.active === session.id) this.view?.syncHeader();
  }

  private onKey(e: KeyboardEvent): void {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
    const ids: TabId[] = ['notebook', ...this.tabs.keys()];
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
