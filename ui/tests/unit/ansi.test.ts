import { describe, expect, it } from 'vitest';
import { initialAnsiState, parseAnsi, stripAnsi } from '../../src/render/ansi';

describe('ANSI SGR parsing', () => {
  it('plain text is one unstyled segment', () => {
    expect(parseAnsi('hello')).toEqual([{ text: 'hello', classes: [], style: {} }]);
  });

  it('16 colours and bold become classes; reset ends them', () => {
    const segs = parseAnsi('\x1b[0;31mKeyError\x1b[0m: \x1b[1;32mok\x1b[39m!\x1b[0m');
    expect(segs).toEqual([
      { text: 'KeyError', classes: ['ansi-fg-1'], style: {} },
      { text: ': ', classes: [], style: {} },
      { text: 'ok', classes: ['ansi-fg-2', 'ansi-bold'], style: {} },
      { text: '!', classes: ['ansi-bold'], style: {} },
    ]);
  });

  it('bright colours and backgrounds', () => {
    expect(parseAnsi('\x1b[91;44mx')[0]?.classes).toEqual(['ansi-fg-9', 'ansi-bg-4']);
    expect(parseAnsi('\x1b[38;5;3mx')[0]?.classes).toEqual(['ansi-fg-3']);
  });

  it('256-colour and 24-bit colours become inline colours', () => {
    expect(parseAnsi('\x1b[38;5;124;43mx')[0]).toEqual({ text: 'x', classes: ['ansi-bg-3'], style: { color: 'rgb(175, 0, 0)' } });
    expect(parseAnsi('\x1b[38;2;1;2;3mx')[0]?.style).toEqual({ color: 'rgb(1, 2, 3)' });
  });

  it('state carries across chunks', () => {
    const state = initialAnsiState();
    parseAnsi('\x1b[33mstart', state);
    expect(parseAnsi('more', state)[0]?.classes).toEqual(['ansi-fg-3']);
  });

  it('drops other escape sequences (cursor moves, OSC titles)', () => {
    expect(stripAnsi('a\x1b[2Kb\x1b]0;title\x07c\x1b[1Ad')).toBe('abcd');
    expect(parseAnsi('a\x1b[2Kb').map((s) => s.text).join('')).toBe('ab');
  });
});
