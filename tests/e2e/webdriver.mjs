// A small W3C WebDriver client for tauri-driver (Node's fetch, no dependencies), and the
// helpers the app's end-to-end tests share: launch the real app on a workspace, find and
// wait for elements, press keys, take screenshots.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const DRIVER = process.env.WEBDRIVER_URL ?? 'http://127.0.0.1:4444';
const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf';
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const APP = process.env.IPYBOX_APP ?? join(ROOT, 'target', 'debug', 'ipybox');
export const SHOTS = process.env.IPYBOX_SHOTS ?? join(ROOT, 'target', 'e2e-shots');

export const Keys = {
  Enter: '\uE007',
  Escape: '\uE00C',
  Shift: '\uE008',
  Control: '\uE009',
  Alt: '\uE00A',
  ArrowUp: '\uE013',
  ArrowDown: '\uE015',
  Backspace: '\uE003',
};

async function call(method, path, body) {
  // Creating a session right after the last one closed can meet a driver still tearing
  // WebKitWebDriver down; that request is safe to repeat. A launch that never answers (seen
  // once in a while under load) is ended and tried again.
  const newSession = method === 'POST' && path === '/session';
  const retries = newSession ? 3 : 0;
  for (let attempt = 0; ; attempt++) {
    try {
      return await callOnce(method, path, body);
    } catch (e) {
      const hung = e?.name === 'TimeoutError';
      if (attempt >= retries || !(e instanceof TypeError || (newSession && hung))) throw e;
      if (hung) {
        process.stdout.write(`# the app's launch did not answer within 60 s; trying again\n`);
        spawnSync('pkill', ['-KILL', '-f', `${APP} open`]);
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

async function callOnce(method, path, body) {
  const response = await fetch(DRIVER + path, {
    // An app that exits at once never gets a session: fail instead of waiting for ever.
    signal: AbortSignal.timeout(method === 'POST' && path === '/session' ? 60000 : 300000),
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok || json.value?.error) {
    throw new Error(`${method} ${path}: ${json.value?.error ?? response.status}: ${json.value?.message ?? ''}`);
  }
  return json.value;
}

/** A fresh workspace folder with `files` ({name: contents}) in it. */
export function workspace(files = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ipybox-e2e-'));
  for (const [name, contents] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), typeof contents === 'string' ? contents : JSON.stringify(contents, null, 1));
  }
  return dir;
}

/** A notebook (nbformat 4.5) with code cells of these sources. */
export function notebook(...sources) {
  return {
    cells: sources.map((source, i) => ({
      cell_type: 'code', id: `cell-${i}`, metadata: {}, execution_count: null, outputs: [],
      source,
    })),
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
    nbformat: 4,
    nbformat_minor: 5,
  };
}

export class App {
  constructor(session, args) {
    this.session = session;
    this.args = args;
  }

  /** Launch the real app with `args` (`['open', dir]`) and `env` (merged into ours). */
  static async launch(args, { env = {} } = {}) {
    // tauri-driver passes the environment it was started with; per-test variables go
    // through a wrapper script, since the capability has no env field.
    let application = APP;
    if (Object.keys(env).length > 0) {
      const wrapper = join(mkdtempSync(join(tmpdir(), 'ipybox-e2e-env-')), 'ipybox');
      const exports = Object.entries(env).map(([k, v]) => `export ${k}='${String(v).replaceAll("'", "'\\''")}'`).join('\n');
      writeFileSync(wrapper, `#!/bin/sh\n${exports}\nexec '${APP}' "$@"\n`, { mode: 0o755 });
      application = wrapper;
    }
    const started = performance.now();
    const value = await call('POST', '/session', {
      capabilities: { alwaysMatch: { browserName: 'wry', 'tauri:options': { application, args } } },
    });
    const app = new App(value.sessionId, args);
    app.launchedAt = started;
    return app;
  }

  async quit() {
    // A notebook with unsaved changes asks before it closes (a native dialog nobody here
    // answers): save it first.
    try {
      if (await this.execute('return document.body.dataset.dirty === "true";')) {
        await this.press(Keys.Control, 's');
        await this.until('the save before quitting', () => this.execute('return document.body.dataset.dirty !== "true";'), 10000);
      }
    } catch {
      // the app is gone or cannot save; closing it is all that is left
    }
    const closed = call('DELETE', `/session/${this.session}`).then(() => true, () => true);
    const late = new Promise((r) => setTimeout(() => r(false), 15000));
    if (!(await Promise.race([closed, late]))) {
      // Something keeps the window open (a dialog nobody answers): end the app, so the
      // next test gets the driver.
      spawnSync('pkill', ['-KILL', '-f', `ipybox open ${this.args[1]}`]);
      await Promise.race([closed, new Promise((r) => setTimeout(r, 20000))]);
    }
    // The next app cannot start its automation session while this one still holds the
    // inspector's port: wait for it to be gone (it stops its kernel first), then insist.
    const pattern = `ipybox open ${this.args[1]}`;
    const deadline = Date.now() + 10000;
    while (Date.now() < deadline && spawnSync('pgrep', ['-f', pattern]).status === 0) {
      await new Promise((r) => setTimeout(r, 100));
    }
    spawnSync('pkill', ['-KILL', '-f', pattern]);
  }

  s(path) {
    return `/session/${this.session}${path}`;
  }

  async execute(script, ...args) {
    return call('POST', this.s('/execute/sync'), { script, args });
  }

  async find(css) {
    const found = await call('POST', this.s('/elements'), { using: 'css selector', value: css });
    return found.map((e) => e[ELEMENT]);
  }

  /** Wait until `predicate()` (async) returns a truthy value; returns it. */
  async until(what, predicate, timeoutMs = 20000) {
    const deadline = Date.now() + timeoutMs;
    let last;
    while (Date.now() < deadline) {
      try {
        last = await predicate();
        if (last) return last;
      } catch (e) {
        last = e;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
  }

  /** Text of the first element matching `css`, or null. */
  async text(css) {
    return this.execute('const e = document.querySelector(arguments[0]); return e ? e.textContent : null;', css);
  }

  /** Click the first element matching `css`, once it is there and can take a click: an
   *  element laid out a moment later (a panel opening) or replaced meanwhile (a list drawn
   *  again) is found again; any other WebDriver error ends the wait at once. */
  async click(css) {
    let failure;
    await this.until(`${css} to take a click`, async () => {
      const [el] = await this.find(css);
      if (!el) return null;
      try {
        await call('POST', this.s(`/element/${el}/click`), {});
        return true;
      } catch (e) {
        // `until` tries again, and names this error if it never clears. Something laid over
        // the element (a sticky row it slid under as the panel laid out) is scrolled off it
        // first, and named in the error if it stays.
        if (/element click intercepted/.test(String(e?.message))) {
          const over = await this.execute(
            `const el = arguments[0];
             el.scrollIntoView({ block: 'center', inline: 'nearest' });
             const r = el.getBoundingClientRect();
             const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
             return top ? top.tagName.toLowerCase() + (top.id ? '#' + top.id : '') + (top.className ? '.' + String(top.className).split(' ').join('.') : '') : 'nothing';`,
            { [ELEMENT]: el },
          ).catch(() => 'unknown');
          throw new Error(`${e.message} (covered by ${over})`);
        }
        // An element with only its edge in view (a form's buttons at the foot of a panel a
        // window manager's smaller window cuts) counts as in view, so WebDriver does not
        // scroll to it, yet its centre is not: scrolled to, it takes the next try.
        if (/element not interactable/.test(String(e?.message))) {
          await this.execute("arguments[0].scrollIntoView({ block: 'center', inline: 'nearest' }); return true;", { [ELEMENT]: el }).catch(() => undefined);
          throw e;
        }
        if (/stale element reference/.test(String(e?.message))) throw e;
        failure = e;
        return true;
      }
    });
    if (failure) throw failure;
  }

  /** Press keys on the focused element: `press(Keys.Shift, Keys.Enter)` holds each down in
   *  order, then releases them. */
  async press(...keys) {
    const down = keys.map((value) => ({ type: 'keyDown', value }));
    const up = [...keys].reverse().map((value) => ({ type: 'keyUp', value }));
    await call('POST', this.s('/actions'), {
      actions: [{ type: 'key', id: 'keyboard', actions: [...down, ...up] }],
    });
    await call('DELETE', this.s('/actions'));
  }

  /** Type text into the focused element. */
  async type(text) {
    const actions = [];
    for (const ch of text) actions.push({ type: 'keyDown', value: ch }, { type: 'keyUp', value: ch });
    await call('POST', this.s('/actions'), { actions: [{ type: 'key', id: 'keyboard', actions }] });
  }

  async screenshot(name) {
    const png = await call('GET', this.s('/screenshot'));
    mkdirSync(SHOTS, { recursive: true });
    const path = join(SHOTS, `${name}.png`);
    writeFileSync(path, Buffer.from(png, 'base64'));
    return path;
  }

  /** Wait for the notebook UI to finish initializing. */
  async ready() {
    await this.until('the notebook to be ready', () => this.execute('return document.body.dataset.ready === "true";'));
  }

  async kernelStatus() {
    return this.execute('const e = document.querySelector("#kernel-status"); return e ? e.dataset.status : null;');
  }
}

/** The ipybox-managed Python (it has nbformat, from the kernel gateway's dependencies). */
export function python(code, ...args) {
  const home = process.env.IPYBOX_HOME ?? join(process.env.HOME, '.local', 'share', 'ipybox');
  const out = spawnSync(join(home, 'venv', 'bin', 'python'), ['-c', code, ...args], { encoding: 'utf8' });
  return { status: out.status, stdout: out.stdout, stderr: out.stderr };
}

/** Answer the native dialog titled `title` (a GTK window) with a key: Return takes the
 *  first button (Approve, Restart, …), Escape the other. Returns the dialog's text-free
 *  window id, or throws when no such dialog appears. */
/** The approval dialog ("Approve tool call — …") has no default button and takes no key in
 *  its first 0.7 s: there a test's Return stands for "Allow once", pressed as a person
 *  would, with its mnemonic (Alt+A) once the buttons take input. Every other security
 *  question is answered yes only by its yes button's mnemonic (alt+<letter>), given by the
 *  test: Return and Space decide nothing there. */
export function dialogKey(title, key) {
  return title.startsWith('Approve tool call — ') && key === 'Return' ? 'alt+a' : key;
}

/** How long to wait before a key reaches a dialog just found: the approval dialog's
 *  buttons take no input for their first 0.7 s. */
export const ARMING_MS = 900;

export function answerDialog(title, key = 'Return', timeoutSec = 15) {
  const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const found = spawnSync('timeout', [String(timeoutSec), 'xdotool', 'search', '--sync', '--onlyvisible', '--name', `^${escaped}$`], { encoding: 'utf8' });
  const id = found.stdout.trim().split('\n')[0];
  if (!id) throw new Error(`no dialog titled ${title} appeared`);
  // A yes button takes no input in its first 0.7 s on screen (Escape needs no wait).
  if (key !== 'Escape') spawnSync('sleep', [String(ARMING_MS / 1000)]);
  // A window just mapped may not take the focus yet (BadMatch): a moment later it does.
  let answered;
  for (let i = 0; i < 10; i++) {
    answered = spawnSync('xdotool', ['windowfocus', '--sync', id, 'key', dialogKey(title, key)], { encoding: 'utf8' });
    if (answered.status === 0 || !answered.stderr.includes('BadMatch')) break;
    spawnSync('sleep', ['0.2']);
  }
  if (answered.status !== 0) throw new Error(`could not answer the dialog: ${answered.stderr}`);
  // Without a window manager nothing gives the focus back: the app's window takes it again,
  // as it would on a desktop, so keys reach the notebook.
  spawnSync('timeout', ['2', 'xdotool', 'search', '--sync', '--onlyvisible', '--name', '^ipybox — ', 'windowfocus', '--sync'], { encoding: 'utf8' });
  return id;
}

export /** Answer the dialog titled `title` once it shows, without blocking this process (the
 *  client's request must go out meanwhile). */
function answerDialogSoon(title, key = 'Return', timeoutSec = 60) {
  const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new Promise((resolve, reject) => {
    execFile('timeout', [String(timeoutSec), 'xdotool', 'search', '--sync', '--onlyvisible', '--name', `^${escaped}$`], (err, stdout) => {
      const id = stdout.trim().split('\n')[0];
      if (!id) return reject(new Error(`no dialog titled ${title} appeared${err ? `: ${err.message}` : ''}`));
      const armed = key === 'Escape' ? 0 : ARMING_MS;
      setTimeout(() => execFile('xdotool', ['windowfocus', '--sync', id, 'key', dialogKey(title, key)], (e) => {
        if (e) return reject(e);
        execFile('timeout', ['2', 'xdotool', 'search', '--sync', '--onlyvisible', '--name', '^ipybox — ', 'windowfocus', '--sync'], () => resolve(id));
      }), armed);
    });
  });
}

/** Call a backend command from the page, as the window does. */
export function invoke(app, command, args = {}) {
  return app.execute('return window.__TAURI_INTERNALS__.invoke(arguments[0], arguments[1]);', command, args);
}

/** The state, prompt, selection and output text of cell `i`, or null. */
export async function cell(app, i) {
  return app.execute(
    `const c = document.querySelectorAll('.cell')[arguments[0]];
     if (!c) return null;
     return { state: c.dataset.state, prompt: c.querySelector('.prompt')?.textContent?.trim(),
              selected: c.classList.contains('selected'), editing: c.classList.contains('editing'),
              output: c.querySelector('.outputs')?.textContent ?? '',
              images: c.querySelectorAll('img.output-image').length };`,
    i,
  );
}

/** Wait until cell `i` ran (done or failed); its state. */
/** File → Rename…, as a person does it: the open notebook becomes `name`.ipynb (its title says so). */
export async function renameNotebook(app, name) {
  await app.click('#file-menu');
  await app.until('the file menu', () => app.execute('return !!document.querySelector("#file-rename");'));
  await app.execute('document.querySelector("#file-rename").click(); return true;');
  await app.until('the name dialog', () => app.execute('return document.querySelector("#notebook-name-dialog").open;'));
  await app.execute('document.querySelector("#notebook-name").value = arguments[0]; return true;', name);
  await app.click('#notebook-name-ok');
  await app.until('the new title', () => app.execute('return document.title === arguments[0];', `ipybox — ${name}.ipynb`));
}

export async function settled(app, i, what = `cell ${i} to finish`) {
  return app.until(what, async () => {
    const c = await cell(app, i);
    return c && (c.state === 'done' || c.state === 'failed') ? c : null;
  }, 60000);
}

/** The apps a test file launched, quit after each test (tauri-driver runs one app at a
 *  time), with a screenshot named after the test. Call from `afterEach`. */
export async function quitAll(apps, t) {
  while (apps.length) {
    const app = apps.pop();
    // A screenshot WebKitWebDriver cannot take (it sometimes never answers after a native
    // dialog was dismissed with a key) must not hold up the next test.
    const shot = app.screenshot(t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)).catch(() => undefined);
    const t0 = Date.now();
    await Promise.race([shot, new Promise((r) => setTimeout(r, 10000))]);
    if (Date.now() - t0 > 9000) process.stdout.write(`screenshot after ${t.name} did not come within 10 s\n`);
    await app.quit();
  }
}

/** A workspace with the fixture MCP server registered as `fx` and a notebook of `cells`. */
export function fixtureWorkspace(...cells) {
  const dir = workspace({ 'test.ipynb': notebook(...cells) });
  const fixture = join(ROOT, 'target', 'debug', 'ipybox-fixture-mcp');
  const reg = spawnSync(APP, ['register', 'fx', '--workspace', dir, '--params',
    JSON.stringify({ command: fixture, args: ['stdio'] })], { encoding: 'utf8' });
  if (reg.status !== 0) throw new Error(`registering the fixture server failed: ${reg.stderr}`);
  return dir;
}

/** The workspace's audit log, as `ipybox audit --json` prints it. */
export function auditLog(dir) {
  const out = spawnSync(APP, ['audit', '--workspace', dir, '--json'], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`ipybox audit failed: ${out.stderr}`);
  return out.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** Is a window titled `title` open? */
export function windowOpen(title) {
  const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return spawnSync('xdotool', ['search', '--name', `^${escaped}$`], { encoding: 'utf8' }).stdout.trim() !== '';
}

/** A person's click: the X server's pointer moved to (`x`, `y`) of the app's window and its
 *  button pressed (xdotool), not a WebDriver click: it goes wherever the pixel under the
 *  pointer sends it, and a modal native dialog stops it as it stops a person. */
export function personClick(x, y) {
  const found = spawnSync('timeout', ['5', 'xdotool', 'search', '--sync', '--onlyvisible', '--name', '^(• )?ipybox — '], { encoding: 'utf8' });
  const id = found.stdout.trim().split('\n')[0];
  if (!id) throw new Error('no app window to click');
  // Away first: `mousemove --sync` to where the pointer already is (the same spot clicked
  // twice) waits 15 s for a movement that never comes.
  spawnSync('xdotool', ['mousemove', '0', '0']);
  const clicked = spawnSync('xdotool', ['mousemove', '--window', id, '--sync', String(x), String(y), 'click', '1'], { encoding: 'utf8' });
  if (clicked.status !== 0) throw new Error(`could not click: ${clicked.stderr}`);
}
