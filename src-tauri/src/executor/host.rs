//! Where kernels run: a [`Host`] is a gateway (ours, maybe inside a sandbox, or an external
//! server), the tool-server listener its kernels reach, and how to start a kernel there. The
//! [`Launcher`] makes hosts for one started executor.
//!
//! Without a sandbox one host serves the whole session, and a reset swaps kernels on it.
//! With a sandbox every fresh kernel gets a fresh host: its own srt sandbox, gateway, state
//! directory and tool-server token. Kernels in one sandbox share its processes, so code
//! could leave a process behind that reaches the next kernel (through the gateway, or the
//! kernel's connection file); a reset that replaces the whole sandbox leaves nothing of the
//! previous kernel but the workspace's files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::Config;
use crate::error::{Error, Result};
use crate::events::{Events, SessionEvent};
use crate::kernel::api::{Endpoint, GatewayApi};
use crate::kernel::enclosure::Enclosure;
use crate::kernel::gateway::{Gateway, GatewayLaunch, KERNEL_NAME};
use crate::kernel::messages::{ExecuteRequest, ReplyStatus};
use crate::kernel::session::{KernelEvent, KernelSession};
use crate::pyenv::{self, Progress, PythonEnv};
use crate::sandbox;
use crate::sandbox::access::Checker;
use crate::sandbox::refusals::{self, Refusal};

const KERNEL_INIT: &str = include_str!("../../python/kernel_init.py");

/// What it takes to start one kernel.
#[derive(Debug, Clone)]
pub(super) struct KernelSpec {
    name: Option<String>,
    env: BTreeMap<String, String>,
    init_code: String,
    ready_timeout: Duration,
}

impl KernelSpec {
    pub(super) async fn start(&self, api: &GatewayApi) -> Result<KernelSession> {
        let session =
            KernelSession::start(api, self.name.as_deref(), &self.env, self.ready_timeout).await?;
        let (msg_id, mut events) = session.execute(&ExecuteRequest {
            silent: true,
            store_history: false,
            ..ExecuteRequest::new(&self.init_code)
        })?;
        let init = async {
            let reply = loop {
                match events.recv().await {
                    Some(KernelEvent::Done(reply)) => break reply,
                    Some(KernelEvent::Output(_) | KernelEvent::Input { .. }) => {}
                    Some(KernelEvent::Died(reason)) => return Err(reason),
                    None => return Err("connection closed".to_owned()),
                }
            };
            match reply.status {
                ReplyStatus::Ok => Ok(()),
                _ => Err(format!(
                    "{}: {}",
                    reply.ename.unwrap_or_default(),
                    reply.evalue.unwrap_or_default()
                )),
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
        Err(Error::kernel_start(failure))
    }
}

/// How long the channels of a kernel on someone else's server are reconnected after the
/// connection drops (a network hiccup, a proxy's idle timeout), with the same session id so
/// that the server replays what the kernel sent meanwhile.
const REMOTE_RECONNECT: Duration = Duration::from_secs(30);

/// A gateway and the spec of its kernels.
#[derive(Debug)]
pub(super) struct Host {
    pub(super) api: GatewayApi,
    /// `None` for an external gateway.
    pub(super) gateway: Option<Gateway>,
    pub(super) spec: KernelSpec,
    state_dir: Option<PathBuf>,
    /// The sandbox's policy, to check what a failed cell reports as blocked.
    pub(super) checker: Option<Arc<Checker>>,
    /// Where the domains the sandbox's proxy refuses are told (`None` without a sandbox).
    pub(super) net_blocks: Option<Arc<NetBlocks>>,
}

/// What a sandbox's proxy refuses, as it comes.
type Refused = mpsc::UnboundedReceiver<Refusal>;

/// The domains a sandbox's proxy refused, as srt recorded them, told as blocks of the
/// execution that runs (or ran last): a refusal comes from srt, not from the cell, and
/// reaches ipybox before the cell's error does.
#[derive(Debug, Default)]
pub(super) struct NetBlocks {
    current: std::sync::Mutex<Attribution>,
}

/// The execution refusals are told to, and the blocks told it (none twice).
#[derive(Debug, Default)]
struct Attribution {
    execution: Option<(String, Events)>,
    told: Vec<String>,
}

/// The most blocks one execution is told of: code asking for many hosts (a crawler, a
/// loop) must not flood the window with offers.
const BLOCKS_PER_EXECUTION: usize = 20;

impl NetBlocks {
    /// Refusals from now on are execution `id`'s.
    pub(super) fn attribute(&self, id: &str, events: &Events) {
        if let Ok(mut current) = self.current.lock() {
            *current = Attribution {
                execution: Some((id.to_owned(), events.clone())),
                told: Vec::new(),
            };
        }
    }

    /// Tell each refusal of `refusals` the policy (`checker`) agrees is a block.
    fn watch(self: Arc<Self>, mut refusals: Refused, checker: Arc<Checker>) {
        tokio::spawn(async move {
            while let Some(refusal) = refusals.recv().await {
                let Some(block) = refusals::assess(&refusal, &checker) else {
                    continue;
                };
                let Ok(mut current) = self.current.lock() else {
                    return;
                };
                let Attribution {
                    execution: Some((id, events)),
                    told,
                } = &mut *current
                else {
                    continue;
                };
                if told.len() >= BLOCKS_PER_EXECUTION || told.contains(&block.path) {
                    continue;
                }
                told.push(block.path.clone());
                events.send(SessionEvent::SandboxBlocked {
                    execution_id: id.clone(),
                    block: Box::new(block),
                });
            }
        });
    }
}

impl Host {
    /// Start a kernel here, with the gateway's log in the error when it fails.
    pub(super) async fn start_kernel(&self) -> Result<KernelSession> {
        self.spec.start(&self.api).await.map_err(|e| {
            match self.gateway.as_ref().map(|g| g.log_tail(2000)) {
                Some(log) => Error::kernel_start(format!("{e}. The gateway's log:\n{log}")),
                None => e,
            }
        })
    }

    /// Stop its gateway (its kernels with it) or delete `kernels` on an external one, and
    /// remove its state.
    pub(super) async fn shutdown(mut self, kernels: Vec<KernelSession>) {
        match self.gateway.take() {
            // Our own gateway: stopping it ends its kernels (they are signalled first).
            Some(mut gw) => {
                for k in kernels {
                    k.close().await;
                }
                gw.stop().await;
            }
            // Someone else's server: delete what we created there.
            None => {
                for k in kernels {
                    k.shutdown().await;
                }
            }
        }
        if let Some(dir) = self.state_dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        // Not shut down explicitly: the gateway's own Drop kills its process tree.
        if let Some(dir) = self.state_dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Makes [`Host`]s for one started executor.
#[derive(Debug)]
pub(super) struct Launcher {
    config: Config,
    /// `None` with an external gateway.
    python: Option<PythonEnv>,
    home: PathBuf,
    working_dir: PathBuf,
    /// The kernels' environment.
    kernel_env: BTreeMap<String, String>,
}

impl Launcher {
    pub(super) async fn new(
        config: Config,
        home: PathBuf,
        working_dir: PathBuf,
    ) -> Result<Launcher> {
        if config.sandbox.is_some() && config.external_gateway.is_some() {
            return Err(Error::config(
                "the sandbox runs the gateway ipybox starts; it cannot be combined with an external gateway URL",
            ));
        }
        let python = match &config.external_gateway {
            Some(_) => None,
            None => {
                let python = config.python.clone();
                let progress = match &config.progress {
                    // A window shows a progress bar from the session's events.
                    Progress::Quiet => {
                        let events = config.events.clone();
                        Progress::Report(Arc::new(move |step: pyenv::ProvisionStep| {
                            events.send(SessionEvent::Provisioning {
                                step: step.step,
                                steps: step.steps,
                                message: step.message,
                            })
                        }))
                    }
                    other => other.clone(),
                };
                Some(
                    tokio::task::spawn_blocking(move || {
                        pyenv::resolve(python.as_deref(), progress)
                    })
                    .await
                    .map_err(|e| Error::python_env("provisioning failed").because(e))??,
                )
            }
        };
        let mut kernel_env = config.kernel_env.clone();
        kernel_env
            .entry("MPLBACKEND".into())
            .or_insert_with(|| "module://matplotlib_inline.backend_inline".into());
        Ok(Launcher {
            config,
            python,
            home,
            working_dir,
            kernel_env,
        })
    }

    /// The workspace whose generated modules kernels import over their channel: kernels on
    /// someone else's server may not see this machine's files.
    pub(super) fn remote_sources(&self) -> Option<Arc<PathBuf>> {
        self.config
            .external_gateway
            .as_ref()
            .map(|_| Arc::new(self.working_dir.clone()))
    }

    /// Does every fresh kernel get a fresh host (a sandbox of its own)?
    pub(super) fn isolated(&self) -> bool {
        self.config.sandbox.is_some()
    }

    /// Keep a spare kernel (or, sandboxed, a spare host) ready in the background?
    pub(super) fn spare(&self) -> bool {
        self.config.spare_kernel
    }

    /// Start a host: a gateway (or a connection to the external one).
    pub(super) async fn start_host(&self) -> Result<Host> {
        let c = &self.config;
        let mut checker = None;
        let mut refused = None;
        let (api, gateway, state_dir) = match (&c.external_gateway, &self.python) {
            (Some((url, token)), _) => {
                let endpoint = Endpoint::remote(url, token.clone(), &c.gateway_headers)?;
                let api = GatewayApi::new(endpoint, c.connector.clone())
                    .reconnecting_for(REMOTE_RECONNECT);
                api.info().await.map_err(|e| {
                    Error::gateway(format!("the gateway at {url} is not reachable")).because(e)
                })?;
                (api, None, None)
            }
            (None, Some(python)) => {
                let state_dir = new_state_dir(&self.home)?;
                let started = match self.gateway_launch(python, &state_dir) {
                    Ok((launch, c, r)) => {
                        checker = c;
                        refused = r;
                        Gateway::start(launch).await
                    }
                    Err(e) => Err(e),
                };
                match started {
                    Ok(g) => (g.api().clone(), Some(g), Some(state_dir)),
                    Err(e) => {
                        let _ = std::fs::remove_dir_all(&state_dir);
                        return Err(e);
                    }
                }
            }
            (None, None) => return Err(Error::NotRunning),
        };
        let mut env = self.kernel_env.clone();
        if c.external_gateway.is_some()
            && !env.contains_key("KERNEL_USERNAME")
            && let Some(user) = std::env::var_os("USER").and_then(|u| u.into_string().ok())
        {
            // Who asks, as JupyterLab tells a gateway: Enterprise Gateway authorizes (and
            // may impersonate) by it.
            env.insert("KERNEL_USERNAME".into(), user);
        }
        let init_code = KERNEL_INIT
            .replace(
                "@@ENV@@",
                &serde_json::to_string(&env).unwrap_or_else(|_| "{}".into()),
            )
            .replace(
                "@@WORKING_DIR@@",
                &serde_json::to_string(&self.working_dir).unwrap_or_else(|_| "None".into()),
            )
            // Kernels on someone else's server import the generated modules over their
            // channel (they may not see this machine's files).
            .replace(
                "@@REMOTE@@",
                if c.external_gateway.is_some() {
                    "True"
                } else {
                    "False"
                },
            );
        // The module the Variables tab and data grid ask (`executor::variables`), made from
        // its source as a module of its own: no name lands in the user namespace.
        let init_code = format!(
            "{init_code}\nexec(compile({source}, {file:?}, 'exec'), __import__('sys').modules.setdefault({module:?}, __import__('types').ModuleType({module:?})).__dict__)\n",
            source =
                serde_json::to_string(super::variables::SOURCE).unwrap_or_else(|_| "''".into()),
            file = format!("<{}>", super::variables::MODULE),
            module = super::variables::MODULE,
        );
        let spec = KernelSpec {
            name: gateway.as_ref().map(|_| KERNEL_NAME.to_owned()),
            env,
            init_code,
            ready_timeout: c.kernel_ready_timeout,
        };
        let net_blocks = match (refused, &checker) {
            (Some(refused), Some(checker)) => {
                let net = Arc::new(NetBlocks::default());
                net.clone().watch(refused, checker.clone());
                Some(net)
            }
            _ => None,
        };
        Ok(Host {
            api,
            gateway,
            spec,
            state_dir,
            checker,
            net_blocks,
        })
    }

    /// A new host with a kernel started on it.
    pub(super) async fn start_host_with_kernel(&self) -> Result<(Host, KernelSession)> {
        let host = self.start_host().await?;
        match host.start_kernel().await {
            Ok(k) => Ok((host, k)),
            Err(e) => {
                host.shutdown(Vec::new()).await;
                Err(e)
            }
        }
    }

    fn gateway_launch(
        &self,
        python: &PythonEnv,
        state_dir: &Path,
    ) -> Result<(GatewayLaunch, Option<Arc<Checker>>, Option<Refused>)> {
        let c = &self.config;
        let (home, working_dir) = (&self.home, &self.working_dir);
        let mut gw_env = BTreeMap::new();
        // The kernels' environment first on their PATH, so `!pip` and friends act on it.
        let mut path = match &c.kernel_python {
            Some(k) => {
                let mut p = k
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default()
                    .into_os_string();
                p.push(":");
                p.push(python.bin_dir());
                p
            }
            None => python.bin_dir().into_os_string(),
        };
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
                let session = sandbox::prepare_session(
                    options,
                    home,
                    working_dir,
                    state_dir,
                    &mplconfig,
                    python.python(),
                    c.kernel_python.as_deref(),
                )?;
                gw_env.extend(session.gateway_env);
                process_env_whitelist.extend(session.inherited_env);
                Some(session.launch)
            }
            None => None,
        };
        let kernel_env_whitelist: Vec<String> = self.kernel_env.keys().cloned().collect();
        let checker = sandbox_launch.as_ref().and_then(|l| l.checker.clone());
        let refused = sandbox_launch
            .as_ref()
            .and_then(|l| l.refusals.as_ref())
            .and_then(|r| r.watch());
        let launch = GatewayLaunch {
            python: python.python().to_path_buf(),
            kernel_python: c.kernel_python.clone(),
            host: c.gateway_host.clone(),
            port: c.gateway_port,
            working_dir: working_dir.to_path_buf(),
            state_dir: state_dir.to_path_buf(),
            env: gw_env,
            process_env_whitelist,
            kernel_env_whitelist,
            startup_timeout: c.startup_timeout,
            log_level: c.log_level.clone(),
            wrapper: c.wrapper.clone(),
            connector: c.connector.clone(),
            enclosure: sandbox_launch.map(|l| Arc::new(l) as Arc<dyn Enclosure>),
        };
        Ok((launch, checker, refused))
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
            // Only the directories of processes that are certainly gone: a session whose
            // pid file cannot be read (being written) is left alone.
            if pid.is_some_and(|p| !crate::process::pid_exists(p)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn refusals_are_told_to_the_running_execution_once_each_and_not_without_end() {
        let ws = tempfile::tempdir().expect("tempdir");
        let policy =
            serde_json::json!({"network": {"allowedDomains": ["pypi.org"], "deniedDomains": []}});
        let checker = Arc::new(
            Checker::new(
                policy,
                ws.path(),
                ws.path(),
                &sandbox::SessionPaths::default(),
            )
            .expect("a checker"),
        );
        let (tx, rx) = mpsc::unbounded_channel();
        let net = Arc::new(NetBlocks::default());
        net.clone().watch(rx, checker);
        let events = Events::default();
        let mut heard = events.subscribe();
        let refusal = |host: &str| Refusal {
            host: host.into(),
            port: 443,
        };
        // Before any execution: nobody to tell.
        let settle = || tokio::time::sleep(std::time::Duration::from_millis(100));
        tx.send(refusal("early.example")).expect("sent");
        settle().await;
        net.attribute("e1", &events);
        for host in ["a.example", "pypi.org", "a.example"] {
            tx.send(refusal(host)).expect("sent");
        }
        for i in 0..50 {
            tx.send(refusal(&format!("h{i}.example"))).expect("sent");
        }
        settle().await;
        net.attribute("e2", &events);
        tx.send(refusal("a.example")).expect("sent");
        drop(tx);
        let mut told = Vec::new();
        while let Ok(Ok(event)) =
            tokio::time::timeout(std::time::Duration::from_millis(500), heard.recv()).await
        {
            if let SessionEvent::SandboxBlocked {
                execution_id,
                block,
            } = event
            {
                told.push((execution_id, block.path));
            }
        }
        let e1: Vec<&str> = told
            .iter()
            .filter(|(id, _)| id == "e1")
            .map(|(_, p)| p.as_str())
            .collect();
        assert_eq!(e1.len(), BLOCKS_PER_EXECUTION, "capped: {e1:?}");
        assert_eq!(e1[0], "a.example", "told once; an allowed host is no block");
        assert_eq!(e1[1], "h0.example");
        assert_eq!(
            told.last().map(|(id, p)| (id.as_str(), p.as_str())),
            Some(("e2", "a.example")),
            "the next execution hears of it again"
        );
    }
}
