/**
 * The fake backend's kernel: what a cell's code produces, recognized by its shape — printed
 * lines (a fast loop of them too), a traceback, input(), sleep() that Interrupt stops, a
 * tqdm-like progress line, a plot, a pandas table (with hostile HTML when asked), display
 * updates, clear_output, arithmetic as a result, and `call_tool(...)` / `!command` lines
 * that go through approval.
 */

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export type Send = (event: Json) => void;

export interface ExecContext {
  /** The execution's id, as session events name it. */
  id: string;
  /** Where the code comes from, as the UI said ("cell 2 of analysis.ipynb"). */
  origin: string | null;
  code: string;
  count: number;
  send: Send;
  outputs(...outputs: Json[]): void;
  waitForInput(prompt: string, password?: boolean): Promise<string>;
  sleep(ms: number): Promise<void>;
  cancelled(): boolean;
  /** Whether Interrupt was pressed since last asked (asking clears it). */
  interrupted(): boolean;
  /** What the fake server received last from a question, as its tool returns it. */
  received(): string;
  /** How long a run takes at least (the mock's `runMs`). */
  runMs: number;
  /** A tool call as the backend handles it: rules, else ask (and wait up to the approval timeout). */
  callTool(server: string, tool: string, args: Json): Promise<ToolVerdict>;
}

export interface ToolVerdict {
  decision: 'approved' | 'rejected' | 'timed_out';
  reason: string | null;
}

const PNG_DOT =
  'iVBORw0KGgoAAAANSUhEUgAAAGAAAABACAIAAABqVuVZAAABQklEQVR42u3byxGDMAwEUDpJI/SVxtKfc8kpMxh/ZO2uWQ13pHfwAFqO4qrWYQIDGQgCdJ6ndQxkIAMZyEAGMtCvXu/P1fV0oAqNOlMAUKOOqNEsUOPwukZTQL0zKxqNA41NK2c0CDQzp5bRCND8hEJG3UBRs6kYDQKF3HtDoPCR+I06gBYNQ27UCrTuyCA/jPqAFjUhD5QwAK3RPVBa65xGBpoDSm6a0KgGBGmXzYgUiMfoBgjSkwwQsC2g0d99edc+JCeggWSBSB4y2Der8MdUA4kDwV+VNcILwI8tBtoCqOA++CrlgyArAz2g2KXTVkAFsbbUi+AlL74lM4qZ0QnVEGda+EY45ZoT39KOAScEAOVz0ldR0agI6Q5B8qUB232S9ouyx3v+ihD4RuJ/NQxkIAOxAj22moBcBjKQgQyEry9Ly9mIIkbDxQAAAABJRU5ErkJggg==';

const TABLE_HTML = `<div>
<style scoped>.dataframe tbody tr th { vertical-align: top; } body { background: red; }</style>
<table border="1" class="dataframe">
  <thead><tr style="text-align: right;"><th></th><th>city</th><th>mean_temp</th><th>rainy_days</th></tr></thead>
  <tbody>
    <tr><th>0</th><td>Berlin</td><td>10.4</td><td>164</td></tr>
    <tr><th>1</th><td>Lisbon</td><td>17.6</td><td>98</td></tr>
    <tr><th>2</th><td>Zürich</td><td>9.8</td><td>131</td></tr>
  </tbody>
</table>
</div>`;

const TRACEBACK = [
  '\u001b[31m---------------------------------------------------------------------------\u001b[39m',
  '\u001b[31mZeroDivisionError\u001b[39m                         Traceback (most recent call last)',
  '\u001b[36mCell\u001b[39m\u001b[36m \u001b[39m\u001b[32mIn[{n}]\u001b[39m\u001b[32m, line 1\u001b[39m\n\u001b[32m----> \u001b[39m\u001b[32m1\u001b[39m \u001b[32;43m1\u001b[39;49m\u001b[43m/\u001b[49m\u001b[32;43m0\u001b[39;49m\n',
  '\u001b[31mZeroDivisionError\u001b[39m: division by zero',
];

function stream(text: string, name: 'stdout' | 'stderr' = 'stdout'): Json {
  return { type: 'stream', name, text };
}

/** `call_tool("server", "tool", {json})` and `!command` lines: tool calls through approval. */
async function toolLines(ctx: ExecContext): Promise<'failed' | null> {
  for (const line of ctx.code.split('\n')) {
    const t = /^\s*call_tool\(\s*"([^"]+)"\s*,\s*"([^"]+)"\s*,\s*(\{.*\})\s*\)\s*$/.exec(line);
    const shell = /^\s*!(.+)$/.exec(line);
    if (!t && !shell) continue;
    const [server, tool, args] = t ? [t[1] ?? '', t[2] ?? '', JSON.parse(t[3] ?? '{}') as Json] : ['ipybox', 'shell', { command: (shell?.[1] ?? '').trim() }];
    const verdict = await ctx.callTool(server, tool, args);
    if (verdict.decision === 'approved') {
      ctx.outputs(stream(shell ? `(ran ${String(isRecord(args) ? args.command : '')})\n` : `${server}.${tool} answered\n`));
      if (tool === 'ask') ctx.outputs(stream(`server received: ${ctx.received()}\n`));
      continue;
    }
    if (shell) {
      ctx.outputs({ type: 'error', ename: 'ShellCommandRejected', evalue: `the shell command was not approved: ${verdict.reason ?? 'rejected'} (it did not run)`, traceback: [`ShellCommandRejected: the shell command was not approved: ${verdict.reason ?? 'rejected'} (it did not run)`] });
    } else {
      const ename = verdict.decision === 'timed_out' ? 'ApprovalTimeout' : 'ApprovalRejected';
      ctx.outputs({ type: 'error', ename, evalue: `${server}.${tool}: ${verdict.reason ?? 'rejected'}`, traceback: [`${ename}: ${server}.${tool}: ${verdict.reason ?? 'rejected'}`] });
    }
    return 'failed';
  }
  return null;
}

export async function demoKernel(ctx: ExecContext): Promise<'finished' | 'failed'> {
  const code = ctx.code;
  let m: RegExpExecArray | null;
  if (/call_tool\(|^\s*!/m.test(code)) {
    const failed = await toolLines(ctx);
    if (failed) return failed;
  }
  if ((m = /range\((\d+)\)/.exec(code)) && /print/.test(code)) {
    // A fast loop printing n lines (about a million lines a second), delivered as the backend
    // does: one `outputs` event per frame (~16 ms) with everything printed meanwhile.
    const n = Number(m[1]);
    const perFrame = 16000;
    for (let start = 0; start < n; start += perFrame) {
      await ctx.sleep(16);
      if (ctx.cancelled()) return 'failed';
      let text = '';
      for (let i = start; i < Math.min(n, start + perFrame); i++) text += `line ${i}\n`;
      ctx.outputs(stream(text));
    }
    return 'finished';
  }
  if (/1\s*\/\s*0/.test(code)) {
    ctx.outputs({ type: 'error', ename: 'ZeroDivisionError', evalue: 'division by zero', traceback: TRACEBACK.map((l) => l.replace('{n}', String(ctx.count))) });
    return 'failed';
  }
  if ((m = /input\((["'])(.*?)\1\)/.exec(code))) {
    const value = await ctx.waitForInput(m[2] ?? '', /getpass/.test(code));
    ctx.outputs(stream(`Hello, ${value}!\n`));
    return 'finished';
  }
  if (/sleep\((\d+(?:\.\d+)?)\)/.test(code)) {
    const secs = Number(/sleep\((\d+(?:\.\d+)?)\)/.exec(code)?.[1] ?? '1');
    const until = Date.now() + secs * 1000;
    while (Date.now() < until) {
      if (ctx.interrupted() || ctx.cancelled()) {
        ctx.outputs({ type: 'error', ename: 'KeyboardInterrupt', evalue: '', traceback: ['\u001b[31mKeyboardInterrupt\u001b[39m: '] });
        return 'failed';
      }
      await ctx.sleep(20);
    }
  }
  if (/tqdm/.test(code)) {
    for (let i = 0; i <= 10; i++) {
      const bar = '█'.repeat(i) + ' '.repeat(10 - i);
      ctx.outputs(stream(`\r${i * 10}%|${bar}| ${i}/10`, 'stderr'));
      await ctx.sleep(15);
    }
    ctx.outputs(stream('\n', 'stderr'));
  }
  if (/plt\.|plot\(/.test(code)) {
    ctx.outputs({ type: 'display_data', data: { 'image/png': PNG_DOT, 'text/plain': '<Figure size 480x320 with 1 Axes>' }, metadata: { 'image/png': { width: 96, height: 64 } } });
  }
  if (/HTML|to_html|df\b/.test(code)) {
    const extra = /script/.test(code)
      ? '<script>window.__scriptRan = true;</script><img src="x" onerror="window.__onerrorRan = true"><img src="https://example.invalid/track.png" alt="remote"><a href="javascript:window.__jsLinkRan=true">link</a>'
      : '';
    ctx.outputs({ type: 'execute_result', execution_count: ctx.count, data: { 'text/html': TABLE_HTML + extra, 'text/plain': '     city  mean_temp  rainy_days\n0  Berlin  10.4  164' }, metadata: {} });
  }
  if (/display_id/.test(code)) {
    ctx.outputs({ type: 'display_data', data: { 'text/plain': 'progress: 0%' }, metadata: {}, display_id: 'p1' });
    await ctx.sleep(20);
    ctx.outputs({ type: 'update_display_data', display_id: 'p1', data: { 'text/plain': 'progress: 100%' }, metadata: {} });
  }
  if (/clear_output/.test(code)) {
    for (let i = 1; i <= 3; i++) {
      ctx.outputs({ type: 'clear_output', wait: true }, stream(`step ${i} of 3\n`));
      await ctx.sleep(15);
    }
  }
  // A frame a variable holds, shown as the cell's result: the kernel names the variable in
  // the result's metadata (as `ipybox_variables` does), and the window offers "Open in grid".
  const shown = /^([A-Za-z_]\w*)$/.exec(code.trim().split('\n').pop()?.trim() ?? '')?.[1];
  if (shown === 'sales') {
    ctx.outputs({ type: 'execute_result', execution_count: ctx.count, data: { 'text/html': TABLE_HTML, 'text/plain': '   n  g  v  s\n0  0  0  NA  even' }, metadata: { ipybox: { frame: shown } } });
  }
  const printRe = /print\((["'])(.*?)\1\)/g;
  while ((m = printRe.exec(code)) !== null) ctx.outputs(stream(`${m[2] ?? ''}\n`));
  const last = code.trim().split('\n').pop() ?? '';
  if ((m = /^(\d+)\s*([+*-])\s*(\d+)$/.exec(last.trim()))) {
    const a = Number(m[1]);
    const b = Number(m[3]);
    const v = m[2] === '+' ? a + b : m[2] === '-' ? a - b : a * b;
    ctx.outputs({ type: 'execute_result', execution_count: ctx.count, data: { 'text/plain': String(v) }, metadata: {} });
  }
  await ctx.sleep(ctx.runMs);
  return 'finished';
}
