import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FrameScheduler } from '../../src/util/frame';

describe('FrameScheduler', () => {
  let frameCallbacks: FrameRequestCallback[];

  beforeEach(() => {
    vi.useFakeTimers();
    frameCallbacks = [];
    vi.stubGlobal('requestAnimationFrame', (cb: FrameRequestCallback) => frameCallbacks.push(cb));
    vi.stubGlobal('cancelAnimationFrame', () => {});
  });

  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  function runFrame(): void {
    const cbs = frameCallbacks;
    frameCallbacks = [];
    for (const cb of cbs) cb(performance.now());
  }

  /** Enqueue a task and let any task-scheduled flush run (not a frame). */
  function batch(frames: FrameScheduler, ran: number[], n: number): void {
    frames.enqueue(() => ran.push(n));
    vi.advanceTimersByTime(0);
  }

  it("runs a short cell's first batches in tasks of their own, not at the next frame", () => {
    const frames = new FrameScheduler();
    const ran: number[] = [];
    frames.enqueue(() => ran.push(1));
    frames.enqueue(() => ran.push(2));
    expect(ran).toEqual([]); // not inside the caller: events that arrive together coalesce
    vi.advanceTimersByTime(0);
    expect(ran).toEqual([1, 2]);
    batch(frames, ran, 3); // started, output, finished: each at once
    batch(frames, ran, 4);
    expect(ran).toEqual([1, 2, 3, 4]);
    expect(frameCallbacks).toHaveLength(0);
  });

  it('while output streams, batches once per animation frame', () => {
    const frames = new FrameScheduler();
    const ran: number[] = [];
    for (let i = 1; i <= 4; i++) batch(frames, ran, i);
    expect(ran).toEqual([1, 2, 3, 4]);
    frames.enqueue(() => ran.push(5));
    frames.enqueue(() => ran.push(6));
    vi.advanceTimersByTime(0);
    expect(ran).toEqual([1, 2, 3, 4]); // over the budget: waits for the frame
    runFrame();
    expect(ran).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('goes back to the quick path once streaming stops', () => {
    const frames = new FrameScheduler();
    const ran: number[] = [];
    for (let i = 1; i <= 5; i++) batch(frames, ran, i);
    runFrame();
    vi.advanceTimersByTime(150);
    batch(frames, ran, 6);
    expect(ran).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('keeps output flowing in a hidden window, where frames never come', () => {
    const frames = new FrameScheduler();
    const ran: number[] = [];
    for (let i = 1; i <= 5; i++) batch(frames, ran, i);
    expect(ran).toEqual([1, 2, 3, 4]);
    vi.advanceTimersByTime(250);
    expect(ran).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('FrameScheduler, work added while it flushes', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('runs a view a task marked dirty in the same flush, spending no batch of its own', () => {
    const frames = new FrameScheduler();
    const rendered: string[] = [];
    const view = { render: () => rendered.push('view') };
    for (let i = 0; i < 4; i++) {
      frames.enqueue(() => frames.markDirty(view));
      vi.advanceTimersByTime(0);
    }
    // Four events, each with its view: four quick batches, every one rendered at once.
    expect(rendered).toEqual(['view', 'view', 'view', 'view']);
  });

  it('schedules once more what a view adds while it renders', () => {
    const frames = new FrameScheduler();
    const ran: string[] = [];
    const view = { render: () => frames.enqueue(() => ran.push('later')) };
    frames.markDirty(view);
    expect(ran).toEqual([]);
    vi.runAllTimers(); // the flush, then the one it scheduled at its end
    expect(ran).toEqual(['later']);
  });
});
