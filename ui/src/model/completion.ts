/**
 * Completion and help from the kernel, without the editor: positions between the editor's
 * UTF-16 offsets and Jupyter's code points, Jedi's kinds as CodeMirror's completion types, and
 * the kernel's matches merged with the cell's own words.
 */

/** The number of code points in `text` before UTF-16 offset `offset` (Jupyter's cursor_pos). */
export function toCodePoints(text: string, offset: number): number {
  let n = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** The UTF-16 offset in `text` of code point `points` (clamped to the text). */
export function toUtf16(text: string, points: number): number {
  let i = 0;
  for (let n = 0; n < points && i < text.length; n++) {
    const c = text.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) <= 0xdfff ? 2 : 1;
  }
  return i;
}

/** Jedi's completion kinds as CodeMirror's option types (which pick the icon and colour). */
export function completionType(kind: string | undefined): string | undefined {
  switch (kind) {
    case 'function':
      return 'function';
    case 'class':
      return 'class';
    case 'module':
      return 'namespace';
    case 'keyword':
      return 'keyword';
    case 'property':
      return 'property';
    case 'instance':
    case 'statement':
    case 'param':
      return 'variable';
    case 'path':
      return 'text';
    default:
      return undefined;
  }
}

/** An option as the editor shows it: every field is text, never HTML. */
export interface Option {
  label: string;
  type?: string;
  detail?: string;
}

export interface Options {
  /** UTF-16 offset where the text the options replace starts. */
  from: number;
  to?: number;
  options: Option[];
}

/**
 * The kernel's options first (they know types and attributes), then the cell's own words the
 * kernel did not offer — only when both replace the same text; without the kernel's, the
 * cell's words alone.
 */
export function mergeOptions(kernel: Options | null, local: Options | null): Options | null {
  if (!kernel || kernel.options.length === 0) return local;
  if (!local || local.from !== kernel.from) return kernel;
  const seen = new Set(kernel.options.map((o) => o.label));
  return { ...kernel, options: [...kernel.options, ...local.options.filter((o) => !seen.has(o.label))] };
}
