// The approval dialog in the real app under Xvfb with a window manager (openbox, started by
// tests/e2e/with-driver.sh: a new window gets the focus unless it declines it), answered
// with real input (xdotool): the window's approval panel works while the dialog is up;
// Return typed into a cell as the dialog appears approves nothing; each of the dialog's
// choices (allow once, for this session, always, reject) has its effect and its audit entry.
// Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, ARMING_MS, Keys, ROOT, SHOTS, answerDialog, auditLog, fixtureWorkspace, invoke, personClick, quitAll, settled, windowOpen, workspace } from './webdriver.mjs';

const apps = [];
afterEach((t) => quitAll(apps, t));

async function open(dir) {
  const app = await App.launch(['open', join(dir, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  return app;
}

const tryCall = (...body) => [
  'from mcptools._runtime import ApprovalRejected',
  ...body.flatMap((call) => ['try:', `    ${call}`, 'except ApprovalRejected as e:', '    print("rejected:", e)']),
].join('\n');

const echo = (text) => `from mcptools.fx.echo import Params, run; print(run(Params(text=${JSON.stringify(text)})))`;

const TITLE = 'Approve tool call — fx.echo';

/** Wait for the dialog titled `title`; its X window id. */
function dialogId(title = TITLE, timeoutSec = 15) {
  const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const found = spawnSync('timeout', [String(timeoutSec), 'xdotool', 'search', '--sync', '--name', `^${escaped}$`], { encoding: 'utf8' });
  const id = found.stdout.trim().split('\n')[0];
  if (!id) throw new Error(`no dialog titled ${title} appeared`);
  return id;
}

/** Press `key` in the dialog titled `title` once its buttons take input, as a person would:
 *  the pointer on it (the dialog accepts the focus only then), then the key. */
function pressInDialog(key, title = TITLE) {
  const id = dialogId(title);
  spawnSync('sleep', [String(ARMING_MS / 1000)]);
  // Away first: `mousemove --sync` to where the pointer already is waits 15 s for nothing.
  spawnSync('xdotool', ['mousemove', '0', '0']);
  spawnSync('xdotool', ['mousemove', '--window', id, '--sync', '20', '20'], { encoding: 'utf8' });
  const done = spawnSync('xdotool', ['windowactivate', '--sync', id, 'key', key], { encoding: 'utf8' });
  if (done.status !== 0) throw new Error(`could not press ${key}: ${done.stderr}`);
}

/** The panel's element `css` of request `id`, as a person clicks it: its centre, in the
 *  window's coordinates. */
async function panelClick(app, css) {
  await app.until(`${css} in the panel`, () => app.execute('const e = document.querySelector(arguments[0]); return !!e && !e.disabled;', css));
  const { x, y } = await app.execute(
    'const e = document.querySelector(arguments[0]); e.scrollIntoView({ block: "center" }); const r = e.getBoundingClientRect(); return { x: Math.round(r.x + r.width / 2), y: Math.round(r.y + r.height / 2) };',
    css,
  );
  personClick(x, y);
}

async function openPanel(app) {
  const shown = await app.execute('const p = document.querySelector("#side-panel-approvals"); return !!p && !p.hidden && p.offsetParent !== null;');
  if (!shown) await app.click('#toggle-approvals');
  await app.until('the approval panel', () => app.execute('const p = document.querySelector("#side-panel-approvals"); return !!p && !p.hidden && p.offsetParent !== null;'));
}

test('the panel works while the dialog is up: its Reject, then its "Always allow this tool"', async () => {
  const ws = fixtureWorkspace(tryCall(echo('one'), echo('two')));
  const app = await open(ws);
  await openPanel(app);
  await app.press(Keys.Shift, Keys.Enter);
  dialogId();
  const [first] = await app.until('the request in the panel', async () => {
    const p = await invoke(app, 'approvals_pending');
    return p.length === 1 ? p : null;
  });
  await panelClick(app, `.approval-request[data-request-id="${first.id}"] .reject`);
  const [second] = await app.until('the second request', async () => {
    const p = await invoke(app, 'approvals_pending');
    return p.length === 1 && p[0].id !== first.id ? p : null;
  }, 10000);
  await app.until('the dialog of the second request', () => windowOpen(TITLE));
  await panelClick(app, `.approval-request[data-request-id="${second.id}"] .always-allow`);
  // The click asks; a native confirmation, which the page cannot answer, makes the rule.
  answerDialog('Always allow?', 'alt+a');
  const c = await settled(app, 0);
  assert.match(c.output, /rejected:.*rejected/);
  assert.match(c.output, /^two$/m);
  await app.until('the dialog to close', () => !windowOpen(TITLE), 5000);
  const entries = await app.until('two audit entries', async () => {
    const e = auditLog(ws);
    return e.length === 2 ? e : null;
  });
  assert.deepEqual(entries.map((e) => [e.decision, e.decided_by]), [['rejected', 'person'], ['approved', 'rule']]);
});

test('Return pressed again and again while typing in a cell as the dialog appears approves nothing', async () => {
  const dir = workspace();
  const marker = join(dir, 'typed-into.txt');
  const ws = fixtureWorkspace(
    tryCall(`import time; time.sleep(1.5); from mcptools.fx.write_file import Params, run; print(run(Params(path=${JSON.stringify(marker)}, text="x")))`),
    '',
  );
  const app = await open(ws);
  await app.press(Keys.Shift, Keys.Enter);
  // The person goes on typing in the next cell: a line, Return, a line, Return, … while the
  // call is made and its dialog appears.
  await app.press(Keys.Enter);
  const main = spawnSync('xdotool', ['search', '--onlyvisible', '--name', '^(• )?ipybox — '], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  spawnSync('xdotool', ['windowactivate', '--sync', main]);
  const deadline = Date.now() + 5000;
  let sawDialog = false;
  while (Date.now() < deadline) {
    spawnSync('xdotool', ['type', '--delay', '20', 'x = 1']);
    spawnSync('xdotool', ['key', 'Return']);
    sawDialog ||= windowOpen('Approve tool call — fx.write_file');
  }
  await new Promise((r) => setTimeout(r, 500));
  assert.ok(!existsSync(marker), 'the tool did not run');
  assert.ok(sawDialog, 'the dialog appeared while the person typed');
  const pending = await invoke(app, 'approvals_pending');
  assert.equal(pending.length, 1, 'the call still waits for a decision');
  const typed = await app.execute('return document.querySelectorAll(".cell")[1]?.textContent ?? "";');
  assert.match(typed, /x = 1/, 'the keys went to the cell');
  pressInDialog('Escape', 'Approve tool call — fx.write_file');
  const c = await settled(app, 0);
  assert.match(c.output, /rejected:/);
});

test('until it is armed (0.7 s on screen, or longer when asked) the dialog takes no key, even with the focus; Return never approves', async () => {
  const ws = fixtureWorkspace(tryCall(echo('too soon')));
  // Armed after 4 s instead of 0.7 s (never shorter), so that the keys below reach the
  // dialog while it is not armed yet even on a loaded machine.
  const ARMED_AFTER = 4000;
  const app = await App.launch(['open', join(ws, 'test.ipynb')], { env: { IPYBOX_APPROVAL_ARMING_MS: ARMED_AFTER } });
  apps.push(app);
  await app.ready();
  await app.press(Keys.Shift, Keys.Enter);
  // The moment it is on screen (looked for every few ms: `xdotool search --sync` looks every
  // half second), the pointer on it, the focus given: Return, Alt+A, Space.
  let id = '';
  for (const deadline = Date.now() + 15000; !id && Date.now() < deadline;) {
    id = spawnSync('xdotool', ['search', '--onlyvisible', '--name', `^${TITLE}$`], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  }
  assert.ok(id, 'the dialog showed');
  const t0 = Date.now();
  // Away first: `mousemove --sync` to where the pointer already is (an earlier test left
  // it there) waits 15 s for a movement that never comes.
  spawnSync('xdotool', ['mousemove', '0', '0']);
  spawnSync('xdotool', ['mousemove', '--window', id, '--sync', '20', '20'], { timeout: 3000 });
  // The pointer in it, it accepts the focus (until then it takes none).
  for (const deadline = Date.now() + 3000; Date.now() < deadline;) {
    const hints = spawnSync('xprop', ['-id', id, 'WM_HINTS'], { encoding: 'utf8' }).stdout;
    if (/accepts input or input focus: True/.test(hints)) break;
  }
  spawnSync('xdotool', ['windowactivate', '--sync', id, 'key', 'Return', 'alt+a', 'space'], { encoding: 'utf8', timeout: 3000 });
  const took = Date.now() - t0;
  const active = spawnSync('xdotool', ['getactivewindow'], { encoding: 'utf8' }).stdout.trim();
  assert.ok(took < ARMED_AFTER - 500, `the keys went out before the dialog was armed (${took} ms): else this test cannot tell`);
  assert.equal(Number(active), Number(id), 'the dialog had the focus when the keys went out');
  await new Promise((r) => setTimeout(r, ARMED_AFTER - took + 500));
  assert.equal((await invoke(app, 'approvals_pending')).length, 1, 'nothing decided by keys pressed too soon');
  // Armed, Return still decides nothing.
  spawnSync('xdotool', ['windowactivate', '--sync', id, 'key', 'Return', 'KP_Enter', 'space'], { timeout: 3000 });
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await invoke(app, 'approvals_pending')).length, 1, 'Return, Enter and Space decide nothing');
  pressInDialog('Escape');
  assert.match((await settled(app, 0)).output, /rejected:/);
});

test('each choice in the dialog: once, for this session (revocable), always (confirmed), reject', async () => {
  const ws = fixtureWorkspace(
    tryCall(echo('once')),
    tryCall(echo('session 1'), echo('session 2')),
    tryCall(echo('after revoking')),
    tryCall('from mcptools.fx.add import Params, run; print("sum", run(Params(a=1, b=2)))'),
    tryCall('from mcptools.fx.add import Params, run; print("sum", run(Params(a=2, b=3)))'),
  );
  const app = await open(ws);
  // Allow once.
  await app.press(Keys.Shift, Keys.Enter);
  pressInDialog('alt+a');
  assert.match((await settled(app, 0)).output, /^once$/m);
  // Allow for this session: both calls of the cell run on one answer; the grant is listed.
  await app.press(Keys.Shift, Keys.Enter);
  pressInDialog('alt+s');
  const c1 = await settled(app, 1);
  assert.match(c1.output, /^session 1$/m);
  assert.match(c1.output, /^session 2$/m);
  const grants = await invoke(app, 'approval_grants');
  assert.equal(grants.length, 1);
  assert.deepEqual([grants[0].server, grants[0].tool, grants[0].scope], ['fx', 'echo', 'notebook']);
  // Revoked, the tool asks again; Escape rejects.
  assert.equal(await invoke(app, 'revoke_grant', { id: grants[0].id }), true);
  assert.deepEqual(await invoke(app, 'approval_grants'), []);
  await app.press(Keys.Shift, Keys.Enter);
  pressInDialog('Escape');
  assert.match((await settled(app, 2)).output, /rejected:/);
  // Always allow this tool…: confirmed in a dialog naming the rule, then the rule decides.
  await app.press(Keys.Shift, Keys.Enter);
  pressInDialog('alt+w', 'Approve tool call — fx.add');
  answerDialog('Always allow fx.add?', 'alt+a');
  assert.match((await settled(app, 3)).output, /sum/);
  const rules = await invoke(app, 'approval_rules');
  assert.deepEqual(rules.rules.map((r) => [r.server, r.tool, r.decision]), [['fx', 'add', 'allow']]);
  await app.press(Keys.Shift, Keys.Enter);
  assert.match((await settled(app, 4)).output, /sum/);
  assert.ok(!windowOpen('Approve tool call — fx.add'), 'the rule decided without a dialog');
  const entries = await app.until('six audit entries', async () => {
    const e = auditLog(ws);
    return e.length === 6 ? e : null;
  });
  assert.deepEqual(entries.map((e) => [e.tool, e.decision, e.decided_by]), [
    ['echo', 'approved', 'person'],
    ['echo', 'approved', 'grant'],
    ['echo', 'approved', 'grant'],
    ['echo', 'rejected', 'person'],
    ['add', 'approved', 'rule'],
    ['add', 'approved', 'rule'],
  ]);
});

test('a screenshot of the dialog over the notebook, for the docs', async () => {
  const ws = fixtureWorkspace(tryCall(
    'from concurrent.futures import ThreadPoolExecutor; from mcptools.fx.echo import Params, run; ' +
      'print(list(ThreadPoolExecutor(3).map(lambda t: run(Params(text=t)), ["hello", "from", "ipybox"])))',
  ));
  const app = await open(ws);
  await openPanel(app);
  await app.press(Keys.Shift, Keys.Enter);
  dialogId();
  await app.until('three waiting calls', async () => (await invoke(app, 'approvals_pending')).length === 3);
  spawnSync('xdotool', ['mousemove', '5', '795']);
  await new Promise((r) => setTimeout(r, 1000));
  const shot = join(SHOTS, 'approval-dialog-and-panel.png');
  spawnSync('import', ['-window', 'root', shot]);
  if (process.env.IPYBOX_UPDATE_SCREENSHOTS === '1') copyFileSync(shot, join(ROOT, 'docs/images/approval-dialog-and-panel.png'));
  // Rejecting the first rejects the cell's map; the others are withdrawn with it.
  pressInDialog('Escape');
  await settled(app, 0);
  await app.until('the dialogs to close', () => !windowOpen(TITLE), 10000);
});

/** A session bus of the test's own (its address), ended by `stop`. */
async function sessionBus() {
  const daemon = spawn('dbus-daemon', ['--session', '--nofork', '--print-address'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const address = await new Promise((resolve) => daemon.stdout.once('data', (d) => resolve(String(d).trim())));
  return { address, stop: () => daemon.kill() };
}

/** The app on the bus at `address`, a call waiting in it while the person has turned to
 *  another program (the window minimized) and its dialog up. */
async function waitingWhileAway(address) {
  const ws = fixtureWorkspace(tryCall('import time; time.sleep(2)', echo('while away')));
  const app = await App.launch(['open', join(ws, 'test.ipynb')], { env: { DBUS_SESSION_BUS_ADDRESS: address } });
  apps.push(app);
  await app.ready();
  await app.press(Keys.Shift, Keys.Enter);
  const main = spawnSync('xdotool', ['search', '--onlyvisible', '--name', '^(• )?ipybox — '], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  spawnSync('xdotool', ['windowminimize', '--sync', main]);
  dialogId();
  return app;
}

test('a call that waits while the window is not in use raises a desktop notification', async () => {
  // A session bus of the test's own, watched: the app's Notify call on it is what a
  // notification service would show.
  const bus = await sessionBus();
  const monitor = spawn('dbus-monitor', ['--address', bus.address, "interface='org.freedesktop.Notifications'"], { stdio: ['ignore', 'pipe', 'ignore'] });
  let seen = '';
  monitor.stdout.on('data', (d) => { seen += String(d); });
  try {
    const app = await waitingWhileAway(bus.address);
    await app.until('the Notify call', () => /member=Notify/.test(seen), 5000);
    assert.match(seen, /string "fx\.echo waits for your approval"/);
    assert.match(seen, /string "Asked by: Code in cell 1 of test\.ipynb"/);
    pressInDialog('Escape');
    await settled(app, 0);
  } finally {
    monitor.kill();
    bus.stop();
  }
});

test('clicking the notification brings the window forward with the waiting call in view (a real notification service, dunst)', async () => {
  const bus = await sessionBus();
  // A notification stays until clicked; a left click invokes its default action, as many
  // desktops do.
  const config = join(workspace(), 'dunstrc');
  writeFileSync(config, '[global]\n    mouse_left_click = do_action, close_current\n    geometry = "400x5-30+40"\n[urgency_low]\n    timeout = 0\n[urgency_normal]\n    timeout = 0\n[urgency_critical]\n    timeout = 0\n');
  const dunst = spawn('dunst', ['-config', config], { stdio: 'ignore', env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: bus.address } });
  try {
    const app = await waitingWhileAway(bus.address);
    const found = spawnSync('timeout', ['10', 'xdotool', 'search', '--sync', '--onlyvisible', '--class', 'Dunst'], { encoding: 'utf8' });
    const bubble = found.stdout.trim().split('\n')[0];
    assert.ok(bubble, 'dunst shows the notification');
    spawnSync('import', ['-window', 'root', join(SHOTS, 'approval-notification.png')]);
    const [waiting] = await invoke(app, 'approvals_pending');
    assert.equal(await app.execute('return document.activeElement?.dataset?.requestId ?? null;'), null, 'nothing had the call in focus');
    // The person clicks the notification.
    spawnSync('xdotool', ['mousemove', '0', '0']);
    const clicked = spawnSync('xdotool', ['mousemove', '--window', bubble, '--sync', '40', '15', 'click', '1'], { encoding: 'utf8' });
    assert.equal(clicked.status, 0, clicked.stderr);
    await app.until('the window to come back', () => spawnSync('xdotool', ['search', '--onlyvisible', '--name', '^(• )?ipybox — ']).status === 0, 5000);
    await app.until('the waiting call in view in the panel', () => app.execute(
      'const p = document.querySelector("#side-panel-approvals"); const r = document.querySelector(`.approval-request[data-request-id="${arguments[0]}"]`); return !!p && !p.hidden && !!r && document.activeElement === r;', waiting.id), 5000);
    pressInDialog('Escape');
    await settled(app, 0);
  } finally {
    dunst.kill();
    bus.stop();
  }
});
