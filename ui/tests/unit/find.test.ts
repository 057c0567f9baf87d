import { describe, expect, it } from 'vitest';
import { Cell } from '../../src/model/cell';
import { compileQuery, expandTemplate, findAll, replacementFor } from '../../src/model/find';
import { headingsOf, outline, sectionOf } from '../../src/model/outline';

const ok = (text: string, regex = false, caseSensitive = false) => {
  const q = compileQuery(text, { regex, caseSensitive });
  if (q.kind !== 'ok') throw new Error(`not a query: ${text}`);
  return q;
};

describe('find', () => {
  it('plain text is literal and, by default, ignores case', () => {
    expect(findAll('a.b A.B axb', ok('a.b').re)).toEqual([{ from: 0, to: 3 }, { from: 4, to: 7 }]);
    expect(findAll('a.b A.B', ok('a.b', false, true).re)).toEqual([{ from: 0, to: 3 }]);
  });

  it('a regular expression is multi-line; empty matches are skipped', () => {
    expect(findAll('ab\nab', ok('^a', true).re)).toEqual([{ from: 0, to: 1 }, { from: 3, to: 4 }]);
    expect(findAll('xax', ok('a*', true).re)).toEqual([{ from: 1, to: 2 }]);
  });

  it('an invalid regular expression is a message in plain words', () => {
    const q = compileQuery('(a', { regex: true, caseSensitive: false });
    expect(q.kind).toBe('invalid');
    expect(q.kind === 'invalid' && q.message).toMatch(/^Not a valid regular expression: .*\.$/);
    expect(q.kind === 'invalid' && q.message).not.toContain('/(a/');
    expect(compileQuery('', { regex: true, caseSensitive: false }).kind).toBe('empty');
  });

  it('a replacement expands groups in regex mode only, and is refused when the text moved', () => {
    const q = ok('(\\w+)@(?<host>\\w+)', true);
    expect(replacementFor('me@home', { from: 0, to: 7 }, q, '$<host>/$1 $& $$ $9')).toBe('home/me me@home $ $9');
    expect(replacementFor('me@home', { from: 0, to: 5 }, q, 'x')).toBeNull();
    expect(replacementFor('me@hx', { from: 0, to: 7 }, q, 'x')).toBeNull();
    expect(replacementFor('a$1', { from: 0, to: 3 }, ok('a$1'), '$1')).toBe('$1');
    const m = /(a)/.exec('a');
    if (!m) throw new Error('no match');
    expect(expandTemplate('$12', m)).toBe('a2');
  });
});

describe('outline', () => {
  it('reads ATX and setext headings, not code fences, with inline marks as text', () => {
    expect(headingsOf('# One\ntext\n## **Two** `x` ##\n```\n# not\n```\nThree\n---\nFour\n===\n- item\n---')).toEqual([
      { level: 1, text: 'One' },
      { level: 2, text: 'Two x' },
      { level: 2, text: 'Three' },
      { level: 1, text: 'Four' },
    ]);
    expect(headingsOf('#nospace\n#')).toEqual([]);
  });

  it('escapes heading text and finds the section of a cell', () => {
    const cells = [new Cell({ type: 'markdown', source: '# <img src=x onerror=alert(1)>A\u202eB' }), new Cell({ source: 'x' }), new Cell({ type: 'markdown', source: '## Next' })];
    const o = outline(cells);
    expect(o.map((h) => [h.index, h.level, h.text])).toEqual([
      [0, 1, 'A\\u202eB'],
      [2, 2, 'Next'],
    ]);
    expect([0, 1, 2].map((i) => sectionOf(o, i))).toEqual([0, 0, 1]);
  });
});
