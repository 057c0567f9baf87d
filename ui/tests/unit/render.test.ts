// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { StreamOutput, type DisplayDataOutput, type ErrorOutput, type ExecuteResultOutput } from '../../src/model/outputs';
import {
  chooseMime,
  createOutputView,
  STREAM_CHUNK_LINES,
  STREAM_VISIBLE_LINES,
  StreamOutputView,
} from '../../src/render/outputs';
import { FrameScheduler } from '../../src/util/frame';

function display(data: DisplayDataOutput['data'], metadata: DisplayDataOutput['metadata'] = {}): DisplayDataOutput {
  return { kind: 'display_data', data, metadata, displayId: null, fromFile: false, extra: {}, raw: null };
}

describe('choosing the richest MIME type', () => {
  it('follows the priority and skips widget views', () => {
    expect(chooseMime({ 'text/plain': 'x', 'text/html': '<b>x</b>', 'image/png': 'i' })).toBe('text/html');
    expect(chooseMime({ 'text/plain': 'x', 'image/png': 'i' })).toBe('image/png');
    expect(chooseMime({ 'text/plain': 'x', 'image/svg+xml': '<svg/>', 'image/png': 'i' })).toBe('image/svg+xml');
    expect(chooseMime({ 'application/vnd.jupyter.widget-view+json': { model_id: 'm' }, 'text/plain': 'IntSlider()' })).toBe('text/plain');
    expect(chooseMime({ 'text/latex': '$x$', 'text/plain': 'x' })).toBe('text/latex');
    expect(chooseMime({ 'application/json': { a: 1 }, 'text/plain': '{}' })).toBe('application/json');
    expect(chooseMime({ 'application/javascript': 'x' })).toBeNull();
  });
});

describe('output components', () => {
  it('image/png → img.output-image with a data URL, honouring metadata width/height', () => {
    const view = createOutputView(display({ 'image/png': 'iVBO\nRw0=\n', 'text/plain': '<Figure>' }, { 'image/png': { width: 320, height: 200 } }));
    expect(view.element.dataset.outputType).toBe('display_data');
    expect(view.element.dataset.mime).toBe('image/png');
    const img = view.element.querySelector('img.output-image');
    expect(img?.getAttribute('src')).toBe('data:image/png;base64,iVBORw0=');
    expect(img?.getAttribute('width')).toBe('320');
    expect(img?.getAttribute('height')).toBe('200');
    expect(img?.getAttribute('alt')).toBe('<Figure>');
  });

  it('image/jpeg and SVG (as an image, so nothing in it runs)', () => {
    const jpeg = createOutputView(display({ 'image/jpeg': '/9j/4AAQ' }));
    expect(jpeg.element.querySelector('img')?.getAttribute('src')).toBe('data:image/jpeg;base64,/9j/4AAQ');
    const svg = createOutputView(display({ 'image/svg+xml': '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>' }));
    expect(svg.element.dataset.mime).toBe('image/svg+xml');
    expect(svg.element.querySelector('script')).toBeNull();
    expect(svg.element.querySelector('img.output-image')?.getAttribute('src')).toMatch(/^data:image\/svg\+xml;charset=utf-8,/);
  });

  it('execute_result shows its prompt [n]: and text/plain', () => {
    const out: ExecuteResultOutput = { kind: 'execute_result', executionCount: 7, data: { 'text/plain': '42' }, metadata: {}, fromFile: false, extra: {}, raw: null };
    const view = createOutputView(out);
    expect(view.element.dataset.outputType).toBe('execute_result');
    expect(view.element.querySelector('.output-prompt')?.textContent).toBe('[7]:');
    expect(view.element.querySelector('pre.output-text')?.textContent).toBe('42');
  });

  it('application/json → a collapsible tree', () => {
    const view = createOutputView(display({ 'application/json': { a: 1, list: [true, null, 'x'] } }));
    expect(view.element.dataset.mime).toBe('application/json');
    expect(view.element.querySelectorAll('details').length).toBe(2);
    expect(view.element.textContent).toContain('"x"');
  });

  it('error → the traceback with ANSI colours as spans, never as HTML', () => {
    const out: ErrorOutput = { kind: 'error', ename: 'ValueError', evalue: 'bad <b>', traceback: ['\x1b[0;31mValueError\x1b[0m: bad <b>'], extra: {}, raw: null };
    const view = createOutputView(out);
    expect(view.element.dataset.outputType).toBe('error');
    const span = view.element.querySelector('span.ansi-fg-1');
    expect(span?.textContent).toBe('ValueError');
    expect(view.element.querySelector('b')).toBeNull();
    expect(view.element.textContent).toContain('bad <b>');
  });

  it('a widget-only output says so in words', () => {
    const view = createOutputView(display({ 'application/vnd.jupyter.widget-view+json': { model_id: 'x' } }));
    expect(view.element.textContent).toMatch(/widgets are not supported/);
  });

  it('stdout and stderr are told apart', () => {
    const err = new StreamOutput('stderr');
    err.append('warning\n');
    const view = createOutputView(err, { scheduler: new FrameScheduler() });
    expect(view.element.classList.contains('stream-stderr')).toBe(true);
    expect(view.element.dataset.outputType).toBe('stream');
  });
});

describe('streaming into the DOM', () => {
  function setup(): { model: StreamOutput; view: StreamOutputView; frames: FrameScheduler; push(text: string): void } {
    const frames = new FrameScheduler();
    const model = new StreamOutput('stdout');
    const view = new StreamOutputView(model, document, frames);
    document.body.appendChild(view.element);
    return { model, view, frames, push: (text) => view.append(model.append(text)) };
  }

  it('\\r overwrites the current line in place', () => {
    const { view, frames, push } = setup();
    push('Downloading\n');
    push('\r 10%');
    frames.flush();
    push('\r 55%');
    push('\r100%');
    frames.flush();
    const pre = view.element.querySelector('pre');
    expect(pre?.textContent).toBe('Downloading\n100%');
    push('\ndone\n');
    frames.flush();
    expect(pre?.textContent).toBe('Downloading\n100%\ndone\n');
  });

  it('10,000 stream events append without re-rendering earlier nodes', () => {
    const { view, frames, push } = setup();
    const pre = view.element.querySelector('pre');
    if (!pre) throw new Error('no pre');
    push('first line\n');
    frames.flush();
    const firstChunk = pre.querySelector('.stream-chunk');
    const firstText = firstChunk?.firstChild;
    let removedNodes = 0;
    let addedNodes = 0;
    const observer = new MutationObserver((records) => {
      for (const r of records) {
        if (r.target === pre || r.target instanceof Element && r.target.classList.contains('stream-chunk')) {
          removedNodes += r.removedNodes.length;
          addedNodes += r.addedNodes.length;
        }
      }
    });
    observer.observe(pre, { childList: true, subtree: true });
    const t0 = performance.now();
    for (let i = 1; i < STREAM_VISIBLE_LINES - 1; i++) {
      push(`line ${i}\n`);
      if (i % 10 === 0) frames.flush();
    }
    frames.flush();
    const elapsed = performance.now() - t0;
    // Nothing rendered before was replaced: the first text node is the same object.
    expect(pre.querySelector('.stream-chunk')).toBe(firstChunk);
    expect(firstChunk?.firstChild).toBe(firstText);
    for (const r of observer.takeRecords()) {
      removedNodes += r.removedNodes.length;
      addedNodes += r.addedNodes.length;
    }
    expect(removedNodes).toBe(0);
    expect(addedNodes).toBeGreaterThan(0);
    expect(view.domLines).toBe(STREAM_VISIBLE_LINES - 1);
    // Past the visible limit, only whole chunks leave from the top.
    for (let i = 0; i <= 10000 - STREAM_VISIBLE_LINES; i++) {
      push(`more ${i}\n`);
      if (i % 10 === 0) frames.flush();
    }
    frames.flush();
    observer.disconnect();
    expect(view.domLines).toBeLessThanOrEqual(STREAM_VISIBLE_LINES + STREAM_CHUNK_LINES);
    expect(view.domLines).toBeGreaterThanOrEqual(STREAM_VISIBLE_LINES);
    expect(view.hidden + view.domLines).toBe(10000);
    expect(view.element.querySelector('.stream-hidden-note')?.textContent).toMatch(/earlier lines hidden/);
    expect(pre.lastElementChild?.previousElementSibling?.textContent?.endsWith('more 5000\n')).toBe(true);
    expect(elapsed).toBeLessThan(5000);
  });

  it('a huge single burst renders only its tail', () => {
    const { view, frames, push } = setup();
    let text = '';
    for (let i = 0; i < 100000; i++) text += `${i}\n`;
    push(text);
    frames.flush();
    expect(view.domLines).toBe(STREAM_VISIBLE_LINES);
    expect(view.hidden).toBe(100000 - STREAM_VISIBLE_LINES);
    expect(view.element.querySelector('pre')?.textContent?.startsWith(`${100000 - STREAM_VISIBLE_LINES}\n`)).toBe(true);
  });

  it('keeps ANSI colours across chunks', () => {
    const { view, frames, push } = setup();
    push('\x1b[32mgreen\n');
    frames.flush();
    push('still\n');
    frames.flush();
    const spans = [...view.element.querySelectorAll('span.ansi-fg-2')].map((s) => s.textContent);
    expect(spans).toEqual(['green\n', 'still\n']);
  });
});
