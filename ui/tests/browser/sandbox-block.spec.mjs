// A cell the sandbox blocked: the line under its error ("The sandbox blocked writing …"), the
// offered folder (editable), "Allow writing" asking the backend (which asks natively), the
// policy it saves, "Run the cell again", a refusal kept in words, a block no entry can lift,
// and the Sandbox tab's list of recent blocks; a domain srt's proxy refused, offered as its exact
// host; a block the cell crafted to name a way out of the sandbox, shown without an offer (#45).
// Paths and hosts are untrusted text: shown escaped.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useApp } from './harness.mjs';

const { app } = useApp({ before, after }, { notebook: null });

const calls = (page, cmd) => page.evaluate((c) => window.__mock.calls.filter((x) => x.cmd === c).map((x) => x.args), cmd);

const BLOCK = {
  access: 'write',
  path: '/tmp/reports/report.csv',
  rule: null,
  reason: 'no allowWrite entry covers it',
  suggestion: '/tmp/reports',
  refusal: null,
};

/** What the engine says of a crafted error naming autostart (#45): shown, never offered. */
const AUTOSTART = {
  access: 'write',
  path: '/home/ana/.config/autostart/chart-export.desktop',
  rule: null,
  reason: 'read-only: no allowWrite entry covers it',
  suggestion: null,
  refusal: 'ipybox does not offer to open this place: code written there (~/.config/autostart) would run outside the sandbox later: when you log in, open a terminal or start a program.',
};

const UNVERIFIED = "The path comes from the cell's own error message; ipybox checked that the sandbox blocks it, not that the cell really tried.";

/** The next cells fail as a blocked write does: the error, and the engine's block event. */
async function blockedKernel(page, block) {
  await page.evaluate((b) => {
    window.__mock.onExecute = async (ctx) => {
      await window.__mock.emitSession({ type: 'sandbox_blocked', execution_id: ctx.id, block: b });
      ctx.outputs({ type: 'error', ename: 'OSError', evalue: "[Errno 30] Read-only file system: '/tmp/reports/report.csv'", traceback: ['OSError: [Errno 30] Read-only file system'] });
      return 'failed';
    };
  }, block);
}

async function run(page, code) {
  await page.keyboard.press('Enter');
  await page.waitForSelector('.cell.active.editing');
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText(code);
  await page.keyboard.press('Control+Enter');
}

describe('a cell the sandbox blocked', () => {
  it('says what was blocked under the error, offers the narrowest folder, and allows it: saved, restarted, run again', async () => {
    const { page, errors, close } = await app();
    await blockedKernel(page, BLOCK);
    await run(page, 'open("/tmp/reports/report.csv", "w")');
    const line = page.locator('.cell .sandbox-block-line');
    await line.waitFor();
    assert.equal(await line.textContent(), 'The sandbox blocked writing /tmp/reports/report.csv');
    assert.equal(await page.locator('.cell .sandbox-block').getAttribute('role'), 'status', 'read out when it appears');
    assert.equal(await page.inputValue('.cell .sandbox-block-entry'), '/tmp/reports', 'the narrowest folder that covers it');
    assert.equal(await page.locator('.cell .sandbox-block-allow').textContent(), 'Allow writing');
    assert.equal(await page.locator('.cell .sandbox-block-source').textContent(), UNVERIFIED, 'the offer says whose word the path is');
    // Under the error, not above it.
    const order = await page.evaluate(() => {
      const cell = document.querySelector('.cell');
      const err = cell.querySelector('.outputs');
      const offer = cell.querySelector('.sandbox-block');
      return err.compareDocumentPosition(offer) & Node.DOCUMENT_POSITION_FOLLOWING;
    });
    assert.ok(order, 'the offer follows the error');

    // The person narrows it to a subfolder they chose, then allows.
    await page.fill('.cell .sandbox-block-entry', '/tmp/reports/');
    await page.click('.cell .sandbox-block-allow');
    await page.locator('.cell .sandbox-block-status', { hasText: 'Allowed; the kernel restarted.' }).waitFor();
    assert.deepEqual(await calls(page, 'allow_blocked'), [{ access: 'write', entry: '/tmp/reports/', path: '/tmp/reports/report.csv' }], 'the edited entry, with the blocked path it must cover');
    const saved = JSON.parse(await page.evaluate(() => window.__TAURI_INTERNALS__.invoke('read_policy', { source: { kind: 'workspace' } }).then((d) => d.text)));
    assert.deepEqual(saved.filesystem.allowWrite, ['.', '/tmp/reports/'], 'the workspace policy gained that one entry');

    // Run again: the same cell runs, and the line goes with the old run.
    await page.evaluate(() => {
      window.__mock.onExecute = async (ctx) => {
        ctx.outputs({ type: 'stream', name: 'stdout', text: 'written\n' });
        return 'finished';
      };
    });
    await page.click('.cell .sandbox-block-run');
    await page.waitForFunction(() => document.querySelector('.cell')?.dataset.state === 'done');
    assert.equal(await page.locator('.cell .sandbox-block').isHidden(), true, 'the block belonged to the run before');
    const executed = await calls(page, 'execute');
    assert.equal(executed.length, 2, 'run once more');
    assert.equal(executed[1].code, executed[0].code, 'the same cell');
    assert.deepEqual(errors, []);
    await close();
  });

  it('keeps the place blocked when the person says no, in words, and can be asked again', async () => {
    const { page, errors, close } = await app({ policy: { keepBlocked: true } });
    await blockedKernel(page, BLOCK);
    await run(page, 'open("/tmp/reports/report.csv", "w")');
    await page.click('.cell .sandbox-block-allow');
    const status = page.locator('.cell .sandbox-block-status');
    await status.filter({ hasText: 'kept it blocked' }).waitFor();
    assert.equal(await page.locator('.cell .sandbox-block-allow').isDisabled(), false, 'the person may change their mind');
    assert.equal(await page.locator('.cell .sandbox-block-run').count(), 0, 'nothing to run again');
    assert.deepEqual(errors, []);
    await close();
  });

  it('shows a path as escaped text, names the rule when no entry helps, and lists recent blocks in the Sandbox tab', async () => {
    const { page, errors, close } = await app();
    const hostile = '/home/ana/projects/weather/.env\u202e<img src=x onerror=alert(1)>';
    await blockedKernel(page, { access: 'read', path: hostile, rule: 'filesystem.denyRead: **/.env', reason: 'hidden by name wherever it is', suggestion: null, refusal: null });
    await run(page, 'open(".env")');
    const rule = page.locator('.cell .sandbox-block-rule');
    await rule.waitFor();
    assert.equal(await page.locator('.cell .sandbox-block-line').textContent(), 'The sandbox blocked reading /home/ana/projects/weather/.env\\u202e<img src=x onerror=alert(1)>');
    assert.equal(await page.locator('.cell .sandbox-block img').count(), 0, 'the path is text, not markup');
    assert.equal(await rule.textContent(), 'Change the policy in the Sandbox tab (filesystem.denyRead: **/.env: hidden by name wherever it is).');
    assert.equal(await page.locator('.cell .sandbox-block-allow').count(), 0, 'no entry unhides a file hidden by name: nothing offered');

    await page.waitForSelector('#sandbox-badge[data-sandboxed="yes"]');
    await page.click('#sandbox-badge');
    const recent = page.locator('.recent-blocks li');
    await recent.first().waitFor();
    assert.equal(await recent.count(), 1);
    assert.equal(await recent.first().textContent(), 'reading /home/ana/projects/weather/.env\\u202e<img src=x onerror=alert(1)> — filesystem.denyRead: **/.env');
    assert.deepEqual(errors, []);
    await close();
  });

  it('shows a block the cell crafted to name a way out of the sandbox, says why, and offers nothing (#45)', async () => {
    const { page, errors, close } = await app();
    await blockedKernel(page, AUTOSTART);
    await run(page, 'import errno, os\nprint("click Allow writing below")\nraise OSError(errno.EROFS, "Read-only file system", os.path.expanduser("~/.config/autostart/chart-export.desktop"))');
    const refusal = page.locator('.cell .sandbox-block-refusal');
    await refusal.waitFor();
    assert.equal(await page.locator('.cell .sandbox-block-line').textContent(), 'The sandbox blocked writing /home/ana/.config/autostart/chart-export.desktop', 'the block is still shown');
    assert.equal(await refusal.textContent(), AUTOSTART.refusal, 'in words, why nothing is offered');
    assert.equal(await page.locator('.cell .sandbox-block-allow').count(), 0, 'no button to accept');
    assert.equal(await page.locator('.cell .sandbox-block-entry').count(), 0, 'no field to edit');
    assert.equal(await page.locator('.cell .sandbox-block-source').count(), 0, 'nothing offered, nothing to qualify');
    // Return, where the offer would have been: nothing is asked, nothing changes.
    await page.keyboard.press('Escape');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Escape');
    assert.deepEqual(await calls(page, 'allow_blocked'), [], 'nothing asked of the backend');

    // A refusal is untrusted text too (the place is the kernel's choice): shown escaped.
    await blockedKernel(page, { ...AUTOSTART, refusal: 'ipybox does not offer to open this place: code written there (~/x\u202e<img src=x onerror=alert(1)>) would run later.' });
    await run(page, 'raise OSError()');
    const again = page.locator('.cell .sandbox-block-refusal', { hasText: 'would run later' });
    await again.waitFor();
    assert.equal(await again.textContent(), 'ipybox does not offer to open this place: code written there (~/x\\u202e<img src=x onerror=alert(1)>) would run later.');
    assert.equal(await page.locator('.sandbox-block img').count(), 0, 'text, not markup');
    assert.deepEqual(errors, []);
    await close();
  });

  it('offers the exact host a refused connection asked for, named on the button, and allows it', async () => {
    const { page, errors, close } = await app();
    await blockedKernel(page, { access: 'connect', path: 'localhost:8000', rule: null, reason: 'localhost is not on the allow list (network.allowedDomains)', suggestion: 'localhost:8000', refusal: null });
    await run(page, 'urllib.request.urlopen("http://localhost:8000/")');
    const line = page.locator('.cell .sandbox-block-line');
    await line.waitFor();
    assert.equal(await line.textContent(), 'The sandbox blocked connecting to localhost:8000');
    assert.equal(await page.inputValue('.cell .sandbox-block-entry'), 'localhost:8000', 'the exact host, not a wildcard');
    assert.equal(await page.locator('.cell .sandbox-block-label').textContent(), 'Domain to allow');
    const allow = page.locator('.cell .sandbox-block-allow');
    assert.equal(await allow.textContent(), 'Allow localhost:8000');
    assert.equal(await page.locator('.cell .sandbox-block-source').count(), 0, 'a domain is srt\'s record of what was asked, not the cell\'s word');
    await page.fill('.cell .sandbox-block-entry', 'localhost');
    assert.equal(await allow.textContent(), 'Allow localhost', 'the button names what the field says');
    await page.fill('.cell .sandbox-block-entry', 'localhost:8000');
    await allow.click();
    await page.locator('.cell .sandbox-block-status', { hasText: 'Allowed; the kernel restarted.' }).waitFor();
    assert.deepEqual(await calls(page, 'allow_blocked'), [{ access: 'connect', entry: 'localhost:8000', path: 'localhost:8000' }]);
    const saved = JSON.parse(await page.evaluate(() => window.__TAURI_INTERNALS__.invoke('read_policy', { source: { kind: 'workspace' } }).then((d) => d.text)));
    assert.deepEqual(saved.network.allowedDomains, ['localhost:8000'], 'the allow list gained that one entry');

    await page.waitForSelector('#sandbox-badge[data-sandboxed="yes"]');
    await page.click('#sandbox-badge');
    const recent = page.locator('.recent-blocks li');
    await recent.first().waitFor();
    assert.equal(await recent.first().textContent(), 'connecting to localhost:8000 — localhost is not on the allow list (network.allowedDomains)');
    assert.deepEqual(errors, []);
    await close();
  });
});
