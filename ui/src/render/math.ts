/**
 * TeX math with KaTeX, loaded the first time a notebook shows math. KaTeX and its tables take
 * ≈ 2 MiB of the window's memory once loaded, and most notebooks show no math. Until it has
 * loaded (a local chunk: a few milliseconds), a formula shows as its TeX source in a
 * `.math-pending` element; each one in the document is typeset as soon as KaTeX is there.
 */
import { sanitizeHtml } from './sanitize';

type Katex = typeof import('katex').default;

let katex: Katex | null = null;
let loading: Promise<void> | null = null;

const PENDING = 'math-pending';
const PENDING_DISPLAY = 'math-pending-display';

/** Load KaTeX (once); formulas waiting in the document are typeset when it is in. */
export function loadMath(): Promise<void> {
  loading ??= import('./katex').then((module) => {
    katex = module.default;
    if (typeof document !== 'undefined') typesetPending(document);
  });
  return loading;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** One formula as HTML: KaTeX's when it is loaded, else its source, waiting to be typeset. */
export function renderTex(tex: string, displayMode: boolean): string {
  if (!katex) {
    void loadMath();
    return `<span class="${PENDING}${displayMode ? ` ${PENDING_DISPLAY}` : ''}">${escapeHtml(tex)}</span>`;
  }
  return katex.renderToString(tex, {
    displayMode,
    throwOnError: false,
    strict: 'ignore',
    trust: false,
    output: 'htmlAndMathml',
    maxExpand: 1000,
  });
}

/** Typeset the formulas under `root` that were shown before KaTeX loaded. */
export function typesetPending(root: ParentNode): void {
  if (!katex) return;
  for (const element of root.querySelectorAll<HTMLElement>(`.${PENDING}`)) {
    const display = element.classList.contains(PENDING_DISPLAY);
    element.replaceWith(sanitizeHtml(renderTex(element.textContent ?? '', display)));
  }
}
