/**
 * Each notebook's Python: the status-bar item that names it ("Python 3.12 · .venv", the full
 * path in its tooltip) and the picker it opens — ipybox's own environment, the workspace's
 * `.venv` (made from pyproject.toml with uv when missing), or any Python the person points to.
 * A pick is looked at first (version, ipykernel; offered to install it); switching restarts the
 * kernel, which the picker says before it is done. Paths and logs are shown as text.
 */
import * as ipc from '../ipc';
import type { AppState, KernelPython, PythonCheck, PythonChoice, PythonOptions } from '../ipc';
import { serverLabel } from '../model/remote';
import { escapeUntrusted, escapeUntrustedLines } from '../model/untrusted';
import { h } from './dom';

export interface PythonBackend {
  options(): Promise<PythonOptions>;
  check(choice: PythonChoice): Promise<PythonCheck>;
  set(choice: PythonChoice): Promise<AppState>;
  installIpykernel(choice: PythonChoice): Promise<string>;
  createProjectEnv(): Promise<string>;
  choosePython(): Promise<string | null>;
}

const defaultBackend: PythonBackend = {
  options: () => ipc.pythonOptions(),
  check: (choice) => ipc.checkPython(choice),
  set: (choice) => ipc.setPython(choice),
  installIpykernel: (choice) => ipc.installIpykernel(choice),
  createProjectEnv: () => ipc.createProjectEnv(),
  choosePython: () => ipc.choosePython(),
};

type Kind = PythonChoice['kind'];

export class PythonPicker {
  readonly statusItem: HTMLButtonElement;
  readonly element: HTMLDialogElement;
  private readonly radios: Record<Kind, HTMLInputElement>;
  private readonly paths: Record<Kind, HTMLElement>;
  private readonly customPath: HTMLInputElement;
  private readonly makeEnv: HTMLButtonElement;
  private readonly checkLine: HTMLElement;
  private readonly install: HTMLButtonElement;
  private readonly log: HTMLPreElement;
  private readonly switchButton: HTMLButtonElement;
  private readonly sandboxNote: HTMLElement;
  private readonly remoteNote: HTMLElement;
  /** The server the kernel runs on, if it runs on one. */
  private remote: string | null = null;
  private options: PythonOptions | null = null;
  private checked: { choice: PythonChoice; check: PythonCheck } | null = null;
  private seq = 0;

  constructor(
    /** The session restarted on the new Python: its state. */
    private readonly onSwitched: (state: AppState) => void,
    private readonly backend: PythonBackend = defaultBackend,
  ) {
    this.statusItem = h('button', { id: 'python-status', class: 'status-item python-status', type: 'button', title: 'Python', 'aria-label': 'Python: unknown. Choose the Python this notebook runs' });
    this.statusItem.textContent = 'Python';
    this.statusItem.addEventListener('click', () => void this.open());

    const option = (kind: Kind, label: string, ...extra: HTMLElement[]) => {
      const radio = h('input', { id: `python-${kind}`, type: 'radio', name: 'python-choice', value: kind });
      radio.addEventListener('change', () => void this.pick());
      const path = h('span', { class: 'python-path', id: `python-${kind}-where` });
      return { radio, path, row: h('div', { class: 'python-option' }, h('label', { for: `python-${kind}`, class: 'python-option-label' }, radio, h('span', { text: label })), path, ...extra) };
    };
    this.makeEnv = h('button', { id: 'python-make-venv', class: 'button button-secondary', type: 'button', text: 'Make .venv with uv', hidden: true });
    this.makeEnv.addEventListener('click', () => void this.createEnv());
    this.customPath = h('input', { id: 'python-custom-path', class: 'text-input', type: 'text', spellcheck: 'false', autocomplete: 'off', placeholder: '/path/to/env/bin/python', 'aria-label': 'Path of a Python interpreter or environment' });
    this.customPath.addEventListener('change', () => {
      this.radios.custom.checked = true;
      void this.pick();
    });
    const browse = h('button', { id: 'python-browse', class: 'button button-secondary', type: 'button', text: 'Browse…' });
    browse.addEventListener('click', () => void this.browse());
    const managed = option('managed', 'ipybox’s environment');
    const project = option('project', 'The workspace’s .venv', this.makeEnv);
    const custom = option('custom', 'Another Python', h('div', { class: 'field-row' }, this.customPath, browse));
    this.radios = { managed: managed.radio, project: project.radio, custom: custom.radio };
    this.paths = { managed: managed.path, project: project.path, custom: custom.path };

    this.checkLine = h('p', { id: 'python-check', class: 'field-status', role: 'status', 'aria-live': 'polite' });
    this.install = h('button', { id: 'python-install-ipykernel', class: 'button button-secondary', type: 'button', text: 'Install ipykernel', hidden: true });
    this.install.addEventListener('click', () => void this.installKernel());
    this.log = h('pre', { id: 'python-log', class: 'python-log', hidden: true });
    this.sandboxNote = h('p', { class: 'field-help', hidden: true, text: 'Sandboxed kernels read this environment but cannot change it.' });
    this.remoteNote = h('p', { id: 'python-remote-note', class: 'field-help field-warning', hidden: true });
    this.switchButton = h('button', { id: 'python-switch', class: 'button', type: 'button', text: 'Switch: restart the kernel', disabled: true });
    this.switchButton.addEventListener('click', () => void this.switchTo());
    const cancel = h('button', { id: 'python-cancel', class: 'button button-secondary', type: 'button', text: 'Cancel' });
    cancel.addEventListener('click', () => this.close());
    this.element = h(
      'dialog',
      { id: 'python-dialog', class: 'settings-dialog python-dialog', 'aria-labelledby': 'python-title' },
      h(
        'div',
        { class: 'settings-form' },
        h('h2', { id: 'python-title', class: 'settings-title', text: 'Python for this notebook' }),
        managed.row,
        project.row,
        custom.row,
        h('div', { class: 'field-row' }, this.checkLine, this.install),
        this.log,
        h('p', { class: 'field-help', text: 'Switching restarts the kernel: its variables are lost. The choice is kept for this notebook in ipybox’s data directory, never in the notebook.' }),
        this.sandboxNote,
        this.remoteNote,
        h('div', { class: 'button-row settings-actions' }, cancel, this.switchButton),
      ),
    );
  }

  /** The status bar names the Python the notebook runs (a kernel on `remote`, a server, runs
   *  the server's). */
  show(python: KernelPython, remote: string | null = null): void {
    this.remote = remote;
    const [label, path] = [escapeUntrusted(python.label), escapeUntrusted(python.path)];
    this.statusItem.textContent = label;
    this.statusItem.title = path;
    this.statusItem.setAttribute('aria-label', `${label} (${path}). Choose the Python this notebook runs`);
    this.statusItem.dataset.kind = python.choice.kind;
  }

  get isOpen(): boolean {
    return this.element.open;
  }

  async open(): Promise<void> {
    if (!this.element.open) this.element.showModal();
    this.remoteNote.hidden = this.remote === null;
    this.remoteNote.textContent = this.remote === null ? '' : `This notebook’s kernel runs on the server ${escapeUntrusted(serverLabel(this.remote))}, in that server’s Python: a choice made here applies when the kernel runs on this computer again.`;
    this.checked = null;
    this.switchButton.disabled = true;
    this.install.hidden = true;
    this.log.hidden = true;
    this.checkLine.textContent = '';
    try {
      const options = await this.backend.options();
      this.options = options;
      this.paths.managed.textContent = escapeUntrusted(options.managed);
      this.paths.project.textContent = options.projectExists
        ? escapeUntrusted(options.project)
        : options.pyproject
          ? 'No .venv yet: it can be made from pyproject.toml' + (options.uv ? '' : ' once uv is installed')
          : 'This workspace has no .venv (nor pyproject.toml)';
      this.radios.project.disabled = !options.projectExists;
      this.makeEnv.hidden = options.projectExists || !options.pyproject || !options.uv;
      this.sandboxNote.hidden = !options.sandbox;
      const current = options.current.choice;
      this.radios[current.kind].checked = true;
      this.customPath.value = current.kind === 'custom' ? current.path : '';
      this.paths.custom.textContent = '';
      this.radios.managed.focus();
      this.checkLine.textContent = `Now: ${escapeUntrusted(options.current.label)}`;
    } catch (err) {
      this.checkLine.textContent = ipc.describeError(ipc.toBackendError(err));
    }
  }

  close(): void {
    if (this.element.open) this.element.close();
  }

  private selected(): PythonChoice | null {
    if (this.radios.managed.checked) return { kind: 'managed' };
    if (this.radios.project.checked) return { kind: 'project' };
    if (this.radios.custom.checked) {
      const path = this.customPath.value.trim();
      return path ? { kind: 'custom', path } : null;
    }
    return null;
  }

  /** The person picked an option: look at it (their click is what allows it). */
  private async pick(): Promise<void> {
    const choice = this.selected();
    const seq = ++this.seq;
    this.checked = null;
    this.switchButton.disabled = true;
    this.install.hidden = true;
    if (!choice) {
      this.checkLine.textContent = 'Give the path of a Python interpreter, or Browse… for one.';
      return;
    }
    this.checkLine.textContent = 'Looking at it…';
    try {
      const check = await this.backend.check(choice);
      if (seq !== this.seq) return;
      this.checked = { choice, check };
      const same = this.options !== null && sameChoice(choice, this.options.current.choice);
      if (check.ipykernel) {
        this.checkLine.textContent = `${escapeUntrusted(check.label)} — ready${same ? ' (runs now)' : ''}`;
        this.switchButton.disabled = same;
      } else {
        this.checkLine.textContent = `${escapeUntrusted(check.label)} has no ipykernel, which runs the kernel.`;
        this.install.hidden = false;
      }
      if (choice.kind === 'custom') this.paths.custom.textContent = escapeUntrusted(check.path);
    } catch (err) {
      if (seq !== this.seq) return;
      this.checkLine.textContent = ipc.describeError(ipc.toBackendError(err));
    }
  }

  private async browse(): Promise<void> {
    const path = await this.backend.choosePython().catch(() => null);
    if (!path) return;
    this.customPath.value = path;
    this.radios.custom.checked = true;
    await this.pick();
  }

  private showLog(text: string): void {
    this.log.textContent = escapeUntrustedLines(text);
    this.log.hidden = text.length === 0;
  }

  private async installKernel(): Promise<void> {
    const choice = this.checked?.choice;
    if (!choice) return;
    this.install.disabled = true;
    this.checkLine.textContent = 'Installing ipykernel…';
    try {
      this.showLog(await this.backend.installIpykernel(choice));
      await this.pick();
    } catch (err) {
      const e = ipc.toBackendError(err);
      this.checkLine.textContent = 'ipykernel was not installed.';
      this.showLog(e.message);
    } finally {
      this.install.disabled = false;
    }
  }

  private async createEnv(): Promise<void> {
    this.makeEnv.disabled = true;
    this.checkLine.textContent = 'Making .venv from pyproject.toml with uv…';
    try {
      this.showLog(await this.backend.createProjectEnv());
      const options = await this.backend.options();
      this.options = options;
      this.paths.project.textContent = escapeUntrusted(options.project);
      this.radios.project.disabled = !options.projectExists;
      this.makeEnv.hidden = options.projectExists;
      this.radios.project.checked = options.projectExists;
      if (options.projectExists) await this.pick();
    } catch (err) {
      const e = ipc.toBackendError(err);
      this.checkLine.textContent = 'The environment was not made.';
      this.showLog(e.message);
    } finally {
      this.makeEnv.disabled = false;
    }
  }

  private async switchTo(): Promise<void> {
    const checked = this.checked;
    if (!checked?.check.ipykernel) return;
    this.switchButton.disabled = true;
    this.checkLine.textContent = 'Restarting the kernel…';
    try {
      const state = await this.backend.set(checked.choice);
      this.show(state.python, state.remote);
      this.close();
      this.onSwitched(state);
    } catch (err) {
      this.checkLine.textContent = ipc.describeError(ipc.toBackendError(err));
      this.switchButton.disabled = false;
    }
  }
}

function sameChoice(a: PythonChoice, b: PythonChoice): boolean {
  if (a.kind === 'custom' && b.kind === 'custom') return a.path === b.path;
  return a.kind === b.kind;
}
