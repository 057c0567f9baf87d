/**
 * A running cell's newest output is scrolled into view, as JupyterLab does: while cells run,
 * the notebook follows the output of the one running, until the person scrolls (wheel, touch,
 * the scroll bar, Page Up/Down, Home/End); running cells again follows again.
 */
import type { Cell } from '../model/cell';
import type { Notebook } from '../model/notebook';
import { frames } from '../util/frame';
import type { NotebookView } from './notebookView';

const MARGIN = 16;

export class OutputFollower {
  private running: Cell | null = null;
  /** The person scrolled since cells were last queued. */
  private scrolledAway = false;
  private off: () => void = () => {};
  private readonly follow = (): void => this.reveal();

  constructor(
    private readonly scroller: HTMLElement,
    private readonly view: NotebookView,
  ) {
    const away = (): void => {
      this.scrolledAway = true;
    };
    scroller.addEventListener('wheel', away, { passive: true });
    scroller.addEventListener('touchmove', away, { passive: true });
    // On the scroll bar itself (the scroller is the target; a cell would be otherwise).
    scroller.addEventListener('pointerdown', (e) => {
      if (e.target === scroller) away();
    });
    window.addEventListener('keydown', (e) => {
      if (['PageUp', 'PageDown'].includes(e.key) || (['Home', 'End'].includes(e.key) && (e.ctrlKey || e.metaKey))) away();
    });
  }

  /** Follow the cells of this notebook. */
  attach(notebook: Notebook): void {
    this.off();
    this.running = null;
    this.off = notebook.subscribe((change) => {
      if (change.type !== 'cell') return;
      const { cell } = change;
      switch (change.change.type) {
        case 'run-state':
          if (cell.runState === 'queued') this.scrolledAway = false;
          else if (cell.runState === 'running') this.running = cell;
          else if (cell === this.running) this.running = null;
          return;
        case 'output-added':
        case 'stream-appended':
        case 'output-replaced':
          if (cell === this.running && !this.scrolledAway) frames.afterRender(this.follow);
          return;
        default:
          return;
      }
    });
  }

  /** After the output is drawn: its end shows at the bottom of the notebook's view. */
  private reveal(): void {
    const cell = this.running;
    if (!cell || this.scrolledAway) return;
    const outputs = this.view.viewOf(cell)?.outputsElement;
    if (!outputs) return;
    const bottom = outputs.getBoundingClientRect().bottom;
    const box = this.scroller.getBoundingClientRect();
    const delta = bottom - (box.bottom - MARGIN);
    if (delta > 0) this.scroller.scrollTop += delta;
  }
}
