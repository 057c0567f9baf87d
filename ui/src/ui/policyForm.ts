/**
 * The Sandbox tab's form: each list of paths or domains and each switch of a policy, with what
 * differs from the preset it is compared with marked ("added", "changed", what the preset has
 * that this policy dropped) and a reset per list and for the switches. Options srt ignores on
 * this platform (macOS-only ones, on Linux) are folded away unless the file sets them.
 */
import type { JsonObject } from '../util/json';
import { FLAGS, LISTS, type FlagSpec, type ListSpec, type PolicyDraft, getFlag, getList, setFlag, setList } from '../model/policy';
import { type Base, flagChanged, listChange, resetFlags, resetList } from '../model/policyChanges';
import { clipEscaped, escapeUntrusted } from '../model/untrusted';
import { h } from './dom';
import { icon } from './icons';

export interface FormHost {
  /** Change the draft; `rerender`: the form is drawn again (entries added or removed). */
  edit(fn: (d: PolicyDraft) => void, rerender: boolean): void;
  /** A path from the native picker, as the policy would spell it; null: cancelled. */
  pick(directory: boolean): Promise<string | null>;
}

/** Does srt honour macOS-only options here? */
const ON_MAC = typeof navigator !== 'undefined' && /Mac/.test(navigator.platform);

export function domId(listId: string): string {
  return `policy-${listId.replace('.', '-')}`;
}

/** Per list: its entries' rows, the line that says what changed, its reset button. */
interface ListMarks {
  spec: ListSpec;
  rows: { li: HTMLElement; input: HTMLInputElement; tag: HTMLElement }[];
  changes: HTMLElement;
  reset: HTMLButtonElement;
}

export class PolicyForm {
  readonly element = h('div', { class: 'policy-form' });
  /** Per field (`filesystem.allowWrite[1]`, `network.allowAllUnixSockets`): its input and message. */
  fields = new Map<string, { input: HTMLInputElement; message: HTMLElement }>();
  private lists: ListMarks[] = [];
  private flags: { flag: FlagSpec; row: HTMLElement; tag: HTMLElement }[] = [];
  private flagsReset: HTMLButtonElement | null = null;
  private base: Base | null = null;

  constructor(private readonly host: FormHost) {}

  clear(): void {
    this.fields = new Map();
    this.lists = [];
    this.flags = [];
    this.element.replaceChildren();
  }

  render(policy: JsonObject, readOnly: boolean): void {
    this.clear();
    const folded: HTMLElement[] = [];
    // Shown where it belongs when the file sets it (so nothing in force is hidden); else folded.
    const place = (macOnly: boolean | undefined, set: boolean, el: HTMLElement, parts: HTMLElement[]): void => {
      if (macOnly && !ON_MAC && !set) folded.push(el);
      else parts.push(el);
    };
    const groups: [string, ListSpec[]][] = [
      ['Files and folders', LISTS.filter((l) => l.id.startsWith('filesystem.'))],
      ['Network', LISTS.filter((l) => l.id.startsWith('network.'))],
    ];
    const parts: HTMLElement[] = [];
    for (const [title, specs] of groups) {
      parts.push(h('h4', { class: 'policy-subheading', text: title }));
      for (const spec of specs) {
        const values = getList(policy, spec.id);
        place(spec.macOnly, values.length > 0, this.renderList(spec, values, readOnly), parts);
      }
    }
    this.flagsReset = readOnly ? null : h('button', { id: 'policy-flags-reset', class: 'button button-secondary button-small policy-reset', type: 'button', hidden: true, text: 'Reset to preset', 'aria-label': 'Reset the other settings to the preset' });
    this.flagsReset?.addEventListener('click', () => {
      const base = this.base;
      if (base) this.host.edit((d) => d.edit(resetFlags(d.policy, base.policy)), true);
    });
    parts.push(h('div', { class: 'policy-subheading-row' }, h('h4', { class: 'policy-subheading', text: 'Other settings' }), this.flagsReset));
    for (const flag of FLAGS) place(flag.macOnly, getFlag(policy, flag.id), this.renderFlag(flag, getFlag(policy, flag.id), readOnly), parts);
    if (folded.length > 0) {
      parts.push(
        h(
          'details',
          { id: 'policy-mac-only', class: 'policy-folded' },
          h('summary', { class: 'policy-folded-summary', text: `Options only macOS uses (${folded.length}): srt ignores them on this computer` }),
          ...folded,
        ),
      );
    }
    this.element.replaceChildren(...parts);
  }

  /** Mark what differs from `base` (null: nothing to compare with). */
  mark(policy: JsonObject, base: Base | null): void {
    this.base = base;
    for (const m of this.lists) {
      const change = base ? listChange(policy, base.policy, m.spec.id) : { added: [], removed: [] };
      for (const row of m.rows) {
        const added = change.added.includes(row.input.value);
        row.li.classList.toggle('policy-changed', added);
        row.tag.hidden = !added;
        const message = `${row.input.id}-message`;
        row.input.setAttribute('aria-describedby', added ? `${message} ${row.tag.id}` : message);
      }
      m.reset.hidden = change.added.length + change.removed.length === 0;
      m.changes.hidden = change.removed.length === 0;
      m.changes.textContent = base && change.removed.length ? `Not here, but in “${base.label}”: ${clipEscaped(escapeUntrusted(change.removed.join(', ')), 2000)}` : '';
    }
    let flagsChanged = false;
    for (const f of this.flags) {
      const changed = base !== null && flagChanged(policy, base.policy, f.flag.id);
      f.row.classList.toggle('policy-changed', changed);
      f.tag.hidden = !changed;
      flagsChanged ||= changed;
    }
    if (this.flagsReset) this.flagsReset.hidden = !flagsChanged;
  }

  private renderFlag(flag: FlagSpec, on: boolean, readOnly: boolean): HTMLElement {
    const id = `policy-flag-${flag.id.replace('.', '-')}`;
    const input = h('input', { id, type: 'checkbox', 'aria-describedby': `${id}-help ${id}-message` });
    input.checked = on;
    input.disabled = readOnly;
    input.addEventListener('change', () => this.host.edit((d) => d.edit(setFlag(d.policy, flag.id, input.checked)), false));
    const message = h('p', { id: `${id}-message`, class: 'field-error', hidden: true });
    this.fields.set(flag.id, { input, message });
    const tag = h('span', { class: 'policy-tag policy-tag-changed', text: 'changed', hidden: true });
    const row = h(
      'div',
      { class: 'policy-flag' },
      h('label', { class: 'policy-check', for: id }, input, h('span', { text: flag.label }), flag.macOnly ? h('span', { class: 'policy-tag', text: 'macOS only' }) : null, tag),
      h('p', { id: `${id}-help`, class: 'panel-hint', text: flag.warning ? `${flag.help} Weakens the sandbox: ${flag.warning}` : flag.help }),
      message,
    );
    this.flags.push({ flag, row, tag });
    return row;
  }

  private renderList(spec: ListSpec, values: string[], readOnly: boolean): HTMLElement {
    const base = domId(spec.id);
    const rows: ListMarks['rows'] = [];
    const items = values.map((value, i) => {
      const field = `${spec.id}[${i}]`;
      const input = h('input', { id: `${base}-${i}`, class: 'text-input policy-entry', type: 'text', spellcheck: 'false', autocomplete: 'off', 'aria-label': `${spec.label}, entry ${i + 1}`, 'aria-describedby': `${base}-${i}-message` });
      input.value = value;
      input.readOnly = readOnly;
      input.addEventListener('input', () =>
        this.host.edit((d) => {
          const list = getList(d.policy, spec.id);
          list[i] = input.value;
          d.edit(setList(d.policy, spec.id, list));
        }, false),
      );
      const message = h('p', { id: `${base}-${i}-message`, class: 'field-error', hidden: true });
      this.fields.set(field, { input, message });
      const remove = readOnly ? null : h('button', { class: 'tool tool-small policy-remove', type: 'button', 'aria-label': `Remove ${value || 'this empty entry'} from ${spec.label}`, title: 'Remove' }, icon('close'));
      remove?.addEventListener('click', () => {
        this.host.edit((d) => d.edit(setList(d.policy, spec.id, getList(d.policy, spec.id).filter((_, j) => j !== i))), true);
        document.getElementById(`${base}-add`)?.focus();
      });
      const tag = h('span', { id: `${base}-${i}-tag`, class: 'policy-tag policy-tag-changed', text: 'added', title: 'Not in the preset', hidden: true });
      const li = h('li', { class: 'policy-item' }, h('div', { class: 'policy-entry-row' }, input, tag, remove), message);
      rows.push({ li, input, tag });
      return li;
    });
    const list = h('ul', { class: 'policy-items', 'aria-label': spec.label }, ...items);
    const empty = values.length === 0 ? h('p', { class: 'panel-empty', text: 'None.' }) : null;
    const changes = h('p', { id: `${base}-changes`, class: 'panel-hint policy-removed', hidden: true });
    const reset = h('button', { id: `${base}-reset`, class: 'button button-secondary button-small policy-reset', type: 'button', hidden: true, text: 'Reset to preset', 'aria-label': `Reset ${spec.label} to the preset` });
    reset.addEventListener('click', () => {
      const b = this.base;
      if (b) this.host.edit((d) => d.edit(resetList(d.policy, b.policy, spec.id)), true);
    });
    if (readOnly) reset.remove();
    this.lists.push({ spec, rows, changes, reset });
    let addRow: HTMLElement | null = null;
    if (!readOnly) {
      const add = h('input', { id: `${base}-add`, class: 'text-input policy-add', type: 'text', spellcheck: 'false', autocomplete: 'off', placeholder: spec.placeholder, 'aria-label': `Add to ${spec.label}`, 'aria-describedby': `${base}-help` });
      // Named with its list: seven buttons all called "Add" are one name to a screen reader.
      const addButton = h('button', { id: `${base}-add-button`, class: 'button button-secondary', type: 'button', text: 'Add', 'aria-label': `Add to ${spec.label}` });
      const commit = (value: string): void => {
        if (value.trim() === '') return;
        this.host.edit((d) => d.edit(setList(d.policy, spec.id, [...getList(d.policy, spec.id), value])), true);
        document.getElementById(`${base}-add`)?.focus();
      };
      addButton.addEventListener('click', () => commit(add.value));
      add.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') {
          e.preventDefault();
          commit(add.value);
        }
      });
      const pickers: HTMLElement[] = [];
      if (spec.kind === 'path') {
        for (const directory of [true, false]) {
          const b = h('button', { id: `${base}-pick-${directory ? 'folder' : 'file'}`, class: 'button button-secondary', type: 'button', text: directory ? 'Folder…' : 'File…', 'aria-label': `Choose a ${directory ? 'folder' : 'file'} to add to ${spec.label}` });
          b.addEventListener('click', () => void this.host.pick(directory).then((p) => p && commit(p)));
          pickers.push(b);
        }
      }
      addRow = h('div', { class: 'policy-add-row' }, add, addButton, ...pickers);
    }
    return h(
      'fieldset',
      { id: base, class: 'policy-list' },
      h('legend', { class: 'policy-legend' }, h('span', { text: spec.label }), spec.macOnly ? h('span', { class: 'policy-tag', text: 'macOS only' }) : null, readOnly ? null : reset),
      h('p', { id: `${base}-help`, class: 'panel-hint', text: spec.help }),
      list,
      empty,
      changes,
      addRow,
    );
  }
}
