//! What the window receives and sends, in one place, as plain data; the TypeScript types are
//! generated from them (`bindings.rs` writes `ui/src/generated/backend.ts`). What reads and
//! keeps them is beside this module, not in it. Field names are camelCase, as Tauri passes
//! arguments.
//!
//! Some engine types cross as they are rather than through a copy here, in their own
//! snake_case: an execution's `Output` (nbformat's field names), `SessionEvent` and
//! `AgentActivity` (the library's events and the agent link's wire), `AuditEntry` (a line of
//! the audit log file), `Rule`/`ArgMatcher`/`Grant` (the rules file), `ToolDefinition` and
//! `ToolHints` (MCP's own), and a server's question. Their serialized form is already a format
//! people and programs read elsewhere; a camelCase mirror would make the window's copy differ
//! from the file it shows, and every field added to the engine a second edit. Each type still
//! has one casing, and the generated file keeps the window honest about it.

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, ErrorReport};
use crate::executor::Output;

/// An error as the window shows it: a stable code to switch on, and words.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct DesktopError {
    /// Stable code.
    pub code: ErrorCode,
    /// What went wrong, in words.
    pub message: String,
}

impl From<Error> for DesktopError {
    fn from(e: Error) -> Self {
        let ErrorReport { mut code, message } = ErrorReport::from(&e);
        // A server that asks for a sign-in: the panel offers one instead of an error alone.
        if crate::mcp::oauth::sign_in_needed(&e).is_some() {
            code = ErrorCode::SignInRequired;
        }
        DesktopError { code, message }
    }
}

/// The kernel, as the status indicator shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum KernelStatus {
    /// Provisioning or starting.
    Starting,
    /// Ready, nothing running.
    Idle,
    /// Running a cell.
    Busy,
    /// It could not start, or the session stopped.
    Dead,
}

/// What the window hears on its `session` channel besides the engine's
/// [`SessionEvent`](crate::events::SessionEvent)s, tagged the same way.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionNotice {
    /// The session could not start: no kernel runs, and this says why.
    StartupFailed(DesktopError),
}

/// What the window needs to draw itself.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AppState {
    /// The workspace folder.
    pub workspace: String,
    /// Its name.
    pub workspace_name: String,
    /// The notebook shown (absolute; may not exist yet).
    pub notebook_path: String,
    /// Its contents; `None` when the file does not exist yet.
    pub notebook: Option<String>,
    /// Recently used workspaces, newest first.
    pub recent: Vec<String>,
    /// Do kernels run in the sandbox?
    pub sandbox: bool,
    /// The server kernels run on (its URL), when not on this computer.
    pub remote: Option<String>,
    /// The kernel now.
    pub kernel: KernelStatus,
    /// The provisioning step in progress, if the Python environment is being built.
    pub provisioning: Option<Provisioning>,
    /// Why the kernel could not start, if it could not.
    pub startup_error: Option<DesktopError>,
    /// The Python the notebook's kernel runs.
    pub python: KernelPython,
}

/// The Python a notebook's kernel runs, as the status bar shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct KernelPython {
    /// Short: `Python 3.12 · .venv`.
    pub label: String,
    /// The interpreter's full path.
    pub path: String,
    /// The person's choice it comes from.
    pub choice: crate::pyenv::PythonChoice,
}

/// What the Python picker offers for the open notebook.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PythonOptions {
    /// What the kernel runs now.
    pub current: KernelPython,
    /// ipybox's own environment's interpreter.
    pub managed: String,
    /// The workspace's `.venv` interpreter (whether or not it exists).
    pub project: String,
    /// Does the workspace have a `.venv`?
    pub project_exists: bool,
    /// Does it have a `pyproject.toml` (a `.venv` can be made from it)?
    pub pyproject: bool,
    /// Is uv installed (to make one)?
    pub uv: bool,
    /// Are the workspace's kernels sandboxed (its environment is then read-only to them)?
    pub sandbox: bool,
}

/// What ipybox found out about a Python the person picked.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PythonCheck {
    /// Short: `Python 3.12 · .venv`.
    pub label: String,
    /// The interpreter's full path.
    pub path: String,
    /// `major.minor`, when known.
    pub version: Option<String>,
    /// Does it have ipykernel (needed to run a kernel)?
    pub ipykernel: bool,
}

/// What the window draws first, handed to the page before its scripts run.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct StartState {
    /// The session's state at launch.
    pub state: AppState,
    /// Whether its notebook is trusted (as `notebook_trusted` answers).
    pub trusted: bool,
}

/// The app's settings as the settings dialog shows them.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AppSettings {
    /// Reject a tool call nobody decided within this many seconds: as saved, and in force in
    /// the running session, whose next request waits this long.
    pub approval_timeout_secs: u64,
}

/// A saved code action, as the window lists it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SavedTool {
    /// `gentools.<category>.<name>`.
    pub module: String,
    /// Its interface (`api.py`).
    pub api: String,
}

/// The app's own MCP endpoint for agents, as the window shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct McpEndpointState {
    /// Serving now.
    pub enabled: bool,
    /// `http://127.0.0.1:PORT/mcp`, while serving.
    pub url: Option<String>,
    /// The bearer token agents send, while serving.
    pub token: Option<String>,
    /// Why it could not serve, when it could not.
    pub error: Option<String>,
    /// Agents' code runs in the sandbox (on this computer; a kernel server's kernels are
    /// not).
    pub sandboxed: bool,
}

/// A step of building the Python environment (first run), for the progress bar.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Provisioning {
    /// This step, from 1.
    pub step: u32,
    /// How many steps there are.
    pub steps: u32,
    /// What happens now, in words.
    pub message: String,
}

/// One event of an execution, sent over its channel.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ExecEvent {
    /// The kernel began the execution.
    #[serde(rename_all = "camelCase")]
    Started {
        /// Its count (`[n]`).
        execution_count: Option<i64>,
    },
    /// Outputs in the kernel's order, gathered over a frame.
    Outputs {
        /// The outputs.
        outputs: Vec<Output>,
    },
    /// `input()` or `getpass()` waits for an answer (`reply_input`).
    Input {
        /// Which request.
        id: u64,
        /// The prompt.
        prompt: String,
        /// Mask what is typed.
        password: bool,
    },
    /// The execution succeeded.
    Finished,
    /// It failed; for `CodeExecutionError` the traceback came as an `error` output.
    Failed {
        /// Why.
        error: DesktopError,
    },
}

/// The Sandbox tab: what the kernel runs under and what the person chose.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SandboxState {
    /// The workspace's own policy file (`<workspace>/sandbox-config.json`).
    pub workspace_policy: String,
    /// Does it exist?
    pub workspace_policy_exists: bool,
    /// The profiles ipybox ships.
    pub profiles: Vec<ProfileInfo>,
    /// The workspace's choice, as kept in ipybox's data directory.
    pub choice: Choice,
    /// The policy the running kernel is sandboxed under (its name); `None`: not sandboxed.
    pub running: Option<String>,
    /// The policy `--sandbox`/`--sandbox-config` set for this run, which wins over the choice.
    pub command_line: Option<String>,
    /// The server the kernel runs on (its URL), where no sandbox applies.
    pub remote: Option<String>,
}

/// Where the workspace's kernel runs, as the Settings dialog shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RemoteState {
    /// The workspace's server as kept (no secret), `None`: this computer.
    pub choice: Option<RemoteChoice>,
    /// The server the running kernel is on (its URL), `None`: this computer.
    pub running: Option<String>,
    /// The server `--gateway-url` set for this run, which wins over the choice.
    pub command_line: Option<String>,
}

/// A shipped profile.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ProfileInfo {
    /// Its name (`kernel`, `kernel-allow-pypi`, …).
    pub name: String,
    /// What it is for.
    pub purpose: String,
}

/// A policy as the editor opens it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PolicyDocument {
    /// Where it comes from.
    pub source: PolicySource,
    /// The file's text (the default profile's while the workspace has no policy).
    pub text: String,
    /// The file, for the workspace's policy.
    pub path: Option<String>,
    /// Does the file exist?
    pub exists: bool,
    /// A shipped profile: saved only as the workspace's policy.
    pub read_only: bool,
    /// Its problems, each against its field.
    pub problems: Vec<crate::sandbox::PolicyProblem>,
}

/// The workspace's policy file changed on disk (`policy-file` event).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PolicyFileChanged {
    /// The file.
    pub path: String,
    /// Its text now; `None`: removed.
    pub text: Option<String>,
}

/// A sandbox profile ipybox ships for MCP servers (`srt --settings ipybox:<name>`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ServerProfile {
    /// Its name (`mcp-server`).
    pub name: &'static str,
    /// What it is for, in words.
    pub purpose: &'static str,
}

/// The servers registered for the workspace, with their tools.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerList {
    /// The servers, by name.
    pub servers: Vec<crate::executor::RegisteredServer>,
    /// The profiles a server can be sandboxed with.
    pub profiles: Vec<ServerProfile>,
    /// The sign-in kept for each HTTP server that signs in with OAuth (by name); servers
    /// that take a token in their headers, and stdio servers, have none.
    pub sign_ins: std::collections::BTreeMap<String, SignInState>,
}

/// A server's sign-in as its card shows it. Never a token.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SignInState {
    /// A sign-in is kept.
    pub signed_in: bool,
    /// Who signed in, where the authorization server says (untrusted text).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub user: Option<String>,
    /// When the access token expires, in milliseconds since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub expires_at: Option<u64>,
    /// It is renewed before then (a refresh token is kept).
    pub refreshable: bool,
}

impl From<crate::mcp::oauth::Status> for SignInState {
    fn from(status: crate::mcp::oauth::Status) -> Self {
        match status {
            crate::mcp::oauth::Status::SignedOut => SignInState::default(),
            crate::mcp::oauth::Status::SignedIn {
                expires,
                refreshable,
                user,
                ..
            } => SignInState {
                signed_in: true,
                user,
                expires_at: expires
                    .and_then(|e| e.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_millis() as u64),
                refreshable,
            },
        }
    }
}

/// The policy a sandboxed kernel runs under.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PolicySource {
    /// The workspace's `sandbox-config.json` (ipybox's default `kernel` profile while the
    /// workspace has none).
    #[default]
    Workspace,
    /// A profile ipybox ships, by name.
    Profile {
        /// `kernel`, `kernel-allow-pypi`, …
        name: String,
    },
}

/// The per-workspace choice, kept in ipybox's data directory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Choice {
    /// Run the kernel in the sandbox.
    pub sandbox: bool,
    /// Under this policy.
    #[serde(default)]
    pub policy: PolicySource,
}

/// Where the secret of a remote gateway is kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum SecretPlace {
    /// Nothing to keep: no token, no headers.
    #[default]
    None,
    /// The OS keyring.
    Keyring,
    /// `gateway-secret.json` in the workspace's directory in ipybox's data directory, 0600.
    File,
}

/// The remote server a workspace's kernels run on, as kept (without its secret).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RemoteChoice {
    /// `http(s)://host[:port][/base]`.
    pub url: String,
    /// Is a token kept?
    #[serde(default)]
    pub has_token: bool,
    /// The names of the headers kept (their values are secret).
    #[serde(default)]
    pub header_names: Vec<String>,
    /// Where the token and headers are.
    #[serde(default)]
    pub secret: SecretPlace,
}

/// What the window sends to run a workspace's kernels on a server.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RemoteRequest {
    /// The server's URL.
    pub url: String,
    /// Its token; `None` keeps the one kept for the same URL.
    pub token: Option<String>,
    /// Headers as `Name: value`; `None` keeps the ones kept for the same URL.
    pub headers: Option<Vec<String>>,
}

/// What File → Export makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// One HTML file, readable in any browser, with nothing that runs or loads.
    Html,
    /// That page printed by WebKitGTK.
    Pdf,
    /// A Python script, as nbconvert makes them.
    Py,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_tells_a_sign_in_apart_from_other_mcp_errors() {
        let needed = crate::mcp::oauth::SignInNeeded {
            server: "docs".into(),
            url: "https://docs.example/mcp".into(),
            challenge: None,
            again: true,
            scope: None,
        };
        let sign_in =
            DesktopError::from(Error::mcp("MCP server \"docs\": cannot call it").because(needed));
        assert_eq!(sign_in.code, ErrorCode::SignInRequired);
        assert!(
            sign_in.message.contains("Sign in again"),
            "{}",
            sign_in.message
        );
        let other: DesktopError = Error::mcp("the server exited").into();
        assert_eq!(other.code, ErrorCode::McpError);
    }
}
