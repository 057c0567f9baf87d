// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { latexToHtml, markdownToHtml, renderMarkdown } from '../../src/render/markdown';

describe('Markdown with math', () => {
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
