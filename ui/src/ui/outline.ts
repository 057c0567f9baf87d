/**
 * The Outline side-panel tab: the notebook's Markdown headings, indented by level. A click
 * jumps to the heading's cell; the section of the running cell is marked, the active cell's
 * section is the current item. Heading text is untrusted and set as text.
 */
import type { NotebookEditor } from '../model/commands';
import type { Notebook } from '../model/notebook';
import { outline, sectionOf, type Heading } from '../model/outline';
import { h } from './dom';
import type { NotebookView } from './notebookView';
import '../styles/navigate.css';

export interface OutlineHost {
  readonly notebook: Notebook;
  readonly editor: NotebookEditor;
  readonly view: NotebookView;
  readonly scroller: HTMLElement;
  /** Give the keyboard to the active cell. */
  focusNotebook(): void;
}

export class OutlineView {
  readonly element: HTMLElement;
  private readonly list: HTMLElement;
  private readonly empty: HTMLElement;
  private headings: Heading[] = [];
  private items: HTMLButtonElement[] = [];
  private off: (() => void) | null = null;
  private scheduled = false;

  constructor(private readonly host: OutlineHost) {
    this.list = h('ul', { class: 'outline-list', 'aria-label': 'Headings' });
    this.empty = h('p', { class: 'outline-empty', text: 'No headings yet. Markdown cells with # headings show here.' });
    this.element = h('nav', { id: 'outline', class: 'outline', 'aria-label': 'Outline of the notebook' }, this.empty, this.list);
  }

  onShow(): void {
    this.listen();
    this.render();
  }

  onHide(): void {
    this.off?.();
    this.off = null;
  }

  /** Another notebook was opened. */
  notebookChanged(): void {
    if (this.off === null) return;
    this.listen();
    this.render();
  }

  private listen(): void {
    this.off?.();
    const nb = this.host.notebook;
    const offNb = nb.subscribe((change) => {
      if (change.type === 'cell' && !['source', 'cell-type', 'run-state'].includes(change.change.type)) return;
      this.soon();
    });
    const offEd = this.host.editor.subscribe(() => this.soon());
    this.off = () => {
      offNb();
      offEd();
    };
  }

  /** Typing in a cell re-reads the headings once per frame, not per keystroke. */
  private soon(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      if (this.off) this.render();
    });
  }

  private render(): void {
    const cells = this.host.notebook.cells;
    const headings = outline(cells);
    const same = headings.length === this.headings.length && headings.every((hd, i) => {
      const old = this.headings[i];
      return old && old.cell === hd.cell && old.level === hd.level && old.text === hd.text && old.index === hd.index;
    });
    if (!same) {
      this.headings = headings;
      const top = Math.min(...headings.map((hd) => hd.level));
      this.items = headings.map((hd, i) => {
        const b = h('button', { class: 'outline-item', type: 'button', text: hd.text, title: hd.text });
        b.dataset.level = String(hd.level);
        b.style.paddingLeft = `${12 + 14 * (hd.level - top)}px`;
        b.addEventListener('click', () => this.jump(i));
        return b;
      });
      this.list.replaceChildren(...this.items.map((b) => h('li', {}, b)));
      this.empty.hidden = headings.length > 0;
    }
    const running = cells.findIndex((c) => c.runState === 'running');
    const runningAt = running < 0 ? -1 : sectionOf(this.headings, running);
    const activeAt = sectionOf(this.headings, this.host.editor.active);
    this.items.forEach((b, i) => {
      if (i === runningAt) b.dataset.running = 'true';
      else delete b.dataset.running;
      if (i === activeAt) b.setAttribute('aria-current', 'true');
      else b.removeAttribute('aria-current');
    });
  }

  /** The heading's cell becomes the active one, at the top of the notebook's view. */
  private jump(i: number): void {
    const hd = this.headings[i];
    if (!hd) return;
    const ed = this.host.editor;
    ed.selectCell(hd.cell);
    ed.setMode('command');
    const el = this.host.view.viewOf(hd.cell)?.element;
    if (el) {
      const box = this.host.scroller.getBoundingClientRect();
      this.host.scroller.scrollTop += el.getBoundingClientRect().top - box.top - 8;
    }
    this.host.focusNotebook();
  }
}
