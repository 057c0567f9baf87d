/**
 * What arrives from the backend, checked before the window relies on it (session events, an
 * approval request, a server's question), and the backend's errors as the window words them.
 * `ipc.ts` re-exports what the rest of the UI uses.
 */
import { assertNever } from './util/assert';
import type { ApprovalRequest, DesktopError, ErrorCode, Rule, ServerQuestion, SessionEvent as EngineSessionEvent, SessionNotice } from './generated/backend';

/** A command's rejection, as the window handles it. */
export type BackendError = DesktopError;

/** What a session tells the window: the engine's events and the desktop's own notices. */
export type SessionEvent = EngineSessionEvent | SessionNotice;

// ---- MCP tool calls and their approval

/** The workspace's approval rules, as in the rules file (docs/approval-rules.md). */
export interface ApprovalRules {
  version: 1;
  rules: Rule[];
}

const SESSION_EVENT_TYPES: ReadonlySet<string> = new Set<SessionEvent['type']>([
  'started',
  'stopped',
  'kernel_busy',
  'kernel_idle',
  'kernel_replaced',
  'provisioning',
  'startup_failed',
  'package_install',
  'approval_requested',
  'approval_decided',
  'approval_withdrawn',
  'tool_call',
  'tool_progress',
  'mcp_server_started',
  'mcp_server_exited',
  'mcp_server_log',
  'mcp_sign_in_needed',
  'sandbox_blocked',
  'elicitation_requested',
  'elicitation_ended',
]);

const ERROR_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'CodeExecutionError',
  'Timeout',
  'KernelDied',
  'Cancelled',
  'GatewayError',
  'KernelStartFailed',
  'PythonEnvError',
  'ImageError',
  'NotRunning',
  'McpError',
  'InvalidConfig',
  'SandboxUnavailable',
  'IoError',
  'SignInRequired',
  'InvalidAnswer',
]);

function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && ERROR_CODES.has(value);
}

export function isSessionEvent(value: unknown): value is SessionEvent {
  if (
    typeof value !== 'object' ||
    value === null ||
    !('type' in value) ||
    typeof value.type !== 'string' ||
    !SESSION_EVENT_TYPES.has(value.type)
  ) {
    return false;
  }
  // The approval events carry data the panel relies on: malformed ones are dropped.
  const v = value as Record<string, unknown>;
  switch (value.type) {
    case 'approval_requested':
      return isApprovalRequest(v.request);
    case 'approval_decided':
      return typeof v.id === 'number' && (v.decision === 'accept' || v.decision === 'reject');
    case 'approval_withdrawn':
      return typeof v.id === 'number';
    case 'tool_call':
      return typeof v.id === 'number' && typeof v.server === 'string' && typeof v.tool === 'string' && typeof v.decision === 'string';
    case 'tool_progress':
      return (
        typeof v.id === 'number' &&
        typeof v.progress === 'number' &&
        Number.isFinite(v.progress) &&
        (v.total === null || v.total === undefined || (typeof v.total === 'number' && Number.isFinite(v.total))) &&
        (v.message === null || v.message === undefined || typeof v.message === 'string')
      );
    case 'mcp_server_log':
      return typeof v.server === 'string' && typeof v.level === 'string' && typeof v.message === 'string';
    case 'mcp_sign_in_needed':
      return typeof v.server === 'string' && typeof v.again === 'boolean';
    case 'elicitation_requested':
      return isServerQuestion(v.question);
    case 'elicitation_ended':
      return typeof v.id === 'number';
    default:
      return true;
  }
}

export function isServerQuestion(value: unknown): value is ServerQuestion {
  if (typeof value !== 'object' || value === null) return false;
  const q = value as Record<string, unknown>;
  const form = q.form as Record<string, unknown> | null | undefined;
  return typeof q.id === 'number' && typeof q.server === 'string' && typeof q.message === 'string' && typeof form === 'object' && form !== null && Array.isArray(form.fields);
}

export function isApprovalRequest(value: unknown): value is ApprovalRequest {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  return typeof r.id === 'number' && typeof r.server === 'string' && typeof r.tool === 'string' && typeof r.asked_at === 'number';
}

/** Any rejection of a command, as a BackendError (unknown shapes become IoError with their text). */
export function toBackendError(err: unknown): BackendError {
  if (typeof err === 'object' && err !== null && 'code' in err && 'message' in err) {
    const message = typeof err.message === 'string' ? err.message : String(err.message);
    if (isErrorCode(err.code)) return { code: err.code, message };
    return { code: 'IoError', message };
  }
  if (err instanceof Error) return { code: 'IoError', message: err.message };
  return { code: 'IoError', message: String(err) };
}

/** A backend error in words, for the place it happened. */
export function describeError(err: BackendError): string {
  // The engine's words for this one are for programmers ("call start() first").
  if (err.code === 'NotRunning') return 'The kernel is not running: it could not start, or it stopped. Restart it with ⟳ in the toolbar.';
  const detail = err.message.trim();
  const prefix = ((): string => {
    switch (err.code) {
      case 'CodeExecutionError':
        return 'The code raised an exception.';
      case 'Timeout':
        return 'The execution timed out and was interrupted.';
      case 'KernelDied':
        return 'The kernel died while running this cell. Its state is lost; it is being restarted.';
      case 'Cancelled':
        return 'Cancelled.';
      case 'GatewayError':
        return 'The kernel gateway reported an error.';
      case 'KernelStartFailed':
        return 'The kernel could not be started.';
      case 'PythonEnvError':
        return 'The Python environment has a problem.';
      case 'ImageError':
        return 'An image could not be processed.';
      case 'McpError':
        return 'An MCP server reported an error.';
      case 'InvalidConfig':
        return 'The configuration is invalid.';
      case 'SandboxUnavailable':
        return 'The sandbox is not available on this machine.';
      case 'IoError':
        return 'A file or system operation failed.';
      case 'SignInRequired':
        return 'The MCP server asks you to sign in.';
      case 'InvalidAnswer':
        return 'The answer was not sent.';
      default:
        return assertNever(err.code, 'error code');
    }
  })();
  return detail ? `${prefix} ${detail}` : prefix;
}
