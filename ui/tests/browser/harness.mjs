// Shared helpers for the browser tests: a static server for dist/, headless Debian Chromium
// through playwright-core, and a page with the fake backend injected before the app loads.
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DIST = join(ROOT, '..', 'src-tauri', 'ui-dist');
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
