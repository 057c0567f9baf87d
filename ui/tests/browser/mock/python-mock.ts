/**
 * The Python picker's backend for the browser tests: ipybox's environment, the workspace's
 * `.venv` (present, or made from pyproject.toml), another Python by path. A path with
 * "nokernel" lacks ipykernel until it is installed; one with "missing" does not exist.
 */
import type { KernelPython, PythonCheck, PythonChoice, PythonOptions } from '../../../src/ipc';

export interface PythonMockConfig {
  /** Does the workspace have a `.venv` (default true)? */
  projectExists?: boolean;
  /** Does it have a pyproject.toml (default true)? */
  pyproject?: boolean;
  /** The choice kept for the notebook (default managed). */
  current?: PythonChoice;
  /** Milliseconds a switch takes (the kernel restarting). */
  switchMs?: number;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export function pythonBackend(workspace: string, config: PythonMockConfig) {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const managed = '/home/ana/.local/share/ipybox/venv/bin/python';
  const project = `${workspace}/.venv/bin/python`;
  let projectExists = config.projectExists ?? true;
  let current: PythonChoice = config.current ?? { kind: 'managed' };
  const installed = new Set<string>();
  const pathOf = (c: PythonChoice): string => (c.kind === 'managed' ? managed : c.kind === 'project' ? project : c.path);
  const label = (c: PythonChoice): string => (c.kind === 'managed' ? 'Python 3.12 · ipybox' : c.kind === 'project' ? 'Python 3.11 · .venv' : `Python 3.10 · ${c.path.split('/').slice(-3, -2)[0] ?? 'python'}`);
  const describe = (c: PythonChoice): KernelPython => ({ label: label(c), path: pathOf(c), choice: c });
  const fail = (message: string): never => {
    throw { code: 'PythonEnvError', message };
  };
  const choiceOf = (args: Record<string, unknown>): PythonChoice => {
    const c = args.choice;
    if (typeof c !== 'object' || c === null || !('kind' in c)) return fail('no choice');
    if (c.kind === 'custom' && 'path' in c && typeof c.path === 'string') return { kind: 'custom', path: c.path };
    return c.kind === 'project' ? { kind: 'project' } : { kind: 'managed' };
  };
  const check = (c: PythonChoice): PythonCheck => {
    const path = pathOf(c);
    if (path.includes('missing') || (c.kind === 'project' && !projectExists)) fail(`there is no Python at ${path}`);
    return { label: label(c), path, version: label(c).split(' ')[1] ?? null, ipykernel: !path.includes('nokernel') || installed.has(path) };
  };
  return {
    state: (): KernelPython => describe(current),
    async command(cmd: string, args: Record<string, unknown>): Promise<{ value: Json | PythonOptions | PythonCheck | KernelPython }> {
      switch (cmd) {
        case 'python_options':
          return { value: { current: describe(current), managed, project, projectExists, pyproject: config.pyproject ?? true, uv: true, sandbox: true } satisfies PythonOptions };
        case 'check_python':
          await sleep(10);
          return { value: check(choiceOf(args)) };
        case 'set_python': {
          const c = choiceOf(args);
          if (!check(c).ipykernel) fail('that Python has no ipykernel, which runs the kernel: install it first');
          await sleep(config.switchMs ?? 30);
          current = c;
          return { value: describe(c) };
        }
        case 'install_ipykernel': {
          await sleep(20);
          const path = pathOf(choiceOf(args));
          installed.add(path);
          return { value: `Resolved 20 packages\nInstalled ipykernel into ${path}\n\u202ehidden` };
        }
        case 'create_project_env':
          await sleep(20);
          projectExists = true;
          return { value: 'Using CPython 3.11\nCreating virtual environment at: .venv\nInstalled 3 packages' };
        case 'choose_python':
          return { value: '/opt/envs/nokernel/bin/python' };
        default:
          return fail(`unknown command ${cmd}`);
      }
    },
  };
}
