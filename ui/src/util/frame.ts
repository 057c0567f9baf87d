/**
 * One place where DOM work for streaming happens: tasks (applying kernel events to the model)
 * and dirty views are collected and run together once per animation frame, so any number of
 * events between two frames cost one DOM update per output.
 *
 * A short cell's few batches (started, its output, finished) do not wait for a frame: the
 * first few in any 100 ms run in a task of their own (events that arrive together still
 * coalesce) and are painted by the very next frame. Waiting for `requestAnimationFrame`
 * there would apply them during that frame's callbacks, too late for anything that reacts
 * to them before the frame after, and a warm `print(1)` would show a frame (≈ 17 ms) later
 * than it could. Past that budget, as when a cell streams, batches wait for the frame.
 */
export interface Renderable {
  render(): void;
}

/** At most this many batches in any `WINDOW_MS` run at once; the rest wait for a frame. */
const QUICK_BATCHES = 4;
const WINDOW_MS = 100;

export class FrameScheduler {
  private windowStart = Number.NEGATIVE_INFINITY;
  private quickInWindow = 0;
  private tasks: (() => void)[] = [];
  private dirty = new Set<Renderable>();
  private after = new Set<() => void>();
  private scheduled = false;
  private flushing = false;
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
    // Work added while flushing (a task marking its view dirty) is run by that flush, or
    // scheduled once at its end: it must not spend a quick batch of its own.
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    const t = now();
    if (t - this.windowStart > WINDOW_MS) {
      this.windowStart = t;
      this.quickInWindow = 0;
    }
    if (this.quickInWindow < QUICK_BATCHES) {
      this.quickInWindow++;
      this.timerId = setTimeout(() => this.flush(), 0);
      return;
    }
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
    this.flushing = true;
    try {
      this.runAll();
    } finally {
      this.flushing = false;
    }
    if (this.tasks.length > 0 || this.dirty.size > 0 || this.after.size > 0) this.schedule();
  }

  private runAll(): void {
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

function now(): number {
  return typeof performance === 'undefined' ? Date.now() : performance.now();
}

export const frames = new FrameScheduler();
