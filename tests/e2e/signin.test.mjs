// Signing in to an MCP server that asks for OAuth, in the real app under Xvfb, against the
// local OAuth fixture (tests/bin/oauth_fixture.rs): the server is added from the form, which
// offers the sign-in; the system browser is a stand-in `xdg-open` on the app's PATH that
// opens the link as a consenting person's browser would (it follows the redirects to the
// app's loopback listener). Its tools are listed, a cell calls one, the app restarts and the
// cell calls again without a sign-in, and once the fixture revokes the tokens the cell's
// error and the card say to sign in again. With tokens that live 31 s, a cell's calls go out
// with refreshed tokens and nobody is asked to sign in. Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, APP, ROOT, SHOTS, workspace, notebook, answerDialog, cell, settled, quitAll } from './webdriver.mjs';

const FIXTURE = join(ROOT, 'target', 'debug', 'ipybox-oauth-fixture');

const apps = [];
afterEach((t) => quitAll(apps, t));

const step = (what) => process.stdout.write(`# ${new Date().toISOString().slice(11, 19)} ${what}\n`);
const card = '.server-card[data-server="docs"]';

/** The fixture on a free port, its access tokens living `expiresIn` seconds; its base URL. */
async function startFixture(expiresIn = 3600) {
  const child = spawn(FIXTURE, ['--expires-in', String(expiresIn), '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const addr = await new Promise((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      const m = /listening on (\S+)\n/.exec(err);
      if (m) resolve(m[1]);
    });
    child.on('exit', () => reject(new Error(`the OAuth fixture exited: ${err}`)));
  });
  return { child, base: `http://${addr}` };
}

/** A directory with an `xdg-open` that logs the link and opens it as a person who consents
 *  at once would: curl follows the authorization server's redirect to the loopback. */
function browserStandIn() {
  const dir = mkdtempSync(join(tmpdir(), 'ipybox-e2e-browser-'));
  const log = join(dir, 'opened.log');
  const delay = join(dir, 'delay');
  // A person who takes a while: the seconds in `delay`, if any, before the consent.
  writeFileSync(join(dir, 'xdg-open'), `#!/bin/sh\necho "$1" >> '${log}'\n[ -f '${delay}' ] && sleep "$(cat '${delay}')"\nexec curl -sfL -o /dev/null "$1"\n`, { mode: 0o755 });
  return {
    dir,
    opened: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []),
    slow: (seconds) => writeFileSync(delay, String(seconds)),
  };
}

async function launch(dir, browser) {
  const app = await App.launch(['open', join(dir, 'test.ipynb')], { env: { PATH: `${browser.dir}:${process.env.PATH}` } });
  apps.push(app);
  await app.ready();
  await app.click('#toggle-approvals');
  await app.click('#side-tab-servers');
  await app.until('the servers tab', () => app.execute('return !!document.querySelector("#mcp-servers") && document.querySelector("#side-panel-servers")?.hidden === false;'));
  return app;
}

function shot(name) {
  mkdirSync(SHOTS, { recursive: true });
  spawnSync('import', ['-window', 'root', join(SHOTS, name)]);
}

/** Run the first cell (again), approve its call, and wait for its end. */
async function runCell(app) {
  await app.click('.cell:first-child .prompt');
  await app.until('the first cell active', () => app.execute('return document.querySelector(".cell.active") === document.querySelectorAll(".cell")[0];'));
  await app.click('#run-cell');
  // It runs until the call is decided: its state changes before the dialog shows.
  await app.until('the cell to run', async () => (await cell(app, 0))?.state === 'running', 30000);
  answerDialog('Approve tool call — docs.greet', 'Return', 30);
  return settled(app, 0);
}

async function stats(base) {
  return (await fetch(`${base}/admin/stats`)).json();
}

/** Add the HTTP server `docs` at `url` from the servers tab's form; it offers a sign-in. */
async function addServer(app, url) {
  await app.click('#add-server');
  await app.execute(
    `const set = (id, v) => { const el = document.getElementById(id); el.value = v; el.dispatchEvent(new Event('input', { bubbles: true })); };
     const http = document.getElementById('server-transport-streamable_http'); http.checked = true; http.dispatchEvent(new Event('change', { bubbles: true }));
     set('server-name', 'docs'); set('server-url', arguments[0]);`,
    url,
  );
  await app.click('#save-server');
  return app.until('the form to offer a sign-in', () => app.text('#server-form-sign-in .server-sign-in-button'), 30000);
}

test('sign in from the add-server form, call from a cell, again after a restart, and “Sign in again” once revoked', async () => {
  const fixture = await startFixture();
  const dir = workspace({ 'test.ipynb': notebook('from mcptools.docs.greet import Params, run\nprint(run(Params(name="cell")))') });
  try {
    const browser = browserStandIn();
    const url = `${fixture.base}/mcp`;
    let app = await launch(dir, browser);

    step('add the server: it asks for a sign-in');
    const asked = await addServer(app, url);
    assert.equal(asked, 'Sign in');
    assert.match(await app.text('#server-form-sign-in .server-sign-in-text'), /^docs asks you to sign in\./);
    shot('sign-in-offered.png');

    step('sign in');
    // Timed in the page: from the click to the card listing the tools (the browser's part is
    // the stand-in's, at once; a person's time is not in it).
    await app.execute(
      `window.__signIn = {};
       document.querySelector('#server-form-sign-in .server-sign-in-button').addEventListener('click', () => { window.__signIn.clicked = performance.now(); }, { capture: true });
       const seen = () => { if (document.querySelector(arguments[0] + ' .server-tool') && !window.__signIn.listed) window.__signIn.listed = performance.now(); };
       new MutationObserver(seen).observe(document.body, { subtree: true, childList: true });`,
      card,
    );
    await app.click('#server-form-sign-in .server-sign-in-button');
    const timing = await app.until('the tools listed', () => app.execute('return window.__signIn.listed ? window.__signIn : null;'), 30000);
    const ms = Math.round(timing.listed - timing.clicked);
    step(`sign-in click → tools listed: ${ms} ms`);
    process.stdout.write(`# figure: sign-in click to tools listed in the window: ${ms} ms\n`);
    assert.equal(browser.opened().length, 1, 'the system browser was asked to open the link once');
    assert.ok(browser.opened()[0].startsWith(`${fixture.base}/authorize?`), browser.opened()[0]);
    const signedIn = await app.until('signed in', () => app.text(`${card} .server-sign-in[data-sign-in="signed_in"] .server-sign-in-text`), 10000);
    assert.match(signedIn, /^Signed in as ada@example\.org \(expires .+, renewed by itself\)$/, signedIn);
    assert.equal(await app.text(`${card} .server-sign-out`), 'Sign out');
    assert.ok(await app.execute('return !!document.querySelector(arguments[0] + \' .server-tool[data-tool="greet"]\');', card), 'greet is listed');
    shot('sign-in-signed-in.png');
    // Where the tokens went: the keyring when one answers (IPYBOX_TEST_KEYRING: a private
    // GNOME Keyring, as scripts/test.sh runs it), else a 0600 file; never the workspace.
    const home = process.env.IPYBOX_HOME || join(process.env.XDG_DATA_HOME || join(process.env.HOME, '.local', 'share'), 'ipybox');
    const file = join(home, 'oauth', `${createHash('sha256').update(url).digest('hex').slice(0, 24)}.json`);
    if (process.env.IPYBOX_TEST_KEYRING) assert.equal(existsSync(file), false, 'in the keyring, no copy in a file');
    else if (existsSync(file)) assert.equal(statSync(file).mode & 0o777, 0o600);
    const inWorkspace = spawnSync('grep', ['-rl', 'access_token', dir], { encoding: 'utf8' }).stdout;
    assert.equal(inWorkspace, '', 'no token in the workspace');

    step('a cell calls the tool');
    let done = await runCell(app);
    assert.equal(done.state, 'done', done.output);
    assert.match(done.output, /hello cell, from behind the sign-in/);

    step('restart the app: the call needs no sign-in');
    await app.quit();
    apps.pop();
    app = await launch(dir, browser);
    await app.until('still signed in', () => app.text(`${card} .server-sign-in[data-sign-in="signed_in"]`), 20000);
    done = await runCell(app);
    assert.equal(done.state, 'done', done.output);
    assert.match(done.output, /hello cell, from behind the sign-in/);
    const after = await stats(fixture.base);
    assert.equal(after.code_grants, 1, `one sign-in in all: ${JSON.stringify(after)}`);
    assert.equal(browser.opened().length, 1, 'no browser the second time');

    step('the fixture revokes the tokens');
    const revoked = await fetch(`${fixture.base}/admin/revoke`, { method: 'POST' });
    assert.ok(revoked.ok);
    done = await runCell(app);
    assert.equal(done.state, 'failed', done.output);
    assert.match(done.output, /its sign-in has expired or was revoked \(HTTP 401\)\. Sign in again/, done.output);
    const again = await app.until('the card to ask for a sign-in again', () => app.text(`${card} .server-sign-in[data-sign-in="needed"] .server-sign-in-button`), 20000);
    assert.equal(again, 'Sign in again');
    assert.match(await app.text(`${card} .server-sign-in-text`), /expired or was revoked/);
    shot('sign-in-again.png');

    step('sign in again from the card, slowly: the card waits for the browser; the cell calls once more');
    browser.slow(3);
    await app.click(`${card} .server-sign-in-button`);
    const waiting = await app.until('the card to wait for the browser', () => app.text(`${card} .server-sign-in[data-sign-in="waiting"]`), 10000);
    assert.match(waiting, /^Waiting for the browser… Finish signing in there\.Cancel$/, waiting);
    shot('sign-in-waiting.png');
    await app.until('signed in again', () => app.text(`${card} .server-sign-in[data-sign-in="signed_in"]`), 30000);
    done = await runCell(app);
    assert.equal(done.state, 'done', done.output);

    step('sign out: revoked at the server');
    await app.click(`${card} .server-sign-out`);
    await app.until('signed out', () => app.text(`${card} .server-sign-in[data-sign-in="needed"]`), 20000);
    assert.equal((await stats(fixture.base)).revocations, 1, 'the sign-out revoked the tokens at the server');

    step('a sign-in the person gives up on: Cancel');
    browser.slow(8);
    await app.click(`${card} .server-sign-in-button`);
    await app.until('the card to wait for the browser', () => app.text(`${card} .server-sign-in[data-sign-in="waiting"]`), 10000);
    await app.click(`${card} .server-sign-in-cancel`);
    const cancelled = await app.until('the sign-in cancelled', () => app.text(`${card} .server-sign-in-error`), 10000);
    assert.equal(cancelled, 'Sign-in cancelled.');
    assert.equal(await app.text(`${card} .server-sign-in-button`), 'Sign in', 'it can be started again');
    const grants = (await stats(fixture.base)).code_grants;
    await new Promise((r) => setTimeout(r, 9000));
    assert.equal((await stats(fixture.base)).code_grants, grants, 'the browser coming back late finds no listener: no sign-in');
    assert.equal(await app.text(`${card} .server-sign-in[data-sign-in="needed"] .server-sign-in-button`), 'Sign in');
  } finally {
    fixture.child.kill();
    // A test that failed half-way leaves no tokens behind in the data directory.
    spawnSync(APP, ['sign-out', 'docs', '--workspace', dir], { stdio: 'ignore' });
  }
});

test('tokens that expire are refreshed: a cell’s calls go out with no sign-in asked', async () => {
  // Access tokens for 31 s: rmcp refreshes one with less than 30 s left, so a call a few
  // seconds after the sign-in goes out with a refreshed token.
  const fixture = await startFixture(31);
  const dir = workspace({ 'test.ipynb': notebook('from mcptools.docs.greet import Params, run\nprint(run(Params(name="cell")))') });
  try {
    const browser = browserStandIn();
    const app = await launch(dir, browser);
    step('add the server and sign in');
    assert.equal(await addServer(app, `${fixture.base}/mcp`), 'Sign in');
    await app.click('#server-form-sign-in .server-sign-in-button');
    await app.until('signed in', () => app.text(`${card} .server-sign-in[data-sign-in="signed_in"]`), 30000);
    assert.equal((await stats(fixture.base)).refreshes, 0);

    step('past the refresh point, a cell calls the tool');
    await new Promise((r) => setTimeout(r, 2500));
    let done = await runCell(app);
    assert.equal(done.state, 'done', done.output);
    assert.match(done.output, /hello cell, from behind the sign-in/);
    const refreshed = await stats(fixture.base);
    assert.ok(refreshed.refreshes >= 1, `the token about to expire was refreshed: ${JSON.stringify(refreshed)}`);

    step('the server stops accepting every access token it gave: the next call still goes out, refreshed');
    assert.ok((await fetch(`${fixture.base}/admin/expire`, { method: 'POST' })).ok);
    done = await runCell(app);
    assert.equal(done.state, 'done', done.output);
    assert.match(done.output, /hello cell, from behind the sign-in/);
    const after = await stats(fixture.base);
    assert.ok(after.refreshes > refreshed.refreshes, `refreshed again: ${JSON.stringify(after)}`);
    assert.equal(after.code_grants, 1, `one sign-in in all: ${JSON.stringify(after)}`);
    assert.equal(browser.opened().length, 1, 'no browser opened for the refreshes');
    assert.match(await app.text(`${card} .server-sign-in[data-sign-in="signed_in"] .server-sign-in-text`), /^Signed in as ada@example\.org/, 'the card still says signed in');
  } finally {
    fixture.child.kill();
    spawnSync(APP, ['sign-out', 'docs', '--workspace', dir], { stdio: 'ignore' });
  }
});
