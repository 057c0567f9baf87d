/**
 * "Save cell as tool": the person names the tool, says what it does, ticks the cell's variables
 * that become parameters (their value in the cell becomes the default) and picks the value it
 * returns; the generated interface (api.py) shows as they go; Save writes
 * `gentools/<category>/<name>/` and imports it in the kernel. Other cells (and agents) then
 * call it as `from gentools.<category>.<name>.api import run`; the MCP tools it calls still ask.
 */
import * as ipc from '../ipc';
import type { SavedTool } from '../ipc';
import { analyzeCell, buildCodeAction, checkChoices, LAST_EXPRESSION, type CellAnalysis, type CodeActionDraft, type SaveChoices } from '../model/codeAction';
import { escapeUntrusted, escapeUntrustedLines } from '../model/untrusted';
import { h } from './dom';
import { copyText } from './endpointDialog';

export interface SaveToolBackend {
  preview(action: CodeActionDraft): Promise<string>;
  save(action: CodeActionDraft): Promise<SavedTool>;
}

const defaultBackend: SaveToolBackend = {
  preview: (a) => ipc.previewCodeAction(a),
  save: (a) => ipc.saveCodeAction(a),
};

export class SaveToolDialog {
  readonly element: HTMLDialogElement;
  private readonly name: HTMLInputElement;
  private readonly category: HTMLInputElement;
  private readonly description: HTMLTextAreaElement;
  private readonly params: HTMLElement;
  private readonly result: HTMLSelectElement;
  private readonly preview: HTMLElement;
  private readonly problems: HTMLElement;
  private readonly status: HTMLElement;
  private readonly saveButton: HTMLButtonElement;
  private readonly usage: HTMLElement;
  private source = '';
  private analysis: CellAnalysis = { candidates: [], assigned: [], lastExpression: null };
  private previewTimer: ReturnType<typeof setTimeout> | null = null;
  private previewSeq = 0;

  constructor(
    private readonly onSaved: (tool: SavedTool) => void = () => {},
    private readonly backend: SaveToolBackend = defaultBackend,
  ) {
    const field = (id: string, label: string, input: HTMLElement, help?: string) =>
      h('div', { class: 'settings-field' }, h('label', { for: id, class: 'field-label', text: label }), input, help ? h('p', { class: 'field-help', text: help }) : null);
    this.name = h('input', { id: 'tool-name', class: 'text-input mono', type: 'text', autocomplete: 'off', spellcheck: 'false' });
    this.category = h('input', { id: 'tool-category', class: 'text-input mono', type: 'text', autocomplete: 'off', spellcheck: 'false', value: 'notebook' });
    this.description = h('textarea', { id: 'tool-description', class: 'text-input', rows: 2, placeholder: 'What the tool does, in a sentence' });
    this.params = h('div', { id: 'tool-params', class: 'tool-params', role: 'group', 'aria-labelledby': 'tool-params-label' });
    this.result = h('select', { id: 'tool-result', class: 'cell-type-select', 'aria-label': 'The value the tool returns' });
    this.preview = h('pre', { id: 'tool-preview', class: 'endpoint-config tool-preview', tabindex: 0, 'aria-label': 'The generated interface, api.py' });
    this.problems = h('ul', { id: 'tool-problems', class: 'field-error tool-problems', role: 'alert', hidden: true });
    this.status = h('p', { id: 'tool-status', class: 'field-status', role: 'status', 'aria-live': 'polite' });
    this.usage = h('div', { id: 'tool-usage', class: 'endpoint-row', hidden: true });
    this.saveButton = h('button', { id: 'save-tool', class: 'button', type: 'submit', text: 'Save tool' });
    const close = h('button', { id: 'close-save-tool', class: 'button button-secondary', type: 'button', text: 'Close' });
    close.addEventListener('click', () => this.close());
    const form = h(
      'form',
      { class: 'settings-form save-tool-form', novalidate: true },
      h('h2', { id: 'save-tool-title', class: 'settings-title', text: 'Save cell as a tool' }),
      h('div', { class: 'save-tool-grid' },
        h('div', { class: 'save-tool-fields' },
          h('div', { class: 'endpoint-row' }, field('tool-category', 'Category', this.category), field('tool-name', 'Name', this.name)),
          field('tool-description', 'What it does', this.description, 'Becomes the tool’s documentation; the first line is its summary.'),
          h('div', { class: 'settings-field' },
            h('span', { id: 'tool-params-label', class: 'field-label', text: 'Parameters' }),
            h('p', { class: 'field-help', text: 'Tick the variables the tool takes as parameters; their value in this cell becomes the default.' }),
            this.params),
          field('tool-result', 'Returns', this.result),
        ),
        h('div', { class: 'save-tool-preview' }, h('span', { class: 'field-label', text: 'Interface (api.py)' }), this.preview),
      ),
      this.problems,
      this.status,
      this.usage,
      h('div', { class: 'button-row settings-actions' }, this.saveButton, close),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.submit();
    });
    form.addEventListener('input', () => this.changed());
    form.addEventListener('change', () => this.changed());
    this.element = h('dialog', { id: 'save-tool-dialog', class: 'settings-dialog save-tool-dialog', 'aria-labelledby': 'save-tool-title' }, form);
  }

  get isOpen(): boolean {
    return this.element.open;
  }

  /** Open on a cell's code. */
  open(source: string): void {
    this.source = source;
    this.analysis = analyzeCell(source);
    this.status.textContent = '';
    this.usage.hidden = true;
    this.params.replaceChildren();
    if (this.analysis.candidates.length === 0) {
      this.params.append(h('p', { class: 'field-help', text: 'This cell assigns no variable on a line of its own: the tool takes no parameters.' }));
    }
    for (const c of this.analysis.candidates) {
      const id = `tool-param-${c.name}`;
      const box = h('input', { id, type: 'checkbox', value: c.name, class: 'tool-param-check' });
      // Names and values come from the cell (a notebook's text): shown escaped.
      const name = escapeUntrusted(c.name);
      const type = h('input', { class: 'text-input mono tool-param-type', type: 'text', value: c.type, 'aria-label': `Type of ${name}`, 'data-param': c.name, spellcheck: 'false' });
      const shown = c.value !== undefined ? ` = ${escapeUntrusted(JSON.stringify(c.value) ?? '')}` : ' (no default: the value in the cell is not a plain literal)';
      this.params.append(h('div', { class: 'tool-param' }, box, h('label', { for: id, class: 'mono', text: name }), type, h('span', { class: 'field-help', text: shown })));
    }
    this.result.replaceChildren();
    if (this.analysis.lastExpression) this.result.append(h('option', { value: LAST_EXPRESSION, text: `the last line’s value: ${escapeUntrusted(this.analysis.lastExpression)}` }));
    for (const name of [...this.analysis.assigned].reverse()) this.result.append(h('option', { value: name, text: escapeUntrusted(name) }));
    if (this.result.options.length === 0) this.result.append(h('option', { value: '', text: 'nothing (the cell assigns no variable and ends in no expression)' }));
    if (!this.name.value) this.name.value = '';
    if (!this.element.open) this.element.showModal();
    this.name.focus();
    this.changed();
  }

  close(): void {
    if (this.element.open) this.element.close();
  }

  private choices(): SaveChoices {
    const params = [...this.params.querySelectorAll<HTMLInputElement>('.tool-param-check')].filter((b) => b.checked).map((b) => b.value);
    const types: Record<string, string> = {};
    for (const t of this.params.querySelectorAll<HTMLInputElement>('.tool-param-type')) if (t.dataset.param) types[t.dataset.param] = t.value;
    return {
      name: this.name.value.trim(),
      category: this.category.value.trim(),
      description: this.description.value,
      parameters: params,
      types,
      result: this.result.value === '' ? null : this.result.value,
    };
  }

  private changed(): void {
    const choices = this.choices();
    const problems = checkChoices(this.analysis, choices);
    this.problems.replaceChildren(...problems.map((p) => h('li', { text: escapeUntrusted(p) })));
    this.problems.hidden = problems.length === 0;
    this.saveButton.disabled = problems.length > 0;
    if (this.previewTimer) clearTimeout(this.previewTimer);
    if (problems.length > 0) {
      this.preview.textContent = 'The interface shows here once the name, the description and the result are set.';
      return;
    }
    const action = buildCodeAction(this.source, this.analysis, choices);
    this.previewTimer = setTimeout(() => void this.showPreview(action), 120);
  }

  private async showPreview(action: CodeActionDraft): Promise<void> {
    const seq = ++this.previewSeq;
    try {
      const api = await this.backend.preview(action);
      if (seq === this.previewSeq) this.preview.textContent = escapeUntrustedLines(api);
    } catch (err) {
      if (seq !== this.previewSeq) return;
      this.preview.textContent = '';
      this.problems.replaceChildren(h('li', { text: escapeUntrustedLines(ipc.toBackendError(err).message) }));
      this.problems.hidden = false;
    }
  }

  private async submit(): Promise<void> {
    const choices = this.choices();
    if (checkChoices(this.analysis, choices).length > 0) return;
    const action = buildCodeAction(this.source, this.analysis, choices);
    this.saveButton.disabled = true;
    this.status.textContent = 'Saving, and importing it in the kernel…';
    try {
      const saved = await this.backend.save(action);
      this.preview.textContent = escapeUntrustedLines(saved.api);
      this.status.textContent = `Saved as ${escapeUntrusted(saved.module)}. Other cells (and agents) can call it:`;
      // The line copied is the line shown.
      const line = escapeUntrusted(`from ${saved.module}.api import run`);
      const copy = h('button', { id: 'copy-tool-import', class: 'button button-secondary button-small', type: 'button', text: 'Copy' });
      copy.addEventListener('click', () => void copyText(line));
      this.usage.replaceChildren(h('code', { class: 'mono', text: line }), copy);
      this.usage.hidden = false;
      this.onSaved(saved);
    } catch (err) {
      const e = ipc.toBackendError(err);
      this.status.textContent = '';
      this.problems.replaceChildren(h('li', { text: `Not saved: ${escapeUntrustedLines(e.message)}` }));
      this.problems.hidden = false;
    } finally {
      this.saveButton.disabled = false;
    }
  }
}
