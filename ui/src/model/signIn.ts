/**
 * A server's OAuth sign-in as its card shows it: what the backend keeps (`signIns` of the
 * server list), what the session reported (a call refused for a sign-in), and what the
 * person is doing now (waiting for the browser). Never a token: the backend sends none.
 */
import type { SignInState } from '../ipc';
import { escapeUntrusted } from './untrusted';

/** What a card shows about signing in. */
export type SignInView =
  /** Nothing: the server does not sign in (or has not asked yet). */
  | { kind: 'none' }
  /** It asks for a sign-in; `again`: one was kept and expired or was revoked. */
  | { kind: 'needed'; again: boolean }
  /** The browser is open on the authorization server's page. */
  | { kind: 'waiting' }
  | { kind: 'signed_in'; user: string | null; expiresAt: number | null; refreshable: boolean };

/** What the card knows, newest first: the person's sign-in under way, the session's word that
 *  the server asks for one (`needed`), else what the backend keeps. */
export function signInView(kept: SignInState | undefined, needed: { again: boolean } | undefined, waiting: boolean): SignInView {
  if (waiting) return { kind: 'waiting' };
  if (needed) return { kind: 'needed', again: needed.again };
  if (kept?.signedIn) return { kind: 'signed_in', user: kept.user ?? null, expiresAt: kept.expiresAt ?? null, refreshable: kept.refreshable };
  return { kind: 'none' };
}

/** "14:05", or "28 Nov, 14:05" when it is not today (the person's locale and time zone). */
export function describeExpiry(at: number, now: number = Date.now()): string {
  const when = new Date(at);
  const time = when.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (when.toDateString() === new Date(now).toDateString()) return time;
  return `${when.toLocaleDateString(undefined, { day: 'numeric', month: 'short' })}, ${time}`;
}

/** The card's line, in words; server-provided text (who signed in) escaped. */
export function describeSignIn(view: SignInView, now: number = Date.now()): string {
  switch (view.kind) {
    case 'none':
      return '';
    case 'needed':
      return view.again ? 'The sign-in has expired or was revoked: sign in again to use its tools.' : 'This server asks you to sign in before its tools can be used.';
    case 'waiting':
      return 'Waiting for the browser… Finish signing in there.';
    case 'signed_in': {
      const who = view.user ? ` as ${escapeUntrusted(view.user)}` : '';
      if (view.expiresAt === null) return `Signed in${who}`;
      const expires = view.expiresAt <= now && !view.refreshable ? 'expired' : `expires ${describeExpiry(view.expiresAt, now)}`;
      return `Signed in${who} (${expires}${view.refreshable ? ', renewed by itself' : ''})`;
    }
  }
}
