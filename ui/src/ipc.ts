/**
 * The backend contract: every Tauri command, event and window/dialog call the UI makes.
 * This is the only module that calls `invoke`; everything else imports typed functions from here.
 */
import type { CodeActionDraft } from './model/codeAction';
import { Channel, invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import { getCurrentWindow } from '@tauri-apps/api/window';
import { ask, message, open as openDialog } from '@tauri-apps/plugin-dialog';
import type { JsonObject, JsonValue } from './util/json';
import type { ServerParamsJson } from './model/serverForm';
import type { PolicyProblem } from './model/policy';

// ---------------------------------------------------------------------------------------------
// Types: those generated from the Rust ones (src-tauri/src/desktop/bindings.rs), then the rest

export type {
  AgentActivity,
  CatalogEntry,
  PackageSource,
  ApprovalRequest,
  AppSettings,
  AppState,
  ArgMatcher,
  AuditEntry,
  CallDecision,
  CallDetails,
  CallOutcome,
  DecidedBy,
  DefinitionChange,
  ErrorCode,
  ExecEvent,
  ExportFormat,
  FilterOp,
  FrameColumn,
  FramePage,
  FrameQuery,
  GatewayProbe,
  KernelStatus,
  KernelVariables,
  McpEndpointState,
  Placeholder,
  PolicyDocument,
  PolicySource,
  QuestionChoice,
  QuestionField,
  RegisteredServer,
  Registration,
  RemoteChoice,
  RemoteRequest,
  RemoteState,
  Rule,
  SandboxBlock,
  SandboxState,
  SavedTool,
  ServerList,
  ServerProfile,
  ServerQuestion,
  SignInState,
  StartState,
  ToolDefinition,
  ToolHints,
  ToolSummary,
  KernelPython,
  PythonCheck,
  PythonChoice,
  PythonOptions,
} from './generated/backend';
import type {
  Access,
  CatalogEntry,
  PackageSource,
  AgentActivity,
  ApprovalRequest,
  AppSettings,
  AppState,
  AuditEntry,
  Choice,
  Client,
  Completion,
  Completions,
  Decision,
  ExecEvent,
  ExportFormat,
  Filter,
  FramePage,
  FrameQuery,
  GatewayProbe,
  Grant,
  Inspection,
  KernelVariables,
  McpEndpointState,
  Output,
  Placeholder,
  PolicyDocument,
  PolicySource,
  QuestionField,
  Registration,
  RemoteRequest,
  RemoteState,
  Rule,
  SandboxState,
  SavedTool,
  ServerList,
  ServerQuestion,
  SortKey,
  StartState,
  ToolSummary,
  Variable,
  Verdict,
  PythonCheck,
  PythonChoice,
  PythonOptions,
} from './generated/backend';

/** An error as the backend reports it: a stable code, and words. */
export type { BackendError } from './ipcChecks';

/** Per workspace, kept in ipybox's data directory: sandboxed or not, under which policy. */
export type SandboxChoice = Choice;

/** What the window hears on its `session` channel: the engine's events, and the desktop's own notices. */
export type { SessionEvent } from './ipcChecks';
import type { SessionEvent } from './ipcChecks';
/** A tool call ended (session event). */
export type ToolCallEvent = Extract<SessionEvent, { type: 'tool_call' }>;
/** A running tool call's server said how far it has got (MCP progress; at most ten a second). */
export type ToolProgressEvent = Extract<SessionEvent, { type: 'tool_progress' }>;
/** The MCP client an agent connected with, as it declared itself (`clientInfo`). */
export type ClientInfo = Client;
/** A grant "for this session": calls to `server.tool` run without asking until the kernel restarts or the agent's session ends. */
export type ApprovalGrant = Grant;
export type ApprovalDecision = Decision;
export type KernelCompletion = Completion;
export type KernelCompletions = Completions;
export type KernelInspection = Inspection;
export type KernelVariable = Variable;
export type FrameFilter = Filter;
export type FrameSort = SortKey;
/** One answer of "Would this be allowed?": read, write (a path) or connect (a URL). */
export type SandboxVerdict = Verdict;
/** A question an MCP server asks during a tool call; a field's kind is one of `QuestionField`'s. */
export type QuestionFieldKind = QuestionField['kind'];
/** How a person answers a server's question. */
export type QuestionAction = 'accept' | 'decline' | 'cancel';
/** A question was answered, declined or cancelled (by the person, or because its call ended). */
export type ElicitationEndedEvent = Extract<SessionEvent, { type: 'elicitation_ended' }>;

/** MIME type → string (or string[] in files) or JSON for JSON types. */
export type WireMimeBundle = { [mime: string]: JsonValue };

/** Jupyter iopub output shapes, tagged by `type` (the engine's `Output`). */
export type IopubOutput = Output;


// What arrives, checked before the window relies on it, and errors in words (`ipcChecks.ts`).
export { describeError, isApprovalRequest, isSessionEvent, toBackendError, type ApprovalRules } from './ipcChecks';
import { isServerQuestion, isSessionEvent, toBackendError, type ApprovalRules } from './ipcChecks';

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

/** The questions servers asked that still wait for an answer (asked before this window listened: a reload, a window opened later). */
export function waitingQuestions(): Promise<ServerQuestion[]> {
  return call<ServerQuestion[]>('waiting_questions').then((qs) => (Array.isArray(qs) ? qs.filter(isServerQuestion) : []));
}

/** Answer a server's question; rejects with `InvalidAnswer` (in words) when the values do not fit its form or it no longer waits. */
export function answerElicitation(id: number, action: QuestionAction, values: JsonObject | null): Promise<void> {
  return call<void>('answer_elicitation', { id, action, values });
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

export function complete(code: string, cursor: number): Promise<KernelCompletions> {
  return call<KernelCompletions>('complete', { code, cursor });
}

export function inspect(code: string, cursor: number, detail: 0 | 1): Promise<KernelInspection> {
  return call<KernelInspection>('inspect', { code, cursor, detail });
}

// ---- the kernel's variables and the data grid (all text from the kernel is untrusted)

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

/** What the Python picker offers for the open notebook. */
export function pythonOptions(): Promise<PythonOptions> {
  return call<PythonOptions>('python_options');
}

/** Look at a Python the person picked: its version, and whether it has ipykernel (never run when it is a virtual environment). */
export function checkPython(choice: PythonChoice): Promise<PythonCheck> {
  return call<PythonCheck>('check_python', { choice });
}

/** Run the open notebook's kernel on `choice` from now on (kept per notebook; the kernel restarts). */
export function setPython(choice: PythonChoice): Promise<AppState> {
  return call<AppState>('set_python', { choice });
}

/** Install ipykernel into the picked environment (sandboxed: a native dialog asks first); the installer's log. */
export function installIpykernel(choice: PythonChoice): Promise<string> {
  return call<string>('install_ipykernel', { choice });
}

/** Make the workspace's `.venv` from its pyproject.toml with uv (sandboxed: a native dialog asks first); the log. */
export function createProjectEnv(): Promise<string> {
  return call<string>('create_project_env');
}

/** The native file picker for an interpreter; null when cancelled. */
export function choosePython(): Promise<string | null> {
  return call<string | null>('choose_python');
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

/** Export the notebook `path` (saved on disk) where the person chooses in the native save dialog; the path written, null when cancelled. */
export function exportNotebook(path: string, format: ExportFormat): Promise<string | null> {
  return call<string | null>('export_notebook', { path, format });
}

// ---- MCP servers registered for the workspace (the MCP servers panel)

export function mcpServers(): Promise<ServerList> {
  return call<ServerList>('mcp_servers');
}

/** The servers ipybox installs itself (the servers panel's catalog). */
export function mcpCatalog(): Promise<CatalogEntry[]> {
  return call<CatalogEntry[]>('mcp_catalog');
}

/** A package installed (or updated) by ipybox: the parameters that run it in the sandbox. */
export interface InstalledPackage {
  params: ServerParamsJson;
  version: string;
  dir: string;
}

/** Install `pkg` from `source` into ipybox's data directory (minutes on a slow network); nothing runs yet. */
export function installMcpPackage(source: PackageSource, pkg: string, args: string[]): Promise<InstalledPackage> {
  return call<InstalledPackage>('install_mcp_package', { source, package: pkg, args });
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

/** Sign in to `name` (the form's `params`, or null: the registered server's) in the system
 *  browser, then register it; rejects with Cancelled after cancelMcpSignIn. */
export function signInMcpServer(name: string, params: ServerParamsJson | null): Promise<Registration> {
  return call<Registration>('sign_in_mcp_server', { name, params });
}

/** Stop waiting for `name`'s sign-in; false when none was waiting. */
export function cancelMcpSignIn(name: string): Promise<boolean> {
  return call<boolean>('cancel_mcp_sign_in', { name });
}

/** Forget `name`'s sign-in (revoked at the server where it can be); true when revoked. */
export function signOutMcpServer(name: string): Promise<boolean> {
  return call<boolean>('sign_out_mcp_server', { name });
}

export function mcpPlaceholders(names: string[]): Promise<Placeholder[]> {
  return call<Placeholder[]>('mcp_placeholders', { names });
}

// ---- saved code actions ("Save cell as tool")

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

/** Would code be allowed to read/write a path or reach a URL under the policy `text` (unsaved edits too)? */
export function checkSandboxAccess(text: string, query: string): Promise<SandboxVerdict[]> {
  return call<SandboxVerdict[]>('check_sandbox_access', { text, query });
}

/** What a block stopped: reading or writing a file, or connecting to a domain (srt's proxy refused it). */
export type SandboxBlockAccess = Access;

/** Allow what a cell was blocked doing: asked in a native dialog, saved, the kernel restarted. */
export function allowBlocked(access: Access, entry: string, path: string): Promise<SandboxState> {
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
