/**
 * The workspace's approval rules: a list in words (each with Remove), and "Edit as JSON" — the
 * rules file's text in a textarea; what the backend rejects is shown under it and nothing typed
 * is lost.
 */
import * as ipc from '../ipc';
import type { ApprovalRules, AuditEntry, Rule } from '../ipc';
import { describeRule, shortenText } from '../model/approvals';
import { formatAuditTime, indexEntry, whoWords } from '../model/audit';
import { escapeUntrusted, escapeUntrustedLines } from '../model/untrusted';
import { isJsonObject, parseJson } from '../util/json';
import { h } from './dom';

export interface RulesBackend {
  approvalRules(): Promise<ApprovalRules>;
  /** `false`: the person cancelled the native confirmation of rules that allow more. */
  setApprovalRules(rules: ApprovalRules): Promise<boolean>;
  /** The last audited calls a rule would have matched, oldest first; rejects on a backend that cannot say. */
  ruleWouldMatch?(rule: Rule): Promise<AuditEntry[]>;
}

const defaultBackend: RulesBackend = {
  approvalRules: () => ipc.approvalRules(),
  setApprovalRules: (rules) => ipc.setApprovalRules(rules),
  ruleWouldMatch: (rule) => ipc.ruleWouldMatch(rule),
};

/** Rules of the text being written that are checked against the audit log (the rest are not). */
const MATCHED_RULES = 20;
/** Calls of the audit log a rule being written is checked against (the backend's window). */
export const MATCH_WINDOW = 100;

/** Matched calls listed under a rule being written (the most recent ones); the rest are counted. */
export const LISTED_MATCHES = 5;

/** One audited call a rule would have matched, in a line: "14:03:22 fx.echo {"text":"hi"} — cell 3 of a.ipynb — approved by you"; escaped. */
export function matchedCallWords(entry: AuditEntry, now: number = Date.now()): string {
  const row = indexEntry(entry);
  return `${formatAuditTime(entry.time, now)} ${row.call} ${shortenText(row.argsJson, 80)} — ${whoWords(entry)} — ${row.decision.toLowerCase()} ${row.how}`;
}

/** "would have decided 12 of the last 100 calls", "would have decided none of the last 100 calls". */
export function matchWords(count: number): string {
  if (count === 0) return `would have decided none of the last ${MATCH_WINDOW} calls`;
  return `would have decided ${count.toLocaleString('en-US')} of the last ${MATCH_WINDOW} calls`;
}

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

/** A rule of a text being written in words, or "this rule" while it is not one yet. */
function safeDescription(rule: unknown): string {
  if (!isJsonObject(rule) || typeof rule.server !== 'string' || typeof rule.tool !== 'string') return 'this rule';
  try {
    return describeRule(rule as unknown as Rule);
  } catch {
    return 'this rule';
  }
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
  /** What each rule being written would have decided in the audit log; hidden when the backend cannot say. */
  private readonly matches: HTMLElement;
  private matchesAvailable = true;
  private matchTimer: ReturnType<typeof setTimeout> | null = null;
  private matchToken = 0;

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
    this.matches = h('div', { id: 'rules-json-matches', class: 'rules-matches', 'aria-live': 'polite', hidden: true });
    this.textarea.addEventListener('input', () => this.scheduleMatches());
    this.editor = h(
      'div',
      { class: 'rules-editor', hidden: true },
      h('p', { class: 'panel-hint', text: 'The rules file of this workspace. Rules are tried in order; the first that matches a call decides.' }),
      this.textarea,
      this.editorError,
      this.matches,
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
      const saved = await this.backend.setApprovalRules({ ...rules, rules: rules.rules.filter((_, i) => i !== index) });
      if (!saved) this.say('Nothing was removed: the confirmation was cancelled.');
      else this.say(removed ? `Removed: ${describeRule(removed)}.` : 'Removed.');
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
    this.scheduleMatches(0);
  }

  /** After a pause in typing: which audited calls each rule of the text would have decided. */
  private scheduleMatches(delay = 400): void {
    if (!this.matchesAvailable || !this.backend.ruleWouldMatch) return;
    if (this.matchTimer) clearTimeout(this.matchTimer);
    this.matchTimer = setTimeout(() => void this.showMatches(), delay);
  }

  private async showMatches(): Promise<void> {
    const ask = this.backend.ruleWouldMatch;
    if (!ask) return;
    const token = ++this.matchToken;
    let rules: Rule[];
    try {
      rules = asRules(parseJson(this.textarea.value))?.rules ?? [];
    } catch {
      // Half-typed JSON: the last answer stays until the text parses again.
      return;
    }
    const lines: HTMLElement[] = [];
    for (const [i, rule] of rules.slice(0, MATCHED_RULES).entries()) {
      let words: string;
      let calls: AuditEntry[] = [];
      try {
        const matched = await ask(rule);
        if (token !== this.matchToken) return;
        calls = Array.isArray(matched) ? matched : [];
        words = matchWords(calls.length);
      } catch (err) {
        if (ipc.toBackendError(err).code !== 'InvalidConfig') {
          // A backend without the command: the preview is not shown at all.
          this.matchesAvailable = false;
          this.matches.hidden = true;
          return;
        }
        words = 'is not a valid rule yet';
      }
      const shown = calls.slice(-LISTED_MATCHES).reverse();
      const listed = shown.map((e) => h('li', { class: 'rules-match-call mono', text: matchedCallWords(e) }));
      if (calls.length > shown.length) listed.push(h('li', { class: 'rules-match-more', text: `and ${calls.length - shown.length} earlier` }));
      lines.push(
        h(
          'li',
          { class: 'rules-match', 'data-rule': i },
          h('span', { class: 'rules-match-rule', text: `Rule ${i + 1}, ${safeDescription(rule)}: ` }),
          h('span', { class: 'rules-match-count', text: words }),
          ...(listed.length ? [h('ul', { class: 'rules-match-calls', 'aria-label': `Calls rule ${i + 1} would have decided, latest first` }, ...listed)] : []),
        ),
      );
    }
    if (token !== this.matchToken) return;
    this.matches.replaceChildren(h('p', { class: 'panel-hint', text: 'Checked against the audit log, as if each rule had been there:' }), h('ul', { class: 'rules-match-list' }, ...lines));
    this.matches.hidden = lines.length === 0;
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
      if (!(await this.backend.setApprovalRules(rules))) {
        this.showEditorError('The rules were not saved: you cancelled the confirmation. Your text is kept.');
        return;
      }
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
