export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

export function cloneJson<T extends JsonValue>(value: T): T {
  return structuredClone(value);
}

/** A copy with every object's keys in code-point order, as Python's `json.dumps(sort_keys=True)`. */
export function sortKeysDeep(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const key of Object.keys(value).sort(compareCodePoints)) {
      const v = value[key];
      if (v !== undefined) out[key] = sortKeysDeep(v);
    }
    return out;
  }
  return value;
}

/** Python sorts str keys by code point; JS's default sort compares UTF-16 units. */
function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0) ?? 0;
    const cy = y.value.codePointAt(0) ?? 0;
    if (cx !== cy) return cx - cy;
  }
}

export function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => {
      const w = b[i];
      return w !== undefined && jsonEqual(v, w);
    });
  }
  if (isJsonObject(a)) {
    if (!isJsonObject(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => {
      const va = a[k];
      const vb = b[k];
      return va !== undefined && vb !== undefined && jsonEqual(va, vb);
    });
  }
  return false;
}

/** Parse JSON text into a JsonValue (throws SyntaxError). */
export function parseJson(text: string): JsonValue {
  const value: unknown = JSON.parse(text);
  if (!isJsonValue(value)) throw new SyntaxError('not JSON');
  return value;
}

function isJsonValue(value: unknown): value is JsonValue {
  // JSON.parse only ever produces JSON values; this guard exists for the type system.
  return value === null || ['string', 'number', 'boolean', 'object'].includes(typeof value);
}
