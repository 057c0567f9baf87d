// The Sandbox tab in the real app under Xvfb, with the real srt: the sandbox switched on for a
// workspace, its policy edited (allowWrite gains out/), saved and applied, and a cell that could
// not write out/x now can, while writing elsewhere — and the policy file itself — still fails;
// an outside edit of the policy file shows in the editor within a second; a policy srt refuses
// is reported in words and the kernel keeps running, its variables intact; a cell blocked
// writing a folder, or refused a domain by srt's proxy, offers the change, asked natively; a cell
// that crafts an error naming ~/.config/autostart is shown blocked, with nothing offered.
// Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { App, Keys, ROOT, SHOTS, answerDialog, answerDialogSoon, cell, notebook, quitAll, settled, workspace } from './webdriver.mjs';

const apps = [];
afterEach((t) => quitAll(apps, t));

/** Keep a screenshot for the docs with IPYBOX_UPDATE_SCREENSHOTS=1. */
function forDocs(shot, name) {
  if (process.env.IPYBOX_UPDATE_SCREENSHOTS === '1') copyFileSync(shot, join(ROOT, 'docs/images', name));
}

const POLICY = {
  filesystem: { denyRead: ['.env', '**/.env', '~/.ssh'], allowWrite: [], denyWrite: [] },
  network: { allowedDomains: [], deniedDomains: [] },
};

const tryWrites = [
  'for p in ["out/x", "elsewhere.txt", "sandbox-config.json"]:',
  '    try:',
  '        with open(p, "a") as f:',
  '            f.write("x")',
  '        print("wrote", p)',
  '    except OSError as e:',
  '        print("cannot write", p, "-", e.strerror)',
].join('\n');

async function open(dir) {
  const app = await App.launch(['open', join(dir, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  return app;
}

const badge = (app) => app.text('#sandbox-policy-status');

async function openSandboxTab(app) {
  await app.until('the sandbox badge', () => app.execute('return document.querySelector("#sandbox-badge")?.dataset.sandboxed !== "unknown";'));
  await app.click('#sandbox-badge');
  await app.until('the policy editor', () => app.execute('return !!document.querySelector("#policy-filesystem-allowWrite-add");'));
}

const ACCEPT = 'Use this sandbox policy?';

/** Apply, then wait for the kernel the new session starts. `accept`: the workspace's policy
 *  is new or changed, so Apply asks natively first, and the person accepts it. */
async function apply(app, { accept = false } = {}) {
  const t0 = Date.now();
  await app.click('#apply-sandbox');
  if (accept) answerDialog(ACCEPT, 'alt+u', 30);
  const outcome = await app.until('Apply to finish', () => app.execute(
    `const err = document.querySelector('#apply-error');
     if (err && !err.hidden) return 'error: ' + err.textContent;
     const s = document.querySelector('#apply-status')?.textContent ?? '';
     return s.startsWith('Applied') ? s : null;`), 60000);
  if (outcome.startsWith('Applied')) {
    await app.until('the new kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
    process.stdout.write(`# Apply to a kernel ready under the new policy: ${Date.now() - t0} ms\n`);
  }
  return outcome;
}

async function typeInto(app, css, text) {
  await app.execute('document.querySelector(arguments[0])?.scrollIntoView({ block: "center", inline: "nearest" });', css);
  // The side panel slides in and the editor lays out under load: a click that lands on
  // something still moving over the field is tried again once it has settled.
  for (let attempt = 0; ; attempt++) {
    try {
      await app.click(css);
      break;
    } catch (e) {
      if (attempt >= 20 || !/intercepted/.test(String(e?.message ?? e))) throw e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  await app.type(text);
}

test('add allowWrite out/, save, apply: the cell that could not write out/x now can; elsewhere and the policy file stay read-only', async () => {
  const dir = workspace({ 'test.ipynb': notebook(tryWrites, tryWrites), 'sandbox-config.json': POLICY, 'out/.keep': '' });
  const app = await open(dir);
  await openSandboxTab(app);
  assert.equal(await badge(app), 'Not sandboxed', 'a workspace starts unsandboxed unless chosen');

  // Switch the sandbox on for this workspace, under its own policy (writes nowhere).
  await app.click('#sandbox-on');
  const first = await apply(app, { accept: true });
  assert.equal(first, 'Applied: the kernel restarted in the sandbox under sandbox-config.json.');
  assert.equal(await badge(app), 'Sandboxed: sandbox-config.json');
  await app.click('#run-cell');
  const before = await settled(app, 0);
  assert.match(before.output, /cannot write out\/x - Read-only file system/, before.output);
  assert.match(before.output, /cannot write elsewhere\.txt/);
  assert.match(before.output, /cannot write sandbox-config\.json/, 'kernel code cannot change the policy');

  // Edit: allowWrite gains out/; the words say so; Save writes the file.
  await typeInto(app, '#policy-filesystem-allowWrite-add', 'out/');
  await app.press(Keys.Enter);
  await app.until('the new entry', () => app.execute('return document.querySelector("#policy-filesystem-allowWrite-0")?.value === "out/";'));
  assert.equal(await app.text('#policy-summary li'), 'Code may write in: out/.');
  // Saved for later (the one action, save and restart, is the button beside it).
  await app.click('#save-policy-later');
  await app.until('the save', () => app.execute('return (document.querySelector("#save-policy-status")?.textContent ?? "").startsWith("Saved");'));
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'sandbox-config.json'), 'utf8')).filesystem.allowWrite, ['out/']);
  // Saved, the notebook's status is short enough for the toolbar at 1280 px.
  await app.click('#save');
  await app.until('the notebook saved', () => app.execute('return document.body.dataset.dirty !== "true";'));
  await app.execute('document.querySelector("#policy-heading").scrollIntoView({ block: "start", inline: "nearest" }); document.scrollingElement.scrollLeft = 0;');
  const shot = await app.screenshot('sandbox-policy-editor');
  forDocs(shot, 'sandbox-policy-editor.png');

  const second = await apply(app, { accept: true });
  assert.equal(second, 'Applied: the kernel restarted in the sandbox under sandbox-config.json.');
  await app.click('#run-cell');
  const after = await settled(app, 1);
  assert.match(after.output, /wrote out\/x/, after.output);
  assert.match(after.output, /cannot write elsewhere\.txt - Read-only file system/);
  assert.match(after.output, /cannot write sandbox-config\.json/);
  assert.equal(readFileSync(join(dir, 'out/x'), 'utf8'), 'x');
  assert.ok(!existsSync(join(dir, 'elsewhere.txt')));
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'sandbox-config.json'), 'utf8')).filesystem.allowWrite, ['out/'], 'the policy file is untouched');
  // The choice is kept out of the workspace.
  assert.deepEqual(readdirSync(dir).filter((n) => n.includes('desktop')), []);
});

test('an outside edit shows within a second; a policy srt refuses is reported in words and the kernel keeps its state', async () => {
  const dir = workspace({ 'test.ipynb': notebook('x = 41', 'print(x + 1)'), 'sandbox-config.json': POLICY });
  const app = await open(dir);
  await app.click('#run-cell');
  await settled(app, 0);
  await openSandboxTab(app);

  const edited = { ...POLICY, filesystem: { ...POLICY.filesystem, allowWrite: ['.', 'results/'] } };
  const t0 = Date.now();
  writeFileSync(join(dir, 'sandbox-config.json'), JSON.stringify(edited, null, 2));
  await app.until('the outside edit in the editor', () => app.execute('return document.querySelector("#policy-filesystem-allowWrite-1")?.value === "results/";'), 5000);
  const ms = Date.now() - t0;
  process.stdout.write(`# outside edit shown in the editor after ${ms} ms\n`);
  assert.ok(ms < 1000, `shown after ${ms} ms`);

  // The bare domain "com" passes ipybox's checks; srt refuses it.
  await typeInto(app, '#policy-network-allowedDomains-add', 'com');
  await app.press(Keys.Enter);
  await app.click('#sandbox-on');
  const outcome = await apply(app, { accept: true });
  assert.match(outcome, /^error: Not applied — the kernel keeps running as before\. srt refused this policy: network\.allowedDomains\.0: Invalid domain pattern/, outcome);
  assert.equal(await badge(app), 'Not sandboxed');
  await app.click('#run-cell');
  const kept = await settled(app, 1);
  assert.match(kept.output, /^42/, 'the old kernel kept its variables');
});

test('a policy srt runs but the kernel cannot live under (its Python hidden) is undone: the kernel starts again as before', async () => {
  const home = process.env.IPYBOX_HOME ?? join(process.env.HOME, '.local', 'share', 'ipybox');
  const dir = workspace({ 'test.ipynb': notebook('print(1 + 1)'), 'sandbox-config.json': POLICY });
  const app = await open(dir);
  await openSandboxTab(app);
  await typeInto(app, '#policy-filesystem-denyRead-add', join(home, 'venv'));
  await app.press(Keys.Enter);
  await app.click('#sandbox-on');
  const t0 = Date.now();
  const outcome = await apply(app, { accept: true });
  process.stdout.write(`# a kernel that cannot start, undone after ${Date.now() - t0} ms\n`);
  assert.match(outcome, /^error: Not applied\. the kernel could not start under this policy, so it was started again as before/, outcome);
  await app.until('the badge back to the previous choice', async () => (await badge(app)) === 'Not sandboxed');
  await app.until('the kernel started again', async () => (await app.kernelStatus()) === 'idle', 60000);
  await app.click('#run-cell');
  const ran = await settled(app, 0);
  assert.match(ran.output, /^2/, 'a kernel runs, under the previous choice');
});

test('a workspace policy nobody accepted is asked about natively; declined, nothing runs under it; turning the sandbox off asks too', async () => {
  const dir = workspace({ 'test.ipynb': notebook('print("hi")'), 'sandbox-config.json': POLICY });
  let app = await open(dir);
  await openSandboxTab(app);
  await app.click('#sandbox-on');
  // Declined: not applied, the kernel stays where it was.
  await app.click('#apply-sandbox');
  spawnSync('timeout', ['30', 'xdotool', 'search', '--sync', '--name', `^${ACCEPT.replace('?', '\\?')}$`]);
  await new Promise((r) => setTimeout(r, 300));
  const shot = join(SHOTS, 'policy-accept-dialog.png');
  spawnSync('import', ['-window', 'root', shot]);
  forDocs(shot, 'policy-accept-dialog.png');
  answerDialog(ACCEPT, 'Escape', 30);
  const declined = await app.until('Apply to finish', () => app.execute(
    `const err = document.querySelector('#apply-error');
     return err && !err.hidden ? err.textContent : null;`), 30000);
  assert.match(declined, /was not accepted/, declined);
  assert.equal(await badge(app), 'Not sandboxed');
  // Accepted: in force.
  assert.equal(await apply(app, { accept: true }), 'Applied: the kernel restarted in the sandbox under sandbox-config.json.');
  await app.quit();
  apps.pop();

  // Changed outside the app (a git pull, a kernel that was not sandboxed): opening the
  // workspace shows the difference natively before any kernel runs under it.
  writeFileSync(join(dir, 'sandbox-config.json'), JSON.stringify({ ...POLICY, filesystem: { ...POLICY.filesystem, allowWrite: ['/'] } }, null, 2));
  const launched = App.launch(['open', join(dir, 'test.ipynb')]);
  await answerDialogSoon(ACCEPT, 'Escape', 60);
  app = await launched;
  apps.push(app);
  await app.ready();
  const failed = await app.until('the start-up error', () => app.execute('const e = document.querySelector("#startup-error, .startup-error"); return e && !e.hidden && e.textContent.includes("was not accepted") ? e.textContent : null;'), 30000);
  assert.match(failed, /sandbox-config\.json was not accepted/);

  // Turning the sandbox off asks natively; kept on when the person says so.
  await openSandboxTab(app);
  await app.click('#sandbox-on'); // now off
  await app.click('#apply-sandbox');
  answerDialog('Turn the sandbox off?', 'Escape', 30);
  const kept = await app.until('Apply to finish', () => app.execute(
    `const err = document.querySelector('#apply-error');
     return err && !err.hidden ? err.textContent : null;`), 30000);
  assert.match(kept, /kept the sandbox on/, kept);
  await app.click('#apply-sandbox');
  answerDialog('Turn the sandbox off?', 'alt+t', 30);
  await app.until('the kernel unsandboxed', async () => (await badge(app)) === 'Not sandboxed' && (await app.kernelStatus()) === 'idle', 60000);
});

test('a cell blocked writing a folder offers to allow it; confirmed natively, the policy gains that one entry and the cell run again writes', async () => {
  const POLICY_WS = { ...POLICY, filesystem: { ...POLICY.filesystem, allowWrite: ['.'] } };
  const out = mkdtempSync(join(tmpdir(), 'ipybox-e2e-out-'));
  const write = `with open(${JSON.stringify(join(out, 'report.csv'))}, "w") as f:\n    f.write("a,b\\n")\nprint("wrote the report")`;
  const dir = workspace({ 'test.ipynb': notebook(write), 'sandbox-config.json': POLICY_WS });
  const app = await open(dir);
  await openSandboxTab(app);
  await app.click('#sandbox-on');
  assert.equal(await apply(app, { accept: true }), 'Applied: the kernel restarted in the sandbox under sandbox-config.json.');
  const before = readFileSync(join(dir, 'sandbox-config.json'), 'utf8');

  // From the error painted in the cell to the offer painted under it, in the page.
  await app.execute(`
    const cell = document.querySelectorAll('.cell')[0];
    const times = window.__blockTimes = {};
    new MutationObserver(() => {
      const t = performance.now();
      // (not "error": WebDriver reads a result with that key as its own failure)
      if (times.failed === undefined && cell.querySelector('.output[data-output-type="error"]')) times.failed = t;
      const offer = cell.querySelector('.sandbox-block');
      if (times.offer === undefined && offer && !offer.hidden) {
        times.offer = t;
        requestAnimationFrame(() => { times.painted = performance.now(); });
      }
    }).observe(cell, { subtree: true, childList: true, attributes: true });
    return true;`);
  await app.click('#run-cell');
  const failed = await settled(app, 0);
  assert.equal(failed.state, 'failed', failed.output);
  assert.match(failed.output, /Read-only file system/);
  const times = await app.until('the offer painted', () => app.execute('const t = window.__blockTimes; return t.painted !== undefined && t.failed !== undefined ? t : null;'), 10000);
  const ms = Math.round(times.painted - times.failed);
  process.stdout.write(`# block → suggestion painted: ${ms} ms after the cell's error\n`);
  assert.ok(ms <= 200, `the offer came ${ms} ms after the error`);
  assert.equal(await app.text('.cell .sandbox-block-line'), `The sandbox blocked writing ${join(out, 'report.csv')}`);
  assert.equal(await app.execute('return document.querySelector(".cell .sandbox-block-entry").value;'), out, 'the narrowest folder that covers the file');
  assert.equal(readFileSync(join(dir, 'sandbox-config.json'), 'utf8'), before, 'nothing changes before the person decides');
  await app.execute('document.querySelector(".cell .sandbox-block").scrollIntoView({ block: "center" });');
  await app.screenshot('sandbox-block-offer');

  // "Allow writing": a native question with the change in it, answered with a real key.
  const title = `Allow writing ${out}?`;
  await app.click('.cell .sandbox-block-allow');
  spawnSync('timeout', ['30', 'xdotool', 'search', '--sync', '--onlyvisible', '--name', `^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`]);
  await new Promise((r) => setTimeout(r, 300));
  spawnSync('import', ['-window', 'root', join(SHOTS, 'sandbox-block-dialog.png')]);
  answerDialog(title, 'alt+a', 30);
  await app.until('allowed', () => app.execute('return (document.querySelector(".cell .sandbox-block-status")?.textContent ?? "").startsWith("Allowed; the kernel restarted.");'), 60000);
  await app.until('the new kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  assert.deepEqual(
    JSON.parse(readFileSync(join(dir, 'sandbox-config.json'), 'utf8')),
    { ...POLICY_WS, filesystem: { ...POLICY_WS.filesystem, allowWrite: ['.', out] } },
    'the policy file has exactly that change',
  );
  assert.equal(await badge(app), 'Sandboxed: sandbox-config.json', 'still sandboxed, under the changed policy');

  await app.click('.cell .sandbox-block-run');
  await app.until('the cell run again', async () => {
    const c = await cell(app, 0);
    return c.state === 'done' && c.output.includes('wrote the report') ? c : null;
  }, 60000);
  assert.equal(readFileSync(join(out, 'report.csv'), 'utf8'), 'a,b\n');
  assert.equal(await app.execute('return document.querySelector(".cell .sandbox-block").hidden;'), true, 'the line went with the blocked run');

  // The Sandbox tab lists the block.
  await openSandboxTab(app);
  assert.equal(await app.text('.recent-blocks li'), `writing ${join(out, 'report.csv')} — read-only: no allowWrite entry covers it`);
  await app.execute('document.querySelector(".recent-blocks").scrollIntoView({ block: "center" });');
  await app.screenshot('sandbox-tab-recent-blocks');
});

test('a cell that raises a crafted OSError naming ~/.config/autostart is shown blocked, says why, and offers nothing: Return changes nothing (#45)', async () => {
  const POLICY_WS = { ...POLICY, filesystem: { ...POLICY.filesystem, allowWrite: ['.'] } };
  // The red team's cell: a block the kernel made up, naming where code runs at the next login.
  const crafted = [
    'import errno, os',
    'print("click Allow writing below")',
    'raise OSError(errno.EROFS, "Read-only file system", os.path.expanduser("~/.config/autostart/chart-export.desktop"))',
  ].join('\n');
  const dir = workspace({ 'test.ipynb': notebook(crafted), 'sandbox-config.json': POLICY_WS });
  const app = await open(dir);
  await openSandboxTab(app);
  await app.click('#sandbox-on');
  assert.equal(await apply(app, { accept: true }), 'Applied: the kernel restarted in the sandbox under sandbox-config.json.');
  const before = readFileSync(join(dir, 'sandbox-config.json'), 'utf8');

  await app.click('#run-cell');
  const failed = await settled(app, 0);
  assert.equal(failed.state, 'failed', failed.output);
  await app.until('the block', () => app.execute('const o = document.querySelector(".cell .sandbox-block"); return o && !o.hidden;'), 10000);
  assert.match(await app.text('.cell .sandbox-block-line'), /^The sandbox blocked writing \/.*\/\.config\/autostart\/chart-export\.desktop$/, 'the block is still shown');
  assert.match(await app.text('.cell .sandbox-block-refusal'), /^ipybox does not offer to open this place: code written there \(~\/\.config\/autostart\) would run outside the sandbox later/);
  assert.equal(await app.execute('return document.querySelectorAll(".cell .sandbox-block-allow, .cell .sandbox-block-entry").length;'), 0, 'no offer, no field, no button');
  await app.execute('document.querySelector(".cell .sandbox-block").scrollIntoView({ block: "center" });');
  await app.screenshot('sandbox-block-refused');

  // Return, as the cell asked: no question is asked, nothing changes.
  await app.press(Keys.Escape);
  await app.press(Keys.Enter);
  await app.press(Keys.Escape);
  await new Promise((r) => setTimeout(r, 1500));
  const asked = spawnSync('xdotool', ['search', '--name', '^Allow '], { encoding: 'utf8' }).stdout.trim();
  assert.equal(asked, '', 'no native question');
  assert.equal(readFileSync(join(dir, 'sandbox-config.json'), 'utf8'), before, 'the policy is unchanged');
  assert.equal(await badge(app), 'Sandboxed: sandbox-config.json');
});

test('a cell refused a domain offers to allow exactly that host; confirmed natively, the policy gains that one allowedDomains entry and the cell run again reaches it', async () => {
  const POLICY_WS = { ...POLICY, filesystem: { ...POLICY.filesystem, allowWrite: ['.'] } };
  // A local web server, reached through srt's proxy once its allow list names it.
  const server = createServer((_, res) => res.end('hello through the proxy'));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    const target = `localhost:${server.address().port}`;
    const fetch = [
      'import os, urllib.request',
      '# srt sends localhost direct, into the sandbox\'s own loopback; go through its proxy.',
      'os.environ.pop("NO_PROXY", None); os.environ.pop("no_proxy", None)',
      `print(urllib.request.urlopen("http://${target}/", timeout=10).read().decode())`,
    ].join('\n');
    const dir = workspace({ 'test.ipynb': notebook(fetch), 'sandbox-config.json': POLICY_WS });
    const app = await open(dir);
    await openSandboxTab(app);
    await app.click('#sandbox-on');
    assert.equal(await apply(app, { accept: true }), 'Applied: the kernel restarted in the sandbox under sandbox-config.json.');
    const before = readFileSync(join(dir, 'sandbox-config.json'), 'utf8');

    await app.click('#run-cell');
    const failed = await settled(app, 0);
    assert.equal(failed.state, 'failed', failed.output);
    await app.until('the offer', () => app.execute('const o = document.querySelector(".cell .sandbox-block"); return o && !o.hidden;'), 10000);
    assert.equal(await app.text('.cell .sandbox-block-line'), `The sandbox blocked connecting to ${target}`);
    assert.equal(await app.execute('return document.querySelector(".cell .sandbox-block-entry").value;'), target, 'the exact host and port, not a wildcard');
    assert.equal(await app.text('.cell .sandbox-block-allow'), `Allow ${target}`);
    assert.equal(readFileSync(join(dir, 'sandbox-config.json'), 'utf8'), before, 'nothing changes before the person decides');

    const title = `Allow connecting to ${target}?`;
    await app.execute('document.querySelector(".cell .sandbox-block").scrollIntoView({ block: "center" });');
    await app.screenshot('sandbox-netblock-offer');
    await app.click('.cell .sandbox-block-allow');
    spawnSync('timeout', ['30', 'xdotool', 'search', '--sync', '--onlyvisible', '--name', `^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`]);
    await new Promise((r) => setTimeout(r, 300));
    spawnSync('import', ['-window', 'root', join(SHOTS, 'sandbox-netblock-dialog.png')]);
    answerDialog(title, 'alt+a', 30);
    await app.until('allowed', () => app.execute('return (document.querySelector(".cell .sandbox-block-status")?.textContent ?? "").startsWith("Allowed; the kernel restarted.");'), 60000);
    await app.until('the new kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
    assert.deepEqual(
      JSON.parse(readFileSync(join(dir, 'sandbox-config.json'), 'utf8')),
      { ...POLICY_WS, network: { ...POLICY_WS.network, allowedDomains: [target] } },
      'the policy file has exactly that allowedDomains entry',
    );
    assert.equal(await badge(app), 'Sandboxed: sandbox-config.json', 'still sandboxed, under the changed policy');

    await app.click('.cell .sandbox-block-run');
    await app.until('the cell run again', async () => {
      const c = await cell(app, 0);
      return c.state === 'done' && c.output.includes('hello through the proxy') ? c : null;
    }, 60000);

    await openSandboxTab(app);
    assert.equal(await app.text('.recent-blocks li'), `connecting to ${target} — localhost is not on the allow list (network.allowedDomains)`);
  } finally {
    server.close();
  }
});
