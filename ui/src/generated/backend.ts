// Generated from the Rust types by `src-tauri/src/desktop/bindings.rs`; do not edit.
// IPYBOX_BLESS=1 cargo test -p ipybox --lib desktop::bindings writes it again.
import type { JsonValue } from '../util/json';

export type Access = "read" | "write" | "connect";

export type AgentActivity = { "type": "cell_queued", 
/**
 * The session (a number that stays the same for the session's life).
 */
session: number, 
/**
 * The session in words ("agent session 4f2a9c1e"), as approval dialogs name it.
 */
name: string, 
/**
 * The execution's id.
 */
execution_id: string, 
/**
 * The cell's code.
 */
code: string, } | { "type": "cell_started", 
/**
 * The session.
 */
session: number, 
/**
 * The execution.
 */
execution_id: string, 
/**
 * The kernel's execution count, when it gave one.
 */
execution_count: number | null, } | { "type": "cell_output", 
/**
 * The session.
 */
session: number, 
/**
 * The execution.
 */
execution_id: string, 
/**
 * The output.
 */
output: Output, } | { "type": "cell_finished", 
/**
 * The session.
 */
session: number, 
/**
 * The execution.
 */
execution_id: string, 
/**
 * Why it failed, in words, when it did not end normally (an exception's traceback
 * is already among its outputs).
 */
error: string | null, } | { "type": "kernel_reset", 
/**
 * The session.
 */
session: number, } | { "type": "session_ended", 
/**
 * The session.
 */
session: number, 
/**
 * Why, in words.
 */
reason: string, };

export type AppSettings = { 
/**
 * Reject a tool call nobody decided within this many seconds: as saved, and in force in
 * the running session, whose next request waits this long.
 */
approvalTimeoutSecs: number, };

export type AppState = { 
/**
 * The workspace folder.
 */
workspace: string, 
/**
 * Its name.
 */
workspaceName: string, 
/**
 * The notebook shown (absolute; may not exist yet).
 */
notebookPath: string, 
/**
 * Its contents; `None` when the file does not exist yet.
 */
notebook: string | null, 
/**
 * Recently used workspaces, newest first.
 */
recent: Array<string>, 
/**
 * Do kernels run in the sandbox?
 */
sandbox: boolean, 
/**
 * The server kernels run on (its URL), when not on this computer.
 */
remote: string | null, 
/**
 * The kernel now.
 */
kernel: KernelStatus, 
/**
 * The provisioning step in progress, if the Python environment is being built.
 */
provisioning: Provisioning | null, 
/**
 * Why the kernel could not start, if it could not.
 */
startupError: DesktopError | null, 
/**
 * The Python the notebook's kernel runs.
 */
python: KernelPython, };

export type ApprovalRequest = { 
/**
 * Unique within the session.
 */
id: number, 
/**
 * The registered server's name.
 */
server: string, 
/**
 * The tool's name.
 */
tool: string, 
/**
 * The arguments, as they will be sent.
 */
arguments: JsonValue, 
/**
 * What the server is (its command line or URL, secrets masked).
 */
server_description: string, 
/**
 * The execution whose code made the call.
 */
execution_id: string | null, 
/**
 * Where the code came from, in words.
 */
origin: string | null, 
/**
 * When it was asked.
 */
asked_at: number, 
/**
 * Until when it waits for a decision.
 */
deadline: number, 
/**
 * The tool's definition, a change of it, the agent's client, the calling line.
 */
details: CallDetails, 
/**
 * The rule that decided it, once one did.
 */
rule: string | null, };

export type ArgMatcher = { 
/**
 * The argument equals this JSON value (numbers compare by value: `1` equals `1.0`).
 */
equals?: JsonValue, 
/**
 * The argument equals one of these JSON values.
 */
one_of?: Array<JsonValue>, 
/**
 * The argument is a string matching this glob (`*` any characters, `/` included; `?`
 * one character).
 */
glob?: string, 
/**
 * The argument is an absolute path that, after lexical normalization (`.`, `..`, `//`;
 * no filesystem access, symlinks not resolved), is this path or lies below it.
 */
under?: string, 
/**
 * `true`: the argument is not given (the only condition that a missing argument
 * meets); `false`: it is given, with any value.
 */
absent?: boolean, };

export type AuditEntry = { 
/**
 * When the call ended, in milliseconds since the Unix epoch.
 */
time: number, 
/**
 * The workspace whose code made the call.
 */
workspace: string, 
/**
 * The execution whose code made the call.
 */
execution_id: string | null, 
/**
 * Where that code came from, in words ("cell 3 of analysis.ipynb", "agent session …").
 */
origin: string | null, 
/**
 * The registered server's name (`ipybox` for shell commands).
 */
server: string, 
/**
 * The tool (`shell` for shell commands).
 */
tool: string, 
/**
 * The arguments, as the code sent them.
 */
arguments: JsonValue, 
/**
 * Approved, rejected or timed out.
 */
decision: CallDecision, 
/**
 * Who or what decided.
 */
decided_by: DecidedBy, 
/**
 * Why it was not approved.
 */
reason: string | null, 
/**
 * What the call returned, when it ran.
 */
outcome: CallOutcome | null, 
/**
 * How long the call took, approval excluded.
 */
duration_ms: number, 
/**
 * The rule that decided the call, as the rules file writes it (absent when no rule
 * did, and in entries written before ipybox kept it).
 */
rule?: string, 
/**
 * The agent's MCP client, for a call an agent's code made.
 */
client?: Client, 
/**
 * The line of code that made the call, as the kernel reported it (untrusted text).
 */
call_site?: string, };

export type CallDecision = "approved" | "rejected" | "timed_out";

export type CallDetails = { 
/**
 * The tool's definition as the running server lists it.
 */
tool?: ToolDefinition, 
/**
 * Set when the definition changed since a person accepted it.
 */
change?: DefinitionChange, 
/**
 * The agent's MCP client, for a call an agent's code made.
 */
client?: Client, 
/**
 * The line of code that made the call ("line 2: fx.touch(path=p)").
 */
call_site?: string, };

export type CallOutcome = { "kind": "ok" } | { "kind": "tool_error" } | { "kind": "failed", 
/**
 * Why, in words.
 */
message: string, };

export type CallRef = { 
/**
 * The call's approval request ([`RequestSnapshot::id`](crate::RequestSnapshot::id)).
 */
id: number, 
/**
 * The execution whose code made the call.
 */
execution_id: string | null, 
/**
 * The tool's name.
 */
tool: string, };

export type CatalogEntry = { 
/**
 * The name it is registered under by default (kernel code imports `mcptools.<name>`).
 */
name: string, 
/**
 * What it does, in a line.
 */
summary: string, 
/**
 * Where its package comes from.
 */
source: PackageSource, 
/**
 * The package.
 */
package: string, 
/**
 * Arguments after its command (`${WORKSPACE}` is the workspace when it starts).
 */
args: string[], };

export type ChangedTool = { 
/**
 * Its module: `mcptools.<server>.<module>`.
 */
module: string, 
/**
 * The interface it had (absent in registries written before ipybox kept it).
 */
before: string | null, 
/**
 * The interface it has now.
 */
after: string | null, };

export type Choice = { 
/**
 * Run the kernel in the sandbox.
 */
sandbox: boolean, 
/**
 * Under this policy.
 */
policy: PolicySource, };

export type Client = { 
/**
 * Its declared name ("claude-code").
 */
name: string, 
/**
 * Its declared version.
 */
version?: string, 
/**
 * The agent session (ipybox's id for it).
 */
session: string, 
/**
 * Since when it is connected, in milliseconds since the Unix epoch.
 */
connected_at_ms: number, };

export type Completion = { 
/**
 * What replaces `start..end`.
 */
text: string, 
/**
 * Jedi's kind (`function`, `class`, `module`, `instance`, `keyword`, `path`, …), when
 * the kernel says.
 */
kind?: string, 
/**
 * The signature of a callable, when the kernel says.
 */
signature?: string, };

export type Completions = { 
/**
 * Start of the text a completion replaces.
 */
start: number, 
/**
 * End of the text a completion replaces.
 */
end: number, 
/**
 * The completions, in the kernel's order.
 */
items: Array<Completion>, };

export type DecidedBy = "person" | "batch" | "rule" | "grant" | "timeout" | "policy" | "nobody";

export type Decision = "accept" | "reject";

export type DefinitionChange = { 
/**
 * The definition accepted before; `None` when the tool appeared since.
 */
accepted: ToolDefinition | null, 
/**
 * The definition the running server lists now.
 */
now: ToolDefinition, };

export type DesktopError = { 
/**
 * Stable code.
 */
code: ErrorCode, 
/**
 * What went wrong, in words.
 */
message: string, };

export type ErrorCode = "CodeExecutionError" | "Timeout" | "KernelDied" | "Cancelled" | "GatewayError" | "KernelStartFailed" | "PythonEnvError" | "ImageError" | "NotRunning" | "McpError" | "InvalidConfig" | "SandboxUnavailable" | "IoError" | "SignInRequired" | "InvalidAnswer";

export type ExecEvent = { "type": "started", 
/**
 * Its count (`[n]`).
 */
executionCount: number | null, } | { "type": "outputs", 
/**
 * The outputs.
 */
outputs: Array<Output>, } | { "type": "input", 
/**
 * Which request.
 */
id: number, 
/**
 * The prompt.
 */
prompt: string, 
/**
 * Mask what is typed.
 */
password: boolean, } | { "type": "finished" } | { "type": "failed", 
/**
 * Why.
 */
error: DesktopError, };

export type ExportFormat = "html" | "pdf" | "py";

export type Filter = { 
/**
 * The column's position.
 */
column: number, 
/**
 * What to compare.
 */
op: FilterOp, 
/**
 * The value to compare with, as typed (converted to the column's type in the kernel).
 */
value: string, };

export type FilterOp = "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "contains" | "startswith" | "endswith" | "null" | "notnull";

export type FrameColumn = { 
/**
 * The label, as text.
 */
name: string, 
/**
 * The dtype (`int64`, `str`, `datetime64[ns]`).
 */
type: string, 
/**
 * Missing values in the whole frame; `None` until asked for ([`FrameQuery::nulls`]).
 */
nulls: number | null, };

export type FramePage = { 
/**
 * The frame's variable name.
 */
name: string, 
/**
 * `pandas` or `polars`.
 */
kind: string, 
/**
 * Rows of the frame.
 */
totalRows: number, 
/**
 * Rows that pass the filters.
 */
rows: number, 
/**
 * The page's first row among those.
 */
offset: number, 
/**
 * The columns.
 */
columns: Array<FrameColumn>, 
/**
 * The page's row labels.
 */
index: Array<string | null>, 
/**
 * The page's cells, row by row, as text; `None` is a missing value.
 */
cells: Array<Array<string | null>>, 
/**
 * The pandas (or polars) expression for this sort and filter.
 */
code: string, };

export type FrameQuery = { 
/**
 * The frame's variable name.
 */
name: string, 
/**
 * First row of the page (of the sorted, filtered rows).
 */
offset: number, 
/**
 * Rows in the page (at most 1000).
 */
limit: number, 
/**
 * Sort keys, most significant first.
 */
sort: Array<SortKey>, 
/**
 * Filters, all of which a row passes.
 */
filters: Array<Filter>, 
/**
 * Count each column's nulls (reads every row once; kept for later pages).
 */
nulls: boolean, };

export type GatewayProbe = { 
/**
 * The server's version (`jupyter_server`'s, or the Enterprise Gateway's).
 */
version: string | null, 
/**
 * The kernel it starts when none is named.
 */
defaultKernel: string | null, 
/**
 * The kernels it can start.
 */
kernels: Array<string>, };

export type Grant = { 
/**
 * Its id, for [`Grants::revoke`].
 */
id: number, 
/**
 * The registered server's name.
 */
server: string, 
/**
 * The tool's name.
 */
tool: string, 
/**
 * Whose session it covers.
 */
scope: GrantScope, 
/**
 * The session: the agent session's id, or the notebook kernel's generation (a number
 * that changes when the kernel restarts).
 */
session: string, 
/**
 * When it was granted, in milliseconds since the Unix epoch.
 */
granted_at: number, };

export type GrantScope = "notebook" | "agent";

export type Inspection = { 
/**
 * Whether the kernel found something.
 */
found: boolean, 
/**
 * Signature, docstring (and at detail level 1 the source) as plain text with ANSI
 * colour escapes: untrusted.
 */
text: string, };

export type KernelPython = { 
/**
 * Short: `Python 3.12 · .venv`.
 */
label: string, 
/**
 * The interpreter's full path.
 */
path: string, 
/**
 * The person's choice it comes from.
 */
choice: PythonChoice, };

export type KernelStatus = "starting" | "idle" | "busy" | "dead";

export type KernelVariables = { 
/**
 * The variables listed.
 */
variables: Array<Variable>, 
/**
 * How many more there are, past the list's limit.
 */
more: number, };

export type McpEndpointState = { 
/**
 * Serving now.
 */
enabled: boolean, 
/**
 * `http://127.0.0.1:PORT/mcp`, while serving.
 */
url: string | null, 
/**
 * The bearer token agents send, while serving.
 */
token: string | null, 
/**
 * Why it could not serve, when it could not.
 */
error: string | null, 
/**
 * Agents' code runs in the sandbox (on this computer; a kernel server's kernels are
 * not).
 */
sandboxed: boolean, };

export type Output = { "type": "stream", 
/**
 * Which stream.
 */
name: StreamName, 
/**
 * The text (a part of a line, or many lines).
 */
text: string, } | { "type": "display_data", 
/**
 * The representations.
 */
data: { [key in string]: JsonValue }, 
/**
 * Per-MIME metadata (image sizes, …).
 */
metadata: JsonValue, 
/**
 * Set by `display(..., display_id=True)`.
 */
display_id?: string, } | { "type": "execute_result", 
/**
 * The counter of the execution.
 */
execution_count: number | null, 
/**
 * The representations.
 */
data: { [key in string]: JsonValue }, 
/**
 * Per-MIME metadata.
 */
metadata: JsonValue, } | { "type": "update_display_data", 
/**
 * Which display.
 */
display_id: string, 
/**
 * The new representations.
 */
data: { [key in string]: JsonValue }, 
/**
 * Per-MIME metadata.
 */
metadata: JsonValue, } | { "type": "clear_output", 
/**
 * Wait for the next output.
 */
wait: boolean, } | { "type": "error", 
/**
 * Exception class name.
 */
ename: string, 
/**
 * Exception value.
 */
evalue: string, 
/**
 * Traceback lines as the kernel sent them, ANSI colours included.
 */
traceback: Array<string>, };

export type PackageSource = "pypi" | "npm";

export type Placeholder = { 
/**
 * The variable.
 */
name: string, 
/**
 * `None`: set neither in the workspace's `.env` nor in ipybox's environment.
 */
source: VariableSource | null, };

export type PolicyDocument = { 
/**
 * Where it comes from.
 */
source: PolicySource, 
/**
 * The file's text (the default profile's while the workspace has no policy).
 */
text: string, 
/**
 * The file, for the workspace's policy.
 */
path: string | null, 
/**
 * Does the file exist?
 */
exists: boolean, 
/**
 * A shipped profile: saved only as the workspace's policy.
 */
readOnly: boolean, 
/**
 * Its problems, each against its field.
 */
problems: Array<PolicyProblem>, };

export type PolicyFileChanged = { 
/**
 * The file.
 */
path: string, 
/**
 * Its text now; `None`: removed.
 */
text: string | null, };

export type PolicyProblem = { 
/**
 * Where: the field's path in the file.
 */
field: string, 
/**
 * What is wrong, in words.
 */
message: string, 
/**
 * Error or warning.
 */
severity: Severity, };

export type PolicySource = { "kind": "workspace" } | { "kind": "profile", 
/**
 * `kernel`, `kernel-allow-pypi`, …
 */
name: string, };

export type ProcessExit = { "code": number } | { "signal": number };

export type ProfileInfo = { 
/**
 * Its name (`kernel`, `kernel-allow-pypi`, …).
 */
name: string, 
/**
 * What it is for.
 */
purpose: string, };

export type Provisioning = { 
/**
 * This step, from 1.
 */
step: number, 
/**
 * How many steps there are.
 */
steps: number, 
/**
 * What happens now, in words.
 */
message: string, };

export type PythonCheck = { 
/**
 * Short: `Python 3.12 · .venv`.
 */
label: string, 
/**
 * The interpreter's full path.
 */
path: string, 
/**
 * `major.minor`, when known.
 */
version: string | null, 
/**
 * Does it have ipykernel (needed to run a kernel)?
 */
ipykernel: boolean, };

export type PythonChoice = { "kind": "managed" } | { "kind": "project" } | { "kind": "custom", 
/**
 * Its path.
 */
path: string, };

export type PythonOptions = { 
/**
 * What the kernel runs now.
 */
current: KernelPython, 
/**
 * ipybox's own environment's interpreter.
 */
managed: string, 
/**
 * The workspace's `.venv` interpreter (whether or not it exists).
 */
project: string, 
/**
 * Does the workspace have a `.venv`?
 */
projectExists: boolean, 
/**
 * Does it have a `pyproject.toml` (a `.venv` can be made from it)?
 */
pyproject: boolean, 
/**
 * Is uv installed (to make one)?
 */
uv: boolean, 
/**
 * Are the workspace's kernels sandboxed (its environment is then read-only to them)?
 */
sandbox: boolean, };

export type QuestionChoice = { 
/**
 * The value the answer carries.
 */
value: string, 
/**
 * What the server calls it (untrusted), when it differs from the value.
 */
title: string | null, };

export type QuestionField = { 
/**
 * The property's name: the key of its value in the answer.
 */
name: string, 
/**
 * What the server calls it (untrusted).
 */
title: string | null, 
/**
 * What the server says of it (untrusted).
 */
description: string | null, 
/**
 * An answer must give it (or have a default for it).
 */
required: boolean, 
/**
 * Its value is never recorded nor shown back: a password, a token, a key.
 */
secret: boolean, 
/**
 * The value the server proposes, already checked against the field (a default that
 * does not fit is dropped).
 */
default: JsonValue | null, } & ({ "kind": "text", 
/**
 * `email`, `uri`, `date` or `date-time`.
 */
format: QuestionTextFormat | null, 
/**
 * Fewest characters.
 */
min_length: number | null, 
/**
 * Most characters.
 */
max_length: number | null, } | { "kind": "number", 
/**
 * Only whole numbers.
 */
integer: boolean, 
/**
 * Smallest allowed.
 */
minimum: number | null, 
/**
 * Largest allowed.
 */
maximum: number | null, } | { "kind": "boolean" } | { "kind": "choice", 
/**
 * The options.
 */
options: Array<QuestionChoice>, } | { "kind": "choices", 
/**
 * The options.
 */
options: Array<QuestionChoice>, 
/**
 * Fewest to pick.
 */
min_items: number | null, 
/**
 * Most to pick.
 */
max_items: number | null, });

export type QuestionForm = { 
/**
 * Its fields, in the order the server listed them.
 */
fields: Array<QuestionField>, };

export type QuestionTextFormat = "email" | "uri" | "date" | "date-time";

export type RegisteredServer = { 
/**
 * Its name (`mcptools.<name>`).
 */
name: string, 
/**
 * How to reach it (`${VAR}`s unresolved).
 */
params: ServerParams, 
/**
 * Run under srt: the policy as given at registration (`ipybox:mcp-server` or a file);
 * `params` name the copy ipybox pinned.
 */
policy?: string, 
/**
 * Its tools, as generated.
 */
tools: Array<ToolSummary>, };

export type Registration = { 
/**
 * The server as registered now, with its tools.
 */
server: RegisteredServer, 
/**
 * Tools that could not be generated, and why (the others were).
 */
skipped: Array<SkippedTool>, 
/**
 * What changed against the tools registered before (all added for a new server).
 */
changes: ToolChanges, };

export type RemoteChoice = { 
/**
 * `http(s)://host[:port][/base]`.
 */
url: string, 
/**
 * Is a token kept?
 */
hasToken: boolean, 
/**
 * The names of the headers kept (their values are secret).
 */
headerNames: Array<string>, 
/**
 * Where the token and headers are.
 */
secret: SecretPlace, };

export type RemoteRequest = { 
/**
 * The server's URL.
 */
url: string, 
/**
 * Its token; `None` keeps the one kept for the same URL.
 */
token: string | null, 
/**
 * Headers as `Name: value`; `None` keeps the ones kept for the same URL.
 */
headers: Array<string> | null, };

export type RemoteState = { 
/**
 * The workspace's server as kept (no secret), `None`: this computer.
 */
choice: RemoteChoice | null, 
/**
 * The server the running kernel is on (its URL), `None`: this computer.
 */
running: string | null, 
/**
 * The server `--gateway-url` set for this run, which wins over the choice.
 */
commandLine: string | null, };

export type Rule = { 
/**
 * The registered server's name, or a glob (`*`, `?`) over names.
 */
server: string, 
/**
 * The tool's name, or a glob (`*`, `?`) over names; every tool of the server when
 * left out.
 */
tool: string, 
/**
 * Conditions on arguments, all of which must hold. A key is an argument's name, or a
 * [JSON Pointer](https://www.rfc-editor.org/rfc/rfc6901) (starting with `/`) into the
 * arguments for nested values.
 */
args?: { [key in string]: ArgMatcher }, 
/**
 * The call may have no top-level argument that `args` does not name: a rule made from
 * one call's arguments then does not match a call that adds another.
 */
exact_args?: boolean, 
/**
 * What to do with a matching call.
 */
decision: RuleDecision, 
/**
 * Told to the kernel code when this rule rejects a call (reject rules only).
 */
reason?: string, 
/**
 * A note for people; ignored when matching.
 */
comment?: string, 
/**
 * Only tools whose server says they are read-only (`readOnlyHint`). That is the
 * server's claim, not something ipybox checked.
 */
read_only?: boolean, 
/**
 * Whose calls the rule decides: `notebook` (cells, and `ipybox exec`), `agents`
 * (agents' code), or `any`. Left out: the rules' default (see [`Rules::default_scope`]),
 * notebooks in the app, so that rules written before agents existed do not decide
 * agents' calls.
 */
scope?: Scope, 
/**
 * When the rule stops deciding (a grant for 15 minutes), in milliseconds since the
 * Unix epoch; it never does when left out.
 */
expires_at?: number, };

export type RuleDecision = "allow" | "reject";

export type SandboxBlock = { 
/**
 * Reading or writing.
 */
access: Access, 
/**
 * The path (absolute, links followed).
 */
path: string, 
/**
 * The rule that blocks it (`filesystem.denyRead: ~/.ssh`); `None` for a write no
 * `allowWrite` entry covers.
 */
rule: string | null, 
/**
 * Why, in words.
 */
reason: string, 
/**
 * The narrowest folder (or file) whose entry would allow it, as the policy spells it
 * (`~/…` inside the home); `None` when no entry the person can add would: ipybox's
 * own protections, srt's, or a `denyWrite` entry that must be removed instead; and
 * never for a place no grant may open ([`refusal`](Self::refusal)).
 */
suggestion: string | null, 
/**
 * Why nothing is offered although an entry would allow it: the place is one where code
 * written would run outside the sandbox later, a secret, the home, ipybox's own data or
 * the kernels' Python ("ipybox does not offer to open this place: …").
 */
refusal: string | null, };

export type SandboxState = { 
/**
 * The workspace's own policy file (`<workspace>/sandbox-config.json`).
 */
workspacePolicy: string, 
/**
 * Does it exist?
 */
workspacePolicyExists: boolean, 
/**
 * The profiles ipybox ships.
 */
profiles: Array<ProfileInfo>, 
/**
 * The workspace's choice, as kept in ipybox's data directory.
 */
choice: Choice, 
/**
 * The policy the running kernel is sandboxed under (its name); `None`: not sandboxed.
 */
running: string | null, 
/**
 * The policy `--sandbox`/`--sandbox-config` set for this run, which wins over the choice.
 */
commandLine: string | null, 
/**
 * The server the kernel runs on (its URL), where no sandbox applies.
 */
remote: string | null, };

export type SavedTool = { 
/**
 * `gentools.<category>.<name>`.
 */
module: string, 
/**
 * Its interface (`api.py`).
 */
api: string, };

export type Scope = "notebook" | "agents" | "any";

export type SecretPlace = "none" | "keyring" | "file";

export type ServerList = { 
/**
 * The servers, by name.
 */
servers: Array<RegisteredServer>, 
/**
 * The profiles a server can be sandboxed with.
 */
profiles: Array<ServerProfile>, 
/**
 * The sign-in kept for each HTTP server that signs in with OAuth (by name); servers
 * that take a token in their headers, and stdio servers, have none.
 */
signIns: { [key in string]: SignInState }, };

export type ServerParams = { 
/**
 * `stdio`, `streamable_http` or `sse`; inferred when absent.
 */
type?: TransportKind, 
/**
 * Program to run (stdio).
 */
command?: string, 
/**
 * Its arguments (stdio).
 */
args?: Array<string>, 
/**
 * Extra environment variables of the server process (stdio).
 */
env?: { [key in string]: string }, 
/**
 * Working directory of the server process (stdio).
 */
cwd?: string, 
/**
 * Server URL (HTTP).
 */
url?: string, 
/**
 * HTTP headers sent with every request (HTTP).
 */
headers?: { [key in string]: string }, };

export type ServerProfile = { 
/**
 * Its name (`mcp-server`).
 */
name: string, 
/**
 * What it is for, in words.
 */
purpose: string, };

export type ServerQuestion = { 
/**
 * Unique within the session.
 */
id: number, 
/**
 * The registered server that asks.
 */
server: string, 
/**
 * What it asks, in its own words (untrusted).
 */
message: string, 
/**
 * The form to fill in.
 */
form: QuestionForm, 
/**
 * The tool call it came during, when ipybox can tell (one call of that server running).
 */
call: CallRef | null, 
/**
 * When it was asked, in milliseconds since the Unix epoch.
 */
asked_at: number, };

export type SessionEvent = { "type": "provisioning", 
/**
 * This step, from 1.
 */
step: number, 
/**
 * How many steps there are.
 */
steps: number, 
/**
 * What happens now, in words.
 */
message: string, } | { "type": "package_install", 
/**
 * What is being installed.
 */
spec: string, 
/**
 * The line.
 */
line: string, } | { "type": "started" } | { "type": "stopped" } | { "type": "kernel_busy", 
/**
 * The execution ([`ExecutionStream::id`](crate::ExecutionStream::id)).
 */
execution_id: string, } | { "type": "kernel_idle" } | { "type": "kernel_replaced", 
/**
 * Why, in words.
 */
reason: string, } | { "type": "approval_requested", 
/**
 * The request, as data.
 */
request: ApprovalRequest, } | { "type": "approval_decided", 
/**
 * Its id.
 */
id: number, 
/**
 * Accept or reject.
 */
decision: Decision, 
/**
 * Who or what decided.
 */
decided_by: DecidedBy, } | { "type": "approval_withdrawn", 
/**
 * Its id.
 */
id: number, 
/**
 * Why, in words.
 */
reason: string, } | { "type": "tool_call", 
/**
 * `approved`, `rejected` or `timed_out`.
 */
decision: CallDecision, 
/**
 * Who or what decided.
 */
decided_by: DecidedBy, 
/**
 * Why it was not approved, in words (`None` when it was).
 */
reason: string | null, 
/**
 * What the call returned, when it ran.
 */
outcome: CallOutcome | null, 
/**
 * How long the call took, approval excluded (ms).
 */
duration_ms: number, 
/**
 * Unique within the session.
 */
id: number, 
/**
 * The registered server's name.
 */
server: string, 
/**
 * The tool's name.
 */
tool: string, 
/**
 * The arguments, as they will be sent.
 */
arguments: JsonValue, 
/**
 * What the server is (its command line or URL, secrets masked).
 */
server_description: string, 
/**
 * The execution whose code made the call.
 */
execution_id: string | null, 
/**
 * Where the code came from, in words.
 */
origin: string | null, 
/**
 * When it was asked.
 */
asked_at: number, 
/**
 * Until when it waits for a decision.
 */
deadline: number, 
/**
 * The tool's definition, a change of it, the agent's client, the calling line.
 */
details: CallDetails, 
/**
 * The rule that decided it, once one did.
 */
rule: string | null, } | { "type": "sandbox_blocked", 
/**
 * The execution whose cell was blocked.
 */
execution_id: string, 
/**
 * What was blocked, by which rule, and what to allow.
 */
block: SandboxBlock, } | { "type": "mcp_server_started", 
/**
 * The registered server's name.
 */
server: string, } | { "type": "mcp_server_exited", 
/**
 * The registered server's name.
 */
server: string, 
/**
 * The last lines it wrote on stderr.
 */
stderr: string, 
/**
 * How its process ended, when ipybox started it (stdio) and saw it end; absent
 * for a remote server whose connection closed.
 */
exit?: ProcessExit, } | { "type": "mcp_sign_in_needed", 
/**
 * The registered server's name.
 */
server: string, 
/**
 * A sign-in was kept and no longer works.
 */
again: boolean, } | { "type": "tool_progress", 
/**
 * The call's request ([`RequestSnapshot::id`]).
 */
id: number, 
/**
 * The execution whose code made the call.
 */
execution_id: string | null, 
/**
 * The registered server's name.
 */
server: string, 
/**
 * The tool's name.
 */
tool: string, 
/**
 * Work done so far; increases with each report.
 */
progress: number, 
/**
 * Work in all, when the server knows it.
 */
total: number | null, 
/**
 * What the server says it is doing (untrusted text).
 */
message: string | null, } | { "type": "elicitation_requested", 
/**
 * The question, its form and the call it came during.
 */
question: ServerQuestion, } | { "type": "elicitation_ended", 
/**
 * The question's id.
 */
id: number, 
/**
 * The registered server that asked.
 */
server: string, 
/**
 * What it asked (untrusted).
 */
message: string, 
/**
 * The tool call it came during.
 */
call: CallRef | null, 
/**
 * `accept`, `decline` or `cancel`, as it went back to the server.
 */
action: "accept" | "decline" | "cancel", 
/**
 * The values that went back, but for secret fields'.
 */
values: { [key in string]: JsonValue } | null, 
/**
 * The fields whose values went back but are not recorded (secrets).
 */
withheld: Array<string>, 
/**
 * Why it was declined or cancelled without a person (nobody to ask, the call ended).
 */
reason: string | null, } | { "type": "mcp_server_log", 
/**
 * The registered server's name.
 */
server: string, 
/**
 * `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert` or `emergency`.
 */
level: string, 
/**
 * The message (untrusted text).
 */
message: string, };

export type SessionNotice = { "type": "startup_failed" } & DesktopError;

export type Severity = "error" | "warning" | "danger";

export type SignInState = { 
/**
 * A sign-in is kept.
 */
signedIn: boolean, 
/**
 * Who signed in, where the authorization server says (untrusted text).
 */
user?: string, 
/**
 * When the access token expires, in milliseconds since the epoch.
 */
expiresAt?: number, 
/**
 * It is renewed before then (a refresh token is kept).
 */
refreshable: boolean, };

export type SkippedTool = { 
/**
 * The tool's name on the server.
 */
tool: string, 
/**
 * Why, in words.
 */
reason: string, };

export type SortKey = { 
/**
 * The column's position.
 */
column: number, 
/**
 * Ascending (missing values last either way).
 */
ascending: boolean, };

export type StartState = { 
/**
 * The session's state at launch.
 */
state: AppState, 
/**
 * Whether its notebook is trusted (as `notebook_trusted` answers).
 */
trusted: boolean, };

export type StreamName = "stdout" | "stderr";

export type ToolChanges = { 
/**
 * Tools the server offers now and did not before.
 */
added: Array<string>, 
/**
 * Tools it no longer offers.
 */
removed: Array<string>, 
/**
 * Tools whose interface (`Params`, `Result`, `run`'s docstring) changed, with both
 * interfaces: the old one is gone from the registry once it is regenerated, and a
 * person deciding whether their cells still work needs to see it beside the new one.
 */
changed: Array<ChangedTool>, };

export type ToolDefinition = { 
/**
 * The tool's name.
 */
name: string, 
/**
 * Its human-readable title, when the server gives one.
 */
title?: string, 
/**
 * What the server says it does.
 */
description?: string, 
/**
 * The JSON Schema of its arguments.
 */
input_schema: JsonValue, 
/**
 * What the server claims about its behaviour.
 */
hints: ToolHints, };

export type ToolHints = { 
/**
 * `readOnlyHint`: the tool does not change its environment.
 */
read_only?: boolean, 
/**
 * `destructiveHint`: the tool may delete or overwrite.
 */
destructive?: boolean, 
/**
 * `idempotentHint`: calling it again with the same arguments does nothing more.
 */
idempotent?: boolean, 
/**
 * `openWorldHint`: the tool reaches outside (the internet, other systems).
 */
open_world?: boolean, };

export type ToolSummary = { 
/**
 * The tool's name on the server.
 */
tool: string, 
/**
 * Its module: `from mcptools.<server>.<module> import Params, run`.
 */
module: string, 
/**
 * What the server says it does.
 */
description?: string, 
/**
 * Its generated `Params`/`Result` classes and `run` signature, for a person to read
 * (absent in registries written before ipybox kept it).
 */
interface?: string, };

export type TransportKind = "stdio" | "streamable_http" | "sse";

export type Variable = { 
/**
 * The name.
 */
name: string, 
/**
 * The type's name (`int`, `DataFrame`).
 */
type: string, 
/**
 * The type's module, unless it is a builtin (`pandas.core.frame`).
 */
module?: string, 
/**
 * Shape of an array, frame or series.
 */
shape?: Array<number>, 
/**
 * Length of a string, bytes or container.
 */
length?: number, 
/**
 * Bytes held, where cheap to know (shallow for Python containers).
 */
size?: number, 
/**
 * A one-line, truncated repr.
 */
repr?: string, 
/**
 * A frame the data grid opens: `pandas` or `polars`.
 */
frame?: string, };

export type VariableSource = "workspace" | "dot_env" | "environment";

export type Verdict = { 
/**
 * What was asked about.
 */
access: Access, 
/**
 * The path (absolute, links followed) or URL asked about.
 */
target: string, 
/**
 * Allowed or not.
 */
allowed: boolean, 
/**
 * The rule that decides (`filesystem.denyRead: ~/.ssh`), or `None` when no rule
 * applies and the sandbox's default decides.
 */
rule: string | null, 
/**
 * Why, in words.
 */
reason: string, };
