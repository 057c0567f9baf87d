import { describe, expect, it } from 'vitest';
import type { AgentActivity } from '../../src/ipc';
import { AgentSessions } from '../../src/model/agents';
import { claudeCodeCommand, claudeCodeJson, claudeDesktopJson, maskToken, servingStatus } from '../../src/model/endpoint';
import { StreamOutput } from '../../src/model/outputs';

const URL = 'http://127.0.0.1:43121/mcp';

describe('agent sessions', () => {
  it('builds a read-only notebook per session from the activity, in order', () => {
    const agents = new AgentSessions();
    const added: number[] = [];
    agents.subscribe((c) => {
      if (c.type === 'added') added.push(c.session.id);
    });
    const batch: AgentActivity[] = [
      { type: 'cell_queued', session: 7, name: 'agent session 4f2a9c1e', execution_id: 'e1', code: 'print("hi")' },
      { type: 'cell_started', session: 7, execution_id: 'e1', execution_count: 1 },
      { type: 'cell_output', session: 7, execution_id: 'e1', output: { type: 'stream', name: 'stdout', text: 'h' } },
      { type: 'cell_output', session: 7, execution_id: 'e1', output: { type: 'stream', name: 'stdout', text: 'i\n' } },
      { type: 'cell_queued', session: 9, name: 'agent session 00aa11bb', execution_id: 'e2', code: '1/0' },
    ];
    agents.apply(batch);
    expect(added).toEqual([7, 9]);
    const s7 = agents.get(7);
    expect(s7?.notebook.length).toBe(1);
    const cell = s7?.notebook.cell(0);
    expect(cell?.source).toBe('print("hi")');
    expect(cell?.runState).toBe('running');
    expect(cell?.executionCount).toBe(1);
    const out = cell?.outputs[0];
    expect(out instanceof StreamOutput && out.text).toBe('hi\n');
    expect(agents.isBusy(s7!)).toBe(true);

    agents.apply([{ type: 'cell_finished', session: 7, execution_id: 'e1', error: null }]);
    expect(cell?.runState).toBe('done');
    expect(agents.isBusy(s7!)).toBe(false);
  });

  it('marks failures, resets and ends', () => {
    const agents = new AgentSessions();
    agents.apply([
      { type: 'cell_queued', session: 1, name: 'agent session aa', execution_id: 'x', code: '1/0' },
      { type: 'cell_output', session: 1, execution_id: 'x', output: { type: 'error', ename: 'ZeroDivisionError', evalue: 'division by zero', traceback: [] } },
      { type: 'cell_finished', session: 1, execution_id: 'x', error: null },
      { type: 'cell_queued', session: 1, name: 'agent session aa', execution_id: 'y', code: 'while True: pass' },
      { type: 'cell_finished', session: 1, execution_id: 'y', error: 'the execution timed out after 5 s' },
      { type: 'kernel_reset', session: 1 },
      { type: 'cell_queued', session: 1, name: 'agent session aa', execution_id: 'z', code: 'x = 1' },
      { type: 'session_ended', session: 1, reason: 'the client ended the MCP session' },
    ]);
    const s = agents.get(1)!;
    const [a, b, note, c] = s.notebook.cells;
    expect(a?.runState).toBe('failed');
    expect(b?.runState).toBe('failed');
    expect(b?.notice?.text).toContain('timed out');
    expect(note?.type).toBe('markdown');
    expect(c?.runState).toBe('failed');
    expect(s.ended).toBe('the client ended the MCP session');
    expect(s.cells).toBe(3);
  });

  it('ignores activity of cells it never saw', () => {
    const agents = new AgentSessions();
    agents.apply([{ type: 'cell_output', session: 3, execution_id: 'nope', output: { type: 'stream', name: 'stdout', text: 'x' } }]);
    expect(agents.all).toEqual([]);
  });
});

describe('endpoint configurations', () => {
  it('Claude Code gets an HTTP server with the bearer header', () => {
    expect(claudeCodeCommand(URL, 'tok')).toBe(`claude mcp add --transport http ipybox ${URL} --header "Authorization: Bearer tok"`);
    expect(JSON.parse(claudeCodeJson(URL, 'tok'))).toEqual({ mcpServers: { ipybox: { type: 'http', url: URL, headers: { Authorization: 'Bearer tok' } } } });
  });

  it('Claude Desktop goes through mcp-remote with the token in the environment', () => {
    const config = JSON.parse(claudeDesktopJson(URL, 'tok'));
    const server = config.mcpServers.ipybox;
    expect(server.command).toBe('npx');
    expect(server.args).toContain(URL);
    expect(server.args.join(' ')).not.toContain('tok');
    expect(server.env.IPYBOX_AUTH).toBe('Bearer tok');
  });

  it('masks all but the last four characters', () => {
    expect(maskToken('0123456789abcdef')).toBe('••••••••••••cdef');
    expect(maskToken('abc')).toBe('•••');
  });
});

describe('the endpoint status after a change', () => {
  const state = (enabled: boolean, error: string | null = null) => ({ enabled, url: null, token: null, error, sandboxed: true });
  it('says what the backend did, not what was asked', () => {
    expect(servingStatus(true, false, state(true))).toBe('Serving.');
    expect(servingStatus(true, true, state(true))).toBe('Serving with a new token.');
    // The person pressed Cancel in the native question: nothing serves.
    expect(servingStatus(true, false, state(false))).toBe('Not serving: nothing was changed.');
    expect(servingStatus(true, false, state(false, 'port in use'))).toBe('Not serving.');
    expect(servingStatus(false, false, state(false))).toBe('Stopped.');
  });
});
