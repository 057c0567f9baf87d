/** Tiny DOM helpers. */
type Attrs = Record<string, string | number | boolean | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'class') el.className = String(v);
    else if (k === 'text') el.textContent = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    el.append(c);
  }
  return el;
}

/** Is `el` in a cell's editor? (Not in an output or Markdown that only borrowed its class name.) */
export function inCellEditor(el: Element | null): boolean {
  return !!el?.closest('.notebook .cm-editor') && !el.closest('.user-content');
}

/** Is focus in a text field that is not a cell editor (keyboard shortcuts stay out of it)? */
export function isTextField(el: Element | null): boolean {
  if (!el) return false;
  if (el.closest('.cm-editor') && !el.closest('.user-content')) return false;
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) return true;
  return el instanceof HTMLElement && el.isContentEditable;
}
