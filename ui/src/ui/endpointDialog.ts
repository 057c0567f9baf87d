/**
 * The Agents dialog (toolbar): serve this workspace to AI agents over MCP. Shows the
 * endpoint's URL and token and configurations ready to paste into Claude Code and Claude
 * Desktop. The agents' cells then appear in tabs of their own, and their tool calls ask here.
 */
import * as ipc from '../ipc';
import type { McpEndpointState } from '../ipc';
import { claudeCodeCommand, claudeCodeJson, claudeDesktopJson, maskToken, servingStatus } from '../model/endpoint';
import { h } from './dom';

export interface EndpointBackend {
  mcpEndpoint(): Promise<McpEndpointState>;
  setMcpEndpoint(enabled: boolean, newToken?: boolean): Promise<McpEndpointState>;
}

const defaultBackend: EndpointBackend = {
  mcpEndpoint: () => ipc.mcpEndpoint(),
  setMcpEndpoint: (enabled, newToken) => ipc.setMcpEndpoint(enabled, newToken),
};

export interface EndpointHost {
  /** The endpoint was read or changed. */
  onEndpoint(state: McpEndpointState): void;
}

interface Snippet {
  id: string;
  label: string;
  help: string;
  make(url: string, token: string): string;
}

const SNIPPETS: Snippet[] = [
  { id: 'claude-code', label: 'Claude Code', help: 'Run in a terminal, in your project folder:', make: claudeCodeCommand },
  { id: 'claude-code-json', label: 'Claude Code (.mcp.json)', help: 'Or put this in the project’s .mcp.json:', make: claudeCodeJson },
  { id: 'claude-desktop', label: 'Claude Desktop', help: 'Add to claude_desktop_config.json (needs Node.js; the mcp-remote bridge connects it):', make: claudeDesktopJson },
];

/** Put `text` on the clipboard; false when the webview refused. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h('textarea', { class: 'visually-hidden' });
    area.value = text;
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

export class EndpointDialog {
  readonly element: HTMLDialogElement;
  private readonly toggle: HTMLInputElement;
  private readonly details: HTMLElement;
  private readonly urlInput: HTMLInputElement;
  private readonly tokenInput: HTMLInputElement;
  private readonly showToken: HTMLButtonElement;
  private readonly snippetText: HTMLElement;
  private readonly snippetHelp: HTMLElement;
  private readonly snippetSelect: HTMLSelectElement;
  private readonly error: HTMLElement;
  private readonly status: HTMLElement;
  private readonly sandboxNote: HTMLElement;
  private state: McpEndpointState | null = null;
  private revealed = false;
  private busy = false;

  constructor(
    private readonly host: EndpointHost,
    private readonly backend: EndpointBackend = defaultBackend,
  ) {
    this.toggle = h('input', { id: 'mcp-endpoint-toggle', type: 'checkbox', role: 'switch', 'aria-describedby': 'mcp-endpoint-help' });
    this.toggle.addEventListener('change', () => void this.setEnabled(this.toggle.checked, false));
    this.urlInput = h('input', { id: 'mcp-endpoint-url', class: 'text-input mono', type: 'text', readonly: true, 'aria-label': 'Endpoint URL' });
    this.tokenInput = h('input', { id: 'mcp-endpoint-token', class: 'text-input mono', type: 'text', readonly: true, 'aria-label': 'Bearer token' });
    this.showToken = h('button', { id: 'show-mcp-token', class: 'button button-secondary button-small', type: 'button', text: 'Show' });
    this.showToken.addEventListener('click', () => {
      this.revealed = !this.revealed;
      this.render();
    });
    const copyUrl = this.copyButton('copy-mcp-url', 'Copy the URL', () => this.state?.url ?? '');
    const copyToken = this.copyButton('copy-mcp-token', 'Copy the token', () => this.state?.token ?? '');
    const renew = h('button', { id: 'new-mcp-token', class: 'button button-secondary button-small', type: 'button', text: 'New token' });
    renew.addEventListener('click', () => void this.setEnabled(true, true));
    this.snippetSelect = h('select', { id: 'mcp-config-kind', class: 'cell-type-select', 'aria-label': 'Configuration for' });
    for (const s of SNIPPETS) this.snippetSelect.append(h('option', { value: s.id, text: s.label }));
    this.snippetSelect.addEventListener('change', () => this.render());
    this.snippetHelp = h('p', { class: 'field-help' });
    this.snippetText = h('pre', { id: 'mcp-config', class: 'endpoint-config', tabindex: 0, 'aria-label': 'Configuration to paste' });
    const copyConfig = this.copyButton('copy-mcp-config', 'Copy the configuration', () => {
      const st = this.state;
      return st?.url && st.token ? this.snippet().make(st.url, st.token) : '';
    });
    this.sandboxNote = h('p', { id: 'mcp-endpoint-sandbox', class: 'endpoint-sandbox' });
    this.details = h(
      'div',
      { id: 'mcp-endpoint-details', class: 'endpoint-details', hidden: true },
      this.sandboxNote,
      h('label', { class: 'field-label', for: 'mcp-endpoint-url', text: 'URL' }),
      h('div', { class: 'endpoint-row' }, this.urlInput, copyUrl),
      h('label', { class: 'field-label', for: 'mcp-endpoint-token', text: 'Bearer token' }),
      h('div', { class: 'endpoint-row' }, this.tokenInput, this.showToken, copyToken, renew),
      h('p', { class: 'field-help', text: 'Anyone with the token can run code here (each call still asks you). A new token stops configurations holding the old one.' }),
      h('div', { class: 'endpoint-row endpoint-config-head' }, h('label', { class: 'field-label', for: 'mcp-config-kind', text: 'Configuration for' }), this.snippetSelect, copyConfig),
      this.snippetHelp,
      this.snippetText,
    );
    this.error = h('p', { id: 'mcp-endpoint-error', class: 'field-error', role: 'alert', hidden: true });
    this.status = h('p', { id: 'mcp-endpoint-status', class: 'field-status', role: 'status', 'aria-live': 'polite' });
    const close = h('button', { id: 'close-agents', class: 'button button-secondary', type: 'button', text: 'Close' });
    close.addEventListener('click', () => this.close());
    const body = h(
      'div',
      { class: 'settings-form endpoint-form' },
      h('h2', { id: 'agents-title', class: 'settings-title', text: 'Agents' }),
      h('p', {
        id: 'mcp-endpoint-help',
        class: 'field-help endpoint-intro',
        text: 'Let AI agents such as Claude Code run Python on this workspace over MCP. Each agent gets a kernel of its own; its cells appear here in a tab of their own as they run, and every tool call its code makes asks you first, with the same dialog, rules and audit log as your own cells.',
      }),
      h('label', { class: 'endpoint-switch' }, this.toggle, h('span', { text: 'Serve this workspace to agents (on this computer only)' })),
      this.error,
      this.status,
      this.details,
      h('div', { class: 'button-row settings-actions' }, close),
    );
    this.element = h('dialog', { id: 'agents-dialog', class: 'settings-dialog endpoint-dialog', 'aria-labelledby': 'agents-title' }, body);
  }

  get isOpen(): boolean {
    return this.element.open;
  }

  get current(): McpEndpointState | null {
    return this.state;
  }

  async open(): Promise<void> {
    this.error.hidden = true;
    this.status.textContent = '';
    if (!this.element.open) this.element.showModal();
    this.toggle.focus();
    await this.refresh();
  }

  /** Read the endpoint's state (the window calls this when a workspace opens). */
  async refresh(): Promise<void> {
    try {
      this.show(await this.backend.mcpEndpoint());
    } catch (err) {
      this.showError(`The endpoint could not be read: ${ipc.toBackendError(err).message}`);
    }
  }

  close(): void {
    if (this.element.open) this.element.close();
  }

  private copyButton(id: string, label: string, text: () => string): HTMLButtonElement {
    const button = h('button', { id, class: 'button button-secondary button-small', type: 'button', text: 'Copy', 'aria-label': label });
    button.addEventListener('click', () => {
      void copyText(text()).then((ok) => {
        this.status.textContent = ok ? 'Copied.' : 'The clipboard is not available: select the text and copy it.';
      });
    });
    return button;
  }

  private async setEnabled(enabled: boolean, newToken: boolean): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.toggle.disabled = true;
    this.error.hidden = true;
    this.status.textContent = enabled ? 'Starting…' : 'Stopping: agents’ sessions end…';
    try {
      const state = await this.backend.setMcpEndpoint(enabled, newToken);
      this.show(state);
      this.status.textContent = servingStatus(enabled, newToken, state);
    } catch (err) {
      const e = ipc.toBackendError(err);
      this.status.textContent = '';
      this.showError(`Not changed: ${e.message.trim() || ipc.describeError(e)}`);
    } finally {
      this.busy = false;
      this.toggle.disabled = false;
    }
  }

  /** The backend says how the endpoint is (it started after the window loaded). */
  update(state: McpEndpointState): void {
    if (!this.busy) this.show(state);
  }

  private show(state: McpEndpointState): void {
    this.state = state;
    if (state.error) this.showError(`Agents cannot be served: ${state.error}`);
    this.render();
    this.host.onEndpoint(state);
  }

  private showError(text: string): void {
    this.error.textContent = text;
    this.error.hidden = false;
  }

  private render(): void {
    const s = this.state;
    const on = s?.enabled === true && s.url !== null && s.token !== null;
    this.toggle.checked = s?.enabled === true;
    this.details.hidden = !on;
    if (!on || !s?.url || !s.token) return;
    this.sandboxNote.dataset.sandboxed = String(s.sandboxed);
    this.sandboxNote.classList.toggle('banner-warning', !s.sandboxed);
    this.sandboxNote.textContent = s.sandboxed
      ? "Agents' code runs in the sandbox, under this workspace's policy, even when your own cells do not."
      : "Agents' code is NOT sandboxed: it runs with your rights. It can read, change and delete every file you can, start programs and reach the network. Only the tool calls it makes ask you first.";
    this.urlInput.value = s.url;
    this.tokenInput.value = this.revealed ? s.token : maskToken(s.token);
    this.showToken.textContent = this.revealed ? 'Hide' : 'Show';
    this.showToken.setAttribute('aria-label', this.revealed ? 'Hide the token' : 'Show the token');
    const snippet = this.snippet();
    this.snippetHelp.textContent = snippet.help;
    // Shown with the token hidden unless it is shown above; copied whole.
    this.snippetText.textContent = snippet.make(s.url, this.revealed ? s.token : maskToken(s.token));
  }

  private snippet(): Snippet {
    return SNIPPETS.find((x) => x.id === this.snippetSelect.value) ?? (SNIPPETS[0] as Snippet);
  }
}
