/**
 * What a policy changes against the preset it is nearest to (as Flatseal marks what differs
 * from an app's defaults), and the grants in it that matter — writing the home or a file that
 * runs at log-in, reading a secrets folder, a wildcard domain, the Docker socket — each said
 * with what it lets code do. Other switches explain themselves in their help; a warning for
 * each would hide the few that matter.
 */
import type { JsonObject } from '../util/json';
import { FLAGS, LISTS, PRESETS, type FlagId, type ListId, type PresetId, getFlag, getList, parsePolicy, setFlag, setList } from './policy';

/** The preset a policy is compared with. */
export interface Base {
  id: Exclude<PresetId, 'custom'>;
  label: string;
  policy: JsonObject;
}

/** How one list differs from the preset's. */
export interface ListChange {
  /** In the policy, not in the preset. */
  added: string[];
  /** In the preset, not in the policy. */
  removed: string[];
}

/** The shipped presets (`profiles`: their texts by id), parsed. */
export function presetBases(profiles: ReadonlyMap<string, string>): Base[] {
  const out: Base[] = [];
  for (const p of PRESETS) {
    if (p.id === 'custom') continue;
    const text = profiles.get(p.id);
    const parsed = text === undefined ? null : parsePolicy(text);
    if (parsed?.ok) out.push({ id: p.id, label: p.label, policy: parsed.policy });
  }
  return out;
}

export function listChange(policy: JsonObject, base: JsonObject, id: ListId): ListChange {
  const now = getList(policy, id);
  const was = getList(base, id);
  return { added: now.filter((v) => !was.includes(v)), removed: was.filter((v) => !now.includes(v)) };
}

export function flagChanged(policy: JsonObject, base: JsonObject, id: FlagId): boolean {
  return getFlag(policy, id) !== getFlag(base, id);
}

/** How many entries and switches differ from `base`. */
export function changeCount(policy: JsonObject, base: JsonObject): number {
  let n = 0;
  for (const spec of LISTS) {
    const c = listChange(policy, base, spec.id);
    n += c.added.length + c.removed.length;
  }
  for (const flag of FLAGS) if (flagChanged(policy, base, flag.id)) n++;
  return n;
}

/** The preset `policy` is nearest to (fewest differences; the first preset on a tie), or null without presets. */
export function nearestBase(policy: JsonObject, bases: readonly Base[]): Base | null {
  let best: Base | null = null;
  let fewest = Infinity;
  for (const b of bases) {
    const n = changeCount(policy, b.policy);
    if (n < fewest) {
      best = b;
      fewest = n;
    }
  }
  return best;
}

/** `policy` with list `id` as the preset has it. */
export function resetList(policy: JsonObject, base: JsonObject, id: ListId): JsonObject {
  return setList(policy, id, getList(base, id));
}

/** `policy` with every switch as the preset has it. */
export function resetFlags(policy: JsonObject, base: JsonObject): JsonObject {
  let out = policy;
  for (const flag of FLAGS) out = setFlag(out, flag.id, getFlag(base, flag.id));
  return out;
}

// ---------------------------------------------------------------------------------------------
// The grants that matter

export interface GrantWarning {
  /** The field it is about (`filesystem.allowWrite[2]`, `network.allowAllUnixSockets`). */
  field: string;
  /** What it lets code do, in words. */
  text: string;
}

/** Files and folders whose programs or settings run when you log in or open a terminal. */
export const STARTUP_PLACES: readonly string[] = [
  '~/.bashrc',
  '~/.bash_profile',
  '~/.bash_login',
  '~/.bash_logout',
  '~/.profile',
  '~/.zshrc',
  '~/.zprofile',
  '~/.zshenv',
  '~/.zlogin',
  '~/.xprofile',
  '~/.xinitrc',
  '~/.xsessionrc',
  '~/.pam_environment',
  '~/.config/autostart',
  '~/.config/systemd',
  '~/.config/environment.d',
  '~/.config/fish',
  '~/.local/bin',
  '~/.ssh/authorized_keys',
  '~/Library/LaunchAgents',
];

/** Folders of secrets, and what is in them. */
export const SECRET_PLACES: readonly (readonly [string, string])[] = [
  ['~/.ssh', 'SSH keys'],
  ['~/.gnupg', 'GPG keys'],
  ['~/.aws', 'AWS credentials'],
  ['~/.azure', 'Azure credentials'],
  ['~/.config/gcloud', 'Google Cloud credentials'],
  ['~/.kube', 'Kubernetes credentials'],
  ['~/.docker', 'Docker registry logins'],
  ['~/.netrc', 'saved passwords'],
  ['~/.git-credentials', 'git passwords'],
  ['~/.config/gh', 'GitHub tokens'],
  ['~/.password-store', 'passwords'],
  ['~/.local/share/keyrings', 'the keyring'],
  ['~/.claude', 'an agent’s credentials and conversations'],
  ['~/.codex', 'an agent’s credentials and conversations'],
];

/** `~/x/` and `./x` as `~/x` and `x`; `~/` as `~`. */
function norm(path: string): string {
  let p = path.trim();
  while (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  if (p.startsWith('./') && p.length > 2) p = p.slice(2);
  return p;
}

/** Does the entry `entry` cover `path` (the same place, or a folder it lies in)? Globs cover nothing here. */
function covers(entry: string, path: string): boolean {
  const e = norm(entry);
  if (e.includes('*')) return false;
  if (e === '/') return path.startsWith('/') || path.startsWith('~');
  // Every home lies in /home (Linux) or /Users (macOS).
  if ((e === '/home' || e === '/Users') && path.startsWith('~')) return true;
  return path === e || path.startsWith(`${e}/`);
}

/** A secret `path` is readable under `policy`. */
function readable(policy: JsonObject, path: string): boolean {
  const hidden = getList(policy, 'filesystem.denyRead').some((d) => covers(d, path));
  if (!hidden) return true;
  // Readable again: the folder itself, a folder around it, or something inside it.
  return getList(policy, 'filesystem.allowRead').some((a) => covers(a, path) || covers(path, norm(a)));
}

/**
 * The grants in `policy` that matter, each with what it lets code do — at once, as the person
 * types. The engine's review words them alike (src-tauri/src/sandbox/grants.rs, which the
 * command line prints); tests/fixtures/grant-warnings/cases.json pins both.
 */
export function grantWarnings(policy: JsonObject): GrantWarning[] {
  const out: GrantWarning[] = [];
  if (getFlag(policy, 'filesystem.disabled')) {
    out.push({ field: 'filesystem.disabled', text: 'File restrictions are off: code may change what runs when you log in (~/.bashrc, ~/.config/autostart) and read every secret you have (SSH keys, cloud credentials, passwords).' });
  } else {
    getList(policy, 'filesystem.allowWrite').forEach((entry, i) => {
      const field = `filesystem.allowWrite[${i}]`;
      const e = norm(entry);
      if (e === '/' || e === '~' || e === '/home' || e === '/Users') {
        out.push({ field, text: `Writing ${entry}: code may change any file of yours, including what runs when you log in or open a terminal — a way out of the sandbox.` });
        return;
      }
      const startup = STARTUP_PLACES.filter((s) => covers(entry, s) || covers(s, e));
      if (startup.length > 0) out.push({ field, text: `Writing ${entry}: code may change ${startup.join(', ')}, which run${startup.length === 1 ? 's' : ''} outside the sandbox when you log in or open a terminal — a way out of the sandbox.` });
    });
    const secrets = SECRET_PLACES.filter(([p]) => readable(policy, p));
    if (secrets.length > 0) {
      const again = getList(policy, 'filesystem.allowRead').findIndex((a) => secrets.some(([p]) => covers(a, p) || covers(p, norm(a))));
      out.push({
        field: again >= 0 ? `filesystem.allowRead[${again}]` : 'filesystem.denyRead',
        text: `Reading secrets: code may read ${secrets.map(([p, what]) => `${p} (${what})`).join(', ')}, and send them wherever it can reach, an agent’s conversation included.`,
      });
    }
  }
  getList(policy, 'network.allowedDomains').forEach((d, i) => {
    if (d.startsWith('*')) out.push({ field: `network.allowedDomains[${i}]`, text: `Reaching ${d}: code may reach every server ${d === '*' ? 'on the internet' : `under ${d.replace(/^\*\./, '')}`}, including ones other people run there — data can leave through any of them.` });
  });
  if (getFlag(policy, 'network.allowAllUnixSockets')) {
    out.push({ field: 'network.allowAllUnixSockets', text: 'Every Unix socket: code may use the Docker socket (and run anything as root through it), D-Bus and your desktop (X11) — a way out of the sandbox.' });
  }
  getList(policy, 'network.allowUnixSockets').forEach((s, i) => {
    const e = norm(s);
    if (/docker\.sock$/.test(e) || ['/var/run', '/run', '/var'].includes(e)) out.push({ field: `network.allowUnixSockets[${i}]`, text: `The Docker socket (${s}): code may control Docker, and through it run anything as root on this computer.` });
  });
  return out;
}
