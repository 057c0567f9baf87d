// Generated from the Rust types by `src-tauri/src/desktop/bindings.rs`; do not edit.
// IPYBOX_BLESS=1 cargo test -p ipybox --lib desktop::bindings writes it again.
import type { JsonValue } from '../util/json';

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
startupError: DesktopError | null, };

export type Choice = { 
/**
 * Run the kernel in the sandbox.
 */
sandbox: boolean, 
/**
 * Under this policy.
 */
policy: PolicySource, };

export type DesktopError = { 
/**
 * Stable code.
 */
code: ErrorCode, 
/**
 * What went wrong, in words.
 */
message: string, };

export type ErrorCode = "CodeExecutionError" | "Timeout" | "KernelDied" | "Cancelled" | "GatewayError" | "KernelStartFailed" | "PythonEnvError" | "ImageError" | "NotRunning" | "McpError" | "InvalidConfig" | "SandboxUnavailable" | "IoError";

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

export type KernelStatus = "starting" | "idle" | "busy" | "dead";

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
display_id: string | null, } | { "type": "execute_result", 
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
policy?: string | null, 
/**
 * Its tools, as generated.
 */
tools: Array<ToolSummary>, };

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

export type SecretPlace = "none" | "keyring" | "file";

export type ServerList = { 
/**
 * The servers, by name.
 */
servers: Array<RegisteredServer>, 
/**
 * The profiles a server can be sandboxed with.
 */
profiles: Array<ServerProfile>, };

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

export type SessionNotice = { "type": "startup_failed" } & DesktopError;

export type Severity = "error" | "warning";

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
description?: string | null, 
/**
 * Its generated `Params`/`Result` classes and `run` signature, for a person to read
 * (absent in registries written before ipybox kept it).
 */
interface?: string | null, };

export type TransportKind = "stdio" | "streamable_http" | "sse";
