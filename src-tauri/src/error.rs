//! Errors of the engine: one enum a caller can match on, and a stable [`ErrorCode`] that a UI
//! switches on instead of parsing message text.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

/// A Python exception raised by executed code.
///
/// Mirrors Jupyter's [`error` message](https://jupyter-client.readthedocs.io/en/stable/messaging.html#execution-errors):
/// `ename`, `evalue` and the traceback, kept both ANSI-free (for text) and raw (for a UI that
/// renders colours).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PythonError {
    /// Exception class name, e.g. `ZeroDivisionError`.
    pub name: String,
    /// Exception value, e.g. `division by zero`.
    pub value: String,
    /// The traceback as plain text (ANSI escapes removed), lines joined by `\n`.
    pub traceback: String,
    /// The traceback lines as the kernel sent them, ANSI colours included.
    pub raw_traceback: Vec<String>,
}

impl std::fmt::Display for PythonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.name, self.value)?;
        if !self.traceback.is_empty() {
            write!(f, "\n{}", self.traceback)?;
        }
        Ok(())
    }
}

/// What an execution produced before it ended abnormally (raised, timed out, lost its kernel).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PartialOutput {
    /// Text printed or displayed before the failure, if any.
    pub text: Option<String>,
    /// Images saved before the failure.
    pub images: Vec<PathBuf>,
}

/// The error that caused an engine error, kept typed for programs that inspect it
/// ([`std::error::Error::source`], then `downcast_ref`). Its words are already part of the
/// engine error's message: print the error, not its chain.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Shows a cause after the message (`message: cause`), or nothing.
struct Caused<'a>(&'a Option<Cause>);

impl std::fmt::Display for Caused<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(cause) => write!(f, ": {cause}"),
            None => Ok(()),
        }
    }
}

/// Everything that can go wrong in the engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The code raised a Python exception. The kernel and its state are intact.
    #[error("{error}")]
    CodeExecution {
        /// The exception.
        error: Box<PythonError>,
        /// Output produced before the exception.
        output: Box<PartialOutput>,
    },
    /// The execution ran past its timeout. The kernel was interrupted; its state is kept
    /// (unless `kernel_restarted`, when the kernel ignored the interrupt and was replaced).
    #[error("execution timed out after {:.1} s{}", timeout.as_secs_f64(), if *kernel_restarted { "; the kernel did not respond to the interrupt and was replaced by a fresh one" } else { "; the kernel was interrupted and keeps its state" })]
    Timeout {
        /// The timeout that expired.
        timeout: Duration,
        /// Output produced before the timeout.
        output: Box<PartialOutput>,
        /// The kernel ignored the interrupt and had to be replaced.
        kernel_restarted: bool,
    },
    /// The kernel process died during the execution (crash, `os._exit`, out of memory). The
    /// next execution runs on a fresh kernel.
    #[error(
        "the kernel died while executing ({reason}); its state is lost and the next execution starts a fresh kernel"
    )]
    KernelDied {
        /// What was observed.
        reason: String,
        /// Output produced before the kernel died.
        output: Box<PartialOutput>,
    },
    /// The execution was cancelled (its stream cancelled or dropped, `interrupt()`, or the
    /// kernel reset or stopped under it). An interrupted kernel keeps its state.
    #[error("{reason}")]
    Cancelled {
        /// What ended it.
        reason: String,
        /// Output produced before it ended.
        output: Box<PartialOutput>,
    },
    /// The Kernel Gateway could not be started or reached.
    #[error("{}{}", message, Caused(source))]
    Gateway {
        /// What failed, in words.
        message: String,
        /// Why, when another error caused it.
        source: Option<Cause>,
    },
    /// The Kernel Gateway answered a request with an error.
    #[error("the Kernel Gateway answered {method} {path} with HTTP {status}: {body}")]
    GatewayHttp {
        /// HTTP method of the request.
        method: &'static str,
        /// Path of the request.
        path: String,
        /// HTTP status code.
        status: u16,
        /// Response body (truncated).
        body: String,
    },
    /// A kernel could not be started or initialised.
    #[error("{}{}", message, Caused(source))]
    KernelStart {
        /// What failed, in words.
        message: String,
        /// Why, when another error caused it.
        source: Option<Cause>,
    },
    /// The Python environment could not be found or provisioned.
    #[error("{}{}", message, Caused(source))]
    PythonEnv {
        /// What failed, in words.
        message: String,
        /// Why, when another error caused it.
        source: Option<Cause>,
    },
    /// An image the code displayed could not be decoded and was not saved.
    #[error("{}{}", message, Caused(source))]
    Image {
        /// What failed, in words.
        message: String,
        /// Why, when another error caused it.
        source: Option<Cause>,
    },
    /// The executor is not running (never started, or stopped).
    #[error("the executor is not running; call start() first")]
    NotRunning,
    /// An MCP server could not be started, reached or used.
    #[error("{}{}", message, Caused(source))]
    Mcp {
        /// What failed, in words.
        message: String,
        /// Why, when another error caused it.
        source: Option<Cause>,
    },
    /// Invalid configuration (builder or command line).
    #[error("{}{}", message, Caused(source))]
    Config {
        /// What failed, in words.
        message: String,
        /// Why, when another error caused it.
        source: Option<Cause>,
    },
    /// The sandbox cannot be set up (a missing tool, an invalid policy, a system that does
    /// not allow it). ipybox never falls back to running unsandboxed.
    #[error("{}{}", message, Caused(source))]
    Sandbox {
        /// What failed, in words.
        message: String,
        /// Why, when another error caused it.
        source: Option<Cause>,
    },
    /// An I/O error with the action that failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// Stable error codes for UIs and the MCP server: switch on these, never on message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[non_exhaustive]
pub enum ErrorCode {
    /// See [`Error::CodeExecution`].
    CodeExecutionError,
    /// See [`Error::Timeout`].
    Timeout,
    /// See [`Error::KernelDied`].
    KernelDied,
    /// See [`Error::Cancelled`].
    Cancelled,
    /// See [`Error::Gateway`] and [`Error::GatewayHttp`].
    GatewayError,
    /// See [`Error::KernelStart`].
    KernelStartFailed,
    /// See [`Error::PythonEnv`].
    PythonEnvError,
    /// See [`Error::Image`].
    ImageError,
    /// See [`Error::NotRunning`].
    NotRunning,
    /// See [`Error::Mcp`].
    McpError,
    /// See [`Error::Config`].
    InvalidConfig,
    /// See [`Error::Sandbox`].
    SandboxUnavailable,
    /// See [`Error::Io`].
    IoError,
    /// An [`Error::Mcp`] whose cause is an HTTP MCP server asking the person to sign in
    /// (again): the desktop's panel offers the sign-in. The engine's own reports say
    /// `McpError`; the window's boundary tells this one apart.
    SignInRequired,
    /// An answer to an MCP server's question was refused: it does not fit the form (the
    /// question still waits), or no such question waits (answered, or its call ended).
    InvalidAnswer,
}

impl Error {
    /// The stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::CodeExecution { .. } => ErrorCode::CodeExecutionError,
            Error::Timeout { .. } => ErrorCode::Timeout,
            Error::KernelDied { .. } => ErrorCode::KernelDied,
            Error::Cancelled { .. } => ErrorCode::Cancelled,
            Error::Gateway { .. } | Error::GatewayHttp { .. } => ErrorCode::GatewayError,
            Error::KernelStart { .. } => ErrorCode::KernelStartFailed,
            Error::PythonEnv { .. } => ErrorCode::PythonEnvError,
            Error::Image { .. } => ErrorCode::ImageError,
            Error::NotRunning => ErrorCode::NotRunning,
            Error::Mcp { .. } => ErrorCode::McpError,
            Error::Config { .. } => ErrorCode::InvalidConfig,
            Error::Sandbox { .. } => ErrorCode::SandboxUnavailable,
            Error::Io { .. } => ErrorCode::IoError,
        }
    }

    /// The same error again, for a second caller waiting on the one failure (a start asked
    /// for twice): the same variant and words, its cause folded into the message.
    pub(crate) fn again(&self) -> Error {
        let message = self.to_string();
        let output = |o: &PartialOutput| Box::new(o.clone());
        match self {
            Error::CodeExecution { error, output: o } => Error::CodeExecution {
                error: error.clone(),
                output: output(o),
            },
            Error::Timeout {
                timeout,
                output: o,
                kernel_restarted,
            } => Error::Timeout {
                timeout: *timeout,
                output: output(o),
                kernel_restarted: *kernel_restarted,
            },
            Error::KernelDied { reason, output: o } => Error::KernelDied {
                reason: reason.clone(),
                output: output(o),
            },
            Error::Cancelled { reason, output: o } => Error::Cancelled {
                reason: reason.clone(),
                output: output(o),
            },
            Error::GatewayHttp {
                method,
                path,
                status,
                body,
            } => Error::GatewayHttp {
                method,
                path: path.clone(),
                status: *status,
                body: body.clone(),
            },
            Error::NotRunning => Error::NotRunning,
            Error::Gateway { .. } => Error::Gateway {
                message,
                source: None,
            },
            Error::KernelStart { .. } => Error::KernelStart {
                message,
                source: None,
            },
            Error::PythonEnv { .. } => Error::PythonEnv {
                message,
                source: None,
            },
            Error::Image { .. } => Error::Image {
                message,
                source: None,
            },
            Error::Mcp { .. } => Error::Mcp {
                message,
                source: None,
            },
            Error::Config { .. } => Error::Config {
                message,
                source: None,
            },
            Error::Sandbox { .. } => Error::Sandbox {
                message,
                source: None,
            },
            Error::Io { context, source } => Error::Io {
                context: context.clone(),
                source: std::io::Error::new(source.kind(), source.to_string()),
            },
        }
    }

    /// Output produced before the failure, for errors that end an execution.
    pub fn partial_output(&self) -> Option<&PartialOutput> {
        match self {
            Error::CodeExecution { output, .. }
            | Error::Timeout { output, .. }
            | Error::KernelDied { output, .. }
            | Error::Cancelled { output, .. } => Some(output.as_ref()),
            _ => None,
        }
    }

    pub(crate) fn gateway(message: impl Into<String>) -> Self {
        Error::Gateway {
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn kernel_start(message: impl Into<String>) -> Self {
        Error::KernelStart {
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn python_env(message: impl Into<String>) -> Self {
        Error::PythonEnv {
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn mcp(message: impl Into<String>) -> Self {
        Error::Mcp {
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        Error::Config {
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn sandbox(message: impl Into<String>) -> Self {
        Error::Sandbox {
            message: message.into(),
            source: None,
        }
    }

    /// Keep `cause` as this error's source; its words follow the message. Errors without a
    /// place for a cause are returned unchanged.
    pub(crate) fn because(mut self, cause: impl Into<Cause>) -> Self {
        match &mut self {
            Error::Gateway { source, .. }
            | Error::KernelStart { source, .. }
            | Error::PythonEnv { source, .. }
            | Error::Image { source, .. }
            | Error::Mcp { source, .. }
            | Error::Config { source, .. }
            | Error::Sandbox { source, .. } => *source = Some(cause.into()),
            _ => {}
        }
        self
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

/// The `{ code, message }` form a UI or a JSON API receives.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorReport {
    /// Stable code.
    pub code: ErrorCode,
    /// Human-readable message.
    pub message: String,
}

impl From<&Error> for ErrorReport {
    fn from(e: &Error) -> Self {
        ErrorReport {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

/// Result alias of the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The `{code, message}` shape a UI receives, pinned: codes are stable identifiers.
    #[test]
    fn reports_keep_their_shape() {
        let errors = vec![
            Error::CodeExecution {
                error: Box::new(PythonError {
                    name: "ZeroDivisionError".into(),
                    value: "division by zero".into(),
                    traceback: String::new(),
                    raw_traceback: Vec::new(),
                }),
                output: Box::default(),
            },
            Error::Timeout {
                timeout: Duration::from_secs(2),
                output: Box::default(),
                kernel_restarted: false,
            },
            Error::KernelDied {
                reason: "killed".into(),
                output: Box::default(),
            },
            Error::Cancelled {
                reason: "the kernel was reset".into(),
                output: Box::default(),
            },
            Error::NotRunning,
            Error::sandbox("srt is missing"),
            Error::mcp("the server exited"),
            Error::config("bad"),
            Error::gateway("cannot connect to the Kernel Gateway").because(std::io::Error::new(
                std::io::ErrorKind::ConnectionRefused,
                "refused",
            )),
            Error::io("reading x", std::io::Error::other("disk")),
        ];
        let reports: Vec<serde_json::Value> = errors
            .iter()
            .map(|e| serde_json::to_value(ErrorReport::from(e)).expect("serializes"))
            .collect();
        assert_eq!(
            serde_json::Value::Array(reports),
            serde_json::json!([
                {"code": "CodeExecutionError", "message": "ZeroDivisionError: division by zero"},
                {"code": "Timeout", "message": "execution timed out after 2.0 s; the kernel was interrupted and keeps its state"},
                {"code": "KernelDied", "message": "the kernel died while executing (killed); its state is lost and the next execution starts a fresh kernel"},
                {"code": "Cancelled", "message": "the kernel was reset"},
                {"code": "NotRunning", "message": "the executor is not running; call start() first"},
                {"code": "SandboxUnavailable", "message": "srt is missing"},
                {"code": "McpError", "message": "the server exited"},
                {"code": "InvalidConfig", "message": "bad"},
                {"code": "GatewayError", "message": "cannot connect to the Kernel Gateway: refused"},
                {"code": "IoError", "message": "reading x: disk"},
            ])
        );
        let cause = std::error::Error::source(&errors[8]).expect("a cause is kept");
        assert_eq!(
            cause
                .downcast_ref::<std::io::Error>()
                .map(std::io::Error::kind),
            Some(std::io::ErrorKind::ConnectionRefused),
            "typed, not flattened to text"
        );
        assert!(
            std::error::Error::source(&errors[9]).is_some(),
            "an I/O error keeps its cause"
        );
    }
}
