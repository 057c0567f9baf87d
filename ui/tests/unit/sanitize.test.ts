// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { sanitizeHtml, sanitizeHtmlToString } from '../../src/render/sanitize';
import { renderMarkdown } from '../../src/render/markdown';

function html(input: string): HTMLElement {
  const div = document.createElement('div');
  div.appendChild(sanitizeHtml(input));
  return div;
}

describe('HTML sanitization', () => {
  it('removes <script> (it never runs)', () => {
    const el = html('<b>ok</b><script>window.__ran = true</script>');
    expect(el.querySelector('script')).toBeNull();
    expect(el.innerHTML).toBe('<b>ok</b>');
  });

  it('drops event-handler attributes: <img src=x onerror=...>', () => {
    const el = html('<img src=x onerror="window.__ran=1"><div onclick="x()" onmouseover="y()">t</div>');
    const img = el.querySelector('img');
    expect(img).not.toBeNull();
    expect(img?.getAttribute('onerror')).toBeNull();
    expect(img?.hasAttribute('src')).toBe(false);
    expect(el.querySelector('div')?.attributes.length).toBe(0);
  });

  it('nothing from outside loads: http(s) and protocol-relative src/srcset/href/style url() are removed', () => {
    const el = html(
      '<img src="https://example.com/t.png"><img src="//example.com/t.png"><img srcset="https://e.com/a.png 2x">' +
        '<video poster="http://e.com/p.png" src="http://e.com/v.mp4"></video><div style="background: url(https://e.com/b.png)">x</div>' +
        '<svg><image href="https://e.com/i.png"/><use xlink:href="http://e.com/s.svg#a"/></svg>',
    );
    const out = el.innerHTML;
    expect(out).not.toMatch(/example\.com|e\.com/);
  });

  it('data: images stay', () => {
    const el = html('<img src="data:image/png;base64,iVBORw0KGgo=">');
    expect(el.querySelector('img')?.getAttribute('src')).toBe('data:image/png;base64,iVBORw0KGgo=');
  });

  it('javascript: links are neutralized; external links become inert with their address shown', () => {
    const el = html('<a href="javascript:alert(1)">x</a><a href="https://jupyter.org">j</a><a href="#sec">in page</a>');
    const [js, ext, local] = [...el.querySelectorAll('a')];
    expect(js?.getAttribute('href')).toBeNull();
    expect(ext?.getAttribute('href')).toBeNull();
    expect(ext?.getAttribute('data-href')).toBe('https://jupyter.org');
    expect(ext?.classList.contains('external-link')).toBe(true);
    expect(local?.getAttribute('href')).toBe('#sec');
  });

  it('removes iframes, objects, forms, styles, meta refresh and base', () => {
    const out = sanitizeHtmlToString(
      '<iframe src="https://e.com"></iframe><object data="x.swf"></object><form action="https://e.com"><input></form>' +
        '<style>body{display:none}</style><meta http-equiv="refresh" content="0;url=https://e.com"><base href="https://e.com/"><p>kept</p>',
    );
    expect(out).not.toMatch(/iframe|object|form|style|meta|base|e\.com/);
    expect(out).toContain('<p>kept</p>');
  });

  it('keeps pandas table markup (without its <style>)', () => {
    const el = html('<div><style scoped>.dataframe{}</style><table border="1" class="dataframe"><thead><tr style="text-align: right;"><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table></div>');
    expect(el.querySelector('table.dataframe')).not.toBeNull();
    expect(el.querySelector('style')).toBeNull();
    expect(el.querySelector('tr')?.getAttribute('style')).toBe('text-align: right;');
  });
});

describe('Markdown is sanitized too', () => {
  it('raw HTML in Markdown loses scripts and handlers; links are inert', () => {
    const div = document.createElement('div');
    div.appendChild(renderMarkdown('# T\n\n<img src=x onerror="window.__ran=1"> [link](https://e.com) <script>alert(1)</script>\n\n[js](javascript:alert(1))'));
    expect(div.querySelector('script')).toBeNull();
    expect(div.querySelector('img')?.getAttribute('onerror')).toBeNull();
    for (const a of div.querySelectorAll('a')) expect(a.getAttribute('href')).toBeNull();
    expect(div.querySelector('h1')?.textContent).toBe('T');
  });
});
