/**
 * Notebook-wide find and replace, the text part: a query (plain or a regular expression, case
 * sensitive or not) compiled once, the matches in a string, and the text that replaces one
 * match (with `$1`, `$<name>`, `$&` and `$$` in regular-expression mode, as JupyterLab does).
 */

export interface FindOptions {
  regex: boolean;
  caseSensitive: boolean;
}

/** A match: UTF-16 offsets in the searched text, `to` exclusive. */
export interface Span {
  from: number;
  to: number;
}

export type Query = { kind: 'empty' } | { kind: 'invalid'; message: string } | { kind: 'ok'; re: RegExp; regex: boolean };

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The query for `text`; an invalid regular expression gives a message in plain words. */
export function compileQuery(text: string, options: FindOptions): Query {
  if (text === '') return { kind: 'empty' };
  const flags = `gm${options.caseSensitive ? '' : 'i'}`;
  if (!options.regex) return { kind: 'ok', re: new RegExp(escapeRegExp(text), flags), regex: false };
  try {
    return { kind: 'ok', re: new RegExp(text, flags), regex: true };
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '') : String(err);
    return { kind: 'invalid', message: `Not a valid regular expression: ${why}.` };
  }
}

/** The matches of `re` (a global RegExp) in `text`, in order; empty matches are skipped. */
export function findAll(text: string, re: RegExp, limit = Number.POSITIVE_INFINITY): Span[] {
  const out: Span[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null && out.length < limit; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex = m.index + 1;
      continue;
    }
    out.push({ from: m.index, to: m.index + m[0].length });
  }
  return out;
}

/**
 * What replaces the match of `query` at `span` in `text`, or null when the text there no
 * longer matches (it changed since the search).
 */
export function replacementFor(text: string, span: Span, query: Extract<Query, { kind: 'ok' }>, template: string): string | null {
  const sticky = new RegExp(query.re.source, query.re.flags.replace('g', '') + 'y');
  sticky.lastIndex = span.from;
  const m = sticky.exec(text);
  if (!m || m.index + m[0].length !== span.to) return null;
  return query.regex ? expandTemplate(template, m) : template;
}

/** `$1`…`$99`, `$<name>`, `$&` and `$$` in a replacement, as String.prototype.replace reads them. */
export function expandTemplate(template: string, m: RegExpExecArray): string {
  return template.replace(/\$(\$|&|<([^>]*)>|(\d{1,2}))/g, (whole, what: string, name: string | undefined, digits: string | undefined) => {
    if (what === '$') return '$';
    if (what === '&') return m[0];
    if (name !== undefined) return m.groups?.[name] ?? (m.groups ? '' : whole);
    if (digits !== undefined) {
      let n = Number(digits);
      // "$12" with one group is group 1 followed by "2".
      if (n >= m.length && digits.length === 2) {
        n = Number(digits[0]);
        if (n > 0 && n < m.length) return (m[n] ?? '') + digits.slice(1);
      }
      if (n > 0 && n < m.length) return m[n] ?? '';
    }
    return whole;
  });
}
