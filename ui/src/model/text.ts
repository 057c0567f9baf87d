/**
 * Python's `str.splitlines(keepends=True)`, which nbformat uses to store multi-line strings
 * as arrays. Line boundaries: \n, \r, \r\n, \v, \f, \x1c, \x1d, \x1e, \x85, \u2028, \u2029.
 */
export function splitLines(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0d) {
      if (i + 1 < n && text.charCodeAt(i + 1) === 0x0a) i++;
      out.push(text.slice(start, i + 1));
      start = i + 1;
    } else if (
      c === 0x0a || c === 0x0b || c === 0x0c || c === 0x1c || c === 0x1d || c === 0x1e ||
      c === 0x85 || c === 0x2028 || c === 0x2029
    ) {
      out.push(text.slice(start, i + 1));
      start = i + 1;
    }
  }
  if (start < n) out.push(text.slice(start));
  return out;
}

/** nbformat multiline string: a string or an array of strings to be joined. */
export function joinMultiline(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join('');
  return null;
}

/** Number of '\n' in text. */
export function countNewlines(text: string): number {
  let count = 0;
  let i = text.indexOf('\n');
  while (i !== -1) {
    count++;
    i = text.indexOf('\n', i + 1);
  }
  return count;
}

/** File name of a path, for either separator. */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}
