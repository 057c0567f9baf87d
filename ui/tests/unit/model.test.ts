import { describe, expect, it } from 'vitest';
import { Cell, type CellChange } from '../../src/model/cell';
import { Notebook } from '../../src/model/notebook';
import { STREAM_MODEL_LIMIT, StreamOutput } from '../../src/model/outputs';

function stream(text: string[]): StreamOutput {
  const s = new StreamOutput('stdout');
  for (const t of text) s.append(t);
  return s;
}

describe('stream text as a terminal shows it', () => {
  it('appends and merges', () => {
    expect(stream(['a', 'b\n', 'c']).text).toBe('ab\nc');
  });

  it('\\r overwrites the current line (tqdm), also across chunks', () => {
    expect(stream(['10%|#   |\r', '50%|##  |\r', '100%|####|\n']).text).toBe('100%|####|\n');
    expect(stream(['progress 1', '\rprogress 2', '\rprogress 3']).text).toBe('progress 3');
    expect(stream(['abcdef\rXY']).text).toBe('XYcdef');
    expect(stream(['line\r\n', 'next']).text).toBe('line\nnext');
  });

  it('\\b moves back one character', () => {
    expect(stream(['abc\b\bX']).text).toBe('aXc');
  });

  it('reports complete lines and the current line as deltas', () => {
    const s = new StreamOutput('stdout');
    expect(s.append('a\nb')).toEqual({ committed: 'a\n', line: 'b' });
    expect(s.append('c\rZ')).toEqual({ committed: '', line: 'Zc' });
    expect(s.append('\n')).toEqual({ committed: 'Zc\n', line: '' });
  });

  it('keeps the tail when a stream exceeds the model limit, with a note', () => {
    const s = new StreamOutput('stdout');
    const line = 'x'.repeat(99) + '\n';
    const chunk = line.repeat(10000);
    const chunks = Math.ceil(STREAM_MODEL_LIMIT / chunk.length) + 2;
    for (let i = 0; i < chunks; i++) s.append(chunk);
    expect(s.dropped).toBeGreaterThan(0);
    expect(s.text.length).toBeLessThanOrEqual(STREAM_MODEL_LIMIT + 200);
    expect(s.text.startsWith(`[ipybox: ${s.dropped} earlier lines`)).toBe(true);
  });
});

describe('cell outputs from iopub messages', () => {
  it('merges consecutive streams of the same name only', () => {
    const c = new Cell();
    c.applyOutput({ type: 'stream', name: 'stdout', text: 'a\n' });
    c.applyOutput({ type: 'stream', name: 'stdout', text: 'b\n' });
    c.applyOutput({ type: 'stream', name: 'stderr', text: 'warn\n' });
    c.applyOutput({ type: 'stream', name: 'stdout', text: 'c\n' });
    expect(c.outputs.map((o) => (o.kind === 'stream' ? `${o.name}:${o.text}` : o.kind))).toEqual(['stdout:a\nb\n', 'stderr:warn\n', 'stdout:c\n']);
  });

  it('clear_output(wait) clears at the next output, without flicker', () => {
    const c = new Cell();
    const changes: CellChange['type'][] = [];
    c.applyOutput({ type: 'stream', name: 'stdout', text: 'old\n' });
    c.subscribe((ch) => changes.push(ch.type));
    c.applyOutput({ type: 'clear_output', wait: true });
    expect(c.outputs).toHaveLength(1);
    c.applyOutput({ type: 'stream', name: 'stdout', text: 'new\n' });
    expect(c.outputs).toHaveLength(1);
    expect(c.outputs[0]?.kind === 'stream' && c.outputs[0].text).toBe('new\n');
    expect(changes).toEqual(['pending-clear', 'outputs-reset', 'output-added']);
  });

  it('clear_output without wait clears at once', () => {
    const c = new Cell();
    c.applyOutput({ type: 'stream', name: 'stdout', text: 'old\n' });
    c.applyOutput({ type: 'clear_output', wait: false });
    expect(c.outputs).toHaveLength(0);
  });

  it('a re-run keeps old outputs until the first new output (no layout jump), and clears at the end if none came', () => {
    const c = new Cell();
    c.applyOutput({ type: 'stream', name: 'stdout', text: 'old\n' });
    c.setPendingClear('run');
    expect(c.outputs).toHaveLength(1);
    c.settlePendingClear();
    expect(c.outputs).toHaveLength(0);
  });

  it('update_display_data replaces every output with that display id, in any cell', () => {
    const nb = new Notebook([new Cell(), new Cell()]);
    const [a, b] = nb.cells;
    if (!a || !b) throw new Error('cells');
    a.applyOutput({ type: 'display_data', data: { 'text/plain': 'v1' }, metadata: {}, display_id: 'd' });
    b.applyOutput({ type: 'display_data', data: { 'text/plain': 'v1' }, metadata: {}, display_id: 'd' });
    b.applyOutput({ type: 'display_data', data: { 'text/plain': 'other' }, metadata: {}, display_id: 'e' });
    expect(nb.updateDisplay('d', { 'text/plain': 'v2' }, {})).toBe(2);
    const text = (c: Cell, i: number): unknown => {
      const o = c.outputs[i];
      return o && o.kind === 'display_data' ? o.data['text/plain'] : null;
    };
    expect(text(a, 0)).toBe('v2');
    expect(text(b, 0)).toBe('v2');
    expect(text(b, 1)).toBe('other');
  });

  it('hides outputs as JupyterLab records it, and shows them again from either key', () => {
    const c = new Cell({ metadata: { jupyter: { outputs_hidden: true, source_hidden: false } } });
    expect(c.outputsHidden).toBe(true);
    c.setOutputsHidden(false);
    expect(c.metadata).toEqual({ jupyter: { source_hidden: false } });
    c.setOutputsHidden(true);
    expect(c.metadata).toEqual({ collapsed: true, jupyter: { source_hidden: false, outputs_hidden: true } });
    expect(c.outputsScrolled).toBe(true);
    c.setOutputsScrolled(false);
    expect(c.metadata.scrolled).toBe(false);
  });

  it('bumps the notebook version on saved changes only', () => {
    const c = new Cell();
    const nb = new Notebook([c]);
    const v0 = nb.version;
    c.setRunState('running');
    c.setNotice({ kind: 'info', text: 'x' });
    expect(nb.version).toBe(v0);
    c.setSource('print(1)');
    expect(nb.version).toBe(v0 + 1);
    c.applyOutput({ type: 'stream', name: 'stdout', text: '1\n' });
    expect(nb.version).toBe(v0 + 2);
  });
});

describe('where outputs come from (notebook trust)', () => {
  const html = { output_type: 'display_data', data: { 'text/html': ['<b>x</b>'] }, metadata: {} };

  it('outputs read from a file are marked as such; outputs of a run in this session are not', () => {
    const cell = Cell.fromJson({ cell_type: 'code', id: 'a', source: '', metadata: {}, outputs: [html], execution_count: 1 }, new Set());
    expect(cell.outputs[0]).toMatchObject({ kind: 'display_data', fromFile: true });
    cell.applyOutput({ type: 'display_data', data: { 'text/html': '<i>y</i>' }, metadata: {} });
    cell.applyOutput({ type: 'execute_result', execution_count: 2, data: { 'text/html': '<i>z</i>' }, metadata: {} });
    expect(cell.outputs.map((o) => ('fromFile' in o ? o.fromFile : null))).toEqual([true, false, false]);
  });

  it('a copied cell keeps where its outputs came from', () => {
    const cell = Cell.fromJson({ cell_type: 'code', id: 'a', source: '', metadata: {}, outputs: [html], execution_count: 1 }, new Set());
    cell.applyOutput({ type: 'display_data', data: { 'text/html': '<i>y</i>' }, metadata: {} });
    const copy = cell.duplicate();
    expect(copy.outputs.map((o) => ('fromFile' in o ? o.fromFile : null))).toEqual([true, false]);
  });

  it('a notebook is trusted unless told otherwise; trusting it is no change to the file', () => {
    const nb = new Notebook([new Cell()]);
    const version = nb.version;
    expect(nb.trusted).toBe(true);
    const changes: string[] = [];
    nb.subscribe((c) => changes.push(c.type));
    nb.setTrusted(false);
    nb.setTrusted(false);
    nb.setTrusted(true);
    expect(changes).toEqual(['trust', 'trust']);
    expect(nb.version, 'the saved file does not change').toBe(version);
  });
});
