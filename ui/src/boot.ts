/**
 * The window's first frame: the notebook's cells as the backend handed them over at launch
 * (`window.__IPYBOX_START__`), drawn as plain text in the window's layout before the rest of
 * the interface is loaded. The application replaces it once it is built. Nothing here runs or
 * renders what the notebook holds: sources are text nodes, outputs are not shown.
 */

/** At most this many cells, of at most this many lines: more would not fit on a screen. */
const MAX_CELLS = 40;
const MAX_LINES = 60;

interface HandedCell {
  cell_type?: unknown;
  source?: unknown;
  execution_count?: unknown;
}

function el(tag: string, className: string, ...children: (Node | string)[]): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  node.append(...children);
  return node;
}

/** The cells of the notebook's text, or null when it is not a notebook this can draw. */
function cellsOf(text: string): HandedCell[] | null {
  try {
    const parsed: unknown = JSON.parse(text);
    const cells = (parsed as { cells?: unknown } | null)?.cells;
    return Array.isArray(cells) ? (cells as HandedCell[]) : null;
  } catch {
    return null;
  }
}

function sourceOf(cell: HandedCell): string {
  const source = cell.source;
  if (typeof source === 'string') return source;
  if (Array.isArray(source)) return source.filter((s): s is string => typeof s === 'string').join('');
  return '';
}

function drawCell(cell: HandedCell, index: number): HTMLElement {
  const kind = cell.cell_type === 'markdown' || cell.cell_type === 'raw' ? cell.cell_type : 'code';
  const lines = sourceOf(cell).split('\n').slice(0, MAX_LINES);
  const count = typeof cell.execution_count === 'number' ? String(cell.execution_count) : ' ';
  const prompt = el('div', 'prompt', kind === 'code' ? `[${count}]` : '');
  const text = el('div', 'cell-static', ...lines.map((line) => el('div', '', line)));
  const node = el('div', index === 0 ? 'cell selected active' : 'cell', el('div', 'cell-input', prompt, el('div', 'cell-input-body', el('div', 'cell-editor', text))));
  node.dataset.cellType = kind;
  return node;
}

/**
 * Draw the handed-over notebook into `root` (the window's bars, the side list's place and the
 * cells); false when there is nothing to draw (outside the app, a notebook not yet on disk or
 * one that does not parse), and the application draws everything itself.
 */
export function drawHandedNotebook(root: HTMLElement): boolean {
  const handed = (window as unknown as { __IPYBOX_START__?: { state?: { notebook?: unknown } } }).__IPYBOX_START__;
  const text = handed?.state?.notebook;
  if (typeof text !== 'string') return false;
  const cells = cellsOf(text);
  if (!cells || cells.length === 0) return false;
  const notebook = el('div', 'notebook', ...cells.slice(0, MAX_CELLS).map(drawCell));
  const sidebar = el('aside', 'sidebar');
  sidebar.hidden = window.innerWidth < 900; // as the application starts narrow windows
  root.replaceChildren(
    el('header', 'toolbar'),
    el('div', 'workbench', sidebar, el('div', 'center', el('main', 'notebook-scroller', notebook))),
    el('footer', 'statusbar'),
  );
  return true;
}
