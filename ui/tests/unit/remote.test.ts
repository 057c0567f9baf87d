import { describe, expect, it } from 'vitest';
import { checkServerUrl, keptSecret, parseHeaderLines, serverLabel, whereItRuns } from '../../src/model/remote';

describe('the server URL', () => {
  it('takes http(s) and ws(s) URLs with a base path, without the trailing slash', () => {
    expect(checkServerUrl(' https://jupyter.example.org/user/ana/ ')).toEqual({ ok: true, value: 'https://jupyter.example.org/user/ana' });
    expect(checkServerUrl('http://10.0.0.5:8888')).toEqual({ ok: true, value: 'http://10.0.0.5:8888' });
    expect(checkServerUrl('wss://eg.cluster:8443')).toEqual({ ok: true, value: 'wss://eg.cluster:8443' });
  });
  it('refuses, in words, what cannot be a server', () => {
    const message = (t: string) => {
      const r = checkServerUrl(t);
      return r.ok ? '' : r.message;
    };
    expect(message('')).toMatch(/Enter the server’s URL/);
    expect(message('jupyter.example.org')).toMatch(/is not a URL/);
    expect(message('ftp://x')).toMatch(/not ftp:\/\//);
    expect(message('http://h:8888/?token=abc')).toMatch(/Token field/);
    expect(message('https://ana:pw@h')).toMatch(/Leave names and passwords out/);
  });
});

describe('headers', () => {
  it('are Name: value lines, blank lines skipped, spaces trimmed', () => {
    expect(parseHeaderLines('X-Auth:  abc \n\n  CF-Access-Client-Id: id')).toEqual({ ok: true, value: ['X-Auth: abc', 'CF-Access-Client-Id: id'] });
    expect(parseHeaderLines('')).toEqual({ ok: true, value: [] });
  });
  it('say which line is wrong', () => {
    expect(parseHeaderLines('X-A: 1\nnonsense')).toEqual({ ok: false, message: 'Line 2 is not of the form “Name: value”.' });
    expect(parseHeaderLines('Bad Name: 1')).toEqual({ ok: false, message: 'The header: “Bad Name” cannot be a header name (letters, digits and - only).' });
    expect(parseHeaderLines('X-A:')).toEqual({ ok: false, message: 'The header: X-A has no value.' });
  });
});

describe('where it runs, in words', () => {
  const base = { choice: null, running: null, commandLine: null };
  it('this computer, or the server', () => {
    expect(whereItRuns(base)).toBe('The kernel runs on this computer.');
    expect(whereItRuns({ ...base, running: 'https://eg.example.org/' })).toBe('The kernel runs on the server eg.example.org.');
    expect(serverLabel('http://10.0.0.5:8888/base/')).toBe('10.0.0.5:8888/base');
  });
  it('what is kept, never the values', () => {
    const choice = { url: 'https://h', hasToken: true, headerNames: ['X-Auth'], secret: 'keyring' as const };
    expect(keptSecret({ ...base, choice })).toBe('Kept in your keyring: a token and headers (X-Auth). Leave the fields empty to keep them.');
    expect(keptSecret({ ...base, choice: { ...choice, headerNames: [], secret: 'file' } })).toBe(
      'Kept in a file only you can read (no keyring answered): a token. Leave the fields empty to keep them.',
    );
    expect(keptSecret({ ...base, choice: { ...choice, hasToken: false, headerNames: [], secret: 'none' } })).toBe('No token is kept for this server.');
  });
});
