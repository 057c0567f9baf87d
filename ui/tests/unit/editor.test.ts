// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { renderStaticCode } from '../../src/ui/editor';

describe('a cell as it opens (before its editor)', () => {
  it('shows invisible and reordering characters as their codes: what a person reads is what runs', () => {
    const parent = document.createElement('div');
    renderStaticCode(parent, 'open("/tmp/\u202etxt.stroper\u2028x\u200b", "w")', 'code');
    expect(parent.textContent).toBe('open("/tmp/\\u202etxt.stroper\\u2028x\\u200b", "w")');
    const marks = [...parent.querySelectorAll('.cell-special-char')].map((e) => e.getAttribute('title'));
    expect(marks).toEqual(['U+202E', 'U+2028', 'U+200B']);
  });

  it('leaves ordinary text, tabs and non-Latin letters alone', () => {
    const parent = document.createElement('div');
    renderStaticCode(parent, 'x = "日本語 café"\n\ty = 1', 'code');
    expect(parent.textContent).toBe('x = "日本語 café"\ty = 1');
    expect(parent.querySelectorAll('.cell-special-char').length).toBe(0);
  });
});
