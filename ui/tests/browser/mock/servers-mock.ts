/**
 * The fake backend's MCP servers tab: a registry in memory, "Test connection" that lists a
 * fixed set of tools (or fails with a server's stderr for the command `crash-server`), and
 * placeholders defined when they are in `config.servers.defined`. Servers at the URLs of
 * `config.servers.oauth` ask for a sign-in, which waits until the test finishes it.
 */
import { checkName } from '../../../src/model/serverForm';

export interface ServersMockConfig {
  /** Servers registered at start: name → params. */
  registered?: Record<string, unknown>;
  /** Variables the workspace's .env defines. */
  defined?: string[];
  /** Registered servers start with `echo` and `subtract`; regenerating finds `echo` with a
   *  new parameter, `add`, and no `subtract`: a tool of each kind of change. */
  reshaped?: boolean;
  /** The tools every registered server offers at start (default `echo`). */
  tools?: Tool[];
  /** HTTP servers (by URL) that ask for an OAuth sign-in; `user`: who the authorization
   *  server says signed in; `signedIn`: names signed in at start. */
  oauth?: { urls: string[]; user?: string; signedIn?: string[] };
}

interface Tool {
  tool: string;
  module: string;
  description?: string;
  interface?: string;
}

const ECHO: Tool = {
  tool: 'echo',
  module: 'echo',
  description: 'Echoes back the input string',
  interface: 'class Params(BaseModel):\n    """Echoes back the input string"""\n\n    message: str = Field(..., description="Message to echo")\n\n\ndef run(params: Params) -> str:\n    """Echoes back the input string"""\n    ...\n',
};
const ADD: Tool = {
  tool: 'add',
  module: 'add',
  description: 'Adds two numbers',
  interface: 'class Params(BaseModel):\n    a: float\n    b: float\n\n\ndef run(params: Params) -> str:\n    """Adds two numbers"""\n    ...\n',
};

const SUBTRACT: Tool = {
  tool: 'subtract',
  module: 'subtract',
  description: 'Subtracts b from a',
  interface: 'class Params(BaseModel):\n    a: float\n    b: float\n\n\ndef run(params: Params) -> str:\n    """Subtracts b from a"""\n    ...\n',
};
const ECHO_V2: Tool = {
  ...ECHO,
  interface: 'class Params(BaseModel):\n    """Echoes back the input string"""\n\n    message: str = Field(..., description="Message to echo")\n    times: int = 1\n\n\nclass Result(BaseModel):\n    echoed: str\n\n\ndef run(params: Params) -> Result:\n    """Echoes back the input string"""\n    ...\n',
};

/** As the engine's `ToolChanges::between`: by module, a changed interface with both. */
function changesBetween(before: Tool[], after: Tool[]) {
  const old = new Map(before.map((t) => [t.module, t]));
  const now = new Set(after.map((t) => t.module));
  return {
    added: after.filter((t) => !old.has(t.module)).map((t) => t.module),
    removed: before.filter((t) => !now.has(t.module)).map((t) => t.module),
    changed: after.flatMap((t) => {
      const was = old.get(t.module);
      return was && was.interface !== t.interface ? [{ module: t.module, before: was.interface ?? null, after: t.interface ?? null }] : [];
    }),
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** As the engine stores a server under srt: its policy as given, and the parameters naming the pinned copy. */
function pinned(name: string, params: unknown): { params: unknown; policy?: string } {
  if (!isRecord(params) || params.command !== 'srt' || !Array.isArray(params.args)) return { params };
  const args = [...params.args];
  const at = args.indexOf('--settings');
  if (at < 0 || typeof args[at + 1] !== 'string') return { params };
  const policy = String(args[at + 1]);
  args[at + 1] = `/home/ana/.local/share/ipybox/workspaces/weather-1f2e/srt/${name}.json`;
  return { params: { ...params, args }, policy };
}

export function serversBackend(config: ServersMockConfig) {
  const registry = new Map<string, { params: unknown; tools: Tool[] }>();
  for (const [name, params] of Object.entries(config.registered ?? {})) registry.set(name, { params, tools: config.tools ?? (config.reshaped ? [ECHO, SUBTRACT] : [ECHO]) });
  /** A regenerate after this finds `add` too (the server grew a tool). */
  let grown = false;
  const oauth = config.oauth ?? { urls: [] };
  const signedIn = new Set(oauth.signedIn ?? []);
  /** The sign-in waiting for the browser, if any. */
  let waiting: { name: string; resolve: (ok: boolean) => void } | null = null;
  const urlOf = (params: unknown): string | null => (isRecord(params) && typeof params.url === 'string' ? params.url : null);
  const asksSignIn = (name: string, params: unknown): boolean => {
    const url = urlOf(params);
    return url !== null && oauth.urls.includes(url) && !signedIn.has(name);
  };
  const signIns = () =>
    Object.fromEntries(
      [...registry.entries()]
        .filter(([, s]) => oauth.urls.includes(urlOf(s.params) ?? ''))
        .map(([name]) => [name, signedIn.has(name) ? { signedIn: true, user: oauth.user, expiresAt: Date.now() + 3600_000, refreshable: true } : { signedIn: false, refreshable: false }]),
    );
  const register = (name: string, params: unknown) => {
    const tools = connect(params);
    const before = registry.get(name)?.tools ?? [];
    registry.set(name, { params, tools });
    return { server: list().servers.find((s) => s.name === name), skipped: [], changes: changesBetween(before, tools) };
  };
  const list = () => ({
    signIns: signIns(),
    servers: [...registry.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, s]) => ({ name, ...pinned(name, s.params), tools: s.tools })),
    profiles: [
      { name: 'mcp-server', purpose: 'the default for an MCP server run under srt, npm-ready' },
      { name: 'mcp-offline', purpose: 'an MCP server that is already installed: no network, no writes' },
    ],
  });
  const connect = (params: unknown): Tool[] => {
    if (!isRecord(params)) throw { code: 'InvalidConfig', message: 'invalid MCP server parameters' };
    const command = params.command;
    const args = Array.isArray(params.args) ? params.args : [];
    if (command === 'crash-server' || args.includes('crash-server')) {
      throw { code: 'McpError', message: 'the MCP server "preview" exited before it answered. Its last lines on stderr:\nTraceback (most recent call last):\n  File "server.py", line 3, in <module>\nValueError: BOOM is not set' };
    }
    if (config.reshaped) return [ECHO_V2, ADD];
    return grown ? [ECHO, ADD] : [ECHO];
  };
  return {
    grow(): void {
      grown = true;
    },
    /** The person finished (or gave up) in the browser; false when no sign-in waited. */
    finishSignIn(ok: boolean): boolean {
      const w = waiting;
      waiting = null;
      w?.resolve(ok);
      return w !== null;
    },
    /** The server revoked `name`'s sign-in (as a refused refresh makes the engine forget it). */
    revoke(name: string): void {
      signedIn.delete(name);
    },
    command(cmd: string, args: Record<string, unknown>): { handled: boolean; value?: unknown } {
      switch (cmd) {
        case 'mcp_servers':
          return { handled: true, value: list() };
        case 'preview_mcp_server':
          return { handled: true, value: connect(args.params) };
        case 'register_mcp_server': {
          const name = String(args.name);
          const problem = checkName(name);
          if (problem) throw { code: 'InvalidConfig', message: problem };
          if (asksSignIn(name, args.params)) {
            throw { code: 'SignInRequired', message: `cannot connect to the MCP server "${name}" (${urlOf(args.params)}): it asks for a sign-in (HTTP 401). Sign in with \`ipybox sign-in ${name}\` or the app's MCP servers panel` };
          }
          return { handled: true, value: register(name, args.params) };
        }
        case 'sign_in_mcp_server': {
          const name = String(args.name);
          const params = args.params ?? registry.get(name)?.params;
          const previous = waiting;
          const value = new Promise((resolve, reject) => {
            waiting = {
              name,
              resolve: (ok) => {
                if (!ok) return reject({ code: 'Cancelled', message: 'the sign-in was cancelled' });
                signedIn.add(name);
                resolve(register(name, params));
              },
            };
          });
          previous?.resolve(false);
          return { handled: true, value };
        }
        case 'cancel_mcp_sign_in': {
          const was = waiting?.name === String(args.name);
          if (was) waiting?.resolve(false);
          if (was) waiting = null;
          return { handled: true, value: was };
        }
        case 'sign_out_mcp_server':
          return { handled: true, value: signedIn.delete(String(args.name)) };
        case 'regenerate_mcp_server': {
          const name = String(args.name);
          const s = registry.get(name);
          if (!s) throw { code: 'InvalidConfig', message: `no MCP server "${name}" is registered here` };
          const tools = connect(s.params);
          const changes = changesBetween(s.tools, tools);
          s.tools = tools;
          return { handled: true, value: { server: list().servers.find((x) => x.name === name), skipped: [], changes } };
        }
        case 'unregister_mcp_server':
          return { handled: true, value: registry.delete(String(args.name)) };
        case 'mcp_placeholders': {
          const names = Array.isArray(args.names) ? args.names.map(String) : [];
          return { handled: true, value: names.map((name) => ({ name, source: name === 'WORKSPACE' ? 'workspace' : (config.defined ?? []).includes(name) ? 'dot_env' : null })) };
        }
        default:
          return { handled: false };
      }
    },
  };
}
