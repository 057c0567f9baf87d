// Approval in the real app under Xvfb: one native dialog at a time, answered with xdotool;
// a withdrawn request closes its dialog; fifty pending calls approved at once; a rule that
// stops the dialogs; a shell command rejected; every call in the workspace's audit log.
// Run by tests/e2e/run.sh.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { App, APP, Keys, ROOT, SHOTS, workspace, notebook, answerDialog, settled, quitAll } from './webdriver.mjs';

/** Keep a screenshot for the docs with IPYBOX_UPDATE_SCREENSHOTS=1. */
function forDocs(shot, name) {
  if (process.env.IPYBOX_UPDATE_SCREENSHOTS === '1') copyFileSync(shot, join(ROOT, 'docs/images', name));
}

const apps = [];
afterEach((t) => quitAll(apps, t));

const FIXTURE = join(ROOT, 'target', 'debug', 'ipybox-fixture-mcp');

/** A workspace with the fixture MCP server registered as `fx` and a notebook of `cells`. */
function fixtureWorkspace(...cells) {
  const dir = workspace({ 'test.ipynb': notebook(...cells) });
  const reg = spawnSync(APP, ['register', 'fx', '--workspace', dir, '--params',
    JSON.stringify({ command: FIXTURE, args: ['stdio'] })], { encoding: 'utf8' });
  assert.equal(reg.status, 0, reg.stderr);
  return dir;
}

async function open(dir) {
  const app = await App.launch(['open', join(dir, 'test.ipynb')]);
  apps.push(app);
  await app.ready();
  return app;
}

/** Call a backend command from the page, as the window does. */
function invoke(app, command, args = {}) {
  return app.execute('return window.__TAURI_INTERNALS__.invoke(arguments[0], arguments[1]);', command, args);
}

function audit(dir) {
  const out = spawnSync(APP, ['audit', '--workspace', dir, '--json'], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return out.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** Is a window titled `title` open? */
function dialogOpen(title) {
  const found = spawnSync('xdotool', ['search', '--name', `^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`], { encoding: 'utf8' });
  return found.stdout.trim() !== '';
}

const tryCall = (body) => [
  'from mcptools._runtime import ApprovalRejected',
  'try:',
  ...body.map((l) => '    ' + l),
  'except ApprovalRejected as e:',
  '    print("rejected:", e)',
].join('\n');

const writeMarker = (path) =>
  tryCall([`from mcptools.fx.write_file import Params, run`, `print(run(Params(path=${JSON.stringify(path)}, text="x")))`]);

test('Approve runs the tool (its marker file exists), Reject does not; both are in the audit log', async () => {
  const dir = workspace();
  const approvedMarker = join(dir, 'approved.txt');
  const rejectedMarker = join(dir, 'rejected.txt');
  const ws = fixtureWorkspace(writeMarker(approvedMarker), writeMarker(rejectedMarker));
  const app = await open(ws);
  await app.press(Keys.Shift, Keys.Enter);
  // The whole screen, dialog, notebook and panel: the docs' picture of an approval.
  spawnSync('timeout', ['15', 'xdotool', 'search', '--sync', '--name', '^Approve tool call — fx.write_file$']);
  await app.until('the request in the panel', () => app.execute('return document.querySelectorAll(".approval-card, [data-request-id]").length > 0;'), 5000).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 300));
  const shot = join(SHOTS, 'approval-dialog-and-panel.png');
  spawnSync('import', ['-window', 'root', shot]);
  forDocs(shot, 'approval-dialog-and-panel.png');
  answerDialog('Approve tool call — fx.write_file', 'Return');
  await settled(app, 0);
  assert.ok(existsSync(approvedMarker), 'approved: the tool ran');
  await app.press(Keys.Shift, Keys.Enter);
  answerDialog('Approve tool call — fx.write_file', 'Escape');
  const rejected = await settled(app, 1);
  assert.match(rejected.output, /rejected:.*rejected it in the approval dialog/);
  assert.ok(!existsSync(rejectedMarker), 'rejected: the tool did not run');

  const entries = await app.until('two audit entries', async () => {
    const e = audit(ws);
    return e.length === 2 ? e : null;
  });
  assert.deepEqual(entries.map((e) => [e.tool, e.decision, e.decided_by]), [
    ['write_file', 'approved', 'person'],
    ['write_file', 'rejected', 'person'],
  ]);
  assert.equal(entries[0].arguments.path, approvedMarker);
  assert.equal(entries[0].outcome.kind, 'ok');
  assert.match(entries[0].origin ?? '', /cell 1 of test\.ipynb/);
});

test('a withdrawn request closes its dialog', async () => {
  const ws = fixtureWorkspace(tryCall(['from mcptools.fx.echo import Params, run', 'print(run(Params(text="hi")))']));
  const app = await open(ws);
  await app.press(Keys.Shift, Keys.Enter);
  const title = 'Approve tool call — fx.echo';
  spawnSync('timeout', ['15', 'xdotool', 'search', '--sync', '--name', `^${title}$`]);
  assert.ok(dialogOpen(title), 'the dialog is open');
  await invoke(app, 'interrupt');
  await app.until('the dialog to close itself', async () => !dialogOpen(title), 10000);
  const c = await settled(app, 0);
  assert.doesNotMatch(c.output, /^hi$/m, 'the call did not run');
});

test('fifty pending calls: one dialog, approved all at once, fifty audit entries, no stray dialog', async () => {
  const code = [
    'from concurrent.futures import ThreadPoolExecutor',
    'from mcptools.fx.echo import Params, run',
    'with ThreadPoolExecutor(50) as pool:',
    '    results = list(pool.map(lambda i: run(Params(text=str(i))), range(50)))',
    'print(len(results), "calls ran")',
  ].join('\n');
  const ws = fixtureWorkspace(code);
  const app = await open(ws);
  await app.press(Keys.Shift, Keys.Enter);
  const title = 'Approve tool call — fx.echo';
  spawnSync('timeout', ['15', 'xdotool', 'search', '--sync', '--name', `^${title}$`]);
  await app.until('fifty pending requests', async () => (await invoke(app, 'approvals_pending')).length === 50);
  const dialogs = spawnSync('xdotool', ['search', '--name', `^${title}$`], { encoding: 'utf8' }).stdout.trim().split('\n');
  assert.equal(dialogs.length, 1, 'one dialog at a time, the rest queue');
  // The panel's "Approve all 50 pending calls to fx.echo".
  await app.click('.approve-group[data-server="fx"][data-tool="echo"]');
  const c = await settled(app, 0);
  assert.match(c.output, /50 calls ran/);
  await app.until('the open dialog to close itself', async () => !dialogOpen(title), 10000);
  const entries = await app.until('fifty audit entries', async () => {
    const e = audit(ws);
    return e.length === 50 ? e : null;
  });
  assert.ok(entries.every((e) => e.decision === 'approved' && e.decided_by === 'batch'));
  await app.click('#side-tab-audit');
  await app.until('the audit log view', () => app.execute('return document.querySelector("#side-panel-audit")?.textContent.includes("fx.echo");'));
  await new Promise((r) => setTimeout(r, 300));
  forDocs(await app.screenshot('audit-log'), 'audit-log.png');
});

test('an "always allow" rule stops the dialogs; its file is out of the workspace', async () => {
  const ws = fixtureWorkspace(tryCall(['from mcptools.fx.echo import Params, run', 'print(run(Params(text="by rule")))']));
  const app = await open(ws);
  await invoke(app, 'add_approval_rule', { rule: { server: 'fx', tool: 'echo', decision: 'allow' }, decideId: null });
  const rules = await invoke(app, 'approval_rules');
  assert.deepEqual(rules.rules, [{ server: 'fx', tool: 'echo', decision: 'allow' }]);
  await app.press(Keys.Shift, Keys.Enter);
  const c = await settled(app, 0);
  assert.match(c.output, /by rule/);
  assert.ok(!dialogOpen('Approve tool call — fx.echo'), 'no dialog');
  const [entry] = audit(ws);
  assert.equal(entry.decided_by, 'rule');
  const found = spawnSync('grep', ['-rl', '"decision": "allow"', ws], { encoding: 'utf8' });
  assert.equal(found.stdout.trim(), '', 'the rules are not in the workspace');
});

test('a rejected `!touch` leaves no marker', async () => {
  const dir = workspace();
  const marker = join(dir, 'touched');
  const ws = fixtureWorkspace(`try:\n    get_ipython().system(${JSON.stringify('touch ' + marker)})\nexcept PermissionError as e:\n    print("rejected:", e)`);
  const app = await open(ws);
  await app.press(Keys.Shift, Keys.Enter);
  answerDialog('Approve tool call — ipybox.shell', 'Escape');
  const c = await settled(app, 0);
  assert.match(c.output, /rejected:/);
  assert.ok(!existsSync(marker), 'the command did not run');
  const [entry] = audit(ws);
  assert.deepEqual([entry.server, entry.tool, entry.decision], ['ipybox', 'shell', 'rejected']);
  assert.equal(entry.arguments.command, `touch ${marker}`);
});
