/**
 * "Save cell as tool": a cell's code becomes a saved code action (`gentools/<category>/<name>/`).
 * The person picks which of the cell's variables become parameters (their assignment in the
 * cell becomes the default) and which value is the result. Pure; no DOM.
 */
import type { JsonValue } from '../util/json';

/** A top-level `name = value` of the cell that can become a parameter. */
export interface Candidate {
  name: string;
  /** 0-based first line of the assignment. */
  line: number;
  /** 0-based last line of the assignment (brackets, a backslash or a triple-quoted string may carry it over several). */
  end: number;
  /** The value as JSON, when the right side is a plain literal (it becomes the default). */
  value?: JsonValue;
  /** A Python annotation guessed from the literal (`object` when it is not one). */
  type: string;
}

export interface CellAnalysis {
  /** Names assigned at the top level by a statement of their own, in order of first assignment. */
  candidates: Candidate[];
  /** Every name assigned at the top level (a result may be any of them). */
  assigned: string[];
  /** The last line when it is an expression (its value is what the cell shows). */
  lastExpression: string | null;
}

/** What the backend saves (the engine's `CodeAction`). */
export interface CodeActionDraft {
  name: string;
  category: string;
  description: string;
  parameters: { name: string; type: string; description?: string; default?: JsonValue }[];
  returns?: { type: string; description?: string };
  code: string;
}

export interface SaveChoices {
  name: string;
  category: string;
  description: string;
  /** Names of candidates that become parameters, in the cell's order. */
  parameters: string[];
  /** Types the person set, by parameter name (else the guessed one). */
  types?: Record<string, string>;
  /** A variable's name, or `LAST_EXPRESSION`. */
  result: string | null;
}

export const LAST_EXPRESSION = '<last expression>';

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const KEYWORDS = new Set(['False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break', 'class', 'continue', 'def', 'del', 'elif', 'else', 'except', 'finally', 'for', 'from', 'global', 'if', 'import', 'in', 'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise', 'return', 'try', 'while', 'with', 'yield', 'match', 'case', 'type', '_']);

/** May `name` name a module or a parameter? (A Python identifier, not a keyword, not private.) */
export function isIdentifier(name: string): boolean {
  return IDENT.test(name) && !KEYWORDS.has(name) && !name.startsWith('_');
}

/** A Python literal as JSON with its annotation, or null when it is not a plain literal. */
export function parseLiteral(text: string): { value: JsonValue; type: string } | null {
  const t = text.trim();
  if (/^-?\d+$/.test(t)) return { value: Number(t), type: 'int' };
  if (/^-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$/.test(t)) return { value: Number(t), type: 'float' };
  if (t === 'True' || t === 'False') return { value: t === 'True', type: 'bool' };
  if (t === 'None') return { value: null, type: 'object' };
  const str = /^(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')$/.exec(t);
  if (str) {
    const body = str[1] ?? str[2] ?? '';
    if (/\\[^\\'"nt]/.test(body)) return null;
    const value = body.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
    return { value, type: 'str' };
  }
  if (/^\[.*\]$/.test(t)) {
    try {
      const json = JSON.parse(t.replace(/'/g, '"').replace(/\bTrue\b/g, 'true').replace(/\bFalse\b/g, 'false').replace(/\bNone\b/g, 'null')) as JsonValue;
      if (Array.isArray(json)) {
        const kinds = new Set(json.map((v) => (typeof v === 'string' ? 'str' : typeof v === 'number' ? (Number.isInteger(v) ? 'int' : 'float') : typeof v === 'boolean' ? 'bool' : 'object')));
        const inner = kinds.size === 1 ? [...kinds][0] : 'object';
        return { value: json, type: inner === 'object' ? 'list' : `list[${inner}]` };
      }
    } catch {
      return null;
    }
  }
  return null;
}

/** Where a line leaves the tokenizer: open brackets, an open triple-quoted string, a backslash continuation. */
interface LineState {
  depth: number;
  triple: string | null;
  continued: boolean;
}

/** Does the statement go on after a line that leaves this state? */
function goesOn(state: LineState): boolean {
  return state.depth > 0 || state.triple !== null || state.continued;
}

/** The cell's top-level assignments and its last expression. */
export function analyzeCell(source: string): CellAnalysis {
  const lines = source.replace(/\r\n/g, '\n').split('\n');
  // One pass of the tokenizer's view: where each line leaves it, and whether a `;` joins
  // statements on it.
  const after: LineState[] = [];
  const joins: boolean[] = [];
  let state: LineState = { depth: 0, triple: null, continued: false };
  for (const line of lines) {
    const scanned = scan(line, state.depth, state.triple);
    state = { depth: scanned.depth, triple: scanned.triple, continued: scanned.continued };
    after.push(state);
    joins.push(scanned.semicolon);
  }
  const starts = lines.map((line, i) => {
    const before = i === 0 ? undefined : after[i - 1];
    return (before === undefined || !goesOn(before)) && !/^\s/.test(line);
  });
  /** The last line of the statement that starts at line `i`. */
  const endOf = (i: number): number => {
    let j = i;
    while (j < lines.length - 1 && goesOn(after[j] ?? state)) j++;
    return j;
  };
  const candidates: Candidate[] = [];
  const assigned: string[] = [];
  const seen = new Set<string>();
  lines.forEach((line, i) => {
    if (!starts[i]) return;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*[^=]+)?=(?!=)\s*(.*)$/.exec(line);
    if (!m || !m[1] || !isIdentifier(m[1])) return;
    const name = m[1];
    if (seen.has(name)) return;
    seen.add(name);
    assigned.push(name);
    const end = endOf(i);
    // `x = 1; y = 2`: removing x's statement would take y's with it.
    if (joins.slice(i, end + 1).some(Boolean)) return;
    const rest = [m[2] ?? '', ...lines.slice(i + 1, end + 1)].map((l) => stripComment(l).replace(/\\\s*$/, '')).join(' ');
    const literal = parseLiteral(rest);
    candidates.push({ name, line: i, end, type: literal?.type ?? 'object', ...(literal ? { value: literal.value } : {}) });
  });
  let lastExpression: string | null = null;
  for (let i = lines.length - 1; i >= 0; i--) {
    const t = (lines[i] ?? '').trim();
    if (t === '' || t.startsWith('#')) continue;
    const statement = /^(import|from|def|class|if|elif|else|for|while|with|try|except|finally|return|raise|assert|del|pass|break|continue|global|nonlocal|async|await|@)\b/.test(t)
      || /^[A-Za-z_][A-Za-z0-9_.]*\s*(\[[^\]]*\])?\s*(:[^=]*)?([-+*/%&|^@]|\*\*|\/\/|<<|>>)?=(?!=)/.test(t)
      || t.endsWith(':');
    lastExpression = starts[i] && !goesOn(state) && !statement ? t : null;
    break;
  }
  return { candidates, assigned, lastExpression };
}

function stripComment(text: string): string {
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#') return text.slice(0, i);
  }
  return text;
}

/**
 * Bracket depth and open triple quote after `line`, roughly as Python's tokenizer sees them;
 * whether it ends in a backslash that carries the statement on, and whether a `;` outside
 * brackets and strings puts another statement on it.
 */
function scan(line: string, depth: number, triple: string | null): { depth: number; triple: string | null; continued: boolean; semicolon: boolean } {
  let quote: string | null = null;
  let semicolon = false;
  let comment = false;
  for (let i = 0; i < line.length; i++) {
    if (triple) {
      if (line[i] === '\\') i++;
      else if (line.startsWith(triple, i)) {
        triple = null;
        i += 2;
      }
      continue;
    }
    const c = line[i] ?? '';
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (line.startsWith('"""', i) || line.startsWith("'''", i)) {
      triple = line.slice(i, i + 3);
      i += 2;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#') {
      comment = true;
      break;
    } else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth = Math.max(0, depth - 1);
    else if (c === ';' && depth === 0) semicolon = true;
  }
  // A backslash ending a line outside a comment joins it to the next (inside a one-quote
  // string too, where Python carries the string on).
  const continued = triple === null && !comment && /\\$/.test(line);
  return { depth, triple, continued, semicolon };
}

/** Why the choices cannot be saved yet, one message each (empty: they can). */
export function checkChoices(analysis: CellAnalysis, choices: SaveChoices): string[] {
  const problems: string[] = [];
  if (!isIdentifier(choices.name)) problems.push('The name must be a Python identifier: letters, digits and _, not starting with a digit or _.');
  if (!isIdentifier(choices.category)) problems.push('The category must be a Python identifier too.');
  if (choices.description.trim() === '') problems.push('Say in a sentence what the tool does: it becomes its documentation.');
  if (choices.result === null) problems.push('Choose the value the tool returns.');
  for (const p of choices.parameters) {
    const t = (choices.types?.[p] ?? '').trim();
    if (t !== '' && !/^[A-Za-z0-9_., |[\]'"-]+$/.test(t)) problems.push(`The type of ${p} is not a Python annotation.`);
  }
  if (choices.result !== null && choices.result !== LAST_EXPRESSION && !analysis.assigned.includes(choices.result)) problems.push(`The cell does not assign ${choices.result}.`);
  return problems;
}

/** The code action the choices make of the cell's `source`. */
export function buildCodeAction(source: string, analysis: CellAnalysis, choices: SaveChoices): CodeActionDraft {
  const chosen = analysis.candidates.filter((c) => choices.parameters.includes(c.name));
  // The whole statement goes, every line of it: its first line alone would leave the rest
  // of a bracket, a string or a continuation behind, which does not parse.
  const dropped = new Set(chosen.flatMap((c) => Array.from({ length: c.end - c.line + 1 }, (_, k) => c.line + k)));
  const lines = source.replace(/\r\n/g, '\n').split('\n').filter((_, i) => !dropped.has(i));
  while (lines.length > 0 && (lines[lines.length - 1] ?? '').trim() === '') lines.pop();
  if (choices.result === LAST_EXPRESSION) {
    const i = lines.length - 1;
    lines[i] = `return ${(lines[i] ?? '').trim()}`;
  } else if (choices.result) {
    lines.push(`return ${choices.result}`);
  }
  // Parameters with a default come last (Python needs that).
  const params = [...chosen]
    .sort((a, b) => Number(a.value !== undefined) - Number(b.value !== undefined))
    .map((c) => {
      const type = (choices.types?.[c.name] ?? '').trim() || c.type;
      return { name: c.name, type, ...(c.value !== undefined ? { default: c.value } : {}) };
    });
  return {
    name: choices.name.trim(),
    category: choices.category.trim(),
    description: choices.description.trim(),
    parameters: params,
    returns: { type: 'object' },
    code: lines.join('\n'),
  };
}
