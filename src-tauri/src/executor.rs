//! [`CodeExecutor`]: the public API for running code in a stateful IPython kernel.
//!
//! Mirrors the Python ipybox's `CodeExecutor`: a builder, `start()`/`stop()`, `execute()`,
//! `stream()` with chunk events and the result last, `reset()`. One kernel is active at a
//! time; executions queue in call order (a fair lock) and never interleave. A spare kernel
//! is started in the background so `reset()` and recovery from a dead kernel are a swap.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
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
use crate::kernel::api::{Endpoint, GatewayApi};
use crate::kernel::connector::{HostConnector, SharedConnector};
use crate::kernel::gateway::{Gateway, GatewayLaunch, KERNEL_NAME};
use crate::kernel::messages::{ErrorContent, ExecuteRequest};
use crate::kernel::output::{OutputCollector, python_error};
use crate::kernel::session::{KernelEvent, KernelSession};
use crate::mcp::ServerParams;
use crate::mcp::params::Variables;
use crate::pyenv::{self, Progress};
use crate::registry::Registry;
use crate::sandbox::{self, SandboxOptions};
use crate::tools::{
    ApprovalHandler, ApprovalRequest, Approvals, Sessions, ToolEvent, ToolServer, ToolServerHandle,
};

const KERNEL_INIT: &str = include_str!("../python/kernel_init.py");

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
    api: GatewayApi,
    /// `None` for an external gateway.
    gateway: Option<Gateway>,
    kernel: Option<KernelSession>,
    spare: Option<JoinHandle<Result<KernelSession>>>,
    kernel_spec: KernelSpec,
    images_dir: crate::fsutil::Anchored,
    state_dir: Option<PathBuf>,
    tools: Option<ToolServerHandle>,
    approvals: Arc<Approvals>,
}

/// Kernel environment variables with the tool server's address and bearer token.
const TOOL_SERVER_VAR: &str = "IPYBOX_TOOL_SERVER";
const TOOL_TOKEN_VAR: &str = "IPYBOX_TOOL_TOKEN";

/// The running tool server and the token kernels present to it.
#[derive(Debug)]
struct StartedTools {
    handle: ToolServerHandle,
    token: String,
}

impl StartedTools {
    fn addr(&self) -> std::net::SocketAddr {
        self.handle.addr()
    }

    fn token(&self) -> &str {
        &self.token
    }
}

/// What it takes to start one kernel.
#[derive(Debug, Clone)]
struct KernelSpec {
    name: Option<String>,
    env: BTreeMap<String, String>,
    init_code: String,
    ready_timeout: Duration,
    spare: bool,
}

impl KernelSpec {
    async fn start(&self, api: &GatewayApi) -> Result<KernelSession> {
        let session =
            KernelSession::start(api, self.name.as_deref(), &self.env, self.ready_timeout).await?;
        let (msg_id, mut events) = session.execute(&ExecuteRequest {
            silent: true,
            store_history: false,
            ..ExecuteRequest::new(&self.init_code)
        })?;
        let init = async {
            let (mut reply, mut idle) = (None, false);
            while reply.is_none() || !idle {
                match events.recv().await {
                    Some(KernelEvent::Reply(r)) => reply = Some(r),
                    Some(KernelEvent::Idle) => idle = true,
                    Some(KernelEvent::Output(_)) => {}
                    Some(KernelEvent::Died(reason)) => return Err(reason),
                    None => return Err("connection closed".to_owned()),
                }
            }
            match reply {
                Some(r) if r.status == "ok" => Ok(()),
                Some(r) => Err(format!(
                    "{}: {}",
                    r.ename.unwrap_or_default(),
                    r.evalue.unwrap_or_default()
                )),
                None => Err("no reply".to_owned()),
            }
        };
        let outcome = tokio::time::timeout(self.ready_timeout, init).await;
        session.forget(&msg_id);
        let failure = match outcome {
            Ok(Ok(())) => return Ok(session),
            Ok(Err(reason)) => format!("initialising the kernel failed: {reason}"),
            Err(_) => "initialising the kernel timed out".to_owned(),
        };
        session.shutdown().await;
        Err(Error::KernelStart(failure))
    }
}

impl Running {
    /// Start a spare kernel in the background if there is none.
    fn ensure_spare(&mut self) {
        if self.kernel_spec.spare && self.spare.is_none() {
            let spec = self.kernel_spec.clone();
            let api = self.api.clone();
            self.spare = Some(tokio::spawn(async move { spec.start(&api).await }));
        }
    }

    /// A live kernel: the spare if it is ready and alive, else a new one.
    async fn fresh_kernel(&mut self) -> Result<KernelSession> {
        if let Some(spare) = self.spare.take() {
            match spare.await {
                Ok(Ok(k)) if !k.is_dead() => return Ok(k),
                Ok(Ok(k)) => discard(k),
                Ok(Err(e)) => tracing::warn!(error = %e, "the spare kernel failed to start"),
                Err(e) => tracing::warn!(error = %e, "the spare kernel task failed"),
            }
        }
        self.kernel_spec.start(&self.api).await
    }

    /// The active kernel, replacing a dead one.
    async fn kernel(&mut self) -> Result<&KernelSession> {
        if self.kernel.as_ref().is_some_and(KernelSession::is_dead)
            && let Some(old) = self.kernel.take()
        {
            discard(old);
        }
        if self.kernel.is_none() {
            let k = self.fresh_kernel().await?;
            self.kernel = Some(k);
            self.ensure_spare();
        }
        self.kernel.as_ref().ok_or(Error::NotRunning)
    }

    /// Drop the active kernel (it died or ignored an interrupt); the next execution uses a
    /// fresh one.
    fn retire_kernel(&mut self) {
        if let Some(k) = self.kernel.take() {
            discard(k);
        }
        self.ensure_spare();
    }

    async fn shutdown(mut self) {
        if let Some(tools) = self.tools.take() {
            tools.stop().await;
        }
        let kernels = self.take_kernels();
        match self.gateway.take() {
            // Our own gateway: stopping it ends its kernels (they are signalled first).
            Some(mut gw) => {
                for k in kernels {
                    if let Some(k) = k.await {
                        k.close().await;
                    }
                }
                gw.stop().await;
            }
            // Someone else's server: delete what we created there.
            None => {
                for k in kernels {
                    if let Some(k) = k.await {
                        k.shutdown().await;
                    }
                }
            }
        }
        if let Some(dir) = self.state_dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    /// The active kernel, and the spare once its start finishes (aborted instead when the
    /// gateway is ours and about to stop anyway).
    fn take_kernels(&mut self) -> Vec<impl Future<Output = Option<KernelSession>> + use<>> {
        let active = self.kernel.take();
        let spare = self.spare.take();
        let ours = self.gateway.is_some();
        let mut out = Vec::new();
        out.push(futures_util::future::Either::Left(async move { active }));
        out.push(futures_util::future::Either::Right(async move {
            let spare = spare?;
            if ours {
                spare.abort();
            }
            spare.await.ok()?.ok()
        }));
        out
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Not stopped explicitly: the gateway's own Drop kills its process tree; kernels on
        // an external server are deleted in the background if a runtime is still there.
        if self.gateway.is_none()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            for k in self.take_kernels() {
                handle.spawn(async move {
                    if let Some(k) = k.await {
                        k.shutdown().await;
                    }
                });
            }
        }
        if let Some(dir) = self.state_dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Delete a kernel in the background.
fn discard(kernel: KernelSession) {
    tokio::spawn(kernel.shutdown());
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
        if c.sandbox.is_some() && c.external_gateway.is_some() {
            return Err(Error::Config(
                "the sandbox runs the gateway ipybox starts; it cannot be combined with an external gateway URL".into(),
            ));
        }
        let mut env = c.kernel_env.clone();
        env.entry("MPLBACKEND".into())
            .or_insert_with(|| "module://matplotlib_inline.backend_inline".into());
        let mut env_keys: Vec<String> = env.keys().cloned().collect();
        env_keys.extend([TOOL_SERVER_VAR.to_owned(), TOOL_TOKEN_VAR.to_owned()]);

        let (api, gateway, state_dir) = match &c.external_gateway {
            Some((url, token)) => {
                let api =
                    GatewayApi::new(Endpoint::parse(url, token.clone())?, c.connector.clone());
                api.info().await.map_err(|e| {
                    Error::Gateway(format!("the gateway at {url} is not reachable: {e}"))
                })?;
                (api, None, None)
            }
            None => {
                let python = c.python.clone();
                let progress = c.progress;
                let env = tokio::task::spawn_blocking(move || {
                    pyenv::resolve(python.as_deref(), progress)
                })
                .await
                .map_err(|e| Error::PythonEnv(format!("provisioning failed: {e}")))??;
                let state_dir = new_state_dir(&home)?;
                let started =
                    match self.gateway_launch(&env, &home, &working_dir, &state_dir, env_keys) {
                        Ok(launch) => Gateway::start(launch).await,
                        Err(e) => Err(e),
                    };
                let gateway = match started {
                    Ok(g) => g,
                    Err(e) => {
                        let _ = std::fs::remove_dir_all(&state_dir);
                        return Err(e);
                    }
                };
                (gateway.api().clone(), Some(gateway), Some(state_dir))
            }
        };
        let tools = match self.start_tools(gateway.as_ref(), &registry, &working_dir, &approvals) {
            Ok(t) => t,
            Err(e) => {
                if let Some(mut gw) = gateway {
                    gw.stop().await;
                }
                if let Some(dir) = state_dir {
                    let _ = std::fs::remove_dir_all(dir);
                }
                return Err(e);
            }
        };
        env.insert(TOOL_SERVER_VAR.into(), tools.addr().to_string());
        env.insert(TOOL_TOKEN_VAR.into(), tools.token().to_owned());
        let init_code = KERNEL_INIT
            .replace(
                "@@ENV@@",
                &serde_json::to_string(&env).unwrap_or_else(|_| "{}".into()),
            )
            .replace(
                "@@WORKING_DIR@@",
                &serde_json::to_string(&working_dir).unwrap_or_else(|_| "None".into()),
            );
        let spec = KernelSpec {
            name: gateway.as_ref().map(|_| KERNEL_NAME.to_owned()),
            env,
            init_code,
            ready_timeout: c.kernel_ready_timeout,
            spare: c.spare_kernel,
        };
        let mut running = Running {
            api,
            gateway,
            kernel: None,
            spare: None,
            kernel_spec: spec,
            images_dir,
            state_dir,
            tools: Some(tools.handle),
            approvals,
        };
        match running.kernel_spec.start(&running.api).await {
            Ok(k) => running.kernel = Some(k),
            Err(e) => {
                let detail = running.gateway.as_ref().map(|g| g.log_tail(2000));
                running.shutdown().await;
                return Err(match detail {
                    Some(log) => Error::KernelStart(format!("{e}. The gateway's log:\n{log}")),
                    None => e,
                });
            }
        }
        running.ensure_spare();
        Ok(running)
    }

    /// The tool server: inside the gateway's sandbox when there is one, else on the
    /// listener the builder was given, else on a free port of 127.0.0.1.
    fn start_tools(
        &self,
        gateway: Option<&Gateway>,
        registry: &Registry,
        working_dir: &Path,
        approvals: &Arc<Approvals>,
    ) -> Result<StartedTools> {
        let c = &self.shared.config;
        let listener = match gateway.and_then(Gateway::sandbox_listener) {
            Some(bound) => bound.map_err(|e| {
                Error::Sandbox(format!(
                    "cannot open the tool server's port inside the sandbox: {e}"
                ))
            })?,
            None => match c.tool_listener.lock().ok().and_then(|mut l| l.take()) {
                Some(l) => l,
                None => std::net::TcpListener::bind("127.0.0.1:0")
                    .map_err(|e| Error::io("binding the tool server to 127.0.0.1", e))?,
            },
        };
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::io("configuring the tool server socket", e))?;
        let listener = tokio::net::TcpListener::from_std(listener)
            .map_err(|e| Error::io("registering the tool server socket", e))?;
        let token = uuid::Uuid::new_v4().simple().to_string();
        let mut sessions = Sessions::new(working_dir.to_path_buf(), c.mcp_connect_timeout)
            .with_call_timeout(c.mcp_call_timeout);
        if gateway.is_some_and(Gateway::is_sandboxed) {
            sessions = sessions.with_fixed_variables(Variables::load(Some(working_dir))?);
        }
        let state = Arc::new(ToolServer::new(
            token.clone(),
            registry.servers.clone(),
            sessions,
            approvals.clone(),
        ));
        let handle = ToolServerHandle::spawn(listener, state)
            .map_err(|e| Error::io("starting the tool server", e))?;
        Ok(StartedTools { handle, token })
    }

    fn gateway_launch(
        &self,
        env: &pyenv::PythonEnv,
        home: &Path,
        working_dir: &Path,
        state_dir: &Path,
        kernel_env_keys: Vec<String>,
    ) -> Result<GatewayLaunch> {
        let c = &self.shared.config;
        let mut gw_env = BTreeMap::new();
        let mut path = env.bin_dir().into_os_string();
        if let Some(p) = std::env::var_os("PATH") {
            path.push(":");
            path.push(p);
        }
        gw_env.insert("PATH".to_owned(), path.to_string_lossy().into_owned());
        for key in ["HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"] {
            if let Ok(v) = std::env::var(key) {
                gw_env.insert(key.to_owned(), v);
            }
        }
        gw_env
            .entry("LANG".to_owned())
            .or_insert_with(|| "C.UTF-8".to_owned());
        // Shared across sessions: matplotlib builds its font cache here once. A sandboxed
        // session gets a copy in its state directory instead: its kernels must not write
        // anything another session reads.
        let mplconfig = if c.sandbox.is_some() {
            sandbox::mplconfig_dir(state_dir)
        } else {
            home.join("mplconfig")
        };
        let dirs = [
            ("JUPYTER_CONFIG_DIR", state_dir.join("config")),
            ("JUPYTER_DATA_DIR", state_dir.join("data")),
            ("JUPYTER_RUNTIME_DIR", state_dir.join("runtime")),
            ("IPYTHONDIR", state_dir.join("ipython")),
            ("MPLCONFIGDIR", mplconfig.clone()),
        ];
        for (k, v) in dirs {
            gw_env.insert(k.to_owned(), v.to_string_lossy().into_owned());
        }
        gw_env.insert("JUPYTER_PLATFORM_DIRS".into(), "1".into());
        gw_env.insert("PYTHONUNBUFFERED".into(), "1".into());
        let mut process_env_whitelist: Vec<String> =
            gw_env.keys().filter(|k| *k != "PATH").cloned().collect();
        let sandbox_launch = match &c.sandbox {
            Some(options) => {
                let session =
                    sandbox::prepare_session(options, home, working_dir, state_dir, &mplconfig)?;
                gw_env.extend(session.gateway_env);
                process_env_whitelist.extend(session.inherited_env);
                Some(session.launch)
            }
            None => None,
        };
        Ok(GatewayLaunch {
            python: env.python().to_path_buf(),
            host: c.gateway_host.clone(),
            port: c.gateway_port,
            working_dir: working_dir.to_path_buf(),
            state_dir: state_dir.to_path_buf(),
            env: gw_env,
            process_env_whitelist,
            kernel_env_whitelist: kernel_env_keys,
            startup_timeout: c.startup_timeout,
            log_level: c.log_level.clone(),
            wrapper: c.wrapper.clone(),
            connector: c.connector.clone(),
            sandbox: sandbox_launch,
        })
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
            .and_then(|r| r.gateway.as_ref())
            .and_then(Gateway::pid)
    }

    /// Is the executor started?
    pub async fn is_running(&self) -> bool {
        self.shared.state.lock().await.is_some()
    }

    /// Replace the kernel with a fresh one: no variables, no imports. Near-instant when the
    /// spare kernel is ready; the old kernel is deleted in the background.
    pub async fn reset(&self) -> Result<()> {
        let mut state = self.shared.state.lock().await;
        let running = state.as_mut().ok_or(Error::NotRunning)?;
        let fresh = running.fresh_kernel().await?;
        if let Some(old) = running.kernel.replace(fresh) {
            discard(old);
        }
        running.ensure_spare();
        if let Some(tools) = &running.tools {
            // MCP sessions restart lazily on their next call.
            let state = tools.state().clone();
            tokio::spawn(async move { state.reset().await });
        }
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
            .and_then(|r| r.tools.as_ref())
            .map(|t| t.state().clone());
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
            running.retire_kernel();
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
                running.retire_kernel();
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

/// A fresh per-session state directory under `home/sessions`, removing those of ipybox
/// processes that are gone.
fn new_state_dir(home: &Path) -> Result<PathBuf> {
    let sessions = home.join("sessions");
    if let Ok(entries) = std::fs::read_dir(&sessions) {
        for entry in entries.flatten() {
            let pid = std::fs::read_to_string(entry.path().join("pid"))
                .ok()
                .and_then(|p| p.trim().parse::<u32>().ok());
            if pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists()) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let dir = sessions.join(uuid::Uuid::new_v4().simple().to_string());
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    std::fs::write(dir.join("pid"), std::process::id().to_string())
        .map_err(|e| Error::io(format!("writing {}", dir.join("pid").display()), e))?;
    Ok(dir)
}
