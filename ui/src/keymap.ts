/**
 * The keyboard map: a pure table from (mode, key sequence) to a command, as in JupyterLab.
 * `normalizeKey` turns a KeyboardEvent-like object into a key string; `KeySequenceResolver`
 * handles two-key chords (D D, I I, 0 0).
 */
import type { Mode } from './model/commands';

export type CommandId =
  | 'enter-edit'
  | 'enter-command'
  | 'run-and-advance'
  | 'run-in-place'
  | 'run-and-insert'
  | 'insert-above'
  | 'insert-below'
  | 'delete-cells'
  | 'undo-delete'
  | 'to-code'
  | 'to-markdown'
  | 'to-raw'
  | 'select-prev'
  | 'select-next'
  | 'extend-prev'
  | 'extend-next'
  | 'select-all'
  | 'move-up'
  | 'move-down'
  | 'copy'
  | 'cut'
  | 'paste-below'
  | 'paste-above'
  | 'merge'
  | 'split'
  | 'interrupt'
  | 'restart'
  | 'save'
  | 'toggle-output'
  | 'toggle-output-scroll'
  | 'run-all'
  | 'clear-outputs'
  | 'run-above'
  | 'run-below'
  | 'restart-run-all'
  | 'clear-selected-outputs'
  | 'save-cell-as-tool'
  | 'find'
  | 'find-replace'
  | 'command-palette'
  | 'show-outline'
  | 'new-notebook'
  | 'rename-notebook'
  | 'save-as'
  | 'duplicate-notebook'
  | 'trash-notebook'
  | 'export-html'
  | 'export-pdf'
  | 'export-py';

/**
 * Every command by what a person calls it: the command palette lists these (with their keys
 * from KEYMAP), and the menus and toolbar take their labels from here.
 */
export const COMMANDS: Readonly<Record<CommandId, string>> = {
  'enter-edit': 'Edit the selected cell',
  'enter-command': 'Leave the editor (command mode)',
  'run-and-advance': 'Run selected cells and advance',
  'run-in-place': 'Run selected cells',
  'run-and-insert': 'Run selected cells and insert a cell below',
  'insert-above': 'Insert a cell above',
  'insert-below': 'Insert a cell below',
  'delete-cells': 'Delete selected cells',
  'undo-delete': 'Undo cell deletion',
  'to-code': 'Change cell to code',
  'to-markdown': 'Change cell to Markdown',
  'to-raw': 'Change cell to raw',
  'select-prev': 'Select the cell above',
  'select-next': 'Select the cell below',
  'extend-prev': 'Extend the selection above',
  'extend-next': 'Extend the selection below',
  'select-all': 'Select all cells',
  'move-up': 'Move selected cells up',
  'move-down': 'Move selected cells down',
  copy: 'Copy cells',
  cut: 'Cut cells',
  'paste-below': 'Paste cells below',
  'paste-above': 'Paste cells above',
  merge: 'Merge selected cells (or with the cell below)',
  split: 'Split the cell at the cursor',
  interrupt: 'Interrupt the kernel',
  restart: 'Restart the kernel',
  save: 'Save the notebook',
  'toggle-output': 'Collapse or expand the output',
  'toggle-output-scroll': 'Limit or expand the output’s height',
  'run-all': 'Run all cells',
  'clear-outputs': 'Clear all outputs',
  'run-above': 'Run all cells above the selected cell',
  'run-below': 'Run the selected cell and all below',
  'restart-run-all': 'Restart the kernel and run all cells',
  'clear-selected-outputs': 'Clear outputs of selected cells',
  'save-cell-as-tool': 'Save the selected cell as a tool…',
  find: 'Find in the notebook',
  'find-replace': 'Find and replace in the notebook',
  'command-palette': 'Show all commands',
  'show-outline': 'Show the outline of headings',
  'new-notebook': 'New notebook',
  'rename-notebook': 'Rename the notebook…',
  'save-as': 'Save the notebook as…',
  'duplicate-notebook': 'Duplicate the notebook',
  'trash-notebook': 'Move the notebook to the trash…',
  'export-html': 'Export as HTML…',
  'export-pdf': 'Export as PDF…',
  'export-py': 'Export as Python script…',
};

function isCommandId(key: string): key is CommandId {
  return Object.hasOwn(COMMANDS, key);
}

/** Every command, in the order of `COMMANDS`. */
export function commandIds(): CommandId[] {
  return Object.keys(COMMANDS).filter(isCommandId);
}

export interface KeyBinding {
  mode: Mode | 'any';
  /** Works wherever the focus is (a side panel, the toolbar), not only in the notebook. */
  global?: true;
  /** One key, or two keys separated by a space for a chord ("d d"). */
  keys: string;
  command: CommandId;
}

/** Key names: modifiers in the order Mod+Alt+Shift, then the key; "Mod" is Ctrl (Cmd on macOS). */
export const KEYMAP: readonly KeyBinding[] = [
  { mode: 'any', keys: 'Shift+Enter', command: 'run-and-advance' },
  { mode: 'any', keys: 'Mod+Enter', command: 'run-in-place' },
  { mode: 'any', keys: 'Alt+Enter', command: 'run-and-insert' },
  { mode: 'any', keys: 'Mod+s', command: 'save' },
  { mode: 'any', keys: 'Mod+f', command: 'find', global: true },
  { mode: 'any', keys: 'Mod+h', command: 'find-replace', global: true },
  { mode: 'any', keys: 'Mod+Shift+c', command: 'command-palette', global: true },
  { mode: 'edit', keys: 'Escape', command: 'enter-command' },
  { mode: 'edit', keys: 'Mod+Shift+-', command: 'split' },
  { mode: 'command', keys: 'Enter', command: 'enter-edit' },
  { mode: 'command', keys: 'a', command: 'insert-above' },
  { mode: 'command', keys: 'b', command: 'insert-below' },
  { mode: 'command', keys: 'd d', command: 'delete-cells' },
  { mode: 'command', keys: 'Delete', command: 'delete-cells' },
  { mode: 'command', keys: 'z', command: 'undo-delete' },
  { mode: 'command', keys: 'y', command: 'to-code' },
  { mode: 'command', keys: 'm', command: 'to-markdown' },
  { mode: 'command', keys: 'r', command: 'to-raw' },
  { mode: 'command', keys: 'ArrowUp', command: 'select-prev' },
  { mode: 'command', keys: 'k', command: 'select-prev' },
  { mode: 'command', keys: 'ArrowDown', command: 'select-next' },
  { mode: 'command', keys: 'j', command: 'select-next' },
  { mode: 'command', keys: 'Shift+ArrowUp', command: 'extend-prev' },
  { mode: 'command', keys: 'Shift+k', command: 'extend-prev' },
  { mode: 'command', keys: 'Shift+ArrowDown', command: 'extend-next' },
  { mode: 'command', keys: 'Shift+j', command: 'extend-next' },
  { mode: 'command', keys: 'Mod+a', command: 'select-all' },
  { mode: 'command', keys: 'Mod+Shift+ArrowUp', command: 'move-up' },
  { mode: 'command', keys: 'Mod+Shift+ArrowDown', command: 'move-down' },
  { mode: 'command', keys: 'c', command: 'copy' },
  { mode: 'command', keys: 'x', command: 'cut' },
  { mode: 'command', keys: 'v', command: 'paste-below' },
  { mode: 'command', keys: 'Shift+v', command: 'paste-above' },
  { mode: 'command', keys: 'Shift+m', command: 'merge' },
  { mode: 'command', keys: 'Mod+Shift+-', command: 'split' },
  { mode: 'command', keys: 'i i', command: 'interrupt' },
  { mode: 'command', keys: '0 0', command: 'restart' },
  { mode: 'command', keys: 'o', command: 'toggle-output' },
  { mode: 'command', keys: 'Shift+o', command: 'toggle-output-scroll' },
];

export interface KeyLike {
  key: string;
  code?: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
}

/** A key string for the map, or null for a lone modifier. */
export function normalizeKey(ev: KeyLike, isMac = false): string | null {
  let key = ev.key;
  if (key === 'Control' || key === 'Meta' || key === 'Alt' || key === 'Shift' || key === 'AltGraph') return null;
  // Shift+- types "_" on most layouts; the binding names the physical key.
  if (ev.code === 'Minus') key = '-';
  else if (ev.code && /^Digit[0-9]$/.test(ev.code) && !ev.shiftKey) key = ev.code.slice(5);
  else if (key === 'Esc') key = 'Escape';
  else if (key === 'Up' || key === 'Down') key = `Arrow${key}`;
  if (key.length === 1) key = key.toLowerCase();
  const mod = isMac ? ev.metaKey : ev.ctrlKey;
  const parts: string[] = [];
  if (mod) parts.push('Mod');
  if (isMac && ev.ctrlKey) parts.push('Ctrl');
  if (!isMac && ev.metaKey) parts.push('Meta');
  if (ev.altKey) parts.push('Alt');
  if (ev.shiftKey) parts.push('Shift');
  parts.push(key);
  return parts.join('+');
}

export type Resolution = { kind: 'command'; command: CommandId } | { kind: 'pending' } | { kind: 'none' };

/** Look a key sequence up in a keymap (pure). */
export function lookup(keymap: readonly KeyBinding[], mode: Mode, sequence: readonly string[]): Resolution {
  const typed = sequence.join(' ');
  let pending = false;
  for (const b of keymap) {
    if (b.mode !== 'any' && b.mode !== mode) continue;
    if (b.keys === typed) return { kind: 'command', command: b.command };
    if (b.keys.startsWith(typed + ' ')) pending = true;
  }
  return pending ? { kind: 'pending' } : { kind: 'none' };
}

/** Feeds keys one at a time and resolves chords; a chord's second key must follow within `timeoutMs`. */
export class KeySequenceResolver {
  private pending: string[] = [];
  private pendingSince = 0;

  constructor(
    private readonly keymap: readonly KeyBinding[] = KEYMAP,
    private readonly timeoutMs = 1000,
  ) {}

  feed(mode: Mode, key: string, now: number): Resolution {
    if (this.pending.length > 0 && now - this.pendingSince > this.timeoutMs) this.pending = [];
    const seq = [...this.pending, key];
    const r = lookup(this.keymap, mode, seq);
    if (r.kind === 'pending') {
      this.pending = seq;
      this.pendingSince = now;
      return r;
    }
    this.pending = [];
    if (r.kind === 'none' && seq.length > 1) {
      // The chord broke: try the new key on its own.
      return this.feed(mode, key, now);
    }
    return r;
  }

  reset(): void {
    this.pending = [];
  }

  get isPending(): boolean {
    return this.pending.length > 0;
  }
}

/** Display form of a key string for tooltips ("Ctrl+Enter", "D, D"). */
export function displayKeys(keys: string, isMac = false): string {
  return keys
    .split(' ')
    .map((k) =>
      k
        .split('+')
        .map((p) => (p === 'Mod' ? (isMac ? '⌘' : 'Ctrl') : p.length === 1 ? p.toUpperCase() : p.replace('Arrow', '')))
        .join('+'),
    )
    .join(', ');
}

/** The command a key runs wherever the focus is (Ctrl+F, Ctrl+Shift+C), if any. */
export function globalCommand(key: string): CommandId | null {
  return KEYMAP.find((b) => b.global && b.keys === key)?.command ?? null;
}

/** The first binding of a command, for tooltips. */
export function shortcutFor(command: CommandId, isMac = false): string | null {
  const b = KEYMAP.find((k) => k.command === command);
  return b ? displayKeys(b.keys, isMac) : null;
}
