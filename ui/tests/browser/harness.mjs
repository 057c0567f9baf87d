// Shared helpers for the browser tests: a static server for dist/, headless Debian Chromium
// through playwright-core, and a page with the fake backend injected before the app loads.
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// IPYBOX_UI_DIST: serve another build (to compare two versions' timings in one session).
export const DIST = process.env.IPYBOX_UI_DIST ?? join(ROOT, '..', 'src-tauri', 'ui-dist');
export const MOCK = join(ROOT, 'tests/browser/.build/mock.js');
export const FIXTURES = join(ROOT, 'tests/fixtures');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** The Content-Security-Policy the app's window enforces (src-tauri/tauri.conf.json), as
 *  a header value. */
export function appCsp() {
  const conf = JSON.parse(readFileSync(join(ROOT, '..', 'src-tauri', 'tauri.conf.json'), 'utf8'));
  return Object.entries(conf.app.security.csp).map(([k, v]) => `${k} ${v}`).join('; ');
}

/** Serve dist/ on 127.0.0.1 (a random port), with `headers` on every answer. */
export async function startServer(headers = {}) {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    let path = normalize(decodeURIComponent(url.pathname)).replace(/^([/\\])+/, '');
    if (path === '' || path.endsWith('/')) path += 'index.html';
    const file = join(DIST, path);
    if (!file.startsWith(DIST) || !existsSync(file)) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store', ...headers });
    res.end(readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((r) => server.close(r)) };
}

/** Debian's Chromium, headless, with a fresh profile directory (removed on close). */
export async function launchBrowser() {
  const userDataDir = mkdtempSync(join(tmpdir(), 'ipybox-ui-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
  });
  return {
    browser: context,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

export function fixture(name) {
  return readFileSync(join(FIXTURES, name), 'utf8');
}

/**
 * A page with the fake backend. `config` becomes window.__MOCK_CONFIG__.
 * Requests that leave 127.0.0.1 are recorded in page.outsideRequests (and blocked).
 */
export async function openApp(browser /* a browser context */, serverUrl, config = {}, { width = 1280, height = 800, colorScheme = 'light', onPage } = {}) {
  const page = await browser.newPage();
  if (onPage) await onPage(page);
  await page.setViewportSize({ width, height });
  await page.emulateMedia({ colorScheme });
  const outsideRequests = [];
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(serverUrl) || u.startsWith('data:') || u.startsWith('blob:')) return route.continue();
    outsideRequests.push(u);
    return route.abort();
  });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.addInitScript(`window.__MOCK_CONFIG__ = ${JSON.stringify(config)};`);
  await page.addInitScript({ path: MOCK });
  await page.goto(serverUrl);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 10000 });
  return { page, outsideRequests, errors };
}

/** For a spec file: serve the built UI and launch Chromium before its tests, close both
 *  after; returns `app(config, options)`, which opens the app in a new page (config over
 *  `defaults`) with a `close()`. */
export function useApp(hooks, defaults = {}) {
  let server;
  let chromium;
  hooks.before(async () => {
    server = await startServer();
    chromium = await launchBrowser();
  });
  hooks.after(async () => {
    await chromium?.close();
    await server?.close();
  });
  return {
    async app(config = {}, options = {}) {
      const opened = await openApp(chromium.browser, server.url, { ...defaults, ...config }, options);
      return { ...opened, close: () => opened.page.close() };
    },
  };
}

/**
 * Every visible piece of text under `root` whose WCAG 2 contrast against what is painted
 * behind it is too low: 4.5:1, or 3:1 for large text (24px, or 18.66px bold) and for
 * disabled controls. The colour is the computed one (with the opacity of the element and its
 * ancestors); the background is the first non-transparent background-color up the tree,
 * translucent ones blended over what lies under them. Text in inputs counts (their value, or
 * their placeholder when empty). Returns one line per offender, to list in an assertion.
 */
export async function contrastOffenders(page, root) {
  return page.evaluate((rootSelector) => {
    const canvas = document.createElement('canvas').getContext('2d', { willReadFrequently: true });
    canvas.canvas.width = canvas.canvas.height = 1;
    // Any CSS colour the browser computes (rgb(), color(srgb …), oklch …) to [r, g, b, a].
    const rgba = (css) => {
      canvas.clearRect(0, 0, 1, 1);
      canvas.fillStyle = '#000';
      canvas.fillStyle = css;
      canvas.fillRect(0, 0, 1, 1);
      const [r, g, b, a] = canvas.getImageData(0, 0, 1, 1).data;
      // getImageData rounds alpha to 1/255: the string's own alpha is exact.
      const m = /^rgba\([^,]+,[^,]+,[^,]+,\s*([\d.]+)\)$|\/\s*([\d.]+)\)$/.exec(css);
      return [r, g, b, m ? Number(m[1] ?? m[2]) : a / 255];
    };
    const over = ([r, g, b, a], [R, G, B]) => [r * a + R * (1 - a), g * a + G * (1 - a), b * a + B * (1 - a), 1];
    const dark = matchMedia('(prefers-color-scheme: dark)').matches;
    // How much of an element's paint shows: its own opacity times its ancestors'. Exact when
    // one element on the way up is translucent, which is how the app uses opacity.
    const opacity = (el) => {
      let o = 1;
      for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
      return o;
    };
    // The colour painted behind el's text: the backgrounds from el up, each with its alpha
    // and opacity, blended from the first opaque one (else the page's canvas) upwards.
    const background = (el) => {
      const layers = [];
      for (let e = el; e; e = e.parentElement) {
        const c = rgba(getComputedStyle(e).backgroundColor);
        const a = c[3] * opacity(e);
        if (a > 0) layers.push([c[0], c[1], c[2], a]);
        if (a >= 1) break;
      }
      let color = layers.length && layers.at(-1)[3] >= 1 ? layers.pop() : dark ? [18, 18, 18, 1] : [255, 255, 255, 1];
      while (layers.length) color = over(layers.pop(), color);
      return color;
    };
    const luminance = ([r, g, b]) => {
      const c = (v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * c(r) + 0.7152 * c(g) + 0.0722 * c(b);
    };
    const ratio = (a, b) => {
      const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
      return (x + 0.05) / (y + 0.05);
    };
    const hex = (c) => '#' + c.slice(0, 3).map((v) => Math.round(v).toString(16).padStart(2, '0')).join('');
    const describe = (el) => {
      const id = el.id ? `#${el.id}` : '';
      const cls = typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : '';
      return `${el.tagName.toLowerCase()}${id}${cls}`;
    };
    const out = [];
    const rootEl = document.querySelector(rootSelector);
    if (!rootEl) return [`no ${rootSelector}`];
    for (const el of [rootEl, ...rootEl.querySelectorAll('*')]) {
      if (el instanceof SVGElement || !el.checkVisibility({ visibilityProperty: true })) continue;
      const rect = el.getBoundingClientRect();
      if (rect.width === 0 || rect.height === 0) continue;
      const field = el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement;
      if (el instanceof HTMLInputElement && ['checkbox', 'radio', 'range', 'color', 'hidden'].includes(el.type)) continue;
      let text;
      let pseudo = null;
      if (field) {
        text = el instanceof HTMLSelectElement ? (el.selectedOptions[0]?.textContent ?? '') : el.value;
        if (!text && 'placeholder' in el && el.placeholder) {
          text = el.placeholder;
          pseudo = '::placeholder';
        }
      } else {
        text = [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join('');
      }
      text = text.trim();
      if (!text) continue;
      const style = getComputedStyle(el, pseudo);
      const fg = rgba(style.color);
      const bg = background(el);
      const shown = over([fg[0], fg[1], fg[2], fg[3] * opacity(el)], bg);
      const size = parseFloat(style.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
      const disabled = el.matches(':disabled') || el.closest('[aria-disabled="true"]') !== null;
      const need = large || disabled ? 3 : 4.5;
      const r = ratio(shown, bg);
      if (r < need) out.push(`${describe(el)}${pseudo ?? ''} “${text.slice(0, 40)}”: ${r.toFixed(2)}:1 < ${need} (${hex(shown)} on ${hex(bg)})`);
    }
    return out;
  }, root);
}

/**
 * Tab from `start` into `root` and on until the focus leaves it (or comes back round): each stop's id (or
 * a description) and its accessible name as Chromium computes it for screen readers (the
 * accessibility tree, over the DevTools protocol). Also every control under `root` a person
 * could operate (visible, enabled, not tabindex=-1) that Tab never reached — a radio group
 * counts as reached when one of its radios was.
 */
export async function tabWalk(page, root, start, limit = 400) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Accessibility.enable');
  await page.evaluate(([r, s]) => {
    for (const el of document.querySelectorAll('[data-tab-seen]')) el.removeAttribute('data-tab-seen');
    document.querySelector(s)?.focus();
    return document.querySelector(r) !== null;
  }, [root, start]);
  const stops = [];
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    const here = await page.evaluate((r) => {
      const el = document.activeElement;
      if (!el || !document.querySelector(r)?.contains(el)) return null;
      if (el.hasAttribute('data-tab-seen')) return { again: true };
      el.setAttribute('data-tab-seen', '');
      const cls = typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : '';
      return { id: el.id ? `#${el.id}` : `${el.tagName.toLowerCase()}${cls}` };
    }, root);
    // Before the first stop inside root (what lies between start and root) keep going.
    if (!here && stops.length === 0) continue;
    if (!here || here.again) break;
    const { result } = await cdp.send('Runtime.evaluate', { expression: 'document.activeElement' });
    const { nodes } = await cdp.send('Accessibility.getPartialAXTree', { objectId: result.objectId, fetchRelatives: false });
    const node = nodes.find((n) => !n.ignored) ?? nodes[0];
    stops.push({ id: here.id, role: node?.role?.value ?? '', name: String(node?.name?.value ?? '').trim() });
  }
  const missed = await page.evaluate((r) => {
    const radios = new Set();
    for (const el of document.querySelectorAll(`${r} input[type=radio][data-tab-seen]`)) radios.add(el.name);
    const out = [];
    for (const el of document.querySelector(r).querySelectorAll('button, input, select, textarea, summary, a[href], [tabindex]')) {
      if (el.hasAttribute('data-tab-seen') || el.matches(':disabled') || el.tabIndex < 0) continue;
      if (!el.checkVisibility({ visibilityProperty: true })) continue;
      if (el instanceof HTMLInputElement && el.type === 'radio' && radios.has(el.name)) continue;
      out.push(el.id ? `#${el.id}` : `${el.tagName.toLowerCase()}.${el.className} “${(el.textContent ?? '').trim().slice(0, 30)}”`);
    }
    return out;
  }, root);
  await cdp.detach();
  return { stops, missed };
}
