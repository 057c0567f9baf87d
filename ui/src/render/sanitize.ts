/**
 * Sanitizing HTML and SVG from outputs and Markdown (DOMPurify with hooks):
 * - no script runs: script/iframe/object/embed/form/style/link/meta/base are removed, and every
 *   event-handler attribute (DOMPurify's default);
 * - nothing from outside loads: `src`, `srcset`, `href`, `xlink:href`, `poster`, `action`, … keep
 *   only `data:` images/media and in-page `#fragment` links; `style` with `url(` / `@import` goes;
 * - links open nothing inside the webview: an external `href` becomes `data-href` and a tooltip.
 */
import DOMPurify, { type Config, type DOMPurify as Purifier } from 'dompurify';

const URL_ATTRS = new Set([
  'src',
  'srcset',
  'href',
  'xlink:href',
  'poster',
  'action',
  'formaction',
  'background',
  'cite',
  'longdesc',
  'lowsrc',
  'dynsrc',
  'data',
  'codebase',
  'archive',
  'manifest',
  'ping',
  'profile',
  'usemap',
  'icon',
  'imagesrcset',
]);

const DATA_MEDIA = /^data:(?:image\/(?:png|jpe?g|gif|webp|bmp|svg\+xml|avif)|audio\/[a-z0-9.+-]+|video\/[a-z0-9.+-]+)[;,]/i;
const DANGEROUS_STYLE = /url\s*\(|@import|expression\s*\(|-moz-binding|behavior\s*:|image-set\s*\(/i;

const CONFIG: Config = {
  FORBID_TAGS: [
    'script',
    'style',
    'iframe',
    'frame',
    'frameset',
    'object',
    'embed',
    'applet',
    'base',
    'link',
    'meta',
    'form',
    'portal',
    'foreignObject',
    'noscript',
  ],
  FORBID_ATTR: ['srcdoc', 'target', 'formaction', 'action', 'ping', 'http-equiv'],
  ALLOW_UNKNOWN_PROTOCOLS: false,
  ADD_DATA_URI_TAGS: ['img', 'image', 'source', 'video', 'audio'],
};

let purifier: Purifier | null = null;
const removedLinks = new WeakMap<Node, string>();

function instance(): Purifier {
  if (purifier) return purifier;
  const p = DOMPurify(window);
  p.addHook('uponSanitizeAttribute', (node, data) => {
    const name = data.attrName.toLowerCase();
    const value = data.attrValue.trim();
    if (name === 'style') {
      if (DANGEROUS_STYLE.test(value)) data.keepAttr = false;
      return;
    }
    if (!URL_ATTRS.has(name)) return;
    if ((name === 'href' || name === 'xlink:href') && value.startsWith('#')) return;
    if ((name === 'src' || name === 'href' || name === 'xlink:href') && DATA_MEDIA.test(value)) {
      // A data: URL for an image/media element is fine; on a link it would navigate.
      const tag = node.nodeName.toLowerCase();
      if (tag !== 'a' && tag !== 'area') return;
    }
    if ((name === 'href' || name === 'xlink:href') && /^(a|area)$/i.test(node.nodeName) && value) {
      removedLinks.set(node, value);
    }
    data.keepAttr = false;
    data.forceKeepAttr = false;
  });
  p.addHook('afterSanitizeAttributes', (node) => {
    const href = removedLinks.get(node);
    if (href === undefined || !(node instanceof Element)) return;
    // Keep the address visible, but make the link inert.
    node.setAttribute('data-href', href);
    node.setAttribute('title', `${href} (links do not open inside ipybox)`);
    node.classList.add('external-link');
  });
  purifier = p;
  return p;
}

/**
 * A second look at DOMPurify's result: if anything executable or remote is still there
 * (DOMPurify unsupported or broken in this engine), the markup is not used at all.
 */
function looksUnsafe(root: DocumentFragment): boolean {
  if (root.querySelector('script, iframe, object, embed, frame, base, meta, link, style, form')) return true;
  for (const el of root.querySelectorAll('*')) {
    for (const attr of el.attributes) {
      const name = attr.name.toLowerCase();
      if (name.startsWith('on')) return true;
      if (URL_ATTRS.has(name)) {
        const v = attr.value.trim();
        if (!(v.startsWith('#') || DATA_MEDIA.test(v))) return true;
      }
    }
  }
  return false;
}

function asText(html: string): DocumentFragment {
  const frag = document.createDocumentFragment();
  const pre = document.createElement('pre');
  pre.className = 'sanitizer-fallback';
  pre.textContent = html;
  frag.appendChild(pre);
  return frag;
}

/** Sanitize HTML into a fragment of the current document (fails closed: shown as text). */
export function sanitizeHtml(html: string): DocumentFragment {
  const p = instance();
  if (!p.isSupported) return asText(html);
  const frag = p.sanitize(html, { ...CONFIG, RETURN_DOM_FRAGMENT: true });
  return looksUnsafe(frag) ? asText(html) : frag;
}

/** Sanitize HTML into a string (for tests and markdown). */
export function sanitizeHtmlToString(html: string): string {
  const div = document.createElement('div');
  div.appendChild(sanitizeHtml(html));
  return div.innerHTML;
}

/** Sanitize an SVG document (SVG profile). */
export function sanitizeSvg(svg: string): DocumentFragment {
  const p = instance();
  if (!p.isSupported) return asText(svg);
  const frag = p.sanitize(svg, { ...CONFIG, USE_PROFILES: { svg: true, svgFilters: true }, RETURN_DOM_FRAGMENT: true });
  return looksUnsafe(frag) ? asText(svg) : frag;
}
