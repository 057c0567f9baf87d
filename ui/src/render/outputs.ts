/**
 * Output renderers: one component per output kind, chosen by output type and MIME type.
 * Each owns its DOM element (`.output` with `data-output-type` and `data-mime`).
 */
import { isJsonObject, type JsonObject, type JsonValue } from '../util/json';
import { assertNever } from '../util/assert';
import { countNewlines } from '../model/text';
import {
  mimeText,
  TRUST_MIMES,
  type DisplayDataOutput,
  type ErrorOutput,
  type ExecuteResultOutput,
  type MimeBundle,
  type Output,
  type StreamDelta,
  type StreamOutput,
  type UnknownOutput,
} from '../model/outputs';
import { advanceAnsiState, ansiToFragment, initialAnsiState, type AnsiState } from './ansi';
import { sanitizeHtml } from './sanitize';
import { latexToHtml, renderMarkdown } from './markdown';
import { frames, type FrameScheduler } from '../util/frame';

/** MIME types rendered, richest first. Widget views (`application/vnd.jupyter.widget-view+json`) fall back. */
export const MIME_PRIORITY = [
  'text/html',
  'image/svg+xml',
  'image/png',
  'image/jpeg',
  'image/gif',
  'text/markdown',
  'text/latex',
  'application/json',
  'text/plain',
] as const;

export type RenderMime = (typeof MIME_PRIORITY)[number];

export function chooseMime(bundle: MimeBundle): RenderMime | null {
  for (const mime of MIME_PRIORITY) if (bundle[mime] !== undefined) return mime;
  return null;
}

/** Stream output: lines kept in the DOM (the rest is summarized by a note; the model keeps the text). */
export const STREAM_VISIBLE_LINES = 5000;
/** Lines per DOM chunk of a stream (whole chunks are dropped from the top). */
export const STREAM_CHUNK_LINES = 500;

export interface OutputView {
  readonly element: HTMLElement;
  dispose(): void;
}

function outputShell(doc: Document, type: string, mime: string, prompt = ''): { element: HTMLElement; body: HTMLElement } {
  const element = doc.createElement('div');
  element.className = 'output';
  element.dataset.outputType = type;
  element.dataset.mime = mime;
  const gutter = doc.createElement('div');
  gutter.className = 'output-prompt';
  gutter.textContent = prompt;
  gutter.title = 'Click to limit or expand the height of the output';
  const body = doc.createElement('div');
  body.className = 'output-body';
  element.append(gutter, body);
  return { element, body };
}

// ---------------------------------------------------------------------------------------------
// Streams

export class StreamOutputView implements OutputView {
  readonly element: HTMLElement;
  private readonly doc: Document;
  private readonly pre: HTMLElement;
  private readonly note: HTMLElement;
  private readonly lineEl: HTMLElement;
  private chunks: { el: HTMLElement; lines: number }[] = [];
  private visibleLines = 0;
  private hiddenLines = 0;
  private ansi: AnsiState = initialAnsiState();
  private pendingCommitted: string[] = [];
  private pendingLine: string | null = null;
  private lastLine = '';

  constructor(
    output: StreamOutput,
    doc: Document = document,
    private readonly scheduler: FrameScheduler = frames,
    private readonly onRendered: () => void = () => {},
  ) {
    this.doc = doc;
    const { element, body } = outputShell(doc, 'stream', 'text/plain');
    element.classList.add(`stream-${output.name === 'stderr' ? 'stderr' : 'stdout'}`);
    this.element = element;
    this.note = doc.createElement('div');
    this.note.className = 'stream-hidden-note';
    this.note.hidden = true;
    this.pre = doc.createElement('pre');
    this.pre.className = 'stream-text';
    this.lineEl = doc.createElement('span');
    this.lineEl.className = 'stream-line';
    this.pre.appendChild(this.lineEl);
    body.append(this.note, this.pre);
    this.pre.addEventListener('copy', (e) => this.copyExact(e));
    const snap = output.snapshot();
    this.append(snap);
    this.render();
  }

  /** Queue new text; the DOM changes at the next frame. */
  append(delta: StreamDelta): void {
    if (delta.committed) this.pendingCommitted.push(delta.committed);
    this.pendingLine = delta.line;
    this.scheduler.markDirty(this);
  }

  render(): void {
    if (this.pendingCommitted.length > 0) {
      let text = this.pendingCommitted.length === 1 ? (this.pendingCommitted[0] ?? '') : this.pendingCommitted.join('');
      this.pendingCommitted = [];
      let lines = countNewlines(text);
      if (lines > STREAM_VISIBLE_LINES) {
        // Only the tail can be shown: skip the head without building nodes for it.
        const skip = lines - STREAM_VISIBLE_LINES;
        let at = -1;
        for (let i = 0; i < skip; i++) at = text.indexOf('\n', at + 1);
        advanceAnsiState(text.slice(0, at + 1), this.ansi);
        text = text.slice(at + 1);
        this.hiddenLines += skip + this.visibleLines;
        for (const c of this.chunks) c.el.remove();
        this.chunks = [];
        this.visibleLines = 0;
        lines = STREAM_VISIBLE_LINES;
      }
      this.appendLines(text, lines);
      this.evict();
    }
    if (this.pendingLine !== null) {
      const line = this.pendingLine;
      this.pendingLine = null;
      if (line !== this.lastLine) {
        this.lastLine = line;
        this.lineEl.replaceChildren(ansiToFragment(this.doc, line, { ...this.ansi }));
      }
    }
    this.onRendered();
  }

  private appendLines(text: string, lines: number): void {
    let rest = text;
    let restLines = lines;
    while (rest) {
      let chunk = this.chunks[this.chunks.length - 1];
      if (!chunk || chunk.lines >= STREAM_CHUNK_LINES) {
        const el = this.doc.createElement('span');
        el.className = 'stream-chunk';
        this.pre.insertBefore(el, this.lineEl);
        chunk = { el, lines: 0 };
        this.chunks.push(chunk);
      }
      const room = STREAM_CHUNK_LINES - chunk.lines;
      let piece = rest;
      let pieceLines = restLines;
      if (restLines > room) {
        let at = -1;
        for (let i = 0; i < room; i++) at = rest.indexOf('\n', at + 1);
        piece = rest.slice(0, at + 1);
        pieceLines = room;
      }
      chunk.el.appendChild(ansiToFragment(this.doc, piece, this.ansi));
      chunk.lines += pieceLines;
      this.visibleLines += pieceLines;
      rest = rest.slice(piece.length);
      restLines -= pieceLines;
    }
  }

  private evict(): void {
    let first = this.chunks[0];
    while (first && this.visibleLines - first.lines >= STREAM_VISIBLE_LINES) {
      first.el.remove();
      this.chunks.shift();
      this.visibleLines -= first.lines;
      this.hiddenLines += first.lines;
      first = this.chunks[0];
    }
    if (this.hiddenLines > 0) {
      this.note.hidden = false;
      this.note.textContent = `… ${this.hiddenLines.toLocaleString('en-US')} earlier lines hidden (kept in the notebook; the last ${STREAM_VISIBLE_LINES.toLocaleString('en-US')} are shown)`;
    }
  }

  /** Lines currently in the DOM (for tests). */
  get domLines(): number {
    return this.visibleLines;
  }

  get hidden(): number {
    return this.hiddenLines;
  }

  private copyExact(e: ClipboardEvent): void {
    // Chunks are blocks; copy the text as it is, without extra line breaks between them.
    const sel = this.doc.getSelection();
    if (!sel || sel.rangeCount === 0 || !e.clipboardData) return;
    e.clipboardData.setData('text/plain', sel.getRangeAt(0).toString());
    e.preventDefault();
  }

  dispose(): void {
    this.pendingCommitted = [];
    this.pendingLine = null;
  }
}

// ---------------------------------------------------------------------------------------------
// Rich outputs, one component per MIME kind

function imageSize(metadata: JsonObject, mime: string): { width?: number; height?: number; unconfined: boolean } {
  const specific = metadata[mime];
  const src: JsonObject = isJsonObject(specific) ? specific : metadata;
  const num = (v: JsonValue | undefined): number | undefined => (typeof v === 'number' && v > 0 ? v : undefined);
  return {
    width: num(src.width),
    height: num(src.height),
    unconfined: src.unconfined === true,
  };
}

export class ImageOutput {
  readonly element: HTMLImageElement;
  constructor(doc: Document, mime: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/svg+xml', data: string, metadata: JsonObject, alt: string) {
    const img = doc.createElement('img');
    img.className = 'output-image';
    img.alt = alt;
    img.decoding = 'async';
    if (mime === 'image/svg+xml') {
      // As an image, SVG cannot run scripts or load anything.
      img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(data)}`;
    } else {
      img.src = `data:${mime};base64,${data.replace(/\s+/g, '')}`;
    }
    const size = imageSize(metadata, mime);
    if (size.width) img.width = size.width;
    if (size.height) img.height = size.height;
    if (size.unconfined) img.classList.add('unconfined');
    const nb = metadata.needs_background;
    if (nb === 'light' || nb === 'dark') img.dataset.needsBackground = nb;
    this.element = img;
  }
}

/**
 * The box sanitized markup goes into: `.user-content` is CSS-contained (its own containing
 * block, stacking context and paint clip), so nothing in it is drawn, or takes a click,
 * outside it — whatever its styles say.
 */
function userContent(doc: Document, className: string, content: DocumentFragment): HTMLElement {
  const box = doc.createElement('div');
  box.className = `${className} user-content`;
  box.appendChild(content);
  return box;
}

export class HtmlOutput {
  readonly element: HTMLElement;
  constructor(doc: Document, html: string) {
    this.element = userContent(doc, 'output-html rendered-html', sanitizeHtml(html));
  }
}

export class MarkdownOutput {
  readonly element: HTMLElement;
  constructor(doc: Document, markdown: string) {
    this.element = userContent(doc, 'output-markdown rendered-markdown', renderMarkdown(markdown));
  }
}

export class LatexOutput {
  readonly element: HTMLElement;
  constructor(doc: Document, latex: string) {
    this.element = userContent(doc, 'output-latex', sanitizeHtml(latexToHtml(latex)));
  }
}

const UNTRUSTED_KIND: Record<string, string> = { 'text/html': 'HTML', 'image/svg+xml': 'SVG', 'text/markdown': 'Markdown' };

/** Characters of an untrusted output's source shown (a plotly or bokeh output can be megabytes). */
export const UNTRUSTED_SOURCE_SHOWN = 20_000;

/** A stored output of a notebook that is not trusted: its source as text, and why. */
export class UntrustedOutput {
  readonly element: HTMLElement;
  constructor(doc: Document, mime: string, source: string) {
    this.element = doc.createElement('div');
    this.element.className = 'output-untrusted';
    const note = doc.createElement('p');
    note.className = 'untrusted-note';
    note.textContent = `Not trusted: ${UNTRUSTED_KIND[mime] ?? mime} output shown as text. Trust this notebook to render it.`;
    const pre = doc.createElement('pre');
    pre.className = 'untrusted-source';
    const rest = source.length - UNTRUSTED_SOURCE_SHOWN;
    pre.textContent = rest > 0 ? `${source.slice(0, UNTRUSTED_SOURCE_SHOWN)}\n… ${rest.toLocaleString('en-US')} more characters` : source;
    this.element.append(note, pre);
  }
}

export class TextOutput {
  readonly element: HTMLElement;
  constructor(doc: Document, text: string) {
    this.element = doc.createElement('pre');
    this.element.className = 'output-text';
    this.element.appendChild(ansiToFragment(doc, text));
  }
}

/** application/json as a collapsible tree (native <details>, keyboard accessible). */
export class JsonOutput {
  readonly element: HTMLElement;
  constructor(doc: Document, value: JsonValue) {
    this.element = doc.createElement('div');
    this.element.className = 'output-json';
    this.element.appendChild(jsonNode(doc, value, null, 0));
  }
}

const JSON_ITEMS_SHOWN = 200;

function jsonNode(doc: Document, value: JsonValue, key: string | null, depth: number): HTMLElement {
  const keyEl = (): HTMLElement | null => {
    if (key === null) return null;
    const k = doc.createElement('span');
    k.className = 'json-key';
    k.textContent = `${key}: `;
    return k;
  };
  if (value !== null && typeof value === 'object') {
    const entries: [string, JsonValue][] = Array.isArray(value)
      ? value.map((v, i) => [String(i), v])
      : Object.entries(value);
    const details = doc.createElement('details');
    details.className = 'json-node';
    details.open = depth < 2;
    const summary = doc.createElement('summary');
    const k = keyEl();
    if (k) summary.appendChild(k);
    const kind = doc.createElement('span');
    kind.className = 'json-summary';
    kind.textContent = Array.isArray(value) ? `Array(${entries.length})` : `{${entries.length} ${entries.length === 1 ? 'key' : 'keys'}}`;
    summary.appendChild(kind);
    details.appendChild(summary);
    const list = doc.createElement('div');
    list.className = 'json-children';
    for (const [ck, cv] of entries.slice(0, JSON_ITEMS_SHOWN)) list.appendChild(jsonNode(doc, cv, ck, depth + 1));
    if (entries.length > JSON_ITEMS_SHOWN) {
      const more = doc.createElement('div');
      more.className = 'json-more';
      more.textContent = `… ${entries.length - JSON_ITEMS_SHOWN} more`;
      list.appendChild(more);
    }
    details.appendChild(list);
    return details;
  }
  const row = doc.createElement('div');
  row.className = 'json-leaf';
  const k = keyEl();
  if (k) row.appendChild(k);
  const v = doc.createElement('span');
  v.className = `json-${value === null ? 'null' : typeof value}`;
  v.textContent = typeof value === 'string' ? JSON.stringify(value) : String(value);
  row.appendChild(v);
  return row;
}

/** Render a MIME bundle with the richest renderer; returns the element and the MIME used. */
export function renderMimeBundle(doc: Document, bundle: MimeBundle, metadata: JsonObject): { element: HTMLElement; mime: string } {
  const mime = chooseMime(bundle);
  if (mime === null) {
    const note = doc.createElement('div');
    note.className = 'output-unsupported';
    const types = Object.keys(bundle);
    note.textContent = types.some((t) => t.includes('widget'))
      ? 'Interactive widgets are not supported in ipybox yet.'
      : `Output of type ${types.join(', ') || '(empty)'} cannot be shown.`;
    return { element: note, mime: 'none' };
  }
  const text = (): string => mimeText(bundle, mime) ?? '';
  switch (mime) {
    case 'text/html':
      return { element: new HtmlOutput(doc, text()).element, mime };
    case 'image/svg+xml':
    case 'image/png':
    case 'image/jpeg':
    case 'image/gif':
      return {
        element: new ImageOutput(doc, mime, text(), metadata, mimeText(bundle, 'text/plain') ?? 'Image output').element,
        mime,
      };
    case 'text/markdown':
      return { element: new MarkdownOutput(doc, text()).element, mime };
    case 'text/latex':
      return { element: new LatexOutput(doc, text()).element, mime };
    case 'application/json': {
      const v = bundle[mime];
      return { element: new JsonOutput(doc, v === undefined ? null : v).element, mime };
    }
    case 'text/plain':
      return { element: new TextOutput(doc, text()).element, mime };
    default:
      return assertNever(mime, 'MIME type');
  }
}

/**
 * The MIME type a rich output is shown as text for instead of rendered: a stored output of a
 * notebook that is not trusted whose richest type is HTML, SVG or Markdown. Null: rendered.
 */
export function heldBackMime(output: Output, trusted: boolean): RenderMime | null {
  if (trusted || (output.kind !== 'display_data' && output.kind !== 'execute_result') || !output.fromFile) return null;
  const mime = chooseMime(output.data);
  return mime !== null && TRUST_MIMES.has(mime) ? mime : null;
}

class RichOutputView implements OutputView {
  readonly element: HTMLElement;
  constructor(doc: Document, output: DisplayDataOutput | ExecuteResultOutput, trusted: boolean) {
    const prompt = output.kind === 'execute_result' && output.executionCount !== null ? `[${output.executionCount}]:` : '';
    const held = heldBackMime(output, trusted);
    const rendered =
      held !== null
        ? { element: new UntrustedOutput(doc, held, mimeText(output.data, held) ?? '').element, mime: held }
        : renderMimeBundle(doc, output.data, output.metadata);
    const { element, body } = outputShell(doc, output.kind, rendered.mime, prompt);
    if (held !== null) element.dataset.trusted = 'false';
    body.appendChild(rendered.element);
    this.element = element;
  }
  dispose(): void {}
}

export class ErrorOutputView implements OutputView {
  readonly element: HTMLElement;
  constructor(doc: Document, output: ErrorOutput) {
    const { element, body } = outputShell(doc, 'error', 'application/vnd.jupyter.error');
    const pre = doc.createElement('pre');
    pre.className = 'output-error';
    const text = output.traceback.length > 0 ? output.traceback.join('\n') : `${output.ename}: ${output.evalue}`;
    pre.appendChild(ansiToFragment(doc, text));
    body.appendChild(pre);
    element.setAttribute('role', 'group');
    element.setAttribute('aria-label', `Error: ${output.ename}${output.evalue ? `: ${output.evalue}` : ''}`);
    this.element = element;
  }
  dispose(): void {}
}

class UnknownOutputView implements OutputView {
  readonly element: HTMLElement;
  constructor(doc: Document, output: UnknownOutput) {
    const { element, body } = outputShell(doc, output.outputType || 'unknown', 'none');
    const note = doc.createElement('div');
    note.className = 'output-unsupported';
    note.textContent = `An output of type “${output.outputType}” is kept in the file but cannot be shown.`;
    body.appendChild(note);
    this.element = element;
  }
  dispose(): void {}
}

export interface OutputViewOptions {
  doc?: Document;
  /** The notebook is trusted: its stored HTML, SVG and Markdown outputs render (default true). */
  trusted?: boolean;
  scheduler?: FrameScheduler;
  /** Called after a stream rendered new text (keep a scroll area at the bottom). */
  onStreamRendered?: () => void;
}

export function createOutputView(output: Output, options: OutputViewOptions = {}): OutputView {
  const doc = options.doc ?? document;
  switch (output.kind) {
    case 'stream':
      return new StreamOutputView(output, doc, options.scheduler ?? frames, options.onStreamRendered);
    case 'display_data':
    case 'execute_result':
      return new RichOutputView(doc, output, options.trusted ?? true);
    case 'error':
      return new ErrorOutputView(doc, output);
    case 'unknown':
      return new UnknownOutputView(doc, output);
    default:
      return assertNever(output, 'output kind');
  }
}
