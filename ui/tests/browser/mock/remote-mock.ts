/**
 * The fake backend's "where the kernel runs": the workspace's server as kept (never its token),
 * Test connection (a URL with "refuse" in it is refused as a server without the token would be),
 * Apply (the kernel "restarts" there; the Sandbox tab then says it runs on the server).
 */
export interface RemoteMockConfig {
  /** The workspace's server as kept; default none (this computer). */
  url?: string | null;
  commandLine?: string | null;
}

interface Request {
  url: string;
  token: string | null;
  headers: string[] | null;
}

export function remoteBackend(config: RemoteMockConfig, onMoved: (url: string | null) => void) {
  let choice: { url: string; hasToken: boolean; headerNames: string[]; secret: string } | null = config.url
    ? { url: config.url, hasToken: true, headerNames: [], secret: 'file' }
    : null;
  let running: string | null = choice?.url ?? null;
  const state = () => ({ choice, running, commandLine: config.commandLine ?? null });
  const refuse = (r: Request) => {
    if (r.url.includes('refuse')) throw { code: 'GatewayError', message: `the server at ${r.url} refused the request: it needs a token` };
  };
  return {
    command(cmd: string, args: Record<string, unknown>): { handled: boolean; value?: unknown } {
      switch (cmd) {
        case 'remote_state':
          return { handled: true, value: state() };
        case 'probe_remote': {
          refuse(args.request as Request);
          return { handled: true, value: { version: '2.14.2', defaultKernel: 'python3', kernels: ['ir', 'python3'] } };
        }
        case 'apply_remote': {
          const r = args.request as Request | null;
          if (r) refuse(r);
          const keptToken = choice?.url === r?.url && r?.token === null ? choice?.hasToken ?? false : Boolean(r?.token);
          choice = r ? { url: r.url, hasToken: keptToken, headerNames: (r.headers ?? []).map((h) => h.split(':')[0] ?? ''), secret: 'file' } : null;
          running = choice?.url ?? null;
          onMoved(running);
          return { handled: true, value: state() };
        }
        default:
          return { handled: false };
      }
    },
  };
}
