// Export, as a reader without ipybox meets it: the HTML page in headless Chromium (its plot
// shows, no script runs, nothing is fetched — with the page's CSP and without it, so the
// sanitizer is checked on its own), and `ipybox export --to pdf` printed by WebKitGTK on the
// display this run provides, its first page rasterized by pdftoppm and read pixel by pixel,
// its math read back as text; and File → Export as PDF in the real window, through the
// native save dialog.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { APP, ROOT, App, answerDialog, quitAll, workspace } from './webdriver.mjs';

const { chromium } = await import(pathToFileURL(join(ROOT, 'ui', 'node_modules', 'playwright-core', 'index.mjs')).href);
const FIXTURES = join(ROOT, 'tests', 'fixtures', 'export');
/** The plot's bars: matplotlib's red, #d62728. */
const BAR = [0xd6, 0x27, 0x28];

let dir;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'ipybox-export-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));
const apps = [];
afterEach((t) => quitAll(apps, t));

function exportTo(notebook, format, out) {
  const run = spawnSync(APP, ['export', join(FIXTURES, notebook), '--to', format, '-o', out], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(run.status, 0, `ipybox export --to ${format}: ${run.stderr}`);
  assert.ok(existsSync(out), `${out} written`);
  return out;
}

/** Requests other than the page itself and its data: URIs, and scripts the page ran. */
async function openInChromium(file, { bypassCSP }) {
  const userDataDir = mkdtempSync(join(tmpdir(), 'ipybox-export-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    bypassCSP,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const page = await context.newPage();
    const requests = [];
    page.on('request', (r) => {
      if (!r.url().startsWith('data:') && r.url() !== pathToFileURL(file).href) requests.push(r.url());
    });
    await page.route('**/*', (route) => (route.request().url().startsWith('file:') ? route.continue() : route.abort()));
    // Every script the page's own world compiles (inline, src=, event handlers, javascript:).
    const cdp = await context.newCDPSession(page);
    const scripts = [];
    const mainWorld = new Set();
    cdp.on('Runtime.executionContextCreated', ({ context: c }) => {
      if (c.auxData?.isDefault) mainWorld.add(c.id);
    });
    cdp.on('Debugger.scriptParsed', (s) => {
      if (mainWorld.has(s.executionContextId)) scripts.push(s.url || `(inline, ${s.length} chars)`);
    });
    await cdp.send('Runtime.enable');
    await cdp.send('Debugger.enable');
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    await page.waitForTimeout(500);
    const seenScripts = [...scripts];
    const facts = await page.evaluate(() => ({
      pwned: window.__pwned,
      images: [...document.querySelectorAll('img.output-image')].map((i) => ({ complete: i.complete, width: i.naturalWidth })),
      bold: document.querySelector('.user-content b')?.textContent ?? null,
      math: [...document.querySelectorAll('math')].map((m) => {
        const box = m.getBoundingClientRect();
        // A fraction laid out as MathML has its numerator above its denominator.
        const frac = m.querySelector('mfrac');
        const [num, den] = frac ? [...frac.children].map((c) => c.getBoundingClientRect()) : [];
        return {
          mathml: m.namespaceURI === 'http://www.w3.org/1998/Math/MathML',
          display: m.getAttribute('display'),
          width: box.width,
          height: box.height,
          stacked: frac ? num.bottom <= den.top + 1 : null,
          text: m.textContent,
        };
      }),
      mathSource: [...document.querySelectorAll('.math-source')].map((e) => e.textContent),
    }));
    return { requests, scripts: seenScripts, ...facts };
  } finally {
    await context.close();
    rmSync(userDataDir, { recursive: true, force: true });
  }
}

test('an exported page opens in Chromium with its images, runs no script and fetches nothing', async () => {
  const page = exportTo('attack.ipynb', 'html', join(dir, 'attack.html'));
  for (const bypassCSP of [false, true]) {
    const seen = await openInChromium(page, { bypassCSP });
    const how = bypassCSP ? 'with the CSP bypassed (the sanitizer alone)' : 'with the page’s CSP';
    assert.deepEqual(seen.requests, [], `no request leaves the page ${how}`);
    assert.deepEqual(seen.scripts, [], `no script is compiled ${how}`);
    assert.equal(seen.pwned, undefined, `no attacker's code ran ${how}`);
    assert.equal(seen.images.length, 2, 'the SVG and the plot are shown as images');
    for (const image of seen.images) assert.ok(image.complete && image.width > 0, `every image loads from the file itself: ${JSON.stringify(seen.images)}`);
    assert.equal(seen.bold, 'bold survives', 'harmless markup still renders');
    assertMathRenders(seen);
  }
});

/** TeX in Markdown and text/latex is laid out as MathML; what cannot be converted is its source. */
function assertMathRenders(seen) {
  const shown = JSON.stringify(seen.math);
  assert.ok(seen.math.length >= 5, `the formulas are MathML elements: ${shown}`);
  for (const m of seen.math) assert.ok(m.mathml && m.width > 0 && m.height > 0, `every formula is laid out with a size: ${shown}`);
  const fractions = seen.math.filter((m) => m.stacked !== null);
  assert.ok(fractions.length >= 2 && fractions.every((m) => m.stacked), `fractions are stacked, inline and displayed: ${shown}`);
  assert.equal(seen.math.filter((m) => m.display === 'block').length, 2, `$$…$$ and the text/latex output are blocks: ${shown}`);
  assert.ok(seen.mathSource.includes('$\\frac{a}$'), `a formula the converter cannot read is its source: ${JSON.stringify(seen.mathSource)}`);
}

/** The first page of a PDF as RGB pixels (pdftoppm, 50 dpi). */
function firstPage(pdf) {
  const run = spawnSync('pdftoppm', ['-r', '50', '-f', '1', '-l', '1', pdf], { maxBuffer: 64 << 20 });
  assert.equal(run.status, 0, `pdftoppm (apt poppler-utils): ${run.stderr}`);
  const ppm = run.stdout;
  // P6 header: magic, width, height, maxval, each after whitespace.
  const header = ppm.subarray(0, 64).toString('latin1').match(/^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/);
  assert.ok(header, 'a binary PPM');
  return { width: Number(header[1]), height: Number(header[2]), pixels: ppm.subarray(header[0].length) };
}

test('ipybox export --to pdf prints the plot on the first page', () => {
  assertPlotPrinted(exportTo('plot.ipynb', 'pdf', join(dir, 'plot.pdf')));
});

/** The PDF's first page shows the plot's red bars near its top, with the heading and code as text. */
function assertPlotPrinted(pdf) {
  assert.equal(readFileSync(pdf).subarray(0, 5).toString('latin1'), '%PDF-', 'a PDF file');
  const { width, height, pixels } = firstPage(pdf);
  let red = 0;
  let top = height;
  for (let i = 0; i + 2 < pixels.length; i += 3) {
    if (BAR.every((c, k) => Math.abs(pixels[i + k] - c) < 24)) {
      red++;
      top = Math.min(top, Math.floor(i / 3 / width));
    }
  }
  // Three bars of about 50 × 100 px at 50 dpi; the code's '#d62728' text is a few dozen.
  assert.ok(red > 5000, `the plot's red bars are on the first page (${red} red pixels of ${width}×${height})`);
  assert.ok(top < height / 2, `the plot is near the top, under its cell (first red row ${top} of ${height})`);
  const text = spawnSync('pdftotext', ['-f', '1', '-l', '1', pdf, '-'], { encoding: 'utf8' }).stdout;
  assert.match(text, /Sales/, 'the Markdown heading is text in the PDF');
  assert.match(text, /import matplotlib\.pyplot as plt/, 'the code is text in the PDF');
}

test('ipybox export --to pdf prints math as math, not as its TeX', () => {
  const pdf = exportTo('math.ipynb', 'pdf', join(dir, 'math.pdf'));
  const text = spawnSync('pdftotext', ['-f', '1', '-l', '1', pdf, '-'], { encoding: 'utf8' }).stdout;
  for (const [sign, what] of [
    // A variable is set in math italic (U+1D45B), as MathML lays out a single-letter <mi>.
    ['𝑛(𝑛 + 1)', 'a variable'],
    ['ℝ', 'a double-struck letter'],
    ['√', 'a root'],
    ['otherwise', 'text in a cases environment'],
  ])
    assert.ok(text.includes(sign), `${what} is printed as math (${sign}): ${text}`);
  assert.doesNotMatch(text, /\\(sum|mathbb|begin|sqrt)/, 'no formula that converts is printed as TeX');
  assert.match(text, /\\frac\{a\}/, 'one the converter cannot read is printed as its source');
});

test('File → Export as PDF in the window writes the file the save dialog names and says so', async () => {
  const ws = workspace({ 'plot.ipynb': readFileSync(join(FIXTURES, 'plot.ipynb'), 'utf8') });
  const app = await App.launch(['open', join(ws, 'plot.ipynb')]);
  apps.push(app);
  await app.ready();
  await app.click('#file-menu');
  await app.click('#file-export-pdf');
  // GTK's save dialog, in the workspace with the name filled in: Return saves.
  answerDialog('Export “plot.ipynb” as PDF document');
  await app.until('the status line to say where it went', async () => ((await app.text('#app-message')) === 'Exported to plot.pdf' ? true : null), 60_000);
  assertPlotPrinted(join(ws, 'plot.pdf'));
  rmSync(ws, { recursive: true, force: true });
});
