import { describe, expect, it } from 'vitest';
import { COMMANDS, commandIds, globalCommand, KEYMAP, KeySequenceResolver, lookup, normalizeKey, shortcutFor, type KeyLike } from '../../src/keymap';

const key = (k: string, mods: Partial<KeyLike> = {}): KeyLike => ({ key: k, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, ...mods });

describe('normalizeKey', () => {
  it('names keys with modifiers in a fixed order', () => {
    expect(normalizeKey(key('Enter', { shiftKey: true }))).toBe('Shift+Enter');
    expect(normalizeKey(key('Enter', { ctrlKey: true }))).toBe('Mod+Enter');
    expect(normalizeKey(key('Enter', { metaKey: true }), true)).toBe('Mod+Enter');
    expect(normalizeKey(key('S', { ctrlKey: true, shiftKey: false }))).toBe('Mod+s');
    expect(normalizeKey(key('A', { shiftKey: true }))).toBe('Shift+a');
    expect(normalizeKey(key('_', { ctrlKey: true, shiftKey: true, code: 'Minus' }))).toBe('Mod+Shift+-');
    expect(normalizeKey(key('Control', { ctrlKey: true }))).toBeNull();
    expect(normalizeKey(key('Esc'))).toBe('Escape');
  });
});

describe('keymap', () => {
  const cases: [string, 'command' | 'edit', string[], string][] = [
    ['Shift+Enter runs and advances', 'command', ['Shift+Enter'], 'run-and-advance'],
    ['Shift+Enter in edit mode too', 'edit', ['Shift+Enter'], 'run-and-advance'],
    ['Ctrl+Enter runs in place', 'edit', ['Mod+Enter'], 'run-in-place'],
    ['Alt+Enter runs and inserts', 'edit', ['Alt+Enter'], 'run-and-insert'],
    ['Esc → command mode', 'edit', ['Escape'], 'enter-command'],
    ['Enter → edit mode', 'command', ['Enter'], 'enter-edit'],
    ['A inserts above', 'command', ['a'], 'insert-above'],
    ['B inserts below', 'command', ['b'], 'insert-below'],
    ['D D deletes', 'command', ['d', 'd'], 'delete-cells'],
    ['Z undoes a delete', 'command', ['z'], 'undo-delete'],
    ['M → markdown', 'command', ['m'], 'to-markdown'],
    ['Y → code', 'command', ['y'], 'to-code'],
    ['R → raw', 'command', ['r'], 'to-raw'],
    ['I I interrupts', 'command', ['i', 'i'], 'interrupt'],
    ['0 0 restarts', 'command', ['0', '0'], 'restart'],
    ['K / Up select the previous cell', 'command', ['k'], 'select-prev'],
    ['J / Down select the next cell', 'command', ['ArrowDown'], 'select-next'],
    ['Shift+Up extends', 'command', ['Shift+ArrowUp'], 'extend-prev'],
    ['Shift+J extends', 'command', ['Shift+j'], 'extend-next'],
    ['Ctrl+S saves in command mode', 'command', ['Mod+s'], 'save'],
    ['Ctrl+S saves in edit mode', 'edit', ['Mod+s'], 'save'],
    ['Ctrl+Shift+- splits', 'edit', ['Mod+Shift+-'], 'split'],
  ];
  for (const [name, mode, seq, command] of cases) {
    it(name, () => {
      expect(lookup(KEYMAP, mode, seq)).toEqual({ kind: 'command', command });
    });
  }

  it('letters do nothing in edit mode (they are typed)', () => {
    for (const k of ['a', 'b', 'm', 'y', 'z', 'Enter', 'k']) expect(lookup(KEYMAP, 'edit', [k]).kind).toBe('none');
  });

  it('a first chord key is pending', () => {
    expect(lookup(KEYMAP, 'command', ['d']).kind).toBe('pending');
    expect(lookup(KEYMAP, 'command', ['i']).kind).toBe('pending');
  });

  it('every binding is unique per mode', () => {
    const seen = new Set<string>();
    for (const b of KEYMAP) {
      const modes = b.mode === 'any' ? ['command', 'edit'] : [b.mode];
      for (const m of modes) {
        const k = `${m}:${b.keys}`;
        expect(seen.has(k), k).toBe(false);
        seen.add(k);
      }
    }
  });

  it('shows shortcuts for tooltips', () => {
    expect(shortcutFor('save')).toBe('Ctrl+S');
    expect(shortcutFor('delete-cells')).toBe('D, D');
    expect(shortcutFor('save', true)).toBe('⌘+S');
  });
});

describe('KeySequenceResolver', () => {
  it('resolves chords within the timeout', () => {
    const r = new KeySequenceResolver();
    expect(r.feed('command', 'd', 0)).toEqual({ kind: 'pending' });
    expect(r.feed('command', 'd', 300)).toEqual({ kind: 'command', command: 'delete-cells' });
  });

  it('a late second key starts over', () => {
    const r = new KeySequenceResolver();
    r.feed('command', 'd', 0);
    expect(r.feed('command', 'd', 5000)).toEqual({ kind: 'pending' });
  });

  it('a broken chord runs the new key on its own', () => {
    const r = new KeySequenceResolver();
    r.feed('command', 'd', 0);
    expect(r.feed('command', 'a', 10)).toEqual({ kind: 'command', command: 'insert-above' });
    r.feed('command', 'i', 20);
    expect(r.feed('command', 'd', 30)).toEqual({ kind: 'pending' });
  });
});

describe('the command list', () => {
  it('names every command, and the keys that work anywhere are find, replace and the palette', () => {
    const ids = commandIds();
    for (const b of KEYMAP) expect(ids).toContain(b.command);
    for (const id of ids) expect(COMMANDS[id].length).toBeGreaterThan(0);
    expect(globalCommand('Mod+f')).toBe('find');
    expect(globalCommand('Mod+h')).toBe('find-replace');
    expect(globalCommand('Mod+Shift+c')).toBe('command-palette');
    expect(globalCommand('a')).toBeNull();
    expect(shortcutFor('command-palette')).toBe('Ctrl+Shift+C');
  });
});
