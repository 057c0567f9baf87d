// Untrusted text as a person reads it: the rules of src-tauri/src/display.rs, pinned for both
// by tests/fixtures/untrusted-text/cases.json, and the model helpers that show such text.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { AuditEntry, Rule } from '../../src/ipc';
import { callName, describeRule, originWords, outcomeWords, prettyArguments } from '../../src/model/approvals';
import { AuditIndex, indexEntry, NO_FILTER, whoWords } from '../../src/model/audit';
import { callLabel, detailWords, type CellToolCall } from '../../src/model/toolCalls';
import { clipEscaped, escapeUntrusted, escapeUntrustedLines, isHidden } from '../../src/model/untrusted';

interface Case {
  name: string;
  input: string;
  line: string;
  lines: string;
}

const CASES = fileURLToPath(new URL('../../../tests/fixtures/untrusted-text/cases.json', import.meta.url));
const golden = JSON.parse(readFileSync(CASES, 'utf8')) as { about: string; cases: Case[] };

describe('the shared cases (the same file the Rust side reads)', () => {
  it('has its cases', () => {
    expect(golden.cases.length).toBeGreaterThanOrEqual(20);
  });

  for (const c of golden.cases) {
    it(c.name, () => {
      expect(escapeUntrusted(c.input), 'one line').toBe(c.line);
      expect(escapeUntrustedLines(c.input), 'several lines').toBe(c.lines);
    });
  }
});

/** Every code point `hidden` says is hidden, as ranges (mirrors display.rs `hidden`). */
const HIDDEN_RANGES: [number, number][] = [
  [0x00, 0x1f], [0x7f, 0x9f], [0xad, 0xad], [0x34f, 0x34f],
  [0x600, 0x605], [0x6dd, 0x6dd], [0x70f, 0x70f], [0x61c, 0x61c], [0x890, 0x891], [0x8e2, 0x8e2],
  [0x115f, 0x1160], [0x17b4, 0x17b5], [0x180b, 0x180f], [0x3164, 0x3164], [0xffa0, 0xffa0],
  [0x200b, 0x200f], [0x2028, 0x202e], [0x2060, 0x206f],
  [0xe000, 0xf8ff], [0xf0000, 0x10ffff],
  [0xfdd0, 0xfdef], [0xfeff, 0xfeff], [0xfff9, 0xfffb],
  [0x110bd, 0x110bd], [0x110cd, 0x110cd], [0x13430, 0x1343f], [0x1bca0, 0x1bca3], [0x1d173, 0x1d17a],
  [0xe0000, 0xe0fff],
];

describe('escapeUntrusted', () => {
  it('hides exactly the code points display.rs hides (every scalar value checked)', () => {
    const expected = (n: number): boolean => HIDDEN_RANGES.some(([a, b]) => n >= a && n <= b) || (n & 0xfffe) === 0xfffe;
    const wrong: string[] = [];
    for (let n = 0; n <= 0x10ffff; n++) {
      if (n >= 0xd800 && n <= 0xdfff) continue;
      if (isHidden(n) !== expected(n)) wrong.push(n.toString(16));
    }
    expect(wrong).toEqual([]);
  });

  it('writes a lone surrogate (which no Rust string has) as its escape', () => {
    expect(escapeUntrusted('a\ud800b\udc00')).toBe('a\\ud800b\\udc00');
    expect(escapeUntrusted('\ud83d\udc4d')).toBe('\ud83d\udc4d');
  });

  it('returns the same string when nothing is hidden, and is idempotent', () => {
    const s = 'plain / path.txt — “quoted” ✓';
    expect(escapeUntrusted(s)).toBe(s);
    for (const c of golden.cases) {
      expect(escapeUntrusted(escapeUntrusted(c.input))).toBe(c.line);
      expect(escapeUntrustedLines(escapeUntrustedLines(c.input))).toBe(c.lines);
    }
  });

  it('escaped JSON text is JSON of the same value', () => {
    const value = { path: '/home/me/\u202etxt.stroper', sep: 'a\u2028b\u0085c', tag: 'x\u{e0041}', ctl: '\u001b[2J\u009b1A', 'k\u200by': [1, 'z\ufeff'] };
    const shown = escapeUntrustedLines(JSON.stringify(value, null, 2));
    expect([...shown].every((c) => c === '\n' || !isHidden(c.codePointAt(0) ?? 0))).toBe(true);
    expect(JSON.parse(shown)).toEqual(value);
  });
});

describe('clipEscaped', () => {
  it('cuts escaped text without cutting an escape or a surrogate pair in two', () => {
    expect(clipEscaped('abcdef', 10)).toBe('abcdef');
    expect(clipEscaped('abcdef', 4)).toBe('abc…');
    const escaped = escapeUntrusted('ab\u202ecd');
    expect(escaped).toBe('ab\\u202ecd');
    for (let limit = 3; limit <= 8; limit++) expect(clipEscaped(escaped, limit)).toBe('ab…');
    expect(clipEscaped(escaped, 9)).toBe('ab\\u202e…');
    expect(clipEscaped('a\ud83d\udc4db', 3)).toBe('a…');
  });
});

describe('the words the panel shows escape what came from outside', () => {
  it('names, origins and failures', () => {
    expect(callName('srv\u202e', 'to\u001b[8mol')).toBe('srv\\u202e.to\\u001b[8mol');
    expect(originWords('cell 1 of \u202ebynpi.ipynb')).toBe('from cell 1 of \\u202ebynpi.ipynb');
    expect(originWords('from\u2028x')).toBe('from x'.replace(' ', '\\u2028'));
    expect(outcomeWords({ kind: 'failed', message: 'boom\u2028\u2028gone' })).toBe('Failed: boom\\u2028\\u2028gone');
  });

  it('arguments: pretty JSON of the same value, with nothing hidden, shortened or whole', () => {
    const args = { path: '/home/ana/\u202etxt.stroper', note: '\u2028'.repeat(150), 'x\u200b': 1 };
    for (const full of [false, true]) {
      const { text } = prettyArguments(args, full);
      expect(text).toContain('"path": "/home/ana/\\u202etxt.stroper"');
      expect(text).toContain('\\u2028'.repeat(150));
      expect(text.split('\n')).toHaveLength(5);
      expect(JSON.parse(text)).toEqual(args);
    }
  });

  it('rules in words', () => {
    const rule: Rule = { server: 'fs', tool: 'read\u202e', args: { '/a\u2066/b': { equals: 'x\u2028y' }, p: { under: '/h\u202e', glob: '*\u200b' } }, decision: 'reject', reason: 'no\u001b[8m' };
    expect(describeRule(rule)).toBe('Always reject fs.read\\u202e when a\\u2066 › b is “x\\u2028y” and p is under /h\\u202e and matches *\\u200b — no\\u001b[8m');
    const long: Rule = { server: 'fs', tool: 't', args: { p: { equals: '\u202e'.repeat(40) } }, decision: 'allow' };
    const text = describeRule(long);
    expect(text).toMatch(/^Always allow fs\.t when p is “(\\u202e)+…$/);
  });

  it('the tool calls under a cell', () => {
    const call: CellToolCall = { id: 1, server: 'ipybox', tool: 'shell', arguments: { command: 'cat \u202etxt.dwssap' }, status: 'done', decision: 'rejected', decidedBy: 'rule', reason: 'never\u2028ok', outcome: null, durationMs: null };
    expect(callLabel(call)).toBe('ipybox.shell cat \\u202etxt.dwssap');
    expect(detailWords(call)).toBe('never\\u2028ok');
    expect(callLabel({ ...call, server: 'a\u001b', tool: 'b' })).toBe('a\\u001b.b');
  });

  it('the audit log: shown texts escaped, found by what is shown and by what was sent', () => {
    const e: AuditEntry = {
      time: 1_700_000_000_000,
      workspace: '/w',
      execution_id: 'exec-1',
      origin: 'cell 2 of \u202ebynpi.ipynb',
      server: 'fs',
      tool: 'write\u001b[2J',
      arguments: { path: '/home/ana/\u202etxt.stroper' },
      decision: 'approved',
      decided_by: 'person',
      reason: null,
      outcome: { kind: 'failed', message: 'x\u2029y' },
      duration_ms: 5,
    };
    const row = indexEntry(e);
    expect(row.call).toBe('fs.write\\u001b[2J');
    expect(row.argsJson).toBe('{"path":"/home/ana/\\u202etxt.stroper"}');
    expect(row.outcome).toBe('Failed: x\\u2029y');
    expect(whoWords(e)).toBe('cell 2 of \\u202ebynpi.ipynb');
    const index = new AuditIndex([e]);
    expect(index.filter({ ...NO_FILTER, text: '\\u202etxt' })).toHaveLength(1);
    expect(index.filter({ ...NO_FILTER, text: '\u202etxt' })).toHaveLength(1);
  });
});
