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

  it('after a quiet spell, runs the first batch in a task of its own, not at the next frame', () => {
    const frames = new FrameScheduler();
    const ran: number[] = [];
    frames.enqueue(() => ran.push(1));
    frames.enqueue(() => ran.push(2));
    expect(ran).toEqual([]); // not inside the caller: events that arrive together coalesce
    vi.advanceTimersByTime(0);
    expect(ran).toEqual([1, 2]);
    expect(frameCallbacks).toHaveLength(0);
  });

  it('while output streams, batches once per animation frame', () => {
    const frames = new FrameScheduler();
    const ran: number[] = [];
    frames.enqueue(() => ran.push(1));
    vi.advanceTimersByTime(0);
    frames.enqueue(() => ran.push(2));
    frames.enqueue(() => ran.push(3));
    vi.advanceTimersByTime(0);
    expect(ran).toEqual([1]); // waits for the frame
    runFrame();
    expect(ran).toEqual([1, 2, 3]);
  });

  it('goes back to the quick path once streaming stops', () => {
    const frames = new FrameScheduler();
    const ran: number[] = [];
    frames.enqueue(() => ran.push(1));
    vi.advanceTimersByTime(0);
    vi.advanceTimersByTime(150);
    frames.enqueue(() => ran.push(2));
    vi.advanceTimersByTime(0);
    expect(ran).toEqual([1, 2]);
  });

  it('keeps output flowing in a hidden window, where frames never come', () => {
    const frames = new FrameScheduler();
    const ran: number[] = [];
    frames.enqueue(() => ran.push(1));
    vi.advanceTimersByTime(0);
    frames.enqueue(() => ran.push(2));
    vi.advanceTimersByTime(250);
    expect(ran).toEqual([1, 2]);
  });
});
