/**
 * A question an MCP server asks during a tool call, as a form: headed "The MCP server SERVER
 * asks:", in a frame of its own (never ipybox's or the system's look), the server's message,
 * titles and descriptions as escaped text only, each field with its default filled in.
 * Accept sends the values (ipybox checks them against the form and names a bad field);
 * Decline and Cancel go back as they are. A form goes when its question ends.
 */
import * as ipc from '../ipc';
import type { QuestionAction, QuestionField, ServerQuestion } from '../ipc';
import type { JsonObject, JsonValue } from '../util/json';
import { escapeUntrusted, escapeUntrustedLines } from '../model/untrusted';
import { h } from './dom';

/** Sends an answer; rejects with the backend's error when it is refused. */
export type AnswerFn = (id: number, action: QuestionAction, values: JsonObject | null) => Promise<void>;

type Reader = () => JsonValue | undefined;

function label(field: QuestionField): string {
  return escapeUntrusted(field.title ?? field.name);
}

/** What a field takes, in words (the server's option titles escaped). */
function hint(field: QuestionField): string {
  switch (field.kind) {
    case 'text':
      if (field.secret) return 'secret: not recorded';
      switch (field.format) {
        case 'email':
          return 'an email address';
        case 'uri':
          return 'a full address, https://…';
        case 'date':
          return 'a date';
        case 'date-time':
          return 'a date and time';
        case null:
          return '';
      }
      return '';
    case 'number': {
      const what = field.integer ? 'a whole number' : 'a number';
      if (field.minimum !== null && field.maximum !== null) return `${what} from ${field.minimum} to ${field.maximum}`;
      if (field.minimum !== null) return `${what}, at least ${field.minimum}`;
      if (field.maximum !== null) return `${what}, at most ${field.maximum}`;
      return what;
    }
    case 'boolean':
      return '';
    case 'choice':
      return '';
    case 'choices':
      return 'pick any';
  }
}

function optionText(option: { value: string; title: string | null }): string {
  return escapeUntrusted(option.title ?? option.value);
}

/** The input for a field, and how its value is read back (undefined: left empty). */
function input(field: QuestionField, id: string): { control: HTMLElement; read: Reader } {
  const given = field.default;
  switch (field.kind) {
    case 'text': {
      const type = field.secret ? 'password' : field.format === 'email' ? 'email' : field.format === 'uri' ? 'url' : field.format === 'date' ? 'date' : 'text';
      const el = h('input', { id, type, class: 'server-question-input', name: field.name, autocomplete: 'off', spellcheck: false });
      if (typeof given === 'string') el.value = given;
      return { control: el, read: () => (el.value === '' ? undefined : el.value) };
    }
    case 'number': {
      // Text, not type=number: what was typed reaches ipybox as typed, and its check names the problem.
      const el = h('input', { id, type: 'text', inputmode: field.integer ? 'numeric' : 'decimal', class: 'server-question-input', name: field.name, autocomplete: 'off' });
      if (typeof given === 'number') el.value = String(given);
      return { control: el, read: () => (el.value.trim() === '' ? undefined : el.value) };
    }
    case 'boolean': {
      const el = h('input', { id, type: 'checkbox', class: 'server-question-check', name: field.name });
      el.checked = given === true;
      return { control: el, read: () => el.checked };
    }
    case 'choice': {
      const el = h('select', { id, class: 'server-question-input', name: field.name });
      el.append(h('option', { value: '', text: field.required ? 'Choose…' : '(none)' }));
      for (const o of field.options) el.append(h('option', { value: o.value, text: optionText(o) }));
      el.value = typeof given === 'string' ? given : '';
      return { control: el, read: () => (el.value === '' ? undefined : el.value) };
    }
    case 'choices': {
      const picked = Array.isArray(given) ? given : [];
      const boxes = field.options.map((o) => {
        const box = h('input', { type: 'checkbox', class: 'server-question-check', value: o.value });
        box.checked = picked.includes(o.value);
        return { box, el: h('label', { class: 'server-question-pick' }, box, h('span', { text: optionText(o) })) };
      });
      const group = h('div', { id, class: 'server-question-picks', role: 'group' }, ...boxes.map((b) => b.el));
      return { control: group, read: () => boxes.filter((b) => b.box.checked).map((b) => b.box.value) };
    }
  }
}

export class QuestionForm {
  readonly element: HTMLElement;
  private readonly error: HTMLElement;
  private readonly buttons: HTMLButtonElement[];
  private readonly readers: [string, Reader][] = [];

  constructor(
    readonly question: ServerQuestion,
    private readonly answer: AnswerFn = ipc.answerElicitation,
  ) {
    const q = question;
    const heading = h('p', { class: 'server-question-heading' }, 'The MCP server ', h('strong', { class: 'server-question-server', text: escapeUntrusted(q.server) }), ' asks:');
    const message = h('p', { class: 'server-question-message', text: escapeUntrustedLines(q.message) });
    const during = q.call ? h('p', { class: 'server-question-call', text: `during its tool call ${escapeUntrusted(q.server)}.${escapeUntrusted(q.call.tool)} — what you enter goes to this server` }) : h('p', { class: 'server-question-call', text: 'What you enter goes to this server.' });
    const fields = q.form.fields.map((field, i) => {
      const id = `server-question-${q.id}-${i}`;
      const { control, read } = input(field, id);
      this.readers.push([field.name, read]);
      const words = hint(field);
      return h(
        'div',
        { class: 'server-question-field', 'data-field': field.name, 'data-kind': field.kind },
        h('label', { class: 'server-question-label', for: id }, h('span', { text: label(field) }), field.required ? h('span', { class: 'server-question-required', text: ' (required)' }) : null, words ? h('span', { class: 'server-question-hint', text: ` — ${words}` }) : null),
        control,
        field.description ? h('p', { class: 'server-question-description', text: escapeUntrusted(field.description) }) : null,
      );
    });
    this.error = h('p', { class: 'server-question-error', role: 'alert', hidden: true });
    const button = (action: QuestionAction, text: string, cls: string) => {
      const b = h('button', { type: 'button', class: cls, 'data-action': action, text });
      b.addEventListener('click', () => void this.send(action));
      return b;
    };
    this.buttons = [button('accept', 'Send answer', 'server-question-accept'), button('decline', 'Decline', 'server-question-decline'), button('cancel', 'Cancel', 'server-question-cancel')];
    const form = h('form', { class: 'server-question-form' }, ...fields, this.error, h('div', { class: 'server-question-buttons' }, ...this.buttons));
    // A problem ipybox named goes once the person changes something.
    form.addEventListener('input', () => {
      this.error.hidden = true;
    });
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.send('accept');
    });
    this.element = h('section', { class: 'server-question', 'data-question-id': q.id, role: 'group', 'aria-label': `The MCP server ${escapeUntrusted(q.server)} asks` }, heading, message, during, form);
  }

  /** The values as entered: fields left empty are left out (ipybox fills in defaults and names a missing one). */
  values(): JsonObject {
    const out: JsonObject = {};
    for (const [name, read] of this.readers) {
      const v = read();
      if (v !== undefined) out[name] = v;
    }
    return out;
  }

  private async send(action: QuestionAction): Promise<void> {
    this.error.hidden = true;
    for (const b of this.buttons) b.disabled = true;
    try {
      await this.answer(this.question.id, action, action === 'accept' ? this.values() : null);
      this.element.dataset.sent = action;
    } catch (err) {
      const e = ipc.toBackendError(err);
      this.error.textContent = e.message;
      this.error.hidden = false;
      for (const b of this.buttons) b.disabled = false;
    }
  }
}

/** The forms of the questions waiting in one place (a cell, the approvals area), kept as they are while they wait. */
export class QuestionsView {
  readonly element: HTMLElement;
  private readonly forms = new Map<number, QuestionForm>();

  constructor(
    cls: string,
    private readonly answer?: AnswerFn,
  ) {
    this.element = h('div', { class: cls, hidden: true });
  }

  /** Show exactly `questions`: a new one gets a form, a gone one's form goes, the rest keep what was typed. */
  sync(questions: readonly ServerQuestion[]): void {
    const ids = new Set(questions.map((q) => q.id));
    for (const [id, form] of this.forms) {
      if (!ids.has(id)) {
        form.element.remove();
        this.forms.delete(id);
      }
    }
    for (const q of questions) {
      if (this.forms.has(q.id)) continue;
      const form = new QuestionForm(q, this.answer);
      this.forms.set(q.id, form);
      this.element.append(form.element);
    }
    this.element.hidden = this.forms.size === 0;
  }
}
