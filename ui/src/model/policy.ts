/**
 * A sandbox policy (an srt settings file) as the policy editor edits it: lists of paths and
 * domains, a few switches, srt's other keys kept untouched; quick checks that mirror the
 * engine's `validate()` (the engine is the authority); and the policy in words.
 */
import type { JsonObject, JsonValue } from '../util/json';
import { isJsonObject, isStringArray } from '../util/json';
import type { PolicyProblem, Severity } from '../generated/backend';

export type { PolicyProblem, Severity };



export type ListId =
  | 'filesystem.denyRead'
  | 'filesystem.allowRead'
  | 'filesystem.allowWrite'
  | 'filesystem.denyWrite'
  | 'network.allowedDomains'
  | 'network.deniedDomains'
  | 'network.allowUnixSockets';

export type FlagId = 'network.allowAllUnixSockets' | 'network.allowLocalBinding' | 'filesystem.allowGitConfig' | 'allowPty' | 'enableWeakerNetworkIsolation' | 'enableWeakerNestedSandbox' | 'filesystem.disabled';

export interface ListSpec {
  id: ListId;
  kind: 'path' | 'domain';
  label: string;
  /** What it means, in plain words. */
  help: string;
  /** Lists srt requires (written even when empty). */
  required: boolean;
  /** Only macOS honours it. */
  macOnly?: boolean;
  placeholder: string;
}

export interface FlagSpec {
  id: FlagId;
  label: string;
  help: string;
  /** Turning it on weakens the sandbox: said next to it. */
  warning?: string;
  macOnly?: boolean;
}

export const LISTS: readonly ListSpec[] = [
  { id: 'filesystem.allowWrite', kind: 'path', label: 'May write', help: 'Code may create and change files only in these folders; everything else is read-only. “.” is this workspace.', required: true, placeholder: 'out/ or ~/data' },
  { id: 'filesystem.denyWrite', kind: 'path', label: 'Never write', help: 'Read-only again, even inside a folder code may write.', required: true, placeholder: 'data/raw' },
  { id: 'filesystem.denyRead', kind: 'path', label: 'Hidden', help: 'Code cannot read these files and folders at all (secrets, keys). Patterns like **/.env hide every .env in the workspace.', required: true, placeholder: '~/.ssh or **/.env' },
  { id: 'filesystem.allowRead', kind: 'path', label: 'Readable again', help: 'Readable again inside a hidden folder.', required: false, placeholder: '~/.config/myapp/public' },
  { id: 'network.allowedDomains', kind: 'domain', label: 'May reach', help: 'The only domains code may reach (through the sandbox’s proxy). *.example.org means its subdomains; example.org:443 one port. Empty: no network at all.', required: true, placeholder: 'pypi.org' },
  { id: 'network.deniedDomains', kind: 'domain', label: 'Never reach', help: 'Never reachable, even when a pattern above matches.', required: true, placeholder: 'upload.example.org' },
  { id: 'network.allowUnixSockets', kind: 'path', label: 'Unix sockets', help: 'Unix sockets code may connect to. Only macOS honours this list; on Linux it is all or nothing (below).', required: false, macOnly: true, placeholder: '/var/run/app.sock' },
];

export const FLAGS: readonly FlagSpec[] = [
  { id: 'network.allowAllUnixSockets', label: 'Allow every Unix socket', help: 'Lifts the block on Unix sockets.', warning: 'Code could talk to D-Bus, Docker or your desktop (X11): a way out of the sandbox.' },
  { id: 'network.allowLocalBinding', label: 'Allow listening on local ports', help: 'Lets code run a local server. Only macOS honours this; on Linux the sandbox has a network of its own anyway.', macOnly: true, warning: 'Other programs on this Mac could reach what code serves.' },
  { id: 'filesystem.allowGitConfig', label: 'Allow changing .git/config', help: 'Lets code update git remotes in a folder it may write; .git/hooks stay protected.', warning: 'Your own git obeys .git/config outside the sandbox: settings like core.fsmonitor or core.sshCommand run programs.' },
  { id: 'allowPty', label: 'Allow terminals (pty)', help: 'Lets code open pseudo-terminals. Only macOS restricts them.', macOnly: true },
  { id: 'enableWeakerNetworkIsolation', label: 'Weaker network isolation', help: 'Lets code reach macOS’s certificate service (com.apple.trustd), which some tools need to check TLS certificates.', macOnly: true, warning: 'Opens a system service to code.' },
  { id: 'enableWeakerNestedSandbox', label: 'Weaker sandbox for containers', help: 'For Docker without user namespaces: the sandbox sees the host’s processes (/proc).', warning: 'Meant for containers only; on a desktop it lets code see your other programs.' },
  { id: 'filesystem.disabled', label: 'Turn off file restrictions', help: 'Ignores every path rule above.', warning: 'Code reads and writes everything you can.' },
];

export type ParseResult = { ok: true; policy: JsonObject } | { ok: false; message: string };

/** Parse a policy file's text. */
export function parsePolicy(text: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `The policy is not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (!isJsonObject(value)) return { ok: false, message: 'The policy must be a JSON object with “filesystem” and “network” sections.' };
  for (const section of ['filesystem', 'network']) {
    const s = value[section];
    if (s !== undefined && !isJsonObject(s)) return { ok: false, message: `“${section}” must be an object.` };
  }
  for (const spec of LISTS) {
    const v = lookup(value, spec.id);
    if (v !== undefined && !isStringArray(v)) return { ok: false, message: `“${spec.id}” must be a list of strings.` };
  }
  return { ok: true, policy: value };
}

function split(id: string): [string | null, string] {
  const dot = id.indexOf('.');
  return dot < 0 ? [null, id] : [id.slice(0, dot), id.slice(dot + 1)];
}

function lookup(policy: JsonObject, id: string): JsonValue | undefined {
  const [section, key] = split(id);
  if (section === null) return policy[key];
  const s = policy[section];
  return isJsonObject(s) ? s[key] : undefined;
}

/** A copy of `policy` with `id` set (or removed with `undefined`), other keys in place. */
function assign(policy: JsonObject, id: string, value: JsonValue | undefined): JsonObject {
  const [section, key] = split(id);
  const out: JsonObject = { ...policy };
  if (section === null) {
    if (value === undefined) delete out[key];
    else out[key] = value;
    return out;
  }
  const old = out[section];
  const s: JsonObject = isJsonObject(old) ? { ...old } : {};
  if (value === undefined) delete s[key];
  else s[key] = value;
  out[section] = s;
  return out;
}

export function getList(policy: JsonObject, id: ListId): string[] {
  const v = lookup(policy, id);
  return isStringArray(v) ? [...v] : [];
}

export function setList(policy: JsonObject, id: ListId, values: string[]): JsonObject {
  const spec = LISTS.find((l) => l.id === id);
  return assign(policy, id, values.length === 0 && !spec?.required ? undefined : values);
}

export function getFlag(policy: JsonObject, id: FlagId): boolean {
  return lookup(policy, id) === true;
}

/** On: `true`; off: the key goes (srt's default is off for each). */
export function setFlag(policy: JsonObject, id: FlagId, on: boolean): JsonObject {
  return assign(policy, id, on ? true : undefined);
}

/** The file's text: two-space JSON and a final newline. */
export function policyText(policy: JsonObject): string {
  return `${JSON.stringify(policy, null, 2)}\n`;
}

// ---------------------------------------------------------------------------------------------
// Checks (mirroring the engine's `validate()` for instant feedback)

export function pathProblem(path: string): string | null {
  if (path.trim() === '') return 'the path is empty';
  if (path.includes('\0')) return 'the path contains a NUL character';
  if (path.trim() !== path) return 'the path starts or ends with spaces';
  if (path.startsWith('~') && path !== '~' && !path.startsWith('~/')) return `"${path}": \`~\` means your home only as \`~\` or \`~/…\` (another user's home is not supported)`;
  return null;
}

/** `allowed`: an allowedDomains entry (srt refuses the broadest patterns there; a lone * in deniedDomains denies all). */
export function domainProblem(domain: string, allowed = true): string | null {
  if (domain === '') return 'the domain is empty';
  if (domain.includes('://')) return `"${domain}" is a URL; give the domain alone (example.org)`;
  if (domain.includes('/')) return `"${domain}" has a path; give the domain alone (example.org)`;
  let host = domain;
  const colon = domain.lastIndexOf(':');
  if (colon >= 0) {
    host = domain.slice(0, colon);
    const port = domain.slice(colon + 1);
    const n = /^\d+$/.test(port) ? Number(port) : NaN;
    if (!(n >= 1 && n <= 65535)) return `"${domain}": "${port}" is not a port (1–65535)`;
  }
  // srt refuses these ("overly broad"): a policy with one would not start.
  if (host === '*' && !allowed) return null;
  if (host === '*') return `"${domain}" would allow every domain, which the sandbox refuses; list the domains code needs`;
  const wildcard = host.startsWith('*.');
  if (wildcard) host = host.slice(2);
  if (wildcard && allowed && !host.includes('.')) return `"${domain}" would allow a whole top-level domain, which the sandbox refuses; name the site (*.example.${host})`;
  const label = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
  if (host.length > 253 || !host.split('.').every((l) => label.test(l))) return `"${domain}" is not a domain name (letters, digits, hyphens and dots, as in example.org)`;
  return null;
}

/** The quick checks: one problem per entry at most, warnings for what weakens the sandbox. */
export function localProblems(policy: JsonObject): PolicyProblem[] {
  const out: PolicyProblem[] = [];
  for (const spec of LISTS) {
    getList(policy, spec.id).forEach((entry, i) => {
      const field = `${spec.id}[${i}]`;
      const message = spec.kind === 'domain' ? domainProblem(entry, spec.id === 'network.allowedDomains') : pathProblem(entry);
      if (message) out.push({ field, message, severity: 'error' });
      else if (spec.id === 'filesystem.allowWrite' && ['~', '/', ''].includes(entry.replace(/\/+$/, ''))) out.push({ field, message: `"${entry}" lets code write your whole home or disk: what your programs run and read as configuration`, severity: 'warning' });
    });
  }
  return out;
}

/**
 * One message per field: the engine's when it has one (it is the authority), else the quick
 * check's; errors before dangers (a place no grant may open, which only the engine knows),
 * dangers before warnings.
 */
export function problemsByField(engine: PolicyProblem[], local: PolicyProblem[] = []): Map<string, PolicyProblem> {
  const out = new Map<string, PolicyProblem>();
  for (const list of [engine, local]) {
    for (const p of list) {
      const had = out.get(p.field);
      const stronger = had !== undefined && had.severity === 'warning' && ((p.severity === 'error' && list === engine) || p.severity === 'danger');
      if (!had || stronger) out.set(p.field, p);
    }
  }
  return out;
}

export function hasErrors(problems: Iterable<PolicyProblem>): boolean {
  for (const p of problems) if (p.severity === 'error') return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// The policy in words

export interface SummaryLine {
  /** What it is about. */
  topic: 'write' | 'read' | 'network' | 'sockets' | 'other';
  text: string;
  /** Weakens the sandbox. */
  warn: boolean;
}

/** A path in words: `.` is this workspace, `~` your home folder. */
export function pathWords(path: string): string {
  const p = path.replace(/^\.\/(?=.)/, '');
  if (p === '.' || p === './' || p === '') return 'this workspace';
  if (p === '~' || p === '~/') return 'your whole home folder';
  if (p === '/') return 'the whole disk';
  return p;
}

function domainWords(domain: string): string {
  if (domain === '*') return 'every domain';
  if (domain.startsWith('*.')) return `any subdomain of ${domain.slice(2)}`;
  return domain;
}

/** Every item: the summary never hides one (what was just added would be the one hidden). */
export function listWords(items: string[]): string {
  return items.join(', ');
}

/** What the policy lets code do, sentence by sentence. */
export function summarize(policy: JsonObject): SummaryLine[] {
  const lines: SummaryLine[] = [];
  if (getFlag(policy, 'filesystem.disabled')) {
    lines.push({ topic: 'write', text: 'File restrictions are off: code may read and write everything you can.', warn: true });
  } else {
    const write = getList(policy, 'filesystem.allowWrite');
    const denyWrite = getList(policy, 'filesystem.denyWrite');
    const broad = write.some((p) => ['~', '/', ''].includes(p.replace(/\/+$/, '')));
    if (write.length === 0) lines.push({ topic: 'write', text: 'Code may not write anywhere (only in ipybox’s own session folder).', warn: false });
    else lines.push({ topic: 'write', text: `Code may write in: ${listWords(write.map(pathWords))}${denyWrite.length ? `; except: ${listWords(denyWrite.map(pathWords))}` : ''}.`, warn: broad });
    const hidden = getList(policy, 'filesystem.denyRead');
    const again = getList(policy, 'filesystem.allowRead');
    if (hidden.length === 0) lines.push({ topic: 'read', text: 'Code may read everything you can.', warn: true });
    else lines.push({ topic: 'read', text: `Code may read everything except: ${listWords(hidden.map(pathWords))}${again.length ? `; but may read again: ${listWords(again.map(pathWords))}` : ''}.`, warn: false });
  }
  const allowed = getList(policy, 'network.allowedDomains');
  const denied = getList(policy, 'network.deniedDomains');
  if (allowed.length === 0) lines.push({ topic: 'network', text: 'Code may not reach the network at all.', warn: false });
  else {
    const all = allowed.some((d) => d.startsWith('*') && !d.startsWith('*.'));
    lines.push({ topic: 'network', text: `Code may reach: ${listWords(allowed.map(domainWords))}${denied.length ? `, but never: ${listWords(denied.map(domainWords))}` : ''}; nothing else on the network.`, warn: all });
  }
  if (getFlag(policy, 'network.allowAllUnixSockets')) lines.push({ topic: 'sockets', text: 'Code may connect to any Unix socket of this machine (D-Bus, Docker, your desktop).', warn: true });
  else lines.push({ topic: 'sockets', text: 'Code may not open Unix sockets (on Linux; on macOS only those listed).', warn: false });
  if (getFlag(policy, 'network.allowLocalBinding')) lines.push({ topic: 'other', text: 'On macOS, code may listen on local ports.', warn: true });
  if (getFlag(policy, 'filesystem.allowGitConfig')) lines.push({ topic: 'other', text: 'Code may change .git/config, which your own git obeys outside the sandbox.', warn: true });
  if (getFlag(policy, 'enableWeakerNetworkIsolation')) lines.push({ topic: 'other', text: 'On macOS, code may reach the system’s certificate service.', warn: true });
  if (getFlag(policy, 'enableWeakerNestedSandbox')) lines.push({ topic: 'other', text: 'The sandbox is the weaker one for containers: code sees the host’s processes.', warn: true });
  return lines;
}

// ---------------------------------------------------------------------------------------------
// The editor's document: what is on disk, what is being edited

export type ExternalOutcome = 'same' | 'reloaded' | 'conflict' | 'removed';

/** The policy being edited against the text it was opened (or last saved) with. */
export class PolicyDraft {
  /** The file's text as last read or saved. */
  base: string;
  policy: JsonObject;
  /** A change on disk that waits for the person to choose (unsaved edits here). */
  pendingExternal: string | null = null;

  constructor(text: string) {
    const parsed = parsePolicy(text);
    this.base = text;
    this.policy = parsed.ok ? parsed.policy : {};
  }

  get text(): string {
    return policyText(this.policy);
  }

  /** Edited since opened or saved (a reformat alone is no edit). */
  get dirty(): boolean {
    const base = parsePolicy(this.base);
    return !base.ok || policyText(base.policy) !== this.text;
  }

  edit(policy: JsonObject): void {
    this.policy = policy;
  }

  /** Saved as `text`. */
  saved(text: string): void {
    this.base = text;
    const parsed = parsePolicy(text);
    if (parsed.ok) this.policy = parsed.policy;
    this.pendingExternal = null;
  }

  /**
   * The file on disk is now `text` (`null`: removed). Without local edits it is loaded;
   * with them it waits for `keepMine()` or `loadTheirs()`.
   */
  external(text: string | null): ExternalOutcome {
    if (text === null) return 'removed';
    if (text === this.base) return 'same';
    // What is being edited here, saved (our own Save, its event ahead of its answer).
    if (text === this.text) {
      this.base = text;
      this.pendingExternal = null;
      return 'same';
    }
    const parsed = parsePolicy(text);
    if (parsed.ok && !this.dirty) {
      this.base = text;
      this.policy = parsed.policy;
      this.pendingExternal = null;
      return 'reloaded';
    }
    this.pendingExternal = text;
    return 'conflict';
  }

  /** Keep the edits here (saving will overwrite the other change). */
  keepMine(): void {
    if (this.pendingExternal !== null) this.base = this.pendingExternal;
    this.pendingExternal = null;
  }

  /** Drop the edits here for what is on disk. */
  loadTheirs(): boolean {
    const text = this.pendingExternal;
    if (text === null) return false;
    const parsed = parsePolicy(text);
    if (!parsed.ok) return false;
    this.base = text;
    this.policy = parsed.policy;
    this.pendingExternal = null;
    return true;
  }
}

/**
 * A picked path as a policy names it: inside the workspace, relative to it (a folder with a
 * trailing slash; the workspace itself is "."); outside it, as it is.
 */
export function relativeToWorkspace(path: string, workspace: string | undefined, directory: boolean): string {
  const root = workspace?.replace(/\/+$/, '');
  if (!root) return path;
  if (path === root) return '.';
  if (path.startsWith(`${root}/`)) return path.slice(root.length + 1) + (directory ? '/' : '');
  return path;
}

// ---------------------------------------------------------------------------------------------
// Presets

export type PresetId = 'kernel-workspace-only' | 'kernel' | 'custom';

export interface PresetSpec {
  id: PresetId;
  label: string;
  /** What it means, in one sentence. */
  help: string;
}

/** The choices above the form; a preset is a profile ipybox ships (Custom: anything else). */
export const PRESETS: readonly PresetSpec[] = [
  { id: 'kernel-workspace-only', label: 'Workspace only', help: 'Code reads only this workspace, the Python environment and the system — nothing else of your home; recommended when agents run code.' },
  { id: 'kernel', label: 'My files, no secrets', help: 'Code reads your files but not secrets, agents’ data, browser profiles, histories, keyrings or mail.' },
  { id: 'custom', label: 'Custom', help: 'Your own lists below; what differs from the preset you started from is yours to keep.' },
];

/** Which preset `policy` is (same settings as the profile's text), else custom. */
export function presetOf(policy: JsonObject, profiles: ReadonlyMap<string, string>): PresetId {
  const text = policyText(policy);
  for (const p of PRESETS) {
    const profile = p.id === 'custom' ? undefined : profiles.get(p.id);
    if (profile === undefined) continue;
    const parsed = parsePolicy(profile);
    if (parsed.ok && policyText(parsed.policy) === text) return p.id;
  }
  return 'custom';
}

/**
 * What the default (`kernelText`) hides that `policy` does not: a policy written before the
 * default grew keeps working as it was, and the tab offers these. Empty for a policy that
 * hides the whole home (Workspace only) or already hides them all.
 */
export function missingHidden(policy: JsonObject, kernelText: string | undefined): string[] {
  if (kernelText === undefined) return [];
  const parsed = parsePolicy(kernelText);
  if (!parsed.ok) return [];
  const hidden = new Set(getList(policy, 'filesystem.denyRead').map((p) => p.replace(/\/+$/, '')));
  if (hidden.has('~')) return [];
  return getList(parsed.policy, 'filesystem.denyRead').filter((p) => !hidden.has(p));
}

/** An answer of the checker in words: "Read /x: allowed — readable again (filesystem.allowRead: ~/pub)". */
export function verdictWords(v: { access: 'read' | 'write' | 'connect'; target: string; allowed: boolean; rule: string | null; reason: string }): string {
  const what = v.access === 'read' ? 'Read' : v.access === 'write' ? 'Write' : 'Reach';
  return `${what} ${v.target}: ${v.allowed ? 'allowed' : 'blocked'} — ${v.reason}${v.rule ? ` (${v.rule})` : ''}`;
}
