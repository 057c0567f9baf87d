// @vitest-environment jsdom
// HTML, Markdown and LaTeX outputs go through DOMPurify, which needs jsdom (it cannot run in happy-dom).
import { describe, expect, it } from 'vitest';
import type { DisplayDataOutput } from '../../src/model/outputs';
import { createOutputView } from '../../src/render/outputs';

function display(data: DisplayDataOutput['data']): DisplayDataOutput {
  return { kind: 'display_data', data, metadata: {}, displayId: null, extra: {}, raw: null };
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
