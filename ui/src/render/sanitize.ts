/**
 * Sanitizing HTML and SVG from outputs and Markdown (DOMPurify with hooks):
 * - no script runs: script/iframe/object/embed/form/style/link/meta/base are removed, and every
 *   event-handler attribute (DOMPurify's default);
 * - nothing from outside loads: `src`, `srcset`, `href`, `xlink:href`, `poster`, `action`, … keep
 *   only `data:` images/media and in-page `#fragment` links; `style` with `url(` / `@import` goes;
 * - links open nothing inside the webview: an external `href` becomes `data-href` and a tooltip;
 * - nothing binds to or acts on the app's own elements: `for`, `form`, `popovertarget`,
 *   `commandfor`, `accesskey`, `autofocus`, `tabindex`, … are dropped, and every `id` and `name`
 *   — and every reference to one (`#fragment`, `aria-labelledby`, `list`, `usemap`, `url(#…)`) —
 *   moves into a namespace of its own (`user-content-…`) that no element of the app uses;
 * - nothing leaves its box: `position: fixed | sticky` and anchor positioning are dropped from
 *   `style` (the box itself is CSS-contained as well, see `.user-content` in app.css).
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

/** Prefix of every id and name in sanitized markup (as GitHub does): none of the app's starts so. */
export const USER_ID_PREFIX = 'user-content-';

/**
 * Attributes that make an element act on another one (a label's activation, a form's
 * submission, a popover or dialog in the top layer, an anchor for positioning) or take the
 * keyboard (an access key, the focus on load, a place in the Tab order, an editable region).
 * With them an output could reach the app's controls by id; they are dropped, not namespaced.
 */
const BINDING_ATTRS = [
  'for',
  'form',
  'formaction',
  'popover',
  'popovertarget',
  'popovertargetaction',
  'command',
  'commandfor',
  'interestfor',
  'anchor',
  'contextmenu',
  'accesskey',
  'autofocus',
  'tabindex',
  'contenteditable',
];

/** Attributes that name other elements by id (space-separated): namespaced like the ids. */
const IDREF_ATTRS = new Set([
  'aria-activedescendant',
  'aria-controls',
  'aria-describedby',
  'aria-details',
  'aria-errormessage',
  'aria-flowto',
  'aria-labelledby',
  'aria-owns',
  'headers',
  'itemref',
  'list',
]);

/** `position` values that keep a box in the flow of its output (its containing block is inside). */
const CONTAINED_POSITIONS = new Set(['static', 'relative', 'absolute']);
/** A style value can only set these properties if it spells them (or uses a CSS escape). */
const MAY_POSITION = /position|anchor|inset-area|\\/i;
/** Anchor positioning ties a box to another element's place, whatever its containing block. */
const ANCHOR_PROPERTY = /^(anchor-|position-|inset-area)/;

/**
 * The media types a `data:` URI in a `src` may hold (`kind/*`: any subtype). An exported page
 * lists the images only; both lists are tested against `tests/fixtures/render-lists/lists.json`.
 */
export const DATA_MEDIA_TYPES = [
  'image/png',
  'image/jpeg',
  'image/jpg',
  'image/gif',
  'image/webp',
  'image/bmp',
  'image/svg+xml',
  'image/avif',
  'audio/*',
  'video/*',
] as const;

/** A media type as a pattern: `kind/*` takes any subtype, anything else is literal. */
function mediaPattern(type: string): string {
  const escape = (text: string): string => text.replace(/[.+/]/g, '\\$&');
  return type.endsWith('/*') ? `${escape(type.slice(0, -1))}[a-z0-9.+-]+` : escape(type);
}

const DATA_MEDIA = new RegExp(`^data:(?:${DATA_MEDIA_TYPES.map(mediaPattern).join('|')})[;,]`, 'i');
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
    'dialog',
  ],
  FORBID_ATTR: ['srcdoc', 'target', 'action', 'ping', 'http-equiv', ...BINDING_ATTRS],
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
    if (name === 'id' || name === 'name') {
      data.attrValue = value ? USER_ID_PREFIX + value : value;
      return;
    }
    if (IDREF_ATTRS.has(name)) {
      data.attrValue = value.split(/\s+/).filter(Boolean).map((ref) => USER_ID_PREFIX + ref).join(' ');
      return;
    }
    if (name === 'style') {
      const style = DANGEROUS_STYLE.test(value) ? null : containedStyle(value);
      if (style === null) data.keepAttr = false;
      else data.attrValue = style;
      return;
    }
    if (!URL_ATTRS.has(name)) {
      if (!/url\s*\(/i.test(value)) return;
      // SVG presentation attributes (`fill`, `clip-path`, `mask`, `filter`, `marker-*`):
      // references into the same output are namespaced, anything else goes.
      const refs = inPageUrls(value);
      if (refs === null) data.keepAttr = false;
      else data.attrValue = refs;
      return;
    }
    if ((name === 'href' || name === 'xlink:href' || name === 'usemap') && value.startsWith('#')) {
      data.attrValue = value.length > 1 ? `#${USER_ID_PREFIX}${value.slice(1)}` : value;
      return;
    }
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

let scratch: HTMLElement | null = null;

/**
 * A `style` attribute without what would take its box out of the output: `position: fixed`
 * or `sticky` (or any value but static/relative/absolute) and anchor positioning. The engine's
 * own CSS parser reads it, so escapes (`p\\6f sition`), case and `var()` are seen as the
 * engine sees them. Returns the value unchanged when nothing had to go.
 */
function containedStyle(value: string): string {
  if (!MAY_POSITION.test(value)) return value;
  scratch ??= document.createElement('div');
  scratch.setAttribute('style', value);
  const style = scratch.style;
  const drop: string[] = [];
  for (let i = 0; i < style.length; i++) {
    const prop = style.item(i);
    if (prop === 'position' ? !CONTAINED_POSITIONS.has(style.getPropertyValue(prop).trim().toLowerCase()) : ANCHOR_PROPERTY.test(prop)) drop.push(prop);
  }
  if (drop.length === 0) return value;
  for (const prop of drop) style.removeProperty(prop);
  return style.cssText;
}

/** A value whose every `url(…)` is an in-page `#fragment`, with the fragments namespaced; else null. */
function inPageUrls(value: string): string | null {
  let ok = true;
  const out = value.replace(/url\s*\(\s*(['"]?)([^'")]*)\1\s*\)/gi, (_all, quote: string, url: string) => {
    const target = url.trim();
    if (!/^#[^\s#]+$/.test(target)) ok = false;
    return `url(${quote}#${USER_ID_PREFIX}${target.slice(1)}${quote})`;
  });
  // A url( the pattern did not take apart (unbalanced, escaped) is not kept either.
  return ok && !/url\s*\((?!\s*['"]?#)/i.test(out) ? out : null;
}

const BINDING_SET = new Set(BINDING_ATTRS);

/**
 * A second look at DOMPurify's result: if anything executable or remote, anything bound to
 * another element or an id outside the namespace, or a box positioned out of its output is
 * still there (DOMPurify unsupported or broken in this engine), the markup is not used at all.
 */
export function stillUnsafe(root: DocumentFragment | Element): boolean {
  if (root.querySelector('script, iframe, object, embed, frame, base, meta, link, style, form, dialog')) return true;
  for (const el of root.querySelectorAll('*')) {
    for (const attr of el.attributes) {
      const name = attr.name.toLowerCase();
      const v = attr.value.trim();
      if (name.startsWith('on') || BINDING_SET.has(name)) return true;
      if ((name === 'id' || name === 'name') && v !== '' && !v.startsWith(USER_ID_PREFIX)) return true;
      if (URL_ATTRS.has(name)) {
        if (v.startsWith('#') ? v.length > 1 && !v.startsWith(`#${USER_ID_PREFIX}`) : !DATA_MEDIA.test(v)) return true;
      }
    }
    if (el.hasAttribute('style') && (el instanceof HTMLElement || el instanceof SVGElement)) {
      const position = el.style.getPropertyValue('position').trim().toLowerCase();
      if (position && !CONTAINED_POSITIONS.has(position)) return true;
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
  return stillUnsafe(frag) ? asText(html) : frag;
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
  return stillUnsafe(frag) ? asText(svg) : frag;
}
