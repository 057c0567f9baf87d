/**
 * The session's events, each taken to what it changes: the kernel's status and the start-up
 * banners, the running cells (tool calls, their progress, sandbox blocks), the approvals, the
 * audit log, the MCP servers' statuses and pip's log in the side list.
 */
import * as ipc from '../ipc';
import type { KernelStatus, ServerQuestion, SessionEvent } from '../ipc';
import type { ApprovalsModel } from '../model/approvals';
import type { ServerStatuses } from '../model/serverForm';
import type { Executor } from '../runtime/executor';
import { assertNever } from '../util/assert';
import type { ApprovalsView } from './approvalsView';
import type { AuditView } from './auditView';
import { h } from './dom';
import type { SideList } from './sideList';

/** What the session's events change. */
export interface SessionTargets {
  /** The open notebook's executor (it changes with the notebook). */
  readonly executor: Executor;
  readonly approvals: ApprovalsModel;
  readonly approvalsView: ApprovalsView;
  readonly auditView: AuditView;
  readonly serverStatuses: ServerStatuses;
  readonly sideList: SideList;
  readonly banners: StartBanners;
  /** The kernel's status as the session reports it. */
  kernel(status: KernelStatus): void;
  /** A passing word in the status bar. */
  flash(text: string): void;
  /** A request just announced: open the approvals if it still waits for a person in a moment. */
  approvalAnnounced(id: number): void;
  /** Open the approvals, unless the side panel shows already. */
  openApprovals(): void;
}

/** Take `event` to what it changes. */
export function routeSessionEvent(event: SessionEvent, to: SessionTargets): void {
  switch (event.type) {
    case 'started':
      to.banners.started();
      to.kernel('idle');
      return;
    case 'stopped':
      to.serverStatuses.apply({ type: 'servers_stopped' });
      to.kernel('dead');
      return;
    case 'kernel_busy':
      if (!to.executor.hasSettled(event.execution_id)) to.kernel('busy');
      return;
    case 'kernel_idle':
      to.kernel('idle');
      return;
    case 'kernel_replaced':
      to.serverStatuses.apply({ type: 'servers_stopped' });
      to.kernel('idle');
      to.flash(`The kernel was restarted (${event.reason}). Variables are gone; run the cells again.`);
      return;
    case 'provisioning':
      to.banners.provisioning(event.step, event.steps, event.message);
      to.kernel('starting');
      return;
    case 'startup_failed':
      to.banners.failed(event.message);
      to.kernel('dead');
      return;
    case 'package_install':
      to.sideList.pipLine(event.line);
      return;
    case 'approval_requested':
      to.executor.noteApprovalRequested(event.request);
      if (to.approvals.add(event.request)) to.approvalAnnounced(event.request.id);
      return;
    case 'approval_decided':
      to.executor.noteApprovalDecided(event.id, event.decision, event.decided_by);
      to.approvals.remove(event.id);
      return;
    case 'approval_withdrawn':
      to.approvalsView.withdraw(event.id, event.reason);
      return;
    case 'tool_call':
      to.executor.noteToolCall(event);
      to.approvals.recordCall(event);
      to.auditView.onToolCall();
      // An agent's call that ran started the server in the agent's own kernel session.
      if (event.details?.client && event.outcome) to.serverStatuses.apply({ type: 'agent_call_ran', server: event.server });
      return;
    case 'tool_progress':
      to.executor.noteToolProgress(event);
      return;
    case 'mcp_server_started':
    case 'mcp_server_exited':
    case 'mcp_server_log':
    case 'mcp_sign_in_needed':
      to.serverStatuses.apply(event);
      return;
    case 'sandbox_blocked':
      to.executor.noteSandboxBlock(event.execution_id, event.block);
      return;
    case 'elicitation_requested':
      // Beside the cell's call that it came during; otherwise at the head of the approvals.
      if (!to.executor.noteQuestion(event.question)) {
        to.approvalsView.showQuestion(event.question);
        to.openApprovals();
      }
      return;
    case 'elicitation_ended':
      endedWhileCatchingUp?.add(event.id);
      to.executor.noteQuestionEnded(event.id);
      to.approvalsView.endQuestion(event.id);
      return;
    default:
      assertNever(event, 'session event');
  }
}

/** Questions that ended while a catch-up was on its way (null: none is). */
let endedWhileCatchingUp: Set<number> | null = null;

/**
 * The questions servers asked before this window listened (it was reloaded, or opened after
 * they were asked), each shown as if just asked: under its cell's call when the cell is here,
 * else at the head of the approvals. Call once the session's events are listened to; a
 * question that ends before the answer arrives is not shown.
 */
export async function catchUpQuestions(to: SessionTargets, waiting: () => Promise<ServerQuestion[]> = ipc.waitingQuestions): Promise<void> {
  const ended = new Set<number>();
  endedWhileCatchingUp = ended;
  let questions: ServerQuestion[];
  try {
    questions = await waiting();
  } catch {
    // The events keep the forms; a failed catch-up changes nothing.
    return;
  } finally {
    if (endedWhileCatchingUp === ended) endedWhileCatchingUp = null;
  }
  for (const question of questions) {
    if (!ended.has(question.id)) routeSessionEvent({ type: 'elicitation_requested', question }, to);
  }
}

/** Above the notebook while the session starts: the Python environment's set-up, or why no kernel could start. */
export class StartBanners {
  readonly provisioningEl: HTMLElement;
  readonly startupErrorEl: HTMLElement;
  private readonly provisioningText: HTMLElement;
  private readonly provisioningBar: HTMLProgressElement;
  private readonly startupErrorText: HTMLElement;

  constructor() {
    this.provisioningText = h('span', { class: 'provisioning-text', text: 'Preparing the Python environment…' });
    this.provisioningBar = h('progress', { 'aria-label': 'Setting up the Python environment' });
    this.provisioningEl = h('div', { id: 'provisioning', class: 'banner banner-info', role: 'status', 'aria-live': 'polite', hidden: true }, h('div', { class: 'banner-title', text: 'Setting up Python for the first run' }), this.provisioningText, this.provisioningBar);
    this.startupErrorText = h('pre', { class: 'startup-error-text' });
    this.startupErrorEl = h('div', { id: 'startup-error', class: 'banner banner-error', role: 'alert', hidden: true }, h('div', { class: 'banner-title', text: 'The Python kernel could not be started' }), this.startupErrorText);
  }

  provisioning(step: number, steps: number, message: string): void {
    this.provisioningEl.hidden = false;
    this.provisioningText.textContent = `Step ${step} of ${steps}: ${message}`;
    this.provisioningBar.max = Math.max(1, steps);
    this.provisioningBar.value = Math.min(step, steps);
  }

  started(): void {
    this.provisioningEl.hidden = true;
    this.startupErrorEl.hidden = true;
  }

  failed(message: string): void {
    this.provisioningEl.hidden = true;
    this.showError(message);
  }

  showError(message: string): void {
    this.startupErrorText.textContent = message;
    this.startupErrorEl.hidden = false;
  }

  /** Another session: its own start decides. */
  clearError(): void {
    this.startupErrorEl.hidden = true;
  }
}
