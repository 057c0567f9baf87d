import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import kernel from '../../../sandbox-profiles/kernel.json';
import workspaceOnly from '../../../sandbox-profiles/kernel-workspace-only.json';
import { getList, parsePolicy, setFlag, setList } from '../../src/model/policy';
import { changeCount, grantWarnings, listChange, nearestBase, presetBases, resetFlags, resetList } from '../../src/model/policyChanges';
import type { JsonObject } from '../../src/util/json';

const profiles = new Map([
  ['kernel', JSON.stringify(kernel)],
  ['kernel-workspace-only', JSON.stringify(workspaceOnly)],
]);
const bases = presetBases(profiles);

function parse(value: unknown): JsonObject {
  const p = parsePolicy(JSON.stringify(value));
  if (!p.ok) throw new Error(p.message);
  return p.policy;
}

const fields = (policy: JsonObject): string[] => grantWarnings(policy).map((w) => w.field);

describe('changes against the preset', () => {
  it('compares with the nearest preset and names each entry added and removed', () => {
    let p = parse(kernel);
    p = setList(p, 'filesystem.allowWrite', ['.', 'out/']);
    p = setList(p, 'filesystem.denyRead', getList(p, 'filesystem.denyRead').filter((d) => d !== '~/.claude'));
    const base = nearestBase(p, bases);
    expect(base?.id, 'two changes from My files, many from Workspace only').toBe('kernel');
    if (!base) return;
    expect(listChange(p, base.policy, 'filesystem.allowWrite')).toEqual({ added: ['out/'], removed: [] });
    expect(listChange(p, base.policy, 'filesystem.denyRead')).toEqual({ added: [], removed: ['~/.claude'] });
    expect(changeCount(p, base.policy)).toBe(2);
    expect(nearestBase(parse(workspaceOnly), bases)?.id).toBe('kernel-workspace-only');
    expect(nearestBase(parse(kernel), bases)?.id).toBe('kernel');
  });

  it('resets one list, or the switches, to the preset and keeps the rest', () => {
    const base = parse(kernel);
    let p = setList(base, 'filesystem.allowWrite', ['.', 'out/']);
    p = setList(p, 'network.allowedDomains', ['pypi.org']);
    p = setFlag(p, 'network.allowAllUnixSockets', true);
    const one = resetList(p, base, 'filesystem.allowWrite');
    expect(getList(one, 'filesystem.allowWrite')).toEqual(['.']);
    expect(getList(one, 'network.allowedDomains'), 'the other list is kept').toEqual(['pypi.org']);
    expect(changeCount(resetFlags(one, base), base)).toBe(1);
    expect(changeCount(resetList(resetFlags(one, base), base, 'network.allowedDomains'), base)).toBe(0);
  });
});

describe('warnings for the grants that matter', () => {
  it('says nothing for the presets', () => {
    expect(grantWarnings(parse(kernel))).toEqual([]);
    expect(grantWarnings(parse(workspaceOnly))).toEqual([]);
  });

  it('warns on writing the home or a startup file, and says what it lets code do', () => {
    const p = setList(parse(kernel), 'filesystem.allowWrite', ['.', '~/', '~/.config', '~/.config/autostart/x.desktop', '~/.bashrc', '~/data', '/tmp', '/']);
    const ws = grantWarnings(p);
    expect(ws.map((w) => w.field)).toEqual(['filesystem.allowWrite[1]', 'filesystem.allowWrite[2]', 'filesystem.allowWrite[3]', 'filesystem.allowWrite[4]', 'filesystem.allowWrite[7]']);
    expect(ws[0]?.text).toMatch(/^Writing ~\/: code may change any file of yours, including what runs when you log in/);
    expect(ws[1]?.text).toMatch(/^Writing ~\/\.config: code may change ~\/\.config\/autostart, ~\/\.config\/systemd, .*which run outside the sandbox when you log in/);
    expect(ws[3]?.text).toMatch(/^Writing ~\/\.bashrc: code may change ~\/\.bashrc, which runs outside/);
  });

  it('warns on reading a secrets folder, however it became readable', () => {
    const dropped = setList(parse(kernel), 'filesystem.denyRead', getList(parse(kernel), 'filesystem.denyRead').filter((d) => d !== '~/.ssh' && d !== '~/.aws'));
    const [w] = grantWarnings(dropped);
    expect(w?.field).toBe('filesystem.denyRead');
    expect(w?.text).toBe('Reading secrets: code may read ~/.ssh (SSH keys), ~/.aws (AWS credentials), and send them wherever it can reach, an agent’s conversation included.');
    const again = setList(parse(workspaceOnly), 'filesystem.allowRead', [...getList(parse(workspaceOnly), 'filesystem.allowRead'), '~/.ssh/id_ed25519']);
    expect(fields(again), 'a key inside the secrets folder, read again').toEqual([`filesystem.allowRead[${getList(again, 'filesystem.allowRead').length - 1}]`]);
    const home = setList(parse(workspaceOnly), 'filesystem.allowRead', ['.', '~']);
    expect(grantWarnings(home)[0]?.text).toMatch(/~\/\.ssh \(SSH keys\).*~\/\.claude/);
    const notSecret = setList(parse(workspaceOnly), 'filesystem.allowRead', ['.', '~/data', '~/.config/myapp']);
    expect(grantWarnings(notSecret), 'reading other folders again is no secret').toEqual([]);
  });

  it('warns on a wildcard domain, the Docker socket, every socket and file restrictions off', () => {
    let p = setList(parse(kernel), 'network.allowedDomains', ['pypi.org', '*.github.com']);
    p = setList(p, 'network.allowUnixSockets', ['/var/run/docker.sock', '/tmp/app.sock']);
    const ws = grantWarnings(p);
    expect(ws.map((w) => w.field)).toEqual(['network.allowedDomains[1]', 'network.allowUnixSockets[0]']);
    expect(ws[0]?.text).toMatch(/^Reaching \*\.github\.com: code may reach every server under github\.com, including ones other people run/);
    expect(ws[1]?.text).toMatch(/run anything as root/);
    expect(fields(setFlag(parse(kernel), 'network.allowAllUnixSockets', true))).toEqual(['network.allowAllUnixSockets']);
    expect(fields(setFlag(parse(kernel), 'filesystem.disabled', true))).toEqual(['filesystem.disabled']);
    expect(fields(setFlag(parse(kernel), 'enableWeakerNestedSandbox', true)), 'a switch that is not one of these explains itself in its help').toEqual([]);
  });
});

// The same file the engine's review (src-tauri/src/sandbox/grants.rs) is tested with: the tab
// and the command line word the grants that matter alike.
const SHARED = fileURLToPath(new URL('../../../tests/fixtures/grant-warnings/cases.json', import.meta.url));
const shared = JSON.parse(readFileSync(SHARED, 'utf8')) as { cases: { name: string; policy: JsonObject; warnings: { field: string; message: string }[] }[] };

describe('the grants that matter, as the engine words them', () => {
  it('has its cases', () => {
    expect(shared.cases.length).toBeGreaterThanOrEqual(9);
  });
  for (const c of shared.cases) {
    it(c.name, () => {
      expect(grantWarnings(c.policy).map((w) => ({ field: w.field, message: w.text }))).toEqual(c.warnings);
    });
  }
});
