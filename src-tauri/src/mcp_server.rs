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

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use base64::Engine;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, ErrorData,
    InitializeRequestParams, InitializeResult, ProtocolVersion,
};
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::transport::streamable_http_server::session::SessionId;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{RoleServer, ServerHandler, tool, tool_handler, tool_router};
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::executor::CodeExecutor;
use crate::mcp::ServerParams;
use crate::mcp::params::Variables;
use crate::tools::ApprovalHandler;

mod activity;

pub use activity::{ActivityListener, AgentActivity};

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

/// Ends the sessions of a running HTTP server from outside it: the app's window closes an
/// agent's tab.
#[derive(Debug, Clone, Default)]
pub struct SessionControl(Arc<Mutex<std::sync::Weak<Pool>>>);

impl SessionControl {
    /// End session `serial` (as [`AgentActivity`] numbers it) and stop its kernel; its
    /// client is told the session is gone. `false` when no such session runs.
    pub async fn end(&self, serial: u64, why: &str) -> bool {
        let Some(pool) = self.0.lock().ok().and_then(|p| p.upgrade()) else {
            return false;
        };
        let session = pool
            .sessions
            .lock()
            .ok()
            .and_then(|s| s.iter().find(|s| s.serial == serial).cloned());
        let Some(session) = session else {
            return false;
        };
        let ended = pool.end(&session, why.to_owned());
        if ended && let Some(id) = session.mcp_id() {
            use rmcp::transport::streamable_http_server::session::SessionManager;
            if let Err(e) = pool.manager.close_session(&id).await {
                tracing::warn!(error = %e, "closing an ended MCP session failed");
            }
        }
        ended
    }
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

/// What all sessions of one server share: the workspace and how a session's executor is
/// built.
#[derive(Debug)]
struct Workspace {
    config: McpServerConfig,
    kernel_env: BTreeMap<String, String>,
    /// Counts registrations, so that every session's tool server learns a server registered
    /// in another session before it runs code again.
    registrations: AtomicU64,
    tool_router: ToolRouter<IpyboxMcpServer>,
}

impl Workspace {
    fn open(mut config: McpServerConfig) -> Result<Arc<Self>> {
        // As the Python ipybox does: a configuration may name a workspace not made yet.
        std::fs::create_dir_all(&config.workspace).map_err(|e| {
            Error::config(format!(
                "the workspace {} cannot be created: {e}",
                config.workspace.display()
            ))
        })?;
        config.workspace = std::fs::canonicalize(&config.workspace).map_err(|e| {
            Error::config(format!(
                "the workspace {} is not usable: {e}",
                config.workspace.display()
            ))
        })?;
        let vars = Variables::load(Some(&config.workspace))?;
        let kernel_env = vars
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix(KERNEL_ENV_PREFIX)
                    .filter(|k| !k.is_empty())
                    .map(|k| (k.to_owned(), v.to_owned()))
            })
            .collect();
        Ok(Arc::new(Workspace {
            config,
            kernel_env,
            registrations: AtomicU64::new(0),
            tool_router: IpyboxMcpServer::tool_router(),
        }))
    }

    /// A session's executor, not started; `fixed`: on the fixed addresses (the one session
    /// of a stdio server).
    fn executor(&self, fixed: bool) -> Result<CodeExecutor> {
        let c = &self.config;
        let mut builder = CodeExecutor::builder()
            .working_dir(&c.workspace)
            .kernel_env(self.kernel_env.clone())
            .approval_handler(c.approval.clone())
            .sandbox_options(c.sandbox.clone())
            .show_progress(true);
        if let Some(p) = &c.python {
            builder = builder.python(p);
        }
        if let Some(t) = c.approval_timeout {
            builder = builder.approval_timeout(t);
        }
        if let Some(gateway) = &c.gateway {
            builder = builder.remote_gateway(gateway);
        }
        if let Some(level) = &c.gateway_log_level {
            builder = builder.log_level(level);
        }
        if fixed && let Some(addr) = c.fixed.gateway {
            if addr.port() != 0 {
                // The gateway binds later, in the background: say now that it cannot.
                std::net::TcpListener::bind(addr).map_err(|e| {
                    Error::config(format!(
                        "the Kernel Gateway cannot listen on {addr} (--kernel-gateway-host/--kernel-gateway-port): {e}"
                    ))
                })?;
                builder = builder.gateway_port(addr.port());
            }
            builder = builder.gateway_host(addr.ip().to_string());
        }
        let executor = builder.build();
        if let Some(Listener(listener)) = c.listener.clone() {
            let mut events = executor.subscribe();
            tokio::spawn(async move {
                use tokio::sync::broadcast::error::RecvError;
                loop {
                    match events.recv().await {
                        Ok(event) => listener(event),
                        Err(RecvError::Lagged(n)) => {
                            tracing::warn!(missed = n, "a session-event listener fell behind");
                        }
                        Err(RecvError::Closed) => break,
                    }
                }
            });
        }
        Ok(executor)
    }
}

/// One MCP session's kernel.
#[derive(Debug)]
struct Session {
    /// Numbers sessions for [`AgentActivity`].
    serial: u64,
    executor: CodeExecutor,
    /// [`Workspace::registrations`] as this session's tool server knows them.
    synced: AtomicU64,
    activity: Mutex<Activity>,
    /// The Streamable HTTP session id, learned from the client's first request after
    /// `initialize` (the id is made after the handler answers it).
    mcp_id: Mutex<Option<SessionId>>,
    /// Why the session ended, once it has; its executor is then stopped.
    ended: Mutex<Option<String>>,
    /// The MCP client as it declared itself on `initialize`.
    client: Mutex<Option<crate::definition::Client>>,
}

#[derive(Debug)]
struct Activity {
    last: Instant,
    in_flight: usize,
}

/// Marks a session busy while a tool call runs; idle time counts from the end of the last.
struct Busy<'a>(&'a Session);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        if let Ok(mut a) = self.0.activity.lock() {
            a.in_flight = a.in_flight.saturating_sub(1);
            a.last = Instant::now();
        }
    }
}

impl Session {
    /// A session whose executor starts in the background right away: by the first tool call
    /// the kernel is (nearly) ready.
    fn start(executor: CodeExecutor) -> Arc<Self> {
        let background = executor.clone();
        tokio::spawn(async move {
            if let Err(e) = background.start().await {
                tracing::error!(error = %e, "starting the kernel failed; the next call retries");
            }
        });
        static SERIAL: AtomicU64 = AtomicU64::new(1);
        Arc::new(Session {
            serial: SERIAL.fetch_add(1, Ordering::Relaxed),
            executor,
            synced: AtomicU64::new(0),
            activity: Mutex::new(Activity {
                last: Instant::now(),
                in_flight: 0,
            }),
            mcp_id: Mutex::new(None),
            ended: Mutex::new(None),
            client: Mutex::new(None),
        })
    }

    fn busy(&self) -> Busy<'_> {
        if let Ok(mut a) = self.activity.lock() {
            a.in_flight += 1;
        }
        Busy(self)
    }

    /// How long the session has been without a tool call (`None` while one runs).
    fn idle_for(&self) -> Option<Duration> {
        let a = self.activity.lock().ok()?;
        (a.in_flight == 0).then(|| a.last.elapsed())
    }

    fn ended(&self) -> Option<String> {
        self.ended.lock().ok().and_then(|e| e.clone())
    }

    /// Where this session's code comes from, in words: "agent session 4f2a9c1e" over
    /// Streamable HTTP, "agent" over stdio.
    fn origin(&self) -> String {
        match self.mcp_id() {
            Some(id) => format!("agent session {}", id.chars().take(8).collect::<String>()),
            None => "agent".to_owned(),
        }
    }

    /// The client connected (`initialize`) or learned its session id: approval requests and
    /// the audit log name it ("claude-code 2.1, session 4f2a9c1e, connected at …").
    fn set_client(&self, info: Option<&rmcp::model::Implementation>) {
        let Ok(mut client) = self.client.lock() else {
            return;
        };
        let session = match self.mcp_id() {
            Some(id) => id.chars().take(8).collect(),
            None => format!("{}", self.serial),
        };
        let updated = match (info, client.take()) {
            (Some(info), _) => crate::definition::Client {
                name: info.name.chars().take(100).collect(),
                version: Some(info.version.chars().take(40).collect::<String>())
                    .filter(|v| !v.is_empty()),
                session,
                connected_at_ms: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or_default(),
            },
            (None, Some(known)) => crate::definition::Client { session, ..known },
            (None, None) => return,
        };
        self.executor.set_client(updated.clone());
        *client = Some(updated);
    }

    fn mcp_id(&self) -> Option<SessionId> {
        self.mcp_id.lock().ok().and_then(|id| id.clone())
    }

    /// Start the executor now if it is not running, and let its tool server know the
    /// servers registered since it last looked.
    async fn ready(&self, workspace: &Workspace) -> std::result::Result<(), String> {
        self.executor
            .start()
            .await
            .map_err(|e| format!("the kernel could not start: {e}"))?;
        let registered = workspace.registrations.load(Ordering::Acquire);
        if self.synced.load(Ordering::Acquire) < registered {
            self.executor
                .reload_registry()
                .map_err(|e| format!("reading the workspace's registered MCP servers: {e}"))?;
            self.synced.fetch_max(registered, Ordering::AcqRel);
        }
        Ok(())
    }
}

/// The sessions of an HTTP server.
#[derive(Debug)]
struct Pool {
    workspace: Arc<Workspace>,
    max: usize,
    sessions: Mutex<Vec<Arc<Session>>>,
    /// Executors being stopped, so that shutting down waits for them.
    stopping: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    manager: Arc<LocalSessionManager>,
}

impl Pool {
    /// A session for a client's `initialize`, unless `max` are running.
    fn open(&self) -> std::result::Result<Arc<Session>, ErrorData> {
        let mut sessions = self
            .sessions
            .lock()
            .map_err(|_| ErrorData::internal_error("the session table is unusable", None))?;
        if sessions.len() >= self.max {
            return Err(ErrorData::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "ipybox is already serving its maximum of {max} sessions (--max-sessions {max}), each with a kernel of its own; end a session, let one idle out, or restart ipybox mcp with a higher --max-sessions",
                    max = self.max
                ),
                Some(serde_json::json!({"maxSessions": self.max})),
            ));
        }
        let executor = self
            .workspace
            .executor(false)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let session = Session::start(executor);
        sessions.push(session.clone());
        tracing::info!(sessions = sessions.len(), "MCP session started");
        Ok(session)
    }

    /// End `session` (once): it leaves the pool and its executor stops in the background.
    /// Returns whether it was still running.
    fn end(&self, session: &Arc<Session>, why: String) -> bool {
        let removed = self.sessions.lock().is_ok_and(|mut s| {
            let before = s.len();
            s.retain(|other| !Arc::ptr_eq(other, session));
            s.len() < before
        });
        if !removed {
            return false;
        }
        tracing::info!(reason = %why, "MCP session ended; stopping its kernel");
        if let Some(activity) = &self.workspace.config.activity {
            activity.tell(AgentActivity::SessionEnded {
                session: session.serial,
                reason: why.clone(),
            });
        }
        if let Ok(mut ended) = session.ended.lock() {
            *ended = Some(why);
        }
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let executor = session.executor.clone();
            let task = handle.spawn(async move {
                if let Err(e) = executor.stop().await {
                    tracing::warn!(error = %e, "stopping a session's kernel failed");
                }
            });
            if let Ok(mut stopping) = self.stopping.lock() {
                stopping.retain(|t| !t.is_finished());
                stopping.push(task);
            }
        }
        true
    }

    /// End sessions idle for `idle`, and their MCP sessions with them: the client is told
    /// (`404`) rather than finding a fresh kernel where its variables were.
    async fn reap(self: Arc<Self>, idle: Duration) {
        let period = (idle / 4).clamp(Duration::from_millis(250), Duration::from_secs(30));
        loop {
            tokio::time::sleep(period).await;
            let expired: Vec<Arc<Session>> = self
                .sessions
                .lock()
                .map(|s| {
                    s.iter()
                        .filter(|s| s.idle_for().is_some_and(|t| t >= idle))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            for session in expired {
                let why = format!(
                    "it had no tool call for {} s (--session-idle-timeout)",
                    idle.as_secs()
                );
                if self.end(&session, why)
                    && let Some(id) = session.mcp_id()
                {
                    use rmcp::transport::streamable_http_server::session::SessionManager;
                    if let Err(e) = self.manager.close_session(&id).await {
                        tracing::warn!(error = %e, "closing an idle MCP session failed");
                    }
                }
            }
        }
    }

    /// Stop every session's executor and wait for them all.
    async fn stop_all(&self) {
        let sessions: Vec<Arc<Session>> =
            self.sessions.lock().map(|s| s.clone()).unwrap_or_default();
        for session in &sessions {
            self.end(session, "ipybox is shutting down".into());
        }
        let stopping: Vec<_> = self
            .stopping
            .lock()
            .map(|mut s| s.drain(..).collect())
            .unwrap_or_default();
        for task in stopping {
            let _ = task.await;
        }
    }
}

/// A server's hold on its session: set from the start (stdio) or on `initialize` (HTTP),
/// ended when the MCP session's handler is dropped.
#[derive(Debug, Default)]
struct Slot {
    session: OnceLock<Arc<Session>>,
    pool: Option<Arc<Pool>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let (Some(pool), Some(session)) = (&self.pool, self.session.get()) {
            pool.end(session, "the client ended the MCP session".into());
        }
    }
}

/// The tools of ipybox's MCP server (the Python ipybox's four, and two for code actions),
/// for one MCP session.
#[derive(Debug, Clone)]
pub struct IpyboxMcpServer {
    workspace: Arc<Workspace>,
    slot: Arc<Slot>,
    tool_router: ToolRouter<Self>,
}

// Descriptions are attributes, not doc comments: those would keep their line breaks.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = standard_json_schema)]
struct RegisterParams {
    #[schemars(
        description = "Package name for the server's API, mcptools.<server_name>: a valid Python identifier (letters, digits and underscores, no leading digit)."
    )]
    server_name: String,
    #[schemars(
        description = "Server config. Stdio: {\"command\", \"args\", \"env\", \"cwd\"}; HTTP: {\"url\", \"headers\"}; optional \"type\": \"stdio\" | \"streamable_http\" | \"sse\". ${VAR} placeholders are replaced from the environment and the workspace's .env."
    )]
    server_params: serde_json::Map<String, serde_json::Value>,
}

fn default_timeout() -> f64 {
    120.0
}

fn default_max_output_chars() -> usize {
    5000
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = standard_json_schema)]
struct ExecuteParams {
    #[schemars(description = "Python code to execute in the IPython kernel.")]
    code: String,
    #[schemars(
        description = "Maximum execution time in seconds before the kernel is interrupted (it keeps its state). Time spent waiting for a tool call's approval does not count."
    )]
    #[serde(default = "default_timeout")]
    timeout: f64,
    #[schemars(
        description = "Maximum number of characters of output to return (longer output is truncated)."
    )]
    #[serde(default = "default_max_output_chars")]
    max_output_chars: usize,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = standard_json_schema)]
struct InstallParams {
    #[schemars(
        description = "Package spec: a name, name==version or another specifier (numpy>=1.20.0), or a git+https://... URL."
    )]
    package_name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = standard_json_schema)]
struct ListToolsParams {
    #[schemars(
        description = "Only this MCP server's tools (a registered server name) or this category of saved code actions; omit for everything."
    )]
    #[serde(default)]
    server: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = standard_json_schema)]
struct CodeActionParameter {
    #[schemars(description = "A Python identifier.")]
    name: String,
    #[schemars(
        description = "A Python type annotation: str, int, list[str], dict[str, float] | None, or the name of a model defined in `models`. Default: object."
    )]
    #[serde(rename = "type", default)]
    ty: Option<String>,
    #[schemars(description = "What the parameter is (goes into the docstring).")]
    #[serde(default)]
    description: Option<String>,
    #[schemars(
        description = "Its default value as JSON (null means None); omit for a required parameter."
    )]
    #[serde(default, deserialize_with = "present")]
    default: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = standard_json_schema)]
struct CodeActionReturns {
    #[schemars(description = "A Python type annotation (default: object).")]
    #[serde(rename = "type", default)]
    ty: Option<String>,
    #[schemars(description = "What it returns (goes into the docstring).")]
    #[serde(default)]
    description: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = standard_json_schema)]
struct SaveCodeActionParams {
    #[schemars(
        description = "The tool's name, a Python identifier: it becomes gentools.<category>.<name>."
    )]
    name: String,
    #[schemars(description = "Its category, a Python identifier (a group of related tools).")]
    category: String,
    #[schemars(
        description = "What the tool does: a one-line summary, then details if needed. Becomes run()'s docstring."
    )]
    description: String,
    #[schemars(description = "The parameters of run(), in order (those with a default last).")]
    #[serde(default)]
    parameters: Vec<CodeActionParameter>,
    #[schemars(description = "What run() returns.")]
    #[serde(default)]
    returns: Option<CodeActionReturns>,
    #[schemars(
        description = "Python source of pydantic models (BaseModel and Field are imported) that the annotations use; goes into api.py."
    )]
    #[serde(default)]
    models: Option<String>,
    #[schemars(
        description = "The implementation: Python statements forming the body of a function whose arguments are the parameters; it must `return` the result. Imports go inside it; generated MCP tools are imported as in a cell (from mcptools.<server>.<tool> import Params, run)."
    )]
    code: String,
}

/// `"default": null` means "defaults to None", not "no default".
fn present<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(d).map(Some)
}

impl From<SaveCodeActionParams> for crate::apigen::codeaction::CodeAction {
    fn from(p: SaveCodeActionParams) -> Self {
        use crate::apigen::codeaction::{Parameter, Returns};
        let any = || "object".to_owned();
        crate::apigen::codeaction::CodeAction {
            name: p.name,
            category: p.category,
            description: p.description,
            parameters: p
                .parameters
                .into_iter()
                .map(|q| Parameter {
                    name: q.name,
                    ty: q.ty.unwrap_or_else(any),
                    description: q.description,
                    default: q.default,
                })
                .collect(),
            returns: p.returns.map(|r| Returns {
                ty: r.ty.unwrap_or_else(any),
                description: r.description,
            }),
            models: p.models,
            code: p.code,
        }
    }
}

/// What `list_tools` says: every registered server's tools with their interfaces, then every
/// saved code action's `api.py`; `only` narrows it to one server or category.
fn tool_listing(workspace: &std::path::Path, only: Option<&str>) -> Result<String> {
    use std::fmt::Write as _;
    let registry = crate::registry::Registry::load(&crate::home::ipybox_home()?, workspace)?;
    let mut out = String::new();
    let mut servers = 0;
    for (server, tools) in &registry.tools {
        if only.is_some_and(|o| o != server) {
            continue;
        }
        servers += 1;
        let _ = writeln!(
            out,
            "## MCP server {server}: mcptools.{server}
"
        );
        for t in tools {
            let _ = writeln!(
                out,
                "### mcptools.{server}.{module} (tool \"{tool}\")\n",
                module = t.module,
                tool = t.tool
            );
            match (&t.interface, &t.description) {
                (Some(interface), _) => {
                    let _ = writeln!(out, "```python\n{}\n```\n", interface.trim_end());
                }
                (None, Some(d)) => {
                    let _ = writeln!(
                        out,
                        "{d}\n(read mcptools/{server}/{}.py for its parameters)\n",
                        t.module
                    );
                }
                (None, None) => {
                    let _ = writeln!(out, "(read mcptools/{server}/{}.py)\n", t.module);
                }
            }
        }
    }
    let actions = crate::apigen::codeaction::interfaces(workspace, only);
    for (module, api) in &actions {
        let _ = writeln!(
            out,
            "## saved code action {module}\n\n```python\n{}\n```\n",
            api.trim_end()
        );
    }
    if servers == 0 && actions.is_empty() {
        return Ok(match only {
            Some(o) => format!(
                "no registered MCP server and no category of saved code actions is called {o:?}"
            ),
            None => "no MCP server is registered and no code action is saved yet: register a server with register_mcp_server, or save working code with save_code_action".into(),
        });
    }
    Ok(out.trim_end().to_owned())
}

/// Keep parameter schemas to standard JSON Schema, as the Python ipybox's are: schemars
/// marks Rust number types with formats no JSON Schema validator knows (`uint`, `double`),
/// and writes a whole-number float default as `120.0`.
fn standard_json_schema(schema: &mut schemars::Schema) {
    let Some(properties) = schema
        .get_mut("properties")
        .and_then(serde_json::Value::as_object_mut)
    else {
        return;
    };
    for property in properties.values_mut() {
        let Some(property) = property.as_object_mut() else {
            continue;
        };
        property.remove("format");
        if let Some(whole) = property
            .get("default")
            .and_then(serde_json::Value::as_f64)
            .filter(|d| d.fract() == 0.0 && d.abs() < 1e15)
        {
            #[allow(clippy::cast_possible_truncation)]
            property.insert("default".into(), serde_json::json!(whole as i64));
        }
    }
}

/// A failed tool call, worded as the Python ipybox's (FastMCP's) are: a program that reads
/// `Error executing tool <name>: ` finds it here too.
fn failure(tool: &str, message: impl std::fmt::Display) -> CallToolResult {
    failure_with(tool, message, Vec::new())
}

/// A failed tool call with `more` content after the first block.
fn failure_with(
    tool: &str,
    message: impl std::fmt::Display,
    more: Vec<ContentBlock>,
) -> CallToolResult {
    let mut content = vec![ContentBlock::text(format!(
        "Error executing tool {tool}: {message}"
    ))];
    content.extend(more);
    CallToolResult::error(content)
}

/// Cut `text` to at most `max` characters, marked as the Python ipybox marks it.
fn truncate_output(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => format!(
            "{}\n\n[Output truncated: exceeded {max} character limit]",
            &text[..cut]
        ),
    }
}

/// Run `code`, collecting its text as the Python ipybox does: what it printed and the
/// `text/plain` of what it displayed (images' too), in order, stripped. The engine's own
/// text leaves an image's `text/plain` out.
async fn run_cell(
    session: &Session,
    code: &str,
    timeout: Option<Duration>,
    activity: Option<&ActivityListener>,
) -> (String, Result<crate::executor::CodeExecutionResult>) {
    use crate::executor::{Event, Output, StreamOptions};
    use futures_util::StreamExt;
    let origin = session.origin();
    let mut stream = session.executor.stream(
        code,
        StreamOptions {
            timeout,
            outputs: true,
            input: false,
            origin: Some(origin.clone()),
            ..Default::default()
        },
    );
    let execution_id = stream.id().to_owned();
    let tell = |what: AgentActivity| {
        if let Some(listener) = activity {
            listener.tell(what);
        }
    };
    tell(AgentActivity::CellQueued {
        session: session.serial,
        name: origin,
        execution_id: execution_id.clone(),
        code: code.to_owned(),
    });
    let mut text = String::new();
    let mut outcome = Err(Error::KernelDied {
        reason: "the execution ended without a result".into(),
        output: Box::default(),
    });
    while let Some(event) = stream.next().await {
        match &event {
            Ok(Event::Started { execution_count }) => tell(AgentActivity::CellStarted {
                session: session.serial,
                execution_id: execution_id.clone(),
                execution_count: *execution_count,
            }),
            Ok(Event::Output(output)) => tell(AgentActivity::CellOutput {
                session: session.serial,
                execution_id: execution_id.clone(),
                output: output.clone(),
            }),
            _ => {}
        }
        match event {
            Ok(Event::Output(Output::Stream { text: t, .. })) => text.push_str(&t),
            Ok(Event::Output(
                Output::DisplayData { data, .. } | Output::ExecuteResult { data, .. },
            )) => match data.get("text/plain") {
                Some(serde_json::Value::String(plain)) => text.push_str(plain),
                Some(serde_json::Value::Array(lines)) => {
                    text.extend(lines.iter().filter_map(serde_json::Value::as_str));
                }
                _ => {}
            },
            Ok(Event::Result(result)) => {
                outcome = Ok(result);
                break;
            }
            Ok(_) => {}
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
    }
    tell(AgentActivity::CellFinished {
        session: session.serial,
        execution_id,
        error: match &outcome {
            Ok(_) | Err(Error::CodeExecution { .. }) => None,
            Err(e) => Some(e.to_string()),
        },
    });
    // Python's str.strip(): Unicode whitespace, and the separators \x1c-\x1f.
    let trimmed = text.trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c));
    (trimmed.to_owned(), outcome)
}

#[tool_router]
impl IpyboxMcpServer {
    /// A server with one session (as over stdio); its kernel starts in the background right
    /// away.
    pub fn new(config: McpServerConfig) -> Result<Self> {
        let workspace = Workspace::open(config)?;
        let session = Session::start(workspace.executor(true)?);
        let slot = Slot::default();
        let _ = slot.session.set(session);
        Ok(IpyboxMcpServer {
            tool_router: workspace.tool_router.clone(),
            workspace,
            slot: Arc::new(slot),
        })
    }

    /// A server whose session comes from `pool` on `initialize`. Cheap: rmcp also makes
    /// these for requests that are no session's (to look a tool's schema up).
    fn pooled(pool: &Arc<Pool>) -> Self {
        IpyboxMcpServer {
            workspace: pool.workspace.clone(),
            slot: Arc::new(Slot {
                session: OnceLock::new(),
                pool: Some(pool.clone()),
            }),
            tool_router: pool.workspace.tool_router.clone(),
        }
    }

    /// The executor of this server's session, once it has one.
    pub fn executor(&self) -> Option<&CodeExecutor> {
        self.slot.session.get().map(|s| &s.executor)
    }

    /// This server's session, or why there is none to run a tool call in.
    fn session(&self) -> std::result::Result<&Arc<Session>, String> {
        let Some(session) = self.slot.session.get() else {
            return Err("this request belongs to no MCP session, and ipybox keeps a kernel per session: connect with a client that starts one (`initialize`)".into());
        };
        match session.ended() {
            Some(why) => Err(format!(
                "this MCP session has ended because {why}, and its kernel was stopped; start a new session"
            )),
            None => Ok(session),
        }
    }

    #[tool(
        description = "Register an MCP server and generate importable Python tool functions for it: a package mcptools/<server_name>/ with a typed module per tool, used in execute_ipython_cell as `from mcptools.<server_name> import <tool>` then `<tool>.run(<tool>.Params(...))` (read a module's source to see its parameters). `${VAR}` placeholders in server_params are replaced from the environment and the workspace's .env. Registering again overwrites the package (call reset to re-import it); mcptools/ persists across reset. A server already registered in this workspace cannot be given another configuration here, and a tool whose definition changed since a person accepted it stays held for that person. Every tool call the code makes is subject to approval. Returns the names of the generated tool modules, importable from mcptools.<server_name>."
    )]
    async fn register_mcp_server(
        &self,
        Parameters(p): Parameters<RegisterParams>,
    ) -> CallToolResult {
        const TOOL: &str = "register_mcp_server";
        let session = match self.session() {
            Ok(s) => s,
            Err(why) => return failure(TOOL, why),
        };
        let _busy = session.busy();
        if let Err(e) = crate::apigen::check_server_name(&p.server_name) {
            return failure(TOOL, e);
        }
        let params = match ServerParams::from_json(&serde_json::Value::Object(p.server_params)) {
            Ok(params) => params,
            Err(e) => return failure(TOOL, e),
        };
        match session
            .executor
            .register_mcp_server_for_agent(&p.server_name, &params)
            .await
        {
            Ok(generated) => {
                self.workspace.registrations.fetch_add(1, Ordering::AcqRel);
                for (tool, reason) in &generated.skipped {
                    tracing::warn!(server = %p.server_name, %tool, %reason, "no module generated for a tool");
                }
                CallToolResult::success(
                    generated
                        .modules
                        .into_iter()
                        .map(ContentBlock::text)
                        .collect(),
                )
            }
            Err(e) => failure(TOOL, e),
        }
    }

    #[tool(
        description = "Execute Python code in a stateful IPython kernel. State (variables, imports, definitions) persists across calls; executions are sequential. For async code, use `await` directly (the kernel runs an event loop). The working directory is the workspace; registered MCP servers' tools are called through the generated mcptools package. Returns the output (stdout, stderr, the value of the last expression) plus generated images as markdown links to their files, followed by the images themselves; an empty string when there is no output. An exception (with its traceback), a failed MCP tool call or a timeout is an error result."
    )]
    async fn execute_ipython_cell(
        &self,
        Parameters(p): Parameters<ExecuteParams>,
    ) -> CallToolResult {
        const TOOL: &str = "execute_ipython_cell";
        let session = match self.session() {
            Ok(s) => s,
            Err(why) => return failure(TOOL, why),
        };
        let _busy = session.busy();
        if let Err(e) = session.ready(&self.workspace).await {
            return failure(TOOL, e);
        }
        let timeout = (p.timeout > 0.0).then(|| Duration::from_secs_f64(p.timeout.min(1e9)));
        let (text, outcome) = run_cell(
            session,
            &p.code,
            timeout,
            self.workspace.config.activity.as_ref(),
        )
        .await;
        match outcome {
            Ok(result) => {
                let mut output = text;
                let mut images = Vec::new();
                if !result.image_data.is_empty() {
                    output.push_str("\n\nGenerated images:\n\n");
                }
                // The bytes ipybox saved, not the file re-read: kernel code can replace the
                // file with a link to anything the host may read.
                for image in &result.image_data {
                    let stem = image
                        .path
                        .file_stem()
                        .map(|s| s.to_string_lossy())
                        .unwrap_or_default();
                    output.push_str(&format!("- [{stem}]({})\n", image.path.display()));
                    images.push(ContentBlock::image(
                        base64::engine::general_purpose::STANDARD.encode(&image.data),
                        image.mime.clone(),
                    ));
                }
                let mut content = vec![ContentBlock::text(truncate_output(
                    &output,
                    p.max_output_chars,
                ))];
                content.extend(images);
                CallToolResult::success(content)
            }
            Err(e) => {
                let message = match &e {
                    // The Python ipybox's ExecutionError text: name, value, traceback.
                    Error::CodeExecution { error, .. } => {
                        format!("{}: {}\n{}", error.name, error.value, error.traceback)
                    }
                    other => other.to_string(),
                };
                let before = (!text.is_empty()).then(|| {
                    ContentBlock::text(truncate_output(
                        &format!("Output before the error:\n{text}"),
                        p.max_output_chars,
                    ))
                });
                failure_with(TOOL, message, before.into_iter().collect())
            }
        }
    }

    #[tool(
        description = "List the Python APIs the kernel's code can use, compactly: each registered MCP server's tools as mcptools.<server>.<module> with their interface (Params, Result and run() with its docstring), then each saved code action gentools.<category>.<name> with its api.py. Read this instead of opening the files one by one; import only what the task needs."
    )]
    async fn list_tools(&self, Parameters(p): Parameters<ListToolsParams>) -> CallToolResult {
        const TOOL: &str = "list_tools";
        let workspace = self.workspace.config.workspace.clone();
        let only = p.server;
        match tokio::task::spawn_blocking(move || tool_listing(&workspace, only.as_deref())).await {
            Ok(Ok(text)) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Ok(Err(e)) => failure(TOOL, e),
            Err(e) => failure(TOOL, e),
        }
    }

    #[tool(
        description = "Save code that worked as a tool of its own: gentools/<category>/<name>/api.py (the interface: the models, then run(<parameters>) -> <returns> with a docstring made from the descriptions) and impl.py (the code, as the body of the implementation). The tool is then imported in any cell as `from gentools.<category>.<name>.api import run` and listed by list_tools; the MCP tools it calls still ask for approval. The saved modules are imported in the kernel, and every module the code imports is looked for, before this answers: code that does not import, or imports a module the kernel cannot find, is not saved (an earlier version stays). Saving again under the same name replaces the tool."
    )]
    async fn save_code_action(
        &self,
        Parameters(p): Parameters<SaveCodeActionParams>,
    ) -> CallToolResult {
        const TOOL: &str = "save_code_action";
        let session = match self.session() {
            Ok(s) => s,
            Err(why) => return failure(TOOL, why),
        };
        let _busy = session.busy();
        let action = crate::apigen::codeaction::CodeAction::from(p);
        if let Err(e) = action.validate() {
            return failure(TOOL, e);
        }
        if let Err(e) = session.ready(&self.workspace).await {
            return failure(TOOL, e);
        }
        match session.executor.save_code_action(&action).await {
            Ok(saved) => CallToolResult::success(vec![ContentBlock::text(format!(
                "saved {module}: use it as `from {module}.api import run`\n\n{api}",
                module = saved.module,
                api = saved.api
            ))]),
            Err(e) => failure(TOOL, e),
        }
    }

    #[tool(
        description = "Install a Python package with pip into the kernel's environment. Installed packages persist across reset and are importable at once. Supports version specifiers (e.g. `numpy>=1.20.0`) and git URLs (`git+https://...`). Returns pip's output."
    )]
    async fn install_package(&self, Parameters(p): Parameters<InstallParams>) -> CallToolResult {
        const TOOL: &str = "install_package";
        let session = match self.session() {
            Ok(s) => s,
            Err(why) => return failure(TOOL, why),
        };
        let _busy = session.busy();
        match session
            .executor
            .install_package(p.package_name.trim())
            .await
        {
            Ok(pip_output) => CallToolResult::success(vec![ContentBlock::text(pip_output)]),
            Err(e) => failure(TOOL, e),
        }
    }

    #[tool(
        description = "Reset the IPython kernel to a clean state: a new kernel, without the variables, imports and definitions of the old one. MCP server connections restart on their next use; installed packages, files and mcptools/ persist. Returns nothing."
    )]
    async fn reset(&self) -> CallToolResult {
        const TOOL: &str = "reset";
        let session = match self.session() {
            Ok(s) => s,
            Err(why) => return failure(TOOL, why),
        };
        let _busy = session.busy();
        if let Err(e) = session.ready(&self.workspace).await {
            return failure(TOOL, e);
        }
        match session.executor.reset().await {
            Ok(()) => {
                if let Some(activity) = &self.workspace.config.activity {
                    activity.tell(AgentActivity::KernelReset {
                        session: session.serial,
                    });
                }
                CallToolResult::success(Vec::new())
            }
            Err(e) => failure(TOOL, e),
        }
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "ipybox",
    instructions = "Run Python in a stateful IPython kernel with execute_ipython_cell. Register MCP servers with register_mcp_server to call their tools from that code through a typed API (mcptools.<server>.<tool>); list_tools shows the interfaces of those tools and of saved code actions. Save code that worked as a tool of its own with save_code_action (gentools.<category>.<name>). Install packages with install_package; reset gives a fresh kernel."
)]
impl ServerHandler for IpyboxMcpServer {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let tool = request.name.clone();
        let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let mut response = self.tool_router.call(call).await?;
        // Arguments that do not fit the schema (rmcp answers a tool error) read as the
        // Python ipybox's do.
        if let CallToolResponse::Complete(result) = &mut response
            && result.is_error == Some(true)
            && let Some(ContentBlock::Text(first)) = result.content.first_mut()
            && first.text.starts_with("failed to deserialize parameters")
        {
            first.text = format!("Error executing tool {tool}: {}", first.text);
        }
        Ok(response)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<InitializeResult, ErrorData> {
        if let Some(pool) = &self.slot.pool
            && self.slot.session.get().is_none()
        {
            let _ = self.slot.session.set(pool.open()?);
        }
        context.peer.set_peer_info(request.clone());
        if let Some(session) = self.slot.session.get() {
            session.set_client(Some(&request.client_info));
        }
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let id = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok())
            .map(SessionId::from);
        if let (Some(session), Some(id)) = (self.slot.session.get(), id) {
            if let Ok(mut known) = session.mcp_id.lock() {
                *known = Some(id);
            }
            session.set_client(None);
        }
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        // Over HTTP a kernel belongs to a session: the revisions after 2025-11-25 have none.
        if self.slot.pool.is_some() {
            std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(
                &ProtocolVersion::LATEST_WITH_INITIALIZE,
            ))
        } else {
            std::borrow::Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
        }
    }
}

/// Serve one session over stdio until the client disconnects. Logs go to stderr; stdout is
/// the protocol.
pub async fn serve_stdio(config: McpServerConfig) -> Result<()> {
    use rmcp::ServiceExt;
    let server = IpyboxMcpServer::new(config)?;
    let executor = server.executor().cloned();
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| Error::mcp("the MCP session over stdio failed to start").because(e))?;
    let _ = running.waiting().await;
    match executor {
        Some(e) => e.stop().await,
        None => Ok(()),
    }
}

/// Is a request with `Origin: origin` allowed? The MCP specification requires servers to
/// check it against DNS rebinding: a web page the person visits must not drive the server
/// from their browser. Allowed: `http(s)://` origins on a loopback host or the bound
/// address, any port. `null` and everything else are refused.
fn origin_allowed(origin: &str, bound: std::net::IpAddr) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = match rest.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => rest.split([':', '/']).next().unwrap_or(""),
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback() || ip == bound)
}

/// Serve Streamable HTTP at `http://<listener>/mcp` until `shutdown` resolves: a kernel per
/// MCP session, at most `options.max_sessions`, each ended after `options.idle_timeout`
/// without a tool call. Requests need `Authorization: Bearer <token>` (unless the token is
/// `None`) and (against DNS rebinding) a loopback, the bound or an allowed `Host`, and a
/// loopback or the bound `Origin`.
pub async fn serve_http(
    config: McpServerConfig,
    listener: tokio::net::TcpListener,
    options: HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<()> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let addr = listener
        .local_addr()
        .map_err(|e| Error::io("reading the bound address", e))?;
    let mut http = StreamableHttpServerConfig::default();
    if !addr.ip().is_loopback() {
        http.allowed_hosts.push(addr.ip().to_string());
        http.allowed_hosts.push(addr.to_string());
    }
    http.allowed_hosts
        .extend(options.allowed_hosts.iter().cloned());
    let sessions = http.cancellation_token.clone();
    let mut manager = LocalSessionManager::default();
    // Idle sessions are ended by the pool, which counts a running tool call as activity;
    // rmcp's own timer would end a session in the middle of a long execution.
    manager.session_config.keep_alive = None;
    let manager = Arc::new(manager);
    let pool = Arc::new(Pool {
        workspace: Workspace::open(config)?,
        max: options.max_sessions.max(1),
        sessions: Mutex::new(Vec::new()),
        stopping: Mutex::new(Vec::new()),
        manager: manager.clone(),
    });
    if let Some(control) = &options.control
        && let Ok(mut held) = control.0.lock()
    {
        *held = Arc::downgrade(&pool);
    }
    let reaper = options
        .idle_timeout
        .map(|idle| tokio::spawn(pool.clone().reap(idle)));
    let factory = pool.clone();
    let service =
        StreamableHttpService::new(move || Ok(IpyboxMcpServer::pooled(&factory)), manager, http);
    let token = Arc::new(options.token);
    let bound = addr.ip();
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let token = token.clone();
                async move {
                    use axum::http::StatusCode;
                    use axum::response::IntoResponse;
                    if let Some(origin) = request.headers().get(axum::http::header::ORIGIN)
                        && !origin_allowed(origin.to_str().unwrap_or(""), bound)
                    {
                        return (
                            StatusCode::FORBIDDEN,
                            "this Origin may not use the MCP server (only pages served from this machine's loopback or the bound address may)",
                        )
                            .into_response();
                    }
                    let ok = token
                        .as_deref()
                        .is_none_or(|t| crate::auth::bearer_matches(request.headers(), t));
                    if ok {
                        let ending = request.method() == axum::http::Method::DELETE;
                        let mut response = next.run(request).await;
                        // rmcp answers an ended session with 202; the Python SDK's client
                        // takes only 200 and 204 as success and warns on every exit.
                        if ending && response.status() == StatusCode::ACCEPTED {
                            *response.status_mut() = StatusCode::NO_CONTENT;
                        }
                        response
                    } else {
                        (
                            StatusCode::UNAUTHORIZED,
                            [(axum::http::header::WWW_AUTHENTICATE, "Bearer")],
                            "missing or wrong bearer token",
                        )
                            .into_response()
                    }
                }
            },
        ));
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            sessions.cancel();
        })
        .await
        .map_err(|e| Error::io("serving MCP over HTTP", e));
    if let Some(reaper) = reaper {
        reaper.abort();
    }
    pool.stop_all().await;
    served
}

#[cfg(test)]
mod tests {
    use super::{origin_allowed, standard_json_schema, truncate_output};

    #[test]
    fn origins() {
        let lo: std::net::IpAddr = "127.0.0.1".parse().expect("ip");
        for ok in [
            "http://localhost:6274",
            "http://127.0.0.1",
            "https://[::1]:8080",
            "http://LOCALHOST",
        ] {
            assert!(origin_allowed(ok, lo), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "null",
            "http://127.0.0.1.evil.example",
            "file://",
            "",
        ] {
            assert!(!origin_allowed(bad, lo), "{bad}");
        }
        let lan: std::net::IpAddr = "192.168.1.5".parse().expect("ip");
        assert!(origin_allowed("http://192.168.1.5:3000", lan));
        assert!(!origin_allowed("http://192.168.1.6:3000", lan));
    }

    #[test]
    fn truncation_is_the_python_ipyboxs() {
        assert_eq!(truncate_output("abc", 3), "abc", "at the limit: untouched");
        assert_eq!(
            truncate_output("abcd", 3),
            "abc\n\n[Output truncated: exceeded 3 character limit]"
        );
        assert_eq!(
            truncate_output("äöüß", 2),
            "äö\n\n[Output truncated: exceeded 2 character limit]",
            "characters, not bytes, as Python's len() and slicing count"
        );
        assert_eq!(
            truncate_output("x", 0),
            "\n\n[Output truncated: exceeded 0 character limit]"
        );
    }

    #[test]
    fn schemas_lose_rust_formats_and_float_defaults() {
        let mut schema = rmcp::schemars::json_schema!({
            "type": "object",
            "properties": {
                "timeout": {"type": "number", "format": "double", "default": 120.0},
                "max_output_chars": {"type": "integer", "format": "uint", "minimum": 0, "default": 5000},
                "ratio": {"type": "number", "default": 0.5}
            }
        });
        standard_json_schema(&mut schema);
        assert_eq!(
            serde_json::to_value(&schema).expect("json"),
            serde_json::json!({
                "type": "object",
                "properties": {
                    "timeout": {"type": "number", "default": 120},
                    "max_output_chars": {"type": "integer", "minimum": 0, "default": 5000},
                    "ratio": {"type": "number", "default": 0.5}
                }
            })
        );
    }
}
