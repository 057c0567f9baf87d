/**
 * The application shell and controller: it lays out the toolbar (`toolbar.ts`), the side list
 * (`sideList.ts`), the notebook in the middle, the right side panel and the status bar, and
 * ties them together: the keyboard map and its commands, the open notebook and its trust.
 * Session events are routed in `sessionEvents.ts`; moving between notebooks and workspaces is
 * `workspaceActions.ts`.
 */
import * as ipc from '../ipc';
import type { AppSettings, AppState, KernelStatus } from '../ipc';
import { assertNever } from '../util/assert';
import { frames } from '../util/frame';
import { Cell, type CellType } from '../model/cell';
import { NotebookEditor, type Mode } from '../model/commands';
import { emptyNotebook, parseNotebook, serializeNotebook } from '../model/ipynb';
import type { Notebook } from '../model/notebook';
import { baseName } from '../model/text';
import { globalCommand, KeySequenceResolver, normalizeKey, type CommandId } from '../keymap';
import { Executor } from '../runtime/executor';
import { heldBackMime } from '../render/outputs';
import { ApprovalsModel } from '../model/approvals';
import { AgentSessions } from '../model/agents';
import { DocumentTabs } from './agentsView';
import { EndpointDialog } from './endpointDialog';
import { SaveToolDialog } from './saveToolDialog';
import { ApprovalsView } from './approvalsView';
import { AuditView } from './auditView';
import { ServersView } from './serversView';
import { VariablesView } from './variablesView';
import { SavedToolsView } from './savedToolsView';
import { ServerStatuses } from '../model/serverForm';
import { escapeUntrusted } from '../model/untrusted';
import { PolicyView } from './policyView';
import type { CellView, CellViewHost } from './cellView';
import { h, inCellEditor, isTextField } from './dom';
import { FindBar } from './find';
import { OutputFollower } from './follow';
import { OutlineView } from './outline';
import { CommandPalette } from './palette';
import { NotebookView } from './notebookView';
import { NotebookFiles } from './notebookFiles';
import type { KernelHelpSource } from './kernelHelp';
import { SaveController } from './saver';
import { routeSessionEvent, StartBanners, type SessionTargets } from './sessionEvents';
import { SideList } from './sideList';
import { Toolbar } from './toolbar';
import { trustOf, WorkspaceActions } from './workspaceActions';
import { SettingsDialog } from './settingsView';
import { NOTEBOOK_ROOM, SidePanel } from './sidePanel';

/**
 * Mark (for the desktop benchmark) the first frame painted after this point: the frame after
 * next, when WebKit has drawn what the DOM held. Once: the first such frame counts.
 */
function markPainted(name: string): void {
  if (performance.getEntriesByName(name).length > 0) return;
  requestAnimationFrame(() => requestAnimationFrame(() => performance.mark(name)));
}

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);

export class App implements CellViewHost {
  /** How long a request must wait before it opens the approval panel (a rule decides sooner). */
  static readonly PANEL_DELAY_MS = 150;

  private state: AppState | null = null;
  private notebook: Notebook;
  private editor: NotebookEditor;
  private view: NotebookView;
  private executor: Executor;
  private readonly saver = new SaveController();
  private readonly keys = new KeySequenceResolver();
  private kernelBase: KernelStatus = 'starting';
  private offExecutor: () => void = () => {};
  private offNotebook: () => void = () => {};
  private messageTimer: ReturnType<typeof setTimeout> | null = null;

  // DOM
  private readonly toolbar: Toolbar;
  private readonly sideList: SideList;
  private readonly banners = new StartBanners();
  private readonly workspace: WorkspaceActions;
  private readonly scroller: HTMLElement;
  private readonly notebookBanner: HTMLElement;
  private readonly trustBanner: HTMLElement;
  private readonly trustText: HTMLElement;
  private readonly trustButton: HTMLButtonElement;
  private readonly modeEl: HTMLElement;
  private readonly pathEl: HTMLElement;
  private readonly messageEl: HTMLElement;
  private readonly approvals = new ApprovalsModel();
  private readonly approvalsView: ApprovalsView;
  private readonly auditView: AuditView;
  private readonly serverStatuses = new ServerStatuses();
  private readonly serversView = new ServersView(this.serverStatuses, () => this.state?.workspace);
  private readonly savedToolsView = new SavedToolsView();
  private readonly variablesView = new VariablesView();
  private readonly policyView = new PolicyView(() => this.sidePanel.open('sandbox', true));
  private readonly sidePanel: SidePanel;
  private readonly settingsDialog: SettingsDialog;
  private readonly agents = new AgentSessions();
  private readonly docTabs: DocumentTabs;
  private readonly endpointDialog: EndpointDialog;
  private readonly files: NotebookFiles;
  private readonly find: FindBar;
  private readonly outline: OutlineView;
  private readonly follower: OutputFollower;
  private readonly palette = new CommandPalette((id) => this.dispatch(id), isMac);
  /** Completion and help for code cells come from the kernel, through the backend. */
  readonly kernelHelp = (): KernelHelpSource | null => (ipc.hasBackend() ? { complete: ipc.complete, inspect: ipc.inspect } : null);
  private readonly saveToolDialog = new SaveToolDialog((tool) => {
    this.flash(`Saved ${escapeUntrusted(tool.module)}`);
    void this.savedToolsView.reload();
  });

  /** An executor whose runs name their cell ("cell 3 of analysis.ipynb") for approvals and the audit log. */
  private newExecutor(nb: Notebook): Executor {
    return new Executor(nb, undefined, undefined, (cell) => {
      const index = nb.indexOf(cell);
      const file = baseName(this.state?.notebookPath ?? 'Untitled.ipynb');
      return index < 0 ? `a cell of ${file}` : `cell ${index + 1} of ${file}`;
    });
  }

  constructor(root: HTMLElement) {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the hosts read the app's current state
    const app = this;
    this.workspace = new WorkspaceActions({
      get state() {
        return app.state;
      },
      saver: this.saver,
      load: (state, trusted) => {
        this.banners.clearError();
        this.load(state, trusted);
      },
      renamed: (state) => this.renamed(state),
      workspaceChanged: () => {
        this.auditView.invalidate();
        this.serversView.invalidate();
        this.approvalsView.refresh();
      },
      savedOverBlocked: () => {
        this.notebookBanner.hidden = true;
      },
      notebooksChanged: () => this.renderNotebookList(),
      flash: (text) => this.flash(text),
    });
    this.files = new NotebookFiles({
      get state() {
        return app.state;
      },
      get notebooks() {
        return [...app.workspace.notebooks];
      },
      snapshot: () => ({ content: serializeNotebook(this.notebook), trusted: this.notebook.contentTrusted, version: this.notebook.version }),
      saveCurrent: () => this.saver.save(),
      moved: (state, version) => this.workspace.moved(state, version),
      pauseSaving: () => this.saver.pause(),
      resumeSaving: () => this.saver.resume(),
      leaveTrashed: () => this.workspace.leaveTrashed(),
      newNotebook: () => this.workspace.newNotebook(),
      refreshNotebooks: () => this.workspace.refreshNotebooks(),
      flash: (text) => this.flash(text),
    });
    this.notebook = emptyNotebook();
    this.editor = new NotebookEditor(this.notebook);
    this.executor = this.newExecutor(this.notebook);
    this.view = new NotebookView(this.editor, this);

    this.settingsDialog = new SettingsDialog({ onSettings: (s) => this.onSettings(s), onKernelMoved: () => void this.policyView.refreshState() });
    this.endpointDialog = new EndpointDialog({ onEndpoint: (e) => this.toolbar.showServing(e.enabled) });
    this.toolbar = new Toolbar(
      {
        dispatch: (command) => this.dispatch(command),
        save: () => void this.workspace.save(),
        chooseWorkspace: () => void this.workspace.chooseWorkspace(),
        toggleSidebar: () => this.sideList.toggle(),
        toggleSideTab: (id) => this.toggleSideTab(id),
        openAgents: () => void this.endpointDialog.open(),
        openSettings: () => void this.settingsDialog.open(),
        changeType: (type) => this.changeType(type),
        focusNotebook: () => this.focusNotebook(),
        focusActiveCell: () => this.focusActiveCell(),
      },
      isMac,
      this.policyView.badge,
    );

    // ---- banners
    this.notebookBanner = h('div', { id: 'notebook-banner', class: 'banner banner-warning', role: 'alert', hidden: true });
    this.trustText = h('span', { class: 'trust-text' });
    this.trustButton = h('button', { id: 'trust-notebook', class: 'button', type: 'button', text: 'Trust notebook' });
    this.trustButton.addEventListener('click', () => void this.trustNotebook());
    this.trustBanner = h('div', { id: 'trust-banner', class: 'banner banner-warning trust-banner', role: 'region', 'aria-label': 'Notebook trust', hidden: true }, this.trustText, this.trustButton);

    // ---- side list
    this.sideList = new SideList({
      openNotebook: (path) => void this.workspace.openNotebook(path),
      newNotebook: () => void this.workspace.newNotebook(),
      refreshNotebooks: () => void this.workspace.refreshNotebooks(),
      rename: (path) => this.files.rename(path),
      duplicate: (path) => void this.files.duplicate(path),
      trash: (path) => void this.files.trash(path),
      shown: (shown) => this.toolbar.showSidebar(shown),
    });

    // ---- main
    this.scroller = h('main', { class: 'notebook-scroller', id: 'notebook-scroller', 'aria-label': 'Notebook' }, this.view.element);
    const navHost = {
      get notebook() {
        return app.notebook;
      },
      get editor() {
        return app.editor;
      },
      view: this.view,
      scroller: this.scroller,
      focusNotebook: () => this.focusNotebook(),
    };
    this.find = new FindBar(navHost);
    this.outline = new OutlineView(navHost);
    this.follower = new OutputFollower(this.scroller, this.view);
    this.docTabs = new DocumentTabs(this.agents, (notebookShown) => {
      this.scroller.hidden = !notebookShown;
      this.find.element.classList.toggle('away', !notebookShown);
      if (notebookShown) this.focusActiveCell();
    });
    const center = h('div', { class: 'center' }, this.banners.provisioningEl, this.banners.startupErrorEl, this.notebookBanner, this.trustBanner, this.docTabs.strip, this.find.element, this.scroller, this.docTabs.pane);
    // ---- right side panel (tabs: approvals, audit log, MCP servers, sandbox policy, outline)
    this.approvalsView = new ApprovalsView(this.approvals, undefined, () => void this.settingsDialog.open());
    this.auditView = new AuditView();
    this.sidePanel = new SidePanel([
      { id: 'approvals', label: 'Approvals', content: this.approvalsView.element, width: 380, onShow: () => this.approvalsView.onShow(), onHide: () => this.approvalsView.onHide() },
      { id: 'audit', label: 'Audit log', content: this.auditView.element, width: 760, onShow: () => this.auditView.onShow(), onHide: () => this.auditView.onHide() },
      { id: 'servers', label: 'MCP servers', content: h('div', { class: 'servers-tab' }, this.serversView.element, this.savedToolsView.element), width: 560, onShow: () => { this.serversView.onShow(); void this.savedToolsView.reload(); }, onHide: () => this.serversView.onHide() },
      { id: 'variables', label: 'Variables', content: this.variablesView.element, width: 460, onShow: () => this.variablesView.onShow(), onHide: () => this.variablesView.onHide() },
      { id: 'sandbox', label: 'Sandbox', content: this.policyView.element, width: 720, onShow: () => this.policyView.onShow(), onHide: () => this.policyView.onHide() },
      { id: 'outline', label: 'Outline', content: this.outline.element, width: 320, onShow: () => this.outline.onShow(), onHide: () => this.outline.onHide() },
    ]);
    const rightPanel = this.sidePanel.element;
    this.sidePanel.subscribe(() => this.onSidePanelChange());
    this.approvals.subscribe(() => this.renderApprovalsBadge());

    // ---- status bar
    this.modeEl = h('span', { id: 'mode-indicator', class: 'status-item mode', text: 'Command' });
    this.pathEl = h('span', { class: 'status-item path' });
    this.messageEl = h('span', { id: 'app-message', class: 'status-item message', role: 'status', 'aria-live': 'polite' });
    const footer = h('footer', { class: 'statusbar' }, this.modeEl, this.policyView.statusItem, this.pathEl, h('span', { class: 'toolbar-spacer' }), this.messageEl);

    root.replaceChildren(this.toolbar.element, h('div', { class: 'workbench' }, this.sideList.element, center, rightPanel), footer, this.files.element, this.settingsDialog.element, this.endpointDialog.element, this.saveToolDialog.element, this.variablesView.grid.element, this.palette.element);

    this.saver.subscribe((s) => this.toolbar.showSaveStatus(s));
    this.wireNotebook();

    window.addEventListener('keydown', (e) => this.onKeyDown(e), true);
    this.view.element.addEventListener('click', (e) => this.onNotebookClick(e), true);
    this.view.element.addEventListener('focusin', () => this.syncCommandModeFromFocus());
    window.addEventListener('resize', () => this.syncSidebarForWidth());
    this.syncSidebarForWidth();
  }

  // ===========================================================================================
  // Start-up and loading

  async start(): Promise<void> {
    try {
      if (!ipc.hasBackend()) {
        this.banners.showError('This page is the ipybox desktop app’s interface; it only works inside the ipybox window.');
        this.load(null);
        return;
      }
      // The notebook as the app found it at launch, handed to the page before its scripts
      // ran: its cells are drawn (and editable) before any round trip to the backend.
      const handed = ipc.takeStartState();
      if (handed) {
        this.load(handed.state, handed.trusted);
        markPainted('ipybox:cells-painted');
      }
      // Listeners first (all at once), then the state: nothing that happens in between is missed.
      await Promise.all([
        ipc.onSessionEvent((event) => routeSessionEvent(event, this.sessionTargets)),
        ipc.onAgentActivity((batch) => this.agents.apply(batch)),
        ipc.onMcpEndpoint((state) => this.endpointDialog.update(state)),
        ipc.onApprovalGrants(() => void this.approvalsView.refreshGrants()),
        ipc.onApprovalFocus((id) => this.focusApproval(id)),
        ipc.onCloseRequested(() => this.workspace.confirmClose()).catch(() => undefined),
        ipc.onOpenRequest((path) => void this.workspace.openNotebook(path)),
        ipc.onServersChanged(() => {
          this.serversView.invalidate();
          this.sidePanel.open('servers');
        }),
      ]);
      void this.policyView.init();
      const state = await ipc.appState();
      // The same notebook as handed over (always, but for a page reloaded later): only the
      // status it shows can have changed since.
      if (handed && handed.state.notebookPath === state.notebookPath && handed.state.notebook === state.notebook) {
        this.state = state;
        this.showState(state);
      } else {
        this.load(state, await trustOf(state));
        markPainted('ipybox:cells-painted');
      }
      void this.workspace.refreshNotebooks();
      void this.refreshSettings();
      // Requests made before the UI listened.
      void this.approvalsView.refreshGrants();
      void this.approvalsView.syncPending().then(() => {
        if (this.approvals.waitingCount > 0 && !this.sidePanel.isOpen) this.sidePanel.open('approvals');
      });
    } catch (err) {
      const e = ipc.toBackendError(err);
      this.banners.showError(ipc.describeError(e));
      this.load(null);
    } finally {
      document.body.dataset.ready = 'true';
      markPainted('ipybox:editable');
    }
  }

  /** Show a session's notebook (or an empty one when there is none). */
  private load(state: AppState | null, trusted = true): void {
    this.state = state;
    let nb: Notebook;
    let blocked: string | null = null;
    this.notebookBanner.hidden = true;
    if (state?.notebook) {
      try {
        nb = parseNotebook(state.notebook);
      } catch (err) {
        blocked = err instanceof Error ? err.message : String(err);
        nb = emptyNotebook();
        this.notebookBanner.textContent = `“${baseName(state.notebookPath)}” could not be opened: ${blocked} It is shown empty here and will not be saved over unless you press Save.`;
        this.notebookBanner.hidden = false;
      }
    } else {
      nb = emptyNotebook();
    }
    if (nb.length === 0) nb.insert(0, [new Cell()]);
    nb.version = 0;
    nb.setTrusted(trusted);

    this.notebook = nb;
    this.editor = new NotebookEditor(nb);
    this.executor = this.newExecutor(nb);
    this.view.attach(this.editor);
    this.wireNotebook();
    this.variablesView.kernelChanged();
    this.find.notebookChanged();
    this.outline.notebookChanged();
    this.saver.reset(nb, state?.notebookPath ?? 'Untitled.ipynb', state?.notebook !== null && state !== null, blocked);
    this.syncTrustBanner();

    if (state) this.showState(state);
    this.renderNotebookList();
    // On opening: the first cell selected, in command mode.
    this.editor.select(0);
    this.editor.setMode('command');
    this.syncChrome();
    this.scroller.scrollTop = 0;
    this.focusActiveCell();
  }

  /** The session's state around the notebook: names, the kernel's status, recent workspaces. */
  private showState(state: AppState): void {
    this.sideList.showWorkspace(state);
    this.pathEl.textContent = state.notebookPath;
    this.docTabs.setNotebookName(baseName(state.notebookPath));
    void this.endpointDialog.refresh();
    this.pathEl.title = state.notebookPath;
    this.setKernelBase(state.kernel);
    if (state.provisioning) routeSessionEvent({ type: 'provisioning', ...state.provisioning }, this.sessionTargets);
    if (state.startupError) routeSessionEvent({ type: 'startup_failed', ...state.startupError }, this.sessionTargets);
    this.toolbar.recentMenu.setItems(
      state.recent
        .filter((p) => p !== state.workspace)
        .map((path) => ({ label: baseName(path), detail: path, action: () => void this.workspace.openWorkspace(path) })),
    );
  }

  private wireNotebook(): void {
    this.offNotebook();
    this.offExecutor();
    this.follower.attach(this.notebook);
    const offNb = this.notebook.subscribe((change) => {
      if (change.type === 'cell' && change.change.type === 'cell-type') this.syncChrome();
      else if (change.type === 'cell' && change.change.type === 'run-state') this.renderKernelStatus();
      // Outputs held back as text go when the notebook is trusted or their cell runs again.
      const held =
        change.type === 'trust' ||
        change.type === 'structure' ||
        (change.type === 'cell' && (change.change.type === 'outputs-reset' || change.change.type === 'output-replaced' || change.change.type === 'cell-type'));
      if (held && (change.type === 'trust' || !this.notebook.trusted)) this.syncTrustBanner();
      this.saver.changed();
    });
    const offSel = this.editor.subscribe(() => this.syncChrome());
    this.offNotebook = () => {
      offNb();
      offSel();
    };
    this.offExecutor = this.executor.subscribe(() => {
      // Our executions end only after the kernel went idle: with none left, it is idle even if
      // the session's kernel_idle event is still on its way.
      if (this.executor.pendingCount === 0 && this.kernelBase === 'busy') this.kernelBase = 'idle';
      this.renderKernelStatus();
      this.variablesView.runsChanged(this.executor.pendingCount);
    });
  }

  // ===========================================================================================
  // Session and kernel

  /** What the session's events change. */
  private get sessionTargets(): SessionTargets {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the executor changes with the notebook
    const app = this;
    return {
      get executor() {
        return app.executor;
      },
      approvals: this.approvals,
      approvalsView: this.approvalsView,
      auditView: this.auditView,
      serverStatuses: this.serverStatuses,
      sideList: this.sideList,
      banners: this.banners,
      kernel: (status) => this.setKernelBase(status),
      flash: (text) => this.flash(text),
      openApprovals: () => {
        if (!this.sidePanel.isOpen) this.sidePanel.open('approvals');
      },
      approvalAnnounced: (id) => {
        // A rule decides right after the request is announced: only a request still waiting
        // for a person opens the panel.
        setTimeout(() => {
          if (this.approvals.item(id)?.state === 'waiting' && !this.sidePanel.isOpen) this.sidePanel.open('approvals');
        }, App.PANEL_DELAY_MS);
      },
    };
  }

  private setKernelBase(status: KernelStatus): void {
    this.kernelBase = status;
    this.renderKernelStatus();
  }

  /** The indicator: the session's status, and busy while one of our cells runs. */
  private renderKernelStatus(): void {
    let status = this.kernelBase;
    if (status === 'idle' && this.notebook.cells.some((c) => c.runState === 'running')) status = 'busy';
    this.toolbar.showKernel(status);
  }

  // ===========================================================================================
  // Keyboard

  private onKeyDown(e: KeyboardEvent): void {
    if (e.isComposing || e.defaultPrevented) return;
    const key = normalizeKey(e, isMac);
    if (!key) return;
    const target = document.activeElement;
    if (key === 'Mod+s') {
      e.preventDefault();
      e.stopPropagation();
      void this.workspace.save();
      return;
    }
    if (target?.closest('.menu, dialog')) return;
    // An agent's session shows: its notebook is read-only, and the person's is hidden.
    if (this.docTabs.showingAgent) return;
    const global = globalCommand(key);
    if (global) {
      e.preventDefault();
      e.stopPropagation();
      this.dispatch(global);
      return;
    }
    // The find bar and the palette handle their own keys.
    if (target?.closest('.find-bar, .palette')) return;
    if (key === 'Escape' && target && target !== document.body && !this.view.element.contains(target)) {
      // Escape from the toolbar or the side list: back to the notebook, in command mode.
      e.preventDefault();
      this.editor.setMode('command');
      this.focusActiveCell();
      return;
    }
    if (isTextField(target)) return;
    const inEditor = inCellEditor(target);
    if (inEditor && target instanceof HTMLInputElement) return; // CodeMirror's search field
    const inNotebook = !!target && (target === document.body || this.view.element.contains(target));
    if (!inEditor && !inNotebook) return;
    const mode: Mode = inEditor ? 'edit' : 'command';
    if (mode !== this.editor.mode) this.editor.setMode(mode);
    if (mode === 'edit' && key === 'Escape' && this.view.activeView?.editorWantsEscape) return;
    const r = this.keys.feed(mode, key, performance.now());
    if (r.kind === 'none') return;
    e.preventDefault();
    e.stopPropagation();
    if (r.kind === 'command') this.dispatch(r.command);
  }

  /** Focus left the editors for the notebook (a click on a cell or output): command mode. */
  private syncCommandModeFromFocus(): void {
    const active = document.activeElement;
    if (this.editor.mode === 'edit' && active && !active.closest('.cm-editor')) {
      this.editor.setMode('command');
    }
  }

  private onNotebookClick(e: MouseEvent): void {
    const target = e.target;
    if (!(target instanceof Element)) return;
    const link = target.closest('a');
    if (!link) return;
    // Nothing navigates the webview; in-page anchors scroll to their target.
    e.preventDefault();
    const href = link.getAttribute('href');
    if (href && href.startsWith('#') && href.length > 1) {
      const id = decodeURIComponent(href.slice(1));
      const dest = [...this.view.element.querySelectorAll('[id]')].find((el) => el.id === id);
      dest?.scrollIntoView({ block: 'start' });
    }
  }

  // ===========================================================================================
  // Commands

  dispatch(command: CommandId): void {
    const ed = this.editor;
    switch (command) {
      case 'enter-edit':
        this.enterEdit();
        return;
      case 'enter-command':
        ed.setMode('command');
        this.focusActiveCell();
        return;
      case 'run-and-advance': {
        const cells = ed.selectedCells;
        const last = Math.max(...ed.selectedIndices);
        this.executor.run(cells);
        if (last >= this.notebook.length - 1) {
          ed.append('code');
          this.enterEdit();
        } else {
          ed.select(last + 1);
          ed.setMode('command');
          this.focusActiveCell();
        }
        return;
      }
      case 'run-in-place':
        this.executor.run(ed.selectedCells);
        ed.setMode('command');
        this.focusActiveCell();
        return;
      case 'run-and-insert':
        this.executor.run(ed.selectedCells);
        ed.select(Math.max(...ed.selectedIndices));
        ed.insert('below');
        this.enterEdit();
        return;
      case 'insert-above':
      case 'insert-below':
        ed.insert(command === 'insert-above' ? 'above' : 'below');
        ed.setMode('command');
        this.focusActiveCell();
        return;
      case 'delete-cells':
        ed.deleteSelected();
        this.focusActiveCell();
        return;
      case 'undo-delete':
        if (!ed.undoDelete()) this.flash('Nothing to undo.');
        this.focusActiveCell();
        return;
      case 'to-code':
        this.changeType('code');
        return;
      case 'to-markdown':
        this.changeType('markdown');
        return;
      case 'to-raw':
        this.changeType('raw');
        return;
      case 'select-prev':
      case 'select-next':
        ed.moveSelection(command === 'select-prev' ? -1 : 1);
        this.focusActiveCell();
        return;
      case 'extend-prev':
      case 'extend-next':
        ed.extendSelection(command === 'extend-prev' ? -1 : 1);
        this.focusActiveCell();
        return;
      case 'select-all':
        ed.selectAll();
        return;
      case 'move-up':
      case 'move-down':
        ed.moveSelected(command === 'move-up' ? -1 : 1);
        this.focusActiveCell();
        return;
      case 'copy':
        ed.copy();
        this.flash(`Copied ${ed.selectedIndices.length === 1 ? 'a cell' : `${ed.selectedIndices.length} cells`}.`);
        return;
      case 'cut':
        ed.cut();
        this.focusActiveCell();
        return;
      case 'paste-below':
      case 'paste-above':
        ed.paste(command === 'paste-above' ? 'above' : 'below');
        this.focusActiveCell();
        return;
      case 'merge':
        ed.mergeSelected();
        this.focusActiveCell();
        return;
      case 'split': {
        const offsets = this.view.activeView?.cursorOffsets ?? [];
        if (offsets.length === 0) return;
        ed.split(offsets);
        this.enterEdit('start');
        return;
      }
      case 'interrupt':
        void this.interrupt();
        return;
      case 'restart':
        void this.restart();
        return;
      case 'save':
        void this.workspace.save();
        return;
      case 'toggle-output':
        for (const cell of ed.selectedCells) if (cell.type === 'code') cell.setOutputsHidden(!cell.outputsHidden);
        return;
      case 'toggle-output-scroll':
        for (const cell of ed.selectedCells) this.toggleScroll(cell);
        return;
      case 'run-all':
        this.executor.run(this.notebook.cells);
        this.focusNotebook();
        return;
      case 'clear-outputs':
        this.clearAllOutputs();
        this.focusNotebook();
        return;
      case 'run-above':
        this.runAbove();
        return;
      case 'run-below':
        this.runBelow();
        return;
      case 'restart-run-all':
        void this.restart().then((ok) => ok && this.executor.run(this.notebook.cells));
        return;
      case 'clear-selected-outputs':
        this.clearSelectedOutputs();
        return;
      case 'save-cell-as-tool':
        this.saveCellAsTool();
        return;
      case 'find':
      case 'find-replace':
        // As in JupyterLab, text selected in the cell being edited is what is looked for.
        this.find.open(command === 'find-replace', ed.mode === 'edit' ? (this.view.activeView?.selectedText ?? '') : '');
        return;
      case 'command-palette':
        this.palette.open();
        return;
      case 'show-outline':
        this.sidePanel.open('outline', true);
        return;
      case 'new-notebook':
        void this.workspace.newNotebook();
        return;
      case 'rename-notebook':
        this.files.rename();
        return;
      case 'save-as':
        this.files.saveAs();
        return;
      case 'duplicate-notebook':
        void this.files.duplicate();
        return;
      case 'trash-notebook':
        void this.files.trash();
        return;
      case 'export-html':
      case 'export-pdf':
      case 'export-py':
        void this.files.exportAs(command === 'export-html' ? 'html' : command === 'export-pdf' ? 'pdf' : 'py');
        return;
      default:
        assertNever(command, 'command');
    }
  }

  private enterEdit(where: 'start' | 'end' | 'keep' = 'keep'): void {
    const cell = this.editor.activeCell;
    if (!cell) return;
    if (cell.type === 'markdown') cell.setRendered(false);
    this.editor.setMode('edit');
    this.view.activeView?.focusEditor(where);
    this.view.revealActive();
  }

  private changeType(type: CellType): void {
    this.editor.changeType(type);
    this.syncChrome();
    if (this.editor.mode === 'command') this.focusActiveCell();
  }

  private runAbove(): void {
    this.executor.run(this.notebook.cells.slice(0, Math.min(...this.editor.selectedIndices)));
  }

  private runBelow(): void {
    this.executor.run(this.notebook.cells.slice(Math.min(...this.editor.selectedIndices)));
  }

  private clearAllOutputs(): void {
    for (const cell of this.notebook.cells) {
      if (cell.type !== 'code') continue;
      cell.clearOutputs();
      cell.clearToolCalls();
      cell.setNotice(null);
    }
  }

  /** "Save cell as tool" on the active code cell. */
  private saveCellAsTool(): void {
    const cell = this.editor.activeCell;
    if (!cell || cell.type !== 'code' || cell.source.trim() === '') {
      this.flash("Select a code cell with code to save it as a tool");
      return;
    }
    this.saveToolDialog.open(cell.source);
  }

  private clearSelectedOutputs(): void {
    for (const cell of this.editor.selectedCells) {
      cell.clearOutputs();
      cell.clearToolCalls();
      cell.setNotice(null);
    }
  }

  private toggleScroll(cell: Cell): void {
    if (cell.type === 'code') cell.setOutputsScrolled(!cell.outputsScrolled);
  }

  private async interrupt(): Promise<void> {
    try {
      await ipc.interrupt();
      this.flash('Interrupt sent to the kernel.');
    } catch (err) {
      this.flash(ipc.describeError(ipc.toBackendError(err)));
    }
  }

  /** Restart the kernel (asked natively); true once it is restarted. */
  private async restart(): Promise<boolean> {
    let ok = false;
    try {
      ok = await ipc.confirmDialog('Restart the kernel? All variables are lost; the notebook and its outputs stay.', 'Restart kernel', 'Restart');
    } catch {
      ok = false;
    }
    if (!ok) return false;
    this.setKernelBase('starting');
    try {
      await ipc.restartKernel();
      this.executor.cancelAll('The kernel was restarted.');
      this.variablesView.kernelChanged();
      this.setKernelBase('idle');
      this.flash('The kernel was restarted.');
      return true;
    } catch (err) {
      this.flash(ipc.describeError(ipc.toBackendError(err)));
      this.setKernelBase('dead');
      return false;
    }
  }

  // ===========================================================================================
  // CellViewHost

  onCellClick(view: CellView, extend: boolean): void {
    const i = this.notebook.indexOf(view.cell);
    if (i < 0) return;
    if (extend) this.editor.extendTo(i);
    else this.editor.select(i);
  }

  onEditorFocus(view: CellView): void {
    const i = this.notebook.indexOf(view.cell);
    if (i < 0) return;
    if (i !== this.editor.active || this.editor.selectedIndices.length > 1) this.editor.select(i);
    this.editor.setMode('edit');
  }

  onEditRequest(view: CellView): void {
    this.editor.selectCell(view.cell);
    this.enterEdit();
  }

  onBoundary(view: CellView, direction: 'up' | 'down'): boolean {
    const i = this.notebook.indexOf(view.cell);
    const j = direction === 'up' ? i - 1 : i + 1;
    const target = this.notebook.cell(j);
    if (!target) return false;
    this.editor.select(j);
    if (target.type === 'markdown' && target.rendered) {
      this.editor.setMode('command');
      this.focusActiveCell();
    } else {
      this.enterEdit(direction === 'up' ? 'end' : 'start');
    }
    return true;
  }

  onInputReply(view: CellView, value: string): void {
    void this.executor.replyInput(view.cell, value);
    this.editor.selectCell(view.cell);
    this.editor.setMode('command');
    this.focusActiveCell();
  }

  onToggleOutputScroll(view: CellView): void {
    this.toggleScroll(view.cell);
  }

  onRunAgain(view: CellView): void {
    this.executor.run([view.cell]);
  }

  onToggleOutputCollapse(view: CellView): void {
    view.cell.setOutputsHidden(!view.cell.outputsHidden);
  }

  // ===========================================================================================
  // Chrome

  private syncChrome(): void {
    const cell = this.editor.activeCell;
    if (cell) this.toolbar.showCellType(cell.type);
    this.modeEl.textContent = this.editor.mode === 'edit' ? 'Edit' : 'Command';
    this.modeEl.dataset.mode = this.editor.mode;
    this.renderKernelStatus();
  }

  /** After a toolbar action: back to the notebook, where the keyboard map works. */
  private focusNotebook(): void {
    if (this.editor.mode === 'edit') this.view.activeView?.focusEditor();
    else this.focusActiveCell();
  }

  private focusActiveCell(): void {
    const view = this.view.activeView;
    if (!view) return;
    if (this.editor.mode === 'command') view.element.focus({ preventScroll: true });
    this.view.revealActive();
  }

  private flash(text: string): void {
    this.messageEl.textContent = text;
    if (this.messageTimer) clearTimeout(this.messageTimer);
    this.messageTimer = setTimeout(() => {
      this.messageEl.textContent = '';
    }, 6000);
  }

  /** Ask for the approval timeout in force (the panel counts down to it). */
  private async refreshSettings(): Promise<void> {
    try {
      this.onSettings(await ipc.appSettings());
    } catch {
      // Without them the panel shows no countdown; nothing else depends on them.
    }
  }

  private onSettings(settings: AppSettings): void {
    this.approvalsView.setApprovalTimeout(settings.approvalTimeoutSecs);
  }

  /** A toolbar button's side tab: opens it, or closes the panel when it already shows. */
  private toggleSideTab(id: string): void {
    if (this.sidePanel.isOpen && this.sidePanel.activeTab === id) this.sidePanel.close();
    else this.sidePanel.open(id);
  }

  private onSidePanelChange(): void {
    const open = this.sidePanel.isOpen;
    this.makeRoomForNotebook();
    this.toolbar.showPanelOpen(open);
    // Closed with the focus inside: back to the notebook.
    if (!open && (document.activeElement === document.body || document.activeElement === null)) this.focusNotebook();
  }

  private renderApprovalsBadge(): void {
    const n = this.approvals.waitingCount;
    this.toolbar.showWaiting(n);
    this.saver.setWaiting(n);
    this.sidePanel.setBadge('approvals', n);
  }

  private syncSidebarForWidth(): void {
    // Narrow windows start with the side list hidden; the toggle brings it back.
    if (window.innerWidth < 900 && !this.sideList.hidden) this.sideList.toggle(false);
    this.makeRoomForNotebook();
  }

  /** With the side panel open, the notebook keeps room for its editor: the side list steps aside first. */
  private makeRoomForNotebook(): void {
    if (!this.sidePanel?.isOpen || this.sideList.hidden) return;
    const center = this.scroller.parentElement;
    if (!center || center.getBoundingClientRect().width >= NOTEBOOK_ROOM) return;
    this.sideList.toggle(false);
    this.sidePanel.fit();
  }

  // ===========================================================================================
  // Notebook trust

  /** The banner shows while outputs of the file are held back as text. */
  private syncTrustBanner(): void {
    const nb = this.notebook;
    let held = 0;
    const kinds = new Set<string>();
    if (!nb.trusted) {
      for (const cell of nb.cells) {
        for (const output of cell.outputs) {
          const mime = heldBackMime(output, false);
          if (mime === null) continue;
          held++;
          kinds.add(mime === 'text/html' ? 'HTML' : mime === 'image/svg+xml' ? 'SVG' : 'Markdown');
        }
      }
    }
    this.trustBanner.hidden = held === 0;
    if (held === 0) return;
    const what = held === 1 ? `1 ${[...kinds][0] ?? ''} output is` : `${held} outputs (${[...kinds].join(', ')}) are`;
    this.trustText.textContent = `This notebook was not made or trusted on this computer: ${what} shown as text, not rendered. Trust it if you trust where it comes from.`;
  }

  /** The person asks to trust the notebook: the backend confirms with them in a native dialog. */
  private async trustNotebook(): Promise<void> {
    const nb = this.notebook;
    const path = this.state?.notebookPath;
    const content = this.state?.notebook;
    if (!path || content === null || content === undefined) return;
    this.trustButton.disabled = true;
    try {
      await ipc.trustNotebook(path, content);
    } catch (err) {
      const e = ipc.toBackendError(err);
      if (e.code !== 'Cancelled') this.flash(ipc.describeError(e));
    }
    let trusted = false;
    try {
      trusted = await ipc.notebookTrusted(content);
    } catch {
      trusted = false;
    } finally {
      this.trustButton.disabled = false;
    }
    // Another notebook may have been opened meanwhile.
    if (trusted && nb === this.notebook) nb.setTrusted(true);
  }

  // ===========================================================================================
  // The notebook's name, the approvals it waits for, packages

  /** Bring the waiting request `id` into view in the approval panel (its notification was clicked). */
  private focusApproval(id: number): void {
    this.sidePanel.open('approvals');
    requestAnimationFrame(() => {
      const item = document.querySelector<HTMLElement>(`.approval-request[data-request-id="${Number(id)}"]`);
      item?.scrollIntoView({ block: 'nearest' });
      item?.focus({ preventScroll: true });
    });
  }

  /** The open notebook has a new name: same cells, same kernel. */
  private renamed(state: AppState): void {
    this.state = state;
    this.pathEl.textContent = state.notebookPath;
    this.pathEl.title = state.notebookPath;
    this.docTabs.setNotebookName(baseName(state.notebookPath));
    this.renderNotebookList();
  }

  private renderNotebookList(): void {
    this.sideList.showNotebooks(this.state, this.workspace.notebooks);
  }

  /** "Install X" under a ModuleNotFoundError. */
  async onInstallRequest(spec: string): Promise<void> {
    await this.sideList.offerInstall(spec);
  }

  /** "Open in grid" under a frame shown as a result. */
  onOpenFrame(name: string): Promise<string | null> {
    return this.variablesView.openFrame(name);
  }

  /** For the test helpers and the console. */
  get current(): { notebook: Notebook; editor: NotebookEditor } {
    return { notebook: this.notebook, editor: this.editor };
  }

  /** Flush pending frame work (tests). */
  flush(): void {
    frames.flush();
  }
}
