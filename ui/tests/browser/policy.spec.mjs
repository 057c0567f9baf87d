// The Sandbox tab: the policy editor's forms (lists, switches, pickers), inline validation, the
// summary in words and the JSON, Save, an outside edit of the file, Apply, the toolbar badge.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { contrastOffenders, tabWalk, useApp } from './harness.mjs';

const { app } = useApp({ before, after }, { notebook: null });

const calls = (page, cmd) => page.evaluate((c) => window.__mock.calls.filter((x) => x.cmd === c).map((x) => x.args), cmd);
const summary = (page) => page.locator('#policy-summary li').allTextContents();
const json = async (page) => JSON.parse(await page.locator('#policy-json').textContent());

async function openTab(page) {
  await page.waitForSelector('#sandbox-badge[data-sandboxed="yes"]');
  await page.click('#sandbox-badge');
  await page.waitForSelector('#policy-filesystem-allowWrite-add');
}

describe('the sandbox policy editor', () => {
  it('shows at a glance that the kernel is sandboxed, and opens the workspace policy in words and JSON', async () => {
    const { page, errors, close } = await app();
    await page.waitForSelector('#sandbox-badge[data-sandboxed="yes"]');
    assert.equal(await page.locator('#sandbox-policy-status').textContent(), 'Sandboxed: sandbox-config.json');
    assert.equal(await page.locator('#sandbox-badge').getAttribute('aria-label'), 'The kernel is sandboxed under sandbox-config.json. Open the sandbox policy', 'the shield beside the kernel status says it in words to screen readers');
    assert.equal(await page.locator('#sandbox-badge').getAttribute('title'), 'The kernel is sandboxed under sandbox-config.json');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.equal(overflow, 0, 'the toolbar still fits the window');
    await openTab(page);
    assert.equal(await page.locator('#side-tab-sandbox').getAttribute('aria-selected'), 'true');
    assert.equal(await page.locator('#sandbox-running').textContent(), 'The kernel runs in the sandbox under sandbox-config.json.');
    const words = await summary(page);
    assert.equal(words[0], 'Code may write in: this workspace.');
    assert.match(words[1], /^Code may read everything except: \.env, \*\*\/\.env/);
    assert.equal(words[2], 'Code may not reach the network at all.');
    assert.deepEqual((await json(page)).filesystem.allowWrite, ['.']);
    assert.equal(await page.locator('#save-policy').isDisabled(), true, 'nothing to save yet');
    assert.deepEqual(errors, []);
    await close();
  });

  it('adds a folder typed or picked, checks domains as you type (one message per field), and saves', async () => {
    const { page, errors, close } = await app();
    await openTab(page);
    // Typed, then Enter: the focus stays in the add field for the next one.
    await page.fill('#policy-filesystem-allowWrite-add', 'out/');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#policy-filesystem-allowWrite-1');
    assert.equal(await page.inputValue('#policy-filesystem-allowWrite-1'), 'out/');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'policy-filesystem-allowWrite-add');
    assert.equal((await summary(page))[0], 'Code may write in: this workspace, out/.');
    // Picked with the native folder dialog: inside the workspace it is written relative.
    await page.click('#policy-filesystem-denyWrite-pick-folder');
    await page.waitForSelector('#policy-filesystem-denyWrite-0');
    assert.equal(await page.inputValue('#policy-filesystem-denyWrite-0'), 'out/');
    const [open] = await calls(page, 'plugin:dialog|open');
    assert.equal(open.options.directory, true, 'a folder picker');
    assert.equal((await summary(page))[0], 'Code may write in: this workspace, out/; except: out/.');

    // A bad domain: an error under that entry, named for screen readers, and Save is off.
    await page.fill('#policy-network-allowedDomains-add', 'https://pypi.org');
    await page.click('#policy-network-allowedDomains-add-button');
    const message = page.locator('#policy-network-allowedDomains-0-message');
    await message.waitFor();
    assert.equal(await message.textContent(), '"https://pypi.org" is a URL; give the domain alone (example.org)');
    assert.equal(await page.locator('#policy-network-allowedDomains-0').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#policy-network-allowedDomains-0').getAttribute('aria-describedby'), 'policy-network-allowedDomains-0-message policy-network-allowedDomains-0-tag', 'its message, and that it is not in the preset');
    assert.equal(await page.locator('#save-policy').isDisabled(), true, 'a policy with errors is not saved');
    assert.deepEqual(await page.locator('#policy-view .field-error:not([hidden])').evaluateAll((els) => els.map((e) => e.id)), ['policy-network-allowedDomains-0-message'], 'one message, for that field only');
    // Fixed in place: the message goes as you type, nothing typed is lost.
    await page.fill('#policy-network-allowedDomains-0', 'pypi.org');
    await page.waitForSelector('#policy-network-allowedDomains-0-message', { state: 'hidden' });
    assert.equal((await summary(page))[2], 'Code may reach: pypi.org; nothing else on the network.');
    // The engine checked too (debounced), with the same text.
    await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === 'check_policy' && c.args.text.includes('"pypi.org"')));

    await page.click('#save-policy');
    await page.waitForFunction(() => document.querySelector('#save-policy-status')?.textContent.startsWith('Saved'));
    const [saved] = await calls(page, 'save_policy');
    const policy = JSON.parse(saved.text);
    assert.deepEqual(policy.filesystem.allowWrite, ['.', 'out/']);
    assert.deepEqual(policy.network.allowedDomains, ['pypi.org']);
    assert.ok(Array.isArray(policy.filesystem.denyRead) && policy.filesystem.denyRead.includes('~/.ssh'), 'what the form did not touch is kept');
    assert.equal(await page.locator('#save-policy').isDisabled(), true);
    assert.deepEqual(errors, []);
    await close();
  });

  it('warns on switches that weaken the sandbox, in the form and in words', async () => {
    const { page, close } = await app();
    await openTab(page);
    const help = await page.locator('#policy-flag-network-allowAllUnixSockets-help').textContent();
    assert.match(help, /Weakens the sandbox: Code could talk to D-Bus, Docker/);
    await page.check('#policy-flag-network-allowAllUnixSockets');
    await page.waitForSelector('#policy-summary li.policy-warn');
    assert.match(await page.locator('#policy-summary li.policy-warn').textContent(), /Warning: Code may connect to any Unix socket/);
    assert.equal((await json(page)).network.allowAllUnixSockets, true);
    await page.uncheck('#policy-flag-network-allowAllUnixSockets');
    assert.equal('allowAllUnixSockets' in (await json(page)).network, false, 'off: the key goes, as srt defaults it');
    await close();
  });

  it('an outside edit shows at once; with unsaved edits here it asks: keep mine or load theirs', async () => {
    const { page, close } = await app();
    await openTab(page);
    const theirs = (allowWrite) => JSON.stringify({ filesystem: { denyRead: ['.env'], allowWrite, denyWrite: [] }, network: { allowedDomains: [], deniedDomains: [] } }, null, 2);
    await page.evaluate((text) => window.__mock.emit('policy-file', { path: '/home/ana/projects/weather/sandbox-config.json', text }), theirs(['.', 'results/']));
    await page.waitForSelector('#policy-filesystem-allowWrite-1');
    assert.equal(await page.inputValue('#policy-filesystem-allowWrite-1'), 'results/');
    assert.equal(await page.locator('#policy-conflict').isHidden(), true, 'no edits here: loaded without asking');

    await page.fill('#policy-network-allowedDomains-add', 'pypi.org');
    await page.keyboard.press('Enter');
    await page.evaluate((text) => window.__mock.emit('policy-file', { path: '/home/ana/projects/weather/sandbox-config.json', text }), theirs(['.', 'plots/']));
    await page.waitForSelector('#policy-conflict:not([hidden])');
    assert.match(await page.locator('#policy-conflict').textContent(), /changed outside ipybox while you were editing/);
    assert.equal(await page.inputValue('#policy-network-allowedDomains-0'), 'pypi.org', 'nothing typed is lost while it asks');
    await page.click('#policy-load-theirs');
    await page.waitForSelector('#policy-conflict', { state: 'hidden' });
    assert.equal(await page.inputValue('#policy-filesystem-allowWrite-1'), 'plots/');
    assert.equal(await page.locator('#policy-network-allowedDomains-0').count(), 0);
    await close();
  });

  it('a file that is not a policy is shown as it is, never saved over; fixed on disk, it opens', async () => {
    const broken = '{ "filesystem": { "allowWrite": ["."] ';
    const { page, close } = await app({ policy: { text: broken } });
    await page.waitForSelector('#sandbox-badge[data-sandboxed="yes"]');
    await page.click('#sandbox-badge');
    await page.waitForSelector('#policy-text-error:not([hidden])');
    assert.match(await page.locator('#policy-text-error').textContent(), /^The policy is not valid JSON: .*Fix sandbox-config.json in a text editor/);
    assert.equal(await page.locator('#policy-json').textContent(), broken, 'the file as it is, not a guess');
    assert.equal(await page.locator('#policy-filesystem-allowWrite-add').count(), 0, 'nothing to edit');
    assert.equal(await page.locator('#save-policy').isDisabled(), true);
    const fixed = JSON.stringify({ filesystem: { denyRead: [], allowWrite: ['.'], denyWrite: [] }, network: { allowedDomains: [], deniedDomains: [] } });
    await page.evaluate((text) => window.__mock.emit('policy-file', { path: '/home/ana/projects/weather/sandbox-config.json', text }), fixed);
    await page.waitForSelector('#policy-filesystem-allowWrite-add');
    assert.equal(await page.locator('#policy-text-error').isHidden(), true);
    assert.equal(await page.inputValue('#policy-filesystem-allowWrite-0'), '.');
    await close();
  });

  it('a shipped profile opens read-only and can be saved as the workspace policy', async () => {
    const { page, close } = await app({ policy: { text: null } });
    await openTab(page);
    assert.match(await page.locator('#policy-read-only').textContent(), /no sandbox-config.json yet/);
    await page.selectOption('#policy-source', 'profile:kernel-allow-pypi');
    await page.waitForSelector('#save-as-workspace-policy:not([hidden])');
    assert.match(await page.locator('#policy-heading').textContent(), /kernel-allow-pypi.*read-only/);
    assert.equal(await page.locator('#policy-network-allowedDomains-add').count(), 0, 'no adding to a shipped profile');
    assert.equal(await page.locator('#policy-network-allowedDomains-0').getAttribute('readonly'), '');
    await page.click('#save-as-workspace-policy');
    await page.waitForSelector('#policy-network-allowedDomains-add');
    const [saved] = await calls(page, 'save_policy');
    assert.deepEqual(JSON.parse(saved.text).network.allowedDomains, ['pypi.org', 'files.pythonhosted.org']);
    assert.equal(await page.inputValue('#policy-source'), 'workspace');
    await close();
  });

  it('presets say in a sentence what code may read; an older policy is offered the stricter default, never changed silently', async () => {
    const old = { filesystem: { denyRead: ['.env', '~/.ssh', '~/data/private'], allowWrite: ['.'], denyWrite: [] }, network: { allowedDomains: [], deniedDomains: [] } };
    const { page, errors, close } = await app({ policy: { text: `${JSON.stringify(old, null, 2)}\n` } });
    await openTab(page);
    await page.waitForSelector('#policy-stricter:not([hidden])');
    assert.equal(await page.locator('#policy-preset-custom').isChecked(), true, 'a policy of its own is Custom');
    assert.match(await page.locator('#policy-preset-kernel-workspace-only-help').textContent(), /only this workspace, the Python environment and the system/);
    const offer = await page.locator('#policy-stricter').textContent();
    assert.match(offer, /~\/\.claude/, 'the agents’ data the old policy lets code read is named');
    assert.doesNotMatch(offer, /~\/\.ssh,/, 'what it already hides is not offered again');
    assert.equal(await page.locator('#save-policy').isDisabled(), true, 'nothing changed until the person chooses');
    await page.click('#policy-hide-too');
    await page.waitForSelector('#policy-stricter', { state: 'hidden' });
    const hidden = (await json(page)).filesystem.denyRead;
    assert.ok(hidden.includes('~/.claude') && hidden.includes('~/data/private'), 'added to, nothing of the person’s dropped');
    const words = await summary(page);
    assert.match(words[1], /~\/\.local\/share\/evolution/, 'the summary lists every hidden place (no “and N more”)');
    // Workspace only: the whole home hidden, the workspace readable again.
    await page.check('#policy-preset-kernel-workspace-only');
    assert.deepEqual((await json(page)).filesystem.allowRead, ['.']);
    assert.equal(await page.locator('#policy-stricter').isHidden(), true, 'nothing to offer when the home is hidden');
    // Would this be allowed? Asked of the policy as edited.
    await page.fill('#policy-check-query', '~/notes.txt');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#policy-check-result li');
    const [asked] = await calls(page, 'check_sandbox_access');
    assert.equal(asked.query, '~/notes.txt');
    assert.deepEqual(JSON.parse(asked.text).filesystem.allowRead, ['.'], 'the unsaved edit is what is checked');
    assert.match((await page.locator('#policy-check-result li').allTextContents())[0], /^Read ~\/notes\.txt: blocked — hidden \(filesystem\.denyRead: ~\)$/);
    assert.deepEqual(errors, []);
    await close();
  });

  it('Apply restarts under the new policy; a policy srt refuses is reported in words and the kernel stays', async () => {
    const { page, errors, close } = await app();
    await openTab(page);
    assert.match(await page.locator('#apply-note').textContent(), /variables, imports and running cells are lost/);
    // Too broad for srt: said under the entry, before anything is tried.
    await page.fill('#policy-network-allowedDomains-add', '*.com');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#policy-network-allowedDomains-0-message:not([hidden])');
    assert.match(await page.locator('#policy-network-allowedDomains-0-message').textContent(), /whole top-level domain, which the sandbox refuses/);
    // What only srt knows to refuse: reported in its words, and the kernel stays.
    await page.fill('#policy-network-allowedDomains-0', 'com');
    await page.waitForSelector('#policy-network-allowedDomains-0-message', { state: 'hidden' });
    await page.click('#apply-sandbox');
    await page.waitForSelector('#apply-error:not([hidden])');
    assert.match(await page.locator('#apply-error').textContent(), /^Not applied — the kernel keeps running as before\. srt refused this policy: network\.allowedDomains\.0: Invalid domain pattern/);
    assert.equal(await page.locator('#sandbox-policy-status').textContent(), 'Sandboxed: sandbox-config.json');

    // srt ran it, but the kernel could not start under it: undone by the backend, said so.
    await page.fill('#policy-network-allowedDomains-0', 'pypi.org');
    await page.fill('#policy-filesystem-denyRead-add', '/home/ana/.local/share/ipybox/venv');
    await page.keyboard.press('Enter');
    await page.click('#apply-sandbox');
    await page.waitForFunction(() => document.querySelector('#apply-error')?.textContent.startsWith('Not applied. the kernel could not start'));
    assert.equal(await page.locator('#sandbox-policy-status').textContent(), 'Sandboxed: sandbox-config.json', 'back under the previous choice');
    await page.selectOption('#policy-source', 'profile:kernel-allow-pypi');
    await page.waitForSelector('#save-as-workspace-policy:not([hidden])');
    await page.click('#apply-sandbox');
    await page.waitForFunction(() => document.querySelector('#apply-status')?.textContent.startsWith('Applied'));
    assert.equal(await page.locator('#sandbox-policy-status').textContent(), 'Sandboxed: kernel-allow-pypi');
    const applied = await calls(page, 'apply_sandbox');
    assert.deepEqual(applied.at(-1), { choice: { sandbox: true, policy: { kind: 'profile', name: 'kernel-allow-pypi' } } });

    await page.uncheck('#sandbox-on');
    await page.click('#apply-sandbox');
    await page.waitForSelector('#sandbox-badge[data-sandboxed="no"]');
    assert.equal(await page.locator('#sandbox-policy-status').textContent(), 'Not sandboxed');
    assert.deepEqual(errors, []);
    await close();
  });

  it('is reachable by keyboard: the tab list, then every control in order', async () => {
    const { page, close } = await app();
    await openTab(page);
    await page.focus('#side-tab-sandbox');
    await page.keyboard.press('Tab');
    const seen = [];
    for (let i = 0; i < 6; i++) {
      seen.push(await page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName));
      await page.keyboard.press('Tab');
    }
    assert.ok(seen.includes('sandbox-on') && seen.includes('policy-source') && seen.includes('apply-sandbox'), seen.join(', '));
    await close();
  });

  for (const colorScheme of ['light', 'dark']) {
    it(`every text reads against its background in ${colorScheme} mode (WCAG contrast)`, async () => {
      const { page, errors, close } = await app({}, { colorScheme });
      await openTab(page);
      // Every kind of text the tab shows at once: an entry's error, a weakening switch's
      // warning in the summary, the both-changed prompt, a refused Apply, the JSON.
      await page.fill('#policy-network-allowedDomains-add', 'https://pypi.org');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#policy-network-allowedDomains-0-message:not([hidden])');
      await page.check('#policy-flag-network-allowAllUnixSockets');
      await page.waitForSelector('#policy-summary li.policy-warn');
      const theirs = JSON.stringify({ filesystem: { denyRead: ['.env'], allowWrite: ['.', 'plots/'], denyWrite: [] }, network: { allowedDomains: [], deniedDomains: [] } });
      await page.evaluate((text) => window.__mock.emit('policy-file', { path: '/home/ana/projects/weather/sandbox-config.json', text }), theirs);
      await page.waitForSelector('#policy-conflict:not([hidden])');
      for (const shown of ['#policy-summary li.policy-warn', '#policy-conflict', '#policy-network-allowedDomains-0-message', '#apply-note', '#policy-json', '#policy-flag-network-allowAllUnixSockets-help']) {
        assert.equal(await page.locator(shown).isVisible(), true, `${shown} is on screen to be checked`);
      }
      let offenders = await contrastOffenders(page, '#side-panel-sandbox');
      assert.deepEqual(offenders, [], `too little contrast in ${colorScheme} mode:\n${offenders.join('\n')}`);
      await page.click('#policy-keep-mine');
      await page.fill('#policy-network-allowedDomains-0', 'com');
      await page.click('#apply-sandbox');
      await page.waitForSelector('#apply-error:not([hidden])');
      offenders = await contrastOffenders(page, '#side-panel-sandbox');
      assert.deepEqual(offenders, [], `too little contrast in ${colorScheme} mode, Apply refused:\n${offenders.join('\n')}`);
      // A shipped profile: read-only entries and the note that says so.
      await page.selectOption('#policy-source', 'profile:kernel-allow-pypi');
      await page.waitForSelector('#save-as-workspace-policy:not([hidden])');
      offenders = await contrastOffenders(page, '#side-panel-sandbox');
      assert.deepEqual(offenders, [], `too little contrast in ${colorScheme} mode, read-only:\n${offenders.join('\n')}`);
      assert.deepEqual(errors, []);
      await close();
    });
  }

  it('Tab reaches every control of the tab, in order, each named for a screen reader (the both-changed prompt too)', async () => {
    const { page, close } = await app();
    await openTab(page);
    await page.fill('#policy-network-allowedDomains-add', 'pypi.org');
    await page.keyboard.press('Enter');
    const theirs = JSON.stringify({ filesystem: { denyRead: ['.env'], allowWrite: ['.', 'plots/'], denyWrite: [] }, network: { allowedDomains: [], deniedDomains: [] } });
    await page.evaluate((text) => window.__mock.emit('policy-file', { path: '/home/ana/projects/weather/sandbox-config.json', text }), theirs);
    await page.waitForSelector('#policy-conflict:not([hidden])');
    const { stops, missed } = await tabWalk(page, '#side-panel-sandbox', '#side-tab-sandbox');
    const ids = stops.map((s) => s.id);
    assert.deepEqual(missed, [], `controls Tab never reaches: ${missed.join(', ')}`);
    const unnamed = stops.filter((s) => s.name === '');
    assert.deepEqual(unnamed, [], `controls with no accessible name: ${unnamed.map((s) => s.id).join(', ')}`);
    // A name said alone must tell the controls apart: five buttons all called “Add” do not.
    const seen = new Map();
    for (const s of stops) seen.set(`${s.role} “${s.name}”`, [...(seen.get(`${s.role} “${s.name}”`) ?? []), s.id]);
    const twice = [...seen].filter(([, at]) => at.length > 1).map(([name, at]) => `${name}: ${at.join(', ')}`);
    assert.deepEqual(twice, [], `controls a screen reader cannot tell apart:\n${twice.join('\n')}`);
    // Options srt ignores here (macOS-only ones, none set) are folded away: not in the walk.
    const flags = await page.locator('#side-panel-sandbox input[type=checkbox][id^="policy-flag-"]:not(#policy-mac-only input)').evaluateAll((els) => els.map((e) => `#${e.id}`));
    assert.ok(flags.length >= 4, `the flag switches are there (${flags.length})`);
    const expected = ['#sandbox-on', '#policy-source', '#apply-sandbox', '#policy-load-theirs', '#policy-keep-mine', '#policy-json', '#policy-filesystem-allowWrite-0', '#policy-filesystem-allowWrite-add', '#policy-filesystem-allowWrite-add-button', '#policy-filesystem-allowWrite-pick-folder', '#policy-filesystem-allowWrite-pick-file', '#policy-network-allowedDomains-0', ...flags, '#save-policy', '#revert-policy'];
    for (const id of expected) assert.ok(ids.includes(id), `Tab reaches ${id}; it stopped at: ${ids.join(', ')}`);
    const order = expected.filter((id) => id !== '#policy-json' && !flags.includes(id)).map((id) => ids.indexOf(id));
    assert.ok(order.slice(1).every((at, i) => at > order[i]), `in reading order: ${ids.join(', ')}`);
    await close();
  });
});

describe('what differs from the preset, the grants that matter, one action to save and restart', () => {
  it('marks each entry and switch that differs from the preset, with a reset per list, for the switches and for all', async () => {
    const { page, errors, close } = await app();
    await openTab(page);
    await page.waitForSelector('#policy-preset-kernel:checked');
    assert.equal(await page.locator('#policy-changes').isHidden(), true, 'the preset itself: nothing to mark');
    assert.equal(await page.locator('#policy-view .policy-changed').count(), 0);

    await page.fill('#policy-filesystem-allowWrite-add', 'out/');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#policy-filesystem-allowWrite-1');
    const added = page.locator('#policy-filesystem-allowWrite li.policy-changed');
    assert.equal(await added.count(), 1, 'the new entry is marked, the preset’s “.” is not');
    assert.equal(await added.locator('.policy-tag-changed').textContent(), 'added');
    assert.equal(await page.locator('#policy-filesystem-allowWrite-1').getAttribute('aria-describedby'), 'policy-filesystem-allowWrite-1-message policy-filesystem-allowWrite-1-tag', 'said to screen readers too');
    assert.equal(await page.locator('#policy-changes').textContent(), '1 change from “My files, no secrets”, marked below. Reset to “My files, no secrets”');
    // A hidden place dropped: named under its list, as the preset has it.
    await page.click('button[aria-label="Remove ~/.claude from Hidden"]');
    assert.equal(await page.locator('#policy-filesystem-denyRead-changes').textContent(), 'Not here, but in “My files, no secrets”: ~/.claude');
    assert.match(await page.locator('#policy-changes').textContent(), /^2 changes from “My files, no secrets”/);
    await page.check('#policy-flag-network-allowAllUnixSockets');
    assert.equal(await page.locator('#policy-flag-network-allowAllUnixSockets ~ .policy-tag-changed').isVisible(), true);
    assert.equal(await page.locator('#policy-network-allowedDomains-reset').isHidden(), true, 'a list as the preset has it offers no reset');

    await page.click('#policy-filesystem-allowWrite-reset');
    assert.deepEqual((await json(page)).filesystem.allowWrite, ['.'], 'that list as the preset has it');
    assert.equal((await json(page)).filesystem.denyRead.includes('~/.claude'), false, 'the other list is kept as edited');
    await page.click('#policy-flags-reset');
    assert.equal('allowAllUnixSockets' in (await json(page)).network, false);
    assert.equal(await page.locator('#policy-flags-reset').isHidden(), true);
    await page.click('#policy-reset-all');
    await page.waitForSelector('#policy-changes', { state: 'hidden' });
    assert.equal(await page.locator('#policy-preset-kernel').isChecked(), true, 'the preset again');
    assert.equal(await page.locator('#save-policy').isDisabled(), true, 'the file as it was: nothing to save');
    assert.deepEqual(errors, []);
    await close();
  });

  it('warns only for the grants that matter, each saying what it lets code do', async () => {
    const { page, errors, close } = await app();
    await openTab(page);
    assert.equal(await page.locator('#policy-warnings').isHidden(), true, 'the default grants nothing that matters');
    await page.check('#policy-flag-filesystem-allowGitConfig');
    await page.fill('#policy-filesystem-allowWrite-add', 'data/');
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('#policy-warnings').isHidden(), true, 'a folder of data, or a switch that explains itself, is no warning');
    assert.equal(await page.locator('#policy-summary li.policy-warn').count(), 0);

    await page.fill('#policy-filesystem-allowWrite-add', '~/.config');
    await page.keyboard.press('Enter');
    await page.fill('#policy-network-allowedDomains-add', '*.github.com');
    await page.keyboard.press('Enter');
    await page.click('button[aria-label="Remove ~/.ssh from Hidden"]');
    const warnings = await page.locator('#policy-warnings li').allTextContents();
    assert.equal(warnings.length, 3, warnings.join('\n'));
    assert.match(warnings[0], /^Warning: Writing ~\/\.config: code may change ~\/\.config\/autostart, .*which run outside the sandbox when you log in or open a terminal/);
    assert.equal(warnings[1], 'Warning: Reading secrets: code may read ~/.ssh (SSH keys), and send them wherever it can reach, an agent’s conversation included.');
    assert.match(warnings[2], /^Warning: Reaching \*\.github\.com: code may reach every server under github\.com/);
    // Beside the entry too.
    assert.match(await page.locator('#policy-filesystem-allowWrite-2-message').textContent(), /^Weakens the sandbox: Writing ~\/\.config: /);
    assert.deepEqual(await page.locator('#policy-summary li.policy-warn').evaluateAll((els) => els.map((e) => e.className.split(' ')[1])), ['policy-write', 'policy-read', 'policy-network']);
    assert.deepEqual(errors, []);
    await close();
  });

  it('flags in red an entry the engine finds opens a way out of the sandbox, and still saves what the person typed (#45)', async () => {
    const message = 'Writing ~/.config/autostart: code written there (~/.config/autostart) would run outside the sandbox later: when you log in, open a terminal or start a program.';
    const { page, errors, close } = await app({ policy: { dangers: { '~/.config/autostart': message } } });
    await openTab(page);
    await page.fill('#policy-filesystem-allowWrite-add', '~/.config/autostart');
    await page.keyboard.press('Enter');
    const beside = page.locator('#policy-filesystem-allowWrite-1-message.field-danger');
    await beside.waitFor();
    assert.equal(await beside.textContent(), `Dangerous: ${message}`, 'beside the entry, the engine\'s words');
    assert.equal(await page.locator('#policy-filesystem-allowWrite-1').getAttribute('aria-invalid'), 'false', 'not an error: it can be saved');
    const listed = page.locator('#policy-warnings li.policy-danger');
    assert.equal(await listed.count(), 1, 'and first among the grants worth a second look');
    assert.equal(await listed.textContent(), `Dangerous: ${message}`);
    assert.equal(await page.locator('#policy-warnings li').first().textContent(), `Dangerous: ${message}`);
    const red = await page.evaluate(() => {
      const probe = document.createElement('span');
      probe.style.color = 'var(--danger)';
      document.body.append(probe);
      const danger = getComputedStyle(probe).color;
      probe.remove();
      const of = (sel) => getComputedStyle(document.querySelector(sel)).borderLeftColor;
      return { danger, beside: of('#policy-filesystem-allowWrite-1-message'), listed: of('#policy-warnings li.policy-danger') };
    });
    assert.equal(red.beside, red.danger, 'red beside the entry');
    assert.equal(red.listed, red.danger, 'red in the list');
    // A person may still mean it: saved as typed.
    assert.equal(await page.locator('#save-policy').isDisabled(), false);
    await page.click('#save-policy');
    await page.waitForFunction(() => document.querySelector('#save-policy-status')?.textContent.startsWith('Saved'));
    const [saved] = await calls(page, 'save_policy');
    assert.deepEqual(JSON.parse(saved.text).filesystem.allowWrite, ['.', '~/.config/autostart']);
    assert.deepEqual(errors, []);
    await close();
  });

  it('saves and restarts the kernel in one action; saving alone is said so', async () => {
    const { page, errors, close } = await app();
    await openTab(page);
    assert.equal(await page.locator('#save-policy').textContent(), 'Save and restart the kernel');
    await page.fill('#policy-filesystem-allowWrite-add', 'out/');
    await page.keyboard.press('Enter');
    await page.click('#save-policy-later');
    await page.waitForFunction(() => document.querySelector('#save-policy-status')?.textContent.startsWith('Saved.'));
    assert.equal(await page.locator('#save-policy-status').textContent(), 'Saved. The kernel keeps the policy it started with until it restarts (Apply).');
    assert.equal((await calls(page, 'apply_sandbox')).length, 0, 'not restarted');

    await page.fill('#policy-filesystem-allowWrite-add', 'plots/');
    await page.keyboard.press('Enter');
    await page.click('#save-policy');
    await page.waitForFunction(() => document.querySelector('#save-policy-status')?.textContent.startsWith('Saved, and'));
    assert.equal(await page.locator('#save-policy-status').textContent(), 'Saved, and the kernel restarted in the sandbox under sandbox-config.json.');
    assert.deepEqual(JSON.parse((await calls(page, 'save_policy')).at(-1).text).filesystem.allowWrite, ['.', 'out/', 'plots/']);
    assert.deepEqual(await calls(page, 'apply_sandbox'), [{ choice: { sandbox: true, policy: { kind: 'workspace' } } }]);

    // With the sandbox off, saving restarts nothing under this policy: just "Save".
    await page.uncheck('#sandbox-on');
    assert.equal(await page.locator('#save-policy').textContent(), 'Save');
    assert.equal(await page.locator('#save-policy-later').isHidden(), true);
    assert.deepEqual(errors, []);
    await close();
  });

  it('folds away the options srt ignores here, and shows one the file sets', async () => {
    const set = { filesystem: { denyRead: ['.env'], allowWrite: ['.'], denyWrite: [] }, network: { allowedDomains: [], deniedDomains: [], allowLocalBinding: true } };
    const { page, close } = await app({ policy: { text: `${JSON.stringify(set, null, 2)}\n` } });
    await openTab(page);
    const folded = page.locator('#policy-mac-only');
    assert.equal(await folded.getAttribute('open'), null, 'folded');
    assert.match(await folded.locator('summary').textContent(), /^Options only macOS uses \(3\): srt ignores them on this computer$/);
    assert.equal(await folded.locator('#policy-network-allowUnixSockets').count(), 1);
    assert.equal(await folded.locator('#policy-flag-allowPty').count(), 1);
    assert.equal(await folded.locator('#policy-flag-network-allowLocalBinding').count(), 0, 'set in the file: shown, not folded');
    assert.equal(await page.locator('#policy-flag-network-allowLocalBinding').isChecked(), true);
    assert.equal(await page.locator('#policy-flag-network-allowLocalBinding').isVisible(), true);
    await folded.locator('summary').click();
    assert.equal(await page.locator('#policy-flag-allowPty').isVisible(), true, 'open on request');
    await close();
  });
});
