/**
 * The fake backend's Sandbox tab: the workspace's sandbox-config.json, the per-workspace
 * choice, Apply (refused, in srt's words, for a policy allowing the bare domain "com"), the file picker. The
 * engine's checks are stood in for by the UI's own quick checks.
 */
import { getList, localProblems, parsePolicy, setList } from '../../../src/model/policy';
import kernel from '../../../../sandbox-profiles/kernel.json';
import pypi from '../../../../sandbox-profiles/kernel-allow-pypi.json';
import workspaceOnly from '../../../../sandbox-profiles/kernel-workspace-only.json';

export interface PolicyMockConfig {
  /** The workspace's sandbox-config.json; null: none yet (default: the kernel profile). */
  text?: string | null;
  sandbox?: boolean;
  /** What the native picker answers (null: cancelled). */
  pick?: string | null;
  /** The native question "Allow writing …?" answered no: the place stays blocked. */
  keepBlocked?: boolean;
  /**
   * The engine's check of the places no grant may open, stood in for: an allowWrite or
   * allowRead entry named here is flagged with this message (severity `danger`).
   */
  dangers?: Record<string, string>;
}

interface Choice {
  sandbox: boolean;
  policy: { kind: 'workspace' } | { kind: 'profile'; name: string };
}

const PROFILES: Record<string, { purpose: string; text: string }> = {
  kernel: { purpose: 'the default for kernels: no network, no secrets, writes only in the workspace', text: JSON.stringify(kernel, null, 2) },
  'kernel-workspace-only': { purpose: 'Workspace only: reads only the workspace, the Python environment and the system', text: JSON.stringify(workspaceOnly, null, 2) },
  'kernel-allow-pypi': { purpose: 'the default plus pypi.org and files.pythonhosted.org', text: JSON.stringify(pypi, null, 2) },
};

export function policyBackend(workspace: string, config: PolicyMockConfig) {
  const problems = (text: string): unknown[] => {
    const parsed = parsePolicy(text);
    if (!parsed.ok) return [{ field: '', message: parsed.message, severity: 'error' }];
    const dangers = (['filesystem.allowWrite', 'filesystem.allowRead'] as const).flatMap((id) =>
      getList(parsed.policy, id).flatMap((entry, i) => {
        const message = config.dangers?.[entry];
        return message === undefined ? [] : [{ field: `${id}[${i}]`, message, severity: 'danger' }];
      }),
    );
    return [...localProblems(parsed.policy), ...dangers];
  };
  let text: string | null = config.text === undefined ? `${JSON.stringify(kernel, null, 2)}\n` : config.text;
  let choice: Choice = { sandbox: config.sandbox ?? true, policy: { kind: 'workspace' } };
  let running: string | null = choice.sandbox ? 'sandbox-config.json' : null;
  let remote: string | null = null;
  const file = `${workspace}/sandbox-config.json`;
  const state = () => ({
    workspacePolicy: file,
    workspacePolicyExists: text !== null,
    profiles: Object.entries(PROFILES).map(([name, p]) => ({ name, purpose: p.purpose })),
    choice,
    running,
    commandLine: null,
    remote,
  });
  const read = (source: Choice['policy']) => {
    if (source.kind === 'profile') {
      const p = PROFILES[source.name];
      if (!p) throw { code: 'InvalidConfig', message: `ipybox ships no profile named "${source.name}"` };
      return { source, text: p.text, path: null, exists: true, readOnly: true, problems: problems(p.text) };
    }
    const t = text ?? PROFILES.kernel?.text ?? '{}';
    return { source, text: t, path: file, exists: text !== null, readOnly: false, problems: problems(t) };
  };
  return {
    /** The kernel moved to a server (or back: null); no sandbox applies there. */
    setRemote(url: string | null): void {
      remote = url;
      running = url ? null : choice.sandbox ? 'sandbox-config.json' : null;
    },
    /** The file changed "outside the app". */
    setFileText(t: string | null): void {
      text = t;
    },
    fileText: (): string | null => text,
    command(cmd: string, args: Record<string, unknown>): { handled: boolean; value?: unknown } {
      switch (cmd) {
        case 'sandbox_state':
          return { handled: true, value: state() };
        case 'read_policy':
          return { handled: true, value: read((args.source ?? { kind: 'workspace' }) as Choice['policy']) };
        case 'check_sandbox_access': {
          // The engine's checker stood in for by the hidden list alone.
          const parsed = parsePolicy(String(args.text ?? ''));
          const q = String(args.query ?? '');
          const hidden = parsed.ok ? getList(parsed.policy, 'filesystem.denyRead') : [];
          const rule = hidden.find((h) => q === h || q.startsWith(`${h}/`));
          const read = { access: 'read', target: q, allowed: !rule, rule: rule ? `filesystem.denyRead: ${rule}` : null, reason: rule ? 'hidden' : 'no rule hides it' };
          return { handled: true, value: [read, { ...read, access: 'write', allowed: false, reason: 'read-only' }] };
        }
        case 'check_policy':
          return { handled: true, value: problems(String(args.text ?? '')) };
        case 'save_policy': {
          const t = String(args.text ?? '');
          const found = problems(t) as { field: string; message: string; severity: string }[];
          const bad = found.find((p) => p.severity === 'error');
          if (bad) throw { code: 'InvalidConfig', message: `the policy was not saved: ${bad.message}${bad.field ? ` (${bad.field})` : ''}` };
          text = t;
          return { handled: true, value: read({ kind: 'workspace' }) };
        }
        case 'apply_sandbox': {
          const c = args.choice as Choice;
          const t = c.policy.kind === 'workspace' ? (text ?? '') : (PROFILES[c.policy.name]?.text ?? '');
          if (c.sandbox && t.includes('"com"')) {
            throw { code: 'SandboxUnavailable', message: 'srt refused this policy: network.allowedDomains.0: Invalid domain pattern. Must be a valid domain (e.g., "example.com"), a wildcard (e.g., "*.example.com"), or a bracketed IPv6 literal.' };
          }
          if (c.sandbox && t.includes('/venv"')) {
            throw { code: 'KernelStartFailed', message: 'the kernel could not start under this policy, so it was started again as before (its variables are lost): the sandbox (srt) exited during start-up' };
          }
          choice = c;
          running = c.sandbox ? (c.policy.kind === 'workspace' ? 'sandbox-config.json' : c.policy.name) : null;
          return { handled: true, value: state() };
        }
        case 'allow_blocked': {
          // The backend asks natively first (answered per `keepBlocked`), adds the entry to
          // the policy in force, saves it as the workspace's and restarts the kernel under it.
          if (config.keepBlocked) throw { code: 'InvalidConfig', message: 'Not changed: you kept it blocked' };
          const entry = String(args.entry ?? '').trim();
          if (entry === '') throw { code: 'InvalidConfig', message: 'say which folder to allow' };
          const parsed = parsePolicy(read(choice.policy).text);
          if (!parsed.ok) throw { code: 'InvalidConfig', message: parsed.message };
          const id = args.access === 'write' ? 'filesystem.allowWrite' : args.access === 'connect' ? 'network.allowedDomains' : 'filesystem.allowRead';
          const list = getList(parsed.policy, id);
          text = `${JSON.stringify(setList(parsed.policy, id, list.includes(entry) ? list : [...list, entry]), null, 2)}\n`;
          choice = { sandbox: true, policy: { kind: 'workspace' } };
          running = 'sandbox-config.json';
          return { handled: true, value: state() };
        }
        case 'watch_policy':
          return { handled: true, value: null };
        case 'plugin:dialog|open':
          return { handled: true, value: config.pick === undefined ? `${workspace}/out` : config.pick };
        default:
          return { handled: false };
      }
    },
  };
}
