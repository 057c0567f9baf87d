import { describe, expect, it } from 'vitest';
import {
  ServerStatuses,
  checkForm,
  checkName,
  compareSignatures,
  describeChanges,
  describeSource,
  describeState,
  emptyForm,
  formFromParams,
  parsePasted,
  scanPlaceholders,
  suggestName,
  type ServerForm,
} from '../../src/model/serverForm';

const stdio = (over: Partial<ServerForm> = {}): ServerForm => ({ ...emptyForm(), name: 'everything', command: 'npx', args: '-y\n@modelcontextprotocol/server-everything', ...over });
const http = (over: Partial<ServerForm> = {}): ServerForm => ({ ...emptyForm(), name: 'remote', transport: 'streamable_http', url: 'https://example.com/mcp', ...over });

describe('the server name', () => {
  it('must become a Python package name, and says why not', () => {
    expect(checkName('github')).toBeNull();
    expect(checkName('brave_search2')).toBeNull();
    expect(checkName('')).toMatch(/Give the server a name/);
    expect(checkName('brave-search')).toMatch(/“-” cannot be in it/);
    expect(checkName('my server')).toMatch(/a space/);
    expect(checkName('2fa')).toMatch(/cannot start with a digit/);
    expect(checkName('_private')).toMatch(/cannot start with a digit or an underscore/);
    expect(checkName('class')).toMatch(/Python keyword/);
    expect(checkName('ipybox')).toMatch(/reserved/);
  });

  it('a name from a pasted map becomes a valid one', () => {
    expect(suggestName('brave-search')).toBe('brave_search');
    expect(suggestName('@scope/server')).toBe('scope_server');
    expect(suggestName('import')).toBe('import_server');
    expect(checkName(suggestName('1-click tools'))).toBeNull();
  });

  it('a registered name is a note, not an error: saving replaces it', () => {
    const c = checkForm(stdio(), ['everything']);
    expect(c.errors).toEqual({});
    expect(c.notes.name).toMatch(/saving replaces it/);
    expect(c.params).not.toBeNull();
  });
});

describe('a stdio server', () => {
  it('becomes command, one argument per line and the environment', () => {
    const c = checkForm(stdio({ env: 'API_KEY=${API_KEY}\nMODE=fast=yes\n\n' }));
    expect(c.errors).toEqual({});
    expect(c.params).toEqual({ type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: { API_KEY: '${API_KEY}', MODE: 'fast=yes' } });
    expect(c.placeholders).toEqual(['API_KEY']);
  });

  it('needs a command, and a command line typed into it is sent to the arguments', () => {
    expect(checkForm(stdio({ command: ' ' })).errors.command).toMatch(/Give the program/);
    const c = checkForm(stdio({ command: 'npx -y server', args: '' }));
    expect(c.errors.command).toMatch(/each of its arguments on a line of its own/);
    expect(c.params).toBeNull();
  });

  it('refuses environment lines that are not NAME=value, naming the line', () => {
    expect(checkForm(stdio({ env: 'A=1\nnot a pair' })).errors.env).toMatch(/^Line 2: write one variable per line as NAME=value/);
    expect(checkForm(stdio({ env: '1X=1' })).errors.env).toMatch(/“1X” is not a valid name/);
    expect(checkForm(stdio({ env: 'A=1\nA=2' })).errors.env).toMatch(/A is given twice/);
  });

  it('sandboxed, runs under srt with a shipped profile or a file, and reads back the same', () => {
    const c = checkForm(stdio({ sandbox: true }));
    expect(c.params).toEqual({ type: 'stdio', command: 'srt', args: ['--settings', 'ipybox:mcp-server', 'npx', '-y', '@modelcontextprotocol/server-everything'] });
    const back = formFromParams('everything', c.params ?? {});
    expect(back).toMatchObject({ sandbox: true, policy: 'ipybox:mcp-server', command: 'npx', args: '-y\n@modelcontextprotocol/server-everything' });
    expect(checkForm(stdio({ sandbox: true, policy: '' })).errors.policy).toMatch(/Choose the sandbox policy/);
    expect(checkForm(stdio({ sandbox: true, policy: '${P}.json' })).errors.policy).toMatch(/read once/);
    expect(checkForm(stdio({ sandbox: true, command: 'srt' })).errors.command).toMatch(/srt already/);
  });

  it('keeps a working directory it was registered with', () => {
    const form = formFromParams('fs', { command: 'uvx', args: ['x'], cwd: '${WORKSPACE}' });
    expect(checkForm(form).params).toEqual({ type: 'stdio', command: 'uvx', args: ['x'], cwd: '${WORKSPACE}' });
  });
});

describe('an HTTP server', () => {
  it('becomes a URL and headers, placeholders allowed in both', () => {
    const c = checkForm(http({ url: 'https://${HOST}/mcp', headers: 'Authorization: Bearer ${TOKEN}\nX-Mode: a:b' }));
    expect(c.errors).toEqual({});
    expect(c.params).toEqual({ type: 'streamable_http', url: 'https://${HOST}/mcp', headers: { Authorization: 'Bearer ${TOKEN}', 'X-Mode': 'a:b' } });
    expect(c.placeholders).toEqual(['HOST', 'TOKEN']);
  });

  it('needs an http(s) URL and well-formed headers', () => {
    expect(checkForm(http({ url: '' })).errors.url).toMatch(/Give the server’s URL/);
    expect(checkForm(http({ url: 'example.com/mcp' })).errors.url).toMatch(/http:\/\/ or https:\/\//);
    expect(checkForm(http({ url: 'ftp://example.com' })).errors.url).toMatch(/http:\/\/ or https:\/\//);
    expect(checkForm(http({ headers: 'Bearer abc' })).errors.headers).toMatch(/^Line 1: write one header per line as Name: value/);
    expect(checkForm(http({ headers: 'Bad Name: x' })).errors.headers).toMatch(/“Bad Name” is not a valid name/);
  });

  it('notes an SSE-looking URL under Streamable HTTP, and SSE is kept as chosen', () => {
    expect(checkForm(http({ url: 'https://h/sse' })).notes.url).toMatch(/choose SSE/);
    expect(checkForm(http({ url: 'https://h/sse', transport: 'sse' })).params).toEqual({ type: 'sse', url: 'https://h/sse' });
  });
});

describe('placeholders', () => {
  it('are found once each, and a malformed one is an error of its field', () => {
    expect(scanPlaceholders('${A} and ${B} and ${A}')).toEqual({ names: ['A', 'B'], error: null });
    expect(scanPlaceholders('$HOME is not one')).toEqual({ names: [], error: null });
    expect(scanPlaceholders('${OPEN').error).toMatch(/not closed/);
    expect(scanPlaceholders('${A-B}').error).toMatch(/letters, digits and underscores/);
    expect(checkForm(stdio({ args: '--token\n${TOKEN' })).errors.args).toMatch(/not closed/);
  });

  it('are explained by where their value comes from, never by the value', () => {
    expect(describeSource('dot_env')).toMatch(/workspace’s .env/);
    expect(describeSource('environment')).toMatch(/ipybox’s environment/);
    expect(describeSource(null)).toMatch(/not defined/);
  });
});

describe('pasted JSON', () => {
  it('takes a bare server object', () => {
    const r = parsePasted('{"command": "uvx", "args": ["mcp-server-fetch"]}');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.servers).toHaveLength(1);
    expect(r.servers[0]?.name).toBeNull();
    expect(r.servers[0]?.form).toMatchObject({ transport: 'stdio', command: 'uvx', args: 'mcp-server-fetch' });
  });

  it('takes Claude Desktop’s mcpServers map, several servers, unknown keys left out and named', () => {
    const r = parsePasted(
      JSON.stringify({
        mcpServers: {
          'brave-search': { command: 'npx', args: ['-y', '@brave/brave-search-mcp-server'], env: { BRAVE_API_KEY: 'YOUR_KEY', PORT: 8080 }, disabled: false, autoApprove: [] },
          github: { url: 'https://api.githubcopilot.com/mcp/', headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' } },
        },
      }),
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.servers.map((s) => s.name)).toEqual(['brave-search', 'github']);
    expect(r.servers[0]?.ignored).toEqual(['disabled', 'autoApprove']);
    expect(r.servers[0]?.form.env).toBe('BRAVE_API_KEY=YOUR_KEY\nPORT=8080');
    expect(r.servers[1]?.form).toMatchObject({ transport: 'streamable_http', url: 'https://api.githubcopilot.com/mcp/', headers: 'Authorization: Bearer ${GITHUB_TOKEN}' });
    const form = { ...(r.servers[0]?.form ?? emptyForm()), name: suggestName('brave-search') };
    expect(checkForm(form).params).toEqual({ type: 'stdio', command: 'npx', args: ['-y', '@brave/brave-search-mcp-server'], env: { BRAVE_API_KEY: 'YOUR_KEY', PORT: '8080' } });
  });

  it('takes VS Code’s servers map with "type": "http", and a fragment without outer braces', () => {
    const r = parsePasted('{"servers": {"remote": {"type": "http", "url": "https://h/mcp"}}}');
    expect(r.ok && r.servers[0]?.form.transport).toBe('streamable_http');
    const sse = parsePasted('{"x": {"type": "sse", "url": "https://h/events"}}');
    expect(sse.ok && sse.servers[0]?.form.transport).toBe('sse');
    const fragment = parsePasted('"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},');
    expect(fragment.ok && fragment.servers[0]?.name).toBe('fetch');
  });

  it('says what is wrong, in words', () => {
    const bad = (text: string): string => {
      const r = parsePasted(text);
      if (r.ok) throw new Error(`${text} was accepted`);
      return r.error;
    };
    expect(bad('')).toMatch(/Paste the JSON/);
    expect(bad('{"command": "npx", ')).toMatch(/not valid JSON/);
    expect(bad('[1, 2]')).toMatch(/Expected a JSON object/);
    expect(bad('{"mcpServers": {}}')).toMatch(/No server in this JSON/);
    expect(bad('{"command": "npx", "args": "-y x"}')).toMatch(/“args” must be a list/);
    expect(bad('{"mcpServers": {"a": {"command": "x", "env": {"K": {"nested": 1}}}}}')).toMatch(/Server “a”: “env.K” must be a text/);
    expect(bad('{"url": "https://h", "type": "websocket"}')).toMatch(/not a transport ipybox knows/);
  });
});

describe('what regenerating changed', () => {
  it('is said in words', () => {
    expect(describeChanges({ added: [], removed: [], changed: [] })).toBe('No tool was added, removed or changed.');
    expect(describeChanges({ added: ['a', 'b'], removed: ['c'], changed: [{ module: 'd', before: 'x', after: 'y' }] })).toBe('2 tools added (a, b); 1 removed (c); 1 signature changed (d).');
  });
});

describe('a changed tool’s signature', () => {
  const before = 'class Params(BaseModel):\n    """Adds.\n\n    Two numbers."""\n\n    a: int\n    b: int\n\n\ndef run(params: Params) -> str:\n    """Adds two numbers"""\n    ...\n';
  const after = 'class Params(BaseModel):\n    """Adds, now with floats."""\n\n    a: float\n    b: int\n\n\nclass Result(BaseModel):\n    sum: float\n\n\ndef run(params: Params) -> Result:\n    """Adds two numbers"""\n    ...\n';

  it('keeps what a call depends on — classes, fields, run — and leaves out docstrings', () => {
    const { before: b } = compareSignatures(before, after);
    expect(b.map((l) => l.text)).toEqual(['class Params(BaseModel):', '    a: int', '    b: int', 'def run(params: Params) -> str:']);
  });

  it('marks the lines only one side has', () => {
    const { before: b, after: a } = compareSignatures(before, after);
    expect(b.filter((l) => l.changed).map((l) => l.text)).toEqual(['    a: int', 'def run(params: Params) -> str:']);
    expect(a.filter((l) => l.changed).map((l) => l.text)).toEqual(['    a: float', 'class Result(BaseModel):', '    sum: float', 'def run(params: Params) -> Result:']);
    expect(a.find((l) => l.text === '    b: int')?.changed).toBe(false);
  });

  it('an interface not kept before is all new', () => {
    const { before: b, after: a } = compareSignatures(null, after);
    expect(b).toEqual([]);
    expect(a.every((l) => l.changed)).toBe(true);
  });
});

describe('server status', () => {
  it('follows the session events: running, exited, crashed with stderr, all stopped on a reset', () => {
    const s = new ServerStatuses();
    let calls = 0;
    s.subscribe(() => calls++);
    expect(s.get('fx').state).toBe('not_started');
    s.apply({ type: 'mcp_server_started', server: 'fx' });
    expect(s.get('fx').state).toBe('running');
    s.apply({ type: 'mcp_server_exited', server: 'fx', stderr: 'Traceback…\nValueError: boom\n' });
    expect(s.get('fx')).toEqual({ state: 'crashed', stderr: 'Traceback…\nValueError: boom\n' });
    s.apply({ type: 'mcp_server_exited', server: 'quiet', stderr: '' });
    expect(s.get('quiet').state).toBe('exited');
    s.apply({ type: 'servers_stopped' });
    expect(s.get('fx').state).toBe('not_started');
    expect(calls).toBe(4);
  });

  it('says an agent\'s call ran a server the notebook has not started', () => {
    const s = new ServerStatuses();
    s.apply({ type: 'agent_call_ran', server: 'fx' });
    expect(s.get('fx').state).toBe('not_started');
    expect(describeState(s.get('fx'))).toMatch(/^Ran an agent’s call/);
    s.apply({ type: 'mcp_server_started', server: 'fx' });
    expect(describeState(s.get('fx'))).toBe('Running');
    expect(describeState(s.get('other'))).toBe('Not started (starts on its first call)');
  });

  it('keeps the last log messages a server sent, through its restarts, until all are stopped', () => {
    const s = new ServerStatuses();
    s.apply({ type: 'mcp_server_started', server: 'fx' });
    for (let i = 1; i <= 7; i++) s.apply({ type: 'mcp_server_log', server: 'fx', level: i === 7 ? 'error' : 'info', message: `step ${i}` });
    expect(s.get('fx').state).toBe('running');
    expect(s.get('fx').log).toEqual([3, 4, 5, 6].map((i) => ({ level: 'info', message: `step ${i}` })).concat([{ level: 'error', message: 'step 7' }]));
    s.apply({ type: 'mcp_server_exited', server: 'fx', stderr: '', exit: { code: 0 } });
    s.apply({ type: 'mcp_server_started', server: 'fx' });
    expect(s.get('fx').log?.at(-1)).toEqual({ level: 'error', message: 'step 7' });
    s.apply({ type: 'servers_stopped' });
    expect(s.get('fx').log).toBeUndefined();
  });

  it('tells a crash from an exit by the exit status, stderr or not', () => {
    const s = new ServerStatuses();
    s.apply({ type: 'mcp_server_exited', server: 'a', stderr: '', exit: { code: 3 } });
    expect(s.get('a').state).toBe('crashed');
    expect(describeState(s.get('a'))).toBe('Crashed (exit code 3; it starts again on its next call)');
    s.apply({ type: 'mcp_server_exited', server: 'b', stderr: '', exit: { signal: 9 } });
    expect(describeState(s.get('b'))).toBe('Killed by signal 9, SIGKILL (it starts again on its next call)');
    s.apply({ type: 'mcp_server_exited', server: 'c', stderr: 'Bye.\n', exit: { code: 0 } });
    expect(s.get('c').state).toBe('exited');
    expect(describeState(s.get('c'))).toBe('Exited (it starts again on its next call)');
  });
});
