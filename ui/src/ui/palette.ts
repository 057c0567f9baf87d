/**
 * The command palette (Ctrl+Shift+C, as in JupyterLab): every command by name with its key,
 * filtered as one types (each word of the filter in the name or the key), Enter or a click
 * runs the chosen one, Escape closes and gives the keyboard back.
 */
import { COMMANDS, commandIds, shortcutFor, type CommandId } from '../keymap';
import { h } from './dom';
import '../styles/navigate.css';

interface Entry {
  id: CommandId;
  label: string;
  keys: string;
}

/** The commands whose name or key holds every word of `filter` (case-insensitive), in list order. */
export function filterCommands(entries: readonly Entry[], filter: string): Entry[] {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  return entries.filter((e) => {
    const hay = `${e.label} ${e.keys}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

export class CommandPalette {
  readonly element: HTMLElement;
  private readonly input: HTMLInputElement;
  private readonly list: HTMLElement;
  private readonly entries: Entry[];
  private shown: Entry[] = [];
  private selected = 0;
  private returnTo: Element | null = null;

  constructor(
    private readonly run: (id: CommandId) => void,
    isMac = false,
  ) {
    this.entries = commandIds()
      .filter((id) => id !== 'command-palette')
      .map((id) => ({ id, label: COMMANDS[id], keys: shortcutFor(id, isMac) ?? '' }));
    this.input = h('input', { id: 'palette-input', class: 'text-input', type: 'text', placeholder: 'Type to find a command', role: 'combobox', 'aria-expanded': 'true', 'aria-controls': 'palette-list', 'aria-label': 'Command', autocomplete: 'off', spellcheck: 'false' });
    this.list = h('ul', { id: 'palette-list', class: 'palette-list', role: 'listbox', 'aria-label': 'Commands' });
    this.element = h('div', { id: 'palette', class: 'palette', role: 'dialog', 'aria-label': 'Commands', hidden: true }, this.input, this.list);
    this.input.addEventListener('input', () => {
      this.selected = 0;
      this.render();
    });
    this.input.addEventListener('keydown', (e) => this.onKey(e));
    this.input.addEventListener('blur', () => {
      // A click on an item lands before the blur; anything else closes it.
      setTimeout(() => {
        if (this.isOpen && !this.element.contains(document.activeElement)) this.close(false);
      }, 0);
    });
    this.list.addEventListener('mousedown', (e) => e.preventDefault());
  }

  get isOpen(): boolean {
    return !this.element.hidden;
  }

  open(): void {
    if (!this.isOpen) {
      const active = document.activeElement;
      this.returnTo = active && active !== document.body ? active : null;
      this.element.hidden = false;
    }
    this.input.value = '';
    this.selected = 0;
    this.render();
    this.input.focus();
  }

  close(refocus = true): void {
    if (!this.isOpen) return;
    this.element.hidden = true;
    const back = this.returnTo;
    this.returnTo = null;
    if (refocus && back instanceof HTMLElement && back.isConnected) back.focus({ preventScroll: true });
  }

  private render(): void {
    this.shown = filterCommands(this.entries, this.input.value);
    this.selected = Math.max(0, Math.min(this.selected, this.shown.length - 1));
    if (this.shown.length === 0) {
      this.list.replaceChildren(h('li', { class: 'palette-empty', text: 'No command matches.' }));
      this.input.removeAttribute('aria-activedescendant');
      return;
    }
    this.list.replaceChildren(
      ...this.shown.map((e, i) => {
        const li = h('li', { id: `palette-${e.id}`, class: 'palette-item', role: 'option', 'aria-selected': String(i === this.selected) }, h('span', { class: 'palette-label', text: e.label }), h('span', { class: 'palette-key', text: e.keys }));
        li.addEventListener('click', () => this.choose(i));
        return li;
      }),
    );
    const sel = this.shown[this.selected];
    if (sel) this.input.setAttribute('aria-activedescendant', `palette-${sel.id}`);
    this.list.children[this.selected]?.scrollIntoView({ block: 'nearest' });
  }

  private onKey(e: KeyboardEvent): void {
    if (e.isComposing) return;
    const n = this.shown.length;
    switch (e.key) {
      case 'ArrowDown':
        this.selected = n ? (this.selected + 1) % n : 0;
        break;
      case 'ArrowUp':
        this.selected = n ? (this.selected - 1 + n) % n : 0;
        break;
      case 'Enter':
        this.choose(this.selected);
        break;
      case 'Escape':
        this.close();
        break;
      default:
        return;
    }
    e.preventDefault();
    e.stopPropagation();
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') this.render();
  }

  /** Close first (the focus back where it was), then run: commands act on the notebook as if typed there. */
  private choose(i: number): void {
    const entry = this.shown[i];
    if (!entry) return;
    this.close();
    this.run(entry.id);
  }
}
