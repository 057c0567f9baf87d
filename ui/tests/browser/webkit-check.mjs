// The contained-outputs checks in WebKitGTK, the engine the Linux app runs in, through its
// WebDriver (Debian: webkit2gtk-driver) and MiniBrowser. Not part of `npm run test:browser`:
// it needs a display. Run after `npm run build` and `node tests/browser/prepare.mjs`:
//
//   xvfb-run -a node tests/browser/webkit-check.mjs
//
// It loads the built app with the fake backend (injected into index.html before the app's
// script, as page.addInitScript does in Chromium) and a hostile notebook, then checks:
// nothing in an output is positioned fixed or sticky; one click in the middle runs nothing;
// a fixed, window-filling element put straight into an output's box stays inside it; a fixed
// fake panel does not cover the approval panel.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { DIST, MOCK } from './harness.mjs';
import { FAKE_PANEL, ESCAPED_LABEL, hostileNotebook, RUN_ALL_LABEL } from './notebooks.mjs';

const DRIVER = process.env.WEBKIT_DRIVER ?? '/usr/bin/WebKitWebDriver';
const BROWSER = process.env.WEBKIT_BROWSER ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.woff2': 'font/woff2', '.ttf': 'font/ttf', '.svg': 'image/svg+xml' };

function serve(config) {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^([/\\])+/, '');
    if (path === '__mock.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(MOCK));
    if (path === '' || path === 'index.html') {
      const inject = `<script>window.__MOCK_CONFIG__ = ${JSON.stringify(config).replace(/</g, '\\u003c')};</script><script src="./__mock.js"></script>`;
      const html = readFileSync(join(DIST, 'index.html'), 'utf8').replace('<head>', `<head>${inject}`);
      return res.writeHead(200, { 'content-type': 'text/html' }).end(html);
    }
    const file = join(DIST, path);
    if (!file.startsWith(DIST) || !existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const port = 4400 + Math.floor(Math.random() * 500);
const driver = spawn(DRIVER, [`--port=${port}`], { stdio: 'ignore' });
const base = `http://127.0.0.1:${port}`;
async function wd(method, path, body) {
  const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${JSON.stringify(json.value)}`);
  return json.value;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let server;
let session;
try {
  for (let i = 0; ; i++) {
    try {
      await wd('GET', '/status');
      break;
    } catch (err) {
      if (i > 50) throw err;
      await sleep(100);
    }
  }
  session = (await wd('POST', '/session', { capabilities: { alwaysMatch: { 'webkitgtk:browserOptions': { binary: BROWSER, args: ['--automation'] } } } })).sessionId;
  const s = `/session/${session}`;
  const js = (script, ...args) => wd('POST', `${s}/execute/sync`, { script, args });
  const version = await js('return navigator.userAgent');
  await wd('POST', `${s}/window/rect`, { width: 1280, height: 800 });

  server = await serve({ notebook: hostileNotebook(RUN_ALL_LABEL, ESCAPED_LABEL, FAKE_PANEL) });
  await wd('POST', `${s}/url`, { url: `http://127.0.0.1:${server.address().port}/` });
  for (let i = 0; !(await js('return !!document.querySelector(\'.cell[data-cell-id="victim"]\')')); i++) {
    if (i > 100) throw new Error('the app did not show the notebook');
    await sleep(100);
  }
  const results = {};

  results.escaped = await js(`return [...document.querySelectorAll('.outputs *, .markdown-rendered *')]
    .filter((el) => ['fixed', 'sticky'].includes(getComputedStyle(el).position)).map((el) => el.outerHTML.slice(0, 60))`);
  assert.deepEqual(results.escaped, [], 'nothing in an output is positioned fixed or sticky');

  const size = await js('return [innerWidth, innerHeight]');
  await wd('POST', `${s}/actions`, {
    actions: [{ type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' }, actions: [
      { type: 'pointerMove', x: Math.round(size[0] / 2), y: Math.round(size[1] / 2), origin: 'viewport' },
      { type: 'pointerDown', button: 0 },
      { type: 'pointerUp', button: 0 },
    ] }],
  });
  await sleep(400);
  results.executions = await js("return window.__mock.calls.filter((c) => c.cmd === 'execute').length");
  assert.equal(results.executions, 0, 'one click in the middle ran nothing');

  results.containment = await js(`return ['.output[data-mime="text/html"] .user-content', '.markdown-rendered'].map((selector) => {
    const box = document.querySelector(selector);
    const fixed = document.createElement('div');
    fixed.style.cssText = 'position:fixed;inset:0;z-index:2147483647;background:red';
    box.appendChild(fixed);
    const o = box.getBoundingClientRect();
    const i = fixed.getBoundingClientRect();
    const run = document.querySelector('#run-all').getBoundingClientRect();
    const atRun = document.elementFromPoint(run.left + run.width / 2, run.top + run.height / 2);
    const result = {
      selector,
      inside: i.left >= o.left - 0.5 && i.top >= o.top - 0.5 && i.right <= o.right + 0.5 && i.bottom <= o.bottom + 0.5,
      runReached: !!atRun && atRun.closest('#run-all') !== null,
      box: [o.left, o.top, o.width, o.height].map(Math.round),
      fixed: [i.left, i.top, i.width, i.height].map(Math.round),
    };
    fixed.remove();
    return result;
  })`);
  for (const c of results.containment) {
    assert.equal(c.inside, true, `${c.selector}: the fixed element ${c.fixed} stays in its box ${c.box}`);
    assert.equal(c.runReached, true, `${c.selector}: Run all is not covered`);
  }

  await js('window.__mock.requestApproval({ id: 5 })');
  for (let i = 0; !(await js('return !!document.querySelector(\'.approval-request[data-request-id="5"]\')')); i++) {
    if (i > 50) throw new Error('the approval panel did not open');
    await sleep(100);
  }
  await sleep(300);
  results.panel = await js(`const r = document.querySelector('.approval-request[data-request-id="5"]').getBoundingClientRect();
    const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return { inPanel: !!top && !!top.closest('#right-panel'), inOutput: !!top && !!top.closest('.outputs, .markdown-rendered') }`);
  assert.deepEqual(results.panel, { inPanel: true, inOutput: false }, 'the fake panel does not cover the approval panel');

  console.log(`# WebKit (${version}): all checks passed`);
  console.log(JSON.stringify(results, null, 1));
} finally {
  if (session) await wd('DELETE', `/session/${session}`).catch(() => {});
  driver.kill('SIGTERM');
  server?.close();
}
