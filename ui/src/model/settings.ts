/**
 * The app's settings without DOM: what the settings dialog accepts for the approval timeout,
 * and how it says it in words.
 */
import type { AppSettings } from '../ipc';

/** As in the Python ipybox. */
export const DEFAULT_APPROVAL_TIMEOUT_SECS = 60;
/** A day; the backend refuses more. */
export const MAX_APPROVAL_TIMEOUT_SECS = 86_400;

export type TimeoutInput = { ok: true; secs: number } | { ok: false; message: string };

const UNITS: Record<string, number> = {
  '': 1,
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hour: 3600,
  hours: 3600,
};

const RANGE = `from 1 second to ${MAX_APPROVAL_TIMEOUT_SECS.toLocaleString('en-US')} seconds (a day)`;

/**
 * What was typed in the timeout field: "90", "90 s", "2 min", "1.5 h". A whole number of seconds
 * from 1 to a day. There is no "never": ipybox always rejects a call nobody decides in the end.
 */
export function parseTimeoutInput(text: string): TimeoutInput {
  const t = text.trim().toLowerCase();
  if (!t) return { ok: false, message: `Give the timeout in seconds, ${RANGE}.` };
  if (/^(never|none|off|no|infinite|unlimited|∞)$/.test(t) || /^0+(\.0*)?\s*[a-z]*$/.test(t)) {
    return { ok: false, message: 'A call nobody decides is always rejected in the end; the longest wait is a day (86,400 seconds).' };
  }
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/.exec(t);
  const factor = m ? UNITS[m[2] ?? ''] : undefined;
  if (!m || factor === undefined) return { ok: false, message: `“${text.trim()}” is not a duration. Give a number of seconds, e.g. 60 or 2 min.` };
  const secs = Number(m[1]) * factor;
  if (!Number.isFinite(secs) || Math.abs(secs - Math.round(secs)) > 1e-9) return { ok: false, message: 'Give a whole number of seconds.' };
  const whole = Math.round(secs);
  if (whole < 1 || whole > MAX_APPROVAL_TIMEOUT_SECS) return { ok: false, message: `The timeout must be ${RANGE}.` };
  return { ok: true, secs: whole };
}

/** "45 s", "90 s", "2 min", "2 min 30 s", "1 h", "1 h 30 min", "24 h". */
export function describeTimeout(secs: number): string {
  if (secs < 120) return `${secs} s`;
  const h = Math.floor(secs / 3600);
  const m = Math.floor((secs % 3600) / 60);
  const s = secs % 60;
  const parts: string[] = [];
  if (h) parts.push(`${h} h`);
  if (m) parts.push(`${m} min`);
  if (s) parts.push(`${s} s`);
  return parts.join(' ');
}

/** What the dialog says of the timeout in force: `saved` when the person just saved it. */
export function timeoutStatus(settings: AppSettings, saved: boolean): string {
  const t = describeTimeout(settings.approvalTimeoutSecs);
  return saved
    ? `Saved: ${t}, in force now. The next tool call waits up to ${t}; calls already waiting keep their time.`
    : `In force: the next tool call waits up to ${t}.`;
}

/** The backend's answer, checked (a malformed one is null). */
export function asAppSettings(value: unknown): AppSettings | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  const whole = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x > 0;
  if (!whole(v.approvalTimeoutSecs)) return null;
  return { approvalTimeoutSecs: v.approvalTimeoutSecs };
}
