/**
 * The outline of a notebook: the Markdown headings of its cells (ATX `# …` and setext
 * `…\n===`), outside fenced code, in order, each with its cell. Heading text comes from the
 * notebook file: it is untrusted, escaped (`escapeUntrusted`) and shown as text, never HTML.
 */
import type { Cell } from './cell';
import { escapeUntrusted } from './untrusted';

export interface Heading {
  cell: Cell;
  /** Index of the cell in the notebook. */
  index: number;
  level: number;
  /** Plain text, escaped for reading. */
  text: string;
}

/** Markdown's inline marks read as plain text: `code`, **bold**, _em_, [link](url), <tags>. */
function plain(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]*>/g, '')
    .replace(/(\*\*|__|\*|_|`)(.+?)\1/g, '$2')
    .trim();
}

/** The headings of one Markdown text. */
export function headingsOf(source: string): { level: number; text: string }[] {
  const out: { level: number; text: string }[] = [];
  let fence: string | null = null;
  const lines = source.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (f?.[1]) {
      if (fence === null) fence = f[1];
      else if (f[1][0] === fence[0] && f[1].length >= fence.length) fence = null;
      return;
    }
    if (fence !== null) return;
    const atx = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (atx?.[1]) {
      const text = plain(atx[2] ?? '');
      if (text) out.push({ level: atx[1].length, text });
      return;
    }
    const next = lines[i + 1]?.replace(/\r$/, '');
    if (next !== undefined && line.trim() !== '' && !/^ {0,3}([-*_>]|\d+[.)]|\|)/.test(line)) {
      if (/^ {0,3}=+[ \t]*$/.test(next)) out.push({ level: 1, text: plain(line) });
      else if (/^ {0,3}-+[ \t]*$/.test(next)) out.push({ level: 2, text: plain(line) });
    }
  });
  return out;
}

/** The outline of `cells`. */
export function outline(cells: readonly Cell[]): Heading[] {
  const out: Heading[] = [];
  cells.forEach((cell, index) => {
    if (cell.type !== 'markdown') return;
    for (const hd of headingsOf(cell.source)) out.push({ cell, index, level: hd.level, text: escapeUntrusted(hd.text) });
  });
  return out;
}

/** The heading whose section holds cell `index`: the last heading at or before it, or -1. */
export function sectionOf(headings: readonly Heading[], index: number): number {
  let found = -1;
  headings.forEach((hd, i) => {
    if (hd.index <= index) found = i;
  });
  return found;
}
