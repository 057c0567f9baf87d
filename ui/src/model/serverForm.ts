/**
 * The MCP server form, without DOM: what a person types (stdio: command, arguments, environment;
 * HTTP: URL, headers; optionally run under srt), checked as they type, turned into the server
 * parameters the backend registers, and back. Also: JSON pasted from a server's README (a bare
 * `{"command": …}`, Claude Desktop's `mcpServers` map, VS Code's `servers` map), the `${VAR}`
 * placeholders a form uses, the words for what regenerating changed, and each server's status
 * from the session events.
 */
import type { JsonValue } from '../util/json';
import type { ChangedTool, ProcessExit, ServerParams, ToolChanges, TransportKind, VariableSource } from '../generated/backend';

export type { ChangedTool, ProcessExit, ToolChanges, VariableSource };
/** How a server is reached. */
export type Transport = TransportKind;
/** Server parameters as the backend stores them (`${VAR}`s unresolved). */
export type ServerParamsJson = ServerParams;



/** What the form holds: text as typed. */
export interface ServerForm {
  name: string;
  transport: Transport;
  command: string;
  /** One argument per line. */
  args: string;
  /** `NAME=value`, one per line. */
  env: string;
  url: string;
  /** `Name: value`, one per line. */
  headers: string;
  /** Run the server under srt (stdio only). */
  sandbox: boolean;
  /** srt's settings: `ipybox:<profile>` for a shipped profile, else a file (relative to the workspace). */
  policy: string;
  /** Kept from pasted or registered parameters; the form has no field for it. */
  cwd: string;
}

export type FormField = 'name' | 'command' | 'args' | 'env' | 'url' | 'headers' | 'policy';

export interface FormCheck {
  /** What must be fixed before the server can be tested or saved, by field. */
  errors: Partial<Record<FormField, string>>;
  /** What is worth knowing but does not stop anything. */
  notes: Partial<Record<FormField, string>>;
  /** The parameters, when there are no errors. */
  params: ServerParamsJson | null;
  /** The `${NAME}`s used, in order, each once. */
  placeholders: string[];
}

export const SHIPPED_PREFIX = 'ipybox:';
export const DEFAULT_PROFILE = `${SHIPPED_PREFIX}mcp-server`;

export function emptyForm(): ServerForm {
  return { name: '', transport: 'stdio', command: '', args: '', env: '', url: '', headers: '', sandbox: false, policy: DEFAULT_PROFILE, cwd: '' };
}

const PYTHON_KEYWORDS = new Set([
  'False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break', 'class', 'continue', 'def', 'del', 'elif', 'else', 'except',
  'finally', 'for', 'from', 'global', 'if', 'import', 'in', 'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise', 'return', 'try',
  'while', 'with', 'yield',
]);

/** Why `name` cannot name a server (it becomes `mcptools.<name>`), or null. */
export function checkName(name: string): string | null {
  if (name === '') return 'Give the server a name: its tools are imported as mcptools.NAME.';
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) {
    const bad = [...name].find((c) => !/[A-Za-z0-9_]/.test(c));
    const why = bad !== undefined ? `“${bad === ' ' ? 'a space' : bad}” cannot be in it` : 'it cannot start with a digit or an underscore';
    return `A server’s name is letters, digits and underscores, starting with a letter (code uses its tools as mcptools.NAME): ${why}.`;
  }
  if (PYTHON_KEYWORDS.has(name)) return `“${name}” is a Python keyword and cannot be a package name; choose another.`;
  if (name === 'ipybox') return '“ipybox” is reserved: ipybox approves shell commands under that name.';
  return null;
}

/** The `${NAME}`s in `text`, and what is wrong with a malformed one. */
export function scanPlaceholders(text: string): { names: string[]; error: string | null } {
  const names: string[] = [];
  let rest = text;
  for (;;) {
    const start = rest.indexOf('${');
    if (start < 0) return { names, error: null };
    const after = rest.slice(start + 2);
    const end = after.indexOf('}');
    if (end < 0) return { names, error: '“${” is not closed: write ${NAME}.' };
    const name = after.slice(0, end);
    if (!/^[A-Za-z0-9_]+$/.test(name)) return { names, error: `\${${name}} is not a variable: a name is letters, digits and underscores.` };
    if (!names.includes(name)) names.push(name);
    rest = after.slice(end + 1);
  }
}

function lines(text: string): { text: string; line: number }[] {
  return text
    .split('\n')
    .map((t, i) => ({ text: t.replace(/\r$/, ''), line: i + 1 }))
    .filter((l) => l.text.trim() !== '');
}

function parsePairs(text: string, sep: '=' | ':', nameRe: RegExp, what: string): { pairs: Record<string, string>; error: string | null } {
  const pairs: Record<string, string> = {};
  for (const { text: l, line } of lines(text)) {
    const at = l.indexOf(sep);
    const key = at < 0 ? '' : l.slice(0, at).trim();
    if (at < 0 || !nameRe.test(key)) {
      const example = sep === '=' ? 'NAME=value' : 'Name: value';
      return { pairs, error: `Line ${line}: write one ${what} per line as ${example}${at < 0 ? '' : ` (“${key}” is not a valid name)`}.` };
    }
    if (key in pairs) return { pairs, error: `Line ${line}: ${key} is given twice.` };
    pairs[key] = sep === ':' ? l.slice(at + 1).trim() : l.slice(at + 1);
  }
  return { pairs, error: null };
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Check the form; `existing`: names already registered (a new server of that name replaces it). */
export function checkForm(form: ServerForm, existing: readonly string[] = []): FormCheck {
  const errors: FormCheck['errors'] = {};
  const notes: FormCheck['notes'] = {};
  const placeholders: string[] = [];
  const scan = (field: FormField, ...texts: string[]): void => {
    for (const t of texts) {
      const { names, error } = scanPlaceholders(t);
      for (const n of names) if (!placeholders.includes(n)) placeholders.push(n);
      if (error && !errors[field]) errors[field] = error;
    }
  };
  const name = form.name.trim();
  const nameError = checkName(name);
  if (nameError) errors.name = nameError;
  else if (existing.includes(name)) notes.name = `A server named ${name} is registered: saving replaces it.`;

  let params: ServerParamsJson;
  if (form.transport === 'stdio') {
    const command = form.command.trim();
    const args = lines(form.args).map((l) => l.text.trim());
    if (command === '') errors.command = 'Give the program that starts the server, e.g. npx, uvx or python.';
    else if (/\s/.test(command) && args.length === 0) {
      errors.command = 'The command is one program: put each of its arguments on a line of its own under Arguments.';
    }
    scan('command', command);
    scan('args', ...args);
    const env = parsePairs(form.env, '=', ENV_NAME, 'variable');
    if (env.error) errors.env = env.error;
    scan('env', ...Object.values(env.pairs));
    const policy = form.policy.trim();
    if (form.sandbox) {
      if (policy === '' || policy === SHIPPED_PREFIX) errors.policy = 'Choose the sandbox policy the server runs with.';
      else if (policy.includes('${')) errors.policy = 'The policy is read once, when the server is registered: it cannot contain ${…}.';
    }
    if (/(^|\/)srt$/.test(command) && form.sandbox) errors.command = 'The command is srt already: turn “Run sandboxed” off, or give the server’s own command.';
    params = { type: 'stdio', command, args, env: env.pairs };
    if (form.sandbox && command !== '') params = { ...params, command: 'srt', args: ['--settings', policy, command, ...args] };
    if (form.cwd.trim() !== '') params.cwd = form.cwd.trim();
    if (Object.keys(env.pairs).length === 0) delete params.env;
    if (params.args?.length === 0) delete params.args;
  } else {
    const url = form.url.trim();
    scan('url', url);
    if (url === '') errors.url = 'Give the server’s URL, e.g. https://example.com/mcp.';
    else if (!errors.url) {
      let parsed: URL | null = null;
      try {
        parsed = new URL(url.replace(/\$\{[A-Za-z0-9_]+\}/g, 'x'));
      } catch {
        parsed = null;
      }
      if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) errors.url = 'The URL must start with http:// or https://.';
      else if (form.transport === 'streamable_http' && /\/sse\/?$/.test(parsed.pathname)) notes.url = 'This looks like an SSE endpoint: choose SSE if the connection fails.';
    }
    const headers = parsePairs(form.headers, ':', HEADER_NAME, 'header');
    if (headers.error) errors.headers = headers.error;
    scan('headers', ...Object.values(headers.pairs));
    params = { type: form.transport, url, headers: headers.pairs };
    if (Object.keys(headers.pairs).length === 0) delete params.headers;
  }
  const ok = Object.keys(errors).length === 0;
  return { errors, notes, params: ok ? params : null, placeholders };
}

/** The form for registered (or pasted) parameters; a server under `srt --settings P cmd …` is shown as `cmd …`, sandboxed with P. */
export function formFromParams(name: string, params: ServerParamsJson): ServerForm {
  const form = emptyForm();
  form.name = name;
  const transport = params.type ?? (params.command !== undefined ? 'stdio' : params.url?.includes('/sse') ? 'sse' : 'streamable_http');
  form.transport = transport;
  if (transport === 'stdio') {
    let command = params.command ?? '';
    let args = params.args ?? [];
    const sandboxed = unwrapSrt(command, args);
    if (sandboxed) {
      form.sandbox = true;
      form.policy = sandboxed.policy;
      command = sandboxed.command;
      args = sandboxed.args;
    }
    form.command = command;
    form.args = args.join('\n');
    form.env = Object.entries(params.env ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join('\n');
    form.cwd = params.cwd ?? '';
  } else {
    form.url = params.url ?? '';
    form.headers = Object.entries(params.headers ?? {})
      .map(([k, v]) => `${k}: ${v}`)
      .join('\n');
  }
  return form;
}

/** `srt --settings P cmd args…` → P, cmd, args; null when the command is not srt with settings. */
export function unwrapSrt(command: string, args: readonly string[]): { policy: string; command: string; args: string[] } | null {
  if (!/(^|\/)srt$/.test(command)) return null;
  let i = 0;
  let policy: string | null = null;
  while (i < args.length) {
    const a = args[i] ?? '';
    if ((a === '--settings' || a === '-s') && i + 1 < args.length) {
      policy = args[i + 1] ?? null;
      i += 2;
    } else if (a.startsWith('--settings=')) {
      policy = a.slice('--settings='.length);
      i += 1;
    } else if (a.startsWith('-')) {
      i += 1;
    } else break;
  }
  const inner = args[i];
  if (policy === null || inner === undefined) return null;
  return { policy, command: inner, args: args.slice(i + 1) };
}

/** One server found in pasted JSON. */
export interface PastedServer {
  /** Its name in the map, or null for a bare `{"command": …}`. */
  name: string | null;
  form: ServerForm;
  /** Keys ipybox does not use (`disabled`, `autoApprove`, …), left out. */
  ignored: string[];
}

export type PasteResult = { ok: true; servers: PastedServer[] } | { ok: false; error: string };

const KNOWN_KEYS = new Set(['type', 'transport', 'command', 'args', 'env', 'cwd', 'url', 'headers']);

function isObject(v: unknown): v is Record<string, JsonValue> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isServerObject(v: unknown): boolean {
  return isObject(v) && (typeof v.command === 'string' || typeof v.url === 'string' || typeof v.serverUrl === 'string');
}

function transportOf(value: JsonValue | undefined): Transport | null | 'unknown' {
  if (value === undefined || value === null) return null;
  const t = String(value).toLowerCase().replace(/[-\s]/g, '_');
  if (t === 'stdio') return 'stdio';
  if (t === 'sse') return 'sse';
  if (t === 'http' || t === 'streamable_http' || t === 'streamablehttp') return 'streamable_http';
  return 'unknown';
}

function stringMap(v: JsonValue | undefined, what: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw new Error(`“${what}” must be an object of names and values.`);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (isObject(val) || Array.isArray(val)) throw new Error(`“${what}.${k}” must be a text, not ${Array.isArray(val) ? 'a list' : 'an object'}.`);
    out[k] = String(val);
  }
  return out;
}

function pastedServer(name: string | null, raw: Record<string, JsonValue>): PastedServer {
  const ignored = Object.keys(raw).filter((k) => !KNOWN_KEYS.has(k) && k !== 'serverUrl');
  const url = typeof raw.url === 'string' ? raw.url : typeof raw.serverUrl === 'string' ? raw.serverUrl : undefined;
  const kind = transportOf(raw.type ?? raw.transport);
  if (kind === 'unknown') throw new Error(`“type”: ${JSON.stringify(raw.type ?? raw.transport)} is not a transport ipybox knows (stdio, http, sse).`);
  if (raw.args !== undefined && !(Array.isArray(raw.args) && raw.args.every((a) => typeof a === 'string' || typeof a === 'number'))) {
    throw new Error('“args” must be a list of texts.');
  }
  const params: ServerParamsJson = {
    command: typeof raw.command === 'string' ? raw.command : undefined,
    args: Array.isArray(raw.args) ? raw.args.map((a) => String(a)) : undefined,
    env: stringMap(raw.env, 'env'),
    cwd: typeof raw.cwd === 'string' ? raw.cwd : undefined,
    url,
    headers: stringMap(raw.headers, 'headers'),
  };
  if (kind) params.type = kind;
  else if (params.command === undefined && url !== undefined) params.type = url.includes('/sse') ? 'sse' : 'streamable_http';
  const form = formFromParams(name ?? '', params);
  return { name, form, ignored };
}

/** Servers in JSON copied from a README or a client's configuration. */
export function parsePasted(text: string): PasteResult {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, error: 'Paste the JSON from the server’s README first.' };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (first) {
    // READMEs often show a fragment: `"name": { … }` without the outer braces.
    try {
      value = JSON.parse(`{${trimmed.replace(/,\s*$/, '')}}`);
    } catch {
      return { ok: false, error: `This is not valid JSON: ${first instanceof Error ? first.message : String(first)}` };
    }
  }
  if (!isObject(value)) return { ok: false, error: 'Expected a JSON object: {"command": …}, {"url": …} or {"mcpServers": {…}}.' };
  try {
    if (isServerObject(value)) return { ok: true, servers: [pastedServer(null, value)] };
    const map = isObject(value.mcpServers) ? value.mcpServers : isObject(value.servers) ? value.servers : isObject(value.mcp) && isObject(value.mcp.servers) ? value.mcp.servers : value;
    const servers: PastedServer[] = [];
    for (const [name, raw] of Object.entries(map)) {
      if (!isObject(raw) || !isServerObject(raw)) continue;
      try {
        servers.push(pastedServer(name, raw));
      } catch (e) {
        throw new Error(`Server “${name}”: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    if (servers.length === 0) return { ok: false, error: 'No server in this JSON: a server has "command" (started by ipybox) or "url" (reached over HTTP).' };
    return { ok: true, servers };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/** A name that can be a package name, made from a name in a pasted map (`brave-search` → `brave_search`). */
export function suggestName(name: string): string {
  let s = name.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^[^A-Za-z]+/, '').replace(/_+$/, '');
  if (PYTHON_KEYWORDS.has(s) || s === 'ipybox') s = `${s}_server`;
  return s;
}

/**
 * A name the form can offer instead of one that cannot name a server, accepted with one
 * click: "Echo tools" → `echo_tools`, "brave-search" → `brave_search`. Null when `name` is
 * fine as it is, or nothing usable can be made of it.
 */
export function nameSuggestion(name: string): string | null {
  const typed = name.trim();
  if (typed === '' || checkName(typed) === null) return null;
  const suggestion = suggestName(typed.toLowerCase());
  return suggestion !== typed && checkName(suggestion) === null ? suggestion : null;
}

// ---- what regenerating changed

/** A tool whose generated interface changed, with the interface before and after (null
 *  when a registry from before ipybox kept interfaces has none). */


/** “2 tools added (a, b); 1 removed (c)”, or that nothing changed. */
export function describeChanges(c: ToolChanges): string {
  const part = (n: string[], what: string): string | null => (n.length === 0 ? null : `${n.length} ${what} (${n.join(', ')})`);
  const changed = c.changed.map((t) => t.module);
  const parts = [part(c.added, c.added.length === 1 ? 'tool added' : 'tools added'), part(c.removed, 'removed'), part(changed, changed.length === 1 ? 'signature changed' : 'signatures changed')].filter(
    (p): p is string => p !== null,
  );
  return parts.length === 0 ? 'No tool was added, removed or changed.' : `${parts.join('; ')}.`;
}

/**
 * What a call depends on in a generated interface: the class lines, their fields and `run`'s
 * signature, without docstrings, blank lines or the `...` body — the part that decides
 * whether a cell written against the old module still works.
 */
export function signatureLines(iface: string): string[] {
  const out: string[] = [];
  let inDoc = false;
  for (const line of iface.split('\n')) {
    const t = line.trim();
    const quotes = t.split('"""').length - 1;
    if (inDoc) {
      if (quotes % 2 === 1) inDoc = false;
      continue;
    }
    if (t.startsWith('"""')) {
      inDoc = quotes % 2 === 1;
      continue;
    }
    if (t === '' || t === '...') continue;
    out.push(line.trimEnd());
  }
  return out;
}

export interface SignatureLine {
  text: string;
  /** Not in the other side: removed (before) or added (after). */
  changed: boolean;
}

/** The signatures before and after, each line marked when the other side lacks it (a line
 *  diff by longest common subsequence: interfaces are a few dozen lines). */
export function compareSignatures(before: string | null, after: string | null): { before: SignatureLine[]; after: SignatureLine[] } {
  const a = before === null ? [] : signatureLines(before);
  const b = after === null ? [] : signatureLines(after);
  const common: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      const row = common[i] ?? [];
      row[j] = a[i] === b[j] ? (common[i + 1]?.[j + 1] ?? 0) + 1 : Math.max(common[i + 1]?.[j] ?? 0, row[j + 1] ?? 0);
    }
  }
  const keepA = new Set<number>();
  const keepB = new Set<number>();
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      keepA.add(i++);
      keepB.add(j++);
    } else if ((common[i + 1]?.[j] ?? 0) >= (common[i]?.[j + 1] ?? 0)) i++;
    else j++;
  }
  return {
    before: a.map((text, k) => ({ text, changed: !keepA.has(k) })),
    after: b.map((text, k) => ({ text, changed: !keepB.has(k) })),
  };
}

// ---- where a placeholder's value comes from


export function describeSource(source: VariableSource | null): string {
  switch (source) {
    case 'workspace':
      return 'the workspace folder';
    case 'dot_env':
      return 'defined in the workspace’s .env';
    case 'environment':
      return 'defined in ipybox’s environment';
    case null:
      return 'not defined: add it to the workspace’s .env';
  }
}

// ---- live status of each server, from the session events

export type ServerState = 'not_started' | 'running' | 'exited' | 'crashed';


export interface ServerStatus {
  state: ServerState;
  /** The last lines it wrote on stderr (exited or crashed). */
  stderr: string;
  /** How its process ended, when ipybox started it (absent for a remote server). */
  exit?: ProcessExit;
  /** The last log messages it sent (MCP logging), oldest first; raw, escaped when shown. */
  log?: readonly ServerLogLine[];
  /** A call was refused because it asks for a sign-in (`again`: a kept one no longer works). */
  signIn?: { again: boolean };
  /** An agent's call ran it: agents' kernels start copies of their own, which this state
   *  (the notebook's copy) does not follow. */
  agentRan?: boolean;
}

/** One log message of a server. */
export interface ServerLogLine {
  level: string;
  message: string;
}

/** A server's log messages kept for its card. */
export const KEPT_LOG_LINES = 5;

export type StatusEvent =
  | { type: 'mcp_server_started'; server: string }
  | { type: 'mcp_server_exited'; server: string; stderr: string; exit?: ProcessExit }
  | { type: 'mcp_server_log'; server: string; level: string; message: string }
  | { type: 'mcp_sign_in_needed'; server: string; again: boolean }
  /** An agent's call to the server ran (in the agent's own copy of it). */
  | { type: 'agent_call_ran'; server: string }
  /** The kernel was replaced or the session stopped: ipybox stopped every server. */
  | { type: 'servers_stopped' };

/** Each server's state as the session events tell it; servers start on their first call. */
export class ServerStatuses {
  private readonly map = new Map<string, ServerStatus>();
  private readonly listeners = new Set<() => void>();

  get(server: string): ServerStatus {
    return this.map.get(server) ?? { state: 'not_started', stderr: '' };
  }

  apply(event: StatusEvent): void {
    switch (event.type) {
      case 'mcp_server_started':
        this.map.set(event.server, { state: 'running', stderr: '', ...this.logOf(event.server) });
        break;
      case 'mcp_sign_in_needed':
        this.map.set(event.server, { ...this.get(event.server), signIn: { again: event.again } });
        break;
      case 'agent_call_ran':
        this.map.set(event.server, { ...this.get(event.server), agentRan: true });
        break;
      case 'mcp_server_log': {
        const now = this.get(event.server);
        const log = [...(now.log ?? []), { level: event.level, message: event.message }].slice(-KEPT_LOG_LINES);
        this.map.set(event.server, { ...now, log });
        break;
      }
      case 'mcp_server_exited': {
        // The exit status decides: a code other than 0 or a signal is a crash. A remote
        // server has none (its connection closed): something on stderr is the best sign.
        const exit = event.exit;
        const crashed = exit ? !('code' in exit && exit.code === 0) : event.stderr.trim() !== '';
        this.map.set(event.server, { state: crashed ? 'crashed' : 'exited', stderr: event.stderr, ...this.logOf(event.server), ...(exit ? { exit } : {}) });
        break;
      }
      case 'servers_stopped':
        this.map.clear();
        break;
    }
    for (const fn of [...this.listeners]) fn();
  }

  /** The person signed in (or out) of `server`: what a refused call said no longer holds. */
  signedIn(server: string): void {
    const now = this.map.get(server);
    if (!now?.signIn) return;
    const { signIn: _done, ...rest } = now;
    this.map.set(server, rest);
    for (const fn of [...this.listeners]) fn();
  }

  /** The server's log, as a field to keep (none while it logged nothing). */
  private logOf(server: string): { log?: readonly ServerLogLine[] } {
    const log = this.get(server).log;
    return log && log.length > 0 ? { log } : {};
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}

export function describeState(s: ServerStatus): string {
  switch (s.state) {
    case 'not_started':
      return s.agentRan ? 'Ran an agent’s call, in the agent’s session (starts here on this notebook’s first call)' : 'Not started (starts on its first call)';
    case 'running':
      return 'Running';
    case 'exited':
      return 'Exited (it starts again on its next call)';
    case 'crashed': {
      const again = 'it starts again on its next call';
      const exit = s.exit;
      if (exit === undefined) return `Crashed (${again})`;
      if ('signal' in exit) return `Killed by signal ${exit.signal}${signalName(exit.signal)} (${again})`;
      return `Crashed (exit code ${exit.code}; ${again})`;
    }
  }
}

/** The common signals by name (Linux and macOS agree on these numbers). */
function signalName(signal: number): string {
  const names: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 3: 'SIGQUIT', 6: 'SIGABRT', 9: 'SIGKILL', 11: 'SIGSEGV', 13: 'SIGPIPE', 15: 'SIGTERM' };
  const name = names[signal];
  return name ? `, ${name}` : '';
}
