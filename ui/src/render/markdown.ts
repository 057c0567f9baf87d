/**
 * Markdown (cells and text/markdown outputs) with markdown-it, and TeX math with KaTeX:
 * `$…$`, `\(…\)` inline; `$$…$$`, `\[…\]` and `\begin{env}…\end{env}` displayed — what
 * JupyterLab's MathJax accepts in Markdown (KaTeX itself loads the first time it is needed:
 * `math.ts`). The HTML is then sanitized like any output.
 */
import MarkdownIt, { type MarkdownIt as Md, type StateBlock, type StateInline } from 'markdown-it';
import { isJsonObject, type JsonObject } from '../util/json';
import { joinMultiline } from '../model/text';
import { renderTex } from './math';
import { sanitizeHtml } from './sanitize';

function isWhitespace(ch: string | undefined): boolean {
  return ch === undefined || /\s/.test(ch);
}

function mathInline(state: StateInline, silent: boolean): boolean {
  const src = state.src;
  const start = state.pos;
  const ch = src[start];
  let content: string;
  let display: boolean;
  let end: number;
  if (ch === '\\') {
    const open = src[start + 1];
    if (open !== '(' && open !== '[') return false;
    const close = open === '(' ? '\\)' : '\\]';
    const at = src.indexOf(close, start + 2);
    if (at === -1) return false;
    content = src.slice(start + 2, at);
    display = open === '[';
    end = at + 2;
  } else if (ch === '$') {
    if (src[start + 1] === '$') {
      const at = src.indexOf('$$', start + 2);
      if (at === -1) return false;
      content = src.slice(start + 2, at);
      display = true;
      end = at + 2;
    } else {
      if (isWhitespace(src[start + 1])) return false;
      let at = start + 1;
      for (;;) {
        at = src.indexOf('$', at);
        if (at === -1) return false;
        if (src[at - 1] === '\\') {
          at++;
          continue;
        }
        break;
      }
      if (isWhitespace(src[at - 1])) return false;
      if (/[0-9]/.test(src[at + 1] ?? '')) return false;
      content = src.slice(start + 1, at);
      display = false;
      end = at + 1;
    }
  } else {
    return false;
  }
  if (!content.trim()) return false;
  if (!silent) {
    const token = state.push(display ? 'math_display' : 'math_inline', 'math', 0);
    token.content = content;
    token.markup = ch === '$' ? (display ? '$$' : '$') : '\\';
  }
  state.pos = end;
  return true;
}

function lineText(state: StateBlock, line: number): string {
  const b = state.bMarks[line] ?? 0;
  const t = state.tShift[line] ?? 0;
  const e = state.eMarks[line] ?? 0;
  return state.src.slice(b + t, e);
}

function mathBlock(state: StateBlock, startLine: number, endLine: number, silent: boolean): boolean {
  if ((state.sCount[startLine] ?? 0) - state.blkIndent >= 4) return false;
  const first = lineText(state, startLine);
  let open: string;
  let close: string;
  let keepDelimiters = false;
  const env = /^\\begin\{([a-zA-Z*]+)\}/.exec(first);
  if (first.startsWith('$$')) {
    open = '$$';
    close = '$$';
  } else if (first.startsWith('\\[')) {
    open = '\\[';
    close = '\\]';
  } else if (env) {
    open = '';
    close = `\\end{${env[1] ?? ''}}`;
    keepDelimiters = true;
  } else {
    return false;
  }
  const afterOpen = first.slice(open.length);
  let lines: string[] = [];
  let endAt = -1;
  const closeIndex = (text: string, from: number): number => text.indexOf(close, from);
  const sameLine = closeIndex(afterOpen, 0);
  let next = startLine;
  if (sameLine !== -1 && afterOpen.slice(sameLine + close.length).trim() === '') {
    lines = [keepDelimiters ? afterOpen.slice(0, sameLine + close.length) : afterOpen.slice(0, sameLine)];
    endAt = startLine;
  } else {
    lines.push(afterOpen);
    for (next = startLine + 1; next < endLine; next++) {
      const text = lineText(state, next);
      const at = closeIndex(text, 0);
      if (at !== -1) {
        if (text.slice(at + close.length).trim() !== '') return false;
        lines.push(keepDelimiters ? text.slice(0, at + close.length) : text.slice(0, at));
        endAt = next;
        break;
      }
      lines.push(text);
    }
  }
  if (endAt === -1) return false;
  if (silent) return true;
  state.line = endAt + 1;
  const token = state.push('math_block', 'math', 0);
  token.block = true;
  token.content = lines.join('\n');
  token.map = [startLine, state.line];
  token.markup = open || close;
  return true;
}

function attachmentUrl(attachments: JsonObject | null, name: string): string | null {
  if (!attachments) return null;
  const bundle = attachments[name];
  if (!isJsonObject(bundle)) return null;
  for (const [mime, value] of Object.entries(bundle)) {
    if (!mime.startsWith('image/')) continue;
    const text = joinMultiline(value);
    if (text === null) continue;
    if (mime === 'image/svg+xml') return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
    return `data:${mime};base64,${text.replace(/\s+/g, '')}`;
  }
  return null;
}

type RenderEnv = { [key: string]: unknown; attachments: JsonObject | null };

function envAttachments(env: unknown): JsonObject | null {
  if (typeof env === 'object' && env !== null && 'attachments' in env && isJsonObject(env.attachments)) return env.attachments;
  return null;
}

let md: Md | null = null;

function parser(): Md {
  if (md) return md;
  const m = new MarkdownIt({ html: true, linkify: true, typographer: false, breaks: false });
  // Links and images are vetted by the sanitizer; only script-like schemes are refused here.
  m.validateLink = (url: string) => !/^\s*(javascript|vbscript|file):/i.test(url);
  m.inline.ruler.before('escape', 'math_inline', mathInline);
  m.block.ruler.before('fence', 'math_block', mathBlock, { alt: ['paragraph', 'reference', 'blockquote', 'list'] });
  m.renderer.rules.math_inline = (tokens, idx) => renderTex(tokens[idx]?.content ?? '', false);
  m.renderer.rules.math_display = (tokens, idx) =>
    `<span class="math-display">${renderTex(tokens[idx]?.content ?? '', true)}</span>`;
  m.renderer.rules.math_block = (tokens, idx) =>
    `<div class="math-display">${renderTex(tokens[idx]?.content ?? '', true)}</div>\n`;
  const image = m.renderer.rules.image;
  m.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    const src = String(token?.attrGet('src') ?? '');
    if (token && src.startsWith('attachment:')) {
      const url = attachmentUrl(envAttachments(env), decodeURIComponent(src.slice('attachment:'.length)));
      if (url) token.attrSet('src', url);
    }
    return image ? image(tokens, idx, options, env, self) : self.renderToken(tokens, idx, options);
  };
  md = m;
  return m;
}

/** Markdown → HTML string (not yet sanitized). */
export function markdownToHtml(source: string, attachments: JsonObject | null = null): string {
  const env: RenderEnv = { attachments };
  return parser().render(source, env);
}

/** Markdown → sanitized DOM. */
export function renderMarkdown(source: string, attachments: JsonObject | null = null): DocumentFragment {
  return sanitizeHtml(markdownToHtml(source, attachments));
}

/** A text/latex output (usually `$$…$$` or `$…$`) → KaTeX HTML string. */
export function latexToHtml(source: string): string {
  let tex = source.trim();
  let display = true;
  if (tex.startsWith('$$') && tex.endsWith('$$') && tex.length >= 4) tex = tex.slice(2, -2);
  else if (tex.startsWith('\\[') && tex.endsWith('\\]')) tex = tex.slice(2, -2);
  else if (tex.startsWith('$') && tex.endsWith('$') && tex.length >= 2) {
    tex = tex.slice(1, -1);
    display = false;
  } else if (tex.startsWith('\\(') && tex.endsWith('\\)')) {
    tex = tex.slice(2, -2);
    display = false;
  }
  return renderTex(tex, display);
}
