/**
 * The application shell and controller: header toolbar, left side list (notebooks, packages),
 * the notebook in the middle, the right side panel (approvals, audit log), a status bar, the
 * settings dialog; keyboard map, commands, session events, saving and closing.
 */
import * as ipc from '../ipc';
import type { AppSettings, AppState, KernelStatus, SessionEvent } from '../ipc';
import { assertNever } from '../util/assert';
import { frames } from '../util/frame';
import { Cell, type CellType } from '../model/cell';
import { NotebookEditor, type Mode } from '../model/commands';
import { emptyNotebook, parseNotebook, serializeNotebook } from '../model/ipynb';
import type { Notebook } from '../model/notebook';
import { baseName } from '../model/text';
import { COMMANDS, globalCommand, KeySequenceResolver, normalizeKey, shortcutFor, type CommandId } from '../keymap';
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
import { icon, type IconName } from './icons';
import { FindBar } from './find';
import { OutputFollower } from './follow';
import { MenuButton, type MenuItem } from './menu';
import { OutlineView } from './outline';
import { CommandPalette } from './palette';
import { NotebookView } from './notebookView';
import { NotebookFiles } from './notebookFiles';
import type { KernelHelpSource } from './kernelHelp';
import { SaveController, type SaveStatus } from './saver';
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

interface ToolButtonSpec {
  id: string;
  icon: IconName;
  label: string;
  command?: CommandId;
  text?: string;
  onClick(): void;
}

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
  private notebooks: string[] = [];
  private installing = false;

  // DOM
  private readonly scroller: HTMLElement;
  private readonly kernelEl: HTMLElement;
  private readonly kernelText: HTMLElement;
  private readonly saveStatusEl: HTMLElement;
  private readonly provisioningEl: HTMLElement;
  private readonly provisioningText: HTMLElement;
  private readonly provisioningBar: HTMLProgressElement;
  private readonly startupErrorEl: HTMLElement;
  private readonly startupErrorText: HTMLElement;
  private readonly notebookBanner: HTMLElement;
  private readonly trustBanner: HTMLElement;
  private readonly trustText: HTMLElement;
  private readonly trustButton: HTMLButtonElement;
  private readonly workspaceLabel: HTMLElement;
  private readonly notebookLabel: HTMLElement;
  private readonly notebookList: HTMLElement;
  private readonly recentMenu: MenuButton;
  private readonly runMenu: MenuButton;
  private readonly cellTypeSelect: HTMLSelectElement;
  private readonly modeEl: HTMLElement;
  private readonly pathEl: HTMLElement;
  private readonly messageEl: HTMLElement;
  private readonly packageInput: HTMLInputElement;
  private readonly installButton: HTMLButtonElement;
  private readonly installOutput: HTMLElement;
  private readonly installStatus: HTMLElement;
  private readonly sidebar: HTMLElement;
  private readonly buttons = new Map<string, HTMLButtonElement>();
  private readonly approvals = new ApprovalsModel();
  private readonly approvalsView: ApprovalsView;
  private readonly auditView: AuditView;
  private readonly serverStatuses = new ServerStatuses();
  private readonly serversView = new ServersView(this.serverStatuses, () => this.state?.workspace);
  private readonly savedToolsView = new SavedToolsView();
  private readonly variablesView = new VariablesView();
  private readonly policyView = new PolicyView(() => this.sidePanel.open('sandbox', true));
  private readonly sidePanel: SidePanel;
  private readonly approvalsButton: HTMLButtonElement;
  private readonly approvalsBadge: HTMLElement;
  private readonly settingsDialog: SettingsDialog;
  private readonly agents = new AgentSessions();
  private readonly docTabs: DocumentTabs;
  private readonly endpointDialog: EndpointDialog;
  private readonly agentsButton: HTMLButtonElement;
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
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the host reads the app's current state
    const app = this;
    this.files = new NotebookFiles({
      get state() {
        return app.state;
      },
      get notebooks() {
        return app.notebooks;
      },
      snapshot: () => ({ content: serializeNotebook(this.notebook), trusted: this.notebook.contentTrusted, version: this.notebook.version }),
      saveCurrent: () => this.saver.save(),
      moved: (state, version) => this.moved(state, version),
      pauseSaving: () => this.saver.pause(),
      resumeSaving: () => this.saver.resume(),
      leaveTrashed: () => this.leaveTrashed(),
      newNotebook: () => this.newNotebook(),
      refreshNotebooks: () => this.refreshNotebooks(),
      flash: (text) => this.flash(text),
    });
    this.notebook = emptyNotebook();
    this.editor = new NotebookEditor(this.notebook);
    this.executor = this.newExecutor(this.notebook);
    this.view = new NotebookView(this.editor, this);

    // ---- header toolbar
    const btn = (spec: ToolButtonSpec): HTMLButtonElement => {
      const shortcut = spec.command ? shortcutFor(spec.command, isMac) : null;
      const b = h('button', {
        id: spec.id,
        class: spec.text ? 'tool tool-text' : 'tool',
        type: 'button',
        'aria-label': spec.label,
        title: shortcut ? `${spec.label} (${shortcut})` : spec.label,
      });
      b.appendChild(icon(spec.icon));
      if (spec.text) b.appendChild(h('span', { text: spec.text }));
      // As in JupyterLab, a click on a toolbar button leaves the keyboard focus in the notebook.
      b.addEventListener('mousedown', (e) => e.preventDefault());
      b.addEventListener('click', () => spec.onClick());
      this.buttons.set(spec.id, b);
      return b;
    };
    const group = (...children: Node[]): HTMLElement => h('div', { class: 'tool-group', role: 'group' }, ...children);
    const fileMenuButton = h('button', { id: 'file-menu', class: 'tool tool-narrow', type: 'button', 'aria-label': 'Notebook file: new, rename, save as, duplicate, delete', title: 'Notebook file' }, icon('chevron'));
    const fileMenu = new MenuButton(fileMenuButton, 'Notebook file');
    fileMenu.setItems([
      this.menuItem('file-new', 'new-notebook'),
      this.menuItem('file-rename', 'rename-notebook'),
      this.menuItem('file-save-as', 'save-as'),
      this.menuItem('file-duplicate', 'duplicate-notebook'),
      this.menuItem('file-trash', 'trash-notebook'),
      this.menuItem('file-export-html', 'export-html'),
      this.menuItem('file-export-pdf', 'export-pdf'),
      this.menuItem('file-export-py', 'export-py'),
    ]);

    this.workspaceLabel = h('span', { class: 'workspace-name', text: '' });
    const openFolder = btn({ id: 'open-folder', icon: 'folder', label: 'Open folder', text: 'Open folder', onClick: () => void this.chooseWorkspace() });
    const recentButton = h('button', { id: 'recent-workspaces', class: 'tool tool-narrow', type: 'button', 'aria-label': 'Recent workspaces', title: 'Recent workspaces' }, icon('chevron'));
    this.recentMenu = new MenuButton(recentButton, 'Recent workspaces', 'No recent workspaces');
    const runMenuButton = h('button', { id: 'run-menu', class: 'tool tool-narrow', type: 'button', 'aria-label': 'More run commands', title: 'More run commands' }, icon('chevron'));
    this.runMenu = new MenuButton(runMenuButton, 'Run');
    this.runMenu.setItems([
      this.menuItem('run-above', 'run-above'),
      this.menuItem('run-below', 'run-below'),
      this.menuItem('run-all-menu', 'run-all'),
      this.menuItem('restart-run-all', 'restart-run-all'),
      this.menuItem('clear-selected-outputs', 'clear-selected-outputs'),
      this.menuItem('save-cell-as-tool', 'save-cell-as-tool'),
      this.menuItem('clear-all-outputs', 'clear-outputs'),
      this.menuItem('open-palette', 'command-palette'),
    ]);

    this.cellTypeSelect = h('select', { id: 'cell-type', class: 'cell-type-select', 'aria-label': 'Cell type' });
    for (const [value, label] of [['code', 'Code'], ['markdown', 'Markdown'], ['raw', 'Raw']] as const) {
      this.cellTypeSelect.appendChild(h('option', { value, text: label }));
    }
    this.cellTypeSelect.addEventListener('change', () => {
      const v = this.cellTypeSelect.value;
      if (v === 'code' || v === 'markdown' || v === 'raw') this.changeType(v);
      this.focusActiveCell();
    });

    this.kernelText = h('span', { class: 'kernel-text', text: 'Starting' });
    this.kernelEl = h('div', { id: 'kernel-status', class: 'kernel-status', role: 'status', 'aria-live': 'polite', 'aria-label': 'Kernel starting' }, h('span', { class: 'kernel-dot', 'aria-hidden': 'true' }), this.kernelText);
    this.kernelEl.dataset.status = 'starting';
    this.saveStatusEl = h('div', { id: 'save-status', class: 'save-status', role: 'status', 'aria-live': 'polite' });
    this.approvalsBadge = h('span', { id: 'approvals-badge', class: 'badge', hidden: true });
    this.approvalsButton = btn({ id: 'toggle-approvals', icon: 'approval', label: 'Show or hide approvals and the audit log', text: 'Approvals', onClick: () => this.toggleApprovals() });
    this.approvalsButton.appendChild(this.approvalsBadge);
    this.approvalsButton.setAttribute('aria-controls', 'right-panel');
    this.approvalsButton.setAttribute('aria-expanded', 'false');
    this.settingsDialog = new SettingsDialog({ onSettings: (s) => this.onSettings(s), onKernelMoved: () => void this.policyView.refreshState() });
    this.endpointDialog = new EndpointDialog({ onEndpoint: (e) => this.agentsButton.classList.toggle('serving', e.enabled) });
    this.agentsButton = btn({ id: 'open-agents', icon: 'agent', label: 'Let agents use this workspace over MCP', text: 'Agents', onClick: () => void this.endpointDialog.open() });
    this.agentsButton.setAttribute('aria-haspopup', 'dialog');
    const settingsButton = btn({ id: 'open-settings', icon: 'settings', label: 'Settings', text: 'Settings', onClick: () => void this.settingsDialog.open() });
    // The MCP servers tab, visible in the toolbar (not only as a tab of a closed side panel).
    const variablesButton = btn({ id: 'open-variables', icon: 'panel', label: 'Variables the kernel holds', onClick: () => this.toggleSideTab('variables') });
    const serversButton = btn({ id: 'open-servers', icon: 'package', label: 'MCP servers: register, check and regenerate the tools code can call', text: 'MCP servers', onClick: () => this.toggleSideTab('servers') });
    serversButton.setAttribute('aria-controls', 'right-panel');
    settingsButton.setAttribute('aria-haspopup', 'dialog');
    const sidebarToggle = btn({ id: 'toggle-sidebar', icon: 'sidebar', label: 'Show or hide the side list', onClick: () => this.toggleSidebar() });
    sidebarToggle.setAttribute('aria-controls', 'sidebar');
    sidebarToggle.setAttribute('aria-expanded', 'true');

    const header = h(
      'header',
      { class: 'toolbar', role: 'toolbar', 'aria-label': 'Notebook toolbar' },
      group(sidebarToggle, h('span', { class: 'brand', text: 'ipybox' })),
      group(openFolder, this.recentMenu.element),
      group(btn({ id: 'save', icon: 'save', label: 'Save notebook', command: 'save', onClick: () => void this.save() }), fileMenu.element),
      group(
        btn({ id: 'add-cell', icon: 'plus', label: 'Insert a cell below', command: 'insert-below', onClick: () => this.dispatch('insert-below') }),
        btn({ id: 'delete-cell', icon: 'trash', label: 'Delete selected cells', command: 'delete-cells', onClick: () => this.dispatch('delete-cells') }),
        btn({ id: 'move-up', icon: 'up', label: 'Move selected cells up', command: 'move-up', onClick: () => this.dispatch('move-up') }),
        btn({ id: 'move-down', icon: 'down', label: 'Move selected cells down', command: 'move-down', onClick: () => this.dispatch('move-down') }),
      ),
      group(
        btn({ id: 'run-cell', icon: 'run', label: 'Run selected cells and advance', command: 'run-and-advance', onClick: () => this.dispatch('run-and-advance') }),
        btn({ id: 'run-all', icon: 'runAll', label: 'Run all cells', onClick: () => this.dispatch('run-all') }),
        this.runMenu.element,
        btn({ id: 'interrupt', icon: 'stop', label: 'Interrupt the kernel', command: 'interrupt', onClick: () => this.dispatch('interrupt') }),
        btn({ id: 'restart', icon: 'restart', label: 'Restart the kernel', command: 'restart', onClick: () => this.dispatch('restart') }),
        btn({ id: 'clear-outputs', icon: 'clear', label: 'Clear all outputs', onClick: () => this.dispatch('clear-outputs') }),
      ),
      group(this.cellTypeSelect),
      h('div', { class: 'toolbar-spacer' }),
      this.saveStatusEl,
      this.kernelEl,
      this.policyView.badge,
      variablesButton,
      serversButton,
      this.agentsButton,
      this.approvalsButton,
      settingsButton,
    );

    // ---- banners
    this.provisioningText = h('span', { class: 'provisioning-text', text: 'Preparing the Python environment…' });
    this.provisioningBar = h('progress', { 'aria-label': 'Setting up the Python environment' });
    this.provisioningEl = h('div', { id: 'provisioning', class: 'banner banner-info', role: 'status', 'aria-live': 'polite', hidden: true }, h('div', { class: 'banner-title', text: 'Setting up Python for the first run' }), this.provisioningText, this.provisioningBar);
    this.startupErrorText = h('pre', { class: 'startup-error-text' });
    this.startupErrorEl = h('div', { id: 'startup-error', class: 'banner banner-error', role: 'alert', hidden: true }, h('div', { class: 'banner-title', text: 'The Python kernel could not be started' }), this.startupErrorText);
    this.notebookBanner = h('div', { id: 'notebook-banner', class: 'banner banner-warning', role: 'alert', hidden: true });
    this.trustText = h('span', { class: 'trust-text' });
    this.trustButton = h('button', { id: 'trust-notebook', class: 'button', type: 'button', text: 'Trust notebook' });
    this.trustButton.addEventListener('click', () => void this.trustNotebook());
    this.trustBanner = h('div', { id: 'trust-banner', class: 'banner banner-warning trust-banner', role: 'region', 'aria-label': 'Notebook trust', hidden: true }, this.trustText, this.trustButton);

    // ---- sidebar
    this.notebookLabel = h('span', { class: 'sidebar-heading-text', text: 'Notebooks' });
    this.notebookList = h('ul', { class: 'notebook-list', 'aria-label': 'Notebooks in this workspace' });
    const refresh = h('button', { id: 'refresh-notebooks', class: 'tool tool-small', type: 'button', 'aria-label': 'Refresh the list of notebooks', title: 'Refresh' }, icon('refresh'));
    refresh.addEventListener('click', () => void this.refreshNotebooks());
    const newNb = h('button', { id: 'new-notebook', class: 'tool tool-small', type: 'button', 'aria-label': 'New notebook', title: 'New notebook' }, icon('newFile'));
    newNb.addEventListener('click', () => void this.newNotebook());
    this.packageInput = h('input', { id: 'package-spec', class: 'text-input', type: 'text', placeholder: 'e.g. pandas or numpy==2.1', 'aria-label': 'Package to install with pip', autocomplete: 'off', spellcheck: 'false' });
    this.installButton = h('button', { id: 'install-package', class: 'button', type: 'submit', 'aria-label': 'Install the package', text: 'Install' });
    this.installStatus = h('div', { class: 'install-status', role: 'status', 'aria-live': 'polite' });
    this.installOutput = h('pre', { id: 'install-output', class: 'install-output', hidden: true, tabindex: 0, 'aria-label': 'pip output' });
    const installForm = h('form', { class: 'install-form' }, this.packageInput, this.installButton);
    installForm.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.installPackage();
    });
    this.sidebar = h(
      'aside',
      { id: 'sidebar', class: 'sidebar', 'aria-label': 'Workspace' },
      h('section', { class: 'sidebar-section', 'aria-labelledby': 'workspace-heading' },
        h('h2', { id: 'workspace-heading', class: 'sidebar-heading' }, h('span', { class: 'sidebar-heading-icon' }, icon('folder')), this.workspaceLabel),
      ),
      h('section', { class: 'sidebar-section' },
        h('h2', { class: 'sidebar-heading' }, this.notebookLabel, h('span', { class: 'sidebar-actions' }, newNb, refresh)),
        this.notebookList,
      ),
      h('section', { class: 'sidebar-section sidebar-packages' },
        h('h2', { class: 'sidebar-heading' }, h('span', { class: 'sidebar-heading-text', text: 'Install a package' })),
        installForm,
        this.installStatus,
        this.installOutput,
      ),
    );

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
    const center = h('div', { class: 'center' }, this.provisioningEl, this.startupErrorEl, this.notebookBanner, this.trustBanner, this.docTabs.strip, this.find.element, this.scroller, this.docTabs.pane);
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

    root.replaceChildren(header, h('div', { class: 'workbench' }, this.sidebar, center, rightPanel), footer, this.files.element, this.settingsDialog.element, this.endpointDialog.element, this.saveToolDialog.element, this.variablesView.grid.element, this.palette.element);

    this.saver.subscribe((s) => this.showSaveStatus(s));
    this.wireNotebook();

    header.addEventListener('keydown', (e) => this.onToolbarKey(e, header));
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
        this.showStartupError('This page is the ipybox desktop app’s interface; it only works inside the ipybox window.');
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
        ipc.onSessionEvent((event) => this.onSessionEvent(event)),
        ipc.onAgentActivity((batch) => this.agents.apply(batch)),
        ipc.onMcpEndpoint((state) => this.endpointDialog.update(state)),
        ipc.onApprovalGrants(() => void this.approvalsView.refreshGrants()),
        ipc.onApprovalFocus((id) => this.focusApproval(id)),
        ipc.onCloseRequested(() => this.confirmClose()).catch(() => undefined),
        ipc.onOpenRequest((path) => void this.openNotebook(path)),
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
        this.load(state, await this.trustOf(state));
        markPainted('ipybox:cells-painted');
      }
      void this.refreshNotebooks();
      void this.refreshSettings();
      // Requests made before the UI listened.
      void this.approvalsView.refreshGrants();
      void this.approvalsView.syncPending().then(() => {
        if (this.approvals.waitingCount > 0 && !this.sidePanel.isOpen) this.sidePanel.open('approvals');
      });
    } catch (err) {
      const e = ipc.toBackendError(err);
      this.showStartupError(ipc.describeError(e));
      this.load(null);
    } finally {
      document.body.dataset.ready = 'true';
      markPainted('ipybox:editable');
    }
  }

  /**
   * Whether the outputs stored in the session's notebook may render (JupyterLab's notebook
   * trust): a notebook not yet on disk has none; otherwise the backend knows. Unknown
   * (the backend cannot tell): not trusted.
   */
  private async trustOf(state: AppState | null): Promise<boolean> {
    if (!state || state.notebook === null) return true;
    try {
      return await ipc.notebookTrusted(state.notebook);
    } catch {
      return false;
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
    this.workspaceLabel.textContent = state.workspaceName;
    this.workspaceLabel.title = state.workspace;
    this.pathEl.textContent = state.notebookPath;
    this.docTabs.setNotebookName(baseName(state.notebookPath));
    void this.endpointDialog.refresh();
    this.pathEl.title = state.notebookPath;
    this.setKernelBase(state.kernel);
    if (state.provisioning) this.onSessionEvent({ type: 'provisioning', ...state.provisioning });
    if (state.startupError) this.onSessionEvent({ type: 'startup_failed', ...state.startupError });
    this.recentMenu.setItems(
      state.recent
        .filter((p) => p !== state.workspace)
        .map((path) => ({ label: baseName(path), detail: path, action: () => void this.openWorkspace(path) })),
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

  private onSessionEvent(event: SessionEvent): void {
    switch (event.type) {
      case 'started':
        this.provisioningEl.hidden = true;
        this.startupErrorEl.hidden = true;
        this.setKernelBase('idle');
        return;
      case 'stopped':
        this.serverStatuses.apply({ type: 'servers_stopped' });
        this.setKernelBase('dead');
        return;
      case 'kernel_busy':
        if (!this.executor.hasSettled(event.execution_id)) this.setKernelBase('busy');
        return;
      case 'kernel_idle':
        this.setKernelBase('idle');
        return;
      case 'kernel_replaced':
        this.serverStatuses.apply({ type: 'servers_stopped' });
        this.setKernelBase('idle');
        this.flash(`The kernel was restarted (${event.reason}). Variables are gone; run the cells again.`);
        return;
      case 'provisioning': {
        this.provisioningEl.hidden = false;
        this.provisioningText.textContent = `Step ${event.step} of ${event.steps}: ${event.message}`;
        this.provisioningBar.max = Math.max(1, event.steps);
        this.provisioningBar.value = Math.min(event.step, event.steps);
        this.setKernelBase('starting');
        return;
      }
      case 'startup_failed':
        this.provisioningEl.hidden = true;
        this.showStartupError(event.message);
        this.setKernelBase('dead');
        return;
      case 'package_install':
        // pip's output, live, while the package field's install runs.
        if (this.installing) {
          this.installOutput.hidden = false;
          this.installOutput.textContent += `${event.line}\n`;
          this.installOutput.scrollTop = this.installOutput.scrollHeight;
        }
        return;
      case 'approval_requested': {
        this.executor.noteApprovalRequested(event.request);
        if (!this.approvals.add(event.request)) return;
        // A rule decides right after the request is announced: only a request still waiting
        // for a person opens the panel.
        const id = event.request.id;
        setTimeout(() => {
          if (this.approvals.item(id)?.state === 'waiting' && !this.sidePanel.isOpen) this.sidePanel.open('approvals');
        }, App.PANEL_DELAY_MS);
        return;
      }
      case 'approval_decided':
        this.executor.noteApprovalDecided(event.id, event.decision, event.decided_by);
        this.approvals.remove(event.id);
        return;
      case 'approval_withdrawn':
        this.approvalsView.withdraw(event.id, event.reason);
        return;
      case 'tool_call':
        this.executor.noteToolCall(event);
        this.approvals.recordCall(event);
        this.auditView.onToolCall();
        return;
      case 'tool_progress':
        this.executor.noteToolProgress(event);
        return;
      case 'mcp_server_started':
      case 'mcp_server_exited':
      case 'mcp_server_log':
        this.serverStatuses.apply(event);
        return;
      case 'sandbox_blocked':
        this.executor.noteSandboxBlock(event.execution_id, event.block);
        return;
      default:
        assertNever(event, 'session event');
    }
  }

  private showStartupError(message: string): void {
    this.startupErrorText.textContent = message;
    this.startupErrorEl.hidden = false;
  }

  private setKernelBase(status: KernelStatus): void {
    this.kernelBase = status;
    this.renderKernelStatus();
  }

  /** The indicator: the session's status, and busy while one of our cells runs. */
  private renderKernelStatus(): void {
    let status = this.kernelBase;
    if (status === 'idle' && this.notebook.cells.some((c) => c.runState === 'running')) status = 'busy';
    if (this.kernelEl.dataset.status === status && this.kernelText.textContent) return;
    const words: Record<KernelStatus, string> = { starting: 'Starting', idle: 'Idle', busy: 'Busy', dead: 'Not running' };
    this.kernelEl.dataset.status = status;
    this.kernelText.textContent = `Python · ${words[status]}`;
    this.kernelEl.setAttribute('aria-label', `Kernel ${words[status].toLowerCase()}`);
    this.kernelEl.title = `Kernel: ${words[status].toLowerCase()}`;
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
      void this.save();
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

  /** Left/Right (Home/End) move between toolbar controls, as in an ARIA toolbar; Tab still works. */
  private onToolbarKey(e: KeyboardEvent, header: HTMLElement): void {
    if (!['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(e.key)) return;
    const target = e.target;
    if (!(target instanceof HTMLButtonElement) || target.closest('.menu')) return;
    const controls = [...header.querySelectorAll<HTMLElement>('button.tool, select')].filter((el) => el.offsetParent !== null && !el.closest('.menu'));
    const i = controls.indexOf(target);
    if (i < 0) return;
    const next = e.key === 'Home' ? 0 : e.key === 'End' ? controls.length - 1 : i + (e.key === 'ArrowRight' ? 1 : -1);
    controls[(next + controls.length) % controls.length]?.focus();
    e.preventDefault();
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
        void this.save();
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
        void this.newNotebook();
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
    if (cell) this.cellTypeSelect.value = cell.type;
    this.modeEl.textContent = this.editor.mode === 'edit' ? 'Edit' : 'Command';
    this.modeEl.dataset.mode = this.editor.mode;
    this.renderKernelStatus();
  }

  /** A menu item that runs a command, named and keyed as in the command list. */
  private menuItem(id: string, command: CommandId): MenuItem {
    // Those that open a dialog or the palette keep the focus there.
    const opens = command === 'rename-notebook' || command === 'save-as' || command === 'trash-notebook' || command === 'command-palette' || command.startsWith('export-');
    return {
      id,
      label: COMMANDS[command],
      detail: shortcutFor(command, isMac) ?? undefined,
      action: () => (opens ? this.dispatch(command) : this.afterMenu(() => this.dispatch(command))),
    };
  }

  private afterMenu(action: () => void): void {
    action();
    this.focusNotebook();
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

  private showSaveStatus(s: SaveStatus): void {
    this.saveStatusEl.textContent = s.text;
    // A narrow toolbar shortens it: the tooltip has it whole.
    this.saveStatusEl.title = s.text;
    this.saveStatusEl.dataset.state = s.state;
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

  private toggleApprovals(): void {
    if (this.sidePanel.isOpen && this.sidePanel.activeTab === 'approvals') this.sidePanel.close();
    else this.sidePanel.open('approvals');
  }

  private onSidePanelChange(): void {
    const open = this.sidePanel.isOpen;
    this.makeRoomForNotebook();
    this.approvalsButton.setAttribute('aria-expanded', String(open));
    this.approvalsButton.classList.toggle('active', open);
    // Closed with the focus inside: back to the notebook.
    if (!open && (document.activeElement === document.body || document.activeElement === null)) this.focusNotebook();
  }

  private renderApprovalsBadge(): void {
    const n = this.approvals.waitingCount;
    this.approvalsBadge.textContent = String(n);
    this.approvalsBadge.hidden = n === 0;
    this.approvalsButton.dataset.pending = String(n);
    this.saver.setWaiting(n);
    const label = n > 0 ? `Approvals: ${n} ${n === 1 ? 'tool call waits' : 'tool calls wait'} for your decision` : 'Show or hide approvals and the audit log';
    this.approvalsButton.setAttribute('aria-label', label);
    this.approvalsButton.title = label;
    this.sidePanel.setBadge('approvals', n);
  }

  private toggleSidebar(force?: boolean): void {
    const show = force ?? this.sidebar.hidden;
    this.sidebar.hidden = !show;
    this.buttons.get('toggle-sidebar')?.setAttribute('aria-expanded', String(show));
  }

  private syncSidebarForWidth(): void {
    // Narrow windows start with the side list hidden; the toggle brings it back.
    if (window.innerWidth < 900 && !this.sidebar.hidden) this.toggleSidebar(false);
    this.makeRoomForNotebook();
  }

  /** With the side panel open, the notebook keeps room for its editor: the side list steps aside first. */
  private makeRoomForNotebook(): void {
    if (!this.sidePanel?.isOpen || this.sidebar.hidden) return;
    const center = this.scroller.parentElement;
    if (!center || center.getBoundingClientRect().width >= NOTEBOOK_ROOM) return;
    this.toggleSidebar(false);
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
  // Saving, closing, workspaces, notebooks, packages

  private async save(): Promise<boolean> {
    if (this.saver.isBlocked) {
      let ok = false;
      try {
        ok = await ipc.confirmDialog(`“${this.saver.fileName}” could not be read when it was opened. Save over it with what is shown now?`, 'Save over the file', 'Save over it');
      } catch {
        ok = false;
      }
      if (!ok) return false;
      this.notebookBanner.hidden = true;
      return this.saver.save(true);
    }
    const existed = this.notebooks.includes(this.state?.notebookPath ?? '');
    const ok = await this.saver.save();
    if (ok && !existed) void this.refreshNotebooks();
    return ok;
  }

  /** Bring the waiting request `id` into view in the approval panel (its notification was clicked). */
  private focusApproval(id: number): void {
    this.sidePanel.open('approvals');
    requestAnimationFrame(() => {
      const item = document.querySelector<HTMLElement>(`.approval-request[data-request-id="${Number(id)}"]`);
      item?.scrollIntoView({ block: 'nearest' });
      item?.focus({ preventScroll: true });
    });
  }

  private async confirmClose(): Promise<boolean> {
    if (!this.saver.dirty) return true;
    const decision = await ipc.askUnsavedChanges(this.saver.fileName);
    switch (decision) {
      case 'save':
        return this.save();
      case 'discard':
        return true;
      case 'cancel':
        return false;
      default:
        return assertNever(decision, 'close decision');
    }
  }

  /** Before leaving this notebook: save it; if that fails, ask. */
  private async settleBeforeLeaving(): Promise<boolean> {
    if (!this.saver.dirty) return true;
    if (!this.saver.isBlocked && (await this.saver.save())) return true;
    try {
      return await ipc.confirmDialog(`“${this.saver.fileName}” could not be saved. Leave it and lose the changes?`, 'Unsaved changes', 'Leave it');
    } catch {
      return false;
    }
  }

  private async chooseWorkspace(): Promise<void> {
    if (!(await this.settleBeforeLeaving())) return;
    try {
      const state = await ipc.chooseWorkspace();
      if (state) await this.switchTo(state);
    } catch (err) {
      this.flash(ipc.describeError(ipc.toBackendError(err)));
    }
  }

  private async openWorkspace(path: string): Promise<void> {
    if (!(await this.settleBeforeLeaving())) return;
    try {
      await this.switchTo(await ipc.openWorkspace(path));
    } catch (err) {
      this.flash(ipc.describeError(ipc.toBackendError(err)));
    }
  }

  private async openNotebook(path: string): Promise<void> {
    if (path === this.state?.notebookPath) return;
    if (!(await this.settleBeforeLeaving())) return;
    try {
      await this.switchTo(await ipc.openNotebook(path));
    } catch (err) {
      this.flash(ipc.describeError(ipc.toBackendError(err)));
    }
  }

  private async newNotebook(): Promise<void> {
    const ws = this.state?.workspace;
    if (!ws) return;
    const sep = ws.includes('\\') && !ws.includes('/') ? '\\' : '/';
    const names = new Set(this.notebooks.map(baseName));
    let n = 0;
    let name = 'Untitled.ipynb';
    while (names.has(name) || name === baseName(this.state?.notebookPath ?? '')) name = `Untitled${++n}.ipynb`;
    await this.openNotebook(`${ws.replace(/[\\/]+$/, '')}${sep}${name}`);
  }

  /** The open notebook was renamed or saved as another file: same cells, same kernel, new name. */
  private moved(state: AppState, savedVersion: number | null): void {
    this.state = state;
    this.saver.moveTo(state.notebookPath, savedVersion);
    this.pathEl.textContent = state.notebookPath;
    this.pathEl.title = state.notebookPath;
    this.docTabs.setNotebookName(baseName(state.notebookPath));
    this.renderNotebookList();
  }

  /** The open notebook is in the trash: show the next one (or a new one), saving nothing. */
  private async leaveTrashed(): Promise<void> {
    const gone = this.state?.notebookPath ?? '';
    const next = this.notebooks.find((p) => p !== gone);
    // Forget the trashed notebook's edits, so leaving it does not write it back.
    this.saver.reset(emptyNotebook(), gone, false);
    if (next) await this.openNotebook(next);
    else await this.newNotebook();
  }

  private async switchTo(state: AppState): Promise<void> {
    const trusted = await this.trustOf(state);
    const before = this.state?.workspace;
    this.startupErrorEl.hidden = true;
    this.load(state, trusted);
    void this.refreshNotebooks();
    // Rules and the audit log belong to the workspace; pending requests to the session.
    if (state.workspace !== before) {
      this.auditView.invalidate();
      this.serversView.invalidate();
      this.approvalsView.refresh();
    }
  }

  private async refreshNotebooks(): Promise<void> {
    try {
      this.notebooks = await ipc.listNotebooks();
    } catch {
      this.notebooks = [];
    }
    this.renderNotebookList();
  }

  private renderNotebookList(): void {
    const current = this.state?.notebookPath ?? '';
    const paths = [...this.notebooks];
    if (current && !paths.includes(current)) paths.unshift(current);
    const ws = this.state?.workspace.replace(/[\\/]+$/, '') ?? '';
    this.notebookList.replaceChildren(
      ...paths.map((path) => {
        const rel = ws && path.startsWith(ws) ? path.slice(ws.length + 1) : baseName(path);
        const b = h('button', { class: 'notebook-link', type: 'button', title: path, 'aria-current': path === current ? 'page' : undefined }, icon('file'), h('span', { text: escapeUntrusted(rel) }));
        b.addEventListener('click', () => void this.openNotebook(path));
        const more = h('button', { class: 'tool tool-small notebook-more', type: 'button', 'aria-label': `More actions for ${escapeUntrusted(rel)}`, title: 'Rename, duplicate, delete', text: '⋯' });
        const menu = new MenuButton(more, `Notebook ${escapeUntrusted(rel)}`);
        menu.setItems([
          { label: 'Rename…', action: () => this.files.rename(path) },
          { label: 'Duplicate', action: () => void this.files.duplicate(path) },
          { label: 'Move to trash…', action: () => void this.files.trash(path) },
        ]);
        return h('li', { class: 'notebook-item' }, b, menu.element);
      }),
    );
  }

  /** "Install X" under a ModuleNotFoundError: asked natively (the name comes from kernel output), then installed as from the side list, where pip's log shows. */
  async onInstallRequest(spec: string): Promise<void> {
    if (this.installing) return;
    let ok = false;
    try {
      ok = await ipc.confirmDialog(`Install the package “${escapeUntrusted(spec)}” with pip into the kernel's Python environment?`, 'Install a package', `Install ${escapeUntrusted(spec)}`);
    } catch {
      ok = false;
    }
    if (!ok) return;
    if (this.sidebar.hidden) this.toggleSidebar(true);
    this.packageInput.value = spec;
    await this.installPackage();
  }

  private async installPackage(): Promise<void> {
    const spec = this.packageInput.value.trim();
    if (!spec || this.installing) return;
    this.installing = true;
    this.installButton.disabled = true;
    this.installStatus.dataset.state = 'running';
    this.installStatus.textContent = `Installing ${spec}…`;
    this.installOutput.hidden = true;
    this.installOutput.textContent = '';
    try {
      const out = await ipc.installPackage(spec);
      this.installStatus.dataset.state = 'done';
      this.installStatus.textContent = `Installed ${spec}. If it was imported before, restart the kernel to use the new version.`;
      this.installOutput.textContent = out;
      this.installOutput.hidden = !out.trim();
      this.packageInput.value = '';
    } catch (err) {
      const e = ipc.toBackendError(err);
      this.installStatus.dataset.state = 'error';
      this.installStatus.textContent = `Could not install ${spec}.`;
      this.installOutput.textContent = e.message;
      this.installOutput.hidden = false;
    } finally {
      this.installing = false;
      this.installButton.disabled = false;
    }
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
