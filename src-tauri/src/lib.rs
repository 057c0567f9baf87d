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
//! From the top down; a module uses only those below it.
//!
//! - `desktop` (feature `desktop`) — the Tauri app: commands of a few lines over the
//!   executor, the notebook window, native approval dialogs; [`workspace`] — what it opens
//!   and saves.
//! - [`executor`] — the public [`CodeExecutor`]: a handle to one actor task
//!   (`executor/actor.rs`) that owns the session's hosts (`executor/host.rs`: a gateway, its
//!   tool-server listener, its kernels; with a sandbox one per kernel) and runs executions
//!   (`executor/execution.rs`) whose outputs a notebook renders (`executor/output.rs`).
//! - [`mcp_server`] — ipybox itself as an MCP server (`ipybox mcp`).
//! - [`events`] — what happens to a session, for every listener.
//! - [`tools`] — the tool server kernels call, approvals, rules, MCP sessions.
//! - [`apigen`] — MCP tool schemas → typed Python modules; [`registry`] — the servers of a
//!   workspace.
//! - [`mcp`] — the MCP client (stdio, Streamable HTTP, SSE) and server parameters.
//! - [`kernel`] — the Kernel Gateway process, its REST/WebSocket API, typed Jupyter
//!   messages, one kernel session, output collection.
//! - [`sandbox`] — srt: policies (typed and rendered), the network-namespace helper, write
//!   guards in the workspace.
//! - [`pyenv`] — the kernels' Python environment; [`process`] — child processes that never
//!   outlive ipybox; [`error`] — one error type with stable codes.

pub mod apigen;
pub mod audit;
#[cfg(feature = "desktop")]
pub mod desktop;
pub mod error;
pub mod events;
pub mod executor;
mod fsutil;
pub mod home;
pub mod kernel;
pub mod mcp;
pub mod mcp_server;
pub mod process;
pub mod pyenv;
pub mod registry;
pub mod sandbox;
pub mod tools;
pub mod workspace;

pub use apigen::generate::{Generated, generate_mcp_sources};
pub use error::{Error, ErrorCode, ErrorReport, PartialOutput, PythonError, Result};
pub use events::{CallDecision, CallOutcome, DecidedBy, SessionEvent};
pub use executor::{
    CancelHandle, CodeExecutionResult, CodeExecutor, CodeExecutorBuilder, DEFAULT_TIMEOUT, Event,
    ExecutionStream, InputRequest, MimeBundle, Output, RegisteredServer, StreamName, StreamOptions,
};
pub use mcp::ServerParams;
pub use registry::ToolSummary;
pub use sandbox::{PolicyProblem, SandboxOptions, SandboxPolicy, shipped_profiles};
pub use tools::{ApprovalHandler, ApprovalRequest, Decision};
