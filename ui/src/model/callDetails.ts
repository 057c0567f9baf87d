/**
 * What the approval panel says about a waiting call besides its name, without DOM: what the
 * tool does (its description, the server's hints), its arguments as named fields with the
 * schema's word for each, the line of code that made the call, who asks (an agent's MCP
 * client, or a cell), a tool definition that changed since a person accepted it, and the
 * grants "for this session". Every text here came from an MCP server, an agent or kernel
 * code: it is escaped (`escapeUntrusted`) and bounded before a person reads it.
 */
import type { ApprovalGrant, ClientInfo, DefinitionChange, ToolDefinition, ToolHints } from '../ipc';
import { isJsonObject, type JsonValue } from '../util/json';
import { callName, prettyArguments, shortenText, timeAgo } from './approvals';
import { clipEscaped, escapeUntrusted, escapeUntrustedLines } from './untrusted';

// ---------------------------------------------------------------------------------------------
// The tool's description

/** Lines of a description shown before "more". */
export const DESCRIPTION_LINES = 3;
/** Characters of a description shown before "more". */
export const DESCRIPTION_CHARS = 300;
/** Characters of a description shown at most, even after "more" (the rest is counted). */
export const DESCRIPTION_MAX = 4000;

export interface DescriptionText {
  /** The first lines, escaped. */
  short: string;
  /** The whole description (up to DESCRIPTION_MAX characters), escaped; null when `short` is all of it. */
  full: string | null;
}

/** A description's first lines, and the rest on demand; null when there is none. */
export function describeTool(description: string | null | undefined): DescriptionText | null {
  const text = (description ?? '').replace(/\r\n?/g, '\n').trim();
  if (!text) return null;
  const lines = text.split('\n');
  let short = lines.slice(0, DESCRIPTION_LINES).join('\n');
  const moreLines = lines.length > DESCRIPTION_LINES;
  // Cut inside a line: "…" says the sentence goes on ("More" says the lines do).
  let midLine = false;
  if (short.length > DESCRIPTION_CHARS) {
    short = shortenText(short, DESCRIPTION_CHARS).replace(/… \([\d,]+ more characters\)$/, '');
    midLine = true;
  }
  if (!moreLines && !midLine) return { short: escapeUntrustedLines(short), full: null };
  return { short: `${escapeUntrustedLines(short.trimEnd())}${midLine ? '…' : ''}`, full: escapeUntrustedLines(shortenText(text, DESCRIPTION_MAX)) };
}

// ---------------------------------------------------------------------------------------------
// The server's hints (MCP tool annotations)

export type HintTone = 'calm' | 'caution' | 'danger';

export interface HintLabel {
  /** Which hint ("read_only", "destructive", …), for styling and tests. */
  key: keyof ToolHints;
  text: string;
  tone: HintTone;
}

/**
 * The hints a server declared, as plain labels: "read-only", "may delete or overwrite",
 * "reaches the internet". Only hints the server gave; a read-only tool is not also called
 * destructive (the MCP specification says the destructive hint means nothing then).
 */
export function hintLabels(hints: ToolHints | null | undefined): HintLabel[] {
  if (!hints) return [];
  const out: HintLabel[] = [];
  if (hints.read_only === true) out.push({ key: 'read_only', text: 'read-only', tone: 'calm' });
  if (hints.read_only !== true) {
    if (hints.destructive === true) out.push({ key: 'destructive', text: 'may delete or overwrite', tone: 'danger' });
    else if (hints.destructive === false) out.push({ key: 'destructive', text: 'only adds, never deletes or overwrites', tone: 'calm' });
  }
  if (hints.open_world === true) out.push({ key: 'open_world', text: 'reaches the internet', tone: 'caution' });
  else if (hints.open_world === false) out.push({ key: 'open_world', text: 'stays on this computer', tone: 'calm' });
  if (hints.idempotent === true && hints.read_only !== true) out.push({ key: 'idempotent', text: 'calling it twice does no more than once', tone: 'calm' });
  return out;
}

/** Said under the hints: they are not facts. */
export const HINTS_NOTE = 'These are the server’s own claims about its tool; ipybox has not checked them.';

// ---------------------------------------------------------------------------------------------
// Arguments as named fields

/** Characters of a field's schema description shown. */
export const FIELD_DESCRIPTION_CHARS = 200;
/** Fields listed at most (the rest are counted). */
export const MAX_FIELDS = 50;

export interface ArgumentField {
  /** The argument's name, escaped. */
  name: string;
  /** Its value as JSON, long strings and lists shortened, escaped. */
  value: string;
  /** Whether `value` was shortened. */
  shortened: boolean;
  /** The schema's description of it, escaped and bounded; null when the schema has none. */
  description: string | null;
}

/** The schema's `properties` entry for `name`, if the schema is an object schema that has one. */
function propertySchema(schema: JsonValue | undefined, name: string): JsonValue | undefined {
  if (!schema || !isJsonObject(schema)) return undefined;
  const props = schema.properties;
  if (!props || !isJsonObject(props) || !Object.prototype.hasOwnProperty.call(props, name)) return undefined;
  return props[name];
}

/**
 * The arguments as named fields, each with its schema description (`full`: values not
 * shortened). Null when the arguments are not an object with keys: shown as JSON then.
 */
export function argumentFields(args: JsonValue, schema: JsonValue | undefined, full = false): { fields: ArgumentField[]; more: number } | null {
  if (!isJsonObject(args)) return null;
  const entries = Object.entries(args);
  if (entries.length === 0) return null;
  const fields = entries.slice(0, MAX_FIELDS).map(([name, value]): ArgumentField => {
    const pretty = prettyArguments(value, full);
    const prop = propertySchema(schema, name);
    const described = prop && isJsonObject(prop) && typeof prop.description === 'string' ? prop.description.replace(/\s+/g, ' ').trim() : '';
    return {
      name: clipEscaped(escapeUntrusted(name), 120),
      value: pretty.text,
      shortened: pretty.shortened,
      description: described ? clipEscaped(escapeUntrusted(described), FIELD_DESCRIPTION_CHARS) : null,
    };
  });
  return { fields, more: Math.max(0, entries.length - MAX_FIELDS) };
}

// ---------------------------------------------------------------------------------------------
// Who asks, and from where

/**
 * Names MCP SDKs give a client that did not name itself (the Python SDK's "mcp 0.1.0"): they
 * say which library, not which agent. The same list as `LIBRARY_NAMES` in definition.rs.
 */
const LIBRARY_NAMES: ReadonlySet<string> = new Set(['mcp', 'rmcp', 'mcp-client', 'client', 'python-sdk']);

/** "Claude Code 2.1", escaped and bounded (an agent names itself). */
export function clientName(client: Pick<ClientInfo, 'name' | 'version'>): string {
  const own = client.name.trim();
  if (own === '' || LIBRARY_NAMES.has(own.toLowerCase())) return 'An agent that did not give its name';
  const name = clipEscaped(escapeUntrusted(own), 80);
  const version = client.version?.trim() ? ` ${clipEscaped(escapeUntrusted(client.version.trim()), 40)}` : '';
  return `${name}${version}`;
}

/** "agent session 192ee55f" (the session id shortened to 8 characters). */
export function sessionWords(session: string): string {
  return `agent session ${clipEscaped(escapeUntrusted(session), 9).replace(/…$/, '')}`;
}

/** "Claude Code 2.1 · agent session 192ee55f · connected 5 min ago". */
export function clientWords(client: ClientInfo, now: number): string {
  const parts = [clientName(client), sessionWords(client.session)];
  if (typeof client.connected_at_ms === 'number' && client.connected_at_ms > 0) parts.push(`connected ${timeAgo(client.connected_at_ms, now)}`);
  return parts.join(' · ');
}

/** The line of code that made the call, escaped and bounded; null when unknown. */
export function callSiteWords(callSite: string | null | undefined): string | null {
  const text = (callSite ?? '').trim();
  return text ? clipEscaped(escapeUntrusted(text), 300) : null;
}

// ---------------------------------------------------------------------------------------------
// A definition that changed since a person accepted it

export interface ChangeRow {
  /** "Description", "Hints", "Arguments (schema)", "Title". */
  field: string;
  /** Before and now, escaped (multi-line) and bounded; "(none)" when absent. */
  before: string;
  after: string;
  changed: boolean;
  /** Shown as code (the schema), not as words. */
  code: boolean;
}

/** Characters of each side shown in the comparison. */
export const CHANGE_CHARS = 2000;

function side(value: string | undefined | null): string {
  const text = (value ?? '').trim();
  return text ? escapeUntrustedLines(shortenText(text, CHANGE_CHARS)) : '(none)';
}

function hintsText(hints: ToolHints | undefined): string {
  const labels = hintLabels(hints).map((l) => l.text);
  return labels.length ? labels.join(', ') : '';
}

function schemaText(schema: JsonValue | undefined): string {
  return schema === undefined || schema === null ? '' : (JSON.stringify(schema, null, 2) ?? '');
}

/** The definition accepted before and the one the server lists now, field by field. */
export function changeRows(change: DefinitionChange): ChangeRow[] {
  const a: ToolDefinition | null = change.accepted;
  const b = change.now;
  const rows: [string, string | undefined, string | undefined][] = [
    ['Title', a?.title, b.title],
    ['Description', a?.description, b.description],
    ['What the server says', a ? hintsText(a.hints) : undefined, hintsText(b.hints)],
    ['Arguments (schema)', a ? schemaText(a.input_schema) : undefined, schemaText(b.input_schema)],
  ];
  return rows
    .map(([field, before, after]) => ({ field, before: side(before), after: side(after), changed: (before ?? '').trim() !== (after ?? '').trim(), code: field === 'Arguments (schema)' }))
    .filter((r) => r.changed || (r.before !== '(none)' && r.field !== 'Title'));
}

/** The headline over the comparison. */
export function changeHeadline(change: DefinitionChange): string {
  return change.accepted ? 'This tool changed since you accepted it' : 'This tool is new: the server did not list it when you accepted its tools';
}

// ---------------------------------------------------------------------------------------------
// Grants "for this session"

/** "fx.touch allowed for this session". */
export function grantWords(grant: ApprovalGrant): string {
  return `${callName(grant.server, grant.tool)} allowed for this session`;
}

/** "in this notebook's kernel, since 3 min ago" / "for agent session 192ee55f, since just now". */
export function grantScopeWords(grant: ApprovalGrant, now: number): string {
  const where = grant.scope === 'agent' && grant.session ? `for ${sessionWords(grant.session)}` : grant.scope === 'agent' ? 'for an agent’s session' : 'until the notebook’s kernel restarts';
  return `${where} · granted ${timeAgo(grant.granted_at, now)}`;
}

function isGrant(value: unknown): value is ApprovalGrant {
  if (typeof value !== 'object' || value === null) return false;
  const g: Record<string, unknown> = { ...value };
  return typeof g.id === 'number' && typeof g.server === 'string' && typeof g.tool === 'string' && typeof g.granted_at === 'number' && (g.scope === 'notebook' || g.scope === 'agent');
}

/** The grants as the panel lists them: well-formed ones only, newest first. */
export function sortGrants(grants: unknown): ApprovalGrant[] {
  if (!Array.isArray(grants)) return [];
  return grants.filter(isGrant).sort((x, y) => y.granted_at - x.granted_at || y.id - x.id);
}

// ---------------------------------------------------------------------------------------------
// The window title

/**
 * The window title: "ipybox — analysis.ipynb", with "• " in front while unsaved and the number
 * of calls waiting before the file's name ("ipybox — (3) analysis.ipynb"), where a taskbar
 * that shortens titles still shows it. The title keeps starting with "ipybox — " (the window
 * is found by it).
 */
export function windowTitle(fileName: string, dirty: boolean, waiting: number): string {
  const count = waiting > 0 ? `(${waiting.toLocaleString('en-US')}) ` : '';
  return `${dirty ? '• ' : ''}ipybox — ${count}${fileName}`;
}
