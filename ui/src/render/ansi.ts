/**
 * ANSI escape sequences → styled segments. SGR colours (16 + the first 16 of the 256 palette),
 * bold, dim, italic, underline and inverse are kept as classes; every other escape sequence is
 * dropped. Text is only ever put into text nodes.
 */

export interface AnsiState {
  /** 0–15: one of the 16 theme colours (a class); null: default. */
  fg: number | null;
  bg: number | null;
  /** 256-colour palette entries above 15 and 24-bit colours, as CSS colours (inline style). */
  fgRgb: string | null;
  bgRgb: string | null;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
  inverse: boolean;
}

export interface AnsiSegment {
  text: string;
  classes: string[];
  /** Inline colours for 256-colour / 24-bit codes. */
  style: { color?: string; background?: string };
}

export function initialAnsiState(): AnsiState {
  return { fg: null, bg: null, fgRgb: null, bgRgb: null, bold: false, dim: false, italic: false, underline: false, inverse: false };
}

// CSI sequences, OSC sequences (ended by BEL or ST), and two-character escapes.
const ESCAPE = /\x1b(?:\[([0-9;:?<=>]*)[ -/]*([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])/g;

export function hasAnsi(text: string): boolean {
  return text.includes('\x1b');
}

function applySgr(state: AnsiState, params: string): void {
  const codes = params === '' ? [0] : params.split(/[;:]/).map((p) => (p === '' ? 0 : Number(p)));
  for (let i = 0; i < codes.length; i++) {
    const c = codes[i] ?? 0;
    if (c === 0) Object.assign(state, initialAnsiState());
    else if (c === 1) state.bold = true;
    else if (c === 2) state.dim = true;
    else if (c === 3) state.italic = true;
    else if (c === 4) state.underline = true;
    else if (c === 7) state.inverse = true;
    else if (c === 22) {
      state.bold = false;
      state.dim = false;
    } else if (c === 23) state.italic = false;
    else if (c === 24) state.underline = false;
    else if (c === 27) state.inverse = false;
    else if (c >= 30 && c <= 37) setFg(state, c - 30);
    else if (c === 39) setFg(state, null);
    else if (c >= 40 && c <= 47) setBg(state, c - 40);
    else if (c === 49) setBg(state, null);
    else if (c >= 90 && c <= 97) setFg(state, c - 90 + 8);
    else if (c >= 100 && c <= 107) setBg(state, c - 100 + 8);
    else if (c === 38 || c === 48) {
      const mode = codes[i + 1];
      let index: number | null = null;
      let rgb: string | null = null;
      if (mode === 5) {
        const n = codes[i + 2] ?? 0;
        if (n < 16) index = n;
        else rgb = palette256(n);
        i += 2;
      } else if (mode === 2) {
        const [r, g, b] = [codes[i + 2] ?? 0, codes[i + 3] ?? 0, codes[i + 4] ?? 0].map((x) => Math.max(0, Math.min(255, x)));
        rgb = `rgb(${r}, ${g}, ${b})`;
        i += 4;
      } else {
        i += 1;
      }
      if (c === 38) {
        setFg(state, index);
        state.fgRgb = rgb;
      } else {
        setBg(state, index);
        state.bgRgb = rgb;
      }
    }
  }
}

function setFg(state: AnsiState, index: number | null): void {
  state.fg = index;
  state.fgRgb = null;
}

function setBg(state: AnsiState, index: number | null): void {
  state.bg = index;
  state.bgRgb = null;
}

/** xterm's 256-colour palette above the first 16: a 6×6×6 cube, then 24 greys. */
function palette256(n: number): string {
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return `rgb(${v}, ${v}, ${v})`;
  }
  const i = n - 16;
  const level = (x: number): number => (x === 0 ? 0 : 55 + x * 40);
  return `rgb(${level(Math.floor(i / 36))}, ${level(Math.floor(i / 6) % 6)}, ${level(i % 6)})`;
}

function styleOf(state: AnsiState): AnsiSegment['style'] {
  const style: AnsiSegment['style'] = {};
  let fg = state.fgRgb;
  let bg = state.bgRgb;
  if (state.inverse) [fg, bg] = [bg, fg];
  if (fg) style.color = fg;
  if (bg) style.background = bg;
  return style;
}

export function classesOf(state: AnsiState): string[] {
  const out: string[] = [];
  let fg = state.fg;
  let bg = state.bg;
  if (state.inverse) {
    out.push('ansi-inverse');
    [fg, bg] = [bg, fg];
  }
  if (fg !== null) out.push(`ansi-fg-${fg}`);
  if (bg !== null) out.push(`ansi-bg-${bg}`);
  if (state.bold) out.push('ansi-bold');
  if (state.dim) out.push('ansi-dim');
  if (state.italic) out.push('ansi-italic');
  if (state.underline) out.push('ansi-underline');
  return out;
}

/** Split text into styled segments, starting from `state` (which is advanced in place). */
export function parseAnsi(text: string, state: AnsiState = initialAnsiState()): AnsiSegment[] {
  const segments: AnsiSegment[] = [];
  if (!text.includes('\x1b')) {
    if (text) segments.push({ text, classes: classesOf(state), style: styleOf(state) });
    return segments;
  }
  ESCAPE.lastIndex = 0;
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = ESCAPE.exec(text)) !== null) {
    if (m.index > last) segments.push({ text: text.slice(last, m.index), classes: classesOf(state), style: styleOf(state) });
    if (m[2] === 'm') applySgr(state, m[1] ?? '');
    last = m.index + m[0].length;
  }
  if (last < text.length) segments.push({ text: text.slice(last), classes: classesOf(state), style: styleOf(state) });
  // Merge neighbours with equal classes.
  const merged: AnsiSegment[] = [];
  for (const s of segments) {
    const prev = merged[merged.length - 1];
    if (prev && prev.classes.join(' ') === s.classes.join(' ') && prev.style.color === s.style.color && prev.style.background === s.style.background) prev.text += s.text;
    else merged.push({ text: s.text, classes: s.classes, style: s.style });
  }
  return merged;
}

/** Advance `state` over text without producing segments (for text that is not shown). */
export function advanceAnsiState(text: string, state: AnsiState): void {
  if (!text.includes('\x1b')) return;
  ESCAPE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = ESCAPE.exec(text)) !== null) if (m[2] === 'm') applySgr(state, m[1] ?? '');
}

/** Text without escape sequences. */
export function stripAnsi(text: string): string {
  return text.includes('\x1b') ? text.replace(ESCAPE, '') : text;
}

/** Styled segments as DOM nodes: unstyled text as text nodes, styled text in spans with classes. */
export function ansiToFragment(doc: Document, text: string, state: AnsiState = initialAnsiState()): DocumentFragment {
  const frag = doc.createDocumentFragment();
  for (const seg of parseAnsi(text, state)) {
    if (seg.classes.length === 0 && !seg.style.color && !seg.style.background) {
      frag.appendChild(doc.createTextNode(seg.text));
    } else {
      const span = doc.createElement('span');
      if (seg.classes.length > 0) span.className = seg.classes.join(' ');
      if (seg.style.color) span.style.color = seg.style.color;
      if (seg.style.background) span.style.background = seg.style.background;
      span.textContent = seg.text;
      frag.appendChild(span);
    }
  }
  return frag;
}
