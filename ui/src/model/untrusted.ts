/**
 * Untrusted text as a person reads it: the rules of `src-tauri/src/display.rs`, so that the
 * window shows tool and server names, arguments, origins, reasons, descriptions and stderr as
 * the terminal, the native dialog and `ipybox audit` do. Text from kernel code, a notebook or
 * an MCP server can hold characters that are not visible as themselves: controls and escape
 * sequences, line separators, bidi overrides (`…/\u202etxt.stroper` reads `…/reports.txt`),
 * zero-width and other invisible characters. Each is written as `\uXXXX` (lowercase hex; above
 * U+FFFF its UTF-16 surrogate pair, as JSON writes it), so that escaping a JSON document's text
 * gives a JSON document of the same value. `tests/fixtures/untrusted-text/cases.json` pins the
 * rules for both implementations (tests/unit/untrusted.test.ts reads it).
 *
 * Escaping is idempotent (an escape holds only visible ASCII), so text escaped by a model
 * helper may be escaped again where a view puts it together with more.
 */

/**
 * Whether code point `n` is not plainly visible as itself: it controls the terminal or the
 * layout (controls, line separators, bidi), shows as nothing (format characters, blank
 * letters) or as whatever a font makes of it (private use, noncharacters). Mirrors `hidden`
 * in display.rs, range for range. A lone surrogate (which no Rust string holds) is hidden too.
 */
export function isHidden(n: number): boolean {
  return (
    // C0 controls, DEL, C1 controls (U+009B is CSI, U+009D OSC, U+0085 NEL)
    n <= 0x1f ||
    (n >= 0x7f && n <= 0x9f) ||
    // soft hyphen, combining grapheme joiner
    n === 0xad ||
    n === 0x34f ||
    // Arabic number signs and end of ayah, Syriac abbreviation mark, Arabic letter mark
    (n >= 0x600 && n <= 0x605) ||
    n === 0x6dd ||
    n === 0x70f ||
    n === 0x61c ||
    n === 0x890 ||
    n === 0x891 ||
    n === 0x8e2 ||
    // Hangul fillers, Khmer inherent vowels, Mongolian selectors and vowel separator
    n === 0x115f ||
    n === 0x1160 ||
    n === 0x17b4 ||
    n === 0x17b5 ||
    (n >= 0x180b && n <= 0x180f) ||
    n === 0x3164 ||
    n === 0xffa0 ||
    // zero-width space and joiners, LRM, RLM
    (n >= 0x200b && n <= 0x200f) ||
    // line and paragraph separators, bidi embeddings and overrides
    (n >= 0x2028 && n <= 0x202e) ||
    // word joiner, invisible operators, bidi isolates, deprecated format characters
    (n >= 0x2060 && n <= 0x206f) ||
    // lone surrogates (JavaScript strings can hold them)
    (n >= 0xd800 && n <= 0xdfff) ||
    // private use
    (n >= 0xe000 && n <= 0xf8ff) ||
    (n >= 0xf0000 && n <= 0x10ffff) ||
    // noncharacters in the BMP, zero-width no-break space (BOM), interlinear annotation
    (n >= 0xfdd0 && n <= 0xfdef) ||
    n === 0xfeff ||
    (n >= 0xfff9 && n <= 0xfffb) ||
    // Kaithi and Egyptian format characters, shorthand format controls, musical formatting,
    // tags and the rest of plane 14 (supplementary variation selectors)
    n === 0x110bd ||
    n === 0x110cd ||
    (n >= 0x13430 && n <= 0x1343f) ||
    (n >= 0x1bca0 && n <= 0x1bca3) ||
    (n >= 0x1d173 && n <= 0x1d17a) ||
    (n >= 0xe0000 && n <= 0xe0fff) ||
    // noncharacters at the end of every plane
    (n & 0xfffe) === 0xfffe
  );
}

const NEWLINE = 0x0a;
const TAB = 0x09;

function escapeKeeping(text: string, keepLines: boolean): string {
  const n = text.length;
  let out = '';
  // Where the text not yet copied to `out` starts.
  let from = 0;
  for (let i = 0; i < n; i++) {
    let cp = text.charCodeAt(i);
    let width = 1;
    // Plain ASCII (and most text) is visible: the common case costs one comparison.
    if (cp >= 0x20 && cp < 0x7f) continue;
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < n) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        width = 2;
      }
    }
    if (isHidden(cp) && !(keepLines && (cp === NEWLINE || cp === TAB))) {
      out += text.slice(from, i);
      for (let k = 0; k < width; k++) out += `\\u${text.charCodeAt(i + k).toString(16).padStart(4, '0')}`;
      from = i + width;
    }
    i += width - 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * `text` on one line, every character a person could not see as itself written as `\uXXXX`:
 * C0 and C1 controls (newline and tab too), DEL, U+2028/U+2029, bidi controls, zero-width and
 * other invisible format characters, blank letters, private-use characters and noncharacters.
 * Lookalike letters, combining marks, emoji and spaces are left alone. For names, titles and
 * one-line values.
 */
export function escapeUntrusted(text: string): string {
  return escapeKeeping(text, false);
}

/**
 * `escapeUntrusted`, keeping newlines and tabs: for text shown on several lines (JSON shown
 * indented, stderr, generated code). `\r` is escaped: it could rewrite the line it ends.
 */
export function escapeUntrustedLines(text: string): string {
  return escapeKeeping(text, true);
}

/**
 * Escaped text cut to at most `limit` characters with "…" at the end, neither cutting an
 * escape (`\u20…`) nor a surrogate pair (an emoji) in two. Text within the limit is returned
 * as it is.
 */
export function clipEscaped(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let cut = Math.max(0, limit - 1);
  const c = text.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut--;
  // A `\u` escape begun in the last five characters and not finished before the cut.
  const tail = text.slice(Math.max(0, cut - 5), cut);
  const m = /\\(u[0-9a-f]{0,3})?$/.exec(tail);
  if (m && /^\\u[0-9a-f]{4}/.test(text.slice(cut - m[0].length, cut - m[0].length + 6))) cut -= m[0].length;
  return `${text.slice(0, cut)}…`;
}
