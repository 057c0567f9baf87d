import { describe, expect, it } from 'vitest';
import type { ApprovalRequest, Rule, ToolCallEvent } from '../../src/ipc';
import { isSessionEvent } from '../../src/ipc';
import {
  allowArgumentsRule,
  allowToolRule,
  ApprovalsModel,
  argumentKey,
  argumentName,
  decisionWords,
  describeArgMatcher,
  describeRule,
  formatDuration,
  hasNoArguments,
  howWords,
  originWords,
  outcomeWords,
  prettyArguments,
  rejectToolRule,
  sameRule,
  shortenJson,
  shortenText,
  SHORTEN_AT,
  timeAgo,
} from '../../src/model/approvals';
import { timeLeftWords } from '../../src/ui/approvalsView';
import { asRules } from '../../src/ui/rulesView';

const request = (id: number, over: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
  id,
  server: 'github',
  tool: 'create_issue',
  arguments: { owner: 'acme' },
  server_description: 'GitHub',
  execution_id: 'exec-1',
  origin: 'cell 3 of analysis.ipynb',
  asked_at: 1_000 + id,
  deadline: 61_000 + id,
  details: {},
  rule: null,
  ...over,
});

const call = (id: number, over: Partial<ToolCallEvent> = {}): ToolCallEvent => ({
  type: 'tool_call',
  id,
  server: 'github',
  tool: 'create_issue',
  arguments: {},
  server_description: 'GitHub',
  execution_id: null,
  origin: null,
  asked_at: 1_000,
  deadline: 61_000,
  details: {},
  rule: null,
  decision: 'approved',
  decided_by: 'person',
  reason: null,
  outcome: { kind: 'ok' },
  duration_ms: 120,
  ...over,
});

describe('rules in words', () => {
  it('says what a rule allows or rejects', () => {
    expect(describeRule({ server: 'github', tool: 'get_*', decision: 'allow' })).toBe('Always allow github.get_*');
    expect(describeRule({ server: '*', tool: 'delete_*', decision: 'reject', reason: 'deletions are never allowed' })).toBe('Always reject *.delete_* — deletions are never allowed');
    expect(describeRule({ server: '*', tool: 'delete_*', decision: 'reject' })).toBe('Always reject *.delete_*');
    expect(describeRule({ server: 'github', tool: '*', decision: 'allow' })).toBe('Always allow every tool of github');
    expect(describeRule({ server: '*', tool: '*', decision: 'reject' })).toBe('Always reject every tool of every server');
  });

  it('summarises argument conditions', () => {
    expect(describeRule({ server: 'filesystem', tool: 'read_text_file', args: { path: { under: '/home/me/project' } }, decision: 'allow' })).toBe(
      'Always allow filesystem.read_text_file when path is under /home/me/project',
    );
    const rule: Rule = { server: 'github', tool: 'create_issue', args: { owner: { equals: 'acme' }, repo: { one_of: ['site', 'docs'] } }, decision: 'allow', comment: 'only acme' };
    expect(describeRule(rule)).toBe('Always allow github.create_issue when owner is “acme” and repo is one of “site”, “docs”');
    expect(describeArgMatcher('path', { under: '/home/me/project/notes', glob: '*.md' })).toBe('path is under /home/me/project/notes and matches *.md');
    expect(describeArgMatcher('n', { equals: 3 })).toBe('n is 3');
    expect(describeArgMatcher('x', { equals: null })).toBe('x is null');
    expect(describeArgMatcher('/options/path', { glob: '/tmp/*' })).toBe('options › path matches /tmp/*');
    expect(argumentName('/a~1b/c~0d')).toBe('a/b › c~d');
    expect(argumentName('plain')).toBe('plain');
  });

  it('the reason is said for reject rules only', () => {
    expect(describeRule({ server: 'a', tool: 'b', decision: 'allow', reason: 'ignored' })).toBe('Always allow a.b');
  });

  it('the rules the panel adds', () => {
    expect(allowToolRule('github', 'get_me')).toEqual({ server: 'github', tool: 'get_me', decision: 'allow', comment: 'added from the approval panel' });
    expect(rejectToolRule('github', 'get_me')).toEqual({ server: 'github', tool: 'get_me', decision: 'reject', reason: 'rejected by a rule made in the approval panel' });
  });

  it('the JSON editor accepts the file outline and leaves the rest to the backend', () => {
    expect(asRules({ version: 1, rules: [] })).toEqual({ version: 1, rules: [] });
    expect(asRules({ version: 2, rules: [{ bad: 1 }] })).not.toBeNull();
    expect(asRules([])).toBeNull();
    expect(asRules({ version: 1 })).toBeNull();
    expect(asRules('rules')).toBeNull();
  });
});

describe('arguments', () => {
  it('pretty-prints with a 2-space indent', () => {
    expect(prettyArguments({ a: 1, b: [true] })).toEqual({ text: '{\n  "a": 1,\n  "b": [\n    true\n  ]\n}', shortened: false });
  });

  it('shortens long strings to ~200 characters, and "Show all" gives them whole', () => {
    const long = 'x'.repeat(1000);
    const short = prettyArguments({ content: long, path: '/a' });
    expect(short.shortened).toBe(true);
    expect(short.text).toContain(`${'x'.repeat(SHORTEN_AT)}… (800 more characters)`);
    expect(short.text).not.toContain('x'.repeat(SHORTEN_AT + 1));
    expect(short.text).toContain('"path": "/a"');
    const full = prettyArguments({ content: long, path: '/a' }, true);
    expect(full.shortened).toBe(false);
    expect(full.text).toContain(long);
  });

  it('shortens nested values and long lists, and never splits a surrogate pair', () => {
    const r = shortenJson({ a: { b: ['y'.repeat(300)] }, list: Array.from({ length: 60 }, (_, i) => i) });
    expect(r.shortened).toBe(true);
    const v = r.value as { a: { b: string[] }; list: unknown[] };
    expect(v.a.b[0]).toMatch(/^y{200}… \(100 more characters\)$/);
    expect(v.list).toHaveLength(51);
    expect(v.list[50]).toBe('… 10 more items');
    const emoji = `${'a'.repeat(199)}😀${'b'.repeat(10)}`;
    expect(shortenText(emoji, 200).startsWith(`${'a'.repeat(199)}…`)).toBe(true);
    expect(shortenJson({ a: 'short' })).toEqual({ value: { a: 'short' }, shortened: false });
  });

  it('knows when there is nothing to show', () => {
    expect(hasNoArguments({})).toBe(true);
    expect(hasNoArguments(null)).toBe(true);
    expect(hasNoArguments([])).toBe(true);
    expect(hasNoArguments({ a: 1 })).toBe(false);
    expect(hasNoArguments(0)).toBe(false);
  });
});

describe('words', () => {
  it('how a call was decided', () => {
    expect(howWords('person')).toBe('by you');
    expect(howWords('rule')).toBe('by a rule');
    expect(howWords('batch', 'approved')).toBe('all pending approved at once');
    expect(howWords('batch', 'reject')).toBe('all pending rejected at once');
    expect(howWords('batch')).toBe('all pending decided at once');
    expect(howWords('timeout')).toBe('timed out');
    expect(howWords('policy')).toBe('by policy');
    expect(howWords('nobody')).toBe('nobody could be asked');
  });

  it('decisions and outcomes', () => {
    expect(decisionWords('approved')).toBe('Approved');
    expect(decisionWords('rejected')).toBe('Rejected');
    expect(decisionWords('timed_out')).toBe('Timed out');
    expect(outcomeWords({ kind: 'ok' })).toBe('OK');
    expect(outcomeWords({ kind: 'tool_error' })).toBe('Tool error');
    expect(outcomeWords({ kind: 'failed', message: 'server exited' })).toBe('Failed: server exited');
    expect(outcomeWords(null)).toBe('Did not run');
  });

  it('origins, times and durations', () => {
    expect(originWords('cell 3 of analysis.ipynb')).toBe('from cell 3 of analysis.ipynb');
    expect(originWords(null)).toBe('from code in this notebook');
    expect(originWords('  ')).toBe('from code in this notebook');
    expect(originWords('from a terminal')).toBe('from a terminal');
    expect(timeAgo(0, 500)).toBe('just now');
    expect(timeAgo(0, 12_400)).toBe('12 s ago');
    expect(timeAgo(0, 3 * 60_000 + 5_000)).toBe('3 min ago');
    expect(timeAgo(0, 2 * 3_600_000)).toBe('2 h ago');
    expect(timeAgo(10_000, 0)).toBe('just now');
    expect(formatDuration(85)).toBe('85 ms');
    expect(formatDuration(1234)).toBe('1.2 s');
    expect(formatDuration(42_000)).toBe('42 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
    expect(formatDuration(120_000)).toBe('2 min');
  });
});

describe('ApprovalsModel', () => {
  it('keeps pending requests oldest first, counts those still waiting', () => {
    const m = new ApprovalsModel();
    let changes = 0;
    m.subscribe(() => changes++);
    expect(m.add(request(2, { asked_at: 5000 }))).toBe(true);
    expect(m.add(request(1, { asked_at: 4000 }))).toBe(true);
    expect(m.add(request(1))).toBe(false);
    expect(m.pending.map((i) => i.request.id)).toEqual([1, 2]);
    expect(m.waitingCount).toBe(2);
    m.remove(1);
    expect(m.pending.map((i) => i.request.id)).toEqual([2]);
    // A decided request is not brought back by a late copy.
    expect(m.add(request(1))).toBe(false);
    expect(changes).toBe(3);
  });

  it('a withdrawn request stays with its reason (not counted) until removed', () => {
    const m = new ApprovalsModel();
    m.add(request(1));
    expect(m.withdraw(1, 'nobody decided in time')).toBe(true);
    expect(m.waitingCount).toBe(0);
    expect(m.pending[0]?.state).toBe('withdrawn');
    expect(m.pending[0]?.note).toBe('nobody decided in time');
    m.setDeciding([1], true);
    expect(m.pending[0]?.state).toBe('withdrawn');
    m.remove(1);
    expect(m.pending).toEqual([]);
    expect(m.withdraw(7, 'x')).toBe(false);
  });

  it('groups: each server.tool with two or more waiting, in the order of the oldest', () => {
    const m = new ApprovalsModel();
    m.add(request(1, { server: 'fs', tool: 'write_file' }));
    m.add(request(2));
    m.add(request(3, { server: 'fs', tool: 'write_file' }));
    m.add(request(4));
    m.add(request(5, { server: 'fetch', tool: 'fetch' }));
    expect(m.groups()).toEqual([
      { server: 'fs', tool: 'write_file', count: 2 },
      { server: 'github', tool: 'create_issue', count: 2 },
    ]);
    expect(m.waitingIds('github', 'create_issue')).toEqual([2, 4]);
    expect(m.waitingIds(null, null)).toEqual([1, 2, 3, 4, 5]);
    m.setDeciding([2], true);
    expect(m.item(2)?.state).toBe('deciding');
    expect(m.waitingCount).toBe(5);
  });

  it('sync adds what the backend has and drops what it no longer has (but not what arrived meanwhile)', () => {
    const m = new ApprovalsModel();
    m.add(request(1));
    m.add(request(2));
    const token = m.beginSync();
    m.add(request(5)); // arrived while the list was on its way
    m.sync([request(2), request(3)], token);
    expect(m.pending.map((i) => i.request.id)).toEqual([2, 3, 5]);
    expect(m.add(request(1))).toBe(false);
  });

  it('recent decisions: newest first, at most 20; a finished call leaves the pending list', () => {
    const m = new ApprovalsModel();
    m.add(request(3));
    for (let i = 0; i < 25; i++) m.recordCall(call(i));
    expect(m.recent).toHaveLength(ApprovalsModel.RECENT);
    expect(m.recent[0]?.id).toBe(24);
    expect(m.pending.map((i) => i.request.id)).toEqual([]);
  });
});

describe('session events', () => {
  it('approval events are typed; malformed ones are dropped', () => {
    expect(isSessionEvent({ type: 'approval_requested', request: request(1) })).toBe(true);
    expect(isSessionEvent({ type: 'approval_requested', id: 'x' })).toBe(false);
    expect(isSessionEvent({ type: 'approval_decided', id: 1, decision: 'accept', decided_by: 'person' })).toBe(true);
    expect(isSessionEvent({ type: 'approval_decided', id: 1 })).toBe(false);
    expect(isSessionEvent({ type: 'approval_withdrawn', id: 1, reason: 'r' })).toBe(true);
    expect(isSessionEvent(call(1))).toBe(true);
    expect(isSessionEvent({ type: 'tool_call' })).toBe(false);
    expect(isSessionEvent({ type: 'kernel_idle' })).toBe(true);
  });
});

describe('a rule made from a request’s arguments', () => {
  it('matches the tool and each top-level argument’s exact value', () => {
    const rule = allowArgumentsRule('github', 'create_issue', { owner: 'acme', repo: 'site', labels: ['data', 'bug'], draft: false, n: 3, meta: { a: null } });
    expect(rule).toEqual({
      server: 'github',
      tool: 'create_issue',
      args: {
        owner: { equals: 'acme' },
        repo: { equals: 'site' },
        labels: { equals: ['data', 'bug'] },
        draft: { equals: false },
        n: { equals: 3 },
        meta: { equals: { a: null } },
      },
      exact_args: true,
      decision: 'allow',
      comment: 'added from the approval panel',
    });
    expect(describeRule(rule as Rule)).toBe(
      'Always allow github.create_issue when owner is “acme” and repo is “site” and labels is ["data","bug"] and draft is false and n is 3 and meta is {"a":null}, with no other arguments',
    );
    expect(describeRule({ server: 's', tool: 't', args: { force: { absent: true } }, decision: 'allow' })).toBe('Always allow s.t when force is not given');
  });

  it('for a shell command: exactly that command, said as such', () => {
    const ls = allowArgumentsRule('ipybox', 'shell', { command: 'ls -la' });
    expect(ls).toEqual({ server: 'ipybox', tool: 'shell', args: { command: { equals: 'ls -la' } }, exact_args: true, decision: 'allow', comment: 'added from the approval panel' });
    expect(describeRule(ls as Rule)).toBe('Always allow the shell command “ls -la”');
    expect(describeRule({ server: 'ipybox', tool: 'shell', args: { command: { equals: 'rm -rf /' } }, decision: 'reject', reason: 'never' })).toBe('Always reject the shell command “rm -rf /” — never');
    // Other shell rules are said the general way.
    expect(describeRule({ server: 'ipybox', tool: 'shell', args: { command: { glob: 'ls *' } }, decision: 'allow' })).toBe('Always allow ipybox.shell when command matches ls *');
  });

  it('keeps its own copy of the values', () => {
    const args = { labels: ['a'] };
    const rule = allowArgumentsRule('github', 'create_issue', args);
    args.labels.push('b');
    expect(rule?.args?.labels).toEqual({ equals: ['a'] });
  });

  it('is not offered without arguments: it would allow the whole tool', () => {
    expect(allowArgumentsRule('github', 'get_me', {})).toBeNull();
    expect(allowArgumentsRule('github', 'get_me', null)).toBeNull();
    expect(allowArgumentsRule('github', 'get_me', ['a'])).toBeNull();
    expect(allowArgumentsRule('github', 'get_me', 'x')).toBeNull();
  });

  it('an argument whose name could be read as a JSON Pointer is named by one', () => {
    expect(argumentKey('path')).toBe('path');
    expect(argumentKey('/etc')).toBe('/~1etc');
    expect(argumentKey('')).toBe('/');
    expect(argumentKey('/a~b')).toBe('/~1a~0b');
    expect(argumentName(argumentKey('/a~b')), 'the rules list says the name as it was').toBe('/a~b');
    expect(allowArgumentsRule('s', 't', { '/etc': 1, x: 2 })?.args).toEqual({ '/~1etc': { equals: 1 }, x: { equals: 2 } });
  });

  it('the same rule twice is recognised, whatever the key order or comment', () => {
    const a = allowArgumentsRule('ipybox', 'shell', { command: 'ls' }) as Rule;
    expect(sameRule(a, { decision: 'allow', tool: 'shell', server: 'ipybox', args: { command: { equals: 'ls' } }, exact_args: true, comment: 'mine' })).toBe(true);
    expect(sameRule(a, { decision: 'allow', tool: 'shell', server: 'ipybox', args: { command: { equals: 'ls' } } }), 'one allows other arguments').toBe(false);
    expect(sameRule(a, allowArgumentsRule('ipybox', 'shell', { command: 'ls -la' }) as Rule)).toBe(false);
    expect(sameRule(a, { ...a, decision: 'reject' })).toBe(false);
    expect(sameRule(allowToolRule('a', 'b'), { server: 'a', tool: 'b', decision: 'allow', args: {} })).toBe(true);
  });
});

describe('the time a request has left', () => {
  it('counts down to the approval timeout in force when it was asked', () => {
    expect(timeLeftWords(0, 60, 12_000)).toBe('rejected in 48 s unless you decide');
    expect(timeLeftWords(0, 60, 59_001)).toBe('rejected in 1 s unless you decide');
    expect(timeLeftWords(0, 600, 0)).toBe('rejected in 10 min unless you decide');
    expect(timeLeftWords(0, 60, 60_000), 'past the deadline: nothing to count').toBeNull();
    expect(timeLeftWords(0, null, 0), 'timeout unknown').toBeNull();
  });
});
