//! What happens to a session, for every listener at once (a notebook, an approval panel, an
//! audit log, the MCP server panel): [`CodeExecutor::subscribe`](crate::CodeExecutor::subscribe).
//! Events serialize with a `type` tag (`kernel_busy`, `tool_call`, …) for a UI.

use serde::Serialize;
use tokio::sync::broadcast;

use crate::definition::CallDetails;

/// The answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run the call.
    Accept,
    /// Do not run it; the kernel code raises `ApprovalRejected`.
    Reject,
}

/// An approval request as it was when an event was sent: data a listener reads, not the
/// request itself (decide one by its id: [`CodeExecutor::decide`](crate::CodeExecutor::decide)).
/// Serializes as the request does: `{id, server, tool, arguments, server_description,
/// execution_id, origin, asked_at, deadline, details, rule}` (times in milliseconds since the
/// Unix epoch).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ApprovalRequest"))]
pub struct RequestSnapshot {
    /// Tells the request from one of another session with the same id.
    #[serde(skip)]
    pub(crate) key: u64,
    /// Unique within the session.
    pub id: u64,
    /// The registered server's name.
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// The arguments, as they will be sent.
    pub arguments: serde_json::Value,
    /// What the server is (its command line or URL, secrets masked).
    pub server_description: String,
    /// The execution whose code made the call.
    pub execution_id: Option<String>,
    /// Where the code came from, in words.
    pub origin: Option<String>,
    /// When it was asked.
    pub asked_at: u64,
    /// Until when it waits for a decision.
    pub deadline: u64,
    /// The tool's definition, a change of it, the agent's client, the calling line.
    pub details: CallDetails,
    /// The rule that decided it, once one did.
    pub rule: Option<String>,
}

impl RequestSnapshot {
    /// Its id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The registered server's name.
    pub fn server_name(&self) -> &str {
        &self.server
    }

    /// The tool's name.
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// The arguments.
    pub fn tool_args(&self) -> &serde_json::Value {
        &self.arguments
    }

    /// What the server is (its command line or URL, secrets masked).
    pub fn server_description(&self) -> &str {
        &self.server_description
    }

    /// The execution whose code made the call.
    pub fn execution_id(&self) -> Option<&str> {
        self.execution_id.as_deref()
    }

    /// Where the code came from.
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    /// The tool's definition, the agent's client, the calling line.
    pub fn details(&self) -> &CallDetails {
        &self.details
    }

    /// The rule that decided it.
    pub fn rule(&self) -> Option<&str> {
        self.rule.as_deref()
    }

    /// When it was asked, in milliseconds since the Unix epoch.
    pub fn asked_at_ms(&self) -> u64 {
        self.asked_at
    }
}

impl std::fmt::Display for RequestSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}({})", self.server, self.tool, self.arguments)
    }
}

/// One thing that happened to the session.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SessionEvent {
    /// The Python environment is being provisioned (the first start only, or after an
    /// upgrade): a step of a progress bar.
    Provisioning {
        /// This step, from 1.
        step: u32,
        /// How many steps there are.
        steps: u32,
        /// What happens now, in words.
        message: String,
    },
    /// A line of pip's output while `install_package` runs (a window shows it live).
    PackageInstall {
        /// What is being installed.
        spec: String,
        /// The line.
        line: String,
    },
    /// The session started: a kernel is ready.
    Started,
    /// The session stopped.
    Stopped,
    /// The kernel began running an execution.
    KernelBusy {
        /// The execution ([`ExecutionStream::id`](crate::ExecutionStream::id)).
        execution_id: String,
    },
    /// The kernel finished it, and nothing else is queued.
    KernelIdle,
    /// The kernel was replaced by a fresh one: `reset()`, or the old one died or ignored an
    /// interrupt. Its state is gone.
    KernelReplaced {
        /// Why, in words.
        reason: String,
    },
    /// A tool call waits for a decision (answer it with
    /// [`CodeExecutor::decide`](crate::CodeExecutor::decide)).
    ApprovalRequested {
        /// The request, as data.
        request: Box<RequestSnapshot>,
    },
    /// A request was decided.
    ApprovalDecided {
        /// Its id.
        id: u64,
        /// Accept or reject.
        decision: Decision,
        /// Who or what decided.
        decided_by: DecidedBy,
    },
    /// A request no longer waits (it timed out, or its execution ended): close its dialog.
    ApprovalWithdrawn {
        /// Its id.
        id: u64,
        /// Why, in words.
        reason: String,
    },
    /// A tool call ended: what was asked (the request's fields: `id`, `server`, `tool`,
    /// `arguments`, `execution_id`, `origin`, …), how it was decided and what came of it.
    /// An audit log is made of these.
    ToolCall {
        /// The request, as data.
        #[serde(flatten)]
        request: Box<RequestSnapshot>,
        /// `approved`, `rejected` or `timed_out`.
        decision: CallDecision,
        /// Who or what decided.
        decided_by: DecidedBy,
        /// Why it was not approved, in words (`None` when it was).
        reason: Option<String>,
        /// What the call returned, when it ran.
        outcome: Option<CallOutcome>,
        /// How long the call took, approval excluded (ms).
        duration_ms: u64,
    },
    /// A cell failed because the sandbox blocked a file operation: what the kernel's hook
    /// reported, checked against the policy in force (never taken from what the cell
    /// printed), with the change that would allow it.
    SandboxBlocked {
        /// The execution whose cell was blocked.
        execution_id: String,
        /// What was blocked, by which rule, and what to allow.
        block: Box<SandboxBlock>,
    },
    /// An MCP server process or connection was started.
    McpServerStarted {
        /// The registered server's name.
        server: String,
    },
    /// An MCP server went away on its own (it exited or crashed, or its connection
    /// closed); it is started again on its next call.
    McpServerExited {
        /// The registered server's name.
        server: String,
        /// The last lines it wrote on stderr.
        stderr: String,
        /// How its process ended, when ipybox started it (stdio) and saw it end; absent
        /// for a remote server whose connection closed.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(test, ts(optional))]
        exit: Option<ProcessExit>,
    },
    /// An HTTP MCP server refused a call because it asks the person to sign in: `again` when
    /// a kept sign-in expired or was revoked. Its card offers the sign-in.
    McpSignInNeeded {
        /// The registered server's name.
        server: String,
        /// A sign-in was kept and no longer works.
        again: bool,
    },
    /// A running tool call's server reported how far it has got
    /// ([MCP progress](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress)).
    ToolProgress {
        /// The call's request ([`RequestSnapshot::id`]).
        id: u64,
        /// The execution whose code made the call.
        execution_id: Option<String>,
        /// The registered server's name.
        server: String,
        /// The tool's name.
        tool: String,
        /// Work done so far; increases with each report.
        progress: f64,
        /// Work in all, when the server knows it.
        total: Option<f64>,
        /// What the server says it is doing (untrusted text).
        message: Option<String>,
    },
    /// A server asked the person a question during a tool call (a form to fill in):
    /// answer it with
    /// [`CodeExecutor::answer_elicitation`](crate::CodeExecutor::answer_elicitation) when the
    /// session's listeners answer questions.
    ElicitationRequested {
        /// The question, its form and the call it came during.
        question: Box<crate::question::Question>,
    },
    /// A question was answered, declined or cancelled (by the person, or without one: nobody
    /// to ask, its call ended). The audit log records these; secrets' values are left out.
    ElicitationEnded {
        /// What was asked and what went back.
        #[serde(flatten)]
        answered: Box<crate::question::Answered>,
    },
    /// An MCP server sent a log message
    /// ([MCP logging](https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging)).
    McpServerLog {
        /// The registered server's name.
        server: String,
        /// `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert` or `emergency`.
        level: String,
        /// The message (untrusted text).
        message: String,
    },
}

/// How a server's process ended: `{"code": 3}` or `{"signal": 9}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ProcessExit {
    /// It exited with this status (0 on success).
    Code(i32),
    /// A signal ended it (9: SIGKILL, 11: SIGSEGV, …).
    Signal(i32),
}

impl ProcessExit {
    /// From what the OS reported; `None` for a status that is neither (a stopped process).
    pub fn from_status(status: std::process::ExitStatus) -> Option<ProcessExit> {
        let code = status.code().map(ProcessExit::Code);
        // Only Unix ends a process by a signal.
        #[cfg(unix)]
        let code = code.or_else(|| {
            use std::os::unix::process::ExitStatusExt;
            status.signal().map(ProcessExit::Signal)
        });
        code
    }
}

/// How a tool call was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum CallDecision {
    /// It was approved and ran.
    Approved,
    /// It was rejected; it did not run.
    Rejected,
    /// Nobody decided in time; it did not run.
    TimedOut,
}

/// Who or what decided an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// A person, for this request (a dialog, a panel's button, a terminal prompt).
    Person,
    /// A person, for every pending request at once ("approve all pending calls to this
    /// tool", "reject all pending").
    Batch,
    /// An approval rule.
    Rule,
    /// A person's "Allow for this session" in the approval dialog: a grant for the tool in
    /// the caller's session (the call the person answered, and later ones the grant covers).
    Grant,
    /// Nobody decided within the approval timeout.
    Timeout,
    /// The session's fixed policy (`--approval auto`/`reject`, or no execution running to
    /// ask for).
    Policy,
    /// Nobody: the request went away undecided (its execution ended, its dialog went).
    Nobody,
}

/// What an approved call returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallOutcome {
    /// The tool ran and answered.
    Ok,
    /// The tool ran and reported an error.
    ToolError,
    /// The call failed (the server could not be started, did not answer, …).
    Failed {
        /// Why, in words.
        message: String,
    },
}

/// Sends session events to whoever listens; sending with nobody listening is fine.
#[derive(Debug, Clone)]
pub struct Events(broadcast::Sender<SessionEvent>);

impl Default for Events {
    fn default() -> Self {
        // Listeners that fall this far behind miss events (and are told how many).
        Events(broadcast::channel(1024).0)
    }
}

impl Events {
    /// Tell every listener.
    pub fn send(&self, event: SessionEvent) {
        let _ = self.0.send(event);
    }

    /// A new listener, from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<SessionEvent> {
        self.0.subscribe()
    }
}

impl From<Decision> for CallDecision {
    fn from(d: Decision) -> Self {
        match d {
            Decision::Accept => CallDecision::Approved,
            Decision::Reject => CallDecision::Rejected,
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    /// Every listener's queue holds 1,024 events whatever they are, so an event is kept small:
    /// the large payloads are boxed. At 872 bytes an event (a request's tool definition inline),
    /// the app's queue alone took 900 KiB; the largest event left is a progress report.
    #[test]
    fn an_event_is_small() {
        let size = std::mem::size_of::<SessionEvent>();
        assert!(size <= 128, "an event takes {size} bytes");
    }

    #[test]
    fn a_server_exit_says_how_its_process_ended() {
        let event = |exit| SessionEvent::McpServerExited {
            server: "fx".into(),
            stderr: String::new(),
            exit,
        };
        let code = ProcessExit::from_status(std::process::ExitStatus::from_raw(3 << 8));
        assert_eq!(
            code,
            Some(ProcessExit::Code(3)),
            "wait status 0x300 is exit(3)"
        );
        let killed = ProcessExit::from_status(std::process::ExitStatus::from_raw(9));
        assert_eq!(
            killed,
            Some(ProcessExit::Signal(9)),
            "wait status 9 is SIGKILL"
        );
        assert_eq!(
            serde_json::to_value(event(code)).expect("json"),
            serde_json::json!({"type": "mcp_server_exited", "server": "fx", "stderr": "", "exit": {"code": 3}})
        );
        assert_eq!(
            serde_json::to_value(event(killed)).expect("json")["exit"],
            serde_json::json!({"signal": 9})
        );
        assert_eq!(
            serde_json::to_value(event(None)).expect("json"),
            serde_json::json!({"type": "mcp_server_exited", "server": "fx", "stderr": ""}),
            "a remote server's closed connection has no exit status"
        );
    }
}

/// What is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Reading a file or listing a folder.
    Read,
    /// Creating or changing a file.
    Write,
    /// Reaching a URL.
    Connect,
}

/// A file operation the sandbox blocked, as checked against the policy in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SandboxBlock {
    /// Reading or writing.
    pub access: Access,
    /// The path (absolute, links followed).
    pub path: String,
    /// The rule that blocks it (`filesystem.denyRead: ~/.ssh`); `None` for a write no
    /// `allowWrite` entry covers.
    pub rule: Option<String>,
    /// Why, in words.
    pub reason: String,
    /// The narrowest folder (or file) whose entry would allow it, as the policy spells it
    /// (`~/…` inside the home); `None` when no entry the person can add would: ipybox's
    /// own protections, srt's, or a `denyWrite` entry that must be removed instead; and
    /// never for a place no grant may open ([`refusal`](Self::refusal)).
    pub suggestion: Option<String>,
    /// Why nothing is offered although an entry would allow it: the place is one where code
    /// written would run outside the sandbox later, a secret, the home, ipybox's own data or
    /// the kernels' Python ("ipybox does not offer to open this place: …").
    pub refusal: Option<String>,
}
