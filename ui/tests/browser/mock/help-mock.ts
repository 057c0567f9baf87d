/**
 * The fake backend's kernel help and notebook files. Completion answers like IPython with Jedi:
 * `pd.` offers DataFrame (class, with its signature), read_csv and date_range; other names come
 * from a few the "kernel" holds; positions count code points. Help returns text with ANSI
 * colours (and, when asked, text that would be HTML if it were rendered). Files: rename, Save As,
 * duplicate and trash over an in-memory list, refusing names that are taken.
 */
export interface HelpMockConfig {
  /** Milliseconds the kernel takes to answer (default 5). */
  delayMs?: number;
  /** Extra completions, e.g. hostile text. */
  extra?: { text: string; kind?: string; signature?: string }[];
  /** Help text returned for every name (default: pandas' DataFrame help). */
  helpText?: string;
}

const PD = [
  { text: 'DataFrame', kind: 'class', signature: 'DataFrame(data=None, index: Axes | None = None, columns: Axes | None = None, dtype: Dtype | None = None, copy: bool | None = None)' },
  { text: 'date_range', kind: 'function', signature: 'date_range(start=None, end=None, periods=None, freq=None)' },
  { text: 'read_csv', kind: 'function', signature: 'read_csv(filepath_or_buffer, *, sep=<no_default>)' },
];
const NAMES = [
  { text: 'rows_of_data', kind: 'instance' },
  { text: 'print', kind: 'function', signature: 'print(*args, sep=" ", end="\\n", file=None, flush=False)' },
  { text: 'pd', kind: 'module' },
];
const HELP =
  '\x1b[31mInit signature:\x1b[39m\npd.DataFrame(\n    data=None,\n    index: Axes | None = None,\n)\n\x1b[31mDocstring:\x1b[39m\nTwo-dimensional, size-mutable, potentially heterogeneous tabular data.';
const SOURCE = '\n\x1b[31mSource:\x1b[39m\nclass DataFrame(NDFrame, OpsMixin):\n    ...';

function fail(message: string): never {
  throw { code: 'InvalidConfig', message };
}

export function helpBackend(config: HelpMockConfig, initialNotebooks: () => string[]) {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  let notebooks: string[] | null = null;
  const list = () => (notebooks ??= [...initialNotebooks()]);
  const name = (p: string) => p.slice(p.lastIndexOf('/') + 1);
  const check = (p: unknown): string => {
    if (typeof p !== 'string' || !p.endsWith('.ipynb')) fail(`${String(p)} is not a notebook file name`);
    if (name(p).startsWith('.')) fail(`“${name(p)}” would be a hidden file; give a name that does not start with a dot`);
    return p;
  };
  const free = (p: string) => {
    if (list().includes(p)) fail(`${name(p)} already exists; choose another name`);
  };
  return {
    command(cmd: string, args: Record<string, unknown>): Promise<{ handled: boolean; value?: unknown }> | { handled: boolean; value?: unknown } {
      switch (cmd) {
        case 'complete':
        case 'inspect':
          return (async () => {
            await sleep(config.delayMs ?? 5);
            const code = Array.from(String(args.code ?? ''));
            const cursor = Number(args.cursor ?? 0);
            const before = code.slice(0, cursor).join('');
            const word = /[\w]*$/.exec(before)?.[0] ?? '';
            if (cmd === 'inspect') {
              const found = /\w\(?$/.test(before);
              const text = found ? (config.helpText ?? HELP) + (args.detail === 1 ? SOURCE : '') : '';
              return { handled: true, value: { found, text } };
            }
            const pool = before.slice(0, before.length - word.length).endsWith('pd.') ? PD : NAMES;
            const items = [...pool, ...(config.extra ?? [])].filter((i) => i.text.startsWith(word));
            return { handled: true, value: { start: cursor - Array.from(word).length, end: cursor, items } };
          })();
        case 'list_notebooks':
          return { handled: true, value: [...list()] };
        case 'rename_notebook': {
          const [from, to] = [check(args.from), check(args.to)];
          free(to);
          notebooks = list().map((p) => (p === from ? to : p));
          if (!notebooks.includes(to)) notebooks.push(to);
          return { handled: true, value: { renamed: to } };
        }
        case 'save_notebook_as': {
          const path = check(args.path);
          free(path);
          list().push(path);
          return { handled: true, value: { savedAs: path } };
        }
        case 'duplicate_notebook': {
          const from = check(args.path);
          const stem = from.replace(/\.ipynb$/, '');
          let n = 1;
          while (list().includes(`${stem}-Copy${n}.ipynb`)) n++;
          list().push(`${stem}-Copy${n}.ipynb`);
          return { handled: true, value: `${stem}-Copy${n}.ipynb` };
        }
        case 'trash_notebook': {
          const path = check(args.path);
          notebooks = list().filter((p) => p !== path);
          return { handled: true, value: null };
        }
        default:
          return { handled: false };
      }
    },
  };
}
