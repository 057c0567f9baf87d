/**
 * The audit log without DOM: entries indexed once (newest first, a lowercase search text and the
 * shown texts computed per entry), so that filtering thousands of them is a loop of `includes`.
 */
import type { AuditEntry, CallDecision, DecidedBy } from '../ipc';
import { callName, decisionWords, formatDuration, howWithRule, outcomeWords } from './approvals';
import { clientName, sessionWords } from './callDetails';
import { escapeUntrusted } from './untrusted';

export interface AuditRow {
  readonly entry: AuditEntry;
  /** Server, tool, `server.tool`, arguments JSON, origin, execution id, reason — lowercase; as
   *  sent and, where that differs, as shown (escaped), so either finds it. */
  readonly search: string;
  /** The arguments on one line (whole), escaped. */
  readonly argsJson: string;
  readonly call: string;
  readonly decision: string;
  readonly how: string;
  readonly outcome: string;
  readonly duration: string;
}

export interface AuditFilter {
  text: string;
  decision: CallDecision | 'all';
  how: DecidedBy | 'all';
}

export const NO_FILTER: AuditFilter = { text: '', decision: 'all', how: 'all' };

export function indexEntry(entry: AuditEntry): AuditRow {
  const rawArgs = JSON.stringify(entry.arguments) ?? 'null';
  const argsJson = escapeUntrusted(rawArgs);
  const call = callName(entry.server, entry.tool);
  const sent = [`${entry.server}.${entry.tool}`, rawArgs, entry.origin ?? '', entry.execution_id ?? '', entry.reason ?? '', entry.rule ?? '', entry.client?.name ?? ''];
  const shown = sent.map(escapeUntrusted);
  const search = (shown.every((s, i) => s === sent[i]) ? sent : [...sent, ...shown]).join('\n').toLowerCase();
  return {
    entry,
    search,
    argsJson,
    call,
    decision: decisionWords(entry.decision),
    how: howWithRule(entry.decided_by, entry.decision, entry.rule),
    outcome: outcomeWords(entry.outcome),
    duration: entry.outcome ? formatDuration(entry.duration_ms) : '',
  };
}

/** The words of a search: every one must occur (in any field). */
export function searchTerms(text: string): string[] {
  return text.toLowerCase().split(/\s+/).filter(Boolean);
}

export class AuditIndex {
  /** Newest first. */
  readonly rows: readonly AuditRow[];

  /** `entries` oldest first, as the backend returns them. */
  constructor(entries: readonly AuditEntry[]) {
    const rows: AuditRow[] = new Array<AuditRow>(entries.length);
    for (let i = 0; i < entries.length; i++) {
      const e = entries[entries.length - 1 - i];
      if (e) rows[i] = indexEntry(e);
    }
    this.rows = rows;
  }

  get size(): number {
    return this.rows.length;
  }

  /** The rows that match, newest first. */
  filter(f: AuditFilter): AuditRow[] {
    const terms = searchTerms(f.text);
    const out: AuditRow[] = [];
    for (const row of this.rows) {
      if (f.decision !== 'all' && row.entry.decision !== f.decision) continue;
      if (f.how !== 'all' && row.entry.decided_by !== f.how) continue;
      let ok = true;
      for (const t of terms) {
        if (!row.search.includes(t)) {
          ok = false;
          break;
        }
      }
      if (ok) out.push(row);
    }
    return out;
  }
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** Local time "14:03:22"; with the date ("3 May 14:03:22", "3 May 2024 14:03:22") when not today. */
export function formatAuditTime(time: number, now: number = Date.now()): string {
  const d = new Date(time);
  const clock = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  const today = new Date(now);
  if (d.getFullYear() === today.getFullYear() && d.getMonth() === today.getMonth() && d.getDate() === today.getDate()) return clock;
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const date = `${d.getDate()} ${months[d.getMonth()] ?? ''}`;
  return d.getFullYear() === today.getFullYear() ? `${date} ${clock}` : `${date} ${d.getFullYear()} ${clock}`;
}

/** Who made the call: the origin in words, else the run's id, else "unknown"; escaped. */
export function whoWords(entry: Pick<AuditEntry, 'origin' | 'execution_id' | 'client'>): string {
  const client = entry.client;
  if (client && typeof client.name === 'string' && typeof client.session === 'string') return `${clientName(client)} (${sessionWords(client.session)})`;
  const origin = entry.origin?.trim();
  if (origin) return escapeUntrusted(origin);
  if (entry.execution_id) return `run ${escapeUntrusted(entry.execution_id)}`;
  return 'unknown';
}
