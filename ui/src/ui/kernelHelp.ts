/**
 * A code cell's completion and help from the kernel (as in JupyterLab): Tab asks the kernel
 * for completions and merges them with the cell's own words; Shift+Tab shows the kernel's help
 * on the name before the cursor in a tooltip, and again (or "Expand") shows all of it.
 * Everything the kernel sends is untrusted: shown as text (ANSI colours as classes, invisible
 * characters as `\uXXXX`), never as HTML.
 */
import type { Completion, CompletionContext, CompletionResult } from '@codemirror/autocomplete';
import { globalCompletion, localCompletionSource } from '@codemirror/lang-python';
import { StateEffect, StateField, type EditorState, type Extension } from '@codemirror/state';
import { EditorView, showTooltip, type Tooltip } from '@codemirror/view';
import type { KernelCompletions, KernelInspection } from '../ipc';
import { completionType, mergeOptions, toCodePoints, toUtf16, type Options } from '../model/completion';
import { escapeUntrusted, escapeUntrustedLines } from '../model/untrusted';
import { parseAnsi } from '../render/ansi';
import { h } from './dom';

/** Where the help comes from: the kernel (through the backend), or a test's stand-in. */
export interface KernelHelpSource {
  complete(code: string, cursor: number): Promise<KernelCompletions>;
  inspect(code: string, cursor: number, detail: 0 | 1): Promise<KernelInspection>;
}

/** How long Tab waits for the kernel before it shows the cell's own words alone. */
const COMPLETE_WAIT_MS = 1500;
/** How old a question asked at Tab may be when the completion query takes its answer. */
const ASKED_FRESH_MS = 500;
/** Signatures shown beside a completion are cut to this many characters (all of it on hover). */
const DETAIL_MAX = 60;

function within<T>(ms: number, promise: Promise<T>): Promise<T | null> {
  return Promise.race([promise.catch(() => null), new Promise<null>((resolve) => setTimeout(() => resolve(null), ms))]);
}

function asOptions(result: CompletionResult | null): Options | null {
  if (!result) return null;
  return { from: result.from, to: result.to, options: result.options.map((o) => ({ label: o.label, type: o.type, detail: o.detail })) };
}

/** The cell's own names, Python's builtins and keywords. */
async function localOptions(context: CompletionContext): Promise<Options | null> {
  const local = asOptions(localCompletionSource(context));
  const global = asOptions(await globalCompletion(context));
  return mergeOptions(local, global);
}

function kernelOptions(code: string, reply: KernelCompletions): Options {
  return {
    from: toUtf16(code, reply.start),
    to: toUtf16(code, reply.end),
    options: reply.items.map((item) => ({
      label: item.text,
      type: completionType(item.kind),
      detail: item.signature,
    })),
  };
}

/** An option shown as text: what a person reads is what is inserted (`apply` keeps the kernel's text). */
function shown(o: { label: string; type?: string; detail?: string }): Completion {
  const label = escapeUntrusted(o.label);
  const detail = o.detail ? escapeUntrusted(o.detail) : undefined;
  const option: Completion = { label, type: o.type };
  if (label !== o.label) option.apply = o.label;
  if (detail) {
    option.detail = detail.length > DETAIL_MAX ? `${detail.slice(0, DETAIL_MAX - 1)}…` : detail;
    if (detail.length > DETAIL_MAX) option.info = detail;
  }
  return option;
}

/** A question to the kernel already on its way: for this text, at this position. */
interface Asked {
  code: string;
  pos: number;
  at: number;
  reply: Promise<KernelCompletions | null>;
}

/**
 * The completion source of a code cell: the kernel's matches (when it answers in time) and the
 * cell's words. `ask` puts the question to the kernel at once: Tab calls it before CodeMirror
 * starts its query (which it does 50 ms after the key), so the kernel's round trip runs
 * during that wait instead of after it. The source takes that answer when the text and the
 * cursor are the same, and asks anew otherwise.
 */
export function kernelCompletion(source: () => KernelHelpSource | null): { source: (context: CompletionContext) => Promise<CompletionResult | null>; ask(state: EditorState): void } {
  let asked: Asked | null = null;
  const ask = (state: EditorState): Asked | null => {
    const help = source();
    if (!help) return null;
    const code = state.doc.toString();
    const pos = state.selection.main.head;
    asked = { code, pos, at: performance.now(), reply: within(COMPLETE_WAIT_MS, help.complete(code, toCodePoints(code, pos))) };
    return asked;
  };
  const complete = async (context: CompletionContext): Promise<CompletionResult | null> => {
    const code = context.state.doc.toString();
    // An answer asked for long ago may miss what the kernel has learnt since.
    const early = asked && asked.code === code && asked.pos === context.pos && performance.now() - asked.at < ASKED_FRESH_MS ? asked : null;
    asked = null;
    const question = early ?? ask(context.state);
    asked = null;
    const local = await localOptions(context);
    let kernel: Options | null = null;
    if (question) {
      const reply = await question.reply;
      if (context.aborted) return null;
      if (reply) kernel = kernelOptions(code, reply);
    }
    // After a dot only attributes make sense: the kernel's, when it has them.
    const afterDot = context.matchBefore(/\.[\w$]*$/) !== null;
    const merged = afterDot && kernel && kernel.options.length > 0 ? kernel : mergeOptions(kernel, local);
    if (!merged || merged.options.length === 0) return null;
    return { from: merged.from, to: merged.to, options: merged.options.map(shown), validFor: /^[\w$]*$/ };
  };
  return { source: complete, ask: (state) => void ask(state) };
}

// ---- Shift+Tab: the kernel's help in a tooltip

interface HelpShown {
  pos: number;
  text: string;
  found: boolean;
  expanded: boolean;
}

const setHelp = StateEffect.define<HelpShown | null>();

/** The help text as DOM: ANSI colours as classes, invisible characters as `\uXXXX`. */
function helpText(text: string): DocumentFragment {
  const frag = document.createDocumentFragment();
  for (const seg of parseAnsi(text)) {
    const part = escapeUntrustedLines(seg.text);
    if (seg.classes.length === 0) frag.append(part);
    else frag.append(h('span', { class: seg.classes.join(' '), text: part }));
  }
  return frag;
}

function helpTooltip(shown: HelpShown, expand: (view: EditorView) => void): Tooltip {
  return {
    pos: shown.pos,
    above: false,
    create: (view) => {
      const body = h('pre', { class: 'kernel-help-text' });
      if (shown.found) body.append(helpText(shown.text));
      else body.textContent = 'The kernel has no help for the name before the cursor.';
      const dom = h('div', { class: `kernel-help${shown.expanded ? ' expanded' : ''}`, role: 'tooltip', 'aria-label': 'Help from the kernel' }, body);
      if (shown.found && !shown.expanded) {
        const more = h('button', { class: 'kernel-help-expand', type: 'button', text: 'Expand', title: 'Show all of it (Shift+Tab)' });
        more.addEventListener('mousedown', (e) => e.preventDefault());
        more.addEventListener('click', () => expand(view));
        dom.append(more);
      }
      return { dom };
    },
  };
}

/** Shift+Tab on a name shows help; Escape, typing or moving away closes it. */
export function kernelHelp(source: () => KernelHelpSource | null): { extension: Extension; show(view: EditorView): boolean; isOpen(state: EditorState): boolean; close(view: EditorView): boolean } {
  const ask = (view: EditorView, expanded: boolean): void => {
    const help = source();
    if (!help) return;
    const code = view.state.doc.toString();
    const pos = view.state.selection.main.head;
    help.inspect(code, toCodePoints(code, pos), expanded ? 1 : 0).then(
      (reply) => {
        // The person moved on meanwhile: no tooltip out of nowhere.
        if (view.state.doc.toString() !== code || view.state.selection.main.head !== pos) return;
        view.dispatch({ effects: setHelp.of({ pos, text: reply.text, found: reply.found, expanded }) });
      },
      () => undefined,
    );
  };
  const field = StateField.define<HelpShown | null>({
    create: () => null,
    update(value, tr) {
      for (const e of tr.effects) if (e.is(setHelp)) return e.value;
      if (value && (tr.docChanged || tr.selection)) return null;
      return value;
    },
    provide: (f) => showTooltip.from(f, (v) => (v ? helpTooltip(v, (view) => ask(view, true)) : null)),
  });
  return {
    extension: [
      field,
      EditorView.theme({
        '.kernel-help': { maxWidth: 'min(640px, 80vw)', padding: '4px 0' },
        '.kernel-help-text': { margin: 0, padding: '4px 10px', maxHeight: '12em', overflow: 'auto', whiteSpace: 'pre-wrap', fontFamily: 'var(--font-mono)', fontSize: '12px' },
        '.kernel-help.expanded .kernel-help-text': { maxHeight: '60vh' },
        '.kernel-help-expand': { margin: '2px 10px 4px', font: 'inherit', fontSize: '12px' },
      }),
    ],
    show(view) {
      const sel = view.state.selection.main;
      if (!sel.empty || !source()) return false;
      const line = view.state.doc.lineAt(sel.head);
      // At the start of a line (or after blanks) Shift+Tab dedents, as everywhere.
      if (/^\s*$/.test(line.text.slice(0, sel.head - line.from))) return false;
      const open = view.state.field(field);
      ask(view, open !== null && open.found);
      return true;
    },
    isOpen: (state) => state.field(field, false) != null,
    close(view) {
      if (view.state.field(field, false) == null) return false;
      view.dispatch({ effects: setHelp.of(null) });
      return true;
    },
  };
}
