/**
 * The header toolbar: file, run and cell commands, the kernel's and the file's status, and the
 * buttons that open the side panel's tabs, the agents' endpoint and the settings. It draws and
 * reports; what a button does is the host's.
 */
import type { KernelStatus } from '../ipc';
import { COMMANDS, shortcutFor, type CommandId } from '../keymap';
import type { CellType } from '../model/cell';
import { h } from './dom';
import { icon, type IconName } from './icons';
import { MenuButton, type MenuItem } from './menu';
import type { SaveStatus } from './saver';

/** What the toolbar's controls do. */
export interface ToolbarHost {
  dispatch(command: CommandId): void;
  save(): void;
  chooseWorkspace(): void;
  toggleSidebar(): void;
  toggleSideTab(id: string): void;
  openAgents(): void;
  openSettings(): void;
  changeType(type: CellType): void;
  /** After a control was used: the keyboard goes back to the notebook. */
  focusNotebook(): void;
  focusActiveCell(): void;
}

interface ToolButtonSpec {
  id: string;
  icon: IconName;
  label: string;
  command?: CommandId;
  text?: string;
  onClick(): void;
}

const KERNEL_WORDS: Record<KernelStatus, string> = { starting: 'Starting', idle: 'Idle', busy: 'Busy', dead: 'Not running' };

export class Toolbar {
  readonly element: HTMLElement;
  readonly recentMenu: MenuButton;
  readonly runMenu: MenuButton;
  private readonly buttons = new Map<string, HTMLButtonElement>();
  private readonly cellTypeSelect: HTMLSelectElement;
  private readonly kernelEl: HTMLElement;
  private readonly kernelText: HTMLElement;
  private readonly saveStatusEl: HTMLElement;
  private readonly approvalsButton: HTMLButtonElement;
  private readonly approvalsBadge: HTMLElement;
  private readonly agentsButton: HTMLButtonElement;

  /** `policyBadge`: the Sandbox tab's badge, shown among the status items. */
  constructor(
    private readonly host: ToolbarHost,
    private readonly isMac: boolean,
    policyBadge: HTMLElement,
  ) {
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
    const dispatch = (command: CommandId) => () => host.dispatch(command);

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

    const openFolder = btn({ id: 'open-folder', icon: 'folder', label: 'Open folder', text: 'Open folder', onClick: () => host.chooseWorkspace() });
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
      if (v === 'code' || v === 'markdown' || v === 'raw') host.changeType(v);
      host.focusActiveCell();
    });

    this.kernelText = h('span', { class: 'kernel-text', text: 'Starting' });
    this.kernelEl = h('div', { id: 'kernel-status', class: 'kernel-status', role: 'status', 'aria-live': 'polite', 'aria-label': 'Kernel starting' }, h('span', { class: 'kernel-dot', 'aria-hidden': 'true' }), this.kernelText);
    this.kernelEl.dataset.status = 'starting';
    this.saveStatusEl = h('div', { id: 'save-status', class: 'save-status', role: 'status', 'aria-live': 'polite' });
    this.approvalsBadge = h('span', { id: 'approvals-badge', class: 'badge', hidden: true });
    this.approvalsButton = btn({ id: 'toggle-approvals', icon: 'approval', label: 'Show or hide approvals and the audit log', text: 'Approvals', onClick: () => host.toggleSideTab('approvals') });
    this.approvalsButton.appendChild(this.approvalsBadge);
    this.approvalsButton.setAttribute('aria-controls', 'right-panel');
    this.approvalsButton.setAttribute('aria-expanded', 'false');
    this.agentsButton = btn({ id: 'open-agents', icon: 'agent', label: 'Let agents use this workspace over MCP', text: 'Agents', onClick: () => host.openAgents() });
    this.agentsButton.setAttribute('aria-haspopup', 'dialog');
    const settingsButton = btn({ id: 'open-settings', icon: 'settings', label: 'Settings', text: 'Settings', onClick: () => host.openSettings() });
    settingsButton.setAttribute('aria-haspopup', 'dialog');
    // The MCP servers tab, visible in the toolbar (not only as a tab of a closed side panel).
    const variablesButton = btn({ id: 'open-variables', icon: 'panel', label: 'Variables the kernel holds', onClick: () => host.toggleSideTab('variables') });
    const serversButton = btn({ id: 'open-servers', icon: 'package', label: 'MCP servers: register, check and regenerate the tools code can call', text: 'MCP servers', onClick: () => host.toggleSideTab('servers') });
    serversButton.setAttribute('aria-controls', 'right-panel');
    const sidebarToggle = btn({ id: 'toggle-sidebar', icon: 'sidebar', label: 'Show or hide the side list', onClick: () => host.toggleSidebar() });
    sidebarToggle.setAttribute('aria-controls', 'sidebar');
    sidebarToggle.setAttribute('aria-expanded', 'true');

    this.element = h(
      'header',
      { class: 'toolbar', role: 'toolbar', 'aria-label': 'Notebook toolbar' },
      group(sidebarToggle, h('span', { class: 'brand', text: 'ipybox' })),
      group(openFolder, this.recentMenu.element),
      group(btn({ id: 'save', icon: 'save', label: 'Save notebook', command: 'save', onClick: () => host.save() }), fileMenu.element),
      group(
        btn({ id: 'add-cell', icon: 'plus', label: 'Insert a cell below', command: 'insert-below', onClick: dispatch('insert-below') }),
        btn({ id: 'delete-cell', icon: 'trash', label: 'Delete selected cells', command: 'delete-cells', onClick: dispatch('delete-cells') }),
        btn({ id: 'move-up', icon: 'up', label: 'Move selected cells up', command: 'move-up', onClick: dispatch('move-up') }),
        btn({ id: 'move-down', icon: 'down', label: 'Move selected cells down', command: 'move-down', onClick: dispatch('move-down') }),
      ),
      group(
        btn({ id: 'run-cell', icon: 'run', label: 'Run selected cells and advance', command: 'run-and-advance', onClick: dispatch('run-and-advance') }),
        btn({ id: 'run-all', icon: 'runAll', label: 'Run all cells', onClick: dispatch('run-all') }),
        this.runMenu.element,
        btn({ id: 'interrupt', icon: 'stop', label: 'Interrupt the kernel', command: 'interrupt', onClick: dispatch('interrupt') }),
        btn({ id: 'restart', icon: 'restart', label: 'Restart the kernel', command: 'restart', onClick: dispatch('restart') }),
        btn({ id: 'clear-outputs', icon: 'clear', label: 'Clear all outputs', onClick: dispatch('clear-outputs') }),
      ),
      group(this.cellTypeSelect),
      h('div', { class: 'toolbar-spacer' }),
      this.saveStatusEl,
      this.kernelEl,
      policyBadge,
      variablesButton,
      serversButton,
      this.agentsButton,
      this.approvalsButton,
      settingsButton,
    );
    this.element.addEventListener('keydown', (e) => this.onKey(e));
  }

  /** The kernel indicator. */
  showKernel(status: KernelStatus): void {
    if (this.kernelEl.dataset.status === status && this.kernelText.textContent) return;
    const words = KERNEL_WORDS[status];
    this.kernelEl.dataset.status = status;
    this.kernelText.textContent = `Python · ${words}`;
    this.kernelEl.setAttribute('aria-label', `Kernel ${words.toLowerCase()}`);
    this.kernelEl.title = `Kernel: ${words.toLowerCase()}`;
  }

  showSaveStatus(s: SaveStatus): void {
    this.saveStatusEl.textContent = s.text;
    // A narrow toolbar shortens it: the tooltip has it whole.
    this.saveStatusEl.title = s.text;
    this.saveStatusEl.dataset.state = s.state;
  }

  /** The active cell's type. */
  showCellType(type: CellType): void {
    this.cellTypeSelect.value = type;
  }

  /** How many tool calls wait for the person. */
  showWaiting(n: number): void {
    this.approvalsBadge.textContent = String(n);
    this.approvalsBadge.hidden = n === 0;
    this.approvalsButton.dataset.pending = String(n);
    const label = n > 0 ? `Approvals: ${n} ${n === 1 ? 'tool call waits' : 'tool calls wait'} for your decision` : 'Show or hide approvals and the audit log';
    this.approvalsButton.setAttribute('aria-label', label);
    this.approvalsButton.title = label;
  }

  /** The side panel opened or closed. */
  showPanelOpen(open: boolean): void {
    this.approvalsButton.setAttribute('aria-expanded', String(open));
    this.approvalsButton.classList.toggle('active', open);
  }

  showSidebar(shown: boolean): void {
    this.buttons.get('toggle-sidebar')?.setAttribute('aria-expanded', String(shown));
  }

  showServing(serving: boolean): void {
    this.agentsButton.classList.toggle('serving', serving);
  }

  /** A menu item that runs a command, named and keyed as in the command list. */
  private menuItem(id: string, command: CommandId): MenuItem {
    // Those that open a dialog or the palette keep the focus there.
    const opens = command === 'rename-notebook' || command === 'save-as' || command === 'trash-notebook' || command === 'command-palette' || command.startsWith('export-');
    return {
      id,
      label: COMMANDS[command],
      detail: shortcutFor(command, this.isMac) ?? undefined,
      action: () => {
        this.host.dispatch(command);
        if (!opens) this.host.focusNotebook();
      },
    };
  }

  /** Left/Right (Home/End) move between toolbar controls, as in an ARIA toolbar; Tab still works. */
  private onKey(e: KeyboardEvent): void {
    if (!['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(e.key)) return;
    const target = e.target;
    if (!(target instanceof HTMLButtonElement) || target.closest('.menu')) return;
    const controls = [...this.element.querySelectorAll<HTMLElement>('button.tool, select')].filter((el) => el.offsetParent !== null && !el.closest('.menu'));
    const i = controls.indexOf(target);
    if (i < 0) return;
    const next = e.key === 'Home' ? 0 : e.key === 'End' ? controls.length - 1 : i + (e.key === 'ArrowRight' ? 1 : -1);
    controls[(next + controls.length) % controls.length]?.focus();
    e.preventDefault();
  }
}
