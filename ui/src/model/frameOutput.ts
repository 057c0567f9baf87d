/**
 * The variable a data frame shown by a cell (its result, or `display(df)`) came from, for the
 * output's "Open in grid" action. The kernel's display formatter
 * (`ipybox_variables._tag_frame_results`) names it in the output's metadata as
 * `{"ipybox": {"frame": NAME}}`. A notebook file can put anything
 * there, so the name is taken only when it is a plain Python identifier of the user's (not
 * `_`-prefixed, not a keyword), and the grid then only looks it up among the kernel's
 * variables: nothing in an output is ever run, and nothing in its HTML makes the action.
 */
import type { Output } from './outputs';
import { isJsonObject } from '../util/json';

const KEYWORDS = new Set([
  'False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break', 'class', 'continue', 'def', 'del', 'elif', 'else',
  'except', 'finally', 'for', 'from', 'global', 'if', 'import', 'in', 'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise',
  'return', 'try', 'while', 'with', 'yield',
]);

/** Longer than any name a person types; a name past this is not offered. */
const MAX_NAME = 256;

/**
 * A Python identifier (PEP 3131, as `str.isidentifier()` takes it, without NFKC folding) that
 * does not start with `_` (IPython's own and hidden names) and is no keyword.
 */
export function isUserVariableName(name: string): boolean {
  return name.length <= MAX_NAME && /^[\p{L}\p{Nl}][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*$/u.test(name) && !KEYWORDS.has(name);
}

/** The variable a result's or a display's frame is in, or null (not a frame, or a name not offered). */
export function frameOfOutput(output: Output): string | null {
  if (output.kind !== 'execute_result' && output.kind !== 'display_data') return null;
  const mine = output.metadata.ipybox;
  const name = isJsonObject(mine) ? mine.frame : undefined;
  return typeof name === 'string' && isUserVariableName(name) ? name : null;
}
