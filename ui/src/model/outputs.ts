import { cloneJson, isJsonObject, type JsonObject, type JsonValue } from '../util/json';
import { countNewlines, joinMultiline, splitLines } from './text';

/** MIME type → value. Text types hold one string (multi-line arrays from files are joined); JSON types hold JSON. */
export type MimeBundle = { [mime: string]: JsonValue };

/** Characters of one stream kept in the model before its head is dropped (the view keeps much less). */
export const STREAM_MODEL_LIMIT = 8_000_000;

export interface StreamDelta {
  /** Complete lines (each ending in '\n') that became final with this append. */
  committed: string;
  /** The current, unterminated line as it now reads (after '\r' / '\b' overwrites). */
  line: string;
}

/** JSON MIME types are stored as JSON, never split into lines (nbformat's `_is_json_mime`). */
export function isJsonMime(mime: string): boolean {
  return mime === 'application/json' || (mime.startsWith('application/') && mime.endsWith('+json'));
}

/** MIME types whose strings nbformat writes as arrays of lines. */
function isSplitMime(mime: string): boolean {
  return mime.startsWith('text/') || mime === 'application/javascript' || mime === 'image/svg+xml';
}

export function mimeBundleFromJson(value: JsonValue | undefined): MimeBundle {
  const out: MimeBundle = {};
  if (!isJsonObject(value)) return out;
  for (const [mime, v] of Object.entries(value)) {
    if (isJsonMime(mime)) {
      out[mime] = cloneJson(v);
    } else {
      const joined = joinMultiline(v);
      out[mime] = joined ?? cloneJson(v);
    }
  }
  return out;
}

export function mimeBundleToJson(bundle: MimeBundle): JsonObject {
  const out: JsonObject = {};
  for (const [mime, v] of Object.entries(bundle)) {
    out[mime] = typeof v === 'string' && isSplitMime(mime) ? splitLines(v) : cloneJson(v);
  }
  return out;
}

/**
 * MIME types whose stored outputs render only in a trusted notebook (as JupyterLab's
 * untrusted outputs): until then they are shown as their source text.
 */
export const TRUST_MIMES: ReadonlySet<string> = new Set(['text/html', 'image/svg+xml', 'text/markdown']);

/** A rich output read from a file that holds a MIME type of TRUST_MIMES. */
export function needsTrust(output: Output): boolean {
  if (output.kind !== 'display_data' && output.kind !== 'execute_result') return false;
  return output.fromFile && Object.keys(output.data).some((mime) => TRUST_MIMES.has(mime));
}

/** The text of a MIME entry (a JSON value is pretty-printed). */
export function mimeText(bundle: MimeBundle, mime: string): string | null {
  const v = bundle[mime];
  if (v === undefined) return null;
  if (typeof v === 'string') return v;
  const joined = joinMultiline(v);
  return joined ?? JSON.stringify(v, null, 2);
}

/**
 * One stream output (stdout or stderr). Text is processed as a terminal would: '\r' moves back
 * to the start of the current line and later text overwrites it (tqdm), '\b' moves back one
 * character. `committed` holds complete lines, `line` the current one.
 */
export class StreamOutput {
  readonly kind = 'stream';
  readonly name: string;
  /** Unknown keys of the stored output, written back. */
  extra: JsonObject;
  /** The output exactly as read from the file while it is untouched (written back byte for byte). */
  raw: JsonObject | null;
  private committed = '';
  private line = '';
  private col = 0;
  private droppedLines = 0;

  constructor(name: string, text = '', raw: JsonObject | null = null, extra: JsonObject = {}) {
    this.name = name;
    this.extra = extra;
    if (text) this.process(text);
    this.raw = raw;
  }

  /** Append kernel text; returns what changed for the view. */
  append(text: string): StreamDelta {
    this.raw = null;
    return this.process(text);
  }

  get text(): string {
    const note = this.droppedLines > 0 ? `[ipybox: ${this.droppedLines} earlier lines of this output were not kept]\n` : '';
    return note + this.committed + this.line;
  }

  /** Lines dropped from the model because the stream exceeded STREAM_MODEL_LIMIT. */
  get dropped(): number {
    return this.droppedLines;
  }

  /** The complete lines and the current line, for a view that renders from scratch. */
  snapshot(): StreamDelta {
    const note = this.droppedLines > 0 ? `[ipybox: ${this.droppedLines} earlier lines of this output were not kept]\n` : '';
    return { committed: note + this.committed, line: this.line };
  }

  toJson(): JsonObject {
    if (this.raw) return cloneJson(this.raw);
    return { ...cloneJson(this.extra), output_type: 'stream', name: this.name, text: splitLines(this.text) };
  }

  private process(text: string): StreamDelta {
    let newly = '';
    if (this.col === this.line.length && !/[\r\b]/.test(text)) {
      // Fast path: plain appended text.
      const last = text.lastIndexOf('\n');
      if (last === -1) {
        this.line += text;
      } else {
        newly = this.line + text.slice(0, last + 1);
        this.line = text.slice(last + 1);
      }
      this.col = this.line.length;
    } else {
      const re = /[\r\n\b]/g;
      let start = 0;
      let m: RegExpExecArray | null;
      while ((m = re.exec(text)) !== null) {
        if (m.index > start) this.write(text.slice(start, m.index));
        const c = m[0];
        if (c === '\n') {
          newly += this.line + '\n';
          this.line = '';
          this.col = 0;
        } else if (c === '\r') {
          this.col = 0;
        } else {
          this.col = Math.max(0, this.col - 1);
        }
        start = m.index + 1;
      }
      if (start < text.length) this.write(text.slice(start));
    }
    if (newly) {
      this.committed += newly;
      if (this.committed.length > STREAM_MODEL_LIMIT) this.dropHead();
    }
    return { committed: newly, line: this.line };
  }

  private write(s: string): void {
    const l = this.line;
    this.line = l.slice(0, this.col) + s + l.slice(this.col + s.length);
    this.col += s.length;
  }

  private dropHead(): void {
    let cut = this.committed.length - Math.floor(STREAM_MODEL_LIMIT / 2);
    const nl = this.committed.indexOf('\n', cut);
    cut = nl === -1 ? this.committed.length : nl + 1;
    this.droppedLines += countNewlines(this.committed.slice(0, cut));
    this.committed = this.committed.slice(cut);
  }
}

export interface DisplayDataOutput {
  kind: 'display_data';
  data: MimeBundle;
  metadata: JsonObject;
  /** Read from a file (not produced by a run in this session): rendered only when the notebook is trusted. */
  fromFile: boolean;
  /** Transient display id (update_display_data targets it); never written to the file. */
  displayId: string | null;
  extra: JsonObject;
  raw: JsonObject | null;
}

export interface ExecuteResultOutput {
  kind: 'execute_result';
  executionCount: number | null;
  data: MimeBundle;
  metadata: JsonObject;
  /** Read from a file (not produced by a run in this session): rendered only when the notebook is trusted. */
  fromFile: boolean;
  extra: JsonObject;
  raw: JsonObject | null;
}

export interface ErrorOutput {
  kind: 'error';
  ename: string;
  evalue: string;
  traceback: string[];
  extra: JsonObject;
  raw: JsonObject | null;
}

/** An output type this UI does not know, kept as it was. */
export interface UnknownOutput {
  kind: 'unknown';
  outputType: string;
  raw: JsonObject;
}

export type Output = StreamOutput | DisplayDataOutput | ExecuteResultOutput | ErrorOutput | UnknownOutput;

/** Known keys per output type; everything else goes to `extra`. */
const KNOWN_KEYS: Record<string, readonly string[]> = {
  stream: ['output_type', 'name', 'text'],
  display_data: ['output_type', 'data', 'metadata'],
  execute_result: ['output_type', 'data', 'metadata', 'execution_count'],
  error: ['output_type', 'ename', 'evalue', 'traceback'],
};

function extraKeys(obj: JsonObject, known: readonly string[]): JsonObject {
  const extra: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) if (!known.includes(k)) extra[k] = cloneJson(v);
  return extra;
}

export function outputFromJson(obj: JsonObject): Output {
  const type = typeof obj.output_type === 'string' ? obj.output_type : '';
  const raw = cloneJson(obj);
  switch (type) {
    case 'stream': {
      const name = typeof obj.name === 'string' ? obj.name : 'stdout';
      return new StreamOutput(name, joinMultiline(obj.text) ?? '', raw, extraKeys(obj, KNOWN_KEYS.stream ?? []));
    }
    case 'display_data':
      return {
        kind: 'display_data',
        data: mimeBundleFromJson(obj.data),
        metadata: isJsonObject(obj.metadata) ? cloneJson(obj.metadata) : {},
        displayId: null,
        fromFile: true,
        extra: extraKeys(obj, KNOWN_KEYS.display_data ?? []),
        raw,
      };
    case 'execute_result':
      return {
        kind: 'execute_result',
        executionCount: typeof obj.execution_count === 'number' ? obj.execution_count : null,
        data: mimeBundleFromJson(obj.data),
        metadata: isJsonObject(obj.metadata) ? cloneJson(obj.metadata) : {},
        fromFile: true,
        extra: extraKeys(obj, KNOWN_KEYS.execute_result ?? []),
        raw,
      };
    case 'error': {
      const tb = Array.isArray(obj.traceback) ? obj.traceback.filter((l): l is string => typeof l === 'string') : [];
      return {
        kind: 'error',
        ename: typeof obj.ename === 'string' ? obj.ename : '',
        evalue: typeof obj.evalue === 'string' ? obj.evalue : '',
        traceback: tb,
        extra: extraKeys(obj, KNOWN_KEYS.error ?? []),
        raw,
      };
    }
    default:
      return { kind: 'unknown', outputType: type, raw };
  }
}

export function outputToJson(output: Output): JsonObject {
  switch (output.kind) {
    case 'stream':
      return output.toJson();
    case 'display_data':
      if (output.raw) return cloneJson(output.raw);
      return {
        ...cloneJson(output.extra),
        output_type: 'display_data',
        data: mimeBundleToJson(output.data),
        metadata: cloneJson(output.metadata),
      };
    case 'execute_result':
      if (output.raw) return cloneJson(output.raw);
      return {
        ...cloneJson(output.extra),
        output_type: 'execute_result',
        execution_count: output.executionCount,
        data: mimeBundleToJson(output.data),
        metadata: cloneJson(output.metadata),
      };
    case 'error':
      if (output.raw) return cloneJson(output.raw);
      return {
        ...cloneJson(output.extra),
        output_type: 'error',
        ename: output.ename,
        evalue: output.evalue,
        traceback: [...output.traceback],
      };
    case 'unknown':
      return cloneJson(output.raw);
  }
}
