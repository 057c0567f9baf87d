/**
 * Where a workspace's kernel runs, without DOM: what the Settings dialog accepts as a server's
 * URL and headers, and how it says where the kernel runs. The backend checks again.
 */
import type { RemoteState } from '../ipc';

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

/** A Jupyter Server or Enterprise Gateway URL: http(s):// (or ws(s)://), a host, an optional base path. */
export function checkServerUrl(text: string): Checked<string> {
  const t = text.trim();
  if (!t) return { ok: false, message: 'Enter the server’s URL, such as https://jupyter.example.org.' };
  let url: URL;
  try {
    url = new URL(t);
  } catch {
    return { ok: false, message: `“${t}” is not a URL: it starts with https:// or http://.` };
  }
  if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) {
    return { ok: false, message: `ipybox talks to Jupyter servers over https:// or http://, not ${url.protocol}//.` };
  }
  if (!url.hostname) return { ok: false, message: 'The URL has no host name.' };
  if (url.search || url.hash) {
    return { ok: false, message: 'Leave the token out of the URL (no ?token=…): give it in the Token field, where it is kept in your keyring.' };
  }
  if (url.username || url.password) return { ok: false, message: 'Leave names and passwords out of the URL; a proxy’s credentials go in Headers.' };
  return { ok: true, value: t.replace(/\/+$/, '') };
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Headers, one per line as `Name: value`; empty lines are skipped. */
export function parseHeaderLines(text: string): Checked<string[]> {
  const headers: string[] = [];
  const lines = text.split('\n');
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (!line) continue;
    const colon = line.indexOf(':');
    const where = lines.length > 1 ? `Line ${i + 1}` : 'The header';
    if (colon <= 0) return { ok: false, message: `${where} is not of the form “Name: value”.` };
    const name = line.slice(0, colon).trim();
    if (!HEADER_NAME.test(name)) return { ok: false, message: `${where}: “${name}” cannot be a header name (letters, digits and - only).` };
    if (!line.slice(colon + 1).trim()) return { ok: false, message: `${where}: ${name} has no value.` };
    headers.push(`${name}: ${line.slice(colon + 1).trim()}`);
  }
  return { ok: true, value: headers };
}

/** A server's URL as the status bar shows it: host, port and path. */
export function serverLabel(url: string): string {
  return url.replace(/^[a-z]+:\/\//i, '').replace(/\/+$/, '');
}

/** One sentence: where the running kernel is, and what stays on this computer. */
export function whereItRuns(state: RemoteState): string {
  if (state.running) return `The kernel runs on the server ${serverLabel(state.running)}.`;
  return 'The kernel runs on this computer.';
}

/** What is kept for the chosen server, in words (never the values). */
export function keptSecret(state: RemoteState): string {
  const c = state.choice;
  if (!c) return '';
  const what = [c.hasToken ? 'a token' : '', c.headerNames.length ? `headers (${c.headerNames.join(', ')})` : ''].filter(Boolean).join(' and ');
  if (!what) return 'No token is kept for this server.';
  const where = c.secret === 'keyring' ? 'in your keyring' : 'in a file only you can read (no keyring answered)';
  return `Kept ${where}: ${what}. Leave the fields empty to keep them.`;
}
