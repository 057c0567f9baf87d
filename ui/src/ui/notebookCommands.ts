/**
 * What the person does to the notebook: the keyboard map (JupyterLab's command and edit
 * modes), every command the toolbar, menus, palette and keys name, and the cells' own
 * requests (a click, a boundary crossed, an input answered). The app (`app.ts`) owns the
 * notebook and the chrome around it; this module only acts on them, through `CommandHost`.
 */
import * as ipc from '../ipc';
import type { KernelStatus } from '../ipc';
import { assertNever } from '../util/assert';
import type { Cell, CellType } from '../model/cell';
import type { Mode, NotebookEditor } from '../model/commands';
import type { Notebook } from '../model/notebook';
import { globalCommand, KeySequenceResolver, normalizeKey, type CommandId } from '../keymap';
import type { Executor } from '../runtime/executor';
import type { CellView, CellViewHost } from './cellView';
import { inCellEditor, isTextField } from './dom';
import type { FindBar } from './find';
import type { KernelHelpSource } from './kernelHelp';
import type { NotebookFiles } from './notebookFiles';
import type { NotebookView } from './notebookView';
import type { CommandPalette } from './palette';
import type { SaveToolDialog } from './saveToolDialog';
import type { SidePanel } from './sidePanel';
import type { WorkspaceActions } from './workspaceActions';

/** The app as the commands see it: the open notebook (it changes) and the parts they drive. */
export interface CommandHost {
  readonly notebook: Notebook;
  readonly editor: NotebookEditor;
  readonly executor: Executor;
  readonly view: NotebookView;
  readonly docTabs: { readonly showingAgent: boolean };
  readonly workspace: WorkspaceActions;
  readonly files: NotebookFiles;
  readonly find: FindBar;
  readonly palette: CommandPalette;
  readonly sidePanel: SidePanel;
  readonly saveToolDialog: SaveToolDialog;
  readonly isMac: boolean;
  syncChrome(): void;
  focusNotebook(): void;
  focusActiveCell(): void;
  flash(text: string): void;
  setKernelBase(status: KernelStatus): void;
  /** The kernel was replaced: what it held is gone. */
  kernelChanged(): void;
  /** "Install X" under a ModuleNotFoundError. */
  offerInstall(spec: string): Promise<void>;
  /** "Open in grid" under a frame shown as a result: why not, or null once open. */
  openFrame(name: string): Promise<string | null>;
}

export class NotebookCommands implements CellViewHost {
  private readonly keys = new KeySequenceResolver();

  constructor(private readonly host: CommandHost) {}

  /** Completion and help for code cells come from the kernel, through the backend. */
  readonly kernelHelp = (): KernelHelpSource | null => (ipc.hasBackend() ? { complete: ipc.complete, inspect: ipc.inspect } : null);

  /** "Install X" under a ModuleNotFoundError. */
  async onInstallRequest(spec: string): Promise<void> {
    await this.host.offerInstall(spec);
  }

  /** "Open in grid" under a frame shown as a result. */
  onOpenFrame(name: string): Promise<string | null> {
    return this.host.openFrame(name);
  }

  // ===========================================================================================
  // Keyboard

  onKeyDown(e: KeyboardEvent): void {
    if (e.isComposing || e.defaultPrevented) return;
    const key = normalizeKey(e, this.host.isMac);
    if (!key) return;
    const target = document.activeElement;
    if (key === 'Mod+s') {
      e.preventDefault();
      e.stopPropagation();
      void this.host.workspace.save();
      return;
    }
    if (target?.closest('.menu, dialog')) return;
    // An agent's session shows: its notebook is read-only, and the person's is hidden.
    if (this.host.docTabs.showingAgent) return;
    const global = globalCommand(key);
    if (global) {
      e.preventDefault();
      e.stopPropagation();
      this.dispatch(global);
      return;
    }
    // The find bar and the palette handle their own keys.
    if (target?.closest('.find-bar, .palette')) return;
    if (key === 'Escape' && target && target !== document.body && !this.host.view.element.contains(target)) {
      // Escape from the toolbar or the side list: back to the notebook, in command mode.
      e.preventDefault();
      this.host.editor.setMode('command');
      this.host.focusActiveCell();
      return;
    }
    if (isTextField(target)) return;
    const inEditor = inCellEditor(target);
    if (inEditor && target instanceof HTMLInputElement) return; // CodeMirror's search field
    const inNotebook = !!target && (target === document.body || this.host.view.element.contains(target));
    if (!inEditor && !inNotebook) return;
    const mode: Mode = inEditor ? 'edit' : 'command';
    if (mode !== this.host.editor.mode) this.host.editor.setMode(mode);
    if (mode === 'edit' && key === 'Escape' && this.host.view.activeView?.editorWantsEscape) return;
    const r = this.keys.feed(mode, key, performance.now());
    if (r.kind === 'none') return;
    e.preventDefault();
    e.stopPropagation();
    if (r.kind === 'command') this.dispatch(r.command);
  }

  /** Focus left the editors for the notebook (a click on a cell or output): command mode. */
  syncCommandModeFromFocus(): void {
    const active = document.activeElement;
    if (this.host.editor.mode === 'edit' && active && !active.closest('.cm-editor')) {
      this.host.editor.setMode('command');
    }
  }

  onNotebookClick(e: MouseEvent): void {
    const target = e.target;
    if (!(target instanceof Element)) return;
    const link = target.closest('a');
    if (!link) return;
    // Nothing navigates the webview; in-page anchors scroll to their target.
    e.preventDefault();
    const href = link.getAttribute('href');
    if (href && href.startsWith('#') && href.length > 1) {
      const id = decodeURIComponent(href.slice(1));
      const dest = [...this.host.view.element.querySelectorAll('[id]')].find((el) => el.id === id);
      dest?.scrollIntoView({ block: 'start' });
    }
  }

  // ===========================================================================================
  // Commands

  dispatch(command: CommandId): void {
    const ed = this.host.editor;
    switch (command) {
      case 'enter-edit':
        this.enterEdit();
        return;
      case 'enter-command':
        ed.setMode('command');
        this.host.focusActiveCell();
        return;
      case 'run-and-advance': {
        const cells = ed.selectedCells;
        const last = Math.max(...ed.selectedIndices);
        this.host.executor.run(cells);
        if (last >= this.host.notebook.length - 1) {
          ed.append('code');
          this.enterEdit();
        } else {
          ed.select(last + 1);
          ed.setMode('command');
          this.host.focusActiveCell();
        }
        return;
      }
      case 'run-in-place':
        this.host.executor.run(ed.selectedCells);
        ed.setMode('command');
        this.host.focusActiveCell();
        return;
      case 'run-and-insert':
        this.host.executor.run(ed.selectedCells);
        ed.select(Math.max(...ed.selectedIndices));
        ed.insert('below');
        this.enterEdit();
        return;
      case 'insert-above':
      case 'insert-below':
        ed.insert(command === 'insert-above' ? 'above' : 'below');
        ed.setMode('command');
        this.host.focusActiveCell();
        return;
      case 'delete-cells':
        ed.deleteSelected();
        this.host.focusActiveCell();
        return;
      case 'undo-delete':
        if (!ed.undoDelete()) this.host.flash('Nothing to undo.');
        this.host.focusActiveCell();
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
        this.host.focusActiveCell();
        return;
      case 'extend-prev':
      case 'extend-next':
        ed.extendSelection(command === 'extend-prev' ? -1 : 1);
        this.host.focusActiveCell();
        return;
      case 'select-all':
        ed.selectAll();
        return;
      case 'move-up':
      case 'move-down':
        ed.moveSelected(command === 'move-up' ? -1 : 1);
        this.host.focusActiveCell();
        return;
      case 'copy':
        ed.copy();
        this.host.flash(`Copied ${ed.selectedIndices.length === 1 ? 'a cell' : `${ed.selectedIndices.length} cells`}.`);
        return;
      case 'cut':
        ed.cut();
        this.host.focusActiveCell();
        return;
      case 'paste-below':
      case 'paste-above':
        ed.paste(command === 'paste-above' ? 'above' : 'below');
        this.host.focusActiveCell();
        return;
      case 'merge':
        ed.mergeSelected();
        this.host.focusActiveCell();
        return;
      case 'split': {
        const offsets = this.host.view.activeView?.cursorOffsets ?? [];
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
        void this.host.workspace.save();
        return;
      case 'toggle-output':
        for (const cell of ed.selectedCells) if (cell.type === 'code') cell.setOutputsHidden(!cell.outputsHidden);
        return;
      case 'toggle-output-scroll':
        for (const cell of ed.selectedCells) this.toggleScroll(cell);
        return;
      case 'run-all':
        this.host.executor.run(this.host.notebook.cells);
        this.host.focusNotebook();
        return;
      case 'clear-outputs':
        this.clearAllOutputs();
        this.host.focusNotebook();
        return;
      case 'run-above':
        this.runAbove();
        return;
      case 'run-below':
        this.runBelow();
        return;
      case 'restart-run-all':
        void this.restart().then((ok) => ok && this.host.executor.run(this.host.notebook.cells));
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
        this.host.find.open(command === 'find-replace', ed.mode === 'edit' ? (this.host.view.activeView?.selectedText ?? '') : '');
        return;
      case 'command-palette':
        this.host.palette.open();
        return;
      case 'show-outline':
        this.host.sidePanel.open('outline', true);
        return;
      case 'new-notebook':
        void this.host.workspace.newNotebook();
        return;
      case 'rename-notebook':
        this.host.files.rename();
        return;
      case 'save-as':
        this.host.files.saveAs();
        return;
      case 'duplicate-notebook':
        void this.host.files.duplicate();
        return;
      case 'trash-notebook':
        void this.host.files.trash();
        return;
      case 'export-html':
      case 'export-pdf':
      case 'export-py':
        void this.host.files.exportAs(command === 'export-html' ? 'html' : command === 'export-pdf' ? 'pdf' : 'py');
        return;
      default:
        assertNever(command, 'command');
    }
  }

  private enterEdit(where: 'start' | 'end' | 'keep' = 'keep'): void {
    const cell = this.host.editor.activeCell;
    if (!cell) return;
    if (cell.type === 'markdown') cell.setRendered(false);
    this.host.editor.setMode('edit');
    this.host.view.activeView?.focusEditor(where);
    this.host.view.revealActive();
  }

  changeType(type: CellType): void {
    this.host.editor.changeType(type);
    this.host.syncChrome();
    if (this.host.editor.mode === 'command') this.host.focusActiveCell();
  }

  private runAbove(): void {
    this.host.executor.run(this.host.notebook.cells.slice(0, Math.min(...this.host.editor.selectedIndices)));
  }

  private runBelow(): void {
    this.host.executor.run(this.host.notebook.cells.slice(Math.min(...this.host.editor.selectedIndices)));
  }

  private clearAllOutputs(): void {
    for (const cell of this.host.notebook.cells) {
      if (cell.type !== 'code') continue;
      cell.clearOutputs();
      cell.clearToolCalls();
      cell.setNotice(null);
    }
  }

  /** "Save cell as tool" on the active code cell. */
  private saveCellAsTool(): void {
    const cell = this.host.editor.activeCell;
    if (!cell || cell.type !== 'code' || cell.source.trim() === '') {
      this.host.flash("Select a code cell with code to save it as a tool");
      return;
    }
    this.host.saveToolDialog.open(cell.source);
  }

  private clearSelectedOutputs(): void {
    for (const cell of this.host.editor.selectedCells) {
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
      this.host.flash('Interrupt sent to the kernel.');
    } catch (err) {
      this.host.flash(ipc.describeError(ipc.toBackendError(err)));
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
    this.host.setKernelBase('starting');
    try {
      await ipc.restartKernel();
      this.host.executor.cancelAll('The kernel was restarted.');
      this.host.kernelChanged();
      this.host.setKernelBase('idle');
      this.host.flash('The kernel was restarted.');
      return true;
    } catch (err) {
      this.host.flash(ipc.describeError(ipc.toBackendError(err)));
      this.host.setKernelBase('dead');
      return false;
    }
  }

  // ===========================================================================================
  // CellViewHost

  onCellClick(view: CellView, extend: boolean): void {
    const i = this.host.notebook.indexOf(view.cell);
    if (i < 0) return;
    if (extend) this.host.editor.extendTo(i);
    else this.host.editor.select(i);
  }

  onEditorFocus(view: CellView): void {
    const i = this.host.notebook.indexOf(view.cell);
    if (i < 0) return;
    if (i !== this.host.editor.active || this.host.editor.selectedIndices.length > 1) this.host.editor.select(i);
    this.host.editor.setMode('edit');
  }

  onEditRequest(view: CellView): void {
    this.host.editor.selectCell(view.cell);
    this.enterEdit();
  }

  onBoundary(view: CellView, direction: 'up' | 'down'): boolean {
    const i = this.host.notebook.indexOf(view.cell);
    const j = direction === 'up' ? i - 1 : i + 1;
    const target = this.host.notebook.cell(j);
    if (!target) return false;
    this.host.editor.select(j);
    if (target.type === 'markdown' && target.rendered) {
      this.host.editor.setMode('command');
      this.host.focusActiveCell();
    } else {
      this.enterEdit(direction === 'up' ? 'end' : 'start');
    }
    return true;
  }

  onInputReply(view: CellView, value: string): void {
    void this.host.executor.replyInput(view.cell, value);
    this.host.editor.selectCell(view.cell);
    this.host.editor.setMode('command');
    this.host.focusActiveCell();
  }

  onToggleOutputScroll(view: CellView): void {
    this.toggleScroll(view.cell);
  }

  onRunAgain(view: CellView): void {
    this.host.executor.run([view.cell]);
  }

  onToggleOutputCollapse(view: CellView): void {
    view.cell.setOutputsHidden(!view.cell.outputsHidden);
  }
}
