/**
 * A workspace's notebook files, from the File menu and each notebook's menu in the side list:
 * new, rename, Save As, duplicate, move to the trash, export. Names are asked in a small dialog that
 * shows the backend's refusal in its own words (a taken name, a name outside the workspace)
 * and keeps what was typed. Renaming or saving the open notebook under another name keeps it
 * as it is on screen, with its kernel, its variables and its undo history.
 */
import * as ipc from '../ipc';
import type { AppState } from '../ipc';
import { baseName } from '../model/text';
import { escapeUntrusted, escapeUntrustedLines } from '../model/untrusted';
import { h } from './dom';

export interface FilesHost {
  readonly state: AppState | null;
  /** The workspace's notebooks (paths). */
  readonly notebooks: string[];
  /** The open notebook serialized now, whether all its outputs are trusted, and its version. */
  snapshot(): { content: string; trusted: boolean; version: number };
  /** Save the open notebook now; false when that failed. */
  saveCurrent(): Promise<boolean>;
  /** The open notebook has a new path (`state`); `savedVersion`: the version now on disk under it. */
  moved(state: AppState, savedVersion: number | null): void;
  /** Hold every save of the open notebook (it is going to the trash) until `resume`. */
  pauseSaving(): void;
  resumeSaving(): void;
  /** The open notebook went to the trash: show another one without saving this one again. */
  leaveTrashed(): Promise<void>;
  newNotebook(): Promise<void>;
  refreshNotebooks(): Promise<void>;
  flash(text: string): void;
}

/** `name` as a notebook file name: `.ipynb` added when missing. */
export function notebookFileName(name: string): string {
  const trimmed = name.trim();
  return trimmed.toLowerCase().endsWith('.ipynb') ? trimmed : `${trimmed}.ipynb`;
}

/** The path of file `name` beside `path`. */
export function besides(path: string, name: string): string {
  const cut = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return `${path.slice(0, cut + 1)}${name}`;
}

/** The dialog that asks for a notebook's name. */
class NameDialog {
  readonly element: HTMLDialogElement;
  private readonly title: HTMLElement;
  private readonly input: HTMLInputElement;
  private readonly error: HTMLElement;
  private readonly ok: HTMLButtonElement;
  private submit: ((name: string) => Promise<string | null>) | null = null;

  constructor() {
    this.title = h('h2', { id: 'name-dialog-title', class: 'settings-title' });
    this.input = h('input', { id: 'notebook-name', class: 'text-input mono', type: 'text', autocomplete: 'off', spellcheck: 'false', 'aria-label': 'Notebook name' });
    this.error = h('p', { id: 'notebook-name-error', class: 'field-error', role: 'alert', hidden: true });
    this.ok = h('button', { id: 'notebook-name-ok', class: 'button', type: 'submit' });
    const cancel = h('button', { id: 'notebook-name-cancel', class: 'button button-secondary', type: 'button', text: 'Cancel' });
    cancel.addEventListener('click', () => this.close());
    const form = h('form', { class: 'settings-form name-form', novalidate: true }, this.title, this.input, this.error, h('div', { class: 'button-row settings-actions' }, this.ok, cancel));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.done();
    });
    this.element = h('dialog', { id: 'notebook-name-dialog', class: 'settings-dialog name-dialog', 'aria-labelledby': 'name-dialog-title' }, form);
  }

  /** Ask; `submit` returns an error to show (the dialog stays open) or null when done. */
  ask(title: string, okLabel: string, initial: string, submit: (name: string) => Promise<string | null>): void {
    this.title.textContent = title;
    this.ok.textContent = okLabel;
    this.input.value = initial;
    this.error.hidden = true;
    this.submit = submit;
    if (!this.element.open) this.element.showModal();
    this.input.focus();
    // The name without `.ipynb` selected, as file managers do.
    const stem = initial.toLowerCase().endsWith('.ipynb') ? initial.length - 6 : initial.length;
    this.input.setSelectionRange(0, stem);
  }

  close(): void {
    this.submit = null;
    if (this.element.open) this.element.close();
  }

  private async done(): Promise<void> {
    const submit = this.submit;
    const name = this.input.value;
    if (!submit) return;
    if (!name.trim() || name.trim().toLowerCase() === '.ipynb') {
      this.showError('Give the notebook a name.');
      return;
    }
    this.ok.disabled = true;
    try {
      const problem = await submit(notebookFileName(name));
      if (problem === null) this.close();
      else this.showError(problem);
    } finally {
      this.ok.disabled = false;
    }
  }

  private showError(text: string): void {
    this.error.textContent = escapeUntrustedLines(text);
    this.error.hidden = false;
    this.input.focus();
  }
}

export class NotebookFiles {
  private readonly dialog = new NameDialog();

  constructor(private readonly host: FilesHost) {}

  get element(): HTMLElement {
    return this.dialog.element;
  }

  private get current(): string {
    return this.host.state?.notebookPath ?? '';
  }

  /** Rename `path` (the open notebook by default). */
  rename(path = this.current): void {
    if (!path) return;
    this.dialog.ask(`Rename “${escapeUntrusted(baseName(path))}”`, 'Rename', baseName(path), async (name) => {
      const to = besides(path, name);
      if (to === path) return null;
      const open = path === this.current;
      try {
        // What is on screen is on disk before the file moves.
        if (open && !(await this.host.saveCurrent())) return 'The notebook could not be saved first, so it was not renamed.';
        const state = await ipc.renameNotebook(path, to);
        if (open) this.host.moved(state, null);
        await this.host.refreshNotebooks();
        this.host.flash(`Renamed to ${escapeUntrusted(name)}`);
        return null;
      } catch (err) {
        return ipc.toBackendError(err).message;
      }
    });
  }

  /** Save the open notebook under a new name and go on in it. */
  saveAs(): void {
    const path = this.current;
    if (!path) return;
    const stem = baseName(path).replace(/\.ipynb$/i, '');
    this.dialog.ask('Save notebook as', 'Save', `${stem}-copy.ipynb`, async (name) => {
      const { content, trusted, version } = this.host.snapshot();
      try {
        const state = await ipc.saveNotebookAs(besides(path, name), content, trusted);
        this.host.moved(state, version);
        await this.host.refreshNotebooks();
        this.host.flash(`Saved as ${escapeUntrusted(name)}`);
        return null;
      } catch (err) {
        return ipc.toBackendError(err).message;
      }
    });
  }

  async duplicate(path = this.current): Promise<void> {
    if (!path) return;
    try {
      if (path === this.current && !(await this.host.saveCurrent())) {
        this.host.flash('The notebook could not be saved first, so it was not duplicated.');
        return;
      }
      const copy = await ipc.duplicateNotebook(path);
      await this.host.refreshNotebooks();
      this.host.flash(`Copied to ${escapeUntrusted(baseName(copy))}`);
    } catch (err) {
      this.host.flash(escapeUntrusted(ipc.describeError(ipc.toBackendError(err))));
    }
  }

  /**
   * Export the open notebook, saved first, where the person chooses in the native save
   * dialog; the backend writes it in the background and the status line says how it went.
   */
  async exportAs(format: ipc.ExportFormat): Promise<void> {
    const path = this.current;
    if (!path) return;
    const what = format === 'html' ? 'HTML' : format === 'pdf' ? 'PDF' : 'a Python script';
    try {
      if (!(await this.host.saveCurrent())) {
        this.host.flash(`The notebook could not be saved first, so it was not exported as ${what}.`);
        return;
      }
      this.host.flash(`Exporting as ${what}…`);
      const written = await ipc.exportNotebook(path, format);
      this.host.flash(written ? `Exported to ${escapeUntrusted(baseName(written))}` : '');
    } catch (err) {
      this.host.flash(`Not exported: ${escapeUntrusted(ipc.describeError(ipc.toBackendError(err)))}`);
    }
  }

  async trash(path = this.current): Promise<void> {
    if (!path) return;
    const name = escapeUntrusted(baseName(path));
    let ok = false;
    try {
      ok = await ipc.confirmDialog(`Move “${name}” to the trash? You can restore it from the trash of your file manager.`, 'Delete notebook', 'Move to trash');
    } catch {
      ok = false;
    }
    if (!ok) return;
    const open = path === this.current;
    if (open) this.host.pauseSaving();
    try {
      await ipc.trashNotebook(path);
    } catch (err) {
      if (open) this.host.resumeSaving();
      this.host.flash(escapeUntrusted(ipc.describeError(ipc.toBackendError(err))));
      return;
    }
    if (open) await this.host.leaveTrashed();
    await this.host.refreshNotebooks();
    this.host.flash(`Moved ${name} to the trash`);
  }
}
