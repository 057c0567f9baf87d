// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Cell } from '../../src/model/cell';
import { Notebook } from '../../src/model/notebook';
import { SaveController } from '../../src/ui/saver';
import { isJsonObject, parseJson } from '../../src/util/json';

function backend(delay = 0) {
  const saves: { path: string; content: string }[] = [];
  const titles: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  return {
    saves,
    titles,
    get maxInFlight() {
      return maxInFlight;
    },
    save: async (path: string, content: string) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      saves.push({ path, content });
      inFlight--;
    },
    setTitle: async (t: string) => {
      titles.push(t);
    },
  };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('saving', () => {
  it('the title carries a • while unsaved; body.dataset.dirty follows', async () => {
    const b = backend();
    const s = new SaveController(b);
    const nb = new Notebook([new Cell()]);
    nb.subscribe(() => s.changed());
    s.reset(nb, '/w/analysis.ipynb', true);
    expect(b.titles.at(-1)).toBe('ipybox — analysis.ipynb');
    expect(document.body.dataset.dirty).toBe('false');
    nb.cell(0)?.setSource('x = 1');
    expect(b.titles.at(-1)).toBe('• ipybox — analysis.ipynb');
    expect(document.body.dataset.dirty).toBe('true');
    await s.save();
    expect(b.titles.at(-1)).toBe('ipybox — analysis.ipynb');
    expect(document.body.dataset.dirty).toBe('false');
    const saved = parseJson(b.saves[0]?.content ?? '');
    expect(isJsonObject(saved) && saved.nbformat_minor).toBe(5);
  });

  it('autosaves 2 s after the last change', async () => {
    const b = backend();
    const s = new SaveController(b);
    const nb = new Notebook([new Cell()]);
    nb.subscribe(() => s.changed());
    s.reset(nb, '/w/a.ipynb', true);
    nb.cell(0)?.setSource('a');
    await vi.advanceTimersByTimeAsync(1500);
    nb.cell(0)?.setSource('ab');
    await vi.advanceTimersByTimeAsync(1500);
    expect(b.saves).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(600);
    expect(b.saves).toHaveLength(1);
    expect(s.dirty).toBe(false);
  });

  it('never runs two saves at once, and saves again what changed during a save', async () => {
    const b = backend(3000);
    const s = new SaveController(b);
    const nb = new Notebook([new Cell()]);
    nb.subscribe(() => s.changed());
    s.reset(nb, '/w/a.ipynb', true);
    nb.cell(0)?.setSource('a');
    await vi.advanceTimersByTimeAsync(2100); // autosave starts, takes 3 s
    nb.cell(0)?.setSource('ab');
    await vi.advanceTimersByTimeAsync(2100); // autosave timer fires while the first is in flight
    const manual = s.save();
    await vi.advanceTimersByTimeAsync(10000);
    await manual;
    expect(b.maxInFlight).toBe(1);
    expect(s.dirty).toBe(false);
    const last = parseJson(b.saves.at(-1)?.content ?? '');
    const cells = isJsonObject(last) && Array.isArray(last.cells) ? last.cells : [];
    const c0 = cells[0];
    expect(isJsonObject(c0) && c0.source).toEqual(['ab']);
  });

  it('a notebook that could not be read is never autosaved over', async () => {
    const b = backend();
    const s = new SaveController(b);
    const nb = new Notebook([new Cell()]);
    nb.subscribe(() => s.changed());
    s.reset(nb, '/w/broken.ipynb', true, 'not JSON');
    nb.cell(0)?.setSource('a');
    await vi.advanceTimersByTimeAsync(5000);
    expect(b.saves).toHaveLength(0);
    expect(await s.save()).toBe(false);
    expect(await s.save(true)).toBe(true);
  });

  it('reports a failed save in words and stays dirty', async () => {
    const s = new SaveController({
      save: async () => {
        throw { code: 'IoError', message: 'disk full' };
      },
      setTitle: async () => {},
    });
    const statuses: string[] = [];
    s.subscribe((st) => statuses.push(st.text));
    const nb = new Notebook([new Cell()]);
    s.reset(nb, '/w/a.ipynb', true);
    nb.cell(0)?.setSource('a');
    expect(await s.save()).toBe(false);
    expect(statuses.at(-1)).toBe('Save failed: disk full');
    expect(s.dirty).toBe(true);
  });
});

describe('saving and notebook trust', () => {
  it('tells the backend whether every output in the file may render', async () => {
    const saves: boolean[] = [];
    const s = new SaveController({ save: async (_path, _content, trusted) => void saves.push(trusted), setTitle: async () => {} });
    const stored = Cell.fromJson({ cell_type: 'code', id: 'a', source: '', metadata: {}, execution_count: 1, outputs: [{ output_type: 'display_data', data: { 'text/html': '<b>x</b>' }, metadata: {} }] }, new Set());
    const nb = new Notebook([stored]);
    nb.setTrusted(false);
    s.reset(nb, '/w/a.ipynb', true);
    nb.insert(1, [new Cell()]);
    await s.save();
    // Running the cell replaces its stored output by one made here.
    stored.clearOutputs();
    stored.applyOutput({ type: 'display_data', data: { 'text/html': '<b>y</b>' }, metadata: {} });
    await s.save();
    expect(saves).toEqual([false, true]);
  });
});
