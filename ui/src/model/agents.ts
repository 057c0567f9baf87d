/**
 * Agents' sessions on the app's MCP endpoint, each a notebook the agent writes: a cell per
 * `execute_ipython_cell`, its outputs as they stream. Built from the backend's activity
 * batches; no DOM.
 */
import type { AgentActivity } from '../ipc';
import { mimeBundleFromJson } from './outputs';
import { Cell } from './cell';
import { Notebook } from './notebook';
import { isJsonObject } from '../util/json';

export interface AgentSession {
  readonly id: number;
  /** "agent session 4f2a9c1e", as approval dialogs and the audit log name it. */
  name: string;
  readonly notebook: Notebook;
  /** Why it ended; null while it runs. */
  ended: string | null;
  /** Cells the agent sent. */
  cells: number;
}

export type AgentsChange =
  | { type: 'added'; session: AgentSession }
  /** Its name, its end, or whether a cell runs changed (not its cells: the notebook tells those). */
  | { type: 'changed'; session: AgentSession };

export class AgentSessions {
  private readonly sessions = new Map<number, AgentSession>();
  private readonly cells = new Map<string, Cell>();
  private readonly listeners = new Set<(change: AgentsChange) => void>();

  get all(): AgentSession[] {
    return [...this.sessions.values()];
  }

  get(id: number): AgentSession | undefined {
    return this.sessions.get(id);
  }

  subscribe(listener: (change: AgentsChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Is a cell of `session` queued or running? */
  isBusy(session: AgentSession): boolean {
    return session.notebook.cells.some((c) => c.runState === 'queued' || c.runState === 'running');
  }

  apply(batch: readonly AgentActivity[]): void {
    for (const activity of batch) this.applyOne(activity);
  }

  private applyOne(a: AgentActivity): void {
    switch (a.type) {
      case 'cell_queued': {
        let session = this.sessions.get(a.session);
        if (!session) {
          session = { id: a.session, name: a.name, notebook: new Notebook(), ended: null, cells: 0 };
          this.sessions.set(a.session, session);
          this.emit({ type: 'added', session });
        } else if (session.name !== a.name) {
          session.name = a.name;
        }
        const cell = new Cell({ type: 'code', source: a.code });
        cell.setRunState('queued');
        this.cells.set(a.execution_id, cell);
        session.cells++;
        session.notebook.insert(session.notebook.length, [cell]);
        this.emit({ type: 'changed', session });
        return;
      }
      case 'cell_started': {
        const cell = this.cells.get(a.execution_id);
        if (!cell) return;
        cell.setExecutionCount(a.execution_count);
        cell.setRunState('running');
        return;
      }
      case 'cell_output': {
        const cell = this.cells.get(a.execution_id);
        if (!cell) return;
        const out = a.output;
        if (out.type === 'update_display_data') {
          this.sessions.get(a.session)?.notebook.updateDisplay(out.display_id, mimeBundleFromJson(out.data), isJsonObject(out.metadata) ? out.metadata : {});
        } else {
          cell.applyOutput(out);
        }
        return;
      }
      case 'cell_finished': {
        const cell = this.cells.get(a.execution_id);
        if (!cell) return;
        this.cells.delete(a.execution_id);
        cell.settlePendingClear();
        const failed = a.error !== null || cell.outputs.some((o) => o.kind === 'error');
        if (a.error !== null) cell.setNotice({ kind: 'error', text: a.error });
        cell.setRunState(failed ? 'failed' : 'done');
        const session = this.sessions.get(a.session);
        if (session) this.emit({ type: 'changed', session });
        return;
      }
      case 'kernel_reset': {
        const session = this.sessions.get(a.session);
        if (!session) return;
        const note = new Cell({ type: 'markdown', source: '*The agent reset its kernel: the variables of the cells above are gone.*' });
        session.notebook.insert(session.notebook.length, [note]);
        return;
      }
      case 'session_ended': {
        const session = this.sessions.get(a.session);
        if (!session) return;
        session.ended = a.reason;
        for (const cell of session.notebook.cells) {
          if (cell.runState === 'queued' || cell.runState === 'running') cell.setRunState('failed');
        }
        this.emit({ type: 'changed', session });
        return;
      }
      default: {
        const unknown: never = a;
        void unknown;
      }
    }
  }

  private emit(change: AgentsChange): void {
    for (const l of [...this.listeners]) l(change);
  }
}
