/** A random UUID v4 as JupyterLab generates for cell ids (matches nbformat's `^[a-zA-Z0-9-_]+$`, 36 chars). */
export function newCellId(): string {
  const b = new Uint8Array(16);
  globalThis.crypto.getRandomValues(b);
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export const CELL_ID_PATTERN = /^[a-zA-Z0-9-_]{1,64}$/;
