/**
 * One place where DOM work for streaming happens: tasks (applying kernel events to the model)
 * and dirty views are collected and run together once per animation frame, so any number of
 * events between two frames cost one DOM update per output.
 */
export interface Renderable {
  render(): void;
}

export class FrameScheduler {
  private tasks: (() => void)[] = [];
  private dirty = new Set<Renderable>();
  private after = new Set<() => void>();
  private scheduled = false;
  private rafId: number | null = null;
  private timerId: ReturnType<typeof setTimeout> | null = null;

  /** Run `task` before the next render. */
  enqueue(task: () => void): void {
    this.tasks.push(task);
    this.schedule();
  }

  markDirty(view: Renderable): void {
    this.dirty.add(view);
    this.schedule();
  }

  /** Run once after the next render (e.g. keep a scroll area at its bottom). */
  afterRender(fn: () => void): void {
    this.after.add(fn);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    if (typeof requestAnimationFrame === 'function') this.rafId = requestAnimationFrame(() => this.flush());
    // rAF does not run in a hidden window; a timer keeps output flowing there.
    this.timerId = setTimeout(() => this.flush(), 250);
  }

  /** Run everything now. */
  flush(): void {
    if (this.rafId !== null && typeof cancelAnimationFrame === 'function') cancelAnimationFrame(this.rafId);
    if (this.timerId !== null) clearTimeout(this.timerId);
    this.rafId = null;
    this.timerId = null;
    this.scheduled = false;
    const tasks = this.tasks;
    this.tasks = [];
    for (const t of tasks) {
      try {
        t();
      } catch (err) {
        console.error('ipybox: applying an event failed', err);
      }
    }
    const dirty = [...this.dirty];
    this.dirty.clear();
    for (const v of dirty) {
      try {
        v.render();
      } catch (err) {
        console.error('ipybox: rendering failed', err);
      }
    }
    const after = [...this.after];
    this.after.clear();
    for (const fn of after) fn();
  }
}

export const frames = new FrameScheduler();
