/**
 * The Settings dialog's "Where this workspace's kernel runs": this computer, or a Jupyter Server /
 * Enterprise Gateway (URL, token, headers). Test connection asks the server what it offers without
 * starting anything; Apply keeps the choice (the token in the OS keyring) and restarts the kernel
 * there. The backend keeps the choice in ipybox's data directory, never in the workspace.
 */
import * as ipc from '../ipc';
import type { GatewayProbe, RemoteRequest, RemoteState } from '../ipc';
import { checkServerUrl, keptSecret, parseHeaderLines, whereItRuns } from '../model/remote';
import { h } from './dom';

export interface RemoteBackend {
  remoteState(): Promise<RemoteState>;
  probeRemote(request: RemoteRequest): Promise<GatewayProbe>;
  applyRemote(request: RemoteRequest | null): Promise<RemoteState>;
}

const defaultBackend: RemoteBackend = {
  remoteState: () => ipc.remoteState(),
  probeRemote: (r) => ipc.probeRemote(r),
  applyRemote: (r) => ipc.applyRemote(r),
};

export class RemoteSection {
  readonly element: HTMLElement;
  private readonly local: HTMLInputElement;
  private readonly server: HTMLInputElement;
  private readonly fields: HTMLFieldSetElement;
  private readonly url: HTMLInputElement;
  private readonly token: HTMLInputElement;
  private readonly headers: HTMLTextAreaElement;
  private readonly running: HTMLElement;
  private readonly kept: HTMLElement;
  private readonly error: HTMLElement;
  private readonly status: HTMLElement;
  private readonly test: HTMLButtonElement;
  private readonly apply: HTMLButtonElement;
  private state: RemoteState | null = null;

  constructor(
    /** The kernel restarted somewhere else. */
    private readonly onApplied: (state: RemoteState) => void = () => {},
    private readonly backend: RemoteBackend = defaultBackend,
  ) {
    this.local = h('input', { id: 'remote-off', type: 'radio', name: 'kernel-place', value: 'local' });
    this.server = h('input', { id: 'remote-on', type: 'radio', name: 'kernel-place', value: 'server' });
    this.url = h('input', {
      id: 'remote-url',
      class: 'text-input',
      type: 'url',
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: 'https://jupyter.example.org',
      'aria-describedby': 'remote-url-help',
    });
    this.token = h('input', { id: 'remote-token', class: 'text-input', type: 'password', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'remote-kept' });
    this.headers = h('textarea', {
      id: 'remote-headers',
      class: 'text-input remote-headers',
      rows: '2',
      spellcheck: 'false',
      placeholder: 'X-Auth-Request-Token: …',
      'aria-describedby': 'remote-headers-help',
    });
    this.running = h('p', { id: 'remote-running', class: 'field-status', role: 'status', 'aria-live': 'polite' });
    this.kept = h('p', { id: 'remote-kept', class: 'field-help' });
    this.error = h('p', { id: 'remote-error', class: 'field-error', role: 'alert', hidden: true });
    this.status = h('p', { id: 'remote-status', class: 'field-status', role: 'status', 'aria-live': 'polite' });
    this.test = h('button', { id: 'test-remote', class: 'button button-secondary', type: 'button', text: 'Test connection' });
    this.apply = h('button', { id: 'apply-remote', class: 'button', type: 'button', 'aria-describedby': 'remote-apply-note', text: 'Apply: restart the kernel' });
    this.fields = h(
      'fieldset',
      { id: 'remote-fields', class: 'remote-fields' },
      h('legend', { class: 'visually-hidden', text: 'The server' }),
      h('label', { for: 'remote-url', class: 'field-label', text: 'Server URL' }),
      this.url,
      h('p', { id: 'remote-url-help', class: 'field-help', text: 'A Jupyter Server, JupyterHub user server or Jupyter Enterprise Gateway, with its base path if it has one.' }),
      h('label', { for: 'remote-token', class: 'field-label', text: 'Token' }),
      this.token,
      this.kept,
      h('label', { for: 'remote-headers', class: 'field-label', text: 'Headers (optional)' }),
      this.headers,
      h('p', { id: 'remote-headers-help', class: 'field-help', text: 'One per line, as Name: value — for a proxy in front of the server. Kept with the token.' }),
    );
    this.element = h(
      'section',
      { id: 'remote-section', class: 'settings-field remote-section', 'aria-labelledby': 'remote-title' },
      h('h3', { id: 'remote-title', class: 'field-label settings-subtitle', text: 'Where this workspace’s kernel runs' }),
      this.running,
      h(
        'div',
        { class: 'remote-choice', role: 'radiogroup', 'aria-labelledby': 'remote-title' },
        h('label', { class: 'policy-check', for: 'remote-off' }, this.local, h('span', { text: 'This computer' })),
        h('label', { class: 'policy-check', for: 'remote-on' }, this.server, h('span', { text: 'A Jupyter server' })),
      ),
      this.fields,
      this.error,
      this.status,
      h('div', { class: 'button-row' }, this.test, this.apply),
      h('p', {
        id: 'remote-apply-note',
        class: 'field-help',
        text: 'On a server, your code runs and reads files there; MCP servers, approval and the audit log stay here — the kernel only asks. Apply restarts the kernel: its variables are lost.',
      }),
    );
    for (const radio of [this.local, this.server]) radio.addEventListener('change', () => this.onInput());
    for (const field of [this.url, this.token, this.headers]) field.addEventListener('input', () => this.onInput());
    this.test.addEventListener('click', () => void this.probe());
    this.apply.addEventListener('click', () => void this.submit());
  }

  /** Read where the kernel runs now (the dialog opened). */
  async refresh(): Promise<void> {
    this.error.hidden = true;
    this.status.textContent = '';
    try {
      this.show(await this.backend.remoteState());
    } catch (err) {
      this.showError(`Where the kernel runs could not be read: ${ipc.toBackendError(err).message}`);
    }
  }

  private show(state: RemoteState): void {
    this.state = state;
    this.running.textContent = whereItRuns(state);
    this.running.dataset.remote = state.running ? 'yes' : 'no';
    const onServer = state.choice !== null;
    this.local.checked = !onServer;
    this.server.checked = onServer;
    this.url.value = state.choice?.url ?? '';
    this.token.value = '';
    this.headers.value = '';
    this.token.placeholder = state.choice?.hasToken ? 'Kept — leave empty to keep it' : 'The server’s token, if it needs one';
    this.kept.textContent = keptSecret(state);
    const fixed = state.commandLine !== null;
    for (const el of [this.local, this.server, this.url, this.token, this.headers, this.apply]) el.disabled = fixed;
    if (fixed) this.status.textContent = `This run’s server was set on the command line (${state.commandLine}); start ipybox without --gateway-url to choose here.`;
    this.onInput(false);
  }

  private onInput(clear = true): void {
    this.fields.hidden = !this.server.checked;
    this.fields.disabled = this.state?.commandLine != null;
    this.test.hidden = !this.server.checked;
    if (clear) {
      this.error.hidden = true;
      this.status.textContent = '';
    }
  }

  /** The server the fields describe, or why they do not describe one (shown). */
  private request(): RemoteRequest | null {
    const url = checkServerUrl(this.url.value);
    if (!url.ok) return this.invalid(url.message, this.url);
    const headers = parseHeaderLines(this.headers.value);
    if (!headers.ok) return this.invalid(headers.message, this.headers);
    // Empty fields keep what is kept for the same server.
    const same = this.state?.choice?.url === url.value;
    return {
      url: url.value,
      token: this.token.value.trim() ? this.token.value.trim() : same ? null : '',
      headers: headers.value.length ? headers.value : same ? null : [],
    };
  }

  private invalid(message: string, field: HTMLElement): null {
    this.showError(message);
    field.focus();
    return null;
  }

  private showError(text: string): void {
    this.error.textContent = text;
    this.error.hidden = false;
  }

  private async probe(): Promise<void> {
    const request = this.request();
    if (!request) return;
    this.error.hidden = true;
    this.status.textContent = 'Asking the server…';
    this.test.disabled = true;
    try {
      const probe = await this.backend.probeRemote(request);
      const kernels = probe.kernels.length ? probe.kernels.join(', ') : 'none';
      this.status.textContent = `The server answers${probe.version ? ` (version ${probe.version})` : ''}. Kernels it offers: ${kernels}${probe.defaultKernel ? `; ipybox starts ${probe.defaultKernel}` : ''}.`;
    } catch (err) {
      this.status.textContent = '';
      this.showError(ipc.toBackendError(err).message);
    } finally {
      this.test.disabled = !this.server.checked;
    }
  }

  private async submit(): Promise<void> {
    const request = this.server.checked ? this.request() : null;
    if (this.server.checked && !request) return;
    this.error.hidden = true;
    this.status.textContent = request ? 'Asking the server, then restarting the kernel there…' : 'Restarting the kernel on this computer…';
    this.apply.disabled = true;
    this.test.disabled = true;
    try {
      const state = await this.backend.applyRemote(request);
      this.show(state);
      this.status.textContent = state.running ? `Applied: the kernel restarted on ${state.running}.` : 'Applied: the kernel restarted on this computer.';
      this.onApplied(state);
    } catch (err) {
      this.status.textContent = '';
      this.showError(`Not applied: ${ipc.toBackendError(err).message}`);
    } finally {
      this.apply.disabled = this.state?.commandLine != null;
      this.test.disabled = !this.server.checked;
    }
  }
}
