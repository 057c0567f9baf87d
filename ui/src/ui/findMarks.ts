/**
 * How find's matches are painted. In a cell's CodeMirror editor: decorations (they survive the
 * editor redrawing its lines). Everywhere else — a cell's text before its editor is made,
 * outputs — CSS Custom Highlights over DOM ranges, which change no DOM at all: painting the
 * matches of a 50-cell notebook adds no nodes and makes no editors.
 */
import { StateEffect, StateField, type Extension } from '@codemirror/state';
import { Decoration, EditorView, type DecorationSet } from '@codemirror/view';
import type { Span } from '../model/find';

export interface FindMarks {
  spans: readonly Span[];
  /** Index in `spans` of the current match, or -1. */
  current: number;
}

export const setFindMarks = StateEffect.define<FindMarks>();

const matchMark = Decoration.mark({ class: 'cm-find-match' });
const currentMark = Decoration.mark({ class: 'cm-find-match cm-find-current' });

/** The editor extension that shows find's matches given by `setFindMarks`. */
export function findMarksField(): Extension {
  return StateField.define<DecorationSet>({
    create: () => Decoration.none,
    update(marks, tr) {
      let next = marks.map(tr.changes);
      for (const e of tr.effects) {
        if (!e.is(setFindMarks)) continue;
        const len = tr.state.doc.length;
        next = Decoration.set(
          e.value.spans.filter((s) => s.to <= len).map((s, i) => (i === e.value.current ? currentMark : matchMark).range(s.from, s.to)),
        );
      }
      return next;
    },
    provide: (f) => EditorView.decorations.from(f),
  });
}

// ---------------------------------------------------------------------------------------------
// CSS Custom Highlights

interface HighlightLike {
  add(range: AbstractRange): void;
  clear(): void;
}

interface HighlightRegistry {
  set(name: string, h: HighlightLike): void;
}

let registry: { match: HighlightLike; current: HighlightLike } | null | undefined;

/** The two highlights (`::highlight(find-match)`, `::highlight(find-current)`), or null where
 *  the engine has no Custom Highlight API (matches are then counted but not painted there). */
export function highlights(): { match: HighlightLike; current: HighlightLike } | null {
  if (registry !== undefined) return registry;
  const g = globalThis as unknown as { Highlight?: new () => HighlightLike; CSS?: { highlights?: HighlightRegistry } };
  const H = g.Highlight;
  const reg = g.CSS?.highlights;
  if (!H || !reg) return (registry = null);
  const match = new H();
  const current = new H();
  reg.set('find-match', match);
  reg.set('find-current', current);
  return (registry = { match, current });
}

/** A text node and where its text starts in the searched string. */
export interface TextPiece {
  node: Text;
  start: number;
  /** Source characters it stands for (a special character drawn as `\u202e` stands for one). */
  length: number;
}

/** DOM ranges for `spans` over pieces of text laid end to end. */
export function rangesFor(pieces: readonly TextPiece[], spans: readonly Span[]): Range[] {
  const out: Range[] = [];
  let p = 0;
  const locate = (offset: number, end: boolean): [Text, number] | null => {
    while (p < pieces.length) {
      const piece = pieces[p];
      if (!piece) break;
      const stop = piece.start + piece.length;
      if (offset < stop || (end && offset === stop)) {
        const within = Math.max(0, offset - piece.start);
        // A piece drawn differently from its source is highlighted whole.
        const drawn = piece.node.data.length;
        if (drawn === piece.length) return [piece.node, within];
        return [piece.node, end ? drawn : 0];
      }
      p++;
    }
    return null;
  };
  for (const span of spans) {
    const start = locate(span.from, false);
    if (!start) break;
    const keep = p;
    const end = locate(span.to, true);
    if (!end) break;
    const range = document.createRange();
    range.setStart(start[0], start[1]);
    range.setEnd(end[0], end[1]);
    out.push(range);
    p = keep;
  }
  return out;
}

/**
 * The text pieces of a cell's static text (`.cell-static`: one div per line, special
 * characters as spans): offsets are the source's, lines joined by "\n".
 */
export function staticPieces(root: Element): TextPiece[] {
  const out: TextPiece[] = [];
  let offset = 0;
  let first = true;
  for (const line of root.children) {
    if (!first) offset += 1;
    first = false;
    if (line.querySelector('.cell-static-placeholder')) continue;
    const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!(n instanceof Text)) continue;
      const special = n.parentElement?.classList.contains('cell-special-char') ?? false;
      const length = special ? 1 : n.data.length;
      out.push({ node: n, start: offset, length });
      offset += length;
    }
  }
  return out;
}

/** The text pieces of one output, in reading order, without its prompt and notes. */
export function outputPieces(output: Element): { text: string; pieces: TextPiece[] } {
  const pieces: TextPiece[] = [];
  let text = '';
  const walker = document.createTreeWalker(output, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => (n.parentElement?.closest('.output-prompt, .stream-hidden-note, .install-offer, style, script') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!(n instanceof Text) || n.data.length === 0) continue;
    pieces.push({ node: n, start: text.length, length: n.data.length });
    text += n.data;
  }
  return { text, pieces };
}
