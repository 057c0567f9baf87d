// The MCP servers tab: the form (checked as typed, filled from pasted JSON), Test connection
// (tools, or a failing server's stderr), saving, each server's tools with their generated
// interface, Regenerate, the sandbox switch, Remove, and the live status from session events.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { contrastOffenders, tabWalk, useApp } from './harness.mjs';

const { app } = useApp({ before, after }, { notebook: null });

const calls = (page, cmd) => page.evaluate((c) => window.__mock.calls.filter((x) => x.cmd === c).map((x) => x.args), cmd);
const text = (page, sel) => page.locator(sel).textContent();

async function openTab(page) {
  await page.click('#toggle-approvals');
  await page.click('#side-tab-servers');
  await page.waitForSelector('#mcp-servers');
}

describe('the MCP servers tab', () => {
  it('checks the form as it is typed, explains placeholders, and sends nothing invalid', async () => {
    const { page, errors, close } = await app({ servers: { defined: ['API_KEY'] } });
    await openTab(page);
    await page.waitForSelector('#mcp-servers .panel-empty:not([hidden])');
    await page.click('#add-server');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'server-name', 'the name field has the focus');

    await page.fill('#server-name', 'brave-search');
    assert.match(await text(page, '#server-name-error'), /“-” cannot be in it/);
    assert.equal(await page.getAttribute('#server-name', 'aria-invalid'), 'true');
    await page.fill('#server-name', 'brave');
    assert.equal(await page.locator('#server-name-error').isVisible(), false);

    await page.fill('#server-command', 'npx -y @brave/brave-search-mcp-server');
    assert.match(await text(page, '#server-command-error'), /each of its arguments on a line of its own/);
    await page.fill('#server-command', 'npx');
    await page.fill('#server-args', '-y\n@brave/brave-search-mcp-server');
    await page.fill('#server-env', 'BRAVE_API_KEY=${API_KEY}\nOTHER=${MISSING}\nbad line');
    assert.match(await text(page, '#server-env-error'), /^Line 3: write one variable per line as NAME=value/);
    await page.waitForSelector('#server-placeholders li[data-placeholder="MISSING"]');
    assert.match(await text(page, '#server-placeholders li[data-placeholder="API_KEY"]'), /defined in the workspace’s .env/);
    assert.match(await text(page, '#server-placeholders li[data-placeholder="MISSING"]'), /not defined/);
    assert.match(await text(page, '#server-placeholders'), /not shown here/);

    await page.click('#save-server');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'server-env', 'the first field to fix gets the focus');
    await page.click('#test-server');
    assert.deepEqual(await calls(page, 'register_mcp_server'), []);
    assert.deepEqual(await calls(page, 'preview_mcp_server'), [], 'nothing invalid reaches the backend');

    // HTTP: URL and headers instead.
    await page.check('#server-transport-streamable_http');
    assert.equal(await page.locator('#server-command').isVisible(), false);
    await page.fill('#server-url', 'example.com/mcp');
    assert.match(await text(page, '#server-url-error'), /http:\/\/ or https:\/\//);
    await page.fill('#server-headers', 'Bearer x');
    assert.match(await text(page, '#server-headers-error'), /Name: value/);
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('#server-form').isVisible(), false, 'Escape closes the form');
    assert.deepEqual(errors, []);
    await close();
  });

  it('fills the form from a README’s JSON, tests the connection, saves, and shows tools with their interface', async () => {
    const { page, errors, close } = await app();
    await openTab(page);
    await page.click('#add-server');
    await page.click('.server-paste summary');
    await page.fill('#server-json', '{"mcpServers": {"everything-else": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "disabled": false}, "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}}');
    await page.click('#server-json-apply');
    assert.equal(await page.inputValue('#server-name'), 'everything_else', 'a name that can be a package');
    assert.equal(await page.inputValue('#server-command'), 'npx');
    assert.equal(await page.inputValue('#server-args'), '-y\n@modelcontextprotocol/server-everything');
    assert.match(await text(page, '#server-json-error'), /Left out \(ipybox does not use them\): disabled/);
    assert.equal(await page.locator('#server-json-pick').isVisible(), true, 'several servers: pick one');
    await page.selectOption('#server-json-pick', '1');
    assert.equal(await page.inputValue('#server-name'), 'fetch');
    await page.selectOption('#server-json-pick', '0');

    await page.fill('#server-json', '{"command": "npx", ');
    await page.click('#server-json-apply');
    assert.match(await text(page, '#server-json-error'), /not valid JSON/);
    assert.equal(await page.inputValue('#server-name'), 'everything_else', 'bad JSON loses nothing typed');

    await page.click('#test-server');
    await page.waitForSelector('.server-test-ok');
    assert.equal(await text(page, '.server-test-ok'), 'Connected: the server offers 1 tool.');
    assert.deepEqual(await calls(page, 'preview_mcp_server'), [{ params: { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] } }]);

    await page.click('#save-server');
    await page.waitForSelector('.server-card[data-server="everything_else"]');
    assert.equal(await page.locator('#server-form').isVisible(), false);
    const card = '.server-card[data-server="everything_else"]';
    assert.equal(await text(page, `${card} .server-params`), 'npx -y @modelcontextprotocol/server-everything');
    assert.equal(await page.getAttribute(card, 'data-state'), 'not_started');
    await page.click(`${card} .server-tool summary`);
    assert.match(await text(page, `${card} .server-interface`), /class Params\(BaseModel\):[\s\S]*message: str[\s\S]*def run\(params: Params\) -> str:/);
    assert.equal(await text(page, `${card} .server-import code`), 'from mcptools.everything_else.echo import Params, run');
    assert.equal(await page.getAttribute(`${card} .server-interface`, 'tabindex'), '0', 'the interface scrolls by keyboard');

    // Regenerate: the server offers one more tool now.
    await page.evaluate(() => window.__mock.growServer());
    await page.click(`${card} .server-regenerate`);
    await page.waitForFunction((c) => document.querySelector(`${c} .server-changes`)?.textContent.includes('added'), card);
    assert.equal(await text(page, `${card} .server-changes`), 'Regenerated: 1 tool added (add).');
    assert.equal(await page.locator(`${card} .server-tool`).count(), 2);
    assert.deepEqual(errors, []);
    await close();
  });

  it('a server that fails to start shows its stderr in words; the form keeps what was typed', async () => {
    const { page, close } = await app();
    await openTab(page);
    await page.click('#add-server');
    await page.fill('#server-name', 'broken');
    await page.fill('#server-command', 'crash-server');
    await page.click('#test-server');
    await page.waitForSelector('#server-test-result .server-stderr');
    assert.match(await text(page, '#server-test-result'), /The connection failed:[\s\S]*ValueError: BOOM is not set/);
    await page.click('#save-server');
    await page.waitForSelector('#server-form-error:not([hidden])');
    assert.match(await text(page, '#server-form-error'), /^Not saved: .*exited before it answered/);
    assert.equal(await page.inputValue('#server-command'), 'crash-server', 'nothing typed is lost');
    await close();
  });

  it('shows each server live: running, crashed with its stderr, and stopped on a reset; switches the sandbox; removes', async () => {
    const { page, errors, close } = await app({ servers: { registered: { fx: { command: 'ipybox-fixture-mcp' }, web: { type: 'streamable_http', url: 'https://h/mcp' } } } });
    await openTab(page);
    const card = '.server-card[data-server="fx"]';
    await page.waitForSelector(card);
    await page.evaluate(() => window.__mock.emitSession({ type: 'mcp_server_started', server: 'fx' }));
    await page.waitForSelector(`${card}[data-state="running"]`);
    assert.equal(await text(page, `${card} .server-state`), 'Running');
    // What the server logs (MCP logging) shows on its card, as text, the last few lines.
    assert.equal(await page.isHidden(`${card} .server-log`), true, 'nothing logged, nothing shown');
    await page.evaluate(() => {
      for (let i = 1; i <= 6; i++) window.__mock.emitSession({ type: 'mcp_server_log', server: 'fx', level: 'info', message: `step ${i}` });
      window.__mock.emitSession({ type: 'mcp_server_log', server: 'fx', level: 'warning', message: '<img src=x onerror=alert(1)>\u202e' });
    });
    await page.waitForFunction((c) => document.querySelector(`${c} .server-log`)?.textContent.includes('warning'), card);
    assert.equal(await text(page, `${card} .server-log`), 'info: step 3\ninfo: step 4\ninfo: step 5\ninfo: step 6\nwarning: <img src=x onerror=alert(1)>\\u202e');
    assert.equal(await page.locator(`${card} .server-log img`).count(), 0, 'never HTML');
    await page.evaluate(() => window.__mock.emitSession({ type: 'mcp_server_exited', server: 'fx', stderr: 'panic: out of cheese\n' }));
    await page.waitForSelector(`${card}[data-state="crashed"]`);
    assert.match(await text(page, `${card} .server-state`), /^Crashed/);
    assert.equal(await text(page, `${card} .server-stderr`), 'panic: out of cheese');
    await page.evaluate(() => window.__mock.emitSession({ type: 'kernel_replaced', reason: 'restart' }));
    await page.waitForSelector(`${card}[data-state="not_started"]`);

    // The sandbox switch re-registers under srt with the mcp-server profile.
    assert.equal(await page.isDisabled('.server-card[data-server="web"] .server-sandbox-switch'), true, 'an HTTP server cannot be sandboxed');
    await page.click(`${card} .server-sandbox-switch`);
    await page.waitForFunction((c) => document.querySelector(`${c} .server-changes`)?.textContent.startsWith('Now sandboxed'), card);
    assert.deepEqual((await calls(page, 'register_mcp_server')).at(-1), { name: 'fx', params: { type: 'stdio', command: 'srt', args: ['--settings', 'ipybox:mcp-server', 'ipybox-fixture-mcp'] } });
    assert.match(await text(page, `${card} .server-switch-label`), /Sandboxed with ipybox’s mcp-server profile/);
    assert.equal(await text(page, `${card} .server-params`), 'ipybox-fixture-mcp', 'the command is shown without srt');

    // Remove asks in place, by keyboard too.
    await page.focus(`${card} .server-remove`);
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement?.className), 'button button-danger server-remove-yes');
    await page.keyboard.press('Enter');
    await page.waitForSelector(card, { state: 'detached' });
    assert.deepEqual(await calls(page, 'unregister_mcp_server'), [{ name: 'fx' }]);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'add-server');
    assert.deepEqual(errors, []);
    await close();
  });

  it('is reachable by keyboard alone: the tab, the form, Test connection and Save', async () => {
    const { page, errors, close } = await app();
    await page.click('#toggle-approvals');
    await page.focus('#side-tab-approvals');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'side-tab-servers');
    assert.equal(await page.getAttribute('#side-tab-servers', 'aria-selected'), 'true');
    // Tab from the tab list: the close button, then the tab's first control.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'add-server');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'server-name');
    await page.keyboard.type('kb');
    await page.keyboard.press('Tab'); // the stdio radio (checked)
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'server-transport-stdio');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'server-command');
    await page.keyboard.type('uvx');
    await page.keyboard.press('Tab');
    await page.keyboard.type('mcp-server-fetch');
    // The accessible names: every field is labelled.
    for (const id of ['server-name', 'server-command', 'server-args', 'server-env', 'server-sandbox']) {
      assert.equal(await page.evaluate((i) => document.querySelector(`label[for="${i}"]`) !== null, id), true, `${id} has a label`);
    }
    await page.focus('#test-server');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.server-test-ok');
    await page.focus('#save-server');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.server-card[data-server="kb"]');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Regenerate the tools of kb', 'the focus stays in the new server');
    assert.deepEqual(errors, []);
    await close();
  });

  it('Edit opens the form on a server as given (a sandboxed one with its profile, not the pinned copy); renaming replaces it', async () => {
    const registered = { fx: { type: 'stdio', command: 'srt', args: ['--settings', 'ipybox:mcp-offline', 'ipybox-fixture-mcp', 'stdio'], env: { MODE: '${MODE}' } } };
    const { page, errors, close } = await app({ servers: { registered } });
    await openTab(page);
    const card = '.server-card[data-server="fx"]';
    await page.waitForSelector(card);
    assert.match(await text(page, `${card} .server-switch-label`), /Sandboxed with ipybox’s mcp-offline profile/);
    await page.click(`${card} .server-edit`);
    assert.equal(await text(page, '#server-form-title'), 'Edit fx');
    assert.equal(await page.inputValue('#server-command'), 'ipybox-fixture-mcp');
    assert.equal(await page.inputValue('#server-args'), 'stdio');
    assert.equal(await page.inputValue('#server-env'), 'MODE=${MODE}');
    assert.equal(await page.isChecked('#server-sandbox'), true);
    assert.equal(await page.inputValue('#server-policy'), 'ipybox:mcp-offline');
    assert.equal(await page.locator('#server-name-note').isVisible(), false, 'its own name is no clash');
    await page.fill('#server-name', 'fixture');
    await page.click('#save-server');
    await page.waitForSelector('.server-card[data-server="fixture"]');
    await page.waitForSelector(card, { state: 'detached' });
    assert.deepEqual(await calls(page, 'register_mcp_server'), [
      { name: 'fixture', params: { type: 'stdio', command: 'srt', args: ['--settings', 'ipybox:mcp-offline', 'ipybox-fixture-mcp', 'stdio'], env: { MODE: '${MODE}' } } },
    ]);
    assert.deepEqual(await calls(page, 'unregister_mcp_server'), [{ name: 'fx' }]);
    assert.deepEqual(errors, []);
    await close();
  });

  for (const colorScheme of ['light', 'dark']) {
    it(`every text reads against its background in ${colorScheme} mode (WCAG contrast)`, async () => {
      const { page, errors, close } = await app({ servers: { reshaped: true, defined: ['API_KEY'], registered: { fx: { command: 'ipybox-fixture-mcp' }, web: { type: 'streamable_http', url: 'https://h/mcp' } } } }, { colorScheme });
      await openTab(page);
      const card = '.server-card[data-server="fx"]';
      await page.waitForSelector(card);
      // Every kind of text the tab shows at once: a crash with its stderr, what Regenerate
      // changed, a tool's interface, the remove question, and the form with its errors,
      // placeholders and a failed connection test.
      await page.evaluate(() => window.__mock.emitSession({ type: 'mcp_server_exited', server: 'fx', stderr: 'panic: out of cheese\n' }));
      await page.waitForSelector(`${card}[data-state="crashed"]`);
      await page.click(`${card} .server-regenerate`);
      await page.waitForSelector(`${card} .server-changes:not([hidden])`);
      await page.click(`${card} .server-tool summary`);
      await page.click('.server-card[data-server="web"] .server-remove');
      await page.click('#add-server');
      await page.click('.server-paste summary');
      await page.fill('#server-json', '{"command": ');
      await page.click('#server-json-apply');
      await page.fill('#server-name', 'bad-name');
      await page.fill('#server-command', 'crash-server');
      await page.fill('#server-env', 'KEY=${API_KEY}\nOTHER=${MISSING}');
      await page.check('#server-sandbox');
      await page.waitForSelector('#server-placeholders li[data-placeholder="MISSING"]');
      await page.fill('#server-name', 'broken');
      await page.click('#test-server');
      await page.waitForSelector('#server-test-result .server-stderr');
      await page.fill('#server-name', 'bad-name');
      for (const shown of [`${card} .server-signature-before del >> nth=0`, `${card} .server-signature-after ins >> nth=0`, '#server-name-error', '#server-json-error', '.server-card[data-server="web"] .server-remove-yes', `${card} .server-interface >> nth=0`, `${card} .server-stderr`]) {
        assert.equal(await page.locator(shown).isVisible(), true, `${shown} is on screen to be checked`);
      }
      const offenders = await contrastOffenders(page, '#side-panel-servers');
      assert.deepEqual(offenders, [], `too little contrast in ${colorScheme} mode:\n${offenders.join('\n')}`);
      assert.deepEqual(errors, []);
      await close();
    });
  }

  it('a policy file picked with the native dialog: inside the workspace it is written relative, outside as it is', async () => {
    const workspace = '/home/ana/projects/weather';
    for (const [picked, written] of [[`${workspace}/policies/mcp.json`, 'policies/mcp.json'], ['/etc/ipybox/mcp.json', '/etc/ipybox/mcp.json']]) {
      const { page, errors, close } = await app({ workspace, policy: { pick: picked } });
      await openTab(page);
      await page.click('#add-server');
      await page.fill('#server-name', 'fx');
      await page.fill('#server-command', 'ipybox-fixture-mcp');
      await page.check('#server-sandbox');
      assert.equal(await page.locator('#server-policy-pick').isVisible(), false, 'no picker for a shipped profile');
      await page.selectOption('#server-policy', 'file');
      await page.click('#server-policy-pick');
      await page.waitForFunction((w) => document.querySelector('#server-policy-file')?.value === w, written);
      const [open] = await calls(page, 'plugin:dialog|open');
      assert.equal(open.options.directory, false, 'a file picker');
      assert.equal(open.options.defaultPath, workspace, 'it opens in the workspace');
      await page.click('#save-server');
      await page.waitForSelector('.server-card[data-server="fx"]');
      assert.deepEqual((await calls(page, 'register_mcp_server')).map((c) => c.params.args), [['--settings', written, 'ipybox-fixture-mcp']]);
      assert.deepEqual(errors, []);
      await close();
    }
  });

  it('Tab reaches every control of the tab — the form, the cards, a tool opened — each named for a screen reader', async () => {
    const { page, close } = await app({ servers: { registered: { fx: { command: 'ipybox-fixture-mcp' }, web: { type: 'streamable_http', url: 'https://h/mcp' } } } });
    await openTab(page);
    const card = '.server-card[data-server="fx"]';
    await page.waitForSelector(card);
    await page.click(`${card} .server-tool summary`);
    await page.click('.server-card[data-server="web"] .server-remove');
    await page.click('#add-server');
    await page.click('.server-paste summary');
    await page.check('#server-sandbox');
    await page.selectOption('#server-policy', 'file');
    const { stops, missed } = await tabWalk(page, '#side-panel-servers', '#side-tab-servers');
    const ids = stops.map((s) => s.id);
    assert.deepEqual(missed, [], `controls Tab never reaches: ${missed.join(', ')}`);
    const unnamed = stops.filter((s) => s.name === '');
    assert.deepEqual(unnamed, [], `controls with no accessible name: ${unnamed.map((s) => s.id).join(', ')}`);
    const seen = new Map();
    for (const s of stops) seen.set(`${s.role} “${s.name}”`, [...(seen.get(`${s.role} “${s.name}”`) ?? []), s.id]);
    const twice = [...seen].filter(([, at]) => at.length > 1).map(([name, at]) => `${name}: ${at.join(', ')}`);
    assert.deepEqual(twice, [], `controls a screen reader cannot tell apart:\n${twice.join('\n')}`);
    const expected = ['#add-server', '#server-json', '#server-json-apply', '#server-name', '#server-command', '#server-args', '#server-env', '#server-sandbox', '#server-policy', '#server-policy-file', '#server-policy-pick', '#test-server', '#save-server', '#cancel-server', '#server-fx-sandbox'];
    for (const id of expected) assert.ok(ids.includes(id), `Tab reaches ${id}; it stopped at: ${ids.join(', ')}`);
    const order = expected.map((id) => ids.indexOf(id));
    assert.ok(order.slice(1).every((at, i) => at > order[i]), `in reading order: ${ids.join(', ')}`);
    for (const name of ['Regenerate the tools of fx', 'Edit fx', 'Remove fx', 'Remove web', 'Keep web', 'Copy “from mcptools.fx.echo import Params, run”', 'Generated Params, Result and run of echo']) {
      assert.ok(stops.some((s) => s.name === name), `a stop named “${name}”: ${stops.map((s) => s.name).join(' | ')}`);
    }
    await close();
  });

  it('Regenerate lists each tool added and removed, and a changed one’s signature before and after', async () => {
    const { page, errors, close } = await app({ servers: { reshaped: true, registered: { fx: { command: 'ipybox-fixture-mcp' } } } });
    await openTab(page);
    const card = '.server-card[data-server="fx"]';
    await page.waitForSelector(`${card} .server-tool[data-tool="subtract"]`);
    await page.click(`${card} .server-regenerate`);
    await page.waitForSelector(`${card} .server-change-list`);
    assert.equal(await text(page, `${card} .server-changes`), 'Regenerated: 1 tool added (add); 1 removed (subtract); 1 signature changed (echo).');
    const change = (kind, tool) => `${card} .server-change[data-change="${kind}"][data-tool="${tool}"]`;
    assert.match(await text(page, change('added', 'add')), /^Added: add/);
    assert.match(await text(page, `${change('added', 'add')} .server-signature`), /a: float\n\s+b: float\ndef run\(params: Params\) -> str:/, 'an added tool shows its signature');
    assert.equal(await text(page, change('removed', 'subtract')), 'Removed: subtract — cells importing mcptools.fx.subtract fail now.');
    const before = `${change('changed', 'echo')} .server-signature-before`;
    const after = `${change('changed', 'echo')} .server-signature-after`;
    assert.equal(await text(page, before), 'class Params(BaseModel):\n    message: str = Field(..., description="Message to echo")\ndef run(params: Params) -> str:\n', 'the old signature, without docstrings');
    assert.match(await text(page, after), /^class Params\(BaseModel\):\n    message: str[^\n]*\n    times: int = 1\nclass Result\(BaseModel\):\n    echoed: str\ndef run\(params: Params\) -> Result:\n$/);
    assert.deepEqual(await page.locator(`${before} del`).allTextContents(), ['def run(params: Params) -> str:'], 'what is gone is marked');
    assert.deepEqual(await page.locator(`${after} ins`).allTextContents(), ['    times: int = 1', 'class Result(BaseModel):', '    echoed: str', 'def run(params: Params) -> Result:'], 'what is new is marked');
    assert.equal(await page.getAttribute(before, 'aria-label'), 'echo before');
    assert.equal(await page.getAttribute(before, 'tabindex'), '0', 'scrolls by keyboard');
    // The list re-read shows what the server offers now.
    assert.deepEqual(await page.locator(`${card} .server-tool`).evaluateAll((els) => els.map((e) => e.dataset.tool)), ['echo', 'add']);
    // Regenerating again changes nothing, and says so without a list.
    await page.click(`${card} .server-regenerate`);
    await page.waitForFunction((c) => document.querySelector(`${c} .server-changes`)?.textContent.includes('No tool'), card);
    assert.equal(await page.locator(`${card} .server-change-list`).count(), 0);
    assert.deepEqual(errors, []);
    await close();
  });

  it('says how a server ended, from its exit status: crashed with its code, killed by a signal, or exited', async () => {
    const { page, errors, close } = await app({ servers: { registered: { fx: { command: 'ipybox-fixture-mcp' } } } });
    await openTab(page);
    const card = '.server-card[data-server="fx"]';
    await page.waitForSelector(card);
    const exit = (stderr, exit) => page.evaluate(([stderr, exit]) => window.__mock.emitSession({ type: 'mcp_server_exited', server: 'fx', stderr, ...(exit ? { exit } : {}) }), [stderr, exit]);
    const started = () => page.evaluate(() => window.__mock.emitSession({ type: 'mcp_server_started', server: 'fx' }));
    // Nothing on stderr, but exit code 3: a crash all the same.
    await started();
    await exit('', { code: 3 });
    await page.waitForSelector(`${card}[data-state="crashed"]`);
    assert.equal(await text(page, `${card} .server-state`), 'Crashed (exit code 3; it starts again on its next call)');
    assert.equal(await page.locator(`${card} .server-stderr`).isVisible(), false, 'no stderr to show');
    await started();
    await exit('', { signal: 9 });
    await page.waitForFunction((c) => document.querySelector(`${c} .server-state`)?.textContent.startsWith('Killed'), card);
    assert.equal(await text(page, `${card} .server-state`), 'Killed by signal 9, SIGKILL (it starts again on its next call)');
    assert.equal(await page.getAttribute(card, 'data-state'), 'crashed');
    // Exit code 0 is an exit, even with words on stderr.
    await started();
    await exit('shutting down\n', { code: 0 });
    await page.waitForSelector(`${card}[data-state="exited"]`);
    assert.equal(await text(page, `${card} .server-state`), 'Exited (it starts again on its next call)');
    assert.equal(await text(page, `${card} .server-stderr`), 'shutting down');
    assert.deepEqual(errors, []);
    await close();
  });
});

describe('a server name that cannot be used as typed', () => {
  it('"Echo tools" meets the suggestion echo_tools, taken with one click', async () => {
    const { page, errors, close } = await app();
    await openTab(page);
    await page.click('#add-server');
    await page.fill('#server-name', 'Echo tools');
    assert.match(await text(page, '#server-name-error'), /^A server’s name is letters, digits and underscores, starting with a letter \(code uses its tools as mcptools\.NAME\): “a space” cannot be in it\.$/);
    await page.waitForSelector('#server-name-suggestion:not([hidden])');
    assert.equal(await text(page, '#server-name-suggestion'), 'Use a name like echo_tools');
    await page.click('#server-name-use');
    assert.equal(await page.inputValue('#server-name'), 'echo_tools');
    assert.equal(await page.locator('#server-name-error').isVisible(), false);
    assert.equal(await page.locator('#server-name-suggestion').isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'server-name', 'the name field keeps the focus');
    assert.deepEqual(errors, []);
    await close();
  });
});
