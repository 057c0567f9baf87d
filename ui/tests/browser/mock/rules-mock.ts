/**
 * The fake backend's approval rules, as the backend matches and checks them
 * (docs/approval-rules.md): glob patterns for server and tool, argument matchers by name or
 * JSON pointer, and a small part of the file's checks with their kind of messages.
 */

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function globMatch(pattern: string, text: string): boolean {
  const re = new RegExp(`^${[...pattern].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&'))).join('')}$`, 's');
  return re.test(text);
}

function jsonEq(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEq(x, b[i]));
  if (isRecord(a) && isRecord(b)) return Object.keys(a).length === Object.keys(b).length && Object.keys(a).every((k) => k in b && jsonEq(a[k], b[k]));
  return a === b;
}

function lookup(args: unknown, key: string): { found: boolean; value: unknown } {
  if (!key.startsWith('/')) return isRecord(args) && key in args ? { found: true, value: args[key] } : { found: false, value: null };
  let v: unknown = args;
  for (const raw of key.slice(1).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (isRecord(v) && part in v) v = v[part];
    else if (Array.isArray(v) && /^\d+$/.test(part) && Number(part) < v.length) v = v[Number(part)];
    else return { found: false, value: null };
  }
  return { found: true, value: v };
}

function under(prefix: string, path: unknown): boolean {
  if (typeof path !== 'string' || !path.startsWith('/')) return false;
  const norm = (p: string): string[] => p.split('/').reduce<string[]>((acc, part) => (part === '' || part === '.' ? acc : part === '..' ? acc.slice(0, -1) : [...acc, part]), []);
  const a = norm(prefix);
  const b = norm(path);
  return a.every((x, i) => b[i] === x);
}

/** The first matching rule's decision and message, or null (ask). */
export function decideByRules(rules: unknown, server: string, tool: string, args: unknown): { allow: boolean; message: string } | null {
  const list = isRecord(rules) && Array.isArray(rules.rules) ? rules.rules : [];
  for (const [i, rule] of list.entries()) {
    if (!isRecord(rule) || typeof rule.server !== 'string' || typeof rule.tool !== 'string') continue;
    if (!globMatch(rule.server, server) || !globMatch(rule.tool, tool)) continue;
    const conditions = isRecord(rule.args) ? Object.entries(rule.args) : [];
    const ok = conditions.every(([key, m]) => {
      const { found, value } = lookup(args, key);
      if (!found || !isRecord(m)) return false;
      if ('equals' in m && !jsonEq(m.equals, value)) return false;
      if (Array.isArray(m.one_of) && !m.one_of.some((x) => jsonEq(x, value))) return false;
      if (typeof m.glob === 'string' && (typeof value !== 'string' || !globMatch(m.glob, value))) return false;
      if (typeof m.under === 'string' && !under(m.under, value)) return false;
      return true;
    });
    if (!ok) continue;
    const allow = rule.decision === 'allow';
    const reason = typeof rule.reason === 'string' ? `: ${rule.reason}` : '';
    return { allow, message: `${server}.${tool} is ${allow ? 'allowed' : 'rejected'} by rules[${i}]${allow ? '' : reason}` };
  }
  return null;
}

const RULE_FIELDS = ['server', 'tool', 'args', 'exact_args', 'decision', 'reason', 'comment'];
const MATCHER_FIELDS = ['equals', 'one_of', 'glob', 'under', 'absent'];

/** A small part of the backend's checks, with its kind of messages. */
export function checkRules(value: unknown): string | null {
  if (!isRecord(value)) return 'expected an object with "version" and "rules"';
  if (value.version !== 1) return `unsupported version ${JSON.stringify(value.version)} (this ipybox reads version 1)`;
  if (!Array.isArray(value.rules)) return 'missing field `rules`';
  for (const [i, rule] of value.rules.entries()) {
    if (!isRecord(rule)) return `rules[${i}]: expected a rule object`;
    for (const k of Object.keys(rule)) {
      if (!RULE_FIELDS.includes(k)) return `rules[${i}]: unknown field \`${k}\`, expected one of ${RULE_FIELDS.map((f) => `\`${f}\``).join(', ')}`;
    }
    if (typeof rule.server !== 'string' || !rule.server) return `rules[${i}]: missing or empty field \`server\``;
    if (typeof rule.tool !== 'string' || !rule.tool) return `rules[${i}]: missing or empty field \`tool\``;
    if (rule.decision !== 'allow' && rule.decision !== 'reject') return `rules[${i}]: unknown decision ${JSON.stringify(rule.decision)}, expected \`allow\` or \`reject\``;
    if (rule.args !== undefined) {
      if (!isRecord(rule.args)) return `rules[${i}]: \`args\` must be an object`;
      for (const [name, m] of Object.entries(rule.args)) {
        if (!isRecord(m)) return `rules[${i}]: argument "${name}": expected an object`;
        for (const k of Object.keys(m)) if (!MATCHER_FIELDS.includes(k)) return `rules[${i}]: argument "${name}": unknown field \`${k}\`, expected one of ${MATCHER_FIELDS.map((f) => `\`${f}\``).join(', ')}`;
      }
    }
  }
  return null;
}
