// The Settings dialog: the approval timeout, saved by the backend in ipybox's data directory,
// in force at once, and shown where approvals are decided.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useApp } from './harness.mjs';

const { app } = useApp({ before, after }, { notebook: null });

const calls = (page, cmd) => page.evaluate((c) => window.__mock.calls.filter((x) => x.cmd === c).map((x) => x.args), cmd);
const statusText = (page) => page.locator('#approval-timeout-status').textContent();

describe('the approval timeout setting', () => {
  it('opens from the toolbar with the saved value; refuses what the engine cannot do, saying why', async () => {
    const { page, errors, close } = await app();
    await page.click('#open-settings');
    await page.waitForSelector('#settings-dialog[open]');
    await page.waitForFunction(() => document.querySelector('#approval-timeout')?.value === '60');
    assert.equal(await statusText(page), 'In force: the next tool call waits up to 60 s.');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'approval-timeout', 'the field has the focus');

    for (const [text, why] of [
      ['never', /always rejected in the end/],
      ['0', /always rejected in the end/],
      ['soon', /is not a duration/],
      ['2 days', /is not a duration/],
      ['100000', /from 1 second to 86,400 seconds/],
    ]) {
      await page.fill('#approval-timeout', text);
      await page.click('#save-settings');
      assert.match(await page.locator('#approval-timeout-error').textContent(), why, text);
      assert.equal(await page.locator('#approval-timeout-error').isVisible(), true);
    }
    assert.deepEqual(await calls(page, 'set_app_settings'), [], 'nothing invalid reaches the backend');
    // Escape closes the dialog (the notebook's own Escape handling stays out of it).
    await page.keyboard.press('Escape');
    await page.waitForSelector('#settings-dialog:not([open])', { state: 'attached' });
    assert.deepEqual(errors, []);
    await close();
  });

  it('a saved timeout is in force at once, with no restart; a request already waiting keeps its own countdown', async () => {
    const { page, close } = await app();
    await page.click('#toggle-approvals');
    await page.waitForFunction(() => document.querySelector('#approval-timeout-hint')?.textContent.includes('within 60 s'));
    await page.evaluate(() => window.__mock.requestApproval({ id: 9, asked_at: Date.now() - 10_000 }));
    const left = (id) => page.locator(`.approval-request[data-request-id="${id}"] .approval-asked`).textContent();
    await page.waitForSelector('.approval-request[data-request-id="9"]');
    assert.match(await left(9), /rejected in (49|50) s unless you decide$/);

    await page.click('#open-settings');
    await page.waitForFunction(() => document.querySelector('#approval-timeout')?.value === '60');
    assert.equal(await statusText(page), 'In force: the next tool call waits up to 60 s.');
    await page.fill('#approval-timeout', '2 min');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('#approval-timeout-status')?.textContent.startsWith('Saved'));
    assert.deepEqual(await calls(page, 'set_app_settings'), [{ approvalTimeoutSecs: 120 }]);
    assert.equal(await page.inputValue('#approval-timeout'), '120');
    assert.equal(await statusText(page), 'Saved: 2 min, in force now. The next tool call waits up to 2 min; calls already waiting keep their time.');
    assert.equal(await page.locator('#settings-restart').count(), 0, 'nothing to restart');
    assert.match(await page.locator('#approval-timeout-hint').textContent(), /within 2 min is rejected/, 'the panel says the new timeout at once');
    assert.deepEqual(await calls(page, 'restart_kernel'), [], 'the kernel (and its state) is left alone');
    assert.deepEqual(await page.evaluate(() => window.__mock.settings()), { approvalTimeoutSecs: 120 });
    await page.click('#close-settings');
    await page.waitForSelector('#settings-dialog:not([open])', { state: 'attached' });

    // The engine gave request 9 the timeout in force when it was asked; the next one gets 2 min.
    assert.match(await left(9), /rejected in (4\d|50) s unless you decide$/, 'the request keeps the 60 s it was asked with');
    await page.evaluate(() => window.__mock.requestApproval({ id: 10, asked_at: Date.now() }));
    await page.waitForSelector('.approval-request[data-request-id="10"]');
    assert.match(await left(10), /rejected in (2 min|1 min 59 s) unless you decide$/);

    await page.click('#open-settings');
    await page.waitForFunction(() => document.querySelector('#approval-timeout-status')?.textContent === 'In force: the next tool call waits up to 2 min.');
    assert.equal(await page.inputValue('#approval-timeout'), '120');
    await close();
  });

  it('"Change" beside the timeout in the approvals panel opens the settings; a waiting request counts down to it', async () => {
    const { page, close } = await app({ approvalTimeoutSecs: 30 });
    await page.evaluate(() => window.__mock.requestApproval({ id: 5, asked_at: Date.now() - 10_000 }));
    await page.waitForSelector('.approval-request[data-request-id="5"]');
    assert.match(await page.locator('.approval-request[data-request-id="5"] .approval-asked').textContent(), /rejected in (19|20) s unless you decide$/);
    await page.click('#change-approval-timeout');
    await page.waitForSelector('#settings-dialog[open]');
    await page.waitForFunction(() => document.querySelector('#approval-timeout')?.value === '30');
    await close();
  });
});
