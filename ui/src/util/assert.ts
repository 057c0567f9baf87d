/** Compile-time exhaustiveness check: a `switch` over a tagged union ends with `default: return assertNever(x)`. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`Unexpected ${what}: ${JSON.stringify(value)}`);
}
