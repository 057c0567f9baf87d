// @vitest-environment jsdom
// HTML, Markdown and LaTeX outputs go through DOMPurify, which needs jsdom (it cannot run in happy-dom).
import { beforeAll, describe, expect, it } from 'vitest';
import type { DisplayDataOutput } from '../../src/model/outputs';
import { loadMath } from '../../src/render/math';
import { createOutputView } from '../../src/render/outputs';

beforeAll(() => loadMath());

function display(data: DisplayDataOutput['data']): DisplayDataOutput {
  return { kind: 'display_data', data, metadata: {}, displayId: null, extra: {}, raw: null, fromFile: false };
}

describe('rich text outputs', () => {
  it('text/html → sanitized HTML (a table renders, its script does not)', () => {
    const view = createOutputView(display({ 'text/html': '<table class="dataframe"><tr><td>1</td></tr></table><script>window.__x=1</script>', 'text/plain': 'df' }));
    expect(view.element.dataset.mime).toBe('text/html');
    expect(view.element.querySelector('table.dataframe td')?.textContent).toBe('1');
    expect(view.element.querySelector('script')).toBeNull();
  });

  it('text/markdown → rendered Markdown with math', () => {
    const view = createOutputView(display({ 'text/markdown': '**bold** and $x^2$' }));
    expect(view.element.dataset.mime).toBe('text/markdown');
    expect(view.element.querySelector('strong')?.textContent).toBe('bold');
    expect(view.element.querySelector('.katex')).not.toBeNull();
  });

  it('text/latex → KaTeX', () => {
    const view = createOutputView(display({ 'text/latex': '$$\\frac{a}{b}$$', 'text/plain': 'x' }));
    expect(view.element.dataset.mime).toBe('text/latex');
    expect(view.element.querySelector('.katex-display')).not.toBeNull();
  });
});

describe('outputs are contained', () => {
  it('HTML, Markdown and LaTeX outputs render into a box of their own (.user-content)', () => {
    const bundles: DisplayDataOutput['data'][] = [{ 'text/html': '<b>x</b>' }, { 'text/markdown': '*x*' }, { 'text/latex': '$x$' }];
    for (const data of bundles) {
      const view = createOutputView(display(data));
      expect(view.element.querySelector('.output-body > .user-content'), Object.keys(data)[0]).not.toBeNull();
    }
  });
});

describe('outputs of a notebook that is not trusted', () => {
  const TABLE = '<table class="dataframe"><tr><td>1</td></tr></table>';

  function stored(data: DisplayDataOutput['data']): DisplayDataOutput {
    return { ...display(data), fromFile: true };
  }

  it('a stored HTML output shows as its source text, with a note, until the notebook is trusted', () => {
    const view = createOutputView(stored({ 'text/html': TABLE, 'text/plain': 'df' }), { trusted: false });
    expect(view.element.dataset.mime).toBe('text/html');
    expect(view.element.dataset.trusted).toBe('false');
    expect(view.element.querySelector('table')).toBeNull();
    expect(view.element.querySelector('pre.untrusted-source')?.textContent).toBe(TABLE);
    expect(view.element.querySelector('.untrusted-note')?.textContent).toBe('Not trusted: HTML output shown as text. Trust this notebook to render it.');
  });

  it('stored SVG and Markdown outputs are shown as text too; PNG, LaTeX and plain text render', () => {
    const svg = createOutputView(stored({ 'image/svg+xml': '<svg xmlns="http://www.w3.org/2000/svg"><rect width="5" height="5"/></svg>' }), { trusted: false });
    expect(svg.element.querySelector('img')).toBeNull();
    expect(svg.element.querySelector('pre.untrusted-source')?.textContent).toContain('<rect');
    expect(svg.element.querySelector('.untrusted-note')?.textContent).toBe('Not trusted: SVG output shown as text. Trust this notebook to render it.');
    const md = createOutputView(stored({ 'text/markdown': '**bold**' }), { trusted: false });
    expect(md.element.querySelector('strong')).toBeNull();
    expect(md.element.querySelector('pre.untrusted-source')?.textContent).toBe('**bold**');
    expect(md.element.querySelector('.untrusted-note')?.textContent).toBe('Not trusted: Markdown output shown as text. Trust this notebook to render it.');
    const png = createOutputView(stored({ 'image/png': 'iVBORw0KGgo=' }), { trusted: false });
    expect(png.element.querySelector('img.output-image')).not.toBeNull();
    expect(png.element.dataset.trusted).toBeUndefined();
    const tex = createOutputView(stored({ 'text/latex': '$x$' }), { trusted: false });
    expect(tex.element.querySelector('.katex')).not.toBeNull();
  });

  it('a long source shows its first 20,000 characters and how many more there are', () => {
    const big = `<div>${'x'.repeat(30_000)}</div>`;
    const view = createOutputView(stored({ 'text/html': big }), { trusted: false });
    const text = view.element.querySelector('pre.untrusted-source')?.textContent ?? '';
    expect(text.startsWith(big.slice(0, 20_000))).toBe(true);
    expect(text.endsWith(`\n… ${(big.length - 20_000).toLocaleString('en-US')} more characters`)).toBe(true);
  });

  it('an output produced in this session renders even in a notebook that is not trusted', () => {
    const view = createOutputView(display({ 'text/html': TABLE }), { trusted: false });
    expect(view.element.querySelector('table.dataframe')).not.toBeNull();
    expect(view.element.dataset.trusted).toBeUndefined();
  });

  it('in a trusted notebook, stored outputs render', () => {
    const view = createOutputView(stored({ 'text/html': TABLE }), { trusted: true });
    expect(view.element.querySelector('table.dataframe')).not.toBeNull();
  });
});
