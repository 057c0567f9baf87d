//! [`CodeExecutor`]: the public API for running code in a stateful IPython kernel.
//!
//! Mirrors the Python ipybox's `CodeExecutor`: a builder, `start()`/`stop()`, `execute()`,
//! `stream()` with chunk events and the result last, `reset()`; and adds `interrupt()` and
//! cancellable streams. A `CodeExecutor` is a cheap handle to one actor task that owns the
//! session (`actor`): one kernel is active at a time, executions queue in the order they
//! were submitted and never interleave, and `interrupt()`, `reset()` and `stop()` act at once
//! whatever runs. A spare kernel (with a sandbox, a spare sandbox: `host`) is started in
//! the background so `reset()` and recovery from a dead kernel are a swap.

mod actor;
mod calls;
mod execution;
#[cfg(feature = "desktop")]
pub mod frames;
mod help;
mod host;
mod output;
mod servers;
mod variables;

pub use help::{Completion, Completions, Inspection};
pub use output::{MimeBundle, Output, StreamName};
pub use servers::{Placeholder, Registration, SkippedTool};
pub use variables::{
    Filter, FilterOp, FrameColumn, FramePage, FrameQuery, KernelVariables, SortKey, Variable,
};

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::Stream;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use crate::apigen::generate::{Generated, generate};
use crate::error::{Error, Result};
use crate::events::{Events, SessionEvent};
use crate::kernel::connector::{HostConnector, SharedConnector};
use crate::mcp::ServerParams;
use crate::mcp::params::Variables;
use crate::pyenv::{self, Progress};
use crate::registry::{Registry, ToolSummary};
use crate::sandbox::SandboxOptions;
use crate::tools::{ApprovalHandler, ApprovalRequest, Approvals, Decision, ToolServer};
use actor::Command;
use execution::Job;

/// Default execution timeout, as in the Python ipybox.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// The result of a successful execution.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CodeExecutionResult {
    /// Everything printed or displayed as text, in order, trimmed; `None` when there was none.
    pub text: Option<String>,
    /// Images the code displayed, saved in `images_dir`.
    pub images: Vec<PathBuf>,
    /// The same images as saved: path, MIME type and bytes (no need to read the files
    /// back, which kernel code may have replaced since).
    #[serde(skip)]
    pub image_data: Vec<crate::kernel::output::SavedImage>,
}

/// An event of [`CodeExecutor::stream`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The kernel began the execution; its count is what a notebook shows as `[n]` (only
    /// when [`StreamOptions::outputs`] is set).
    Started {
        /// The execution count, when the kernel gives one.
        execution_count: Option<i64>,
    },
    /// An output, as it arrives and in the kernel's order (only when
    /// [`StreamOptions::outputs`] is set).
    Output(Output),
    /// The code asks for input (`input()`, `getpass()`): answer with
    /// [`InputRequest::reply`] (only when [`StreamOptions::input`] is set). The execution
    /// timeout is paused while it waits.
    Input(InputRequest),
    /// A tool call waits for `accept()` or `reject()` (nothing runs before). The execution
    /// timeout is paused while a decision is pending.
    ApprovalRequest(ApprovalRequest),
    /// The final result; always the last event of a successful execution.
    Result(CodeExecutionResult),
}

/// A request for input from running code. Answer it once with [`reply`](Self::reply);
/// dropping every clone unanswered interrupts the code (its `input()` raises
/// `KeyboardInterrupt`).
#[derive(Debug, Clone)]
pub struct InputRequest {
    prompt: String,
    password: bool,
    answer: Arc<Mutex<Option<oneshot::Sender<String>>>>,
}

impl PartialEq for InputRequest {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.answer, &other.answer)
    }
}

impl InputRequest {
    /// The prompt the code shows (`input("Name: ")`).
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    /// Is it a password (`getpass()`)? Then do not echo what is typed.
    pub fn password(&self) -> bool {
        self.password
    }

    /// Answer: the code's `input()` returns `value`. Later answers are ignored.
    pub fn reply(&self, value: impl Into<String>) {
        if let Some(tx) = self.answer.lock().ok().and_then(|mut a| a.take()) {
            let _ = tx.send(value.into());
        }
    }
}

/// Options of [`CodeExecutor::stream`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamOptions {
    /// Interrupt the code after this long; `None` waits forever.
    pub timeout: Option<Duration>,
    /// Emit [`Event::Started`] and [`Event::Output`]s as the kernel sends them.
    pub outputs: bool,
    /// Let the code ask for input with [`Event::Input`]; without it `input()` raises
    /// (`StdinNotImplementedError`) instead of waiting for an answer nobody gives.
    pub input: bool,
    /// Save displayed images in the images directory and list them in the result (default
    /// on); a notebook, which keeps images in its outputs, turns it off.
    pub save_images: bool,
    /// Where the code comes from, in words ("cell 3 of analysis.ipynb", "agent session
    /// 4f2a"): approval requests and the audit log name it.
    pub origin: Option<String>,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            timeout: Some(DEFAULT_TIMEOUT),
            outputs: false,
            input: false,
            save_images: true,
            origin: None,
        }
    }
}

/// Configuration of a [`CodeExecutor`]; see [`CodeExecutorBuilder`].
#[derive(Debug, Clone)]
struct Config {
    kernel_env: BTreeMap<String, String>,
    images_dir: Option<PathBuf>,
    working_dir: Option<PathBuf>,
    log_level: String,
    gateway_host: String,
    gateway_port: Option<u16>,
    external_gateway: Option<(String, Option<String>)>,
    gateway_headers: Vec<String>,
    python: Option<PathBuf>,
    startup_timeout: Duration,
    kernel_ready_timeout: Duration,
    interrupt_grace: Duration,
    spare_kernel: bool,
    connector: SharedConnector,
    wrapper: Vec<OsString>,
    progress: Progress,
    /// Milliseconds; shared with the session's approvals, so a change applies at once.
    approval_timeout: Arc<AtomicU64>,
    /// The MCP client of the agent whose code this session runs (an agent's session).
    client: Arc<Mutex<Option<crate::definition::Client>>>,
    approval_handler: Option<Arc<dyn ApprovalHandler>>,
    mcp_connect_timeout: Duration,
    mcp_call_timeout: Duration,
    sandbox: Option<SandboxOptions>,
    events: Events,
}

/// A Kernel Gateway, Jupyter Server or Jupyter Enterprise Gateway someone else runs, whose
/// kernels may be on other machines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteGateway {
    /// `http://`, `https://` (or `ws://`, `wss://`) with an optional base path.
    pub url: String,
    /// Sent as `Authorization: token …`.
    pub token: Option<String>,
    /// Headers sent with every request, as `Name: value`.
    pub headers: Vec<String>,
}

impl RemoteGateway {
    /// Ask the server what it is and which kernels it can start, without starting one: a
    /// wrong URL, an unreachable host, an unvouched certificate or a refused token comes
    /// back in words.
    pub async fn probe(&self) -> Result<GatewayProbe> {
        let endpoint =
            crate::kernel::api::Endpoint::remote(&self.url, self.token.clone(), &self.headers)?;
        let api = crate::kernel::api::GatewayApi::new(endpoint, Arc::new(HostConnector));
        let refused = |e: Error| match e {
            Error::GatewayHttp {
                status: 401 | 403, ..
            } => Error::gateway(format!(
                "the server at {} refused the request: {}",
                self.url,
                if self.token.is_some() {
                    "the token (or a header) is wrong"
                } else {
                    "it needs a token"
                }
            )),
            Error::GatewayHttp { status: 404, .. } => Error::gateway(format!(
                "{} answers, but not as a Jupyter server: check the URL and its base path",
                self.url
            )),
            other => other,
        };
        let info = api.info().await.map_err(refused)?;
        let (default_kernel, kernels) = api.kernelspecs().await.map_err(refused)?;
        Ok(GatewayProbe {
            version: info
                .get("version")
                .and_then(|v| v.as_str())
                .map(str::to_owned),
            default_kernel,
            kernels,
        })
    }
}

/// What a remote gateway said about itself ([`RemoteGateway::probe`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayProbe {
    /// The server's version (`jupyter_server`'s, or the Enterprise Gateway's).
    pub version: Option<String>,
    /// The kernel it starts when none is named.
    pub default_kernel: Option<String>,
    /// The kernels it can start.
    pub kernels: Vec<String>,
}

/// Builds a [`CodeExecutor`].
#[derive(Debug, Clone)]
pub struct CodeExecutorBuilder {
    config: Config,
}

impl Default for CodeExecutorBuilder {
    fn default() -> Self {
        CodeExecutorBuilder {
            config: Config {
                kernel_env: BTreeMap::new(),
                images_dir: None,
                working_dir: None,
                log_level: "WARN".into(),
                gateway_host: "127.0.0.1".into(),
                gateway_port: None,
                external_gateway: None,
                gateway_headers: Vec::new(),
                python: None,
                startup_timeout: Duration::from_secs(30),
                kernel_ready_timeout: Duration::from_secs(30),
                interrupt_grace: Duration::from_secs(5),
                spare_kernel: true,
                connector: Arc::new(HostConnector),
                wrapper: Vec::new(),
                progress: Progress::Quiet,
                approval_timeout: Arc::new(AtomicU64::new(60_000)),
                client: Arc::default(),
                approval_handler: None,
                mcp_connect_timeout: Duration::from_secs(30),
                mcp_call_timeout: crate::tools::sessions::DEFAULT_CALL_TIMEOUT,
                sandbox: None,
                events: Events::default(),
            },
        }
    }
}

impl CodeExecutorBuilder {
    /// Environment variables of the kernel. The kernel does not inherit ipybox's environment:
    /// it sees `PATH`, `HOME`, the locale, its Jupyter directories and these.
    pub fn kernel_env<K: Into<String>, V: Into<String>>(
        mut self,
        env: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.config
            .kernel_env
            .extend(env.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Where images are saved (default: `images/` in the working directory).
    pub fn images_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config.images_dir = Some(dir.into());
        self
    }

    /// The kernel's working directory (default: the current directory).
    pub fn working_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config.working_dir = Some(dir.into());
        self
    }

    /// The Kernel Gateway's log level (`DEBUG`, `INFO`, `WARN`, `ERROR`; default `WARN`).
    pub fn log_level(mut self, level: impl Into<String>) -> Self {
        self.config.log_level = level.into();
        self
    }

    /// Address the gateway binds (default `127.0.0.1`).
    pub fn gateway_host(mut self, host: impl Into<String>) -> Self {
        self.config.gateway_host = host.into();
        self
    }

    /// Port the gateway binds (default: a free one).
    pub fn gateway_port(mut self, port: u16) -> Self {
        self.config.gateway_port = Some(port);
        self
    }

    /// Use an already running Kernel Gateway, Jupyter Server or Jupyter Enterprise Gateway
    /// at `url` (`http://127.0.0.1:8888`, `https://eg.example.org`) instead of starting one.
    /// Its kernels may run on other machines: tool calls come back over the kernel's own
    /// channel, and the generated `mcptools/` is sent into each kernel.
    pub fn gateway_url(mut self, url: impl Into<String>, token: Option<String>) -> Self {
        self.config.external_gateway = Some((url.into(), token));
        self
    }

    /// [`gateway_url`](Self::gateway_url) and [`gateway_header`](Self::gateway_header) in
    /// one.
    pub fn remote_gateway(mut self, gateway: &RemoteGateway) -> Self {
        self = self.gateway_url(&gateway.url, gateway.token.clone());
        for header in &gateway.headers {
            self = self.gateway_header(header);
        }
        self
    }

    /// Send `Name: value` with every request to the [`gateway_url`](Self::gateway_url)
    /// server (an authenticating proxy's header, say). Checked when the executor starts.
    pub fn gateway_header(mut self, header: impl Into<String>) -> Self {
        self.config.gateway_headers.push(header.into());
        self
    }

    /// Python interpreter of an existing environment (default: `$IPYBOX_PYTHON`, else the
    /// environment ipybox manages).
    pub fn python(mut self, python: impl Into<PathBuf>) -> Self {
        self.config.python = Some(python.into());
        self
    }

    /// How long the gateway may take to start (default 30 s).
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.config.startup_timeout = timeout;
        self
    }

    /// How long a new kernel may take to answer (default 30 s).
    pub fn kernel_ready_timeout(mut self, timeout: Duration) -> Self {
        self.config.kernel_ready_timeout = timeout;
        self
    }

    /// After a timeout, how long the interrupted kernel may take to finish before it is
    /// replaced (default 5 s).
    pub fn interrupt_grace(mut self, grace: Duration) -> Self {
        self.config.interrupt_grace = grace;
        self
    }

    /// Keep a spare kernel started in the background for instant `reset()` (default on).
    pub fn spare_kernel(mut self, on: bool) -> Self {
        self.config.spare_kernel = on;
        self
    }

    /// Show Python environment provisioning progress on stderr (default off).
    pub fn show_progress(mut self, on: bool) -> Self {
        self.config.progress = if on {
            Progress::Terminal
        } else {
            Progress::Quiet
        };
        self
    }

    /// Where TCP connections to the gateway come from (default: plain host TCP; the sandbox
    /// uses its own).
    pub fn connector(mut self, connector: SharedConnector) -> Self {
        self.config.connector = connector;
        self
    }

    /// Run the gateway under this program and arguments (e.g. a resource limiter); the
    /// sandbox adds srt in front of them.
    pub fn gateway_wrapper(mut self, wrapper: Vec<OsString>) -> Self {
        self.config.wrapper = wrapper;
        self
    }

    /// Reject a tool call nobody approved within this time (default 60 s).
    pub fn approval_timeout(mut self, timeout: Duration) -> Self {
        self.config.approval_timeout = Arc::new(AtomicU64::new(millis(timeout)));
        self
    }

    /// Send every approval request to `handler` (an application-wide dialog or rules)
    /// instead of the execution's event stream; `execute()` then stops auto-approving.
    pub fn approval_handler(mut self, handler: Arc<dyn ApprovalHandler>) -> Self {
        self.config.approval_handler = Some(handler);
        self
    }

    /// How long an MCP server may take to start and answer (default 30 s).
    pub fn mcp_connect_timeout(mut self, timeout: Duration) -> Self {
        self.config.mcp_connect_timeout = timeout;
        self
    }

    /// Give up on an MCP tool call that has not answered after this long (default 120 s);
    /// the kernel code then raises `ToolServerError` saying so, and the server's session
    /// restarts on the next call. Time spent waiting for approval does not count.
    pub fn mcp_call_timeout(mut self, timeout: Duration) -> Self {
        self.config.mcp_call_timeout = timeout;
        self
    }

    /// Run the gateway and its kernels inside srt with ipybox's default kernel policy
    /// (default off). See [`SandboxOptions`](crate::SandboxOptions); start() fails with
    /// [`Error::Sandbox`] rather than run unsandboxed when srt or a dependency is missing.
    pub fn sandbox(mut self, on: bool) -> Self {
        self.config.sandbox = match (on, self.config.sandbox.take()) {
            (false, _) => None,
            (true, existing) => Some(existing.unwrap_or_default()),
        };
        self
    }

    /// Sandbox kernels with this policy file (srt settings) instead of the default policy;
    /// turns the sandbox on.
    pub fn sandbox_config(mut self, policy: impl Into<PathBuf>) -> Self {
        let mut options = self.config.sandbox.take().unwrap_or_default();
        options.policy = Some(policy.into());
        self.config.sandbox = Some(options);
        self
    }

    /// All sandbox options at once (`None`: no sandbox).
    pub fn sandbox_options(mut self, options: Option<SandboxOptions>) -> Self {
        self.config.sandbox = options;
        self
    }

    /// The executor (not started yet).
    pub fn build(self) -> CodeExecutor {
        CodeExecutor {
            shared: Arc::new(Shared {
                config: self.config,
                commands: OnceLock::new(),
                snapshot: Arc::default(),
            }),
        }
    }
}

/// Runs code in a stateful IPython kernel. Cheap to clone; clones share the kernel. When the
/// last clone is dropped the session stops in the background (at once if the runtime is
/// shutting down).
#[derive(Debug, Clone)]
pub struct CodeExecutor {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    config: Config,
    /// The actor's mailbox, made (and the actor spawned) on first use, inside a runtime.
    commands: OnceLock<mpsc::UnboundedSender<Command>>,
    /// What handles may know without asking the actor.
    snapshot: Arc<Mutex<Snapshot>>,
}

/// The actor's published state.
#[derive(Debug, Clone, Default)]
struct Snapshot {
    running: bool,
    gateway_pid: Option<u32>,
    tools: Option<Arc<ToolServer>>,
    approvals: Option<Arc<Approvals>>,
}

/// Who registers a server: what a person registers is what they accepted; an agent's
/// registration accepts nothing a person had not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Registrant {
    Person,
    Agent,
}

impl CodeExecutor {
    /// A builder with defaults.
    pub fn builder() -> CodeExecutorBuilder {
        CodeExecutorBuilder::default()
    }

    fn send(&self, command: Command) -> Result<()> {
        let commands = self.shared.commands.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let config = self.shared.config.clone();
            let snapshot = self.shared.snapshot.clone();
            tokio::spawn(actor::run(config, snapshot, rx));
            tx
        });
        commands.send(command).map_err(|_| Error::NotRunning)
    }

    async fn ask(
        &self,
        command: impl FnOnce(oneshot::Sender<Result<()>>) -> Command,
    ) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        self.send(command(tx))?;
        rx.await.map_err(|_| Error::NotRunning)?
    }

    /// Start the gateway (or connect to the external one) and the first kernel.
    /// Executions submitted meanwhile wait for it.
    pub async fn start(&self) -> Result<()> {
        self.ask(Command::Start).await?;
        self.catch_up_registry();
        Ok(())
    }

    /// A server registered while the session started (after it read the registry, before
    /// it could be told) is known to it from now on.
    fn catch_up_registry(&self) {
        if let Err(e) = self.reload_registry() {
            tracing::warn!("servers registered while the session started: {e}");
        }
    }

    /// [`start`](Self::start), begun before this returns: executions submitted from now on
    /// wait for it, in order. The future tells when the kernel is ready (or why it is not);
    /// for a window that opens while the kernel starts. Call it inside a Tokio runtime.
    pub fn start_now(&self) -> impl Future<Output = Result<()>> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let sent = self.send(Command::Start(tx));
        let this = self.clone();
        async move {
            sent?;
            rx.await.map_err(|_| Error::NotRunning)??;
            this.catch_up_registry();
            Ok(())
        }
    }

    /// Stop the kernels and the gateway; a running execution and queued ones end with an
    /// error. The executor can be started again.
    pub async fn stop(&self) -> Result<()> {
        if self.shared.commands.get().is_none() {
            return Ok(());
        }
        self.ask(Command::Stop).await
    }

    /// Process id of the gateway ipybox started (`None` when stopped or external); its
    /// kernels are its descendants.
    pub async fn gateway_pid(&self) -> Option<u32> {
        self.snapshot().gateway_pid
    }

    /// Is the executor started?
    pub async fn is_running(&self) -> bool {
        self.snapshot().running
    }

    fn snapshot(&self) -> Snapshot {
        self.shared
            .snapshot
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// Replace the kernel with a fresh one: no variables, no imports. Acts at once, also
    /// while code runs: the running execution ends with [`Error::Cancelled`], queued ones
    /// run on the fresh kernel. Near-instant when the spare kernel is ready; the old kernel
    /// is interrupted and deleted in the background. With a sandbox, the whole sandbox is
    /// replaced: nothing the old kernel started survives.
    pub async fn reset(&self) -> Result<()> {
        self.ask(Command::Reset).await
    }

    /// Every [`SessionEvent`] from now on: the kernel busy and idle, kernels replaced, tool
    /// calls with their approval and outcome, MCP servers started and gone. Any number of
    /// listeners; one that falls far behind is told how many events it missed.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<SessionEvent> {
        self.shared.config.events.subscribe()
    }

    /// Decide the pending approval request `id` from anywhere (a dialog, a panel, another
    /// process's channel); `false` when it is not pending (decided, withdrawn, unknown).
    pub fn decide(&self, id: u64, decision: Decision) -> bool {
        self.decide_as(id, decision, crate::events::DecidedBy::Person)
    }

    /// [`decide`](Self::decide), saying who or what decided (a batch, a rule made from the
    /// request) for listeners and the audit log.
    pub fn decide_as(&self, id: u64, decision: Decision, by: crate::events::DecidedBy) -> bool {
        self.snapshot()
            .approvals
            .is_some_and(|a| a.decide_as(id, decision, by))
    }

    /// Change the approval timeout (see [`CodeExecutorBuilder::approval_timeout`]) while
    /// the session runs: requests made from now on wait up to `timeout` for a decision.
    pub fn set_approval_timeout(&self, timeout: Duration) {
        self.shared
            .config
            .approval_timeout
            .store(millis(timeout), Ordering::Relaxed);
    }

    /// The approval timeout requests are made with now.
    pub fn approval_timeout(&self) -> Duration {
        Duration::from_millis(self.shared.config.approval_timeout.load(Ordering::Relaxed))
    }

    /// Have a call made by another process's code (an agent under `ipybox mcp --approval
    /// desktop`) approved in this session, by its approval handler, its panel and its
    /// audit log; `None` when the session is not running.
    pub(crate) fn request_external(
        &self,
        call: crate::approval::ExternalCall,
        details: crate::definition::CallDetails,
    ) -> Option<(ApprovalRequest, crate::approval::ExternalWait)> {
        let approvals = self.snapshot().approvals?;
        Some(approvals.request_external_with(
            call,
            details,
            self.shared.config.approval_handler.clone(),
        ))
    }

    /// Tell this session's listeners how an approved external call ended.
    pub(crate) fn report_external(
        &self,
        approved: crate::approval::Approved,
        outcome: Option<crate::events::CallOutcome>,
        duration_ms: u64,
    ) {
        if let Some(approvals) = self.snapshot().approvals {
            approvals.report(approved, outcome, duration_ms);
        }
    }

    /// This session runs an agent's code, sent through `client`: its approval requests (and
    /// the audit log) name the client.
    pub(crate) fn set_client(&self, client: crate::definition::Client) {
        if let Ok(mut c) = self.shared.config.client.lock() {
            *c = Some(client);
        }
    }

    /// The approval requests waiting for a decision, oldest first.
    pub fn pending_approvals(&self) -> Vec<ApprovalRequest> {
        self.snapshot()
            .approvals
            .map(|a| a.pending())
            .unwrap_or_default()
    }

    /// Interrupt the running execution (SIGINT to the kernel, as Jupyter's interrupt). The
    /// kernel keeps its state; the execution ends with [`Error::Cancelled`] (and a kernel that
    /// ignores the interrupt is replaced). Queued executions still run. Does nothing when
    /// nothing runs.
    pub async fn interrupt(&self) -> Result<()> {
        self.ask(Command::Interrupt).await
    }

    /// Generate the Python API of an MCP server into `<working dir>/mcptools/<name>/` and
    /// register the server for this workspace, so kernel code can call its tools (now, if
    /// the executor runs, and in later sessions on the same workspace).
    pub async fn register_mcp_server(
        &self,
        name: &str,
        params: &ServerParams,
    ) -> Result<Generated> {
        self.register(name, params, Registrant::Person).await
    }

    /// [`register_mcp_server`](Self::register_mcp_server) as an agent asks for it (`ipybox
    /// mcp`'s `register_mcp_server` tool): it may add a server, or generate one again with
    /// the configuration it has, but not change the configuration of one registered here,
    /// and the tools a person accepted stay pinned — a changed tool stays held for a person.
    pub async fn register_mcp_server_for_agent(
        &self,
        name: &str,
        params: &ServerParams,
    ) -> Result<Generated> {
        self.register(name, params, Registrant::Agent).await
    }

    async fn register(
        &self,
        name: &str,
        params: &ServerParams,
        by: Registrant,
    ) -> Result<Generated> {
        let c = &self.shared.config;
        let working_dir = match &c.working_dir {
            Some(d) => d.clone(),
            None => std::env::current_dir()
                .map_err(|e| Error::io("reading the current directory", e))?,
        };
        let home = crate::home::ipybox_home()?;
        let mut registry = Registry::load(&home, &working_dir)?;
        if by == Registrant::Agent
            && let Some(registered) = registry.servers.get(name)
            && registered != params
            && registry.params_to_regenerate(name).as_ref() != Some(params)
        {
            return Err(Error::config(format!(
                "\"{name}\" is registered in this workspace already, with another configuration; \
                 an agent cannot change it. Register it under another name, or ask the person to \
                 change it in the ipybox app's MCP servers panel or with `ipybox register {name}`"
            )));
        }
        let working_dir = registry.workspace.clone();
        // Registered again with its own pinned copy: the policy it was first given stays its
        // name.
        let policy = match crate::registry::srt_policy(params) {
            Some(p) if registry.is_pinned(&p) => registry.policies.get(name).cloned(),
            other => other,
        };
        let params = registry.pin_srt_policy(name, params, &working_dir)?;
        // A running session resolves ${VAR}s the way its tool server does: a sandboxed one
        // from the snapshot taken at its start, never from a .env its kernel may have written.
        let tools = self.snapshot().tools;
        let vars = match &tools {
            Some(state) => state.variables()?,
            None => Variables::load(Some(&working_dir))?,
        };
        let generated = generate(
            name,
            &params,
            &working_dir.join("mcptools"),
            &vars,
            c.mcp_connect_timeout,
        )
        .await?;
        match policy {
            Some(policy) => registry.policies.insert(name.to_owned(), policy),
            None => registry.policies.remove(name),
        };
        registry.insert(name, params.clone())?;
        registry.set_tools(name, summaries(&generated))?;
        // What a person registered is what they accepted: each tool's definition is pinned,
        // and a call to a tool that differs later is held for a person.
        let pins = crate::definition::pins::Pins::in_dir(registry.dir());
        match by {
            Registrant::Person => pins.pin_server(name, &generated.definitions)?,
            Registrant::Agent => pins.pin_new(name, &generated.definitions)?,
        }
        // Asked again now that the registry holds it: a session that started while this
        // generated has read the registry before, and is told here (one still starting reads
        // it once it has started).
        if let Some(state) = self.snapshot().tools {
            state.set_tools(name, generated.tools.clone());
            if state.set_server(name, params) {
                // Re-registered with other parameters: the old connection goes.
                state.restart(name).await;
            }
        }
        Ok(generated)
    }

    /// The MCP servers registered for this workspace, with their tools as generated.
    pub fn servers(&self) -> Result<Vec<RegisteredServer>> {
        let registry = self.registry()?;
        Ok(registry
            .servers
            .iter()
            .map(|(name, params)| RegisteredServer {
                name: name.clone(),
                params: params.clone(),
                policy: registry.policies.get(name).cloned(),
                tools: registry.tools.get(name).cloned().unwrap_or_default(),
            })
            .collect())
    }

    /// Connect to a server and list its tools without registering it or writing anything
    /// (a form's "Test connection"). A server that fails to start is an error with its
    /// stderr.
    pub async fn preview_mcp_server(&self, params: &ServerParams) -> Result<Vec<ToolSummary>> {
        let registry = self.registry()?;
        let vars = self.variables(&registry)?;
        let (params, _policy) = registry.preview_srt_policy(params, &registry.workspace)?;
        let tools = crate::apigen::generate::list_tools(
            "preview",
            &params,
            &registry.workspace,
            &vars,
            self.shared.config.mcp_connect_timeout,
        )
        .await?;
        let modules = crate::apigen::module_names(&tools);
        Ok(tools
            .into_iter()
            .zip(modules)
            .map(|(t, module)| ToolSummary {
                interface: crate::apigen::render_tool_interface(&t).ok(),
                tool: t.name,
                module,
                description: t.description,
            })
            .collect())
    }

    /// Unregister a server: forget it for this workspace, remove `mcptools/<name>/`, and stop
    /// its running session. `false` when it was not registered.
    pub async fn unregister_mcp_server(&self, name: &str) -> Result<bool> {
        let mut registry = self.registry()?;
        let had = registry.remove(name)?;
        crate::definition::pins::Pins::in_dir(registry.dir()).remove_server(name)?;
        crate::apigen::generate::remove_package(name, &registry.workspace.join("mcptools"))?;
        if let Some(state) = self.snapshot().tools {
            state.remove_server(name).await;
        }
        Ok(had)
    }

    /// Save working code as a tool of its own, `gentools/<category>/<name>/` in the working
    /// directory: checked, written (never through a link), then imported afresh in the
    /// kernel; code that does not import is removed again (an earlier version comes back)
    /// and the error says why. Starts the kernel if needed.
    pub async fn save_code_action(
        &self,
        action: &crate::apigen::codeaction::CodeAction,
    ) -> Result<crate::apigen::codeaction::Saved> {
        action.validate()?;
        self.start().await?;
        let workspace = self.registry()?.workspace;
        let to_write = action.clone();
        let written = tokio::task::spawn_blocking(move || {
            crate::apigen::codeaction::write(&workspace, &to_write)
        })
        .await
        .map_err(|e| Error::config("saving the code action").because(e))??;
        let check = crate::apigen::codeaction::import_check(&action.category, &action.name);
        match self.execute(&check, Some(Duration::from_secs(60))).await {
            Ok(_) => {
                let saved = written.saved.clone();
                written.keep();
                Ok(saved)
            }
            Err(e) => {
                written.undo();
                let why = match &e {
                    Error::CodeExecution { error, .. } => {
                        format!("{}: {}\n{}", error.name, error.value, error.traceback)
                    }
                    other => other.to_string(),
                };
                Err(Error::config(format!(
                    "the code action does not import, so it was not saved: {why}"
                )))
            }
        }
    }

    /// The saved code actions of the working directory: `gentools.<category>.<name>` with
    /// its `api.py`, sorted (`only`: one category).
    pub fn code_actions(&self, only: Option<&str>) -> Result<Vec<(String, String)>> {
        let workspace = self.registry()?.workspace;
        Ok(crate::apigen::codeaction::interfaces(&workspace, only))
    }

    fn registry(&self) -> Result<Registry> {
        let working_dir = match &self.shared.config.working_dir {
            Some(d) => d.clone(),
            None => std::env::current_dir()
                .map_err(|e| Error::io("reading the current directory", e))?,
        };
        Registry::load(&crate::home::ipybox_home()?, &working_dir)
    }

    /// Let the running kernels call every server registered for the workspace, including
    /// those registered since the executor started (by another executor on the same
    /// workspace, or `ipybox register`); nothing is generated. Does nothing while stopped:
    /// a start reads the registry anyway.
    pub fn reload_registry(&self) -> Result<()> {
        let Some(tools) = self.snapshot().tools else {
            return Ok(());
        };
        let working_dir = match &self.shared.config.working_dir {
            Some(d) => d.clone(),
            None => std::env::current_dir()
                .map_err(|e| Error::io("reading the current directory", e))?,
        };
        let registry = Registry::load(&crate::home::ipybox_home()?, &working_dir)?;
        for (name, listed) in &registry.tools {
            tools.set_tools(name, listed.iter().map(|t| t.tool.clone()).collect());
        }
        for (name, params) in registry.servers {
            if tools.set_server(&name, params) {
                let tools = tools.clone();
                tokio::spawn(async move { tools.restart(&name).await });
            }
        }
        Ok(())
    }

    /// `pip install spec` into the kernels' Python environment; the next import in the
    /// kernel finds it. pip runs on the host, isolated from the workspace; with the sandbox
    /// on it installs wheels from an index or URL only (no build script, no local path).
    /// Returns pip's output; its lines arrive as [`SessionEvent::PackageInstall`] meanwhile.
    /// With a [remote gateway](CodeExecutorBuilder::remote_gateway) the kernel's environment
    /// is on the server: pip runs there, in the kernel (as `%pip install` would).
    pub async fn install_package(&self, spec: &str) -> Result<String> {
        let c = &self.shared.config;
        if c.external_gateway.is_some() {
            return self.install_in_kernel(spec).await;
        }
        let python = c.python.clone();
        let progress = c.progress.clone();
        let env = tokio::task::spawn_blocking(move || pyenv::resolve(python.as_deref(), progress))
            .await
            .map_err(|e| Error::python_env("provisioning failed").because(e))??;
        let events = c.events.clone();
        let package = spec.trim().to_owned();
        pyenv::pip_install(env.python(), spec, c.sandbox.is_some(), move |line| {
            events.send(SessionEvent::PackageInstall {
                spec: package.clone(),
                line: line.to_owned(),
            })
        })
        .await
    }

    /// `pip install spec` run by the kernel itself, in its own environment; stdout lines
    /// become [`SessionEvent::PackageInstall`] events. The spec reaches pip as one argument,
    /// never through a shell.
    async fn install_in_kernel(&self, spec: &str) -> Result<String> {
        use futures_util::StreamExt;
        let spec = spec.trim().to_owned();
        if spec.is_empty() {
            return Err(Error::config("name a package to install"));
        }
        let literal = serde_json::to_string(&spec)
            .map_err(|e| Error::config("the package to install").because(e))?;
        // pip where the environment has it, else uv (environments uv made have no pip).
        let code = format!(
            "def _ipybox_pip(spec):\n\
             \x20   import importlib.util, shutil, subprocess, sys\n\
             \x20   if importlib.util.find_spec('pip'):\n\
             \x20       cmd = [sys.executable, '-m', 'pip', 'install', '--progress-bar', 'off', spec]\n\
             \x20   elif shutil.which('uv'):\n\
             \x20       cmd = [shutil.which('uv'), 'pip', 'install', '--python', sys.executable, spec]\n\
             \x20   else:\n\
             \x20       raise RuntimeError('the kernel\\'s environment has neither pip nor uv')\n\
             \x20   p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)\n\
             \x20   for line in p.stdout:\n\
             \x20       print(line, end='', flush=True)\n\
             \x20   if p.wait():\n\
             \x20       raise RuntimeError(f'pip exited with status {{p.returncode}}')\n\
             try:\n\
             \x20   _ipybox_pip({literal})\n\
             finally:\n\
             \x20   del _ipybox_pip"
        );
        let options = StreamOptions {
            outputs: true,
            ..StreamOptions::default()
        };
        let mut stream = self.spawn_execution(&code, options, true);
        let (events, mut text, mut line) = (
            self.shared.config.events.clone(),
            String::new(),
            String::new(),
        );
        let mut failed = None;
        while let Some(event) = stream.next().await {
            match event {
                Ok(Event::Output(Output::Stream { text: part, .. })) => {
                    text.push_str(&part);
                    line.push_str(&part);
                    while let Some(end) = line.find('\n') {
                        let done: String = line.drain(..=end).collect();
                        events.send(SessionEvent::PackageInstall {
                            spec: spec.clone(),
                            line: done.trim_end().to_owned(),
                        });
                    }
                }
                Ok(Event::Result(_)) => break,
                Ok(_) => {}
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        match failed {
            None => Ok(text),
            Some(Error::CodeExecution { error, .. }) => {
                let tail: Vec<&str> = text.lines().rev().take(5).collect();
                let said = if tail.is_empty() {
                    error.value
                } else {
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                };
                Err(Error::python_env(format!(
                    "pip could not install {spec} in the remote kernel's environment: {said}"
                )))
            }
            Some(other) => Err(other),
        }
    }

    /// Run `code` and wait for its result. `timeout: None` waits forever.
    pub async fn execute(
        &self,
        code: &str,
        timeout: Option<Duration>,
    ) -> Result<CodeExecutionResult> {
        use futures_util::StreamExt;
        let options = StreamOptions {
            timeout,
            ..StreamOptions::default()
        };
        let mut stream = self.spawn_execution(code, options, true);
        while let Some(event) = stream.next().await {
            if let Event::Result(r) = event? {
                return Ok(r);
            }
        }
        Err(Error::KernelDied {
            reason: "the execution ended without a result".into(),
            output: Default::default(),
        })
    }

    /// Run `code`, streaming events: [`Event::Output`]s (when asked for), approval and input
    /// requests, and the [`Event::Result`] last, or an error. Dropping the stream cancels the
    /// execution.
    pub fn stream(&self, code: &str, options: StreamOptions) -> ExecutionStream {
        self.spawn_execution(code, options, false)
    }

    fn spawn_execution(
        &self,
        code: &str,
        options: StreamOptions,
        auto_approve: bool,
    ) -> ExecutionStream {
        let (out, rx) = mpsc::unbounded_channel();
        let (cancel, cancel_rx) = oneshot::channel();
        let id = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
        let job = Job {
            id: id.clone(),
            code: code.to_owned(),
            options,
            auto_approve,
            out: out.clone(),
            cancel: cancel_rx,
        };
        if let Err(e) = self.send(Command::Execute(job)) {
            let _ = out.send(Err(e));
        }
        ExecutionStream {
            id,
            rx,
            cancel: Some(cancel),
        }
    }
}

/// A registered MCP server, as [`CodeExecutor::servers`] lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegisteredServer {
    /// Its name (`mcptools.<name>`).
    pub name: String,
    /// How to reach it (`${VAR}`s unresolved).
    pub params: ServerParams,
    /// Run under srt: the policy as given at registration (`ipybox:mcp-server` or a file);
    /// `params` name the copy ipybox pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// Its tools, as generated.
    pub tools: Vec<ToolSummary>,
}

fn summaries(generated: &Generated) -> Vec<ToolSummary> {
    generated
        .modules
        .iter()
        .zip(&generated.tools)
        .zip(&generated.descriptions)
        .zip(&generated.interfaces)
        .map(|(((module, tool), description), interface)| ToolSummary {
            tool: tool.clone(),
            module: module.clone(),
            description: description.clone(),
            interface: Some(interface.clone()),
        })
        .collect()
}

/// The events of one execution; see [`CodeExecutor::stream`]. Dropping it cancels the
/// execution (see [`cancel`](Self::cancel)).
#[derive(Debug)]
pub struct ExecutionStream {
    id: String,
    rx: mpsc::UnboundedReceiver<Result<Event>>,
    cancel: Option<oneshot::Sender<()>>,
}

impl ExecutionStream {
    /// The execution's id, as [`SessionEvent`]s and approval requests name it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Cancel the execution: a queued one never starts, a running one is interrupted (its
    /// kernel keeps its state). The stream then ends with [`Error::Cancelled`].
    pub fn cancel(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            let _ = cancel.send(());
        }
    }

    /// A handle that cancels this execution from elsewhere; `None` once taken or
    /// cancelled. The stream then still ends with [`Error::Cancelled`].
    pub fn cancel_handle(&mut self) -> Option<CancelHandle> {
        self.cancel.take().map(CancelHandle)
    }
}

/// Cancels an execution from elsewhere (when its stream has been moved into a task); see
/// [`ExecutionStream::cancel_handle`].
#[derive(Debug)]
pub struct CancelHandle(oneshot::Sender<()>);

impl CancelHandle {
    /// Cancel the execution, as [`ExecutionStream::cancel`] does.
    pub fn cancel(self) {
        let _ = self.0.send(());
    }
}

impl Stream for ExecutionStream {
    type Item = Result<Event>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

/// `d` in whole milliseconds, at least 1 (a zero timeout would reject every call unasked).
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}
