import { describe, expect, it } from 'vitest';
import { completionType, mergeOptions, toCodePoints, toUtf16 } from '../../src/model/completion';

describe('kernel completion', () => {
  it('counts code points as Jupyter does, and back', () => {
    const text = "s = '😀é'; rows_of";
    expect(text.length).toBe(18);
    expect(toCodePoints(text, text.length)).toBe(17);
    expect(toCodePoints(text, 5)).toBe(5);
    expect(toCodePoints(text, 7)).toBe(6);
    expect(toUtf16(text, 17)).toBe(text.length);
    expect(toUtf16(text, 6)).toBe(7);
    for (let i = 0; i <= text.length; i++) {
      if (i === 6) continue; // inside the surrogate pair
      expect(toUtf16(text, toCodePoints(text, i))).toBe(i);
    }
    expect(toUtf16('ab', 10)).toBe(2);
  });

  it('maps Jedi kinds to editor types', () => {
    expect(completionType('module')).toBe('namespace');
    expect(completionType('instance')).toBe('variable');
    expect(completionType('function')).toBe('function');
    expect(completionType('<unknown>')).toBeUndefined();
    expect(completionType(undefined)).toBeUndefined();
  });

  it("puts the kernel's options first and adds the cell's other words", () => {
    const kernel = { from: 3, options: [{ label: 'DataFrame', type: 'class' }, { label: 'Series', type: 'class' }] };
    const local = { from: 3, options: [{ label: 'DataFrame', type: 'variable' }, { label: 'data', type: 'variable' }] };
    expect(mergeOptions(kernel, local)?.options.map((o) => `${o.label}:${o.type}`)).toEqual(['DataFrame:class', 'Series:class', 'data:variable']);
    expect(mergeOptions(null, local)).toBe(local);
    expect(mergeOptions({ from: 3, options: [] }, local)).toBe(local);
    expect(mergeOptions(kernel, { from: 0, options: [{ label: 'pd' }] })).toBe(kernel);
    expect(mergeOptions(null, null)).toBeNull();
  });
});
