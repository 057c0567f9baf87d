/**
 * The "MCP servers" tab: the servers registered for the workspace, each with its live status,
 * its tools (drawn by `serverTools.ts`), Regenerate (and what changed), Remove, and a switch to run it sandboxed; and a form to add or
 * edit one — by fields or by pasting a README's JSON — checked as it is typed, with "Test
 * connection" before saving. Nothing typed is lost when the backend refuses it.
 */
import * as ipc from '../ipc';
import type { Placeholder, Registration, RegisteredServer, ServerList, ToolSummary } from '../ipc';
import {
  DEFAULT_PROFILE,
  SHIPPED_PREFIX,
  type FormField,
  type PastedServer,
  type ServerForm,
  type ServerParamsJson,
  type ServerStatuses,
  type Transport,
  type ToolChanges,
  checkForm,
  describeChanges,
  describeSource,
  describeState,
  emptyForm,
  formFromParams,
  parsePasted,
  suggestName,
  nameSuggestion,
  unwrapSrt,
} from '../model/serverForm';
import { relativeToWorkspace } from '../model/policy';
import { escapeUntrusted, escapeUntrustedLines } from '../model/untrusted';
import { h } from './dom';
import { renderTool, renderToolChanges } from './serverTools';
import { ServerCatalog } from './serverCatalog';
import { type SignInBackend, SignInFlow } from './signInRow';

export interface ServersBackend extends SignInBackend {
  mcpServers(): Promise<ServerList>;
  previewMcpServer(params: ServerParamsJson): Promise<ToolSummary[]>;
  registerMcpServer(name: string, params: ServerParamsJson): Promise<Registration>;
  regenerateMcpServer(name: string): Promise<Registration>;
  unregisterMcpServer(name: string): Promise<boolean>;
  mcpPlaceholders(names: string[]): Promise<Placeholder[]>;
  pickPath(directory: boolean, defaultPath: string | undefined): Promise<string | null>;
  mcpCatalog(): Promise<ipc.CatalogEntry[]>;
  installMcpPackage(source: ipc.PackageSource, pkg: string, args: string[]): Promise<ipc.InstalledPackage>;
}

const defaultBackend: ServersBackend = {
  mcpServers: () => ipc.mcpServers(),
  previewMcpServer: (p) => ipc.previewMcpServer(p),
  registerMcpServer: (n, p) => ipc.registerMcpServer(n, p),
  regenerateMcpServer: (n) => ipc.regenerateMcpServer(n),
  unregisterMcpServer: (n) => ipc.unregisterMcpServer(n),
  mcpPlaceholders: (names) => ipc.mcpPlaceholders(names),
  pickPath: (d, p) => ipc.pickPath(d, p),
  mcpCatalog: () => ipc.mcpCatalog(),
  installMcpPackage: (source, pkg, args) => ipc.installMcpPackage(source, pkg, args),
  signInMcpServer: (n, p) => ipc.signInMcpServer(n, p),
  cancelMcpSignIn: (n) => ipc.cancelMcpSignIn(n),
  signOutMcpServer: (n) => ipc.signOutMcpServer(n),
};

/** The backend's words for `err`, escaped: they may quote a server's stderr. */
function errorText(err: unknown): string {
  const e = ipc.toBackendError(err);
  return escapeUntrustedLines(e.message.trim() || ipc.describeError(e));
}

/** The command line or URL of a server, as registered (`${VAR}`s unresolved, srt unwrapped). */
export function describeParams(params: ServerParamsJson): string {
  if (params.command !== undefined) {
    const inner = unwrapSrt(params.command, params.args ?? []);
    const [command, args] = inner ? [inner.command, inner.args] : [params.command, params.args ?? []];
    return [command, ...args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ');
  }
  return params.url ?? '';
}

function profileLabel(policy: string): string {
  if (policy.startsWith(SHIPPED_PREFIX)) return `ipybox’s ${policy.slice(SHIPPED_PREFIX.length)} profile`;
  return /\/srt\/[A-Za-z0-9_]+\.json$/.test(policy) ? 'its own policy' : policy;
}

type Field = { input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement; error: HTMLElement; note: HTMLElement };

export class ServersView {
  readonly element: HTMLElement;
  private list: ServerList = { servers: [], profiles: [], signIns: {} };
  private loaded = false;
  private shown = false;
  private editing: string | null = null;
  private pasted: PastedServer[] = [];
  private placeholderTimer: ReturnType<typeof setTimeout> | null = null;
  private placeholderAsked = '';
  private busy = false;
  /** What Regenerate last changed, per server, until the list is re-read. */
  private readonly changes = new Map<string, string>();
  /** …and tool by tool, with a changed tool's signature before and after. */
  private readonly changeDetails = new Map<string, ToolChanges>();
  private readonly serverList: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly loadError: HTMLElement;
  private readonly status: HTMLElement;
  private readonly addButton: HTMLButtonElement;
  private readonly form: HTMLFormElement;
  private readonly formTitle: HTMLElement;
  private readonly fields: Record<FormField, Field>;
  private readonly transport: Record<Transport, HTMLInputElement>;
  private readonly sandbox: HTMLInputElement;
  private readonly policyFile: HTMLInputElement;
  private readonly policyFileRow: HTMLElement;
  private readonly stdioGroup: HTMLElement;
  private readonly httpGroup: HTMLElement;
  private readonly json: HTMLTextAreaElement;
  private readonly jsonError: HTMLElement;
  private readonly jsonPick: HTMLSelectElement;
  private readonly jsonPickRow: HTMLElement;
  private readonly placeholders: HTMLElement;
  private readonly testButton: HTMLButtonElement;
  private readonly saveButton: HTMLButtonElement;
  private readonly testResult: HTMLElement;
  private readonly formError: HTMLElement;
  private cwd = '';
  private readonly nameUse: HTMLButtonElement;
  private readonly nameSuggestion: HTMLElement;
  private readonly signIns: SignInFlow;
  private readonly catalog: ServerCatalog;
  /** The form's sign-in, when the server it describes asked for one. */
  private readonly formSignIn = h('div', { id: 'server-form-sign-in', class: 'server-sign-in', hidden: true });

  constructor(
    private readonly statuses: ServerStatuses,
    /** The workspace's folder, where a policy file is picked from and relative to. */
    private readonly workspace: () => string | undefined,
    private readonly backend: ServersBackend = defaultBackend,
  ) {
    this.catalog = new ServerCatalog(backend, (name, result, pkg) => this.openInstalled(name, result, pkg));
    this.addButton = h('button', { id: 'add-server', class: 'link-button', type: 'button', text: 'Add a server' });
    this.addButton.addEventListener('click', () => this.openForm(null));
    this.serverList = h('ul', { id: 'server-list', class: 'server-list', 'aria-label': 'Registered MCP servers' });
    this.empty = h('p', { class: 'panel-empty', hidden: true, text: 'No MCP server is registered for this workspace yet.' });
    this.loadError = h('p', { class: 'panel-error', role: 'alert', hidden: true });
    this.status = h('div', { id: 'servers-status', class: 'panel-status', role: 'status', 'aria-live': 'polite' });

    // ---- the form
    const field = (id: FormField, label: string, input: Field['input'], help?: string): [HTMLElement, Field] => {
      input.id = `server-${id}`;
      const error = h('p', { id: `server-${id}-error`, class: 'field-error', hidden: true });
      const note = h('p', { id: `server-${id}-note`, class: 'field-help server-note', hidden: true });
      const helpEl = help ? h('p', { id: `server-${id}-help`, class: 'field-help', text: help }) : null;
      input.setAttribute('aria-describedby', [helpEl ? `server-${id}-help` : '', `server-${id}-error`, `server-${id}-note`].filter(Boolean).join(' '));
      input.addEventListener('input', () => this.onFormInput());
      const wrap = h('div', { class: 'server-field' }, h('label', { class: 'field-label', for: input.id, text: label }), input, helpEl, error, note);
      return [wrap, { input, error, note }];
    };
    const text = (placeholder = ''): HTMLInputElement => h('input', { type: 'text', class: 'server-input', spellcheck: 'false', autocomplete: 'off', placeholder });
    const area = (rows: number, placeholder = ''): HTMLTextAreaElement => h('textarea', { class: 'server-input server-area', rows, spellcheck: 'false', autocomplete: 'off', placeholder });
    const [nameEl, name] = field('name', 'Name', text('e.g. github'), 'Kernel code imports its tools as mcptools.NAME.');
    // A name that cannot be used as typed ("Echo tools") meets one that can, one click away.
    this.nameUse = h('button', { id: 'server-name-use', class: 'link-button', type: 'button' });
    this.nameUse.addEventListener('mousedown', (e) => e.preventDefault());
    this.nameUse.addEventListener('click', () => {
      const suggestion = this.nameUse.dataset.name;
      if (!suggestion) return;
      this.fields.name.input.value = suggestion;
      this.onFormInput();
      this.fields.name.input.focus();
    });
    this.nameSuggestion = h('p', { id: 'server-name-suggestion', class: 'field-help server-name-suggestion', role: 'status', hidden: true }, 'Use a name like ', this.nameUse);
    name.error.after(this.nameSuggestion);
    const [commandEl, command] = field('command', 'Command', text('e.g. npx'));
    const [argsEl, args] = field('args', 'Arguments', area(3, '-y\n@modelcontextprotocol/server-everything'), 'One per line.');
    const [envEl, env] = field('env', 'Environment', area(2, 'API_KEY=${API_KEY}'), 'NAME=value, one per line.');
    const [urlEl, url] = field('url', 'URL', text('https://example.com/mcp'));
    const [headersEl, headers] = field('headers', 'Headers', area(2, 'Authorization: Bearer ${TOKEN}'), 'Name: value, one per line.');
    const policySelect = h('select', { class: 'server-input server-policy' });
    const [policyEl, policy] = field('policy', 'Sandbox policy', policySelect);
    this.fields = { name, command, args, env, url, headers, policy };
    this.policyFile = h('input', { id: 'server-policy-file', type: 'text', class: 'server-input', spellcheck: 'false', autocomplete: 'off', placeholder: 'mcp-policy.json', 'aria-label': 'Policy file: a path relative to the workspace, or a full path' });
    this.policyFile.addEventListener('input', () => this.onFormInput());
    const pickPolicy = h('button', { id: 'server-policy-pick', class: 'button button-secondary', type: 'button', text: 'Choose…', 'aria-label': 'Choose the policy file' });
    pickPolicy.addEventListener('click', () => void this.pickPolicyFile());
    this.policyFileRow = h('div', { class: 'server-policy-file-row', hidden: true }, this.policyFile, pickPolicy);
    policySelect.addEventListener('change', () => this.onFormInput());
    policyEl.appendChild(this.policyFileRow);

    const radio = (value: Transport, label: string): [HTMLElement, HTMLInputElement] => {
      const input = h('input', { type: 'radio', name: 'server-transport', id: `server-transport-${value}`, value });
      input.addEventListener('change', () => this.onFormInput());
      return [h('label', { class: 'server-radio', for: input.id }, input, h('span', { text: label })), input];
    };
    const [stdioEl, stdio] = radio('stdio', 'Program (stdio)');
    const [httpEl, http] = radio('streamable_http', 'Streamable HTTP');
    const [sseEl, sse] = radio('sse', 'SSE');
    this.transport = { stdio, streamable_http: http, sse };
    this.sandbox = h('input', { id: 'server-sandbox', type: 'checkbox', role: 'switch' });
    this.sandbox.addEventListener('change', () => this.onFormInput());
    const sandboxRow = h(
      'div',
      { class: 'server-field server-switch' },
      h('label', { for: 'server-sandbox', class: 'server-switch-label' }, this.sandbox, h('span', { text: 'Run sandboxed (srt)' })),
      h('p', { class: 'field-help', text: 'The server runs under srt: it sees no secrets (.env, ~/.ssh, …), and reaches only what the policy allows.' }),
    );
    this.stdioGroup = h('div', { class: 'server-group' }, commandEl, argsEl, envEl, sandboxRow, policyEl);
    this.httpGroup = h('div', { class: 'server-group', hidden: true }, urlEl, headersEl);

    this.json = h('textarea', { id: 'server-json', class: 'server-input server-area', rows: 4, spellcheck: 'false', autocomplete: 'off', 'aria-describedby': 'server-json-error', placeholder: '{"mcpServers": {"everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}}}' });
    this.jsonError = h('p', { id: 'server-json-error', class: 'field-error', role: 'alert', hidden: true });
    const applyJson = h('button', { id: 'server-json-apply', class: 'button button-secondary', type: 'button', text: 'Fill in the form' });
    applyJson.addEventListener('click', () => this.applyPasted());
    this.jsonPick = h('select', { id: 'server-json-pick', class: 'server-input' });
    this.jsonPick.addEventListener('change', () => this.fillFromPasted(Number(this.jsonPick.value)));
    this.jsonPickRow = h('div', { class: 'server-field', hidden: true }, h('label', { class: 'field-label', for: 'server-json-pick', text: 'This JSON has several servers: register' }), this.jsonPick);
    const pasteBox = h(
      'details',
      { class: 'server-paste' },
      h('summary', { text: 'Paste JSON from a README' }),
      h('p', { class: 'field-help', text: 'A server’s {"command": …} or {"url": …}, or a client configuration with "mcpServers" (Claude Desktop) or "servers" (VS Code).' }),
      h('label', { class: 'visually-hidden', for: 'server-json', text: 'Server JSON' }),
      this.json,
      this.jsonError,
      h('div', { class: 'button-row' }, applyJson),
      this.jsonPickRow,
    );

    this.placeholders = h('div', { id: 'server-placeholders', class: 'server-placeholders', hidden: true, 'aria-live': 'polite' });
    this.testButton = h('button', { id: 'test-server', class: 'button button-secondary', type: 'button', text: 'Test connection' });
    this.testButton.addEventListener('click', () => void this.test());
    this.saveButton = h('button', { id: 'save-server', class: 'button', type: 'submit', text: 'Save' });
    const cancel = h('button', { id: 'cancel-server', class: 'button button-secondary', type: 'button', text: 'Cancel' });
    cancel.addEventListener('click', () => this.closeForm());
    this.testResult = h('div', { id: 'server-test-result', class: 'server-test-result', 'aria-live': 'polite' });
    this.formError = h('div', { id: 'server-form-error', class: 'panel-error', role: 'alert', hidden: true });
    this.formTitle = h('h4', { id: 'server-form-title', class: 'server-form-title', text: 'Add an MCP server' });
    this.form = h(
      'form',
      { id: 'server-form', class: 'server-form', hidden: true, novalidate: true, 'aria-labelledby': 'server-form-title' },
      this.formTitle,
      pasteBox,
      nameEl,
      h('fieldset', { class: 'server-transport' }, h('legend', { class: 'field-label', text: 'How ipybox reaches it' }), stdioEl, httpEl, sseEl),
      this.stdioGroup,
      this.httpGroup,
      this.placeholders,
      this.formError,
      this.formSignIn,
      h('div', { class: 'button-row' }, this.testButton, this.saveButton, cancel),
      this.testResult,
    );
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.save();
    });
    this.form.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        this.closeForm();
      }
    });

    this.element = h(
      'section',
      { id: 'mcp-servers', class: 'panel-section servers', 'aria-labelledby': 'servers-heading' },
      h('h3', { id: 'servers-heading', class: 'panel-heading' }, h('span', { class: 'panel-heading-text', text: 'MCP servers' }), this.addButton),
      h('p', { class: 'panel-hint', text: 'Kernel code calls these servers’ tools through generated Python modules; each call asks for your approval.' }),
      this.catalog.element,
      this.form,
      this.loadError,
      this.serverList,
      this.empty,
      this.status,
    );
    this.statuses.subscribe(() => this.renderStatuses());
    this.signIns = new SignInFlow(backend, statuses, () => this.renderStatuses(), () => this.reload(), (t) => this.say(t));
  }

  onShow(): void {
    this.shown = true;
    void this.reload();
  }

  onHide(): void {
    this.shown = false;
  }

  /** The workspace changed: read the list again when next shown. */
  invalidate(): void {
    this.loaded = false;
    if (this.shown) void this.reload();
  }

  async reload(): Promise<void> {
    try {
      this.list = await this.backend.mcpServers();
      this.loaded = true;
      this.loadError.hidden = true;
    } catch (err) {
      this.loadError.textContent = `The servers could not be read: ${errorText(err)}`;
      this.loadError.hidden = false;
    }
    this.render();
  }

  get isLoaded(): boolean {
    return this.loaded;
  }

  // ---- the list

  private render(): void {
    this.serverList.replaceChildren(...this.list.servers.map((s) => this.renderServer(s)));
    this.empty.hidden = this.list.servers.length > 0;
    this.fillPolicies();
  }

  private renderServer(server: RegisteredServer): HTMLElement {
    const id = `server-${server.name}`;
    // Registered names are identifiers; escaped all the same wherever they are read.
    const name = escapeUntrusted(server.name);
    const state = h('span', { class: 'server-state' });
    const stderr = h('pre', { class: 'server-stderr', hidden: true, 'aria-label': `Last lines ${name} wrote on stderr` });
    const log = h('pre', { class: 'server-log', hidden: true, 'aria-label': `Last messages ${name} logged` });
    const inner = server.params.command !== undefined ? unwrapSrt(server.params.command, server.params.args ?? []) : null;
    const sandbox = h('input', { type: 'checkbox', role: 'switch', class: 'server-sandbox-switch', id: `${id}-sandbox`, 'aria-label': `Run ${name} sandboxed (srt)`, disabled: server.params.command === undefined });
    sandbox.checked = inner !== null;
    sandbox.addEventListener('change', () => void this.setSandboxed(server, sandbox));
    const sandboxLabel = h(
      'label',
      { class: 'server-switch-label', for: sandbox.id, title: server.params.command === undefined ? 'Only a program ipybox starts can run in the sandbox.' : '' },
      sandbox,
      h('span', { text: inner ? `Sandboxed with ${profileLabel(server.policy ?? inner.policy)}` : 'Sandboxed' }),
    );
    const regenerate = h('button', { class: 'link-button server-regenerate', type: 'button', text: 'Regenerate', 'aria-label': `Regenerate the tools of ${name}` });
    regenerate.addEventListener('click', () => void this.regenerate(server.name, regenerate));
    const edit = h('button', { class: 'link-button server-edit', type: 'button', text: 'Edit', 'aria-label': `Edit ${name}` });
    edit.addEventListener('click', () => this.openForm(server));
    const remove = h('button', { class: 'link-button server-remove', type: 'button', text: 'Remove', 'aria-label': `Remove ${name}` });
    const confirm = h('span', { class: 'server-confirm', hidden: true });
    remove.addEventListener('click', () => {
      remove.hidden = true;
      confirm.hidden = false;
      yes.focus();
    });
    const yes = h('button', { class: 'button button-danger server-remove-yes', type: 'button', text: `Remove ${name}` });
    const no = h('button', { class: 'button button-secondary', type: 'button', text: 'Keep', 'aria-label': `Keep ${name}` });
    yes.addEventListener('click', () => void this.remove(server.name, yes));
    no.addEventListener('click', () => {
      confirm.hidden = true;
      remove.hidden = false;
      remove.focus();
    });
    confirm.append(h('span', { text: `Remove ${name} and mcptools/${name}/? ` }), yes, no);
    const changes = h('p', { class: 'server-changes', role: 'status', text: escapeUntrustedLines(this.changes.get(server.name) ?? ''), hidden: !this.changes.has(server.name) });
    const tools = h('ul', { class: 'server-tools', 'aria-label': `Tools of ${name}` }, ...server.tools.map((t) => renderTool(server.name, t)));
    const card = h(
      'li',
      { class: 'server-card', 'data-server': server.name, 'aria-labelledby': `${id}-title` },
      h('div', { class: 'server-head' }, h('h4', { id: `${id}-title`, class: 'server-name', text: name }), state),
      h('p', { class: 'server-params', text: escapeUntrusted(describeParams(server.params)), title: 'As registered; ${VAR}s are filled in when the server starts' }),
      h('div', { class: 'server-sign-in', hidden: true }),
      stderr,
      log,
      h('div', { class: 'server-actions' }, sandboxLabel, regenerate, edit, remove, confirm),
      changes,
      renderToolChanges(server, this.changeDetails.get(server.name)),
      h('p', { class: 'server-tool-count', text: `${server.tools.length} tool${server.tools.length === 1 ? '' : 's'}` }),
      tools,
    );
    this.renderStatus(card, server.name);
    return card;
  }

  private renderStatuses(): void {
    for (const card of this.serverList.querySelectorAll<HTMLElement>('.server-card')) {
      const name = card.dataset.server;
      if (name) this.renderStatus(card, name);
    }
  }

  private renderStatus(card: HTMLElement, name: string): void {
    const s = this.statuses.get(name);
    card.dataset.state = s.state;
    const state = card.querySelector('.server-state');
    if (state) state.textContent = describeState(s);
    const stderr = card.querySelector<HTMLElement>('.server-stderr');
    if (stderr) {
      stderr.textContent = escapeUntrustedLines(s.stderr.trimEnd());
      stderr.hidden = s.stderr.trim() === '' || s.state === 'running';
    }
    const log = card.querySelector<HTMLElement>('.server-log');
    if (log) {
      const lines = s.log ?? [];
      log.textContent = lines.map((l) => `${escapeUntrusted(l.level)}: ${escapeUntrustedLines(l.message.trimEnd())}`).join('\n');
      log.hidden = lines.length === 0;
    }
    const signIn = card.querySelector<HTMLElement>('.server-sign-in');
    if (signIn) this.signIns.render(signIn, name, this.list.signIns?.[name]);
  }

  private say(text: string): void {
    this.status.textContent = escapeUntrustedLines(text);
  }

  private async regenerate(name: string, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    this.say(`Regenerating ${name}…`);
    try {
      const r = await this.backend.regenerateMcpServer(name);
      this.changes.set(name, `Regenerated: ${describeChanges(r.changes)}${skippedText(r)}`);
      this.changeDetails.set(name, r.changes);
      this.say(`Regenerated ${name}.`);
      await this.reload();
    } catch (err) {
      this.changes.set(name, `Regenerating failed: ${errorText(err)}`);
      this.changeDetails.delete(name);
      this.say(`Regenerating ${name} failed.`);
      this.render();
    }
    this.serverList.querySelector<HTMLElement>(`[data-server="${name}"] .server-regenerate`)?.focus();
  }

  private async remove(name: string, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      await this.backend.unregisterMcpServer(name);
      this.changes.delete(name);
      this.changeDetails.delete(name);
      this.say(`Removed ${name}.`);
      await this.reload();
      this.addButton.focus();
    } catch (err) {
      button.disabled = false;
      this.say(`${name} was not removed: ${errorText(err)}`);
    }
  }

  private async setSandboxed(server: RegisteredServer, input: HTMLInputElement): Promise<void> {
    const form = formFromParams(server.name, server.params);
    if (server.policy) form.policy = server.policy;
    form.sandbox = input.checked;
    if (input.checked) form.policy = DEFAULT_PROFILE;
    const check = checkForm(form);
    if (!check.params) return;
    input.disabled = true;
    this.say(input.checked ? `Starting ${server.name} in the sandbox to generate its tools…` : `Registering ${server.name} without the sandbox…`);
    try {
      const r = await this.backend.registerMcpServer(server.name, check.params);
      this.changes.set(server.name, `${input.checked ? 'Now sandboxed' : 'No longer sandboxed'}. ${describeChanges(r.changes)}${skippedText(r)}`);
      this.changeDetails.set(server.name, r.changes);
      this.say(`${server.name} ${input.checked ? 'runs sandboxed' : 'runs without the sandbox'} from its next start.`);
      await this.reload();
    } catch (err) {
      input.checked = !input.checked;
      input.disabled = false;
      this.changes.set(server.name, `Not changed: ${errorText(err)}`);
      this.changeDetails.delete(server.name);
      this.render();
    }
    this.serverList.querySelector<HTMLElement>(`[data-server="${server.name}"] .server-sandbox-switch`)?.focus();
  }

  // ---- the form

  private fillPolicies(): void {
    const select = this.fields.policy.input;
    if (!(select instanceof HTMLSelectElement)) return;
    const current = select.value;
    const profiles = this.list.profiles.length > 0 ? this.list.profiles : [{ name: 'mcp-server', purpose: 'the default for an MCP server run under srt' }];
    select.replaceChildren(
      ...profiles.map((p) => h('option', { value: `${SHIPPED_PREFIX}${p.name}`, text: `${p.name} — ${p.purpose}` })),
      h('option', { value: 'file', text: 'A policy file…' }),
    );
    if (current) select.value = current;
    if (!select.value) select.value = DEFAULT_PROFILE;
  }

  openForm(server: RegisteredServer | null): void {
    this.editing = server?.name ?? null;
    this.formTitle.textContent = server ? `Edit ${escapeUntrusted(server.name)}` : 'Add an MCP server';
    this.fillPolicies();
    const form = server ? formFromParams(server.name, server.params) : emptyForm();
    if (server?.policy) form.policy = server.policy;
    this.setForm(form);
    this.json.value = '';
    this.jsonError.hidden = true;
    this.jsonPickRow.hidden = true;
    this.testResult.replaceChildren();
    this.formError.hidden = this.formSignIn.hidden = true;
    this.form.hidden = false;
    this.fields.name.input.focus();
  }

  /** A package ipybox installed: the form on its parameters (in the sandbox), to check and save. */
  private openInstalled(name: string, installed: ipc.InstalledPackage, pkg: string): void {
    const taken = this.list.servers.some((s) => s.name === name);
    this.openForm(null);
    this.formTitle.textContent = `Add ${escapeUntrusted(pkg)} ${escapeUntrusted(installed.version)}, installed by ipybox: check its command, then Save`;
    this.setForm(formFromParams(taken ? `${name}_2` : name, installed.params));
    this.form.scrollIntoView({ block: 'start' });
    this.fields.command.input.focus();
  }

  closeForm(): void {
    this.form.hidden = true;
    this.editing = null;
    this.addButton.focus();
  }

  get formOpen(): boolean {
    return !this.form.hidden;
  }

  private setForm(form: ServerForm): void {
    this.fields.name.input.value = form.name;
    this.transport[form.transport].checked = true;
    this.fields.command.input.value = form.command;
    this.fields.args.input.value = form.args;
    this.fields.env.input.value = form.env;
    this.fields.url.input.value = form.url;
    this.fields.headers.input.value = form.headers;
    this.sandbox.checked = form.sandbox;
    const select = this.fields.policy.input;
    const shipped = form.policy.startsWith(SHIPPED_PREFIX);
    select.value = shipped ? form.policy : 'file';
    this.policyFile.value = shipped ? '' : form.policy;
    this.cwd = form.cwd;
    this.onFormInput();
  }

  /** The native file picker, from the workspace; a file inside it is written relative. */
  private async pickPolicyFile(): Promise<void> {
    const workspace = this.workspace();
    let path: string | null;
    try {
      path = await this.backend.pickPath(false, workspace);
    } catch (err) {
      this.formError.textContent = `The file picker could not open: ${errorText(err)}`;
      this.formError.hidden = false;
      return;
    }
    if (!path) return;
    this.policyFile.value = relativeToWorkspace(path, workspace, false);
    this.onFormInput();
  }

  private readForm(): ServerForm {
    const transport = (Object.keys(this.transport) as Transport[]).find((t) => this.transport[t].checked) ?? 'stdio';
    const select = this.fields.policy.input.value;
    return {
      name: this.fields.name.input.value,
      transport,
      command: this.fields.command.input.value,
      args: this.fields.args.input.value,
      env: this.fields.env.input.value,
      url: this.fields.url.input.value,
      headers: this.fields.headers.input.value,
      sandbox: this.sandbox.checked,
      policy: select === 'file' ? this.policyFile.value : select,
      cwd: this.cwd,
    };
  }

  /** Check as the person types: each field's problem under it, placeholders explained. */
  private onFormInput(): void {
    const form = this.readForm();
    const stdio = form.transport === 'stdio';
    this.stdioGroup.hidden = !stdio;
    this.httpGroup.hidden = stdio;
    const policyWrap = this.fields.policy.input.closest('.server-field');
    if (policyWrap instanceof HTMLElement) policyWrap.hidden = !form.sandbox;
    this.policyFileRow.hidden = this.fields.policy.input.value !== 'file';
    const others = this.list.servers.map((s) => s.name).filter((n) => n !== this.editing);
    const check = checkForm(form, others);
    for (const [key, f] of Object.entries(this.fields) as [FormField, Field][]) {
      // A field not yet typed in shows no error (the buttons still say what is missing).
      const touched = f.input.value !== '' || key === 'policy';
      const error = touched ? check.errors[key] : undefined;
      f.error.textContent = error ?? '';
      f.error.hidden = !error;
      f.input.setAttribute('aria-invalid', String(Boolean(error)));
      const note = check.notes[key];
      f.note.textContent = note ?? '';
      f.note.hidden = !note;
    }
    const suggestion = nameSuggestion(form.name);
    this.nameSuggestion.hidden = suggestion === null;
    this.nameUse.dataset.name = suggestion ?? '';
    this.nameUse.textContent = suggestion ?? '';
    this.nameUse.setAttribute('aria-label', suggestion ? `Use the name ${suggestion}` : 'Use the suggested name');
    this.formError.hidden = this.formSignIn.hidden = true;
    this.schedulePlaceholders(check.placeholders);
  }

  private schedulePlaceholders(names: string[]): void {
    const key = names.join(',');
    if (names.length === 0) {
      this.placeholders.hidden = true;
      this.placeholders.replaceChildren();
      this.placeholderAsked = '';
      return;
    }
    if (key === this.placeholderAsked) return;
    this.placeholderAsked = key;
    if (this.placeholderTimer) clearTimeout(this.placeholderTimer);
    this.placeholderTimer = setTimeout(() => {
      this.backend
        .mcpPlaceholders(names)
        .then((found) => {
          if (this.placeholderAsked === key) this.showPlaceholders(found);
        })
        .catch(() => this.showPlaceholders(names.map((name) => ({ name, source: null }))));
    }, 250);
  }

  private showPlaceholders(found: Placeholder[]): void {
    this.placeholders.hidden = false;
    this.placeholders.replaceChildren(
      h('p', { class: 'field-help', text: 'Each ${NAME} is filled in when the server starts, from the workspace’s .env file or ipybox’s environment. The values never reach the registry or the generated code, and are not shown here.' }),
      h(
        'ul',
        { class: 'server-placeholder-list', 'aria-label': 'Placeholders' },
        ...found.map((p) => h('li', { 'data-placeholder': p.name, 'data-defined': String(p.source !== null) }, h('code', { text: `\${${escapeUntrusted(p.name)}}` }), h('span', { text: ` ${describeSource(p.source)}` }))),
      ),
    );
  }

  private checked(): { name: string; params: ServerParamsJson } | null {
    const form = this.readForm();
    const others = this.list.servers.map((s) => s.name).filter((n) => n !== this.editing);
    const check = checkForm(form, others);
    if (!check.params) {
      for (const [key, f] of Object.entries(this.fields) as [FormField, Field][]) {
        const error = check.errors[key];
        f.error.textContent = error ?? '';
        f.error.hidden = !error;
        f.input.setAttribute('aria-invalid', String(Boolean(error)));
      }
      const first = (Object.keys(check.errors) as FormField[])[0];
      if (first) this.fields[first].input.focus();
      return null;
    }
    return { name: form.name.trim(), params: check.params };
  }

  private async test(): Promise<void> {
    const checked = this.checked();
    if (!checked || this.busy) return;
    this.busy = true;
    this.testButton.disabled = true;
    this.testResult.replaceChildren(h('p', { class: 'panel-status', text: 'Starting the server and listing its tools…' }));
    try {
      const tools = await this.backend.previewMcpServer(checked.params);
      this.testResult.replaceChildren(
        h('p', { class: 'server-test-ok', text: `Connected: the server offers ${tools.length} tool${tools.length === 1 ? '' : 's'}.` }),
        h('ul', { class: 'server-tools', 'aria-label': 'Tools the server offers' }, ...tools.map((t) => renderTool(checked.name || 'NAME', t))),
      );
    } catch (err) {
      this.testResult.replaceChildren(h('p', { class: 'field-error', role: 'alert', text: 'The connection failed:' }), h('pre', { class: 'server-stderr', text: errorText(err) }));
    } finally {
      this.busy = false;
      this.testButton.disabled = false;
    }
  }

  private async save(): Promise<void> {
    const checked = this.checked();
    if (!checked || this.busy) return;
    this.busy = true;
    this.saveButton.disabled = true;
    this.formError.hidden = this.formSignIn.hidden = true;
    this.say(`Starting ${checked.name} and generating its tools…`);
    const registered = async (r: Registration): Promise<void> => {
      const previous = this.editing;
      if (previous && previous !== checked.name) await this.backend.unregisterMcpServer(previous);
      this.changes.set(checked.name, `Registered: import its tools as mcptools.${checked.name}.<tool>.${skippedText(r)}`);
      this.changeDetails.delete(checked.name);
      this.say(`Registered ${checked.name}.`);
      this.form.hidden = true;
      this.editing = null;
      await this.reload();
      this.serverList.querySelector<HTMLElement>(`[data-server="${checked.name}"] .server-regenerate`)?.focus();
    };
    try {
      await registered(await this.backend.registerMcpServer(checked.name, checked.params));
    } catch (err) {
      // Everything typed stays; the backend's words say what to fix, or the server asks for a
      // sign-in: offered here, and registering goes on once signed in.
      const signIn = ipc.toBackendError(err).code === 'SignInRequired';
      this.formError.textContent = `Not saved: ${errorText(err)}`;
      this.formError.hidden = signIn;
      if (signIn) this.signIns.offer(this.formSignIn, checked.name, checked.params, registered);
      this.say('');
    } finally {
      this.busy = false;
      this.saveButton.disabled = false;
    }
  }

  private applyPasted(): void {
    const r = parsePasted(this.json.value);
    if (!r.ok) {
      this.jsonError.textContent = escapeUntrustedLines(r.error);
      this.jsonError.hidden = false;
      this.json.focus();
      return;
    }
    this.jsonError.hidden = true;
    this.pasted = r.servers;
    this.jsonPick.replaceChildren(...r.servers.map((s, i) => h('option', { value: i, text: s.name !== null ? escapeUntrusted(s.name) : `server ${i + 1}` })));
    this.jsonPickRow.hidden = r.servers.length < 2;
    this.fillFromPasted(0);
  }

  private fillFromPasted(index: number): void {
    const s = this.pasted[index];
    if (!s) return;
    const form = { ...s.form };
    form.name = s.name !== null ? suggestName(s.name) : this.fields.name.input.value;
    this.setForm(form);
    if (s.ignored.length > 0) {
      this.jsonError.textContent = `Left out (ipybox does not use them): ${escapeUntrusted(s.ignored.join(', '))}.`;
      this.jsonError.hidden = false;
    }
    this.fields.name.input.focus();
  }
}

function skippedText(r: Registration): string {
  if (r.skipped.length === 0) return '';
  return ` Skipped: ${r.skipped.map((s) => `${escapeUntrusted(s.tool)} (${escapeUntrusted(s.reason)})`).join('; ')}.`;
}
