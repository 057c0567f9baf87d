//! [`CodeExecutor`]: the public API for running code in a stateful IPython kernel.
//!
//! Mirrors the Python ipybox's `CodeExecutor`: a builder, `start()`/`stop()`, `execute()`,
//! `stream()` with chunk events and the result last, `reset()`. One kernel is active at a
//! time; executions queue in call order (a fair lock) and never interleave. A spare kernel
//! is started in the background so `reset()` and recovery from a dead kernel are a swap.

mod host;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::Stream;
use serde::Serialize;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::apigen::generate::{Generated, generate};
use crate::error::{Error, PythonError, Result};
use crate::kernel::connector::{HostConnector, SharedConnector};
use crate::kernel::messages::{ErrorContent, ExecuteRequest};
use crate::kernel::output::{OutputCollector, python_error};
use crate::kernel::session::{KernelEvent, KernelSession};
use crate::mcp::ServerParams;
use crate::mcp::params::Variables;
use crate::pyenv::{self, Progress};
use crate::registry::Registry;
use crate::sandbox::SandboxOptions;
use crate::tools::{ApprovalHandler, ApprovalRequest, Approvals, Sessions, ToolEvent, ToolServer};
use host::{Host, Launcher};

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
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// Text output as it arrives (only when [`StreamOptions::chunks`] is set).
    Chunk(String),
    /// The final result; always the last event of a successful execution.
    Result(CodeExecutionResult),
    /// A tool call waits for `accept()` or `reject()` (nothing runs before). The execution
    /// timeout is paused while a decision is pending.
    ApprovalRequest(ApprovalRequest),
}

/// Options of [`CodeExecutor::stream`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamOptions {
    /// Interrupt the code after this long; `None` waits forever.
    pub timeout: Option<Duration>,
    /// Emit [`Event::Chunk`]s as output arrives.
    pub chunks: bool,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            timeout: Some(DEFAULT_TIMEOUT),
            chunks: false,
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
    python: Option<PathBuf>,
    startup_timeout: Duration,
    kernel_ready_timeout: Duration,
    interrupt_grace: Duration,
    spare_kernel: bool,
    connector: SharedConnector,
    wrapper: Vec<OsString>,
    progress: Progress,
    approval_timeout: Duration,
    approval_handler: Option<Arc<dyn ApprovalHandler>>,
    mcp_connect_timeout: Duration,
    mcp_call_timeout: Duration,
    tool_listener: Arc<std::sync::Mutex<Option<std::net::TcpListener>>>,
    sandbox: Option<SandboxOptions>,
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
                python: None,
                startup_timeout: Duration::from_secs(30),
                kernel_ready_timeout: Duration::from_secs(30),
                interrupt_grace: Duration::from_secs(5),
                spare_kernel: true,
                connector: Arc::new(HostConnector),
                wrapper: Vec::new(),
                progress: Progress::Quiet,
                approval_timeout: Duration::from_secs(60),
                approval_handler: None,
                mcp_connect_timeout: Duration::from_secs(30),
                mcp_call_timeout: crate::tools::sessions::DEFAULT_CALL_TIMEOUT,
                tool_listener: Arc::new(std::sync::Mutex::new(None)),
                sandbox: None,
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

    /// Use an already running Kernel Gateway or Jupyter Server at `url` (e.g.
    /// `http://127.0.0.1:8888`) instead of starting one.
    pub fn gateway_url(mut self, url: impl Into<String>, token: Option<String>) -> Self {
        self.config.external_gateway = Some((url.into(), token));
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
        self.config.approval_timeout = timeout;
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

    /// Serve the tool server on this already bound listener instead of a fresh one on
    /// 127.0.0.1 (not used with the sandbox, which binds one inside itself).
    pub fn tool_listener(mut self, listener: std::net::TcpListener) -> Self {
        self.config.tool_listener = Arc::new(std::sync::Mutex::new(Some(listener)));
        self
    }

    /// Run the gateway and its kernels inside srt with ipybox's default kernel policy
    /// (default off). See [`crate::sandbox`]; start() fails with
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
                state: tokio::sync::Mutex::new(None),
            }),
        }
    }
}

/// Runs code in a stateful IPython kernel. Cheap to clone; clones share the kernel.
#[derive(Debug, Clone)]
pub struct CodeExecutor {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    config: Config,
    /// `None` while stopped. The lock is fair: executions run in call order.
    state: tokio::sync::Mutex<Option<Running>>,
}

#[derive(Debug)]
struct Running {
    launcher: Arc<Launcher>,
    /// `None` only while shutting down.
    host: Option<Host>,
    kernel: Option<KernelSession>,
    spare: Option<JoinHandle<Result<Spare>>>,
    images_dir: crate::fsutil::Anchored,
    tools: Arc<ToolServer>,
    approvals: Arc<Approvals>,
}

/// A kernel started in the background for the next reset: on the active host, or (with a
/// sandbox) on a host of its own.
#[derive(Debug)]
enum Spare {
    Kernel(KernelSession),
    Host(Box<Host>, KernelSession),
}

impl Running {
    fn host(&self) -> Result<&Host> {
        self.host.as_ref().ok_or(Error::NotRunning)
    }

    /// Start a spare in the background if there is none.
    fn ensure_spare(&mut self) {
        if !self.launcher.spare() || self.spare.is_some() {
            return;
        }
        let launcher = self.launcher.clone();
        if launcher.isolated() {
            self.spare = Some(tokio::spawn(async move {
                let (host, kernel) = launcher.start_host_with_kernel().await?;
                Ok(Spare::Host(Box::new(host), kernel))
            }));
        } else if let Ok(host) = self.host() {
            let spec = host.spec.clone();
            let api = host.api.clone();
            self.spare = Some(tokio::spawn(async move {
                Ok(Spare::Kernel(spec.start(&api).await?))
            }));
        }
    }

    /// Make a fresh kernel the active one: the spare if it is ready and alive, else a new
    /// one; with a sandbox, on a new host that replaces the active one. The replaced kernel
    /// (and host) are shut down in the background.
    async fn replace_kernel(&mut self) -> Result<()> {
        let mut fresh = None;
        if let Some(spare) = self.spare.take() {
            match spare.await {
                Ok(Ok(Spare::Kernel(k))) if !k.is_dead() => fresh = Some((None, k)),
                Ok(Ok(Spare::Host(h, k))) if !k.is_dead() => fresh = Some((Some(*h), k)),
                Ok(Ok(Spare::Kernel(k))) => discard(k),
                Ok(Ok(Spare::Host(h, k))) => discard_host(*h, Some(k)),
                Ok(Err(e)) => tracing::warn!(error = %e, "the spare kernel failed to start"),
                Err(e) => tracing::warn!(error = %e, "the spare kernel task failed"),
            }
        }
        let (host, kernel) = match fresh {
            Some(f) => f,
            None if self.launcher.isolated() => {
                let (h, k) = self.launcher.start_host_with_kernel().await?;
                (Some(h), k)
            }
            None => (None, self.host()?.start_kernel().await?),
        };
        let old = self.kernel.replace(kernel);
        match (host, self.host.take()) {
            (Some(new), Some(replaced)) => {
                self.host = Some(new);
                discard_host(replaced, old);
            }
            (new, current) => {
                self.host = new.or(current);
                if let Some(old) = old {
                    discard(old);
                }
            }
        }
        Ok(())
    }

    /// The active kernel, replacing a dead one.
    async fn kernel(&mut self) -> Result<&KernelSession> {
        if self.kernel.as_ref().is_none_or(KernelSession::is_dead) {
            self.replace_kernel().await?;
            self.ensure_spare();
        }
        self.kernel.as_ref().ok_or(Error::NotRunning)
    }

    /// Give up on the active kernel (it died or ignored an interrupt). Without a sandbox the
    /// next execution takes a fresh kernel; with one, its whole sandbox is replaced now.
    async fn retire_kernel(&mut self) {
        if self.launcher.isolated() {
            if let Err(e) = self.replace_kernel().await {
                tracing::warn!(error = %e, "replacing the sandbox failed; the next execution retries");
                self.kernel = None;
            }
        } else if let Some(k) = self.kernel.take() {
            discard(k);
        }
        self.ensure_spare();
    }

    async fn shutdown(mut self) {
        self.tools.reset().await;
        let mut kernels: Vec<KernelSession> = self.kernel.take().into_iter().collect();
        let mut spare_host = None;
        if let Some(spare) = self.spare.take() {
            if self.host.as_ref().is_some_and(|h| h.gateway.is_some()) && !self.launcher.isolated()
            {
                // Stopping the gateway ends a kernel still starting.
                spare.abort();
            }
            match spare.await {
                Ok(Ok(Spare::Kernel(k))) => kernels.push(k),
                Ok(Ok(Spare::Host(h, k))) => spare_host = Some((h, k)),
                _ => {}
            }
        }
        if let Some(host) = self.host.take() {
            host.shutdown(kernels).await;
        }
        if let Some((h, k)) = spare_host {
            h.shutdown(vec![k]).await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Not stopped: our gateways die with their Host (Drop); kernels on an external
        // server are deleted in the background if a runtime is still there.
        let external = self.host.as_ref().is_some_and(|h| h.gateway.is_none());
        if let Some(spare) = self.spare.take() {
            spare.abort();
        }
        if external
            && let Ok(handle) = tokio::runtime::Handle::try_current()
            && let Some(k) = self.kernel.take()
        {
            handle.spawn(k.shutdown());
        }
    }
}

/// Delete a kernel in the background.
fn discard(kernel: KernelSession) {
    tokio::spawn(kernel.shutdown());
}

/// Shut a replaced host (and its kernel) down in the background.
fn discard_host(host: Host, kernel: Option<KernelSession>) {
    tokio::spawn(host.shutdown(kernel.into_iter().collect()));
}

impl CodeExecutor {
    /// A builder with defaults.
    pub fn builder() -> CodeExecutorBuilder {
        CodeExecutorBuilder::default()
    }

    /// Start the gateway (or connect to the external one) and the first kernel.
    pub async fn start(&self) -> Result<()> {
        let mut state = self.shared.state.lock().await;
        if state.is_some() {
            return Ok(());
        }
        *state = Some(self.launch().await?);
        Ok(())
    }

    async fn launch(&self) -> Result<Running> {
        let c = &self.shared.config;
        let working_dir = match &c.working_dir {
            Some(d) => d.clone(),
            None => std::env::current_dir()
                .map_err(|e| Error::io("reading the current directory", e))?,
        };
        let working_dir = std::fs::canonicalize(&working_dir).map_err(|e| {
            Error::Config(format!(
                "the working directory {} is not usable: {e}",
                working_dir.display()
            ))
        })?;
        // Kernel code may have replaced images/ (or a folder above it) with a link, in this
        // session or an earlier one: below the workspace, nothing is followed.
        let images_dir = crate::fsutil::Anchored::new(
            &match &c.images_dir {
                Some(d) if d.is_relative() => working_dir.join(d),
                Some(d) => d.clone(),
                None => working_dir.join("images"),
            },
            &working_dir,
        );
        let home = pyenv::ipybox_home()?;
        let registry = Registry::load(&home, &working_dir)?;
        let approvals = Arc::new(Approvals::new(c.approval_timeout));
        let mut sessions = Sessions::new(working_dir.clone(), c.mcp_connect_timeout)
            .with_call_timeout(c.mcp_call_timeout);
        if c.sandbox.is_some() {
            // Sandboxed code can write the workspace: the ${VAR}s of servers ipybox starts on
            // the host come from the .env of the session's start, never from a later one.
            sessions = sessions.with_fixed_variables(Variables::load(Some(&working_dir))?);
        }
        let tools = Arc::new(ToolServer::new(
            registry.servers.clone(),
            sessions,
            approvals.clone(),
        ));
        let launcher =
            Arc::new(Launcher::new(c.clone(), home, working_dir.clone(), tools.clone()).await?);
        let (host, kernel) = launcher.start_host_with_kernel().await?;
        let mut running = Running {
            launcher,
            host: Some(host),
            kernel: Some(kernel),
            spare: None,
            images_dir,
            tools,
            approvals,
        };
        running.ensure_spare();
        Ok(running)
    }

    /// Stop the kernels and the gateway. The executor can be started again.
    pub async fn stop(&self) -> Result<()> {
        let running = self.shared.state.lock().await.take();
        if let Some(r) = running {
            r.shutdown().await;
        }
        Ok(())
    }

    /// Process id of the gateway ipybox started (`None` when stopped or external); its
    /// kernels are its descendants.
    pub async fn gateway_pid(&self) -> Option<u32> {
        self.shared
            .state
            .lock()
            .await
            .as_ref()
            .and_then(|r| r.host.as_ref())
            .and_then(|h| h.gateway.as_ref())
            .and_then(crate::kernel::gateway::Gateway::pid)
    }

    /// Is the executor started?
    pub async fn is_running(&self) -> bool {
        self.shared.state.lock().await.is_some()
    }

    /// Replace the kernel with a fresh one: no variables, no imports. Near-instant when the
    /// spare kernel is ready; the old kernel is deleted in the background. With a sandbox,
    /// the whole sandbox is replaced: nothing the old kernel started survives.
    pub async fn reset(&self) -> Result<()> {
        let mut state = self.shared.state.lock().await;
        let running = state.as_mut().ok_or(Error::NotRunning)?;
        running.replace_kernel().await?;
        running.ensure_spare();
        // MCP sessions restart lazily on their next call.
        let tools = running.tools.clone();
        tokio::spawn(async move { tools.reset().await });
        Ok(())
    }

    /// Generate the Python API of an MCP server into `<working dir>/mcptools/<name>/` and
    /// register the server for this workspace, so kernel code can call its tools (now, if
    /// the executor runs, and in later sessions on the same workspace).
    pub async fn register_mcp_server(
        &self,
        name: &str,
        params: &ServerParams,
    ) -> Result<Generated> {
        let c = &self.shared.config;
        let working_dir = match &c.working_dir {
            Some(d) => d.clone(),
            None => std::env::current_dir()
                .map_err(|e| Error::io("reading the current directory", e))?,
        };
        let home = pyenv::ipybox_home()?;
        let mut registry = Registry::load(&home, &working_dir)?;
        let working_dir = registry.workspace.clone();
        let params = registry.pin_srt_policy(name, params, &working_dir)?;
        // A running session resolves ${VAR}s the way its tool server does: a sandboxed one
        // from the snapshot taken at its start, never from a .env its kernel may have written.
        let tools = self
            .shared
            .state
            .lock()
            .await
            .as_ref()
            .map(|r| r.tools.clone());
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
        registry.insert(name, params.clone())?;
        if let Some(state) = tools {
            state.set_server(name, params);
        }
        Ok(generated)
    }

    /// `pip install spec` into the kernels' Python environment; the next import in the
    /// kernel finds it. pip runs on the host, isolated from the workspace; with the sandbox
    /// on it installs wheels from an index or URL only (no build script, no local path).
    /// Returns pip's output.
    pub async fn install_package(&self, spec: &str) -> Result<String> {
        let c = &self.shared.config;
        let python = c.python.clone();
        let progress = c.progress;
        let env = tokio::task::spawn_blocking(move || pyenv::resolve(python.as_deref(), progress))
            .await
            .map_err(|e| Error::PythonEnv(format!("provisioning failed: {e}")))??;
        pyenv::pip_install(env.python(), spec, c.sandbox.is_some()).await
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
            chunks: false,
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

    /// Run `code`, streaming events: [`Event::Chunk`]s (when asked for) and the
    /// [`Event::Result`] last, or an error. Dropping the stream interrupts the execution.
    pub fn stream(&self, code: &str, options: StreamOptions) -> ExecutionStream {
        self.spawn_execution(code, options, false)
    }

    fn spawn_execution(
        &self,
        code: &str,
        options: StreamOptions,
        auto_approve: bool,
    ) -> ExecutionStream {
        let (tx, rx) = mpsc::unbounded_channel();
        let shared = self.shared.clone();
        let code = code.to_owned();
        tokio::spawn(async move {
            let outcome = run_execution(&shared, &code, &options, auto_approve, &tx).await;
            let _ = tx.send(outcome.map(Event::Result));
        });
        ExecutionStream { rx }
    }
}

/// The events of one execution; see [`CodeExecutor::stream`].
#[derive(Debug)]
pub struct ExecutionStream {
    rx: mpsc::UnboundedReceiver<Result<Event>>,
}

impl Stream for ExecutionStream {
    type Item = Result<Event>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

enum Stop {
    Finished(crate::kernel::messages::ExecuteReply),
    Died(String),
    TimedOut,
    Cancelled,
}

async fn run_execution(
    shared: &Shared,
    code: &str,
    options: &StreamOptions,
    auto_approve: bool,
    out: &mpsc::UnboundedSender<Result<Event>>,
) -> Result<CodeExecutionResult> {
    let mut state = shared.state.lock().await;
    let running = state.as_mut().ok_or(Error::NotRunning)?;
    let mut collector = OutputCollector::new(running.images_dir.clone());
    // Tool calls made by this execution's code come here for approval.
    let (_listening, mut tool_events) = running.approvals.listen();
    let kernel = running.kernel().await?;
    let (msg_id, mut events) = kernel.execute(&ExecuteRequest::new(code))?;
    let mut reply = None;
    let mut idle = false;
    let mut deadline = options.timeout.map(|t| tokio::time::Instant::now() + t);
    // Time spent waiting for approval decisions does not count against the timeout.
    let mut pending = std::collections::HashSet::new();
    let mut paused_since = None;
    let stop = loop {
        if idle && let Some(r) = reply.take() {
            break Stop::Finished(r);
        }
        let running_deadline = if pending.is_empty() { deadline } else { None };
        let event = tokio::select! {
            e = events.recv() => e,
            Some(t) = tool_events.recv() => {
                match t {
                    ToolEvent::Requested(request) => {
                        if pending.is_empty() {
                            paused_since = Some(tokio::time::Instant::now());
                        }
                        pending.insert(request.id());
                        if let Some(handler) = &shared.config.approval_handler {
                            tokio::spawn(handler.handle(request));
                        } else if auto_approve {
                            request.accept();
                        } else if let Err(e) = out.send(Ok(Event::ApprovalRequest(request)))
                            && let Ok(Event::ApprovalRequest(r)) = e.0
                        {
                            // Nobody listens to the stream any more.
                            r.reject();
                        }
                    }
                    ToolEvent::Settled(id) => {
                        if pending.remove(&id) && pending.is_empty()
                            && let (Some(d), Some(since)) = (deadline.as_mut(), paused_since.take())
                        {
                            *d += since.elapsed();
                        }
                    }
                }
                continue;
            }
            _ = sleep_until(running_deadline) => break Stop::TimedOut,
            _ = out.closed() => break Stop::Cancelled,
        };
        match event {
            Some(KernelEvent::Output(content)) => {
                if let Some(text) = collector.push(content)
                    && options.chunks
                {
                    let _ = out.send(Ok(Event::Chunk(text)));
                }
            }
            Some(KernelEvent::Reply(r)) => reply = Some(r),
            Some(KernelEvent::Idle) => idle = true,
            Some(KernelEvent::Died(reason)) => break Stop::Died(reason),
            None => break Stop::Died("the connection to the kernel closed".into()),
        }
    };
    let reply = match stop {
        Stop::Finished(reply) => reply,
        Stop::Died(reason) => {
            kernel.forget(&msg_id);
            running.retire_kernel().await;
            return Err(Error::KernelDied {
                reason,
                output: Box::new(collector.finish()),
            });
        }
        Stop::TimedOut | Stop::Cancelled => {
            // Interrupt, then let the kernel finish the request so its output and state stay
            // consistent; a kernel that ignores the interrupt is replaced.
            if let Err(e) = kernel.interrupt().await {
                tracing::warn!(error = %e, "interrupting the kernel failed");
            }
            let grace = tokio::time::Instant::now() + shared.config.interrupt_grace;
            while reply.is_none() || !idle {
                match tokio::time::timeout_at(grace, events.recv()).await {
                    Ok(Some(KernelEvent::Output(c))) => {
                        collector.push(c);
                    }
                    Ok(Some(KernelEvent::Reply(r))) => reply = Some(r),
                    Ok(Some(KernelEvent::Idle)) => idle = true,
                    Ok(Some(KernelEvent::Died(_))) | Ok(None) | Err(_) => break,
                }
            }
            let settled = reply.is_some() && idle;
            kernel.forget(&msg_id);
            if !settled {
                running.retire_kernel().await;
            }
            if matches!(stop, Stop::Cancelled) {
                return Err(Error::Config("the execution was cancelled".into()));
            }
            return Err(Error::Timeout {
                timeout: options.timeout.unwrap_or_default(),
                output: Box::new(collector.finish()),
                kernel_restarted: !settled,
            });
        }
    };
    kernel.forget(&msg_id);
    let output = collector.finish();
    match reply.status.as_str() {
        "ok" => Ok(CodeExecutionResult {
            text: output.text,
            images: output.images,
            image_data: collector.saved_images(),
        }),
        _ => {
            let error = collector
                .take_error()
                .unwrap_or_else(|| reply_error(&reply));
            Err(Error::CodeExecution {
                error: Box::new(error),
                output: Box::new(output),
            })
        }
    }
}

fn reply_error(reply: &crate::kernel::messages::ExecuteReply) -> PythonError {
    if reply.status == "aborted" {
        return PythonError {
            name: "ExecutionAborted".into(),
            value: "the kernel aborted the execution".into(),
            traceback: String::new(),
            raw_traceback: Vec::new(),
        };
    }
    python_error(&ErrorContent {
        ename: reply.ename.clone().unwrap_or_default(),
        evalue: reply.evalue.clone().unwrap_or_default(),
        traceback: reply.traceback.clone().unwrap_or_default(),
    })
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
