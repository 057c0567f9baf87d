//! Building a [`CodeExecutor`]: its configuration, and the remote gateways it may run on.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::Serialize;

use super::{CodeExecutor, Shared, millis};
use crate::elicitation::{Elicitation, Elicitations};
use crate::error::{Error, Result};
use crate::events::Events;
use crate::kernel::connector::{HostConnector, SharedConnector};
use crate::pyenv::Progress;
use crate::sandbox::SandboxOptions;
use crate::tools::ApprovalHandler;

/// Configuration of a [`CodeExecutor`]; see [`CodeExecutorBuilder`].
#[derive(Debug, Clone)]
pub(super) struct Config {
    pub(super) kernel_env: BTreeMap<String, String>,
    pub(super) images_dir: Option<PathBuf>,
    /// Set by `build()` (the current directory when none was given); read it with
    /// [`Config::working_dir`].
    pub(super) working_dir: Option<PathBuf>,
    pub(super) log_level: String,
    pub(super) gateway_host: String,
    pub(super) gateway_port: Option<u16>,
    pub(super) external_gateway: Option<(String, Option<String>)>,
    pub(super) gateway_headers: Vec<String>,
    pub(super) python: Option<PathBuf>,
    /// The interpreter kernels run, when not the gateway's.
    pub(super) kernel_python: Option<PathBuf>,
    pub(super) startup_timeout: Duration,
    pub(super) kernel_ready_timeout: Duration,
    pub(super) interrupt_grace: Duration,
    pub(super) spare_kernel: bool,
    pub(super) connector: SharedConnector,
    pub(super) wrapper: Vec<OsString>,
    pub(super) progress: Progress,
    /// Milliseconds; shared with the session's approvals, so a change applies at once.
    pub(super) approval_timeout: Arc<AtomicU64>,
    /// The MCP client of the agent whose code this session runs (an agent's session).
    pub(super) client: Arc<Mutex<Option<crate::definition::Client>>>,
    pub(super) approval_handler: Option<Arc<dyn ApprovalHandler>>,
    pub(super) mcp_connect_timeout: Duration,
    pub(super) mcp_call_timeout: Duration,
    pub(super) sandbox: Option<SandboxOptions>,
    pub(super) events: Events,
    /// The session's questions from servers, and who answers them (set by `build()`).
    pub(super) elicitations: Arc<Elicitations>,
}

impl Config {
    /// The session's workspace, as `build()` resolved it.
    pub(super) fn working_dir(&self) -> Result<PathBuf> {
        self.working_dir.clone().ok_or_else(|| {
            Error::config(
                "no working directory: none was given and the current directory could not be read",
            )
        })
    }
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
#[cfg_attr(test, derive(ts_rs::TS))]
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
                kernel_python: None,
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
                elicitations: Arc::new(Elicitations::new(Elicitation::Off, Events::default())),
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

    /// The interpreter kernels run (default: the gateway's). It needs only `ipykernel`: the
    /// gateway stays in the [`python`](Self::python) environment, and only the kernelspec
    /// points here. Sandboxed, its environment is readable and not writable by kernels.
    pub fn kernel_python(mut self, python: impl Into<PathBuf>) -> Self {
        self.config.kernel_python = Some(python.into());
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

    /// Who answers the questions MCP servers ask during tool calls (default
    /// [`Elicitation::Off`]: servers are not offered elicitation, and a question one asks
    /// anyway is declined with a reason the server sees).
    pub fn elicitation(mut self, by: Elicitation) -> Self {
        self.config.elicitations = Arc::new(Elicitations::new(by, self.config.events.clone()));
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
    pub fn build(mut self) -> CodeExecutor {
        // The workspace is resolved once, here: a session's does not drift with the
        // process's current directory.
        if self.config.working_dir.is_none() {
            self.config.working_dir = std::env::current_dir().ok();
        }
        CodeExecutor {
            shared: Arc::new(Shared {
                config: self.config,
                commands: OnceLock::new(),
                snapshot: Arc::default(),
            }),
        }
    }
}
