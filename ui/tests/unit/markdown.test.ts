// @vitest-environment jsdom
import { beforeAll, describe, expect, it } from 'vitest';
import { latexToHtml, markdownToHtml, renderMarkdown } from '../../src/render/markdown';
import { loadMath } from '../../src/render/math';

// Runs first: KaTeX is not loaded until something shows math.
describe('math before KaTeX has loaded', () => {
  it('shows a formula as its escaped source, then typesets it in the document once KaTeX is in', async () => {
    const div = document.createElement('div');
    document.body.appendChild(div);
    div.appendChild(renderMarkdown('Inline $<img src=x onerror="window.__hit=1">$ and\n\n$$\\frac{a}{b}$$'));
    const pending = div.querySelectorAll('.math-pending');
    expect(pending.length).toBe(2);
    expect(div.querySelector('img')).toBeNull();
    expect(pending[0]?.textContent).toBe('<img src=x onerror="window.__hit=1">');
    expect(div.querySelector('.math-display .math-pending-display')?.textContent).toBe('\\frac{a}{b}');
    expect(div.querySelector('.katex')).toBeNull();
    await loadMath();
    expect(div.querySelector('.math-pending')).toBeNull();
    expect(div.querySelectorAll('.katex, .katex-error').length).toBe(2);
    expect(div.querySelector('.katex-display')).not.toBeNull();
    expect(div.querySelector('img')).toBeNull();
    div.remove();
  });
});

describe('Markdown with math', () => {
  beforeAll(() => loadMath());

  it('renders inline $…$ and \\(…\\) with KaTeX', () => {
    const out = markdownToHtml('Energy $E = mc^2$ and \\(a_1 * b_2\\).');
    expect(out.match(/class="katex"/g)?.length).toBe(2);
    expect(out).not.toContain('<em>');
  });

  it('renders display $$…$$ blocks, also over several lines, and \\begin{…} environments', () => {
    expect(markdownToHtml('$$\n\\sum_{i=1}^n i\n$$')).toContain('katex-display');
    expect(markdownToHtml('$$x^2$$')).toContain('katex-display');
    expect(markdownToHtml('\\begin{align}\na &= b\\\\\nc &= d\n\\end{align}')).toContain('katex-display');
  });

  it('leaves dollars that are not math alone', () => {
    const out = markdownToHtml('It costs $5 and $10 today.');
    expect(out).not.toContain('katex');
    expect(out).toContain('$5 and $10');
  });

  it('shows a TeX error in place instead of failing', () => {
    expect(markdownToHtml('$\\frac{1}{$')).toContain('katex-error');
  });

  it('resolves attachment: images to data URLs', () => {
    const div = document.createElement('div');
    div.appendChild(renderMarkdown('![s](attachment:s.png)', { 's.png': { 'image/png': 'iVBORw0KGgo=' } }));
    expect(div.querySelector('img')?.getAttribute('src')).toBe('data:image/png;base64,iVBORw0KGgo=');
  });

  it('renders GitHub tables and code', () => {
    const out = markdownToHtml('| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nx = 1\n```');
    expect(out).toContain('<table>');
    expect(out).toContain('<code class="language-python">');
  });

  it('text/latex outputs', () => {
    expect(latexToHtml('$$\\alpha$$')).toContain('katex-display');
    expect(latexToHtml('$\\alpha$')).not.toContain('katex-display');
  });
});
