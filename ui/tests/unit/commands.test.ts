import { describe, expect, it } from 'vitest';
import { Cell } from '../../src/model/cell';
import { NotebookEditor } from '../../src/model/commands';
import { Notebook } from '../../src/model/notebook';

function make(n: number): { ed: NotebookEditor; nb: Notebook; src: () => string[] } {
  const nb = new Notebook(Array.from({ length: n }, (_, i) => new Cell({ source: `c${i}` })));
  const ed = new NotebookEditor(nb);
  return { ed, nb, src: () => nb.cells.map((c) => c.source) };
}

describe('notebook commands', () => {
  it('starts with the first cell selected in command mode', () => {
    const { ed } = make(3);
    expect(ed.active).toBe(0);
    expect(ed.mode).toBe('command');
    expect(ed.selectedIndices).toEqual([0]);
  });

  it('an empty notebook gets one code cell', () => {
    const ed = new NotebookEditor(new Notebook([]));
    expect(ed.notebook.length).toBe(1);
    expect(ed.notebook.cell(0)?.type).toBe('code');
  });

  it('inserts above and below (A/B) and selects the new cell', () => {
    const { ed, src } = make(2);
    ed.select(1);
    ed.insert('above');
    expect(src()).toEqual(['c0', '', 'c1']);
    expect(ed.active).toBe(1);
    ed.insert('below');
    expect(src()).toEqual(['c0', '', '', 'c1']);
    expect(ed.active).toBe(2);
  });

  it('deletes the selection (D D) and undoes it (Z) at the same places', () => {
    const { ed, src } = make(5);
    ed.select(1);
    ed.extendSelection(1);
    ed.deleteSelected();
    expect(src()).toEqual(['c0', 'c3', 'c4']);
    expect(ed.active).toBe(1);
    ed.select(2);
    ed.deleteSelected();
    expect(src()).toEqual(['c0', 'c3']);
    expect(ed.undoDelete()).toBe(true);
    expect(src()).toEqual(['c0', 'c3', 'c4']);
    expect(ed.undoDelete()).toBe(true);
    expect(src()).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
    expect(ed.selectedIndices).toEqual([1, 2]);
    expect(ed.undoDelete()).toBe(false);
  });

  it('deleting every cell leaves one empty code cell', () => {
    const { ed, nb } = make(2);
    ed.selectAll();
    ed.deleteSelected();
    expect(nb.length).toBe(1);
    expect(nb.cell(0)?.source).toBe('');
  });

  it('moves selected cells up and down, not past the ends', () => {
    const { ed, src } = make(4);
    ed.select(1);
    ed.extendSelection(1);
    expect(ed.moveSelected(1)).toBe(true);
    expect(src()).toEqual(['c0', 'c3', 'c1', 'c2']);
    expect(ed.selectedIndices).toEqual([2, 3]);
    expect(ed.moveSelected(1)).toBe(false);
    ed.select(0);
    expect(ed.moveSelected(-1)).toBe(false);
  });

  it('changes the type of the selected cells (M/Y/R)', () => {
    const { ed, nb } = make(3);
    ed.select(0);
    ed.extendSelection(1);
    ed.changeType('markdown');
    expect(nb.cells.map((c) => c.type)).toEqual(['markdown', 'markdown', 'code']);
    ed.changeType('raw');
    expect(nb.cell(0)?.type).toBe('raw');
    ed.changeType('code');
    expect(nb.cell(1)?.type).toBe('code');
  });

  it('moves and extends the selection (J/K, Shift+J/K), clamped', () => {
    const { ed } = make(4);
    ed.moveSelection(1);
    expect(ed.active).toBe(1);
    ed.extendSelection(1);
    ed.extendSelection(1);
    expect(ed.selectedIndices).toEqual([1, 2, 3]);
    ed.extendSelection(1);
    expect(ed.selectedIndices).toEqual([1, 2, 3]);
    ed.moveSelection(-1);
    expect(ed.selectedIndices).toEqual([0]);
    ed.moveSelection(-1);
    expect(ed.active).toBe(0);
    ed.extendSelection(3);
    ed.extendSelection(-2);
    expect(ed.selectedIndices).toEqual([0, 1]);
  });

  it('copies, cuts and pastes cells with new ids', () => {
    const { ed, src, nb } = make(3);
    ed.select(0);
    ed.copy();
    ed.select(2);
    ed.paste('below');
    expect(src()).toEqual(['c0', 'c1', 'c2', 'c0']);
    expect(nb.cell(3)?.id).not.toBe(nb.cell(0)?.id);
    ed.select(1);
    ed.cut();
    ed.paste('above');
    expect(src()).toEqual(['c0', 'c1', 'c2', 'c0']);
  });

  it('splits a cell at the cursor and merges cells', () => {
    const nb = new Notebook([new Cell({ source: 'a = 1\nb = 2\nc = 3' })]);
    const ed = new NotebookEditor(nb);
    ed.split([6]);
    expect(nb.cells.map((c) => c.source)).toEqual(['a = 1', 'b = 2\nc = 3']);
    expect(ed.active).toBe(1);
    ed.select(0);
    ed.extendSelection(1);
    ed.mergeSelected();
    expect(nb.cells.map((c) => c.source)).toEqual(['a = 1\n\nb = 2\nc = 3']);
  });

  it('notifies views of selection and mode changes', () => {
    const { ed } = make(2);
    const seen: string[] = [];
    ed.subscribe((c) => seen.push(c.type));
    ed.select(1);
    ed.setMode('edit');
    ed.setMode('edit');
    expect(seen).toEqual(['selection', 'mode']);
  });
});
