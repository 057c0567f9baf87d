import { describe, expect, it } from 'vitest';
import { describeSignIn, signInView } from '../../src/model/signIn';
import { ServerStatuses } from '../../src/model/serverForm';

describe('a server’s sign-in on its card', () => {
  const now = new Date(2026, 10, 27, 9, 0).getTime();
  const kept = { signedIn: true, user: 'ada@example.org', expiresAt: now + 3600_000, refreshable: true };

  it('what the person does now wins over a refused call, which wins over what is kept', () => {
    expect(signInView(kept, { again: true }, true)).toEqual({ kind: 'waiting' });
    expect(signInView(kept, { again: true }, false)).toEqual({ kind: 'needed', again: true });
    expect(signInView(kept, undefined, false).kind).toBe('signed_in');
    expect(signInView({ signedIn: false, refreshable: false }, undefined, false)).toEqual({ kind: 'none' });
    expect(signInView(undefined, undefined, false)).toEqual({ kind: 'none' });
  });

  it('says who and until when, and whether the token renews by itself', () => {
    expect(describeSignIn(signInView(kept, undefined, false), now)).toMatch(/^Signed in as ada@example\.org \(expires .*10.*00.*, renewed by itself\)$/);
    expect(describeSignIn({ kind: 'signed_in', user: null, expiresAt: now - 1, refreshable: false }, now)).toBe('Signed in (expired)');
    expect(describeSignIn({ kind: 'signed_in', user: null, expiresAt: null, refreshable: false }, now)).toBe('Signed in');
    expect(describeSignIn({ kind: 'signed_in', user: 'eve\u202e\nroot', expiresAt: null, refreshable: false }, now)).toBe('Signed in as eve\\u202e\\u000aroot');
  });

  it('a refused call marks the server until the person signs in', () => {
    const statuses = new ServerStatuses();
    statuses.apply({ type: 'mcp_sign_in_needed', server: 'docs', again: true });
    expect(statuses.get('docs').signIn).toEqual({ again: true });
    statuses.signedIn('docs');
    expect(statuses.get('docs').signIn).toBeUndefined();
  });
});
