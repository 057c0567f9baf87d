//! ipybox: run Python code in stateful IPython kernels, optionally sandboxed, with MCP tools
//! available to the code as a typed Python API and every tool call approved by the
//! application.
//!
//! The engine is driven through [`CodeExecutor`]:
//!
//! ```no_run
//! # async fn demo() -> ipybox::Result<()> {
//! let executor = ipybox::CodeExecutor::builder().build();
//! executor.start().await?;
//! let result = executor.execute("print('hello')", None).await?;
//! assert_eq!(result.text.as_deref(), Some("hello"));
//! executor.stop().await?;
//! # Ok(()) }
//! ```
//!
//! # Layout
//!
//! Modules are private; what is public is re-exported below. From the top down, a module
//! uses only those of its own layer and below it (checked by `layout.rs`):
//!
//! - `desktop` (feature `desktop`): the Tauri app, commands of a few lines over the
//!   executor, the notebook window, native approval dialogs, File → Export (a PDF printed
//!   by an offscreen WebKit view, `desktop/pdf.rs`); `workspace`: what it opens and
//!   saves; `instance`: one app per workspace, a second `ipybox open` handed to it.
//! - `mcp_server`: ipybox itself as an MCP server (`ipybox mcp`); `link`: its agents'
//!   calls approved by the app over a private socket, `relay`: by the app in-process (the
//!   app's own MCP endpoint).
//! - `executor`: [`CodeExecutor`], a handle to one actor task (`executor/actor.rs`) that
//!   owns the session's hosts (`executor/host.rs`: a gateway and its kernels; with a sandbox
//!   one per kernel) and runs executions (`executor/execution.rs`, the tool calls their code
//!   asks for over the kernel's stdin channel in `executor/calls.rs`) whose outputs a
//!   notebook renders (`executor/output.rs`); completion and help from the kernel, asked
//!   without queueing behind executions (`executor/help.rs`).
//! - `tools`: the tool server that answers kernels' calls, approval rules, MCP sessions.
//! - `registry`: the servers of a workspace; `audit`: its audit log; `catalog`: MCP servers
//!   ipybox installs itself (PyPI, npm) into its data directory.
//! - `apigen`: MCP tool schemas to typed Python modules, and what a server may be named;
//!   `server_link`: `ipybox://add-server` links that propose a server.
//! - `sandbox`: srt, with its policies (typed and rendered), the enclosure the gateway runs
//!   in (joined through its network namespace) and write guards in the workspace;
//!   `sandbox/install.rs`: finding and installing srt and what it needs;
//!   `sandbox/refusals.rs`: the domains srt's proxy refused, from srt's own record;
//!   `sandbox/grants.rs`: the grants of a policy that matter.
//! - `mcp`: the MCP client (stdio, Streamable HTTP, SSE), server parameters, and the OAuth
//!   sign-in to HTTP servers (`mcp/oauth.rs`: rmcp's protocol, a loopback redirect, tokens
//!   kept in the OS keyring, else 0600 in the data directory).
//! - `kernel`: the Kernel Gateway process, its REST/WebSocket API, typed Jupyter messages,
//!   one kernel session, output collection. It knows a sandbox only as an `Enclosure`.
//! - `events`, `approval` and `elicitation`, one layer: what happens to a session, the
//!   approval requests those events carry (a request tells the events when it is decided),
//!   and the questions servers ask a person during a call, tied to their call and answered.
//! - `definition`: a tool as its server lists it and as a person accepted it (pinned by
//!   hash), the agent and the line of code behind a call — what approvals show;
//!   `question`: a server's question as data (`question/form.rs`: the form its schema asks
//!   for, answers checked, secrets never recorded).
//! - `channel`: what kernel code and ipybox say over the kernel's stdin channel (tool
//!   calls, module sources, sandbox blocks, and their answers); `pyenv`: the kernels'
//!   Python environment; `process`: child processes that never
//!   outlive ipybox; `home`: the data directory; `auth`: secrets;
//!   `secrets`: secrets kept in the OS keyring (feature `keyring`); `fsutil`: writing where
//!   kernel code writes too; `sync`: a lock that outlives a panicked holder; `error`: one
//!   error type with stable codes; `display`:
//!   untrusted text as a person reads it (one escaping rule for the terminal, the dialog and
//!   the audit view; kernel output on a terminal keeps only its colours); `export`: a
//!   notebook file as a self-contained, inert HTML page or a Python script.

mod apigen;
mod approval;
mod audit;
mod auth;
mod catalog;
mod channel;
mod definition;
#[cfg(feature = "desktop")]
mod desktop;
mod display;
mod elicitation;
mod error;
mod events;
mod executor;
mod export;
mod fsutil;
mod home;
#[cfg(feature = "desktop")]
mod instance;
mod kernel;
#[cfg(test)]
mod layout;
mod link;
mod mcp;
mod mcp_server;
mod process;
mod pyenv;
mod question;
mod registry;
#[cfg(feature = "desktop")]
mod relay;
mod sandbox;
#[cfg(feature = "keyring")]
mod secrets;
mod server_link;
mod sync;
mod tools;
#[cfg(feature = "desktop")]
mod workspace;

// The engine: a session of stateful kernels and what it reports.
pub use error::{Error, ErrorCode, ErrorReport, PartialOutput, PythonError, Result};
pub use events::{
    CallDecision, CallOutcome, DecidedBy, ProcessExit, RequestSnapshot, SessionEvent,
};
pub use executor::{
    CancelHandle, CodeExecutionResult, CodeExecutor, CodeExecutorBuilder, Completion, Completions,
    DEFAULT_TIMEOUT, Event, ExecutionStream, InputRequest, Inspection, MimeBundle, Output,
    RegisteredServer, StreamName, StreamOptions,
};
pub use executor::{
    Filter, FilterOp, FrameColumn, FramePage, FrameQuery, KernelVariables, SortKey, Variable,
};
pub use pyenv::{Progress, ProvisionStep, PythonEnv};

// MCP servers as a typed Python API for kernel code.
pub use apigen::ToolSpec;
pub use apigen::generate::{Generated, generate_mcp_sources, write_package};
pub use executor::{GatewayProbe, Placeholder, Registration, RemoteGateway, SkippedTool};
pub use mcp::ServerParams;
pub use mcp::params::VariableSource;
pub use registry::{ChangedTool, SHIPPED_PROFILE, ToolChanges, ToolSummary, registered_url};

/// ipybox's MCP client on its own: the connection `register` lists tools through and the
/// tool server calls tools through (stdio, Streamable HTTP, legacy SSE), with what it
/// answers a server that asks the person a question or reports progress.
pub mod mcp_client {
    pub use crate::elicitation::{
        AnswerError, Answered, CallRef, Elicitation, Question, REASON_META,
    };
    pub use crate::mcp::client::{McpConnection, connect, connect_with};
    pub use crate::mcp::handler::{Answer, Elicitor, Hooks, ServerLog, ToolProgress};
    pub use crate::question::form::{Choice, Field, Form, Kind as FieldKind, Problem, TextFormat};
}

/// Signing in to HTTP MCP servers that ask for OAuth: the browser step, where tokens are
/// kept, whether a server is signed in.
pub mod oauth {
    #[cfg(feature = "keyring")]
    pub use crate::mcp::oauth::KeyringTokenStore;
    pub use crate::mcp::oauth::{
        Authorizations, Browser, FileTokenStore, LOG_DIRECTIVE, SIGN_IN_TIMEOUT, Saved,
        SignInNeeded, SignInOptions, Status, StoreMaker, SystemBrowser, TokenStore, default_store,
        keep_tokens_with, sign_in_needed, step_up_scopes,
    };
}

// Approving tool calls, and the audit log.
pub use approval::{ProgramRequest, ProgramVerdict};
pub use audit::{AuditEntry, AuditLog, ElicitationEntry, WorkspaceState};
pub use tools::{
    ApprovalHandler, ApprovalRequest, ArgMatcher, AutoApprove, CallFacts, Decision, RejectAll,
    Rule, RuleDecision, RuleScope, Rules, RulesHandler, rule_would_match,
};

// Agents' calls approved in the desktop app (`ipybox mcp --approval desktop`).
pub use link::{DesktopApproval, LinkPaths, LinkServer};

// The sandbox.
pub use sandbox::access::{
    Access as SandboxAccess, Checker as SandboxChecker, Verdict as SandboxVerdict,
    report as sandbox_check_report, ways_out_text as policy_ways_out,
};
pub use sandbox::block::Block as SandboxBlock;
pub use sandbox::policy::{
    Review as PolicyReview, WORKSPACE_POLICY, accept as accept_workspace_policy,
    diff as policy_diff, review as review_workspace_policy, workspace_policy,
};
pub use sandbox::{
    PolicyProblem, SandboxOptions, SandboxPolicy, SessionPaths, Severity, ShippedProfile, Srt,
    shipped_profiles,
};

/// Setting up what sessions need: the kernels' Python environment, srt, the data directory.
pub mod setup {
    pub use crate::fsutil::make_private as protect_data_dir;
    pub use crate::home::ipybox_home;
    pub use crate::process::become_subreaper;
    pub use crate::pyenv::interpreter_of as kernel_interpreter;
    pub use crate::pyenv::resolve as python_env;
    pub use crate::pyenv::{
        Inspection as PythonInspection, PROJECT_VENV, PythonChoice, PythonChoices,
        create_project_env, env_prefix, inspect as inspect_python, install_ipykernel,
        label as python_label, project_python, venv_version_of,
    };
    pub use crate::sandbox::{check_node, check_tools, install_srt, install_srt_in, locate_srt};
}

/// MCP servers ipybox installs itself (PyPI, npm), for a person to add without a terminal.
pub mod server_catalog {
    pub use crate::catalog::{
        ENTRIES, Entry, Installed, Source, check_name, folder, install, params, resolve,
    };
}

/// ipybox itself as an MCP server (`ipybox mcp`).
pub mod server {
    pub use crate::mcp_server::{
        ActivityListener, AgentActivity, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT,
        FixedAddresses, HttpOptions, Listener, McpServerConfig, serve_http, serve_stdio,
    };
}

/// The desktop app (feature `desktop`).
#[cfg(feature = "desktop")]
pub mod app {
    /// PDF printed by the app's web engine (`ipybox export --to pdf`).
    #[cfg(target_os = "linux")]
    pub use crate::desktop::pdf::{PdfError, print_standalone as print_pdf};
    pub use crate::desktop::{Arrivals, Launch, prepare_environment, run};
    pub use crate::instance::{Claim, InstancePaths, Owner, Request, claim, send, send_to_any};
    pub use crate::workspace::{Recent, Target};
}

/// One line in words for an audit-log entry (`ipybox audit`).
pub use audit::describe as describe_audit_entry;
/// One line in words for a question a server asked (`ipybox audit`).
pub use audit::describe_elicitation;

/// Untrusted text (names, arguments, kernel output) as a person reads it; see
/// `docs/security.md`, "Text a person reads is the text that runs".
pub mod text {
    pub use crate::display::{TerminalFilter, escape, escape_lines};
}

/// `ipybox://add-server` links, which propose an MCP server for a person to confirm.
pub use server_link::{LinkError, ServerLink};

/// A notebook file as a page anyone can read without ipybox, or as a Python script
/// (`ipybox export`).
pub use export::{Notebook, NotebookError, to_html as export_html, to_python as export_python};

/// A fresh random secret (tokens for clients of `ipybox mcp`).
pub use auth::new_token;
