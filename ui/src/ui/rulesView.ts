/**
 * The workspace's approval rules: a list in words (each with Remove), and "Edit as JSON" — the
 * rules file's text in a textarea; what the backend rejects is shown under it and nothing typed
 * is lost.
 */
import * as ipc from '../ipc';
import type { ApprovalRules } from '../ipc';
import { describeRule } from '../model/approvals';
import { escapeUntrusted, escapeUntrustedLines } from '../model/untrusted';
import { isJsonObject, parseJson } from '../util/json';
import { h } from './dom';

export interface RulesBackend {
  approvalRules(): Promise<ApprovalRules>;
  setApprovalRules(rules: ApprovalRules): Promise<void>;
}

const defaultBackend: RulesBackend = {
  approvalRules: () => ipc.approvalRules(),
  setApprovalRules: (rules) => ipc.setApprovalRules(rules),
};

/** The backend's words for `err`, escaped (they may quote a rule's values). */
function errorText(err: unknown): string {
  const e = ipc.toBackendError(err);
  return escapeUntrustedLines(e.message.trim() || ipc.describeError(e));
}

/** A parsed text that has the rules file's outline (the backend checks the rest). */
export function asRules(value: unknown): ApprovalRules | null {
  if (!isJsonObject(value) || !Array.isArray(value.rules)) return null;
  // The backend validates every field and answers InvalidConfig naming the bad rule.
  return value as unknown as ApprovalRules;
}

export class RulesView {
  readonly element: HTMLElement;
  private rules: ApprovalRules | null = null;
  private editing = false;
  private busy = false;
  private readonly list: HTMLOListElement;
  private readonly empty: HTMLElement;
  private readonly loadError: HTMLElement;
  private readonly editButton: HTMLButtonElement;
  private readonly editor: HTMLElement;
  private readonly textarea: HTMLTextAreaElement;
  private readonly saveButton: HTMLButtonElement;
  private readonly editorError: HTMLElement;
  private readonly status: HTMLElement;
  private statusTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly backend: RulesBackend = defaultBackend) {
    this.editButton = h('button', { id: 'edit-rules-json', class: 'link-button', type: 'button', 'aria-pressed': 'false', text: 'Edit as JSON' });
    this.editButton.addEventListener('click', () => this.toggleEditor());
    this.list = h('ol', { id: 'rule-list', class: 'rule-list', 'aria-label': 'Approval rules, in the order they are tried' });
    this.empty = h('p', { class: 'panel-empty', text: 'No rules yet: every tool call waits for your decision.', hidden: true });
    this.loadError = h('p', { class: 'panel-error', role: 'alert', hidden: true });
    this.textarea = h('textarea', { id: 'rules-json', class: 'rules-json', spellcheck: 'false', autocomplete: 'off', rows: 14, 'aria-label': 'Approval rules as JSON', 'aria-describedby': 'rules-json-error' });
    this.saveButton = h('button', { id: 'save-rules-json', class: 'button', type: 'button', text: 'Save rules' });
    this.saveButton.addEventListener('click', () => void this.saveJson());
    const cancel = h('button', { id: 'cancel-rules-json', class: 'button button-secondary', type: 'button', text: 'Cancel' });
    cancel.addEventListener('click', () => this.closeEditor());
    this.editorError = h('div', { id: 'rules-json-error', class: 'panel-error', role: 'alert', hidden: true });
    this.editor = h(
      'div',
      { class: 'rules-editor', hidden: true },
      h('p', { class: 'panel-hint', text: 'The rules file of this workspace. Rules are tried in order; the first that matches a call decides.' }),
      this.textarea,
      this.editorError,
      h('div', { class: 'button-row' }, this.saveButton, cancel),
    );
    this.status = h('div', { class: 'panel-status', role: 'status', 'aria-live': 'polite' });
    this.element = h(
      'section',
      { id: 'approval-rules', class: 'panel-section', 'aria-labelledby': 'rules-heading' },
      h('h3', { id: 'rules-heading', class: 'panel-heading' }, h('span', { class: 'panel-heading-text', text: 'Rules' }), this.editButton),
      h('p', { class: 'panel-hint', text: 'Rules decide matching tool calls without asking you. The first rule that matches decides.' }),
      this.loadError,
      this.list,
      this.empty,
      this.editor,
      this.status,
    );
  }

  /** The rules as last loaded. */
  get current(): ApprovalRules | null {
    return this.rules;
  }

  async refresh(): Promise<void> {
    try {
      this.rules = await this.backend.approvalRules();
      this.loadError.hidden = true;
    } catch (err) {
      this.loadError.textContent = `The rules could not be read: ${errorText(err)}`;
      this.loadError.hidden = false;
    }
    this.render();
  }

  private render(): void {
    const rules = this.rules?.rules ?? [];
    this.list.hidden = this.editing || rules.length === 0;
    this.empty.hidden = this.editing || this.rules === null || rules.length > 0;
    this.list.replaceChildren(
      ...rules.map((rule, i) => {
        const text = describeRule(rule);
        const remove = h('button', { class: 'link-button rule-remove', type: 'button', 'aria-label': `Remove the rule “${text}”`, text: 'Remove', disabled: this.busy });
        remove.addEventListener('click', () => void this.remove(i));
        const li = h(
          'li',
          { class: 'rule', 'data-decision': rule.decision },
          h('div', { class: 'rule-body' }, h('span', { class: 'rule-text', text }), rule.comment ? h('span', { class: 'rule-comment', text: escapeUntrusted(rule.comment) }) : null),
          remove,
        );
        return li;
      }),
    );
  }

  private async remove(index: number): Promise<void> {
    const rules = this.rules;
    if (!rules || this.busy) return;
    const removed = rules.rules[index];
    this.busy = true;
    this.render();
    try {
      await this.backend.setApprovalRules({ ...rules, rules: rules.rules.filter((_, i) => i !== index) });
      this.say(removed ? `Removed: ${describeRule(removed)}.` : 'Removed.');
    } catch (err) {
      this.loadError.textContent = `The rule could not be removed: ${errorText(err)}`;
      this.loadError.hidden = false;
    } finally {
      this.busy = false;
    }
    await this.refresh();
  }

  private toggleEditor(): void {
    if (this.editing) this.closeEditor();
    else this.openEditor();
  }

  private openEditor(): void {
    this.editing = true;
    this.textarea.value = `${JSON.stringify(this.rules ?? { version: 1, rules: [] }, null, 2)}\n`;
    this.editorError.hidden = true;
    this.editor.hidden = false;
    this.editButton.setAttribute('aria-pressed', 'true');
    this.editButton.textContent = 'Show as list';
    this.render();
    this.textarea.focus();
  }

  private closeEditor(): void {
    const hadFocus = this.editor.contains(document.activeElement);
    this.editing = false;
    this.editor.hidden = true;
    this.editButton.setAttribute('aria-pressed', 'false');
    this.editButton.textContent = 'Edit as JSON';
    this.render();
    if (hadFocus) this.editButton.focus();
  }

  private showEditorError(text: string): void {
    this.editorError.textContent = text;
    this.editorError.hidden = false;
  }

  private async saveJson(): Promise<void> {
    let parsed: unknown;
    try {
      parsed = parseJson(this.textarea.value);
    } catch (err) {
      this.showEditorError(`This is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    const rules = asRules(parsed);
    if (!rules) {
      this.showEditorError('The text must be an object with "version": 1 and a "rules" list.');
      return;
    }
    this.saveButton.disabled = true;
    try {
      await this.backend.setApprovalRules(rules);
    } catch (err) {
      this.showEditorError(`The rules were not saved: ${errorText(err)}`);
      return;
    } finally {
      this.saveButton.disabled = false;
    }
    this.closeEditor();
    this.say('Rules saved.');
    await this.refresh();
  }

  private say(text: string): void {
    this.status.textContent = text;
    if (this.statusTimer) clearTimeout(this.statusTimer);
    this.statusTimer = setTimeout(() => {
      this.status.textContent = '';
    }, 6000);
  }
}
