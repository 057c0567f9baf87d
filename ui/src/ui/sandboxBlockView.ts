/**
 * Under a cell's error: what the sandbox blocked, in one line ("The sandbox blocked writing
 * `/tmp/report.csv`", "The sandbox blocked connecting to `pypi.org`"), with "Allow writing"
 * for the narrowest folder that covers it, or "Allow pypi.org" for the exact host (the field
 * can be edited). Choosing it asks in a native dialog, which shows the policy change;
 * the backend then saves the policy and restarts the kernel, and the line offers to run the
 * cell again. A path is the cell's own word, and is said to be; a place no grant may open
 * (where code would run outside the sandbox later, a secret) is shown with why nothing is
 * offered. Paths are untrusted text: shown escaped, as text.
 */
import * as ipc from '../ipc';
import type { Cell } from '../model/cell';
import { blockWords } from '../model/sandboxBlock';
import { clipEscaped, escapeUntrusted } from '../model/untrusted';
import { h } from './dom';

/** Under an offer of a path: whose word the path is. */
const UNVERIFIED = "The path comes from the cell's own error message; ipybox checked that the sandbox blocks it, not that the cell really tried.";

/** The fields' ids (a cell's own id comes from the notebook file). */
let entrySeq = 0;

export class SandboxBlockView {
  readonly element: HTMLElement;

  constructor(
    private readonly cell: Cell,
    private readonly runAgain: () => void,
  ) {
    this.element = h('div', { class: 'sandbox-block', role: 'status', hidden: true });
  }

  /** The cell's block changed: show it (or nothing). */
  changed(): void {
    const block = this.cell.sandboxBlock;
    this.element.replaceChildren();
    this.element.hidden = block === null;
    if (block === null) return;
    const words = blockWords(block.access);
    const line = h('div', { class: 'sandbox-block-line' }, `The sandbox blocked ${words.verb} `, h('code', {}, clipEscaped(escapeUntrusted(block.path), 300)));
    this.element.append(line);
    if (block.suggestion === null) {
      // A place no grant may open (the kernel chose the path): why nothing is offered.
      if (block.refusal !== null) this.element.append(h('div', { class: 'sandbox-block-refusal' }, clipEscaped(escapeUntrusted(block.refusal), 600)));
      const rule = block.rule === null ? block.reason : `${block.rule}: ${block.reason}`;
      this.element.append(h('div', { class: 'sandbox-block-rule' }, `Change the policy in the Sandbox tab (${clipEscaped(escapeUntrusted(rule), 300)}).`));
      return;
    }
    const fieldId = `sandbox-block-entry-${++entrySeq}`;
    const field = h('input', { id: fieldId, class: 'sandbox-block-entry text-input', type: 'text', spellcheck: 'false', autocomplete: 'off' });
    const label = h('label', { class: 'sandbox-block-label', for: fieldId }, words.label);
    field.value = block.suggestion;
    const allow = h('button', { class: 'sandbox-block-allow button', type: 'button' }, words.allow);
    // A domain is named on its button ("Allow pypi.org"), as the field says now. The field's
    // text is the person's own (or ipybox's exact-host suggestion), shown escaped.
    const name = (): void => {
      if (block.access === 'connect') allow.textContent = `Allow ${clipEscaped(escapeUntrusted(field.value.trim()), 80)}`;
    };
    name();
    field.addEventListener('input', name);
    const status = h('span', { class: 'sandbox-block-status' });
    allow.addEventListener('click', () => {
      allow.disabled = true;
      status.textContent = 'Asking…';
      ipc.allowBlocked(block.access, field.value, block.path).then(
        () => {
          status.textContent = 'Allowed; the kernel restarted. ';
          const again = h('button', { class: 'sandbox-block-run button button-secondary', type: 'button' }, 'Run the cell again');
          again.addEventListener('click', () => this.runAgain());
          status.append(again);
        },
        (e: unknown) => {
          allow.disabled = false;
          status.textContent = ipc.describeError(ipc.toBackendError(e));
        },
      );
    });
    this.element.append(h('div', { class: 'sandbox-block-offer' }, label, field, allow, status));
    // A file's path is the kernel's own word (srt records a refused domain itself).
    if (block.access !== 'connect') this.element.append(h('div', { class: 'sandbox-block-source' }, UNVERIFIED));
  }
}
