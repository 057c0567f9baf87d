import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/ipc';
import { AuditIndex, formatAuditTime, indexEntry, NO_FILTER, searchTerms, whoWords } from '../../src/model/audit';

const entry = (i: number, over: Partial<AuditEntry> = {}): AuditEntry => ({
  time: 1_700_000_000_000 + i * 1000,
  workspace: '/w',
  execution_id: `exec-${i}`,
  origin: `cell ${i} of analysis.ipynb`,
  server: 'github',
  tool: 'get_issue',
  arguments: { n: i },
  decision: 'approved',
  decided_by: 'person',
  reason: null,
  outcome: { kind: 'ok' },
  duration_ms: 50,
  ...over,
});

describe('AuditIndex', () => {
  it('rows are newest first with their words computed once', () => {
    const idx = new AuditIndex([entry(1), entry(2, { decision: 'rejected', outcome: null })]);
    expect(idx.rows.map((r) => r.entry.time)).toEqual([entry(2).time, entry(1).time]);
    const r = idx.rows[0];
    expect(r?.call).toBe('github.get_issue');
    expect(r?.decision).toBe('Rejected');
    expect(r?.how).toBe('by you');
    expect(r?.outcome).toBe('Did not run');
    expect(r?.duration).toBe('');
    expect(idx.rows[1]?.duration).toBe('50 ms');
  });

  it('searches server, tool, server.tool, arguments and origin, case-insensitively, every word', () => {
    const idx = new AuditIndex([
      entry(1, { server: 'filesystem', tool: 'read_text_file', arguments: { path: '/home/Ana/Notes.md' } }),
      entry(2, { origin: 'cell 7 of Report.ipynb' }),
      entry(3, { origin: null, execution_id: 'exec-xyz' }),
    ]);
    const ids = (text: string): number[] => idx.filter({ ...NO_FILTER, text }).map((r) => r.entry.time - 1_700_000_000_000);
    expect(ids('notes.md')).toEqual([1000]);
    expect(ids('FILESYSTEM.read')).toEqual([1000]);
    expect(ids('report')).toEqual([2000]);
    expect(ids('github report')).toEqual([2000]);
    expect(ids('github nothing')).toEqual([]);
    expect(ids('exec-xyz')).toEqual([3000]);
    expect(ids('  ')).toEqual([3000, 2000, 1000]);
  });

  it('filters by decision and by how', () => {
    const idx = new AuditIndex([
      entry(1),
      entry(2, { decision: 'rejected', decided_by: 'rule' }),
      entry(3, { decision: 'timed_out', decided_by: 'timeout' }),
      entry(4, { decided_by: 'batch' }),
    ]);
    expect(idx.filter({ ...NO_FILTER, decision: 'approved' })).toHaveLength(2);
    expect(idx.filter({ ...NO_FILTER, decision: 'timed_out' })[0]?.entry.decided_by).toBe('timeout');
    expect(idx.filter({ ...NO_FILTER, how: 'rule' })[0]?.entry.decision).toBe('rejected');
    expect(idx.filter({ text: 'github', decision: 'approved', how: 'batch' })).toHaveLength(1);
    expect(idx.filter({ ...NO_FILTER, decision: 'rejected', how: 'person' })).toHaveLength(0);
  });

  it('filters 5,000 entries well under 50 ms', () => {
    const entries = Array.from({ length: 5000 }, (_, i) => entry(i, { arguments: { path: `/data/file-${i}.csv`, text: 'lorem ipsum '.repeat(20) } }));
    const idx = new AuditIndex(entries);
    const t0 = performance.now();
    for (const text of ['f', 'fi', 'fil', 'file-4', 'file-49', 'file-499']) idx.filter({ ...NO_FILTER, text });
    const perFilter = (performance.now() - t0) / 6;
    expect(perFilter).toBeLessThan(50);
    expect(idx.filter({ ...NO_FILTER, text: 'file-4999' })).toHaveLength(1);
  });

  it('search text and terms', () => {
    expect(searchTerms('  Foo  bar ')).toEqual(['foo', 'bar']);
    expect(indexEntry(entry(1, { reason: 'Nope' })).search).toContain('nope');
  });
});

describe('audit words', () => {
  it('time: the clock today, with the date on other days', () => {
    const today = new Date(2025, 4, 3, 18, 0, 0).getTime();
    expect(formatAuditTime(new Date(2025, 4, 3, 14, 3, 22).getTime(), today)).toBe('14:03:22');
    expect(formatAuditTime(new Date(2025, 4, 2, 9, 5, 7).getTime(), today)).toBe('2 May 09:05:07');
    expect(formatAuditTime(new Date(2024, 11, 31, 23, 59, 59).getTime(), today)).toBe('31 Dec 2024 23:59:59');
  });

  it('who: the origin, else the run, else unknown', () => {
    expect(whoWords({ origin: 'cell 3 of a.ipynb', execution_id: 'e1' })).toBe('cell 3 of a.ipynb');
    expect(whoWords({ origin: null, execution_id: 'e1' })).toBe('run e1');
    expect(whoWords({ origin: '', execution_id: null })).toBe('unknown');
  });
});

describe('a rule being written names the calls it would have decided', () => {
  it('says when, which call with what, who asked and how it was decided; hostile text is escaped', async () => {
    const { matchedCallWords } = await import('../../src/ui/rulesView');
    const now = entry(1).time;
    expect(matchedCallWords(entry(1), now)).toMatch(/^\d\d:\d\d:\d\d github\.get_issue \{"n":1\} — cell 1 of analysis\.ipynb — approved by you$/);
    const hostile = entry(2, { origin: 'cell 2\u202e of x', arguments: { path: 'a\u2028b'.repeat(40) } });
    const words = matchedCallWords(hostile, now);
    expect(words).not.toMatch(/[\u202e\u2028]/);
    expect(words).toContain('\\u202e');
    expect(words).toMatch(/more characters\)/);
  });
});
