// The desktop app's figures, measured on the real app under Xvfb (release build advised):
//   launch → window drawn and a cell editable; launch → first cell's result;
//   warm `print(1)` from keypress to output painted (median of 20);
//   100,000 printed lines: longest main-thread stall while streaming, time to final render;
//   memory of the app (ipybox + WebKit processes, PSS, and their anonymous memory, which other
//   WebKit apps running beside do not lower) with a 50-cell notebook of 10 plots;
//   Tab in a cell to the kernel's completion list painted, warm kernel (median of 20,
//   BENCH_ONLY=complete), and the kernel's part of it (the backend's `complete`);
//   a tool call to its native approval dialog on screen (median of 10), and an agent's call
//   on the app's own MCP endpoint to its dialog (BENCH_ONLY=endpoint); a decision in the
//   dialog to the tool started, and fifty queued calls decided with one batch choice;
//   a cell the sandbox blocked: its error to the offer to allow it painted (BENCH_ONLY=block).
// Run: bash scripts/bench-desktop.sh
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { APP, App, ROOT, answerDialog, answerDialogSoon, fixtureWorkspace, notebook, workspace } from '../e2e/webdriver.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x) => Math.round(x * 10) / 10;

/** Launch on a notebook; time to editable and to the first cell's result. */
async function launch() {
  const dir = workspace({ 'bench.ipynb': notebook('print(1)') });
  const t0 = performance.now();
  const epoch0 = Date.now();
  const app = await App.launch(['open', join(dir, 'bench.ipynb')], { env });
  let editable;
  for (;;) {
    const ok = await app.execute('return document.body.dataset.ready === "true" && !!document.querySelector(".cell .cm-editor");');
    if (ok) { editable = performance.now() - t0; break; }
    await new Promise((r) => setTimeout(r, 5));
  }
  // What the page itself saw (both clocks are the system's): the page's navigation start,
  // the frame painted with the cells, the frame painted once they were editable.
  const marks = await app.until('the paint marks', () => app.execute(`
    const at = (name) => performance.getEntriesByName(name)[0]?.startTime;
    if (at('ipybox:editable') === undefined) return null;
    const nav = performance.getEntriesByType('navigation')[0];
    return { origin: performance.timeOrigin, html: nav?.responseEnd, script: at('ipybox:script'), shell: at('ipybox:shell'), cells: at('ipybox:cells-painted') ?? at('ipybox:editable'), editable: at('ipybox:editable') };`));
  const page = {
    navigation: marks.origin - epoch0,
    // Within the page: the HTML received, the first script running, the cells painted (as
    // handed over), the application's shell built.
    inPage: { html: marks.html, script: marks.script, cells: marks.cells, shell: marks.shell },
    cellsPainted: marks.origin + marks.cells - epoch0,
    editablePainted: marks.origin + marks.editable - epoch0,
  };
  await app.execute('window.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", shiftKey: true, bubbles: true})); return true;');
  let result;
  for (;;) {
    const state = await app.execute('return document.querySelector(".cell").dataset.state;');
    if (state === 'done' || state === 'failed') { result = performance.now() - t0; break; }
    await new Promise((r) => setTimeout(r, 5));
  }
  return { app, editable, result, page };
}

/** In the page: select cell i, press Shift+Enter, resolve at the first frame painted after
 *  its output appeared. */
const KEYPRESS_TO_PAINT = `
  const [i, done] = arguments;
  const cell = document.querySelectorAll('.cell')[i];
  cell.dispatchEvent(new MouseEvent('mousedown', {bubbles: true}));
  window.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', bubbles: true}));
  const outputs = cell.querySelector('.outputs');
  const t0 = performance.now();
  const seen = () => outputs.textContent.includes('1');
  const obs = new MutationObserver(() => {
    if (!seen()) return;
    obs.disconnect();
    requestAnimationFrame(() => done(performance.now() - t0));
  });
  obs.observe(outputs, {childList: true, subtree: true, characterData: true});
  window.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', ctrlKey: true, bubbles: true}));
`;

async function executeAsync(app, script, ...args) {
  const res = await fetch(`${process.env.WEBDRIVER_URL ?? 'http://127.0.0.1:4444'}/session/${app.session}/execute/async`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ script, args }),
  });
  const json = await res.json();
  if (json.value?.error) throw new Error(json.value.message);
  return json.value;
}

/** In the page: run 100k prints; the longest gap between frames while it streams (what a
 *  keypress would wait), and the time until the last line is rendered. */
const STREAM_100K = `
  const done = arguments[0];
  const cell = document.querySelectorAll('.cell')[1];
  cell.dispatchEvent(new MouseEvent('mousedown', {bubbles: true}));
  window.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', bubbles: true}));
  let last = performance.now(), worst = 0, running = true;
  const tick = (t) => { worst = Math.max(worst, t - last); last = t; if (running) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  const t0 = performance.now();
  window.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', ctrlKey: true, bubbles: true}));
  const poll = () => {
    const s = cell.dataset.state;
    if (s === 'done' || s === 'failed') {
      requestAnimationFrame(() => { running = false; done({ total: performance.now() - t0, worstFrameGap: worst, state: s, text: cell.querySelector('.outputs').textContent.slice(-20) }); });
    } else setTimeout(poll, 5);
  };
  setTimeout(poll, 5);
`;

/** A field of the process's memory totals, in MiB. */
function rollup(pid, field) {
  try {
    const m = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch { return 0; }
}
const pss = (pid) => rollup(pid, 'Pss');
/** Anonymous memory (heaps, the page's DOM and scripts): unlike PSS, neither shared with other
 *  WebKit apps running beside nor given back when the machine reclaims file pages. */
const anon = (pid) => rollup(pid, 'Pss_Anon');

function children(pid) {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(d));
    } catch { /* gone */ }
  }
  return out;
}

/** The app's own process, opened on `dir`. */
function appPid(dir) {
  return spawnSync('pgrep', ['-f', `ipybox open ${dir}`], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).map(Number)[0];
}

function appMemory(dir) {
  const app = appPid(dir);
  const webkit = children(app).filter((p) => /WebKit(Web|Network)Process/.test(readFileSync(`/proc/${p}/cmdline`, 'utf8')));
  return { app: pss(app), webkit: webkit.reduce((s, p) => s + pss(p), 0), anon: anon(app) + webkit.reduce((s, p) => s + anon(p), 0), appAnon: anon(app), processes: 1 + webkit.length };
}

/** Each process's whole memory map, for finding which mappings grew between two builds. */
function keepSmaps(dir, into) {
  const app = appPid(dir);
  mkdirSync(into, { recursive: true });
  for (const pid of [app, ...children(app)]) {
    const name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    try { writeFileSync(join(into, `${name}-${pid}.smaps`), readFileSync(`/proc/${pid}/smaps`, 'utf8')); } catch { /* gone */ }
  }
}

const results = {};
const launches = [];
// BENCH_ONLY=memory (or stream, launch, dialog, endpoint, block) runs one part; BENCH_ENV='{"K":"V"}' sets the app's env;
// BENCH_SMAPS_DIR=DIR keeps each app process's memory map after Run all (to compare two builds' mappings).
const only = process.env.BENCH_ONLY;
const env = JSON.parse(process.env.BENCH_ENV ?? '{}');
for (let i = 0; i < (only && only !== 'launch' ? 0 : 5); i++) {
  const { app, editable, result, page } = await launch();
  launches.push({ editable, result, page });
  if (i < 4) await app.quit();
  else {
    // Warm print(1): keypress to painted, in the page.
    await app.execute('document.querySelector(".cell").dataset.state; return true;');
    const warm = [];
    for (let k = 0; k < 20; k++) warm.push(await executeAsync(app, KEYPRESS_TO_PAINT, 0));
    results.warm_print_keypress_to_paint_ms = { median: round(median(warm)), min: round(Math.min(...warm)), max: round(Math.max(...warm)) };
    await app.quit();
  }
}
const summary = (pick) => ({ median: round(median(launches.map(pick))), all: launches.map((l) => round(pick(l))) });
if (launches.length) {
  results.launch_to_navigation_ms = summary((l) => l.page.navigation);
  for (const part of ['html', 'script', 'cells', 'shell']) {
    if (launches[0].page.inPage[part] !== undefined) results[`navigation_to_${part}_ms`] = summary((l) => l.page.inPage[part]);
  }
  results.launch_to_cells_painted_ms = summary((l) => l.page.cellsPainted);
  results.launch_to_editable_painted_ms = summary((l) => l.page.editablePainted);
}
if (launches.length) results.launch_to_editable_ms = { median: round(median(launches.map((l) => l.editable))), all: launches.map((l) => round(l.editable)) };
if (launches.length) results.launch_to_first_result_ms = { median: round(median(launches.map((l) => l.result))), all: launches.map((l) => round(l.result)) };

if (!only || only === 'stream') {
  const dir = workspace({ 'bench.ipynb': notebook('print(1)', 'for i in range(100000):\n    print(i)') });
  const app = await App.launch(['open', join(dir, 'bench.ipynb')], { env });
  await app.ready();
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  const r = await executeAsync(app, STREAM_100K);
  results.stream_100k_lines = { total_ms: round(r.total), worst_frame_gap_ms: round(r.worstFrameGap), state: r.state, tail: r.text.trim() };
  await app.quit();
}

/** In the page: Tab in the editing cell, resolve at the first frame painted after the
 *  completion list appeared (closed with Escape first, if open). */
const TAB_TO_PAINT = `
  const done = arguments[0];
  const content = document.querySelector('.cell.editing .cm-content');
  const key = (key) => content.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true, cancelable: true}));
  if (document.querySelector('.cm-tooltip-autocomplete')) key('Escape');
  requestAnimationFrame(() => {
    const t0 = performance.now();
    const obs = new MutationObserver(() => {
      const items = document.querySelectorAll('.cm-tooltip-autocomplete li');
      if (!items.length) return;
      obs.disconnect();
      requestAnimationFrame(() => done({ ms: performance.now() - t0, items: items.length, first: items[0].textContent }));
    });
    obs.observe(document.body, {childList: true, subtree: true});
    key('Tab');
  });
`;

if (!only || only === 'complete') {
  const dir = workspace({ 'bench.ipynb': notebook('import pandas as pd', 'pd.') });
  const app = await App.launch(['open', join(dir, 'bench.ipynb')], { env });
  await app.ready();
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  await app.execute('window.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", shiftKey: true, bubbles: true})); return true;');
  await app.until('pandas imported', () => app.execute('return document.querySelector(".cell").dataset.state === "done";'), 60000);
  // Edit the second cell with the cursor after `pd.`.
  await app.execute('window.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", bubbles: true})); return true;');
  await app.until('edit mode', () => app.execute('return !!document.querySelector(".cell.editing .cm-content");'));
  await app.execute('const c = document.querySelector(".cell.editing .cm-content"); const r = document.createRange(); r.selectNodeContents(c); r.collapse(false); const s = getSelection(); s.removeAllRanges(); s.addRange(r); return true;');
  const warmup = await executeAsync(app, TAB_TO_PAINT);
  const times = [];
  for (let k = 0; k < 20; k++) times.push((await executeAsync(app, TAB_TO_PAINT)).ms);
  results.tab_to_completion_list_painted_ms = { median: round(median(times)), min: round(Math.min(...times)), max: round(Math.max(...times)), first_cold: round(warmup.ms), items: warmup.items };
  // The part of it that is the kernel's: the backend's `complete` for the same code, timed in
  // the page (IPC both ways, the Jupyter round trip, Jedi).
  const asked = [];
  for (let k = 0; k < 20; k++) {
    asked.push(await executeAsync(app, `
      const done = arguments[0];
      const t0 = performance.now();
      window.__TAURI_INTERNALS__.invoke('complete', { code: 'pd.', cursor: 3 }).then(() => done(performance.now() - t0), (e) => done(-1));`));
  }
  results.kernel_complete_round_trip_ms = { median: round(median(asked)), min: round(Math.min(...asked)), max: round(Math.max(...asked)) };
  await app.quit();
}

if (!only || only === 'memory') {
  const plot = 'import matplotlib.pyplot as plt\nplt.plot(range(10)); plt.show()';
  const sources = Array.from({ length: 50 }, (_, i) => (i % 5 === 0 ? plot : `x${i} = ${i}\nprint(x${i})`));
  const dir = workspace({ 'bench.ipynb': notebook(...sources) });
  const app = await App.launch(['open', join(dir, 'bench.ipynb')], { env });
  await app.ready();
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  await app.click('#run-all');
  await app.until('all 50 cells', () => app.execute(`return [...document.querySelectorAll('.cell')].filter((c) => c.dataset.state === 'done').length >= 50;`), 120000);
  await new Promise((r) => setTimeout(r, 1000));
  const m = appMemory(dir);
  if (process.env.BENCH_SMAPS_DIR) keepSmaps(dir, process.env.BENCH_SMAPS_DIR);
  results.memory_50_cells_10_plots_mib = { total: round(m.app + m.webkit), ipybox: round(m.app), webkit: round(m.webkit), anon: round(m.anon), ipybox_anon: round(m.appAnon), processes: m.processes };
  await app.quit();
}

if (!only || only === 'dialog') {
  // From the moment the engine asked (the request's asked_at) to the dialog mapped on screen.
  const title = '^Approve tool call — fx.echo$';
  const dir = fixtureWorkspace('from mcptools.fx.echo import Params, run\nprint(run(Params(text="x")))');
  const app = await App.launch(['open', join(dir, 'test.ipynb')], { env });
  await app.ready();
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  const invoke = (command) => app.execute('return window.__TAURI_INTERNALS__.invoke(arguments[0], {});', command);
  const latencies = [];
  for (let k = 0; k < 11; k++) {
    await app.execute('window.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", ctrlKey: true, bubbles: true})); return true;');
    let seen;
    for (const deadline = Date.now() + 30000; Date.now() < deadline;) {
      if (spawnSync('xdotool', ['search', '--onlyvisible', '--name', title], { encoding: 'utf8' }).stdout.trim()) { seen = Date.now(); break; }
    }
    const [request] = await invoke('approvals_pending');
    if (k > 0 && seen && request) latencies.push(seen - request.asked_at);
    answerDialog('Approve tool call — fx.echo', 'Return');
    await app.until('the cell', () => app.execute('return document.querySelector(".cell").dataset.state === "done";'), 30000);
  }
  results.tool_call_to_dialog_visible_ms = { median: median(latencies), min: Math.min(...latencies), max: Math.max(...latencies), n: latencies.length };
  await app.quit();
}

if (!only || only === 'dialog') {
  // A decision in the dialog (the key that chooses "Allow once" sent) to the call's answer
  // back in the cell, less the tool's own time (the audit log's duration): an upper bound on
  // decision → tool started. Then fifty calls from one cell, all waiting, decided with one
  // batch choice (the panel's "Approve all 50", confirmed; and the dialog's "Allow for this
  // session" where there is one): from the choosing key to the cell's last call answered.
  const title = 'Approve tool call — fx.echo';
  const one = 'import time\nfrom mcptools.fx.echo import Params, run\nrun(Params(text="x"))\nprint("T", time.time())';
  const fifty = [
    'import time',
    'from concurrent.futures import ThreadPoolExecutor',
    'from mcptools.fx.echo import Params, run',
    'with ThreadPoolExecutor(50) as pool:',
    '    results = list(pool.map(lambda i: run(Params(text=str(i))), range(50)))',
    'print("T", time.time(), len(results))',
  ].join('\n');
  // Cells: fifty calls, one call, fifty calls again (run-and-advance goes from one to the next).
  const dir = fixtureWorkspace(fifty, one, fifty);
  const app = await App.launch(['open', join(dir, 'test.ipynb')], { env });
  await app.ready();
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  const invoke = (command, args = {}) => app.execute('return window.__TAURI_INTERNALS__.invoke(arguments[0], arguments[1]);', command, args);
  const grants = await invoke('approval_grants').then(() => true, () => false);
  const windowOf = (t) => spawnSync('timeout', ['15', 'xdotool', 'search', '--sync', '--name', `^${t}$`], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  const stamp = async (i) => {
    const c = await app.until('the cell', () => app.execute('const c = document.querySelectorAll(".cell")[arguments[0]]; return c.dataset.state === "done" ? c.querySelector(".outputs").textContent : null;', i), 60000);
    return Number(/T ([0-9.]+)/.exec(c)[1]) * 1000;
  };
  const key = (shiftKey) => app.execute('document.activeElement?.blur(); window.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", shiftKey: arguments[0], ctrlKey: !arguments[0], bubbles: true})); return true;', shiftKey);
  const allowOnce = async () => {
    const id = windowOf(title);
    await new Promise((r) => setTimeout(r, 1000));
    spawnSync('xdotool', ['windowfocus', '--sync', id]);
    const t0 = Date.now();
    spawnSync('xdotool', ['key', grants ? 'alt+a' : 'Return']);
    return t0;
  };
  const batch = async (i, choose) => {
    await key(true);
    windowOf(title);
    await app.until('fifty pending requests', async () => (await invoke('approvals_pending')).length === 50, 30000);
    const t0 = await choose();
    try {
      return (await stamp(i)) - t0;
    } catch (e) {
      spawnSync('import', ['-window', 'root', '/tmp/bench-fail.png']);
      console.log(await app.execute('return document.querySelectorAll(".cell")[arguments[0]].textContent;', i));
      throw e;
    }
  };
  results.fifty_calls_one_batch_choice_ms = {
    panel_approve_all: round(await batch(0, async () => {
      const shown = await app.execute('const p = document.querySelector("#side-panel-approvals"); return !!p && !p.hidden && p.offsetParent !== null;');
      if (!shown) await app.click('#toggle-approvals');
      await app.until('the panel to list all fifty', () => app.execute('return document.querySelector(".approve-group")?.textContent.includes("50");'), 10000);
      await app.click('.approve-group[data-server="fx"][data-tool="echo"]');
      windowOf('Approve 50 tool calls?');
      const t0 = Date.now();
      answerDialog('Approve 50 tool calls?', 'Return');
      return t0;
    })),
  };
  const toStarted = [];
  for (let k = 0; k < 11; k++) {
    await key(false);
    const t0 = await allowOnce();
    const end = await stamp(1).catch(async (e) => {
      spawnSync('import', ['-window', 'root', '/tmp/bench-fail.png']);
      throw e;
    });
    const log = spawnSync(APP, ['audit', '--workspace', dir, '--json'], { encoding: 'utf8' }).stdout.trim().split('\n');
    const ran = JSON.parse(log[log.length - 1]).duration_ms;
    if (k > 0) toStarted.push(round(end - t0 - ran));
    await app.until('the cell to be ready again', () => app.execute('return document.querySelectorAll(".cell")[1].dataset.state === "done";'));
  }
  results.decision_to_tool_started_ms = { upper_bound_median: median(toStarted), min: Math.min(...toStarted), max: Math.max(...toStarted), n: toStarted.length };
  // On to the last cell: cell 1 once more, answered, then run-and-advance.
  await key(true);
  await allowOnce();
  await stamp(1);
  if (grants) {
    results.fifty_calls_one_batch_choice_ms.dialog_allow_for_session = round(await batch(2, async () => {
      const id = windowOf(title);
      await new Promise((r) => setTimeout(r, 1000));
      spawnSync('xdotool', ['windowfocus', '--sync', id]);
      const t0 = Date.now();
      spawnSync('xdotool', ['key', 'alt+s']);
      return t0;
    }));
  }
  await app.quit();
}

if (!only || only === 'endpoint') {
  // An agent on the app's own MCP endpoint: from its execute_ipython_cell request leaving the
  // client (and from the window's request being made) to the dialog mapped on screen.
  const { execFile } = await import('node:child_process');
  const { pathToFileURL } = await import('node:url');
  const sdk = join(ROOT, 'tests', 'servers', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'client');
  const { Client } = await import(pathToFileURL(join(sdk, 'index.js')).href);
  const { StreamableHTTPClientTransport } = await import(pathToFileURL(join(sdk, 'streamableHttp.js')).href);
  const visible = () => new Promise((resolve) => execFile('xdotool', ['search', '--onlyvisible', '--name', '^Approve tool call — fx.echo$'], (_, out) => resolve(String(out).trim() !== '')));
  const dir = fixtureWorkspace('1');
  const app = await App.launch(['open', join(dir, 'test.ipynb')], { env });
  await app.ready();
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  // Serving agents is confirmed natively, as a person would: answered while the call waits.
  const confirmed = answerDialogSoon('Serve agents on this workspace?', 'Return', 30);
  const state = await app.execute('return window.__TAURI_INTERNALS__.invoke("set_mcp_endpoint", { enabled: true, newToken: false });');
  await confirmed;
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(state.url), { requestInit: { headers: { Authorization: `Bearer ${state.token}` } } }));
  const fromClient = [];
  const fromRequest = [];
  for (let k = 0; k < 11; k++) {
    const sent = Date.now();
    const call = client.callTool({ name: 'execute_ipython_cell', arguments: { code: 'from mcptools.fx.echo import Params, run\nprint(run(Params(text="x")))' } }, undefined, { timeout: 60000 });
    let seen;
    for (const deadline = Date.now() + 30000; Date.now() < deadline;) {
      if (await visible()) { seen = Date.now(); break; }
    }
    const [request] = await app.execute('return window.__TAURI_INTERNALS__.invoke("approvals_pending", {});');
    if (k > 0 && seen) {
      fromClient.push(seen - sent);
      if (request) fromRequest.push(seen - request.asked_at);
    }
    answerDialog('Approve tool call — fx.echo', 'Return');
    await call;
  }
  const stats = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs), n: xs.length });
  results.agent_endpoint_call_to_dialog_visible_ms = { from_client: stats(fromClient), from_window_request: stats(fromRequest) };
  await client.close();
  await app.quit();
}

if (!only || only === 'block') {
  // A cell the sandbox blocked writing a folder, and one refused a domain: from its error
  // painted to the offer ("Allow writing …", "Allow DOMAIN") painted under it, in the page
  // (median of 10 runs of the same cell).
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const out = mkdtempSync(join(tmpdir(), 'ipybox-bench-out-'));
  const policy = { filesystem: { denyRead: ['~/.ssh'], allowWrite: ['.'], denyWrite: [] }, network: { allowedDomains: [], deniedDomains: [] } };
  // The second cell is refused a domain by srt's proxy: each run asks for another host, so its
  // offer names another domain.
  // (The error names the host too: each run's error differs from the last one's.)
  const netCode = 'import uuid, urllib.request\nh = f"b{uuid.uuid4().hex[:12]}.example.com"\ntry:\n    urllib.request.urlopen(f"http://{h}/", timeout=10)\nexcept OSError as e:\n    raise RuntimeError(h) from e';
  const dir = workspace({ 'bench.ipynb': notebook(`import uuid\nopen(${JSON.stringify(out)} + f"/{uuid.uuid4()}.csv", "w")`, netCode), 'sandbox-config.json': policy });
  const app = await App.launch(['open', join(dir, 'bench.ipynb')], { env });
  await app.ready();
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  const asked = answerDialogSoon('Use this sandbox policy?', 'Return', 30);
  await app.execute('return window.__TAURI_INTERNALS__.invoke("apply_sandbox", { choice: { sandbox: true, policy: { kind: "workspace" } } }).then(() => true);');
  await asked;
  await app.until('the sandboxed kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  const BLOCK_TO_OFFER = `
    const done = arguments[1];
    const cell = document.querySelectorAll('.cell')[arguments[0]];
    cell.dispatchEvent(new MouseEvent('mousedown', {bubbles: true}));
    window.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', bubbles: true}));
    // The last run's error and offer stay until this run's replace them; each run writes a
    // file of another name, so its error and its offer say another path.
    const text = (css) => cell.querySelector(css)?.textContent ?? '';
    const oldError = text('.output[data-output-type="error"]');
    const oldOffer = text('.sandbox-block-line');
    let error;
    const obs = new MutationObserver(() => {
      const t = performance.now();
      const now = text('.output[data-output-type="error"]');
      if (error === undefined && now && now !== oldError) error = t;
      const offer = cell.querySelector('.sandbox-block');
      if (error !== undefined && offer && !offer.hidden && text('.sandbox-block-line') !== oldOffer) {
        obs.disconnect();
        requestAnimationFrame(() => done(performance.now() - error));
      }
    });
    obs.observe(cell, {subtree: true, childList: true, attributes: true});
    window.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', ctrlKey: true, bubbles: true}));
  `;
  const blockTimes = async (index) => {
    const times = [];
    for (let k = 0; k < 11; k++) {
      const ms = await executeAsync(app, BLOCK_TO_OFFER, index).catch(async (e) => {
        console.log(await app.execute('const c = document.querySelectorAll(".cell")[arguments[0]]; return [document.querySelector("#sandbox-policy-status")?.textContent, c.dataset.state, c.textContent.slice(-400)];', index));
        throw e;
      });
      if (k > 0) times.push(ms);
      // The offer can come before the run ends: the next run waits for it, or it would be
      // queued behind a failing one (and not run).
      await app.until('the run to end', () => app.execute('return document.querySelectorAll(".cell")[arguments[0]].dataset.state === "failed";', index), 30000);
    }
    return { median: round(median(times)), min: round(Math.min(...times)), max: round(Math.max(...times)), n: times.length };
  };
  results.block_to_suggestion_painted_ms = await blockTimes(0);
  // A refused domain: srt's record reaches ipybox before the cell's error does, so the offer
  // is painted with the error or before it (0 then).
  results.net_block_to_suggestion_painted_ms = await blockTimes(1);
  await app.quit();
}

console.log(JSON.stringify(results, null, 2));
