/**
 * The backend contract: every Tauri command, event and window/dialog call the UI makes.
 * This is the only module that calls `invoke`; everything else imports typed functions from here.
 */
import type { CodeActionDraft } from './model/codeAction';
import { Channel, invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import { getCurrentWindow } from '@tauri-apps/api/window';
import { ask, message, open as openDialog } from '@tauri-apps/plugin-dialog';
import { assertNever } from './util/assert';
import type { JsonObject, JsonValue } from './util/json';
import type { ProcessExit, ServerParamsJson, ToolChanges, VariableSource } from './model/serverForm';
import type { PolicyProblem } from './model/policy';

// ---------------------------------------------------------------------------------------------
// Types

export type ErrorCode =
  | 'CodeExecutionError'
  | 'Timeout'
  | 'KernelDied'
  | 'Cancelled'
  | 'GatewayError'
  | 'KernelStartFailed'
  | 'PythonEnvError'
  | 'ImageError'
  | 'NotRunning'
  | 'McpError'
  | 'InvalidConfig'
  | 'SandboxUnavailable'
  | 'IoError';

export interface BackendError {
  code: ErrorCode;
  message: string;
}

export type KernelStatus = 'starting' | 'idle' | 'busy' | 'dead';

export interface AppState {
  workspace: string;
  workspaceName: string;
  notebookPath: string;
  /** File contents, null when the file does not exist yet. */
  notebook: string | null;
  /** Recent workspaces, newest first. */
  recent: string[];
  sandbox: boolean;
  /** The server the kernel runs on (its URL); null or absent: this computer. */
  remote?: string | null;
  kernel: KernelStatus;
  /**
   * Proposed, optional: session events sent before the UI listened are lost, so the state may
   * carry the provisioning step in progress and a start-up failure that already happened.
   */
  provisioning?: { step: number; steps: number; message: string } | null;
  startupError?: BackendError | null;
}

/** MIME type → string (or string[] in files) or JSON for JSON types. */
export type WireMimeBundle = { [mime: string]: JsonValue };

/** Jupyter iopub output shapes, tagged by `type`. */
export type IopubOutput =
  | { type: 'stream'; name: 'stdout' | 'stderr'; text: string }
  | { type: 'display_data'; data: WireMimeBundle; metadata: JsonObject; display_id?: string | null }
  | { type: 'execute_result'; execution_count: number | null; data: WireMimeBundle; metadata: JsonObject }
  | { type: 'update_display_data'; display_id: string; data: WireMimeBundle; metadata: JsonObject }
  | { type: 'clear_output'; wait: boolean }
  | { type: 'error'; ename: string; evalue: string; traceback: string[] };

export type ExecEvent =
  | { type: 'started'; executionCount: number | null }
  | { type: 'outputs'; outputs: IopubOutput[] }
  | { type: 'input'; id: number; prompt: string; password: boolean }
  | { type: 'finished' }
  | { type: 'failed'; error: BackendError };

export type SessionEvent =
  | { type: 'started' }
  | { type: 'stopped' }
  | { type: 'kernel_busy'; execution_id: string }
  | { type: 'kernel_idle' }
  | { type: 'kernel_replaced'; reason: string }
  | { type: 'provisioning'; step: number; steps: number; message: string }
  | { type: 'startup_failed'; code: ErrorCode; message: string }
  | { type: 'package_install'; spec: string; line: string }
  | { type: 'approval_requested'; request: ApprovalRequest }
  | { type: 'approval_decided'; id: number; decision: ApprovalDecision; decided_by: DecidedBy }
  | { type: 'approval_withdrawn'; id: number; reason: string }
  | ToolCallEvent
  | ToolProgressEvent
  // MCP servers started on a call, and gone on their own (`stderr`: their last lines;
  // `exit`: how the process ended, absent for a remote server's closed connection).
  | { type: 'mcp_server_started'; server: string }
  | { type: 'mcp_server_exited'; server: string; stderr: string; exit?: ProcessExit }
  // A log message an MCP server sent (`level`: its syslog level name; `message`: untrusted).
  | { type: 'mcp_server_log'; server: string; level: string; message: string }
  // A cell the sandbox blocked, as ipybox checked it against the policy in force.
  | { type: 'sandbox_blocked'; execution_id: string; block: SandboxBlock };

// ---- MCP tool calls and their approval

/** A tool call that waits for a person's decision. */
export interface ApprovalRequest {
  id: number;
  server: string;
  tool: string;
  arguments: JsonValue;
  server_description: string;
  execution_id: string | null;
  /** Where the call came from in words, e.g. "cell 3 of analysis.ipynb"; null when unknown. */
  origin: string | null;
  /** When it was asked, ms since the epoch. */
  asked_at: number;
  /** When it is rejected unless decided (the approval timeout when it was asked), ms since the epoch. */
  deadline?: number;
  /** What the person is shown about the tool and the caller; absent from an older backend. */
  details?: CallDetails;
}

/** The MCP tool annotations: claims the server makes about its tool, not facts ipybox checked. */
export interface ToolHints {
  read_only?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  open_world?: boolean;
}

/** A tool as its server lists it (`tools/list`). Every text in it comes from the server. */
export interface ToolDefinition {
  name: string;
  title?: string;
  description?: string;
  input_schema?: JsonValue;
  hints?: ToolHints;
}

/** A tool whose definition differs from the one a person accepted (`accepted` null: it appeared since). */
export interface DefinitionChange {
  accepted: ToolDefinition | null;
  now: ToolDefinition;
}

/** The MCP client an agent connected with, as it declared itself (`clientInfo`). */
export interface ClientInfo {
  name: string;
  version?: string;
  /** The agent session (ipybox's id for it). */
  session: string;
  /** ms since the epoch. */
  connected_at_ms?: number;
}

/** What a request carries besides the call itself (src-tauri/src/tools/definition.rs, `CallDetails`). */
export interface CallDetails {
  tool?: ToolDefinition;
  change?: DefinitionChange;
  client?: ClientInfo;
  /** The line of code that made the call ("line 2: fx.touch(path=p)"). */
  call_site?: string;
}

/** A grant "for this session": calls to `server.tool` run without asking until the kernel restarts or the agent's session ends. */
export interface ApprovalGrant {
  id: number;
  server: string;
  tool: string;
  scope: 'notebook' | 'agent';
  /** The agent session it covers; null for the notebook's kernel. */
  session: string | null;
  /** ms since the epoch. */
  granted_at: number;
}

export type ApprovalDecision = 'accept' | 'reject';

/** Who or what decided a tool call. */
export type DecidedBy = 'person' | 'batch' | 'rule' | 'grant' | 'timeout' | 'policy' | 'nobody';

/** What a call that ran returned. */
export type CallOutcome = { kind: 'ok' } | { kind: 'tool_error' } | { kind: 'failed'; message: string };

export type CallDecision = 'approved' | 'rejected' | 'timed_out';

/** A tool call ended (session event). */
export interface ToolCallEvent {
  type: 'tool_call';
  id: number;
  server: string;
  tool: string;
  arguments: JsonValue;
  execution_id: string | null;
  origin: string | null;
  decision: CallDecision;
  decided_by: DecidedBy;
  /** Why it was not approved, in words ("nobody decided within 60 s"); null or absent when it was. */
  reason?: string | null;
  /** Null when the call did not run. */
  outcome: CallOutcome | null;
  duration_ms: number;
  /** Which rule decided it, in words; absent when no rule did (or from an older backend). */
  rule?: string | null;
}

/** A running tool call's server said how far it has got (MCP progress; at most ten a second). */
export interface ToolProgressEvent {
  type: 'tool_progress';
  /** The call's approval request id. */
  id: number;
  execution_id: string | null;
  server: string;
  tool: string;
  /** Work done so far; grows with each report. */
  progress: number;
  /** Work in all, when the server knows it. */
  total: number | null;
  /** What the server says it is doing (untrusted text). */
  message: string | null;
}

/** The app's settings (kept in ipybox's data directory, never in a workspace). */
export interface AppSettings {
  /** A tool call nobody decides within this many seconds is rejected: as saved, and in force (the running session's next request waits this long). */
  approvalTimeoutSecs: number;
}

/** The workspace's approval rules, as in the rules file (docs/approval-rules.md). */
export interface ApprovalRules {
  version: 1;
  rules: Rule[];
}

/** One rule; `server` and `tool` are globs (`*`, `?`). The first matching rule decides. */
export interface Rule {
  server: string;
  tool: string;
  /** Keyed by argument name, or by a JSON Pointer (starting with `/`) for nested values. */
  args?: { [argNameOrJsonPointer: string]: ArgMatcher };
  /** The call may give no top-level argument that `args` does not name. */
  exact_args?: boolean;
  decision: 'allow' | 'reject';
  reason?: string;
  comment?: string;
}

export interface ArgMatcher {
  equals?: JsonValue;
  one_of?: JsonValue[];
  glob?: string;
  under?: string;
  /** true: not given; false: given, any value. */
  absent?: boolean;
}

/** One line of the workspace's audit log. */
export interface AuditEntry {
  /** ms since the epoch. */
  time: number;
  workspace: string;
  execution_id: string | null;
  origin: string | null;
  server: string;
  tool: string;
  arguments: JsonValue;
  decision: CallDecision;
  decided_by: DecidedBy;
  reason: string | null;
  outcome: CallOutcome | null;
  duration_ms: number;
  /** Which rule decided it, in words; absent when no rule did (or from an older backend). */
  rule?: string | null;
  /** The agent's MCP client that made the call; absent for a notebook's call. */
  client?: { name: string; version?: string; session: string } | null;
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
  'sandbox_blocked',
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
    default:
      return true;
  }
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
      default:
        return assertNever(err.code, 'error code');
    }
  })();
  return detail ? `${prefix} ${detail}` : prefix;
}

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (err) {
    throw toBackendError(err);
  }
}

// ---------------------------------------------------------------------------------------------
// Commands

export function appState(): Promise<AppState> {
  return call<AppState>('app_state');
}

/** Queue code in the kernel; resolves with the execution id at once, events arrive on `onEvent`. */
/** `origin` says where the code comes from ("cell 3 of analysis.ipynb"): approval dialogs and the audit log name it. */
export function execute(code: string, onEvent: (event: ExecEvent) => void, origin: string | null = null): Promise<string> {
  const channel = new Channel<ExecEvent>(onEvent);
  return call<string>('execute', { code, origin, onEvent: channel });
}

/** Resolves whether there was such an execution to cancel. */
export function cancelExecution(id: string): Promise<boolean> {
  return call<boolean>('cancel_execution', { id });
}

/** Resolves whether the request was still waiting. */
export function replyInput(id: number, value: string): Promise<boolean> {
  return call<boolean>('reply_input', { id, value });
}

export function interrupt(): Promise<void> {
  return call<void>('interrupt');
}

/** A fresh kernel; a fresh session (gateway, MCP servers) when the approval timeout was changed since it started. */
export function restartKernel(): Promise<void> {
  return call<void>('restart_kernel');
}

/**
 * `trusted`: every output in `content` may render — it was produced here, or the notebook was
 * trusted. Only then may the backend record the saved file as trusted (sign it); a notebook
 * saved with outputs still held back as text must open untrusted again.
 */
export function saveNotebook(path: string, content: string, trusted: boolean): Promise<void> {
  return call<void>('save_notebook', { path, content, trusted });
}

// ---- notebook trust (as JupyterLab's: the backend keeps signatures in its data directory)

/**
 * Whether a notebook read as `content` was saved by ipybox with every output trusted or was
 * trusted by the person: its stored HTML, SVG and Markdown outputs may render. The text is
 * the one shown (not the file read again, which kernel code may have changed meanwhile).
 */
export function notebookTrusted(content: string): Promise<boolean> {
  return call<boolean>('notebook_trusted', { content });
}

/**
 * Ask the person to trust the notebook at `path`, read as `content`: the backend shows a
 * native confirmation (so that no page content can answer it) and records the decision.
 * Resolves once they decided, either way; ask `notebookTrusted` for the outcome.
 */
export function trustNotebook(path: string, content: string): Promise<boolean> {
  return call<boolean>('trust_notebook', { path, content });
}

export function readNotebook(path: string): Promise<string> {
  return call<string>('read_notebook', { path });
}

/** Native folder picker; null when cancelled. */
export function chooseWorkspace(): Promise<AppState | null> {
  return call<AppState | null>('choose_workspace');
}

export function openWorkspace(path: string): Promise<AppState> {
  return call<AppState>('open_workspace', { path });
}

export function listNotebooks(): Promise<string[]> {
  return call<string[]>('list_notebooks');
}

export function openNotebook(path: string): Promise<AppState> {
  return call<AppState>('open_notebook', { path });
}

/** Give a notebook of the workspace a new name (never over another file); the open one keeps its kernel. */
export function renameNotebook(from: string, to: string): Promise<AppState> {
  return call<AppState>('rename_notebook', { from, to });
}

/** Save the open notebook as a new file of the workspace and go on in it, with the same kernel. */
export function saveNotebookAs(path: string, content: string, trusted: boolean): Promise<AppState> {
  return call<AppState>('save_notebook_as', { path, content, trusted });
}

/** Copy a notebook to `NAME-Copy1.ipynb` (the next free name); the copy's path. */
export function duplicateNotebook(path: string): Promise<string> {
  return call<string>('duplicate_notebook', { path });
}

/** Move a notebook of the workspace to the trash. */
export function trashNotebook(path: string): Promise<void> {
  return call<void>('trash_notebook', { path });
}

// ---- completion and help from the kernel (positions count Unicode code points, as Jupyter's)

/** One of the kernel's completions; all of it is untrusted text. */
export interface KernelCompletion {
  text: string;
  /** Jedi's kind: function, class, module, instance, keyword, path, … */
  kind?: string;
  signature?: string;
}

export interface KernelCompletions {
  start: number;
  end: number;
  items: KernelCompletion[];
}

/** What the kernel says about a name: signature and docstring as text with ANSI colours (untrusted). */
export interface KernelInspection {
  found: boolean;
  text: string;
}

export function complete(code: string, cursor: number): Promise<KernelCompletions> {
  return call<KernelCompletions>('complete', { code, cursor });
}

export function inspect(code: string, cursor: number, detail: 0 | 1): Promise<KernelInspection> {
  return call<KernelInspection>('inspect', { code, cursor, detail });
}

// ---- the kernel's variables and the data grid (all text from the kernel is untrusted)

/** A variable of the kernel's user namespace; values of user-defined types show their type only. */
export interface KernelVariable {
  name: string;
  type: string;
  /** The type's module, unless builtin. */
  module?: string;
  shape?: number[];
  length?: number;
  /** Bytes, where cheap to know (shallow for Python containers). */
  size?: number;
  /** One line, truncated. */
  repr?: string;
  /** A frame the data grid opens. */
  frame?: 'pandas' | 'polars';
}

export interface KernelVariables {
  variables: KernelVariable[];
  /** How many more there are past the list's limit. */
  more: number;
}

export type FilterOp = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge' | 'contains' | 'startswith' | 'endswith' | 'null' | 'notnull';

export interface FrameFilter {
  /** The column's position. */
  column: number;
  op: FilterOp;
  /** As typed; the kernel converts it to the column's type. */
  value: string;
}

export interface FrameSort {
  column: number;
  ascending: boolean;
}

export interface FrameQuery {
  name: string;
  offset: number;
  limit: number;
  sort: FrameSort[];
  filters: FrameFilter[];
  /** Count each column's nulls (reads every row once). */
  nulls: boolean;
}

export interface FrameColumn {
  name: string;
  type: string;
  /** null until counted. */
  nulls: number | null;
}

/** A page of a frame, sorted and filtered in the kernel. */
export interface FramePage {
  name: string;
  kind: string;
  totalRows: number;
  /** Rows that pass the filters. */
  rows: number;
  offset: number;
  columns: FrameColumn[];
  index: (string | null)[];
  /** Row by row; null is a missing value. */
  cells: (string | null)[][];
  /** The pandas (or polars) expression for this sort and filter. */
  code: string;
}

export function kernelVariables(): Promise<KernelVariables> {
  return call<KernelVariables>('kernel_variables');
}

export function framePage(query: FrameQuery): Promise<FramePage> {
  return call<FramePage>('frame_page', { query });
}

/** pip's output. */
export function installPackage(spec: string): Promise<string> {
  return call<string>('install_package', { spec });
}

export function setTitle(title: string): Promise<void> {
  return call<void>('set_title', { title });
}

// ---- tool call approval and the audit log

/** The requests waiting now (to catch those made before the UI listened). */
export function approvalsPending(): Promise<ApprovalRequest[]> {
  return call<ApprovalRequest[]>('approvals_pending');
}

/** Resolves false when the request was no longer pending. */
export function decideApproval(id: number, decision: ApprovalDecision): Promise<boolean> {
  return call<boolean>('decide_approval', { id, decision });
}

/** Decide every pending request of `server`.`tool` (null and null: every pending request); resolves how many. */
/** Decide the pending calls `ids` (those the panel showed) at once; approving asks the person
 *  again in a native dialog. How many were decided. */
export function decideAllPending(decision: ApprovalDecision, ids: number[]): Promise<number> {
  return call<number>('decide_all_pending', { decision, ids });
}

/** The grants "for this session" in force. Rejects when the backend has no grants (the panel then hides them). */
export function approvalGrants(): Promise<ApprovalGrant[]> {
  return call<ApprovalGrant[]>('approval_grants');
}

/** End a grant: the tool asks again. False when it was already gone. */
export function revokeGrant(id: number): Promise<boolean> {
  return call<boolean>('revoke_grant', { id });
}

/** The person clicked the desktop notification of the waiting request `id`: show it. */
export function onApprovalFocus(handler: (id: number) => void): Promise<UnlistenFn> {
  return listen<number>('approval-focus', (event) => handler(event.payload));
}

/** The grants changed (one was given, revoked, or ended with its session). */
export function onApprovalGrants(handler: () => void): Promise<UnlistenFn> {
  return listen<unknown>('approval-grants', () => handler());
}

/** Which of the last 100 audited calls `rule` would have matched (their indices among those 100, oldest first). Rejects when the backend cannot say. */
export function ruleWouldMatch(rule: Rule): Promise<AuditEntry[]> {
  return call<AuditEntry[]>('rule_matches', { rule });
}

export function approvalRules(): Promise<ApprovalRules> {
  return call<ApprovalRules>('approval_rules');
}

/**
 * Replace the workspace's rules; rejects with InvalidConfig naming the bad rule. Rules that allow
 * more are confirmed in a native dialog first: `false` when the person cancelled (nothing changed).
 */
export function setApprovalRules(rules: ApprovalRules): Promise<boolean> {
  return call<boolean>('set_approval_rules', { rules });
}

/**
 * Put `rule` before the existing rules; with `decideId`, that pending request is decided by it.
 * An allow rule is confirmed in a native dialog first: `false` when the person cancelled.
 */
export function addApprovalRule(rule: Rule, decideId: number | null): Promise<boolean> {
  return call<boolean>('add_approval_rule', { rule, decideId });
}

/** The app's settings, as saved and in force. */
export function appSettings(): Promise<AppSettings> {
  return call<AppSettings>('app_settings');
}

/** Save the approval timeout (checked by the backend: 1 s to a day); it applies at once, to the running session's next request. */
export function setAppSettings(approvalTimeoutSecs: number): Promise<AppSettings> {
  return call<AppSettings>('set_app_settings', { approvalTimeoutSecs });
}

/** Every entry of the workspace's audit log, oldest first. */
export function auditLog(): Promise<AuditEntry[]> {
  return call<AuditEntry[]>('audit_log');
}

/** Native save dialog; resolves the written path, or null when cancelled. */
export function exportAuditLog(): Promise<string | null> {
  return call<string | null>('export_audit_log');
}

// ---- MCP servers registered for the workspace (the MCP servers panel)

/** One tool of a registered server; `interface`: its generated Params/Result and run(), to read. */
export interface ToolSummary {
  tool: string;
  module: string;
  description?: string | null;
  interface?: string | null;
}

export interface RegisteredServer {
  name: string;
  params: ServerParamsJson;
  /** Under srt: the policy as given (`ipybox:mcp-server` or a file); `params` name ipybox's pinned copy. */
  policy?: string | null;
  tools: ToolSummary[];
}

/** A sandbox profile ipybox ships for MCP servers (`srt --settings ipybox:<name>`). */
export interface ServerProfile {
  name: string;
  purpose: string;
}

export interface ServerList {
  servers: RegisteredServer[];
  profiles: ServerProfile[];
}

/** What registering or regenerating did. */
export interface Registration {
  server: RegisteredServer;
  skipped: { tool: string; reason: string }[];
  changes: ToolChanges;
}

/** Where a `${NAME}` gets its value; null: nowhere (never the value itself). */
export interface Placeholder {
  name: string;
  source: VariableSource | null;
}

export function mcpServers(): Promise<ServerList> {
  return call<ServerList>('mcp_servers');
}

/** "Test connection": the tools the server offers; rejects with McpError carrying its stderr when it fails to start. */
export function previewMcpServer(params: ServerParamsJson): Promise<ToolSummary[]> {
  return call<ToolSummary[]>('preview_mcp_server', { params });
}

export function registerMcpServer(name: string, params: ServerParamsJson): Promise<Registration> {
  return call<Registration>('register_mcp_server', { name, params });
}

export function regenerateMcpServer(name: string): Promise<Registration> {
  return call<Registration>('regenerate_mcp_server', { name });
}

/** Resolves false when it was not registered. */
export function unregisterMcpServer(name: string): Promise<boolean> {
  return call<boolean>('unregister_mcp_server', { name });
}

export function mcpPlaceholders(names: string[]): Promise<Placeholder[]> {
  return call<Placeholder[]>('mcp_placeholders', { names });
}

// ---- saved code actions ("Save cell as tool")

/** A saved code action: `gentools.<category>.<name>` and its interface (api.py). */
export interface SavedTool {
  module: string;
  api: string;
}

/** The api.py a code action would have; rejects with InvalidConfig saying what is wrong. */
export function previewCodeAction(action: CodeActionDraft): Promise<string> {
  return call<string>('preview_code_action', { action });
}

/** Save it (imported in the kernel first; code that does not import is refused, naming the error). */
export function saveCodeAction(action: CodeActionDraft): Promise<SavedTool> {
  return call<SavedTool>('save_code_action', { action });
}

export function codeActions(): Promise<SavedTool[]> {
  return call<SavedTool[]>('code_actions');
}

// ---- the app's own MCP endpoint, and what agents do through it

/** The app's MCP endpoint for agents (Streamable HTTP on 127.0.0.1 with a bearer token). */
export interface McpEndpointState {
  enabled: boolean;
  url: string | null;
  token: string | null;
  /** Why it could not serve. */
  error: string | null;
  /** Agents' code runs in the sandbox (true by default wherever the sandbox works). */
  sandboxed: boolean;
}

/** One step of an agent's session, as the backend reports it (in batches, on `agent` events). */
export type AgentActivity =
  | { type: 'cell_queued'; session: number; name: string; execution_id: string; code: string }
  | { type: 'cell_started'; session: number; execution_id: string; execution_count: number | null }
  | { type: 'cell_output'; session: number; execution_id: string; output: IopubOutput }
  | { type: 'cell_finished'; session: number; execution_id: string; error: string | null }
  | { type: 'kernel_reset'; session: number }
  | { type: 'session_ended'; session: number; reason: string };

/** End an agent's session and stop its kernel. False when it had already ended. */
export function endAgentSession(session: string): Promise<boolean> {
  return call<boolean>('end_agent_session', { session });
}

export function mcpEndpoint(): Promise<McpEndpointState> {
  return call<McpEndpointState>('mcp_endpoint');
}

/** Serve agents (or stop: their sessions end); `newToken` replaces the token. */
export function setMcpEndpoint(enabled: boolean, newToken = false): Promise<McpEndpointState> {
  return call<McpEndpointState>('set_mcp_endpoint', { enabled, newToken });
}

/** The endpoint started (or failed to) after the window asked about it. */
export function onMcpEndpoint(handler: (state: McpEndpointState) => void): Promise<UnlistenFn> {
  return listen<McpEndpointState>('endpoint', (event) => handler(event.payload));
}

/** Another `ipybox open` asked for a notebook of this workspace: open it as the person would. */
export function onOpenRequest(handler: (path: string) => void): Promise<UnlistenFn> {
  return listen<unknown>('open-request', (event) => {
    if (typeof event.payload === 'string') handler(event.payload);
  });
}

/** A server was registered from outside the panel (an `ipybox://` link the person confirmed). */
export function onServersChanged(handler: (name: string) => void): Promise<UnlistenFn> {
  return listen<unknown>('servers-changed', (event) => {
    if (typeof event.payload === 'string') handler(event.payload);
  });
}

/** Agents' activity, a frame's worth per call. */
export function onAgentActivity(handler: (batch: AgentActivity[]) => void): Promise<UnlistenFn> {
  return listen<AgentActivity[]>('agent', (event) => {
    if (Array.isArray(event.payload)) handler(event.payload);
  });
}

// ---- the sandbox policy (the Sandbox tab; shapes in model/policy.ts)

export type PolicySource = { kind: 'workspace' } | { kind: 'profile'; name: string };

/** Per workspace, kept in ipybox's data directory: sandboxed or not, under which policy. */
export interface SandboxChoice {
  sandbox: boolean;
  policy: PolicySource;
}

export interface SandboxState {
  workspacePolicy: string;
  workspacePolicyExists: boolean;
  profiles: { name: string; purpose: string }[];
  choice: SandboxChoice;
  /** The policy the running kernel is sandboxed under; null: not sandboxed. */
  running: string | null;
  /** Set by --sandbox/--sandbox-config for this run (wins over the choice). */
  commandLine: string | null;
  /** The server the kernel runs on (its URL), where ipybox's sandbox does not apply. */
  remote?: string | null;
}

export interface PolicyDocument {
  source: PolicySource;
  text: string;
  path: string | null;
  exists: boolean;
  readOnly: boolean;
  problems: PolicyProblem[];
}

export function sandboxState(): Promise<SandboxState> {
  return call<SandboxState>('sandbox_state');
}

export function readPolicy(source: PolicySource): Promise<PolicyDocument> {
  return call<PolicyDocument>('read_policy', { source });
}

/** The engine's problems of a policy's text, each against its field. */
export function checkPolicy(text: string): Promise<PolicyProblem[]> {
  return call<PolicyProblem[]>('check_policy', { text });
}

/** One answer of "Would this be allowed?": read, write (a path) or connect (a URL). */
export interface SandboxVerdict {
  access: 'read' | 'write' | 'connect';
  target: string;
  allowed: boolean;
  /** The rule that decides (`filesystem.denyRead: ~/.ssh`); null: the sandbox's default. */
  rule: string | null;
  reason: string;
}

/** Would code be allowed to read/write a path or reach a URL under the policy `text` (unsaved edits too)? */
export function checkSandboxAccess(text: string, query: string): Promise<SandboxVerdict[]> {
  return call<SandboxVerdict[]>('check_sandbox_access', { text, query });
}

/** What a block stopped: reading or writing a file, or connecting to a domain (srt's proxy refused it). */
export type SandboxBlockAccess = 'read' | 'write' | 'connect';

/** A file operation or a connection the sandbox blocked (untrusted text: shown escaped). */
export interface SandboxBlock {
  access: SandboxBlockAccess;
  /** Absolute, links followed; for `connect`, the host (`host:port` for an unusual port). */
  path: string;
  /** The rule that blocks it; null: no allowWrite entry covers it. */
  rule: string | null;
  reason: string;
  /** The narrowest folder to allow, as the policy spells it; null when no entry would help. */
  suggestion: string | null;
}

/** Allow what a cell was blocked doing: asked in a native dialog, saved, the kernel restarted. */
export function allowBlocked(access: SandboxBlockAccess, entry: string, path: string): Promise<SandboxState> {
  return call<SandboxState>('allow_blocked', { access, entry, path });
}

/** Save as the workspace's sandbox-config.json (refused with errors: InvalidConfig). */
export function savePolicy(text: string): Promise<PolicyDocument> {
  return call<PolicyDocument>('save_policy', { text });
}

/** srt tries the policy, then the kernel restarts under it (SandboxUnavailable: refused, old kernel kept). */
export function applySandbox(choice: SandboxChoice): Promise<SandboxState> {
  return call<SandboxState>('apply_sandbox', { choice });
}

// ---------------------------------------------------------------------------------------------
// Where the kernel runs: this computer, or a Jupyter Server / Enterprise Gateway

/** The server a workspace's kernels run on, as kept (its token and header values are not sent). */
export interface RemoteChoice {
  url: string;
  hasToken: boolean;
  headerNames: string[];
  /** Where the token and headers are kept. */
  secret: 'none' | 'keyring' | 'file';
}

export interface RemoteState {
  /** The workspace's server; null: this computer. */
  choice: RemoteChoice | null;
  /** The server the running kernel is on; null: this computer. */
  running: string | null;
  /** Set by --gateway-url for this run (wins over the choice). */
  commandLine: string | null;
}

/** A server to run kernels on. `token`/`headers` null: keep the ones kept for the same URL. */
export interface RemoteRequest {
  url: string;
  token: string | null;
  headers: string[] | null;
}

/** What a server said about itself. */
export interface GatewayProbe {
  version: string | null;
  defaultKernel: string | null;
  kernels: string[];
}

export function remoteState(): Promise<RemoteState> {
  return call<RemoteState>('remote_state');
}

/** Ask the server what it is and which kernels it offers; starts nothing. */
export function probeRemote(request: RemoteRequest): Promise<GatewayProbe> {
  return call<GatewayProbe>('probe_remote', { request });
}

/** Run the kernel there (null: this computer); the kernel restarts, its state lost. */
export function applyRemote(request: RemoteRequest | null): Promise<RemoteState> {
  return call<RemoteState>('apply_remote', { request });
}

/** Follow the workspace's policy file: `policy-file` events. */
export function watchPolicy(): Promise<void> {
  return call<void>('watch_policy');
}

export function onPolicyFile(handler: (change: { path: string; text: string | null }) => void): Promise<UnlistenFn> {
  return listen<{ path: string; text: string | null }>('policy-file', (event) => handler(event.payload));
}

/** A native file or folder picker; the chosen path, or null. */
export async function pickPath(directory: boolean, defaultPath: string | undefined): Promise<string | null> {
  const chosen = await openDialog({ directory, multiple: false, defaultPath });
  return typeof chosen === 'string' ? chosen : null;
}

// ---------------------------------------------------------------------------------------------
// Events, window and dialogs

/** Session events; unknown event types are dropped here so the rest never sees them. */
export function onSessionEvent(handler: (event: SessionEvent) => void): Promise<UnlistenFn> {
  return listen<unknown>('session', (event) => {
    if (isSessionEvent(event.payload)) handler(event.payload);
  });
}

export type CloseDecision = 'save' | 'discard' | 'cancel';

/**
 * Intercept closing the window. `decide` runs when the user closes it; the window closes only if
 * it resolves true.
 */
export async function onCloseRequested(decide: () => Promise<boolean>): Promise<UnlistenFn> {
  const win = getCurrentWindow();
  return win.onCloseRequested(async (event) => {
    event.preventDefault();
    let close = false;
    try {
      close = await decide();
    } catch {
      close = false;
    }
    if (close) await win.destroy();
  });
}

/** Ask what to do with unsaved changes before closing. */
export async function askUnsavedChanges(name: string): Promise<CloseDecision> {
  const buttons = { yes: 'Save and close', no: 'Close without saving', cancel: 'Cancel' };
  const answer = await message(`“${name}” has unsaved changes.`, {
    title: 'Unsaved changes',
    kind: 'warning',
    buttons,
  });
  if (answer === buttons.yes || answer === 'Yes') return 'save';
  if (answer === buttons.no || answer === 'No') return 'discard';
  return 'cancel';
}

/** A yes/no question in a native dialog. */
export function confirmDialog(text: string, title: string, okLabel: string): Promise<boolean> {
  return ask(text, { title, kind: 'warning', okLabel, cancelLabel: 'Cancel' });
}

/** True inside the Tauri webview (or with its IPC mocked). */
/** What the backend hands the page before its scripts run: the state at launch, and whether its notebook is trusted. */
export interface StartState {
  state: AppState;
  trusted: boolean;
}

/**
 * The state the backend handed to the page at launch (`window.__IPYBOX_START__`, set by the
 * window's initialization script), taken once: null afterwards, and outside the app.
 */
export function takeStartState(): StartState | null {
  const w = window as unknown as { __IPYBOX_START__?: StartState };
  const handed = w.__IPYBOX_START__ ?? null;
  delete w.__IPYBOX_START__;
  return handed;
}

export function hasBackend(): boolean {
  return typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;
}
