// Settings → "Where this workspace's kernel runs": this computer or a Jupyter server. Fields checked
// as you type them in, Test connection in the server's words, Apply moving the kernel (the Sandbox
// badge then says where it runs), and the token never shown back.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useApp } from './harness.mjs';

const { app } = useApp({ before, after }, { notebook: null });

const calls = (page, cmd) => page.evaluate((c) => window.__mock.calls.filter((x) => x.cmd === c).map((x) => x.args), cmd);
const text = (page, css) => page.locator(css).textContent();

async function openSettings(page) {
  await page.click('#open-settings');
  await page.waitForSelector('#settings-dialog[open]');
  await page.waitForFunction(() => document.querySelector('#remote-running')?.textContent !== '');
}

describe('where the kernel runs', () => {
  it('starts on this computer; the server fields wait for the choice; bad URLs and headers never reach the backend', async () => {
    const { page, errors, close } = await app();
    await openSettings(page);
    assert.equal(await text(page, '#remote-running'), 'The kernel runs on this computer.');
    assert.equal(await page.isChecked('#remote-off'), true);
    assert.equal(await page.isHidden('#remote-url'), true, 'no server fields for this computer');
    assert.equal(await page.isHidden('#test-remote'), true);

    await page.check('#remote-on');
    assert.equal(await page.isVisible('#remote-url'), true);
    for (const [url, headers, why] of [
      ['', '', /Enter the server’s URL/],
      ['jupyter.example.org', '', /is not a URL/],
      ['http://h:8888/?token=abc', '', /Token field/],
      ['https://h', 'X-Auth abc', /is not of the form “Name: value”/],
    ]) {
      await page.fill('#remote-url', url);
      await page.fill('#remote-headers', headers);
      await page.click('#test-remote');
      assert.match(await text(page, '#remote-error'), why, url);
    }
    // Enter in a field neither saves the timeout nor applies anything.
    await page.fill('#remote-url', 'https://h');
    await page.focus('#remote-url');
    await page.keyboard.press('Enter');
    assert.deepEqual(await calls(page, 'probe_remote'), []);
    assert.deepEqual(await calls(page, 'apply_remote'), []);
    assert.deepEqual(await calls(page, 'set_app_settings'), []);
    assert.deepEqual(errors, []);
    await close();
  });

  it('Test connection says what the server offers, or why it refused; Apply moves the kernel and the badge says so', async () => {
    const { page, errors, close } = await app();
    await openSettings(page);
    await page.check('#remote-on');
    await page.fill('#remote-url', 'https://refuse.example.org');
    await page.click('#test-remote');
    await page.waitForFunction(() => !document.querySelector('#remote-error')?.hidden);
    assert.equal(await text(page, '#remote-error'), 'the server at https://refuse.example.org refused the request: it needs a token');

    await page.fill('#remote-url', 'https://jupyter.example.org/user/ana/');
    await page.fill('#remote-token', 's3cret');
    await page.fill('#remote-headers', 'X-Proxy-Auth: abc');
    await page.click('#test-remote');
    await page.waitForFunction(() => document.querySelector('#remote-status')?.textContent.startsWith('The server answers'));
    assert.equal(await text(page, '#remote-status'), 'The server answers (version 2.14.2). Kernels it offers: ir, python3; ipybox starts python3.');
    assert.deepEqual((await calls(page, 'probe_remote')).at(-1), {
      request: { url: 'https://jupyter.example.org/user/ana', token: 's3cret', headers: ['X-Proxy-Auth: abc'] },
    });

    await page.click('#apply-remote');
    await page.waitForFunction(() => document.querySelector('#remote-status')?.textContent.startsWith('Applied'));
    assert.equal(await text(page, '#remote-status'), 'Applied: the kernel restarted on https://jupyter.example.org/user/ana.');
    assert.equal(await text(page, '#remote-running'), 'The kernel runs on the server jupyter.example.org/user/ana.');
    assert.equal(await page.inputValue('#remote-token'), '', 'the token is never shown back');
    assert.equal(await page.getAttribute('#remote-token', 'placeholder'), 'Kept — leave empty to keep it');
    await page.waitForFunction(() => document.querySelector('#sandbox-policy-status')?.textContent === 'On server: jupyter.example.org/user/ana');
    assert.equal(await page.getAttribute('#sandbox-badge', 'data-sandboxed'), 'remote');

    // Applying again with the token field empty keeps the kept token (null), not an empty one.
    await page.click('#apply-remote');
    await page.waitForFunction(() => document.querySelector('#remote-status')?.textContent.startsWith('Applied'));
    assert.deepEqual((await calls(page, 'apply_remote')).at(-1), { request: { url: 'https://jupyter.example.org/user/ana', token: null, headers: null } });

    // Back to this computer.
    await page.check('#remote-off');
    await page.click('#apply-remote');
    await page.waitForFunction(() => document.querySelector('#remote-status')?.textContent === 'Applied: the kernel restarted on this computer.');
    assert.deepEqual((await calls(page, 'apply_remote')).at(-1), { request: null });
    await page.waitForFunction(() => document.querySelector('#sandbox-policy-status')?.textContent !== 'On server: jupyter.example.org/user/ana');
    assert.deepEqual(errors, []);
    await close();
  });
});
