/**
 * The Settings dialog (toolbar ⚙): the approval timeout, saved in ipybox's data directory by
 * the backend and in force at once (the running session's next tool call waits that long); and
 * where this workspace's kernel runs (this computer or a Jupyter server, `RemoteSection`).
 */
import * as ipc from '../ipc';
import type { AppSettings } from '../ipc';
import { DEFAULT_APPROVAL_TIMEOUT_SECS, parseTimeoutInput, timeoutStatus } from '../model/settings';
import { h } from './dom';
import { RemoteSection } from './remoteSection';

export interface SettingsBackend {
  appSettings(): Promise<AppSettings>;
  setAppSettings(approvalTimeoutSecs: number): Promise<AppSettings>;
}

const defaultBackend: SettingsBackend = {
  appSettings: () => ipc.appSettings(),
  setAppSettings: (secs) => ipc.setAppSettings(secs),
};

export interface SettingsHost {
  /** The settings were read or saved. */
  onSettings(settings: AppSettings): void;
  /** The kernel restarted on another machine (or back on this one). */
  onKernelMoved?(): void;
}

export class SettingsDialog {
  readonly element: HTMLDialogElement;
  private readonly input: HTMLInputElement;
  private readonly error: HTMLElement;
  private readonly status: HTMLElement;
  private readonly save: HTMLButtonElement;
  private settings: AppSettings | null = null;
  private saved = false;
  readonly remote: RemoteSection;

  constructor(
    private readonly host: SettingsHost,
    private readonly backend: SettingsBackend = defaultBackend,
  ) {
    this.input = h('input', {
      id: 'approval-timeout',
      class: 'text-input',
      type: 'text',
      inputmode: 'numeric',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-describedby': 'approval-timeout-help approval-timeout-error approval-timeout-status',
    });
    this.error = h('p', { id: 'approval-timeout-error', class: 'field-error', role: 'alert', hidden: true });
    this.status = h('p', { id: 'approval-timeout-status', class: 'field-status', role: 'status', 'aria-live': 'polite' });
    this.save = h('button', { id: 'save-settings', class: 'button', type: 'submit', text: 'Save' });
    this.remote = new RemoteSection(() => this.host.onKernelMoved?.());
    const close = h('button', { id: 'close-settings', class: 'button button-secondary', type: 'button', text: 'Close' });
    close.addEventListener('click', () => this.close());
    const form = h(
      'form',
      { class: 'settings-form', novalidate: true },
      h('h2', { id: 'settings-title', class: 'settings-title', text: 'Settings' }),
      h(
        'div',
        { class: 'settings-field' },
        h('label', { for: 'approval-timeout', class: 'field-label', text: 'Approval timeout' }),
        h('div', { class: 'field-row' }, this.input, h('span', { class: 'field-unit', text: 'seconds' }), this.save),
        h('p', {
          id: 'approval-timeout-help',
          class: 'field-help',
          text: `A tool call nobody approves or rejects within this time is rejected, and the code is told it timed out. Default ${DEFAULT_APPROVAL_TIMEOUT_SECS} s; at most a day.`,
        }),
        this.error,
        this.status,
      ),
      this.remote.element,
      h('p', { class: 'settings-where', text: 'Settings are yours, kept in ipybox’s data directory — never in a workspace, whose code could change them.' }),
      h('div', { class: 'button-row settings-actions' }, close),
    );
    // Enter in the server's fields does not save the timeout (the section has its own buttons).
    this.remote.element.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && e.target instanceof HTMLInputElement) e.preventDefault();
    });
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.submit();
    });
    this.input.addEventListener('input', () => {
      this.error.hidden = true;
      this.saved = false;
    });
    this.element = h('dialog', { id: 'settings-dialog', class: 'settings-dialog', 'aria-labelledby': 'settings-title' }, form);
  }

  get isOpen(): boolean {
    return this.element.open;
  }

  /** Show the dialog with the settings as saved now. */
  async open(): Promise<void> {
    this.error.hidden = true;
    this.saved = false;
    this.status.textContent = '';
    if (!this.element.open) this.element.showModal();
    this.input.focus();
    void this.remote.refresh();
    try {
      this.show(await this.backend.appSettings());
      this.input.select();
    } catch (err) {
      this.showError(`The settings could not be read: ${ipc.toBackendError(err).message}`);
    }
  }

  close(): void {
    if (this.element.open) this.element.close();
  }

  private show(settings: AppSettings): void {
    this.settings = settings;
    this.input.value = String(settings.approvalTimeoutSecs);
    this.status.textContent = timeoutStatus(settings, this.saved);
    this.host.onSettings(settings);
  }

  private showError(text: string): void {
    this.error.textContent = text;
    this.error.hidden = false;
  }

  private async submit(): Promise<void> {
    const parsed = parseTimeoutInput(this.input.value);
    if (!parsed.ok) {
      this.showError(parsed.message);
      this.input.focus();
      return;
    }
    this.save.disabled = true;
    try {
      const settings = await this.backend.setAppSettings(parsed.secs);
      this.saved = true;
      this.show(settings);
    } catch (err) {
      const e = ipc.toBackendError(err);
      this.showError(`Not saved: ${e.message.trim() || ipc.describeError(e)}`);
    } finally {
      this.save.disabled = false;
    }
  }

  /** The settings last read or saved. */
  get current(): AppSettings | null {
    return this.settings;
  }
}
