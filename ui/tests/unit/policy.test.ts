import { describe, expect, it } from 'vitest';
import kernel from '../../../sandbox-profiles/kernel.json';
import pypi from '../../../sandbox-profiles/kernel-allow-pypi.json';
import { PolicyDraft, domainProblem, getFlag, getList, localProblems, parsePolicy, pathProblem, policyText, problemsByField, relativeToWorkspace, setFlag, setList, summarize } from '../../src/model/policy';

const words = (p: unknown): string[] => summarize(p as Parameters<typeof summarize>[0]).map((l) => l.text);

describe('the policy in words', () => {
  it('says what the shipped pypi profile allows, as the issue puts it', () => {
    const [write, read, net, sockets] = words(pypi);
    expect(write).toBe('Code may write in: this workspace.');
    expect(read).toMatch(/^Code may read everything except: \.env, \*\*\/\.env, \*\*\/\.env\.\*, ~\/\.ssh, ~\/\.aws, .*~\/\.claude, .*~\/\.mozilla, .*~\/\.bash_history, .*~\/\.password-store, .*~\/\.thunderbird, .*~\/\.fetchmailrc\.$/);
    expect(words(kernel)[1]).toBe(`Code may read everything except: ${kernel.filesystem.denyRead.join(', ')}.`);
    expect(words(kernel)[1]).not.toMatch(/ more\.$/);
    expect(net).toBe('Code may reach: pypi.org, files.pythonhosted.org; nothing else on the network.');
    expect(sockets).toMatch(/may not open Unix sockets/);
  });

  it('says "no network" for the default and lists an added folder', () => {
    const p = parsePolicy(JSON.stringify(kernel));
    if (!p.ok) throw new Error(p.message);
    const edited = setList(p.policy, 'filesystem.allowWrite', ['.', 'out/']);
    const lines = summarize(edited);
    expect(lines[0]?.text).toBe('Code may write in: this workspace, out/.');
    expect(lines.find((l) => l.topic === 'network')?.text).toBe('Code may not reach the network at all.');
    expect(lines.every((l) => !l.warn), 'the default weakens nothing').toBe(true);
  });

  it('flags what weakens the sandbox', () => {
    let p = parsePolicy('{"filesystem":{"denyRead":[],"allowWrite":["~"],"denyWrite":["~/.bashrc"]},"network":{"allowedDomains":["*.github.com"],"deniedDomains":["gist.github.com"]}}');
    if (!p.ok) throw new Error(p.message);
    let policy = setFlag(p.policy, 'network.allowAllUnixSockets', true);
    const lines = summarize(policy);
    expect(lines[0]).toEqual({ topic: 'write', text: 'Code may write in: your whole home folder; except: ~/.bashrc.', warn: true });
    expect(lines[1]).toEqual({ topic: 'read', text: 'Code may read everything you can.', warn: true });
    expect(lines[2]?.text).toBe('Code may reach: any subdomain of github.com, but never: gist.github.com; nothing else on the network.');
    expect(lines[3]?.warn).toBe(true);
    policy = setFlag(policy, 'filesystem.allowGitConfig', true);
    expect(summarize(policy).find((l) => l.text.includes('.git/config'))?.warn).toBe(true);
    policy = setFlag(policy, 'filesystem.disabled', true);
    expect(summarize(policy)[0]?.text).toMatch(/File restrictions are off/);
    p = parsePolicy('{}');
    expect(p.ok && summarize(p.policy)[0]?.text).toBe('Code may not write anywhere (only in ipybox’s own session folder).');
  });
});

describe('editing keeps what it does not know', () => {
  it('sets lists and flags without losing other keys or their order', () => {
    const p = parsePolicy('{"filesystem":{"denyRead":[".env"],"allowWrite":["."],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[],"x":1},"mandatoryDenySearchDepth":3}');
    if (!p.ok) throw new Error(p.message);
    let policy = setList(p.policy, 'network.allowedDomains', ['pypi.org']);
    policy = setFlag(policy, 'network.allowAllUnixSockets', true);
    policy = setFlag(policy, 'network.allowAllUnixSockets', false);
    policy = setList(policy, 'filesystem.allowRead', []);
    expect(policyText(policy)).toBe(`${JSON.stringify({ filesystem: { denyRead: ['.env'], allowWrite: ['.'], denyWrite: [] }, network: { allowedDomains: ['pypi.org'], deniedDomains: [], x: 1 }, mandatoryDenySearchDepth: 3 }, null, 2)}\n`);
    expect(getList(policy, 'filesystem.allowRead')).toEqual([]);
    expect(getFlag(policy, 'network.allowAllUnixSockets')).toBe(false);
  });

  it('refuses text that is not a policy, in words', () => {
    expect(parsePolicy('{ nope')).toMatchObject({ ok: false });
    expect(parsePolicy('[]')).toEqual({ ok: false, message: 'The policy must be a JSON object with “filesystem” and “network” sections.' });
    expect(parsePolicy('{"filesystem":{"denyRead":"x"}}')).toEqual({ ok: false, message: '“filesystem.denyRead” must be a list of strings.' });
  });
});

describe('validation, one message per field', () => {
  it('mirrors the engine on domains and paths', () => {
    expect(domainProblem('pypi.org')).toBeNull();
    expect(domainProblem('*.example.org')).toBeNull();
    expect(domainProblem('example.org:443')).toBeNull();
    expect(domainProblem('https://x.org')).toBe('"https://x.org" is a URL; give the domain alone (example.org)');
    expect(domainProblem('x.org/a')).toMatch(/has a path/);
    expect(domainProblem('x.org:99999')).toMatch(/is not a port/);
    expect(domainProblem('a..b')).toMatch(/is not a domain name/);
    expect(domainProblem('')).toBe('the domain is empty');
    expect(pathProblem('out/')).toBeNull();
    expect(pathProblem(' out')).toMatch(/spaces/);
    expect(pathProblem('~bob/x')).toMatch(/another user/);
  });

  it('names each field the way the engine does, and the engine wins', () => {
    const p = parsePolicy('{"filesystem":{"denyRead":[""],"allowWrite":["/"],"denyWrite":[]},"network":{"allowedDomains":["ok.org","https://x.org","*"],"deniedDomains":[]}}');
    if (!p.ok) throw new Error(p.message);
    const local = localProblems(p.policy);
    expect(local.map((x) => [x.field, x.severity])).toEqual([
      ['filesystem.allowWrite[0]', 'warning'],
      ['filesystem.denyRead[0]', 'error'],
      ['network.allowedDomains[1]', 'error'],
      ['network.allowedDomains[2]', 'error'],
    ]);
    expect(domainProblem('*')).toMatch(/every domain, which the sandbox refuses/);
    expect(domainProblem('*.com')).toBe('"*.com" would allow a whole top-level domain, which the sandbox refuses; name the site (*.example.com)');
    expect(domainProblem('*.co.uk')).toBeNull();
    expect(domainProblem('*', false), 'a lone * in deniedDomains denies everything').toBeNull();
    const engine = [{ field: 'network.allowedDomains[2]', message: 'srt refuses *', severity: 'error' as const }];
    const byField = problemsByField(engine, local);
    expect(byField.get('network.allowedDomains[2]')?.message).toBe('srt refuses *');
    expect(byField.size).toBe(4);
  });

  it('puts the engine\'s danger (a place no grant may open) above a warning, never above an error', () => {
    const danger = { field: 'filesystem.allowWrite[0]', message: 'Writing /: it would open your whole home folder (~)', severity: 'danger' as const };
    const warning = { field: 'filesystem.allowWrite[0]', message: 'lets code write your whole disk', severity: 'warning' as const };
    const error = { field: 'filesystem.allowWrite[0]', message: 'the path is empty', severity: 'error' as const };
    expect(problemsByField([danger], [warning]).get(danger.field)?.severity, 'the engine\'s danger wins over the quick warning').toBe('danger');
    expect(problemsByField([warning], [danger]).get(danger.field)?.severity, 'whichever list it came in').toBe('danger');
    expect(problemsByField([error, danger]).get(danger.field)?.severity, 'an error still stops saving').toBe('error');
  });
});

describe('a change on disk while editing', () => {
  const a = '{"filesystem":{"allowWrite":["."]},"network":{"allowedDomains":[]}}';
  const b = '{"filesystem":{"allowWrite":[".","out/"]},"network":{"allowedDomains":[]}}';

  it('loads at once without local edits', () => {
    const d = new PolicyDraft(a);
    expect(d.dirty).toBe(false);
    expect(d.external(a)).toBe('same');
    expect(d.external(b)).toBe('reloaded');
    expect(getList(d.policy, 'filesystem.allowWrite')).toEqual(['.', 'out/']);
  });

  it('asks with local edits: keep mine or load theirs', () => {
    const d = new PolicyDraft(a);
    d.edit(setList(d.policy, 'network.allowedDomains', ['pypi.org']));
    expect(d.dirty).toBe(true);
    expect(d.external(b)).toBe('conflict');
    expect(getList(d.policy, 'network.allowedDomains'), 'nothing typed is lost').toEqual(['pypi.org']);
    d.keepMine();
    expect(d.dirty).toBe(true);
    expect(d.external(b), 'the same outside change does not ask twice').toBe('same');
    expect(d.external(d.text), 'our own save, seen by the watch first').toBe('same');
    expect(d.dirty).toBe(false);
    const e = new PolicyDraft(a);
    e.edit(setList(e.policy, 'network.allowedDomains', ['pypi.org']));
    e.external(b);
    expect(e.loadTheirs()).toBe(true);
    expect(e.dirty).toBe(false);
    expect(getList(e.policy, 'filesystem.allowWrite')).toEqual(['.', 'out/']);
  });
});

describe('relativeToWorkspace', () => {
  const ws = '/home/ana/weather';
  it('writes a pick inside the workspace relative to it, a folder with a slash', () => {
    expect(relativeToWorkspace(`${ws}/policies/mcp.json`, ws, false)).toBe('policies/mcp.json');
    expect(relativeToWorkspace(`${ws}/out`, ws, true)).toBe('out/');
    expect(relativeToWorkspace(ws, ws, true)).toBe('.');
    expect(relativeToWorkspace(`${ws}/a.json`, `${ws}/`, false)).toBe('a.json');
  });
  it('keeps a pick outside it, or in a folder that only starts with its name, as it is', () => {
    expect(relativeToWorkspace('/etc/ipybox/mcp.json', ws, false)).toBe('/etc/ipybox/mcp.json');
    expect(relativeToWorkspace(`${ws}-old/mcp.json`, ws, false)).toBe(`${ws}-old/mcp.json`);
    expect(relativeToWorkspace(`${ws}/x.json`, undefined, false)).toBe(`${ws}/x.json`);
  });
});
