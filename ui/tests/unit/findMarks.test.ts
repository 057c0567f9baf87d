// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { findAll, compileQuery } from '../../src/model/find';
import { renderStaticCode } from '../../src/ui/editor';
import { outputPieces, rangesFor, staticPieces } from '../../src/ui/findMarks';

const re = (text: string) => {
  const q = compileQuery(text, { regex: false, caseSensitive: true });
  if (q.kind !== 'ok') throw new Error('no query');
  return q.re;
};

describe('find marks over drawn text', () => {
  it("maps the source's offsets onto a cell's static text, across lines and special characters", () => {
    const source = 'a = "x\u202ey"\nprint(a)  # a';
    const parent = document.createElement('div');
    renderStaticCode(parent, source, 'code');
    const root = parent.querySelector('.cell-static');
    if (!root) throw new Error('no static text');
    const ranges = rangesFor(staticPieces(root), findAll(source, re('a')));
    expect(ranges.map((r) => r.toString())).toEqual(['a', 'a', 'a']);
    // After the special character (one source character drawn as six): still the right text.
    const after = rangesFor(staticPieces(root), findAll(source, re('y"')));
    expect(after.map((r) => r.toString())).toEqual(['y"']);
    const across = rangesFor(staticPieces(root), findAll(source, re('"\nprint')));
    expect(across.map((r) => r.toString())).toEqual(['"print']);
  });

  it("reads an output's text without its prompt", () => {
    const out = document.createElement('div');
    out.innerHTML = '<div class="output-prompt">Out[1]:</div><div class="output-body"><pre>tot<b>al</b> 1</pre></div>';
    const { text, pieces } = outputPieces(out);
    expect(text).toBe('total 1');
    expect(rangesFor(pieces, findAll(text, re('total'))).map((r) => r.toString())).toEqual(['total']);
    expect(findAll(text, re('Out'))).toEqual([]);
  });
});
