/**
 * The fake backend's kernel variables and data grid. The "kernel" holds a few variables (or those
 * configured, e.g. with hostile names and values) and one frame, `sales`, of `frameRows` rows
 * (default 10,000): n, g = n % 10, v = n / 2 missing when n % 3 == 0, and s ('even' or
 * '<b>odd</b>'). Pages are sorted and filtered here, as the kernel would, and carry the pandas
 * expression for them.
 */
export interface VariablesMockConfig {
  /** The variables listed (default: a few, `sales` among them). */
  variables?: unknown[];
  /** Rows of `sales`. */
  frameRows?: number;
  /** Milliseconds each answer takes (default 5). */
  delayMs?: number;
  /** A column label of `sales` in place of `s` (e.g. hostile text). */
  columnName?: string;
}

type Cell = string | null;
interface Query {
  name: string;
  offset: number;
  limit: number;
  sort: { column: number; ascending: boolean }[];
  filters: { column: number; op: string; value: string }[];
  nulls: boolean;
}

function fail(message: string): never {
  throw { code: 'InvalidConfig', message };
}

export function variablesBackend(config: VariablesMockConfig) {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const rows = config.frameRows ?? 10_000;
  const labels = ['n', 'g', 'v', config.columnName ?? 's'];
  const types = ['int64', 'int64', 'float64', 'str'];
  const value = (r: number, c: number): number | string | null => (c === 0 ? r : c === 1 ? r % 10 : c === 2 ? (r % 3 === 0 ? null : r / 2) : r % 2 === 0 ? 'even' : '<b>odd</b>');
  const text = (v: number | string | null): Cell => (v === null ? null : String(v));
  const defaults = [
    { name: 'count', type: 'int', size: 28, repr: '42' },
    { name: 'greeting', type: 'str', length: 5, size: 54, repr: "'hello'" },
    { name: 'sales', type: 'DataFrame', module: 'pandas', shape: [rows, 4], size: rows * 32, repr: `columns: ${labels.join(', ')}`, frame: 'pandas' },
  ];
  const pass = (r: number, f: Query['filters'][number]): boolean => {
    const v = value(r, f.column);
    if (f.op === 'null') return v === null;
    if (f.op === 'notnull') return v !== null;
    if (v === null) return false;
    if (f.op === 'contains') return String(v).includes(f.value);
    if (f.op === 'startswith') return String(v).startsWith(f.value);
    if (f.op === 'endswith') return String(v).endsWith(f.value);
    const want = typeof v === 'number' ? Number(f.value) : f.value;
    if (typeof v === 'number' && (f.value.trim() === '' || Number.isNaN(want))) fail(`'${f.value}' is not a value of this column's type (${types[f.column]})`);
    switch (f.op) {
      case 'eq': return v === want;
      case 'ne': return v !== want;
      case 'lt': return v < want;
      case 'le': return v <= want;
      case 'gt': return v > want;
      case 'ge': return v >= want;
      default: return fail(`unknown filter '${f.op}'`);
    }
  };
  const code = (q: Query): string => {
    const col = (i: number) => `${q.name}['${labels[i]}']`;
    const sym: Record<string, string> = { eq: '==', ne: '!=', lt: '<', le: '<=', gt: '>', ge: '>=' };
    const parts = q.filters.map((f) => (sym[f.op] ? `(${col(f.column)} ${sym[f.op]} ${types[f.column] === 'str' ? `'${f.value}'` : f.value})` : f.op === 'null' ? `${col(f.column)}.isna()` : f.op === 'notnull' ? `${col(f.column)}.notna()` : `${col(f.column)}.astype('string').str.${f.op}('${f.value}')`));
    let out = parts.length === 0 ? q.name : parts.length === 1 ? `${q.name}[${parts[0]}]` : `${q.name}[(${parts.join(') & (')})]`;
    if (q.sort.length) out += `.sort_values([${q.sort.map((s) => `'${labels[s.column]}'`).join(', ')}], ascending=[${q.sort.map((s) => (s.ascending ? 'True' : 'False')).join(', ')}])`;
    return out;
  };
  return {
    async command(cmd: string, args: Record<string, unknown>): Promise<{ handled: boolean; value?: unknown }> {
      switch (cmd) {
        case 'kernel_variables':
          await sleep(config.delayMs ?? 5);
          return { handled: true, value: { variables: config.variables ?? defaults, more: 0 } };
        case 'frame_page': {
          await sleep(config.delayMs ?? 5);
          const q = args.query as Query;
          if (q.name !== 'sales') fail(`there is no variable named '${q.name}'`);
          let order = Array.from({ length: rows }, (_, i) => i);
          for (const f of q.filters) order = order.filter((r) => pass(r, f));
          if (q.sort.length) {
            order.sort((a, b) => {
              for (const s of q.sort) {
                const [x, y] = [value(a, s.column), value(b, s.column)];
                if (x === y) continue;
                if (x === null) return 1;
                if (y === null) return -1;
                return (x < y ? -1 : 1) * (s.ascending ? 1 : -1);
              }
              return a - b;
            });
          }
          const page = order.slice(q.offset, q.offset + q.limit);
          const nulls = q.nulls ? [0, 0, Math.ceil(rows / 3), 0] : [null, null, null, null];
          return {
            handled: true,
            value: {
              name: q.name,
              kind: 'pandas',
              totalRows: rows,
              rows: order.length,
              offset: q.offset,
              columns: labels.map((name, i) => ({ name, type: types[i], nulls: nulls[i] })),
              index: page.map(String),
              cells: page.map((r) => labels.map((_, c) => text(value(r, c)))),
              code: code(q),
            },
          };
        }
        default:
          return { handled: false };
      }
    },
  };
}
