/**
 * The sign-in line of an MCP server that signs in with OAuth — on its card, and in the
 * add-server form when the server asked for one: "Sign in" (or "Sign in again"), then
 * "Waiting for the browser…" with Cancel, then "Signed in as … (expires …)" with Sign out.
 * The browser step happens in the system browser; nothing here waits on it but the backend.
 */
import * as ipc from '../ipc';
import type { Registration, SignInState } from '../ipc';
import type { ServerParamsJson, ServerStatuses } from '../model/serverForm';
import { type SignInView, describeSignIn, signInView } from '../model/signIn';
import { escapeUntrusted, escapeUntrustedLines } from '../model/untrusted';
import { h } from './dom';

export interface SignInActions {
  signIn(): void;
  cancel(): void;
  signOut(): void;
}

/** Fill `row` (a `.server-sign-in` element) for `view` of server `name`; `problem`: why the
 *  last sign-in did not complete, in the backend's words (escaped here). */
export function renderSignIn(row: HTMLElement, name: string, view: SignInView, actions: SignInActions, problem: string | null = null): void {
  const who = escapeUntrusted(name);
  row.dataset.signIn = view.kind;
  row.hidden = view.kind === 'none' && problem === null;
  const line = h('span', { class: 'server-sign-in-text', text: describeSignIn(view) });
  const children: HTMLElement[] = [line];
  switch (view.kind) {
    case 'none':
    case 'needed': {
      const again = view.kind === 'needed' && view.again;
      const button = h('button', { class: 'button server-sign-in-button', type: 'button', text: again ? 'Sign in again' : 'Sign in', 'aria-label': `${again ? 'Sign in again to' : 'Sign in to'} ${who} in your browser` });
      button.addEventListener('click', () => actions.signIn());
      children.push(button);
      break;
    }
    case 'waiting': {
      const cancel = h('button', { class: 'button button-secondary server-sign-in-cancel', type: 'button', text: 'Cancel', 'aria-label': `Cancel signing in to ${who}` });
      cancel.addEventListener('click', () => actions.cancel());
      children.push(cancel);
      break;
    }
    case 'signed_in': {
      const out = h('button', { class: 'link-button server-sign-out', type: 'button', text: 'Sign out', 'aria-label': `Sign out of ${who}` });
      out.addEventListener('click', () => actions.signOut());
      children.push(out);
      break;
    }
  }
  if (problem !== null) children.push(h('p', { class: 'field-error server-sign-in-error', role: 'alert', text: problem }));
  row.replaceChildren(...children);
}

/** What signing in needs of the backend. */
export interface SignInBackend {
  signInMcpServer(name: string, params: ServerParamsJson | null): Promise<Registration>;
  cancelMcpSignIn(name: string): Promise<boolean>;
  signOutMcpServer(name: string): Promise<boolean>;
}

/** The sign-ins of the servers tab: which wait for the browser, what the last one said, and
 *  the card's line for each server. */
export class SignInFlow {
  private readonly waiting = new Set<string>();
  private readonly problems = new Map<string, string>();
  /** Signed out here: the card offers the sign-in again. */
  private readonly signedOut = new Set<string>();

  constructor(
    private readonly backend: SignInBackend,
    private readonly statuses: ServerStatuses,
    /** Draw the cards again (after a change here). */
    private readonly redraw: () => void,
    /** Read the server list again (a sign-in registered the server anew). */
    private readonly reload: () => Promise<void>,
    /** Say something in the tab's status line. */
    private readonly say: (text: string) => void,
  ) {}

  /** Fill a card's `.server-sign-in` row. */
  render(row: HTMLElement, name: string, kept: SignInState | undefined): void {
    const needed = this.signedOut.has(name) ? { again: false } : this.statuses.get(name).signIn;
    const view = signInView(kept, needed, this.waiting.has(name));
    renderSignIn(row, name, view, { signIn: () => void this.signIn(name, null), cancel: () => void this.cancel(name), signOut: () => void this.signOut(name) }, this.problems.get(name) ?? null);
  }

  /** Offer the sign-in in the add-server form, in `row`, for the server the form describes;
   *  `registered` finishes as a save does. */
  offer(row: HTMLElement, name: string, params: ServerParamsJson, registered: (r: Registration) => Promise<void>): void {
    const draw = (view: SignInView, problem: string | null = null) => {
      renderSignIn(row, name, view, { signIn: () => void go(), cancel: () => void this.backend.cancelMcpSignIn(name), signOut: () => {} }, problem);
      const text = row.querySelector('.server-sign-in-text');
      if (text && view.kind === 'needed') text.textContent = `${escapeUntrusted(name)} asks you to sign in. ipybox opens your browser; once you have signed in there, the server is added.`;
    };
    const go = async (): Promise<void> => {
      draw({ kind: 'waiting' });
      row.querySelector<HTMLElement>('.server-sign-in-cancel')?.focus();
      try {
        const r = await this.backend.signInMcpServer(name, params);
        this.statuses.signedIn(name);
        await registered(r);
      } catch (err) {
        draw({ kind: 'needed', again: false }, problemText(err));
        row.querySelector<HTMLElement>('.server-sign-in-button')?.focus();
      }
    };
    draw({ kind: 'needed', again: false });
    row.querySelector<HTMLElement>('.server-sign-in-button')?.focus();
  }

  private async signIn(name: string, params: ServerParamsJson | null): Promise<void> {
    this.waiting.add(name);
    this.problems.delete(name);
    this.redraw();
    this.focus(name, '.server-sign-in-cancel');
    this.say(`Signing in to ${escapeUntrusted(name)} in your browser…`);
    try {
      await this.backend.signInMcpServer(name, params);
      this.signedOut.delete(name);
      this.statuses.signedIn(name);
      this.say(`Signed in to ${escapeUntrusted(name)}; its tools were listed again.`);
    } catch (err) {
      this.problems.set(name, problemText(err));
      this.say('');
    }
    this.waiting.delete(name);
    await this.reload();
    this.focus(name, this.problems.has(name) ? '.server-sign-in-button' : '.server-sign-out');
  }

  private async cancel(name: string): Promise<void> {
    await this.backend.cancelMcpSignIn(name).catch(() => false);
  }

  private async signOut(name: string): Promise<void> {
    try {
      const revoked = await this.backend.signOutMcpServer(name);
      this.signedOut.add(name);
      this.problems.delete(name);
      this.say(`Signed out of ${escapeUntrusted(name)}${revoked ? '; the server revoked the sign-in' : ''}.`);
    } catch (err) {
      this.problems.set(name, `Not signed out: ${problemText(err)}`);
    }
    await this.reload();
    this.focus(name, '.server-sign-in-button');
  }

  private focus(name: string, selector: string): void {
    document.querySelector<HTMLElement>(`.server-card[data-server="${CSS.escape(name)}"] ${selector}`)?.focus();
  }
}

/** Why a sign-in did not complete, in the backend's words (escaped). */
function problemText(err: unknown): string {
  const e = ipc.toBackendError(err);
  if (e.code === 'Cancelled') return 'Sign-in cancelled.';
  return escapeUntrustedLines(e.message.trim() || ipc.describeError(e));
}
