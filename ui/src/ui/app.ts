/**
 * The application shell and controller: it lays out the toolbar (`toolbar.ts`), the side list
 * (`sideList.ts`), the notebook in the middle, the right side panel and the status bar, and
 * ties them together: the open notebook, its trust and the chrome around it. The keyboard map
 * and the commands are `notebookCommands.ts`; session events are routed in `sessionEvents.ts`;
 * moving between notebooks and workspaces is `workspaceActions.ts`.
 */
import * as ipc from '../ipc';
import type { AppSettings, AppState, KernelStatus } from '../ipc';
import { frames } from '../util/frame';
import { Cell } from '../model/cell';
import { NotebookEditor } from '../model/commands';
import { emptyNotebook, parseNotebook, serializeNotebook } from '../model/ipynb';
import type { Notebook } from '../model/notebook';
import { baseName } from '../model/text';
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
import { h } from './dom';
import { FindBar } from './find';
import { OutputFollower } from './follow';
import { OutlineView } from './outline';
import { CommandPalette } from './palette';
import { NotebookView } from './notebookView';
import { NotebookFiles } from './notebookFiles';
import { NotebookCommands } from './notebookCommands';
import { SaveController } from './saver';
import { catchUpQuestions, routeSessionEvent, StartBanners, type SessionTargets } from './sessionEvents';
import { SideList } from './sideList';
import { Toolbar } from './toolbar';
import { trustOf, WorkspaceActions } from './workspaceActions';
import { SettingsDialog } from './settingsView';
import { NOTEBOOK_ROOM, SidePanel } from './sidePanel';
import { PythonPicker } from './pythonPicker';

/**
 * Mark (for the desktop benchmark) the first frame painted after this point: the frame after
 * next, when WebKit has drawn what the DOM held. Once: the first such frame counts.
 */
function markPainted(name: string): void {
  if (performance.getEntriesByName(name).length > 0) return;
  requestAnimationFrame(() => requestAnimationFrame(() => performance.mark(name)));
}

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);

export class App {
  /** How long a request must wait before it opens the approval panel (a rule decides sooner). */
  static readonly PANEL_DELAY_MS = 150;

  private state: AppState | null = null;
  private notebook: Notebook;
  private editor: NotebookEditor;
  private view: NotebookView;
  private executor: Executor;
  private readonly saver = new SaveController();
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
  /** Each notebook's Python: named in the status bar, chosen in its picker (the kernel restarts). */
  private readonly pythonPicker = new PythonPicker((state) => {
    this.state = state;
    this.showState(state);
    this.variablesView.kernelChanged();
  });
  private readonly sidePanel: SidePanel;
  private readonly settingsDialog: SettingsDialog;
  private readonly agents = new AgentSessions();
  private readonly docTabs: DocumentTabs;
  private readonly endpointDialog: EndpointDialog;
  private readonly files: NotebookFiles;
  private readonly find: FindBar;
  private readonly outline: OutlineView;
  private readonly follower: OutputFollower;
  private readonly palette = new CommandPalette((id) => this.commands.dispatch(id), isMac);
  private readonly commands: NotebookCommands;
  /** What the session's events change (built once: every event is routed through it). */
  private readonly sessionTargets: SessionTargets;
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
    this.commands = new NotebookCommands({
      get notebook() {
        return app.notebook;
      },
      get editor() {
        return app.editor;
      },
      get executor() {
        return app.executor;
      },
      get view() {
        return app.view;
      },
      get docTabs() {
        return app.docTabs;
      },
      workspace: this.workspace,
      files: this.files,
      get find() {
        return app.find;
      },
      palette: this.palette,
      get sidePanel() {
        return app.sidePanel;
      },
      saveToolDialog: this.saveToolDialog,
      isMac,
      syncChrome: () => this.syncChrome(),
      focusNotebook: () => this.focusNotebook(),
      focusActiveCell: () => this.focusActiveCell(),
      flash: (text) => this.flash(text),
      setKernelBase: (status) => this.setKernelBase(status),
      kernelChanged: () => this.variablesView.kernelChanged(),
      offerInstall: (spec) => this.sideList.offerInstall(spec),
      openFrame: (name) => this.variablesView.openFrame(name),
    });
    this.view = new NotebookView(this.editor, this.commands);

    this.settingsDialog = new SettingsDialog({ onSettings: (s) => this.onSettings(s), onKernelMoved: () => void this.policyView.refreshState() });
    this.endpointDialog = new EndpointDialog({ onEndpoint: (e) => this.toolbar.showServing(e.enabled) });
    this.toolbar = new Toolbar(
      {
        dispatch: (command) => this.commands.dispatch(command),
        save: () => void this.workspace.save(),
        chooseWorkspace: () => void this.workspace.chooseWorkspace(),
        toggleSidebar: () => this.sideList.toggle(),
        toggleSideTab: (id) => this.toggleSideTab(id),
        openAgents: () => void this.endpointDialog.open(),
        openSettings: () => void this.settingsDialog.open(),
        changeType: (type) => this.commands.changeType(type),
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
    const footer = h('footer', { class: 'statusbar' }, this.modeEl, this.policyView.statusItem, this.pythonPicker.statusItem, this.pathEl, h('span', { class: 'toolbar-spacer' }), this.messageEl);

    root.replaceChildren(this.toolbar.element, h('div', { class: 'workbench' }, this.sideList.element, center, rightPanel), footer, this.files.element, this.settingsDialog.element, this.endpointDialog.element, this.saveToolDialog.element, this.variablesView.grid.element, this.palette.element, this.pythonPicker.element);

    this.sessionTargets = {
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

    this.saver.subscribe((s) => this.toolbar.showSaveStatus(s));
    this.wireNotebook();

    window.addEventListener('keydown', (e) => this.commands.onKeyDown(e), true);
    this.view.element.addEventListener('click', (e) => this.commands.onNotebookClick(e), true);
    this.view.element.addEventListener('focusin', () => this.commands.syncCommandModeFromFocus());
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
      // Servers' questions asked before the UI listened (a reload): their forms come back.
      void catchUpQuestions(this.sessionTargets);
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
    this.pythonPicker.show(state.python, state.remote);
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

  /** For the test helpers and the console. */
  get current(): { notebook: Notebook; editor: NotebookEditor } {
    return { notebook: this.notebook, editor: this.editor };
  }

  /** Flush pending frame work (tests). */
  flush(): void {
    frames.flush();
  }
}
