// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { sanitizeHtml, sanitizeHtmlToString, stillUnsafe } from '../../src/render/sanitize';
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
    // In-page links stay, into the namespace of the output's ids.
    expect(local?.getAttribute('href')).toBe('#user-content-sec');
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

describe('outputs cannot reach the app’s controls', () => {
  it('a <label for=…> loses `for`: a click on it activates nothing of the app', () => {
    const el = html('<label for="run-all" style="display:block">click</label><output for="run-all">x</output>');
    expect(el.querySelector('label')?.hasAttribute('for')).toBe(false);
    expect(el.querySelector('output')?.hasAttribute('for')).toBe(false);
    expect(el.querySelector('label')?.textContent).toBe('click');
  });

  it('attributes that act on another element, submit, open the top layer or take the focus are dropped', () => {
    const dropped = [
      'form="f"',
      'formaction="#x"',
      'popovertarget="approvals"',
      'popovertargetaction="show"',
      'popover="manual"',
      'command="show-modal"',
      'commandfor="settings-dialog"',
      'interestfor="x"',
      'anchor="run-all"',
      'contextmenu="m"',
      'accesskey="r"',
      'autofocus',
      'tabindex="0"',
      'contenteditable="true"',
    ];
    for (const attr of dropped) {
      const el = html(`<button ${attr}>b</button><div ${attr}>d</div>`);
      const name = attr.split('=')[0] ?? attr;
      expect(el.querySelector('button')?.hasAttribute(name), `${name} on <button>`).toBe(false);
      expect(el.querySelector('div')?.hasAttribute(name), `${name} on <div>`).toBe(false);
    }
  });

  it('ids and names are namespaced (user-content-…), so none can collide with the app’s', () => {
    const el = html('<div id="run-all">a</div><a name="sandbox-choice">b</a><input type="radio" name="sandbox-choice" checked><img name="body">');
    expect(el.querySelector('div')?.id).toBe('user-content-run-all');
    expect(el.querySelector('a')?.getAttribute('name')).toBe('user-content-sandbox-choice');
    expect(el.querySelector('input')?.getAttribute('name')).toBe('user-content-sandbox-choice');
    // A name that clobbers a document property (DOMPurify would drop it) is kept, prefixed.
    expect(el.querySelector('img')?.getAttribute('name')).toBe('user-content-body');
    for (const node of el.querySelectorAll('[id], [name]')) {
      expect(node.id === '' || node.id.startsWith('user-content-')).toBe(true);
    }
  });

  it('in-page links and references follow their target into the namespace', () => {
    const el = html(
      '<h2 id="results">R</h2><a href="#results">to results</a>' +
        '<div aria-labelledby="a b" aria-describedby="c" aria-controls="run-all" aria-owns="toolbar" aria-activedescendant="d">x</div>' +
        '<input list="cities"><datalist id="cities"><option value="Bern"></option></datalist>' +
        '<table><tr><th id="h1">h</th><td headers="h1">1</td></tr></table>' +
        '<img usemap="#m" src="data:image/png;base64,iVBORw0KGgo="><map name="m"><area href="#results" alt="r"></map>' +
        '<svg><defs><linearGradient id="g"></linearGradient></defs><rect fill="url(#g)" clip-path="url(\'#c\')" width="5" height="5"></rect></svg>',
    );
    expect(el.querySelector('a')?.getAttribute('href')).toBe('#user-content-results');
    const div = el.querySelector('div[aria-labelledby]');
    expect(div?.getAttribute('aria-labelledby')).toBe('user-content-a user-content-b');
    expect(div?.getAttribute('aria-describedby')).toBe('user-content-c');
    expect(div?.getAttribute('aria-controls')).toBe('user-content-run-all');
    expect(div?.getAttribute('aria-owns')).toBe('user-content-toolbar');
    expect(div?.getAttribute('aria-activedescendant')).toBe('user-content-d');
    expect(el.querySelector('input')?.getAttribute('list')).toBe('user-content-cities');
    expect(el.querySelector('td')?.getAttribute('headers')).toBe('user-content-h1');
    expect(el.querySelector('img')?.getAttribute('usemap')).toBe('#user-content-m');
    expect(el.querySelector('area')?.getAttribute('href')).toBe('#user-content-results');
    expect(el.querySelector('rect')?.getAttribute('fill')).toBe('url(#user-content-g)');
    expect(el.querySelector('rect')?.getAttribute('clip-path')).toBe("url('#user-content-c')");
  });

  it('a presentation attribute with a url() that is not an in-output reference is dropped', () => {
    const el = html('<svg><rect fill="url(https://e.com/p.svg#g)" stroke="red" width="5" height="5"></rect></svg>');
    expect(el.querySelector('rect')?.hasAttribute('fill')).toBe(false);
    expect(el.querySelector('rect')?.getAttribute('stroke')).toBe('red');
  });

  it('style cannot take a box out of its output: position fixed and sticky go, the rest stays', () => {
    const el = html(
      '<div style="position: fixed; inset: 0; opacity: 0.01; color: red">a</div>' +
        '<div style="POSITION:STICKY;top:0">b</div>' +
        '<div style="position: absolute; left: 3px">c</div>' +
        '<tr style="text-align: right;"></tr><p style="margin-left: -40px; z-index: 99999">d</p>',
    );
    const [a, b, c] = [...el.querySelectorAll('div')];
    expect(a?.style.position).toBe('');
    expect(a?.style.color).toBe('red');
    expect(a?.style.opacity).toBe('0.01');
    expect(b?.style.position).toBe('');
    expect(c?.style.position).toBe('absolute');
    // Untouched styles are kept exactly as written.
    expect(el.querySelector('p')?.getAttribute('style')).toBe('margin-left: -40px; z-index: 99999');
  });

  it('Markdown gets the same treatment (raw HTML in a Markdown cell)', () => {
    const div = document.createElement('div');
    div.appendChild(renderMarkdown('<label for="run-all" id="x" style="position:fixed;inset:0">all</label>\n\n[back](#x)'));
    const label = div.querySelector('label');
    expect(label?.hasAttribute('for')).toBe(false);
    expect(label?.id).toBe('user-content-x');
    expect(label?.style.position).toBe('');
    expect(div.querySelector('a')?.getAttribute('href')).toBe('#user-content-x');
  });

  it('the second look fails closed: a fragment that still binds to the app or escapes its box is unsafe', () => {
    const frag = (markup: string): DocumentFragment => document.createRange().createContextualFragment(markup);
    expect(stillUnsafe(frag('<label for="run-all">x</label>'))).toBe(true);
    expect(stillUnsafe(frag('<div id="run-all">x</div>'))).toBe(true);
    expect(stillUnsafe(frag('<button popovertarget="p">x</button>'))).toBe(true);
    expect(stillUnsafe(frag('<div style="position:fixed">x</div>'))).toBe(true);
    expect(stillUnsafe(frag('<a href="#run-all">x</a>'))).toBe(true);
    expect(stillUnsafe(frag('<div id="user-content-a" style="position:absolute"><a href="#user-content-a">x</a></div>'))).toBe(false);
  });
});
