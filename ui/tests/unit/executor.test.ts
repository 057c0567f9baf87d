// @vitest-environment happy-dom
import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Cell } from '../../src/model/cell';
import { Notebook } from '../../src/model/notebook';
import { Executor } from '../../src/runtime/executor';
import { FrameScheduler } from '../../src/util/frame';

/** The fake kernel side: each `execute` gets a channel we can send on, like the Rust side does. */
interface Run {
  id: string;
  code: string;
  send(event: unknown): void;
}

let runs: Run[] = [];
let cancelled: string[] = [];
let replies: { id: number; value: string }[] = [];

function channelId(v: unknown): number {
  if (typeof v === 'object' && v !== null && 'id' in v && typeof v.id === 'number') return v.id;
  throw new Error('no channel');
}

beforeEach(() => {
  runs = [];
  cancelled = [];
  replies = [];
  mockIPC((cmd, args) => {
    const a: Record<string, unknown> = typeof args === 'object' && args !== null && !Array.isArray(args) ? { ...args } : {};
    switch (cmd) {
      case 'execute': {
        const ch = channelId(a.onEvent);
        let index = 0;
        const id = `e${runs.length + 1}`;
        runs.push({
          id,
          code: String(a.code),
          send: (message) => window.__TAURI_INTERNALS__.runCallback(ch, { index: index++, message }),
        });
        return id;
      }
      case 'cancel_execution':
        cancelled.push(String(a.id));
        return null;
      case 'reply_input':
        replies.push({ id: Number(a.id), value: String(a.value) });
        return null;
      default:
        throw { code: 'IoError', message: `unexpected ${cmd}` };
    }
  });
});

afterEach(() => clearMocks());

declare global {
  interface Window {
    __TAURI_INTERNALS__: { runCallback(id: number, data: unknown): void };
  }
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

function setup(sources: string[]): { nb: Notebook; cells: Cell[]; ex: Executor; frames: FrameScheduler } {
  const cells = sources.map((s) => new Cell({ source: s }));
  const nb = new Notebook(cells);
  const frames = new FrameScheduler();
  return { nb, cells, ex: new Executor(nb, undefined, frames), frames };
}

async function settle(frames: FrameScheduler): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await tick();
    frames.flush();
  }
}

describe('running cells through the execute channel', () => {
  it('queued [*] → started → outputs → finished [n]', async () => {
    const { cells, ex, frames } = setup(['print("hi")']);
    const cell = cells[0];
    if (!cell) throw new Error();
    ex.run([cell]);
    expect(cell.runState).toBe('queued');
    await settle(frames);
    expect(runs.map((r) => r.code)).toEqual(['print("hi")']);
    const run = runs[0];
    run?.send({ type: 'started', executionCount: 3 });
    await settle(frames);
    expect(cell.runState).toBe('running');
    run?.send({ type: 'outputs', outputs: [{ type: 'stream', name: 'stdout', text: 'hi\n' }] });
    run?.send({ type: 'finished' });
    await settle(frames);
    expect(cell.runState).toBe('done');
    expect(cell.executionCount).toBe(3);
    expect(cell.outputs).toHaveLength(1);
  });

  it('sends executions in cell order, the next when the previous one finished', async () => {
    const { cells, ex, frames } = setup(['a', 'b', 'c']);
    ex.run(cells);
    await settle(frames);
    expect(runs.map((r) => r.code)).toEqual(['a']);
    expect(cells.map((c) => c.runState)).toEqual(['queued', 'queued', 'queued']);
    for (let i = 0; i < 3; i++) {
      runs[i]?.send({ type: 'started', executionCount: i + 1 });
      runs[i]?.send({ type: 'finished' });
      await settle(frames);
    }
    expect(runs.map((r) => r.code)).toEqual(['a', 'b', 'c']);
    expect(cells.map((c) => c.runState)).toEqual(['done', 'done', 'done']);
    expect(cells.map((c) => c.executionCount)).toEqual([1, 2, 3]);
  });

  it('a CodeExecutionError marks the cell failed and cancels what was queued after it (run all stops)', async () => {
    const { cells, ex, frames } = setup(['1/0', 'b', 'c']);
    const [c0, c1, c2] = cells;
    if (!c0 || !c1 || !c2) throw new Error();
    ex.run(cells);
    await settle(frames);
    runs[0]?.send({ type: 'started', executionCount: 1 });
    runs[0]?.send({ type: 'outputs', outputs: [{ type: 'error', ename: 'ZeroDivisionError', evalue: 'division by zero', traceback: ['tb'] }] });
    runs[0]?.send({ type: 'failed', error: { code: 'CodeExecutionError', message: 'raised' } });
    await settle(frames);
    expect(c0.runState).toBe('failed');
    expect(c0.notice).toBeNull();
    expect(runs).toHaveLength(1);
    expect(c1.runState).toBe('idle');
    expect(c2.runState).toBe('idle');
    expect(c1.notice?.text).toMatch(/earlier cell failed/);
  });

  it('other failures are shown in the cell in words', async () => {
    const { cells, ex, frames } = setup(['import time; time.sleep(99)']);
    const cell = cells[0];
    if (!cell) throw new Error();
    ex.run(cells);
    await settle(frames);
    runs[0]?.send({ type: 'started', executionCount: 1 });
    runs[0]?.send({ type: 'failed', error: { code: 'Timeout', message: 'after 30 s' } });
    await settle(frames);
    expect(cell.runState).toBe('failed');
    expect(cell.notice?.text).toBe('The execution timed out and was interrupted. after 30 s');
  });

  it('an interrupted cell says so once: its KeyboardInterrupt traceback, no notice under it', async () => {
    const { cells, ex, frames } = setup(['while True: pass', 'import time; time.sleep(99)']);
    const [c0, c1] = cells;
    if (!c0 || !c1) throw new Error();
    ex.run([c0]);
    await settle(frames);
    runs[0]?.send({ type: 'started', executionCount: 1 });
    runs[0]?.send({ type: 'outputs', outputs: [{ type: 'error', ename: 'KeyboardInterrupt', evalue: '', traceback: ['KeyboardInterrupt'] }] });
    runs[0]?.send({ type: 'failed', error: { code: 'Cancelled', message: 'the execution was interrupted' } });
    await settle(frames);
    expect(c0.runState).toBe('failed');
    expect(c0.notice).toBeNull();
    // Without a traceback (the kernel was replaced), the notice is the only word of it.
    ex.run([c1]);
    await settle(frames);
    runs[1]?.send({ type: 'started', executionCount: 2 });
    runs[1]?.send({ type: 'failed', error: { code: 'Cancelled', message: 'the execution was interrupted' } });
    await settle(frames);
    expect(c1.notice?.text).toBe('Cancelled. the execution was interrupted');
  });

  it('input() shows a request and replies with reply_input; the answer is echoed', async () => {
    const { cells, ex, frames } = setup(['name = input("Name: ")']);
    const cell = cells[0];
    if (!cell) throw new Error();
    ex.run(cells);
    await settle(frames);
    runs[0]?.send({ type: 'started', executionCount: 1 });
    runs[0]?.send({ type: 'input', id: 7, prompt: 'Name: ', password: false });
    await settle(frames);
    expect(cell.inputRequest).toEqual({ id: 7, prompt: 'Name: ', password: false });
    await ex.replyInput(cell, 'Ada');
    expect(replies).toEqual([{ id: 7, value: 'Ada' }]);
    expect(cell.inputRequest).toBeNull();
    expect(cell.outputs[0]?.kind === 'stream' && cell.outputs[0].text).toBe('Name: Ada\n');
  });

  it('empty code cells are cleared, not run; markdown cells are rendered', async () => {
    const { cells, ex, frames } = setup(['   ']);
    const md = new Cell({ type: 'markdown', source: '# x' });
    md.rendered = false;
    const cell = cells[0];
    if (!cell) throw new Error();
    cell.setExecutionCount(4);
    ex.run([cell, md]);
    await settle(frames);
    expect(runs).toHaveLength(0);
    expect(cell.executionCount).toBeNull();
    expect(md.rendered).toBe(true);
  });

  it('keeps the old outputs while queued and replaces them with the first new output', async () => {
    const { cells, ex, frames } = setup(['print(2)']);
    const cell = cells[0];
    if (!cell) throw new Error();
    cell.applyOutput({ type: 'stream', name: 'stdout', text: 'old\n' });
    ex.run(cells);
    expect(cell.outputs).toHaveLength(1);
    expect(cell.pendingClear).toBe('run');
    await settle(frames);
    runs[0]?.send({ type: 'started', executionCount: 2 });
    runs[0]?.send({ type: 'outputs', outputs: [{ type: 'stream', name: 'stdout', text: 'new\n' }] });
    await settle(frames);
    expect(cell.outputs[0]?.kind === 'stream' && cell.outputs[0].text).toBe('new\n');
  });

  it('applies a burst of events in one frame', async () => {
    const { cells, ex, frames } = setup(['loop']);
    const cell = cells[0];
    if (!cell) throw new Error();
    ex.run(cells);
    await settle(frames);
    runs[0]?.send({ type: 'started', executionCount: 1 });
    for (let i = 0; i < 1000; i++) runs[0]?.send({ type: 'outputs', outputs: [{ type: 'stream', name: 'stdout', text: `${i}\n` }] });
    runs[0]?.send({ type: 'finished' });
    await tick();
    frames.flush();
    expect(cell.outputs).toHaveLength(1);
    expect(cell.outputs[0]?.kind === 'stream' && cell.outputs[0].text.split('\n').length).toBe(1001);
    expect(cell.runState).toBe('done');
  });

  it('cancelAll ends queued and running executions (kernel restart)', async () => {
    const { cells, ex, frames } = setup(['a', 'b']);
    const [c0, c1] = cells;
    if (!c0 || !c1) throw new Error();
    ex.run(cells);
    await settle(frames);
    runs[0]?.send({ type: 'started', executionCount: 1 });
    await settle(frames);
    ex.cancelAll('The kernel was restarted.');
    await settle(frames);
    expect(c0.runState).toBe('failed');
    expect(c1.runState).toBe('idle');
    expect(ex.pendingCount).toBe(0);
  });
});

describe('a sandbox block', () => {
  const block = { access: 'write' as const, path: '/tmp/out/a.csv', rule: null, reason: 'read-only', suggestion: '/tmp/out', refusal: null };

  it('shows on its run whichever comes first, its event or the run’s start, and goes with the next run', async () => {
    const { cells, ex, frames } = setup(['open("/tmp/out/a.csv", "w")']);
    const cell = cells[0];
    if (!cell) throw new Error();
    // Before `execute` answered with the id: kept until it does.
    ex.run([cell]);
    ex.noteSandboxBlock('e1', block);
    await settle(frames);
    // The session event before the channel's start (two transports, either order).
    runs[0]?.send({ type: 'started', executionCount: 1 });
    runs[0]?.send({ type: 'failed', error: { code: 'CodeExecutionError', message: 'raised' } });
    await settle(frames);
    expect(cell.sandboxBlock, 'the start does not clear its own run’s block').toEqual(block);

    ex.run([cell]);
    await settle(frames);
    ex.noteSandboxBlock('e2', { ...block, path: '/tmp/out/b.csv' });
    runs[1]?.send({ type: 'started', executionCount: 2 });
    await settle(frames);
    expect(cell.sandboxBlock?.path, 'a re-run: its own block, not cleared by its start').toBe('/tmp/out/b.csv');
    runs[1]?.send({ type: 'finished' });
    ex.run([cell]);
    await settle(frames);
    runs[2]?.send({ type: 'started', executionCount: 3 });
    await settle(frames);
    expect(cell.sandboxBlock, 'a later run without a block clears it').toBeNull();
  });
});
