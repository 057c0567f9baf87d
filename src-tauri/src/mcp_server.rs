//! ipybox as an MCP server (`ipybox mcp`): agents such as Claude Code register MCP servers and
//! run Python in a stateful kernel whose code calls those servers' tools through the
//! generated API.
//!
//! A drop-in for the Python ipybox's MCP server: the same tools, parameters and defaults, and
//! the same results where a program can see them — `register_mcp_server` answers with the
//! generated module names (one text block each), `execute_ipython_cell` with the output text
//! (empty when there is none, truncated with the same marker), failures as tool errors
//! reading `Error executing tool <name>: <what happened>`, `reset` with no content. Ours adds
//! blocks after the first, never changes it: the images themselves, the output a failed
//! execution printed before it failed.
//!
//! Over stdio there is one session. Over Streamable HTTP each MCP session gets an executor
//! of its own (kernel, tool server, approvals), started on `initialize` and stopped when the
//! session ends or idles out; the workspace (`mcptools/`, the registry, installed packages)
//! is shared.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/tools>. Failures of
//! the code (exceptions, timeouts) are tool results flagged `isError`, not protocol faults.
//! Who approves the tool calls the code makes is an [`ApprovalHandler`] (approve all, or
//! rules); the desktop app plugs in its dialog the same way.
//!
//! `pool.rs` holds the workspace the sessions share and the sessions themselves,
//! `handler.rs` the tools, `params.rs` their parameters, `transport.rs` stdio and HTTP.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::tools::ApprovalHandler;

mod activity;
mod handler;
mod params;
mod pool;
mod transport;

pub use activity::{ActivityListener, AgentActivity};
pub use handler::IpyboxMcpServer;
pub use pool::SessionControl;
pub use transport::{serve_http, serve_stdio};

/// Prefix of environment variables passed to the kernel (without the prefix).
pub const KERNEL_ENV_PREFIX: &str = "KERNEL_ENV_";

/// Sessions served at once over HTTP unless told otherwise; each has a kernel, a spare
/// kernel and a gateway.
pub const DEFAULT_MAX_SESSIONS: usize = 8;

/// An HTTP session without a tool call for this long ends and its kernel stops, unless told
/// otherwise. Long enough for a person to think between prompts; short enough that kernels
/// of clients that went away without ending their session do not pile up.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// The address the Python ipybox lets you fix (`--kernel-gateway-host/-port`). It applies
/// to the one session of a stdio server without a sandbox only: HTTP sessions and sandboxes
/// each have their own gateway. (Its `--tool-server-host/-port` have no counterpart: kernels
/// ask for tool calls over their own Jupyter channel, with no port to fix.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FixedAddresses {
    /// Where the Kernel Gateway listens (port 0: a free one).
    pub gateway: Option<SocketAddr>,
}

/// How `ipybox mcp` is set up.
#[derive(Debug, Clone)]
pub struct McpServerConfig {
    /// The workspace: the kernel's working directory, home of `mcptools/` and `.env`;
    /// created if missing.
    pub workspace: PathBuf,
    /// Decides the tool calls made by executed code.
    pub approval: Arc<dyn ApprovalHandler>,
    /// An existing Python environment instead of the managed one.
    pub python: Option<PathBuf>,
    /// Run the kernel in a sandbox. `install_package` then installs wheels only, so that no
    /// package build script runs on the host.
    pub sandbox: Option<crate::sandbox::SandboxOptions>,
    /// The Kernel Gateway's log level (`DEBUG`, `INFO`, `WARN`, `ERROR`, `CRITICAL`);
    /// `None` keeps the executor's default.
    pub gateway_log_level: Option<String>,
    /// Fixed addresses for a stdio server's gateway.
    pub fixed: FixedAddresses,
    /// Run every session's kernel on this server instead of a gateway ipybox starts.
    pub gateway: Option<crate::executor::RemoteGateway>,
    /// Hears every event of every session's kernel (an audit log).
    pub listener: Option<Listener>,
    /// Hears the cells every session runs, with their output (a window showing them).
    pub activity: Option<ActivityListener>,
    /// How long a tool call waits for its approval (`None`: the executor's default). An
    /// approval handler that asks elsewhere, under a timeout of its own, wants it long.
    pub approval_timeout: Option<Duration>,
}

/// A function that hears session events.
#[derive(Clone)]
pub struct Listener(pub Arc<dyn Fn(crate::events::SessionEvent) + Send + Sync>);

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Listener")
    }
}

/// Options of [`serve_http`].
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Clients must send `Authorization: Bearer <token>` (`None`: no token).
    pub token: Option<String>,
    /// Sessions served at once; `initialize` past it is refused with an error saying so.
    pub max_sessions: usize,
    /// End a session (and stop its kernel) after this long without a tool call; `None`:
    /// never.
    pub idle_timeout: Option<Duration>,
    /// Ends sessions on request (an agent's tab closed in the window) once serving.
    pub control: Option<SessionControl>,
    /// `Host` names answered besides loopback ones and the bound address (`name` or
    /// `name:port`): those clients reach the server by through a proxy or a container's
    /// published port.
    pub allowed_hosts: Vec<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            token: None,
            max_sessions: DEFAULT_MAX_SESSIONS,
            idle_timeout: Some(DEFAULT_SESSION_IDLE_TIMEOUT),
            control: None,
            allowed_hosts: Vec::new(),
        }
    }
}
