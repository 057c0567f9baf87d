/**
 * The side list on the left: the workspace, its notebooks (open, rename, duplicate, trash), and
 * a field that installs a package into the kernel's Python with pip, its log live beneath.
 */
import * as ipc from '../ipc';
import type { AppState } from '../ipc';
import { baseName } from '../model/text';
import { escapeUntrusted } from '../model/untrusted';
import { h } from './dom';
import { icon } from './icons';
import { MenuButton } from './menu';

/** What the list's controls do. */
export interface SideListHost {
  openNotebook(path: string): void;
  newNotebook(): void;
  refreshNotebooks(): void;
  rename(path: string): void;
  duplicate(path: string): void;
  trash(path: string): void;
  /** The list was shown or hidden. */
  shown(shown: boolean): void;
}

export class SideList {
  readonly element: HTMLElement;
  private readonly workspaceLabel: HTMLElement;
  private readonly notebookList: HTMLElement;
  private readonly packageInput: HTMLInputElement;
  private readonly installButton: HTMLButtonElement;
  private readonly installOutput: HTMLElement;
  private readonly installStatus: HTMLElement;
  private installing = false;

  constructor(private readonly host: SideListHost) {
    this.workspaceLabel = h('span', { class: 'workspace-name', text: '' });
    this.notebookList = h('ul', { class: 'notebook-list', 'aria-label': 'Notebooks in this workspace' });
    const refresh = h('button', { id: 'refresh-notebooks', class: 'tool tool-small', type: 'button', 'aria-label': 'Refresh the list of notebooks', title: 'Refresh' }, icon('refresh'));
    refresh.addEventListener('click', () => host.refreshNotebooks());
    const newNb = h('button', { id: 'new-notebook', class: 'tool tool-small', type: 'button', 'aria-label': 'New notebook', title: 'New notebook' }, icon('newFile'));
    newNb.addEventListener('click', () => host.newNotebook());
    this.packageInput = h('input', { id: 'package-spec', class: 'text-input', type: 'text', placeholder: 'pandas or numpy==2.1', 'aria-label': 'Package to install with pip', autocomplete: 'off', spellcheck: 'false' });
    this.installButton = h('button', { id: 'install-package', class: 'button', type: 'submit', 'aria-label': 'Install the package', text: 'Install' });
    this.installStatus = h('div', { class: 'install-status', role: 'status', 'aria-live': 'polite' });
    this.installOutput = h('pre', { id: 'install-output', class: 'install-output', hidden: true, tabindex: 0, 'aria-label': 'pip output' });
    const installForm = h('form', { class: 'install-form' }, this.packageInput, this.installButton);
    installForm.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.installPackage();
    });
    this.element = h(
      'aside',
      { id: 'sidebar', class: 'sidebar', 'aria-label': 'Workspace' },
      h('section', { class: 'sidebar-section', 'aria-labelledby': 'workspace-heading' },
        h('h2', { id: 'workspace-heading', class: 'sidebar-heading' }, h('span', { class: 'sidebar-heading-icon' }, icon('folder')), this.workspaceLabel),
      ),
      h('section', { class: 'sidebar-section' },
        h('h2', { class: 'sidebar-heading' }, h('span', { class: 'sidebar-heading-text', text: 'Notebooks' }), h('span', { class: 'sidebar-actions' }, newNb, refresh)),
        this.notebookList,
      ),
      h('section', { class: 'sidebar-section sidebar-packages' },
        h('h2', { class: 'sidebar-heading' }, h('span', { class: 'sidebar-heading-text', text: 'Install a package' })),
        installForm,
        this.installStatus,
        this.installOutput,
      ),
    );
  }

  get hidden(): boolean {
    return this.element.hidden;
  }

  /** Show or hide the list (toggle without `force`). */
  toggle(force?: boolean): void {
    const show = force ?? this.element.hidden;
    this.element.hidden = !show;
    this.host.shown(show);
  }

  showWorkspace(state: AppState): void {
    this.workspaceLabel.textContent = state.workspaceName;
    this.workspaceLabel.title = state.workspace;
  }

  /** The workspace's notebooks, `state`'s own first when it is not saved yet. */
  showNotebooks(state: AppState | null, notebooks: readonly string[]): void {
    const current = state?.notebookPath ?? '';
    const paths = [...notebooks];
    if (current && !paths.includes(current)) paths.unshift(current);
    const ws = state?.workspace.replace(/[\\/]+$/, '') ?? '';
    this.notebookList.replaceChildren(
      ...paths.map((path) => {
        const rel = ws && path.startsWith(ws) ? path.slice(ws.length + 1) : baseName(path);
        const b = h('button', { class: 'notebook-link', type: 'button', title: path, 'aria-current': path === current ? 'page' : undefined }, icon('file'), h('span', { text: escapeUntrusted(rel) }));
        b.addEventListener('click', () => this.host.openNotebook(path));
        const more = h('button', { class: 'tool tool-small notebook-more', type: 'button', 'aria-label': `More actions for ${escapeUntrusted(rel)}`, title: 'Rename, duplicate, delete', text: '⋯' });
        const menu = new MenuButton(more, `Notebook ${escapeUntrusted(rel)}`);
        menu.setItems([
          { label: 'Rename…', action: () => this.host.rename(path) },
          { label: 'Duplicate', action: () => this.host.duplicate(path) },
          { label: 'Move to trash…', action: () => this.host.trash(path) },
        ]);
        return h('li', { class: 'notebook-item' }, b, menu.element);
      }),
    );
  }

  /** A line of pip's output, shown while the field's install runs. */
  pipLine(line: string): void {
    if (!this.installing) return;
    this.installOutput.hidden = false;
    this.installOutput.append(logLine(line));
    this.installOutput.scrollTop = this.installOutput.scrollHeight;
  }

  /** "Install X" under a ModuleNotFoundError: asked natively (the name comes from kernel output), then installed as from the field, where pip's log shows. */
  async offerInstall(spec: string): Promise<void> {
    if (this.installing) return;
    let ok = false;
    try {
      ok = await ipc.confirmDialog(`Install the package “${escapeUntrusted(spec)}” with pip into the kernel's Python environment?`, 'Install a package', `Install ${escapeUntrusted(spec)}`);
    } catch {
      ok = false;
    }
    if (!ok) return;
    if (this.hidden) this.toggle(true);
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
      this.installOutput.replaceChildren(...out.replace(/\n$/, '').split('\n').map(logLine));
      this.installOutput.hidden = !out.trim();
      this.packageInput.value = '';
    } catch (err) {
      const e = ipc.toBackendError(err);
      this.installStatus.dataset.state = 'error';
      this.installStatus.textContent = `Could not install ${spec}.`;
      this.installOutput.replaceChildren(...e.message.split('\n').map(logLine));
      this.installOutput.hidden = false;
    } finally {
      this.installing = false;
      this.installButton.disabled = false;
    }
  }
}

/** A line of pip's log (untrusted: a package's metadata is in it), its own block: a long line
 *  wraps under itself, indented, so that each line still reads as one in the panel's narrow
 *  width. */
function logLine(line: string): HTMLElement {
  return h('div', { class: 'install-line', text: escapeUntrusted(line) });
}
