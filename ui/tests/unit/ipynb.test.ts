import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv-draft-04';
import { describe, expect, it } from 'vitest';
import { Cell } from '../../src/model/cell';
import { NotebookFormatError, notebookToJson, parseNotebook, serializeNotebook } from '../../src/model/ipynb';
import { splitLines } from '../../src/model/text';
import { isJsonObject, parseJson, type JsonObject } from '../../src/util/json';

const FIXTURES = join(__dirname, '../fixtures');
const notebooks = readdirSync(FIXTURES).filter((f) => f.endsWith('.ipynb'));
const read = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');

const ajv = new Ajv({ strict: false, allErrors: true });
const validate = ajv.compile(JSON.parse(read('nbformat.v4.5.schema.json')));

function obj(text: string): JsonObject {
  const v = parseJson(text);
  if (!isJsonObject(v)) throw new Error('not an object');
  return v;
}

describe('splitLines (Python str.splitlines(keepends=True))', () => {
  it('splits like Python', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a')).toEqual(['a']);
    expect(splitLines('a\n')).toEqual(['a\n']);
    expect(splitLines('a\nb')).toEqual(['a\n', 'b']);
    expect(splitLines('a\r\nb\rc\n\n')).toEqual(['a\r\n', 'b\r', 'c\n', '\n']);
    expect(splitLines('x\u2028y\x0cz')).toEqual(['x\u2028', 'y\x0c', 'z']);
  });
});

describe('ipynb round trip on real notebooks', () => {
  it('has the fixtures', () => {
    expect(notebooks.length).toBeGreaterThanOrEqual(5);
  });

  for (const name of notebooks) {
    it(`${name}: load → save → load is deep-equal`, () => {
      const text = read(name);
      const once = serializeNotebook(parseNotebook(text));
      const twice = serializeNotebook(parseNotebook(once));
      expect(twice).toBe(once);
      expect(obj(twice)).toEqual(obj(once));
    });

    it(`${name}: the saved file validates against the nbformat 4.5 schema`, () => {
      const saved = obj(serializeNotebook(parseNotebook(read(name))));
      const ok = validate(saved);
      expect(validate.errors ?? []).toEqual([]);
      expect(ok).toBe(true);
      expect(saved.nbformat).toBe(4);
      expect(saved.nbformat_minor).toBe(5);
    });

    it(`${name}: keeps every cell's content, outputs and metadata`, () => {
      const original = obj(read(name));
      const saved = obj(serializeNotebook(parseNotebook(read(name))));
      const oc = Array.isArray(original.cells) ? original.cells : [];
      const sc = Array.isArray(saved.cells) ? saved.cells : [];
      expect(sc.length).toBe(oc.length);
      oc.forEach((c, i) => {
        const s = sc[i];
        if (!isJsonObject(c) || !isJsonObject(s)) throw new Error('cell');
        const { id: _a, ...restC } = c;
        const { id: _b, ...restS } = s;
        expect(restS).toEqual(restC);
        if (typeof c.id === 'string') expect(s.id).toBe(c.id);
      });
      expect(isJsonObject(saved.metadata) && saved.metadata.kernelspec).toBeTruthy();
    });
  }

  for (const name of ['jupyterlab-analysis.ipynb', 'nbformat-test4.5.ipynb']) {
    it(`${name}: an untouched nbformat 4.5 file saves back byte for byte`, () => {
      const text = read(name);
      expect(serializeNotebook(parseNotebook(text))).toBe(text);
    });
  }

  it('JupyterLab notebook: attachments, unknown metadata and all output kinds survive', () => {
    const nb = parseNotebook(read('jupyterlab-analysis.ipynb'));
    const md = nb.cell(0);
    expect(md?.type).toBe('markdown');
    expect(md?.attachments && Object.keys(md.attachments)).toEqual(['sketch.png']);
    expect(nb.metadata.widgets).toBeTruthy();
    expect(nb.metadata['toc-autonumbering']).toBe(true);
    const kinds = nb.cells.flatMap((c) => c.outputs.map((o) => o.kind));
    expect(new Set(kinds)).toEqual(new Set(['execute_result', 'stream', 'display_data', 'error']));
    expect(nb.cell(1)?.metadata.ExecuteTime).toBeTruthy();
    expect(nb.cells.some((c) => c.type === 'raw')).toBe(true);
  });

  it('an edited cell is written as nbformat writes it (lines split), the others untouched', () => {
    const text = read('jupyterlab-analysis.ipynb');
    const nb = parseNotebook(text);
    nb.cell(1)?.setSource('import math\nimport numpy as np\n');
    const saved = obj(serializeNotebook(nb));
    const cells = Array.isArray(saved.cells) ? saved.cells : [];
    const c1 = cells[1];
    expect(isJsonObject(c1) && c1.source).toEqual(['import math\n', 'import numpy as np\n']);
    const before = obj(text);
    const beforeCells = Array.isArray(before.cells) ? before.cells : [];
    expect(cells[2]).toEqual(beforeCells[2]);
    expect(validate(saved)).toBe(true);
  });

  it('new outputs are stored like Jupyter: multi-line text split, JSON kept, streams merged', () => {
    const nb = parseNotebook(read('nbformat-test4.5.ipynb'));
    const cell = new Cell({ type: 'code', source: 'x' });
    nb.insert(0, [cell]);
    cell.applyOutput({ type: 'stream', name: 'stdout', text: 'a\n' });
    cell.applyOutput({ type: 'stream', name: 'stdout', text: 'b\nc' });
    cell.applyOutput({ type: 'display_data', data: { 'text/html': '<b>x</b>\n<i>y</i>', 'application/json': { k: [1, 2] }, 'image/png': 'iVBOR' }, metadata: {} });
    cell.applyOutput({ type: 'execute_result', execution_count: 3, data: { 'text/plain': '42' }, metadata: {} });
    cell.setExecutionCount(3);
    const saved = obj(serializeNotebook(nb));
    const c0 = Array.isArray(saved.cells) && isJsonObject(saved.cells[0]) ? saved.cells[0] : {};
    expect(c0.outputs).toEqual([
      { name: 'stdout', output_type: 'stream', text: ['a\n', 'b\n', 'c'] },
      { data: { 'application/json': { k: [1, 2] }, 'image/png': 'iVBOR', 'text/html': ['<b>x</b>\n', '<i>y</i>'] }, metadata: {}, output_type: 'display_data' },
      { data: { 'text/plain': ['42'] }, execution_count: 3, metadata: {}, output_type: 'execute_result' },
    ]);
    expect(c0.execution_count).toBe(3);
    expect(validate(saved)).toBe(true);
  });

  it('upgrades 4.0–4.4: valid unique ids, nbformat_minor 5, kernelspec kept', () => {
    const nb = parseNotebook(read('nbformat-test4.ipynb'));
    const ids = nb.cells.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-zA-Z0-9-_]{1,64}$/);
    const saved = obj(serializeNotebook(nb));
    expect(saved.nbformat_minor).toBe(5);
  });

  it('adds kernelspec and language_info when missing; formats like JupyterLab', () => {
    const text = JSON.stringify({ cells: [{ cell_type: 'code', source: 'print(1)', metadata: {}, outputs: [], execution_count: null }], metadata: {}, nbformat: 4, nbformat_minor: 2 });
    const out = serializeNotebook(parseNotebook(text));
    expect(out.endsWith('}\n')).toBe(true);
    expect(out.startsWith('{\n "cells": [\n  {\n   "cell_type": "code",')).toBe(true);
    const saved = obj(out);
    expect(saved.metadata).toEqual({
      kernelspec: { display_name: 'Python 3 (ipykernel)', language: 'python', name: 'python3' },
      language_info: { name: 'python' },
    });
    expect(validate(saved)).toBe(true);
  });

  it('keeps unknown top-level, cell and output keys, and unknown cell/output types', () => {
    const text = JSON.stringify({
      cells: [
        { cell_type: 'code', id: 'a', source: ['x'], metadata: {}, outputs: [{ output_type: 'stream', name: 'stdout', text: 'hi', x_extra: 1 }, { output_type: 'future_output', payload: [1] }], execution_count: 1, x_cell: { y: true } },
        { cell_type: 'sql', id: 'b', source: 'select 1', metadata: {} },
      ],
      metadata: { kernelspec: { name: 'python3', display_name: 'Python 3' }, custom: { deep: [1, { z: null }] } },
      nbformat: 4,
      nbformat_minor: 5,
      x_top: 'kept',
    });
    const saved = obj(serializeNotebook(parseNotebook(text)));
    expect(saved.x_top).toBe('kept');
    const cells = Array.isArray(saved.cells) ? saved.cells : [];
    const [c0, c1] = cells;
    if (!isJsonObject(c0) || !isJsonObject(c1)) throw new Error('cells');
    expect(c0.x_cell).toEqual({ y: true });
    expect(c0.outputs).toEqual([
      { output_type: 'stream', name: 'stdout', text: 'hi', x_extra: 1 },
      { output_type: 'future_output', payload: [1] },
    ]);
    expect(c1.cell_type).toBe('sql');
    expect(isJsonObject(saved.metadata) && saved.metadata.custom).toEqual({ deep: [1, { z: null }] });
  });

  it('drops the transient keys nbformat strips (trusted, orig_nbformat, signature)', () => {
    const text = JSON.stringify({ cells: [{ cell_type: 'code', id: 'a', source: '', metadata: { trusted: true }, outputs: [], execution_count: null }], metadata: { orig_nbformat: 3, signature: 'x' }, nbformat: 4, nbformat_minor: 5 });
    const saved = obj(serializeNotebook(parseNotebook(text)));
    expect(isJsonObject(saved.metadata) && saved.metadata.orig_nbformat).toBeUndefined();
    const c = Array.isArray(saved.cells) ? saved.cells[0] : null;
    expect(isJsonObject(c) && c.metadata).toEqual({});
  });

  it('refuses what is not an nbformat 4 notebook, in words', () => {
    expect(() => parseNotebook('{not json')).toThrow(NotebookFormatError);
    expect(() => parseNotebook(read('nbformat-test4.5.ipynb').replace('"nbformat": 4,', '"nbformat": 3,'))).toThrow(/nbformat 3/);
    expect(() => parseNotebook('[]')).toThrow(/not a notebook/);
  });

  it('markdown → code keeps attachments in memory but writes a valid code cell', () => {
    const nb = parseNotebook(read('jupyterlab-analysis.ipynb'));
    const md = nb.cell(0);
    md?.setType('code');
    const saved = notebookToJson(nb);
    expect(validate(saved)).toBe(true);
    md?.setType('markdown');
    const again = obj(serializeNotebook(nb));
    const c = Array.isArray(again.cells) ? again.cells[0] : null;
    expect(isJsonObject(c) && isJsonObject(c.attachments) && Object.keys(c.attachments)).toEqual(['sketch.png']);
  });
});
