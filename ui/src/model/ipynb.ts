import { cloneJson, isJsonObject, parseJson, sortKeysDeep, type JsonObject } from '../util/json';
import { Cell } from './cell';
import { Notebook } from './notebook';

export class NotebookFormatError extends Error {
  override name = 'NotebookFormatError';
}

const KNOWN_TOP_KEYS = ['cells', 'metadata', 'nbformat', 'nbformat_minor'];

/** Default notebook metadata for a Python kernel, as JupyterLab writes it. */
export function defaultKernelspec(): JsonObject {
  return { display_name: 'Python 3 (ipykernel)', language: 'python', name: 'python3' };
}

/** An empty notebook with one empty code cell. */
export function emptyNotebook(): Notebook {
  const nb = new Notebook([new Cell({ type: 'code' })], {
    kernelspec: defaultKernelspec(),
    language_info: { name: 'python' },
  });
  return nb;
}

/**
 * Read an .ipynb (nbformat 4.x). Unknown keys at every level are kept; cells of a 4.0–4.4
 * notebook get ids. Throws NotebookFormatError for anything that is not a v4 notebook.
 */
export function parseNotebook(text: string): Notebook {
  let json;
  try {
    json = parseJson(text);
  } catch (err) {
    throw new NotebookFormatError(`The file is not valid JSON (${err instanceof Error ? err.message : String(err)}).`);
  }
  if (!isJsonObject(json)) throw new NotebookFormatError('The file is not a notebook (no JSON object).');
  const major = json.nbformat;
  if (major !== 4) {
    throw new NotebookFormatError(
      typeof major === 'number'
        ? `This notebook is in nbformat ${major}; only nbformat 4 is supported. Open and save it in JupyterLab first to convert it.`
        : 'The file is not a notebook (no nbformat version).',
    );
  }
  if (!Array.isArray(json.cells)) throw new NotebookFormatError('The notebook has no list of cells.');
  const used = new Set<string>();
  const cells = json.cells.filter(isJsonObject).map((c) => Cell.fromJson(c, used));
  const metadata = isJsonObject(json.metadata) ? cloneJson(json.metadata) : {};
  const extra: JsonObject = {};
  for (const [k, v] of Object.entries(json)) if (!KNOWN_TOP_KEYS.includes(k)) extra[k] = cloneJson(v);
  return new Notebook(cells, metadata, extra);
}

/** The notebook as nbformat 4.5 JSON (an object). */
export function notebookToJson(nb: Notebook): JsonObject {
  const metadata = cloneJson(nb.metadata);
  if (!isJsonObject(metadata.kernelspec)) metadata.kernelspec = defaultKernelspec();
  if (!isJsonObject(metadata.language_info)) metadata.language_info = { name: 'python' };
  // Transient keys that nbformat strips on write.
  delete metadata.orig_nbformat;
  delete metadata.orig_nbformat_minor;
  delete metadata.signature;
  return {
    ...cloneJson(nb.extra),
    cells: nb.cells.map((c) => {
      const json = c.toJson();
      if (isJsonObject(json.metadata)) delete json.metadata.trusted;
      return json;
    }),
    metadata,
    nbformat: 4,
    nbformat_minor: 5,
  };
}

/** Serialize as nbformat/JupyterLab do: sorted keys, 1-space indent, non-ASCII kept, trailing newline. */
export function serializeNotebook(nb: Notebook): string {
  return JSON.stringify(sortKeysDeep(notebookToJson(nb)), null, 1) + '\n';
}
