// Signing in to an MCP server that asks for OAuth, in the MCP servers tab: from the add-server
// form (registering signs in first), the card's states — waiting for the browser with Cancel,
// "Signed in as … (expires …)" with Sign out, "Sign in again" after a call was refused — and
// who signed in (the authorization server's text) escaped.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { contrastOffenders, useApp } from './harness.mjs';

const { app } = useApp({ before, after }, { notebook: null });

const calls = (page, cmd) => page.evaluate((c) => window.__mock.calls.filter((x) => x.cmd === c).map((x) => x.args), cmd);
const text = (page, sel) => page.locator(sel).textContent();
const URL = 'https://docs.example/mcp';
/** An authorization server that names the person with a right-to-left override and a newline. */
const HOSTILE_USER = 'ada\u202eelpmaxe.evil\nSigned in as admin';

async function openTab(page) {
  await page.click('#toggle-approvals');
  await page.click('#side-tab-servers');
  await page.waitForSelector('#mcp-servers');
}

describe('signing in to an MCP server', () => {
  it('offers the sign-in when the added server asks for one, waits for the browser, can be cancelled, then registers', async () => {
    const { page, errors, close } = await app({ servers: { oauth: { urls: [URL], user: HOSTILE_USER } } });
    await openTab(page);
    await page.click('#add-server');
    await page.fill('#server-name', 'docs');
    await page.check('#server-transport-streamable_http');
    await page.fill('#server-url', URL);
    await page.click('#save-server');
    await page.waitForSelector('#server-form-sign-in .server-sign-in-button');
    assert.match(await text(page, '#server-form-sign-in'), /^docs asks you to sign in\. ipybox opens your browser; once you have signed in there, the server is added\.Sign in$/);
    assert.equal(await page.locator('#server-form-error').isVisible(), false, 'a sign-in is no error');
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('server-sign-in-button')), true, 'Sign in has the focus');
    assert.equal(await page.inputValue('#server-url'), URL, 'nothing typed is lost');

    await page.click('#server-form-sign-in .server-sign-in-button');
    await page.waitForSelector('#server-form-sign-in[data-sign-in="waiting"]');
    assert.match(await text(page, '#server-form-sign-in'), /Waiting for the browser…/);
    assert.deepEqual(await calls(page, 'sign_in_mcp_server'), [{ name: 'docs', params: { type: 'streamable_http', url: URL } }], 'the form’s server, signed in and registered by the backend');
    await page.click('#server-form-sign-in .server-sign-in-cancel');
    await page.waitForSelector('#server-form-sign-in .server-sign-in-error');
    assert.match(await text(page, '#server-form-sign-in'), /Sign-in cancelled\./);
    assert.equal(await page.locator('#server-form').isVisible(), true, 'the form stays, with what was typed');

    await page.click('#server-form-sign-in .server-sign-in-button');
    await page.waitForSelector('#server-form-sign-in[data-sign-in="waiting"]');
    assert.equal(await page.evaluate(() => window.__mock.finishSignIn(true)), true);
    await page.waitForSelector('.server-card[data-server="docs"] .server-sign-in[data-sign-in="signed_in"]');
    assert.equal(await page.locator('#server-form').isVisible(), false, 'registered: the form closes');
    const line = await text(page, '.server-card[data-server="docs"] .server-sign-in-text');
    assert.match(line, /^Signed in as ada\\u202eelpmaxe\.evil\\u000aSigned in as admin \(expires \d{1,2}:\d\d( [AP]M)?, renewed by itself\)$/, 'who signed in is shown escaped, never as a line of its own');
    assert.equal(await page.locator('.server-card[data-server="docs"] .server-tools li').count(), 1, 'its tools are listed');
    assert.equal(await page.locator('.server-card[data-server="docs"] .server-sign-out').isVisible(), true);
    assert.deepEqual(await contrastOffenders(page, '.server-card[data-server="docs"] .server-sign-in'), []);
    assert.deepEqual(errors, []);
    await close();
  });

  it('turns a card into “Sign in again” when a call was refused, signs in again, and signs out', async () => {
    const { page, errors, close } = await app({
      servers: { registered: { docs: { type: 'streamable_http', url: URL }, fx: { command: 'ipybox-fixture-mcp' } }, oauth: { urls: [URL], user: 'ada@example.org', signedIn: ['docs'] } },
    });
    await openTab(page);
    const card = '.server-card[data-server="docs"]';
    await page.waitForSelector(`${card} .server-sign-in[data-sign-in="signed_in"]`);
    assert.match(await text(page, `${card} .server-sign-in-text`), /^Signed in as ada@example\.org \(expires /);
    assert.equal(await page.locator('.server-card[data-server="fx"] .server-sign-in').isVisible(), false, 'a stdio server has no sign-in');

    await page.evaluate(() => window.__mock.revokeSignIn('docs'));
    await page.evaluate(() => window.__mock.emitSession({ type: 'mcp_sign_in_needed', server: 'docs', again: true }));
    await page.waitForSelector(`${card} .server-sign-in[data-sign-in="needed"]`);
    assert.equal(await text(page, `${card} .server-sign-in-button`), 'Sign in again');
    assert.match(await text(page, `${card} .server-sign-in-text`), /expired or was revoked: sign in again/);

    await page.click(`${card} .server-sign-in-button`);
    await page.waitForSelector(`${card} .server-sign-in[data-sign-in="waiting"]`);
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('server-sign-in-cancel')), true, 'Cancel has the focus while the browser is open');
    assert.deepEqual(await calls(page, 'sign_in_mcp_server'), [{ name: 'docs', params: null }], 'the registered server');
    await page.evaluate(() => window.__mock.finishSignIn(true));
    await page.waitForSelector(`${card} .server-sign-in[data-sign-in="signed_in"]`);

    await page.click(`${card} .server-sign-out`);
    await page.waitForSelector(`${card} .server-sign-in[data-sign-in="needed"]`);
    assert.equal(await text(page, `${card} .server-sign-in-button`), 'Sign in');
    assert.deepEqual(await calls(page, 'sign_out_mcp_server'), [{ name: 'docs' }]);
    assert.match(await text(page, '#mcp-servers'), /Signed out of docs; the server revoked the sign-in\./);
    assert.deepEqual(errors, []);
    await close();
  });
});
