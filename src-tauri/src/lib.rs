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

pub mod apigen;
pub mod error;
pub mod events;
pub mod executor;
mod fsutil;
pub mod kernel;
pub mod mcp;
pub mod mcp_server;
pub mod process;
pub mod pyenv;
pub mod registry;
pub mod sandbox;
pub mod tools;

pub use apigen::generate::{Generated, generate_mcp_sources};
pub use error::{Error, ErrorCode, ErrorReport, PartialOutput, PythonError, Result};
pub use events::{CallDecision, CallOutcome, SessionEvent};
pub use executor::{
    CodeExecutionResult, CodeExecutor, CodeExecutorBuilder, DEFAULT_TIMEOUT, Event,
    ExecutionStream, InputRequest, MimeBundle, Output, RegisteredServer, StreamName, StreamOptions,
};
pub use mcp::ServerParams;
pub use registry::ToolSummary;
pub use sandbox::{PolicyProblem, SandboxOptions, SandboxPolicy, shipped_profiles};
pub use tools::{ApprovalHandler, ApprovalRequest, Decision};
