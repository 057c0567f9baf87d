//! The Kernel Gateway process: start, readiness, logs, stop.
//!
//! ipybox runs `python -m kernel_gateway` bound to 127.0.0.1 with a random token, its
//! Jupyter and IPython directories in a per-session state directory (so it writes nothing
//! to the user's home and a sandbox can allow exactly that directory), a kernelspec whose
//! kernels die with the gateway, and the TCP_NODELAY patch from `gateway_config.py`.
//! The command can be wrapped (the sandbox puts `srt --settings …` in front) and the
//! readiness probe uses the same [`Connector`](super::connector::Connector) as the client.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::api::{Endpoint, GatewayApi};
use super::connector::SharedConnector;
use super::enclosure::{Enclosed, Enclosure};
use crate::error::{Error, Result};
use crate::process;

const CONFIG_TEMPLATE: &str = include_str!("../../python/gateway_config.py");
const KERNEL_LAUNCHER: &str = include_str!("../../python/kernel_launcher.py");
const IPYTHON_CONFIG: &str = include_str!("../../python/ipython_kernel_config.py");

/// The name of the kernelspec ipybox installs in the session's Jupyter data directory.
pub const KERNEL_NAME: &str = "ipybox";

/// How to launch a gateway.
#[derive(Debug, Clone)]
pub struct GatewayLaunch {
    /// Python interpreter of the environment with `jupyter-kernel-gateway` and `ipykernel`.
    pub python: PathBuf,
    /// The interpreter kernels run, when not `python` (it needs only `ipykernel`).
    pub kernel_python: Option<PathBuf>,
    /// Address to bind (`127.0.0.1` unless the user asks otherwise).
    pub host: String,
    /// Port to bind; a free one when `None`.
    pub port: Option<u16>,
    /// Working directory of the gateway and its kernels.
    pub working_dir: PathBuf,
    /// Per-session state directory (Jupyter/IPython dirs, config, log).
    pub state_dir: PathBuf,
    /// The gateway's whole environment: nothing of ipybox's own environment leaks in
    /// unless it is listed here.
    pub env: BTreeMap<String, String>,
    /// Names of variables the gateway passes from its own environment to kernels.
    pub process_env_whitelist: Vec<String>,
    /// Names of variables kernels may receive from a create-kernel request.
    pub kernel_env_whitelist: Vec<String>,
    /// Give up when `/api` does not answer within this time.
    pub startup_timeout: Duration,
    /// The gateway's log level (`DEBUG`, `INFO`, `WARN`, `ERROR`).
    pub log_level: String,
    /// Program and arguments to run the gateway command under.
    pub wrapper: Vec<OsString>,
    /// Where TCP connections to the gateway come from (replaced inside an enclosure).
    pub connector: SharedConnector,
    /// Run the gateway inside an enclosure (srt's sandbox).
    pub enclosure: Option<Arc<dyn Enclosure>>,
}

/// A running gateway owned by ipybox.
#[derive(Debug)]
pub struct Gateway {
    child: Option<Child>,
    api: GatewayApi,
    log_path: PathBuf,
    /// The live enclosure, if the gateway runs in one. Closed after the process tree is
    /// stopped.
    enclosed: Option<Arc<dyn Enclosed>>,
}

impl Gateway {
    /// Start a gateway and wait until `GET /api` answers.
    pub async fn start(launch: GatewayLaunch) -> Result<Gateway> {
        let token = crate::auth::new_token();
        prepare_state_dir(&launch, &token)?;
        let log_path = launch.state_dir.join("gateway.log");
        // A port picked by binding port 0 can be taken before the gateway binds it; retry
        // with a fresh one when that happens.
        let attempts = if launch.port.is_some() || launch.enclosure.is_some() {
            1
        } else {
            3
        };
        let mut last_err = None;
        for _ in 0..attempts {
            let port = match (launch.port, &launch.enclosure) {
                (Some(p), _) => p,
                (None, Some(enclosure)) => enclosure.port(),
                (None, None) => free_port(&launch.host)?,
            };
            let endpoint = Endpoint {
                host: launch.host.clone(),
                port,
                base_path: String::new(),
                token: Some(token.clone()),
                tls: false,
                headers: Vec::new(),
            };
            let mut child = spawn(&launch, port, &log_path)?;
            let (connector, enclosed) = if let Some(enclosure) = &launch.enclosure {
                let log = || read_tail(&log_path, 3000);
                match enclosure
                    .attach(&mut child, launch.startup_timeout, &log)
                    .await
                {
                    Ok(enclosed) => (enclosed.connector(), Some(enclosed)),
                    Err(e) => {
                        let _ = tokio::task::spawn_blocking(move || {
                            process::terminate_tree(&mut child, Duration::from_secs(2));
                        })
                        .await;
                        return Err(e);
                    }
                }
            } else {
                (launch.connector.clone(), None)
            };
            let api = GatewayApi::new(endpoint, connector);
            let mut gateway = Gateway {
                child: Some(child),
                api,
                log_path: log_path.clone(),
                enclosed,
            };
            match gateway.wait_ready(launch.startup_timeout).await {
                Ok(()) => return Ok(gateway),
                Err(e) => {
                    // The gateway says it in one of two ways, depending on its version
                    // and on whether it tried more ports.
                    let log = gateway.log_tail(4000);
                    let port_taken = log.contains("Address already in use")
                        || log.contains("no available port could be found");
                    gateway.stop().await;
                    if !port_taken {
                        return Err(e);
                    }
                    last_err = Some(e);
                }
            }
        }
        Err(last_err.unwrap_or_else(|| Error::gateway("the Kernel Gateway did not start")))
    }

    async fn wait_ready(&mut self, timeout: Duration) -> Result<()> {
        let started = Instant::now();
        let mut delay = Duration::from_millis(10);
        loop {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                return Err(Error::gateway(format!(
                    "the Kernel Gateway exited during start-up ({status}). Its log:\n{}",
                    self.log_tail(3000)
                )));
            }
            if self.api.info().await.is_ok() {
                tracing::debug!(elapsed = ?started.elapsed(), "gateway ready");
                return Ok(());
            }
            if started.elapsed() >= timeout {
                return Err(Error::gateway(format!(
                    "the Kernel Gateway did not answer within {:.0} s. Its log:\n{}",
                    timeout.as_secs_f64(),
                    self.log_tail(3000)
                )));
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 3 / 2).min(Duration::from_millis(50));
        }
    }

    /// The client for this gateway.
    pub fn api(&self) -> &GatewayApi {
        &self.api
    }

    /// The process id of the gateway (or of its wrapper), while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The last `max` bytes of the gateway's log.
    pub fn log_tail(&self, max: u64) -> String {
        read_tail(&self.log_path, max)
    }

    /// Stop the gateway and every process it started (SIGTERM, SIGKILL after 2 s).
    pub async fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let enclosed = self.enclosed.clone();
            let _ = tokio::task::spawn_blocking(move || {
                process::terminate_tree(&mut child, Duration::from_secs(2));
                if let Some(enclosed) = enclosed {
                    enclosed.close_and_wait(Duration::from_secs(4));
                }
            })
            .await;
        }
        self.enclosed.take();
    }

    /// Best-effort synchronous stop, for `Drop`.
    pub fn stop_blocking(&mut self) {
        if let Some(mut child) = self.child.take() {
            process::terminate_tree(&mut child, Duration::from_secs(2));
            if let Some(enclosed) = &self.enclosed {
                enclosed.close_and_wait(Duration::from_secs(4));
            }
        }
        self.enclosed.take();
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.stop_blocking();
    }
}

fn free_port(host: &str) -> Result<u16> {
    let listener = TcpListener::bind((host, 0))
        .map_err(|e| Error::gateway(format!("cannot find a free port on {host}")).because(e))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| Error::io("reading a bound address", e))
}

fn json_list(items: &[String]) -> String {
    serde_json::to_string(items).unwrap_or_else(|_| "[]".into())
}

fn prepare_state_dir(launch: &GatewayLaunch, token: &str) -> Result<()> {
    let state = &launch.state_dir;
    for sub in [
        "config",
        "data/kernels/ipybox",
        "runtime",
        "ipython/profile_default/startup",
        "ipython/profile_default/security",
        "ipython/profile_default/log",
        "ipython/profile_default/pid",
    ] {
        std::fs::create_dir_all(state.join(sub))
            .map_err(|e| Error::io(format!("creating {}", state.join(sub).display()), e))?;
    }
    let config = CONFIG_TEMPLATE
        .replace(
            "@@TOKEN@@",
            &serde_json::to_string(token).unwrap_or_default(),
        )
        .replace("@@PROCESS_ENV@@", &json_list(&launch.process_env_whitelist))
        .replace("@@KERNEL_ENV@@", &json_list(&launch.kernel_env_whitelist))
        .replace(
            "@@DROP_CAPABILITIES@@",
            if launch.enclosure.is_some() {
                "True"
            } else {
                "False"
            },
        );
    crate::fsutil::write_private(
        &state.join("config/jupyter_kernel_gateway_config.py"),
        config.as_bytes(),
    )?;
    crate::fsutil::write_private(
        &state.join("ipython/profile_default/ipython_kernel_config.py"),
        IPYTHON_CONFIG.as_bytes(),
    )?;
    // jupyter_core's one-time migration from IPython 3 looks for this marker; without it
    // the gateway tries to write it (and fails where the config directory is read-only).
    crate::fsutil::write_private(&state.join("config/migrated"), b"")?;
    let spec = serde_json::json!({
        "argv": [launch.kernel_python.as_ref().unwrap_or(&launch.python), "-c", KERNEL_LAUNCHER, "-f", "{connection_file}"],
        "display_name": "Python 3 (ipybox)",
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": { "debugger": false },
    });
    crate::fsutil::write_private(
        &state.join("data/kernels/ipybox/kernel.json"),
        serde_json::to_string_pretty(&spec)
            .unwrap_or_default()
            .as_bytes(),
    )
}

fn spawn(launch: &GatewayLaunch, port: u16, log_path: &Path) -> Result<Child> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path)
        .map_err(|e| Error::io(format!("opening {}", log_path.display()), e))?;
    let log_err = log
        .try_clone()
        .map_err(|e| Error::io("duplicating the log file", e))?;
    let mut args: Vec<OsString> = Vec::new();
    args.push(launch.python.clone().into_os_string());
    args.extend(
        [
            // Isolated: nothing from the working directory, PYTHONPATH or user site-packages
            // on the module path (a `kernel_gateway.py` kernel code left in the workspace
            // must not run). -u replaces PYTHONUNBUFFERED, which -I ignores.
            "-I".to_owned(),
            "-u".to_owned(),
            "-m".to_owned(),
            "kernel_gateway".to_owned(),
            format!("--KernelGatewayApp.ip={}", launch.host),
            format!("--KernelGatewayApp.port={port}"),
            format!("--KernelGatewayApp.log_level={}", launch.log_level),
        ]
        .map(OsString::from),
    );
    let mut all: Vec<OsString> = launch
        .enclosure
        .as_ref()
        .map(|e| e.wrapper())
        .unwrap_or_default();
    all.extend(launch.wrapper.iter().cloned());
    all.extend(args);
    let (program, rest) = (all[0].clone(), all[1..].to_vec());
    // An enclosure (srt) resolves its own protections (writes to .git/hooks, .bashrc,
    // .mcp.json, … are refused) against its working directory, so it starts in the
    // workspace; srt reads no code or configuration from there, and the gateway under it is
    // isolated (-I). Without one the gateway starts in the neutral directory, and its
    // kernels with it.
    let cwd = if launch.enclosure.is_some() {
        launch.working_dir.as_path()
    } else {
        process::neutral_dir()
    };
    let mut cmd = Command::new(&program);
    cmd.args(&rest)
        .current_dir(cwd)
        .env_clear()
        .envs(&launch.env)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err);
    let death_signal = launch
        .enclosure
        .as_ref()
        .map_or(libc::SIGKILL, |e| e.death_signal());
    let passed = launch.enclosure.as_ref().and_then(|e| e.passed_fd());
    process::spawn_supervised_passing(cmd, death_signal, passed).map_err(|e| {
        Error::gateway(format!(
            "cannot start the Kernel Gateway ({}): {e}",
            PathBuf::from(&program).display()
        ))
    })
}

fn read_tail(path: &Path, max: u64) -> String {
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::from("(no log)");
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(max)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).trim().to_owned();
    if text.is_empty() {
        String::from("(empty log)")
    } else {
        text
    }
}
