/**
 * One place where DOM work for streaming happens: tasks (applying kernel events to the model)
 * and dirty views are collected and run together once per animation frame, so any number of
 * events between two frames cost one DOM update per output.
 *
 * After a quiet spell the first batch does not wait for a frame: it runs in a task of its
 * own (events that arrive together still coalesce) and is painted by the very next frame.
 * Waiting for `requestAnimationFrame` there would apply it during that frame's callbacks,
 * too late for anything that reacts to it (a scroll, a measure) before the frame after, and
 * a warm `print(1)` would show one frame (≈ 17 ms) later than it could.
 */
export interface Renderable {
  render(): void;
}

/** A flush longer ago than this means nothing is streaming: the next batch runs at once. */
const QUIET_MS = 100;

export class FrameScheduler {
  private lastFlush = Number.NEGATIVE_INFINITY;
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
    if (now() - this.lastFlush > QUIET_MS) {
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
    this.lastFlush = now();
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
