/**
 * The CodeMirror 6 editor of one cell: Python (or Markdown) highlighting, bracket matching,
 * auto-indent, closing brackets, history, search, Tab completion from the kernel and the
 * cell's own names, and Shift+Tab help from the kernel (`kernelHelp.ts`).
 */
import {
  autocompletion,
  closeBrackets,
  closeBracketsKeymap,
  completionKeymap,
  completionStatus,
  startCompletion,
} from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap, indentLess, indentMore } from '@codemirror/commands';
import { commonmarkLanguage, markdown } from '@codemirror/lang-markdown';
import { python, pythonLanguage } from '@codemirror/lang-python';
import {
  bracketMatching,
  HighlightStyle,
  indentOnInput,
  indentUnit,
  syntaxHighlighting,
} from '@codemirror/language';
import { highlightSelectionMatches, search, searchKeymap } from '@codemirror/search';
import { Compartment, EditorState, Prec, type Extension } from '@codemirror/state';
import { drawSelection, dropCursor, EditorView, highlightSpecialChars, keymap, placeholder } from '@codemirror/view';
import { highlightCode, tags as t } from '@lezer/highlight';
import { StyleModule } from 'style-mod';
import type { CellType } from '../model/cell';
import { assertNever } from '../util/assert';
import { findMarksField, setFindMarks, type FindMarks } from './findMarks';
import { kernelCompletion, kernelHelp, type KernelHelpSource } from './kernelHelp';

/** Colours come from CSS variables, so the editor follows the light/dark theme. */
const highlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.operatorKeyword, t.definitionKeyword, t.moduleKeyword], color: 'var(--syn-keyword)', fontWeight: '600' },
  { tag: [t.string, t.special(t.string), t.regexp], color: 'var(--syn-string)' },
  { tag: [t.number, t.bool, t.null, t.atom], color: 'var(--syn-number)' },
  { tag: [t.comment, t.lineComment, t.blockComment], color: 'var(--syn-comment)', fontStyle: 'italic' },
  { tag: [t.function(t.variableName), t.function(t.propertyName), t.definition(t.function(t.variableName))], color: 'var(--syn-function)' },
  { tag: [t.className, t.definition(t.className), t.typeName], color: 'var(--syn-class)' },
  { tag: [t.standard(t.variableName), t.self], color: 'var(--syn-builtin)' },
  { tag: [t.operator, t.punctuation, t.bracket], color: 'var(--syn-operator)' },
  { tag: [t.meta, t.annotation], color: 'var(--syn-meta)' },
  { tag: t.heading, color: 'var(--syn-heading)', fontWeight: '700' },
  { tag: t.emphasis, fontStyle: 'italic' },
  { tag: t.strong, fontWeight: '700' },
  { tag: [t.link, t.url], color: 'var(--syn-link)', textDecoration: 'underline' },
  { tag: t.monospace, color: 'var(--syn-string)' },
  { tag: t.invalid, color: 'var(--syn-invalid)' },
]);

/** The content's font, line height and paddings are repeated by `.cell-static` in app.css
 *  (a cell's text before its editor is made): change both together. */
const theme = EditorView.theme({
  '&': { backgroundColor: 'transparent', color: 'var(--fg)' },
  '.cm-content': { fontFamily: 'var(--font-mono)', fontSize: 'var(--code-size)', lineHeight: '1.45', padding: '6px 0', caretColor: 'var(--fg)' },
  '.cm-line': { padding: '0 8px' },
  '&.cm-focused': { outline: 'none' },
  '.cm-scroller': { fontFamily: 'var(--font-mono)', overflowX: 'auto' },
  '&.cm-focused .cm-cursor': { borderLeftColor: 'var(--fg)' },
  '.cm-selectionBackground, &.cm-focused .cm-selectionBackground, .cm-content ::selection': { backgroundColor: 'var(--selection-bg) !important' },
  '.cm-matchingBracket': { backgroundColor: 'var(--bracket-bg)', outline: '1px solid var(--bracket-outline)' },
  '.cm-nonmatchingBracket': { color: 'var(--syn-invalid)' },
  '.cm-placeholder': { color: 'var(--fg-faint)' },
  '.cm-tooltip': { backgroundColor: 'var(--bg-raised)', border: '1px solid var(--border)', color: 'var(--fg)' },
  '.cm-tooltip-autocomplete ul li[aria-selected]': { backgroundColor: 'var(--accent)', color: 'var(--accent-fg)' },
  '.cm-panels': { backgroundColor: 'var(--bg-subtle)', color: 'var(--fg)' },
  '.cm-searchMatch': { backgroundColor: 'var(--search-match)' },
  '.cm-selectionMatch': { backgroundColor: 'var(--selection-match)' },
});

/**
 * Characters a person would not see, or that change how the text around them reads: controls,
 * line and paragraph separators, bidi controls (U+202E shows `…/\u202etxt.stroper` as
 * `…/reports.txt`), zero-width and other invisible format characters. In a cell they are
 * shown as what they are, `\u202e`, in the editor and in the text a cell opens as: what a
 * person reads is what runs.
 */
const SPECIAL_CHARS =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb]/gu;

/** How a special character is drawn: its code, boxed, named for screen readers. */
function specialChar(code: number): HTMLElement {
  const name = `\\u${code.toString(16).padStart(4, '0')}`;
  return Object.assign(document.createElement('span'), {
    className: 'cm-specialChar cell-special-char',
    textContent: name,
    title: `U+${code.toString(16).toUpperCase().padStart(4, '0')}`,
  });
}

/** `text` into `into`, special characters drawn as [`specialChar`]. */
function appendShown(into: HTMLElement, text: string, className: string | null): void {
  const add = (part: string) => {
    if (!part) return;
    into.append(className ? Object.assign(document.createElement('span'), { className, textContent: part }) : part);
  };
  let last = 0;
  for (const m of text.matchAll(SPECIAL_CHARS)) {
    add(text.slice(last, m.index));
    into.append(specialChar(m[0].codePointAt(0) ?? 0));
    last = m.index + m[0].length;
  }
  add(text.slice(last));
}

const MARKDOWN_PLACEHOLDER = 'Markdown and LaTeX: $e^{i\\pi} + 1 = 0$';

let highlightMounted = false;

/**
 * A cell's text as the editor shows it — the same highlighting, font, padding and line
 * wrapping — without an editor: a notebook opens with these, and a cell gets its CodeMirror
 * editor when the pointer comes over it or it is edited (50 editors cost ≈ 18 MiB).
 */
export function renderStaticCode(parent: HTMLElement, text: string, type: CellType): void {
  if (!highlightMounted && highlight.module) {
    StyleModule.mount(document, highlight.module);
    highlightMounted = true;
  }
  const lines: HTMLElement[] = [];
  let line = document.createElement('div');
  const endLine = () => {
    if (!line.firstChild) line.append(document.createElement('br'));
    lines.push(line);
    line = document.createElement('div');
  };
  if (type === 'raw') {
    for (const [i, part] of text.split('\n').entries()) {
      if (i > 0) endLine();
      if (part) appendShown(line, part, null);
    }
  } else if (!text && type === 'markdown') {
    line.append(Object.assign(document.createElement('span'), { className: 'cell-static-placeholder', textContent: MARKDOWN_PLACEHOLDER }));
  } else {
    const parser = type === 'code' ? pythonLanguage.parser : commonmarkLanguage.parser;
    highlightCode(
      text,
      parser.parse(text),
      highlight,
      (part, classes) => appendShown(line, part, classes || null),
      endLine,
    );
  }
  endLine();
  const el = document.createElement('div');
  el.className = 'cell-static';
  el.append(...lines);
  parent.replaceChildren(el);
}

export interface EditorCallbacks {
  onChange(text: string): void;
  onFocus(): void;
  /** Arrow up on the first line / down on the last line: return true when handled (move to the next cell). */
  onBoundary(direction: 'up' | 'down'): boolean;
  /** Completion and help from the kernel; absent or null: the cell's own words only. */
  help?: () => KernelHelpSource | null;
}

function languageFor(type: CellType): Extension {
  switch (type) {
    case 'code':
      return python();
    case 'markdown':
      return [markdown(), EditorView.lineWrapping];
    case 'raw':
      return EditorView.lineWrapping;
    default:
      return assertNever(type, 'cell type');
  }
}

/** Tab completes after a name or a dot (as in JupyterLab; the kernel asked at once, by `ask`) and indents elsewhere. */
function tabCompleteOrIndent(view: EditorView, ask: (state: EditorState) => void): boolean {
  const sel = view.state.selection.main;
  if (!sel.empty) return indentMore(view);
  const line = view.state.doc.lineAt(sel.head);
  const before = line.text.slice(0, sel.head - line.from);
  if (!/[\w.]$/.test(before)) return indentMore(view);
  if (completionStatus(view.state) === null) ask(view.state);
  return startCompletion(view);
}

export class CellEditor {
  readonly view: EditorView;
  private readonly language = new Compartment();
  private readonly help: ReturnType<typeof kernelHelp>;
  private type: CellType;
  private silent = false;

  constructor(parent: HTMLElement, text: string, type: CellType, callbacks: EditorCallbacks, label: string, readOnly = false) {
    this.type = type;
    const source = callbacks.help ?? (() => null);
    this.help = kernelHelp(source);
    const completion = kernelCompletion(source);
    const boundary = (direction: 'up' | 'down') => (view: EditorView): boolean => {
      const sel = view.state.selection.main;
      if (!sel.empty || completionStatus(view.state) !== null) return false;
      const line = view.state.doc.lineAt(sel.head);
      if (direction === 'up' && line.number !== 1) return false;
      if (direction === 'down' && line.number !== view.state.doc.lines) return false;
      return callbacks.onBoundary(direction);
    };
    this.view = new EditorView({
      parent,
      state: EditorState.create({
        doc: text,
        extensions: [
          history(),
          drawSelection(),
          dropCursor(),
          highlightSpecialChars({ specialChars: SPECIAL_CHARS, render: (code) => specialChar(code) }),
          indentUnit.of('    '),
          EditorState.tabSize.of(4),
          indentOnInput(),
          bracketMatching(),
          closeBrackets(),
          autocompletion({
            activateOnTyping: false,
            override: [(context) => (this.type === 'code' ? completion.source(context) : null)],
          }),
          this.help.extension,
          highlightSelectionMatches(),
          findMarksField(),
          search({ top: true }),
          syntaxHighlighting(highlight),
          theme,
          placeholder(type === 'markdown' ? MARKDOWN_PLACEHOLDER : ''),
          this.language.of(languageFor(type)),
          Prec.high(
            keymap.of([
              { key: 'ArrowUp', run: boundary('up') },
              { key: 'ArrowDown', run: boundary('down') },
              { key: 'Tab', run: (view) => tabCompleteOrIndent(view, (state) => this.type === 'code' && completion.ask(state)), shift: (view) => (this.type === 'code' && this.help.show(view)) || indentLess(view) },
              { key: 'Escape', run: (view) => this.help.close(view) },
            ]),
          ),
          keymap.of([...closeBracketsKeymap, ...completionKeymap, ...searchKeymap, ...historyKeymap, ...defaultKeymap]),
          EditorView.contentAttributes.of({ 'aria-label': label }),
          EditorState.readOnly.of(readOnly),
          EditorView.editable.of(!readOnly),
          EditorView.updateListener.of((update) => {
            if (update.docChanged && !this.silent) callbacks.onChange(update.state.doc.toString());
            if (update.focusChanged && update.view.hasFocus) callbacks.onFocus();
          }),
        ],
      }),
    });
  }

  get text(): string {
    return this.view.state.doc.toString();
  }

  /** Replace the text (from outside the editor; no change callback). */
  setText(text: string): void {
    if (text === this.text) return;
    this.silent = true;
    try {
      this.view.dispatch({ changes: { from: 0, to: this.view.state.doc.length, insert: text } });
    } finally {
      this.silent = false;
    }
  }

  setType(type: CellType): void {
    this.type = type;
    this.view.dispatch({ effects: this.language.reconfigure(languageFor(type)) });
  }

  focus(where: 'start' | 'end' | 'keep' = 'keep'): void {
    if (where !== 'keep') {
      const pos = where === 'start' ? 0 : this.view.state.doc.length;
      this.view.dispatch({ selection: { anchor: pos } });
    }
    this.view.focus();
  }

  get hasFocus(): boolean {
    return this.view.hasFocus;
  }

  get selectedText(): string {
    const sel = this.view.state.selection.main;
    return this.view.state.sliceDoc(sel.from, sel.to);
  }

  /** Cursor offsets of all selections' heads (for splitting a cell). */
  get cursorOffsets(): number[] {
    return this.view.state.selection.ranges.map((r) => r.head);
  }

  /** Show find's matches (see `findMarks.ts`). */
  setFindMarks(marks: FindMarks): void {
    this.view.dispatch({ effects: setFindMarks.of(marks) });
  }

  /** Replace text ranges as one edit the person can undo (find's replace). */
  replace(changes: readonly { from: number; to: number; insert: string }[]): void {
    this.view.dispatch({ changes: [...changes], userEvent: 'input.replace' });
  }

  /** Select a range and show it (find's match, when find closes). */
  select(from: number, to: number): void {
    this.view.dispatch({ selection: { anchor: from, head: to }, scrollIntoView: true });
  }

  /** Viewport coordinates of a text offset, once drawn. */
  coordsAt(offset: number): { top: number; bottom: number } | null {
    return this.view.coordsAtPos(offset);
  }

  /** A completion list or a search panel wants Escape for itself. */
  get wantsEscape(): boolean {
    return completionStatus(this.view.state) !== null || this.help.isOpen(this.view.state);
  }

  destroy(): void {
    this.view.destroy();
  }
}
