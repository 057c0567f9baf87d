// Each notebook's Python: the status bar names it (full path in the tooltip) and opens the
// picker; a pick is looked at before it can be switched to, ipykernel is offered when missing,
// a project's .venv can be made, and switching says it restarts the kernel.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useApp } from './harness.mjs';

const { app } = useApp({ before, after }, { notebook: null });

const calls = (page, cmd) => page.evaluate((c) => window.__mock.calls.filter((x) => x.cmd === c).map((x) => x.args), cmd);
const check = (page) => page.locator('#python-check').textContent();

describe('the Python picker', () => {
  it('the status bar names the Python; switching to the project .venv restarts the kernel on it', async () => {
    const { page, errors, close } = await app();
    const item = page.locator('#python-status');
    await page.waitForFunction(() => document.querySelector('#python-status')?.textContent === 'Python 3.12 · ipybox');
    assert.equal(await item.getAttribute('title'), '/home/ana/.local/share/ipybox/venv/bin/python', 'the full path in the tooltip');
    await item.click();
    await page.waitForSelector('#python-dialog[open]');
    assert.match(await page.locator('#python-dialog').textContent(), /Switching restarts the kernel: its variables are lost/);
    assert.equal(await page.isChecked('#python-managed'), true, 'the current choice is checked');
    assert.equal(await page.isDisabled('#python-switch'), true, 'nothing to switch to yet');
    assert.deepEqual(await calls(page, 'check_python'), [], 'nothing is looked at before the person picks');
    await page.check('#python-project');
    await page.waitForFunction(() => document.querySelector('#python-check')?.textContent.includes('ready'));
    assert.equal(await check(page), 'Python 3.11 · .venv — ready');
    assert.deepEqual(await calls(page, 'check_python'), [{ choice: { kind: 'project' } }]);
    await page.click('#python-switch');
    await page.waitForSelector('#python-dialog:not([open])', { state: 'attached' });
    assert.deepEqual(await calls(page, 'set_python'), [{ choice: { kind: 'project' } }]);
    assert.equal(await item.textContent(), 'Python 3.11 · .venv', 'the status bar says the new Python');
    assert.equal(await item.getAttribute('title'), '/home/ana/projects/weather/.venv/bin/python');
    assert.deepEqual(errors, []);
    await close();
  });

  it('a Python without ipykernel cannot be switched to until ipykernel is installed; the log is shown as text', async () => {
    const { page, errors, close } = await app();
    await page.click('#python-status');
    await page.waitForSelector('#python-dialog[open]');
    await page.click('#python-browse');
    await page.waitForFunction(() => document.querySelector('#python-check')?.textContent.includes('no ipykernel'));
    assert.equal(await page.inputValue('#python-custom-path'), '/opt/envs/nokernel/bin/python');
    assert.equal(await page.isChecked('#python-custom'), true);
    assert.equal(await page.isDisabled('#python-switch'), true, 'no switching to a Python that cannot run a kernel');
    await page.click('#python-install-ipykernel');
    await page.waitForFunction(() => document.querySelector('#python-check')?.textContent.includes('ready'));
    const log = await page.locator('#python-log').textContent();
    assert.match(log, /Installed ipykernel into \/opt\/envs\/nokernel\/bin\/python/);
    assert.ok(log.includes('\\u202e') && !log.includes('\u202e'), 'a bidi control in the log is shown escaped');
    assert.deepEqual(await calls(page, 'install_ipykernel'), [{ choice: { kind: 'custom', path: '/opt/envs/nokernel/bin/python' } }]);
    assert.equal(await page.isDisabled('#python-switch'), false);
    await page.click('#python-switch');
    await page.waitForFunction(() => document.querySelector('#python-status')?.textContent === 'Python 3.10 · nokernel');
    // A path that is not there: said in words, no switch.
    await page.click('#python-status');
    await page.waitForSelector('#python-dialog[open]');
    await page.fill('#python-custom-path', '/opt/missing/bin/python');
    await page.press('#python-custom-path', 'Tab');
    await page.waitForFunction(() => document.querySelector('#python-check')?.textContent.includes('no Python at'));
    assert.equal(await page.isDisabled('#python-switch'), true);
    await page.click('#python-cancel');
    assert.deepEqual(errors, []);
    await close();
  });

  it('a workspace with pyproject.toml and no .venv offers to make it with uv', async () => {
    const { page, errors, close } = await app({ python: { projectExists: false } });
    await page.click('#python-status');
    await page.waitForSelector('#python-dialog[open]');
    assert.equal(await page.isDisabled('#python-project'), true, 'no .venv to pick yet');
    assert.match(await page.locator('#python-project-where').textContent(), /can be made from pyproject.toml/);
    await page.click('#python-make-venv');
    await page.waitForFunction(() => document.querySelector('#python-check')?.textContent.includes('ready'));
    assert.match(await page.locator('#python-log').textContent(), /Creating virtual environment at: .venv/);
    assert.equal(await page.isChecked('#python-project'), true, 'the new .venv is picked');
    assert.equal(await page.isVisible('#python-make-venv'), false);
    assert.deepEqual(errors, []);
    await close();
  });

  it('a kernel on a server: the picker says a choice here applies when the kernel runs on this computer', async () => {
    const { page, errors, close } = await app({ stateRemote: 'https://kernels.example.org' });
    await page.click('#python-status');
    await page.waitForSelector('#python-dialog[open]');
    assert.equal(
      await page.locator('#python-remote-note').textContent(),
      'This notebook’s kernel runs on the server kernels.example.org, in that server’s Python: a choice made here applies when the kernel runs on this computer again.',
    );
    assert.equal(await page.isVisible('#python-remote-note'), true);
    assert.deepEqual(errors, []);
    await close();
  });

  it('a kernel on this computer: no word of a server', async () => {
    const { page, errors, close } = await app();
    await page.click('#python-status');
    await page.waitForSelector('#python-dialog[open]');
    assert.equal(await page.isVisible('#python-remote-note'), false);
    assert.deepEqual(errors, []);
    await close();
  });
});
