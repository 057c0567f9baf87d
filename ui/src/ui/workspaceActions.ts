/**
 * Moving between notebooks and workspaces, and what must happen to the open notebook first:
 * saving (asking when it cannot be), closing the window, a new notebook's name, the one to
 * show when the open one went to the trash. Keeps the workspace's list of notebooks.
 */
import * as ipc from '../ipc';
import type { AppState } from '../ipc';
import { emptyNotebook } from '../model/ipynb';
import { baseName } from '../model/text';
import { assertNever } from '../util/assert';
import type { SaveController } from './saver';

/** What the actions need of the window. */
export interface WorkspaceHost {
  /** The session shown now. */
  readonly state: AppState | null;
  readonly saver: SaveController;
  /** Show another session's notebook. */
  load(state: AppState, trusted: boolean): void;
  /** The open notebook has a new name (renamed, saved as): same cells, same kernel. */
  renamed(state: AppState): void;
  /** The workspace changed: what belongs to it (rules, audit log, servers) is read again. */
  workspaceChanged(): void;
  /** The file the notebook could not be read from is saved over: its warning goes. */
  savedOverBlocked(): void;
  /** The list of notebooks changed. */
  notebooksChanged(notebooks: readonly string[]): void;
  flash(text: string): void;
}

/**
 * Whether the outputs stored in a session's notebook may render (JupyterLab's notebook
 * trust): a notebook not yet on disk has none; otherwise the backend knows. Unknown (the
 * backend cannot tell): not trusted.
 */
export async function trustOf(state: AppState | null): Promise<boolean> {
  if (!state || state.notebook === null) return true;
  try {
    return await ipc.notebookTrusted(state.notebook);
  } catch {
    return false;
  }
}

export class WorkspaceActions {
  private list: string[] = [];

  constructor(private readonly host: WorkspaceHost) {}

  /** The workspace's notebooks, as last listed. */
  get notebooks(): readonly string[] {
    return this.list;
  }

  async save(): Promise<boolean> {
    const saver = this.host.saver;
    if (saver.isBlocked) {
      let ok = false;
      try {
        ok = await ipc.confirmDialog(`“${saver.fileName}” could not be read when it was opened. Save over it with what is shown now?`, 'Save over the file', 'Save over it');
      } catch {
        ok = false;
      }
      if (!ok) return false;
      this.host.savedOverBlocked();
      return saver.save(true);
    }
    const existed = this.list.includes(this.host.state?.notebookPath ?? '');
    const ok = await saver.save();
    if (ok && !existed) void this.refreshNotebooks();
    return ok;
  }

  /** The window is asked to close: unsaved changes are saved, discarded or keep it open, as the person says. */
  async confirmClose(): Promise<boolean> {
    const saver = this.host.saver;
    if (!saver.dirty) return true;
    const decision = await ipc.askUnsavedChanges(saver.fileName);
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

  async chooseWorkspace(): Promise<void> {
    if (!(await this.settleBeforeLeaving())) return;
    try {
      const state = await ipc.chooseWorkspace();
      if (state) await this.switchTo(state);
    } catch (err) {
      this.host.flash(ipc.describeError(ipc.toBackendError(err)));
    }
  }

  async openWorkspace(path: string): Promise<void> {
    if (!(await this.settleBeforeLeaving())) return;
    try {
      await this.switchTo(await ipc.openWorkspace(path));
    } catch (err) {
      this.host.flash(ipc.describeError(ipc.toBackendError(err)));
    }
  }

  async openNotebook(path: string): Promise<void> {
    if (path === this.host.state?.notebookPath) return;
    if (!(await this.settleBeforeLeaving())) return;
    try {
      await this.switchTo(await ipc.openNotebook(path));
    } catch (err) {
      this.host.flash(ipc.describeError(ipc.toBackendError(err)));
    }
  }

  /** A new notebook in the workspace, named Untitled, Untitled1, … (a name no notebook has). */
  async newNotebook(): Promise<void> {
    const state = this.host.state;
    const ws = state?.workspace;
    if (!ws) return;
    const sep = ws.includes('\\') && !ws.includes('/') ? '\\' : '/';
    const names = new Set(this.list.map(baseName));
    let n = 0;
    let name = 'Untitled.ipynb';
    while (names.has(name) || name === baseName(state.notebookPath)) name = `Untitled${++n}.ipynb`;
    await this.openNotebook(`${ws.replace(/[\\/]+$/, '')}${sep}${name}`);
  }

  /** The open notebook was renamed or saved as another file: same cells, same kernel, new name. */
  moved(state: AppState, savedVersion: number | null): void {
    this.host.saver.moveTo(state.notebookPath, savedVersion);
    this.host.renamed(state);
  }

  /** The open notebook is in the trash: show the next one (or a new one), saving nothing. */
  async leaveTrashed(): Promise<void> {
    const gone = this.host.state?.notebookPath ?? '';
    const next = this.list.find((p) => p !== gone);
    // Forget the trashed notebook's edits, so leaving it does not write it back.
    this.host.saver.reset(emptyNotebook(), gone, false);
    if (next) await this.openNotebook(next);
    else await this.newNotebook();
  }

  async refreshNotebooks(): Promise<void> {
    try {
      this.list = await ipc.listNotebooks();
    } catch {
      this.list = [];
    }
    this.host.notebooksChanged(this.list);
  }

  /** Before leaving this notebook: save it; if that fails, ask. */
  private async settleBeforeLeaving(): Promise<boolean> {
    const saver = this.host.saver;
    if (!saver.dirty) return true;
    if (!saver.isBlocked && (await saver.save())) return true;
    try {
      return await ipc.confirmDialog(`“${saver.fileName}” could not be saved. Leave it and lose the changes?`, 'Unsaved changes', 'Leave it');
    } catch {
      return false;
    }
  }

  private async switchTo(state: AppState): Promise<void> {
    const trusted = await trustOf(state);
    const before = this.host.state?.workspace;
    this.host.load(state, trusted);
    void this.refreshNotebooks();
    // Rules and the audit log belong to the workspace; pending requests to the session.
    if (state.workspace !== before) this.host.workspaceChanged();
  }
}
