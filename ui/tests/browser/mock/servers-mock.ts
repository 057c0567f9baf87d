/**
 * The fake backend's MCP servers tab: a registry in memory, "Test connection" that lists a
 * fixed set of tools (or fails with a server's stderr for the command `crash-server`), and
 * placeholders defined when they are in `config.servers.defined`.
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
  const list = () => ({
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
          const tools = connect(args.params);
          const before = registry.get(name)?.tools ?? [];
          registry.set(name, { params: args.params, tools });
          return { handled: true, value: { server: list().servers.find((s) => s.name === name), skipped: [], changes: changesBetween(before, tools) } };
        }
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
