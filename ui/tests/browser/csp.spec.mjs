// The built UI under the window's real Content-Security-Policy (read from tauri.conf.json and
// sent as a header): it loads, renders Markdown with math, HTML and plots, and the browser
// reports no violation. A script or style the policy would block in the app fails here first.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appCsp, fixture, launchBrowser, openApp, startServer } from './harness.mjs';

describe('the built UI under the app’s Content-Security-Policy', () => {
  let server;
  let chromium;
  before(async () => {
    server = await startServer({ 'content-security-policy': appCsp() });
    chromium = await launchBrowser();
  });
  after(async () => {
    await chromium?.close();
    await server?.close();
  });

  it('loads and renders a JupyterLab notebook without a violation', async () => {
    const violations = [];
    const { page: app, errors } = await openApp(chromium.browser, server.url, { notebook: fixture('jupyterlab-analysis.ipynb') }, {
      // Listening from before the first byte: a violation while loading counts too.
      onPage: async (page) => {
        page.on('console', (m) => {
          if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
        });
        await page.addInitScript(() => {
          window.__violations = [];
          document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective}: ${e.blockedURI}`));
        });
      },
    });
    const header = (await fetch(server.url)).headers.get('content-security-policy');
    assert.match(header ?? '', /script-src 'self'/, 'the policy is in force');
    await app.waitForFunction(() => document.querySelectorAll('.cell').length > 3);
    // Rendered: math (KaTeX), an HTML table, plots (data: images) that decoded.
    await app.waitForFunction(() => [...document.querySelectorAll('img')].some((i) => i.complete && i.naturalWidth > 0));
    // KaTeX is a chunk of its own, loaded under the same policy when the first formula shows.
    await app.locator('.katex').first().waitFor();
    assert.equal(await app.locator('.math-pending').count(), 0, 'every formula typeset');
    assert.ok(await app.locator('.outputs table').count() > 0, 'HTML output rendered');
    // The editor's styles (CodeMirror injects a style element) applied: a highlighted token has a colour.
    // A cell gets its editor when the pointer comes over it.
    await app.locator('.cell[data-cell-type="code"] .cell-editor').first().hover();
    await app.waitForSelector('.cell .cm-content');
    const styled = await app.evaluate(() => {
      const line = document.querySelector('.cm-content');
      return !!line && getComputedStyle(line).fontFamily.length > 0 && document.querySelectorAll('style').length > 0;
    });
    assert.ok(styled, 'the editor’s injected styles applied');
    const fromPage = await app.evaluate(() => window.__violations);
    assert.deepEqual([...violations, ...fromPage], [], 'no Content-Security-Policy violation');
    assert.deepEqual(errors, [], 'no page error');
    await app.close();
  });
});
