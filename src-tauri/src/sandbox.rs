//! Running the Kernel Gateway and its kernels inside `srt`, Anthropic's sandbox-runtime.
//!
//! On Linux srt wraps the command in bubblewrap: a read-only view of the file system with
//! writable and hidden paths from the policy, a fresh network namespace that reaches the
//! outside only through srt's domain-filtering proxy, a seccomp filter that forbids Unix
//! sockets. ipybox keeps every one of those walls and talks to the gateway through sockets
//! created inside the namespace ([`netns`]). Nothing of the host listens inside: kernel code
//! asks for tool calls over its own Jupyter channel, so it reaches nothing of the host at all.
//!
//! A missing piece (srt, Node.js, bubblewrap, socat, ripgrep), an invalid policy or a system
//! where joining the namespace is not allowed is an [`Error::Sandbox`]: ipybox never runs
//! unsandboxed when a sandbox was asked for. Finding and installing srt itself is
//! [`install`]'s.

pub mod access;
pub mod block;
/// Only the desktop app tries a policy before it applies it.
#[cfg(feature = "desktop")]
pub mod check;
pub mod danger;
pub mod grants;
mod install;
#[cfg(target_os = "linux")]
pub mod netns;
mod paths;
pub mod placeholders;
pub mod policy;
pub mod profile;
pub mod refusals;
pub mod runtime;
#[cfg(target_os = "linux")]
pub mod userns;

pub use install::{
    Srt, check_node, check_tools, install_srt, install_srt_in, locate_srt, managed_srt_dir,
    private_runtime, server_program,
};
pub use profile::{PolicyProblem, SandboxPolicy, Severity, ShippedProfile, shipped_profiles};

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[cfg(target_os = "linux")]
pub use netns::{NetnsConnector, NetnsHelper};

use crate::error::{Error, Result};
use crate::kernel::connector::SharedConnector;
use crate::kernel::enclosure::{AttachFuture, Enclosed, Enclosure};

/// Variables srt sets for the sandboxed command (its proxy, CA bundles for a TLS-inspecting
/// proxy, markers) that kernels must inherit from the gateway for allowed domains to work.
pub const SRT_ENV: [&str; 30] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "FTP_PROXY",
    "GRPC_PROXY",
    "RSYNC_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "ftp_proxy",
    "grpc_proxy",
    "DOCKER_HTTP_PROXY",
    "DOCKER_HTTPS_PROXY",
    "GIT_SSH_COMMAND",
    "GIT_CONFIG_PARAMETERS",
    "CLOUDSDK_PROXY_TYPE",
    "CLOUDSDK_PROXY_ADDRESS",
    "CLOUDSDK_PROXY_PORT",
    "CLOUDSDK_PROXY_USERNAME",
    "CLOUDSDK_PROXY_PASSWORD",
    "JAVA_TOOL_OPTIONS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "PIP_CERT",
    "SANDBOX_RUNTIME",
];

/// How to sandbox kernels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxOptions {
    /// A policy file (srt settings) that replaces ipybox's default kernel policy.
    pub policy: Option<PathBuf>,
    /// The `srt` program (default: `$IPYBOX_SRT`, the copy `ipybox setup --sandbox`
    /// installed, else `srt` on `PATH`).
    pub srt: Option<PathBuf>,
}

/// A sandbox set up for one gateway: the srt command and the policy file handed to it.
#[derive(Debug, Clone)]
pub struct SandboxLaunch {
    /// `srt --settings <state>/srt.json`, to run the gateway command under.
    pub wrapper: Vec<OsString>,
    /// The srt that runs it.
    pub srt: Srt,
    /// The workspace's write guards, held while this sandbox runs.
    pub guard: Option<Arc<placeholders::Guard>>,
    /// The policy as srt received it, made ready to tell what it blocks: a failed cell's
    /// path is checked against it ([`block`]) before anything is offered.
    pub checker: Option<Arc<access::Checker>>,
    /// The domains srt's proxy refuses, as srt records them ([`refusals`]); `None` when srt
    /// is not the npm package ipybox can run inside its reporter.
    pub refusals: Option<Arc<refusals::Refusals>>,
}

/// Locate srt, check its dependencies, render the policy for this session and write it to
/// `<state_dir>/srt.json`, with ipybox's own `paths`.
pub fn prepare(
    options: &SandboxOptions,
    home: &Path,
    working_dir: &Path,
    state_dir: &Path,
    paths: &SessionPaths,
) -> Result<SandboxLaunch> {
    let srt = locate_srt(options.srt.as_deref(), home)?;
    check_tools(&srt)?;
    // srt's command line inside ipybox's reporter, which tells ipybox what srt's proxy
    // refuses; in the state's configuration, which the sandbox cannot write.
    let (mut wrapper, refusals) = match srt.node_and_cli() {
        Some((node, cli)) => {
            let command = refusals::reporter_command(&node, &cli, &state_dir.join("config"))?;
            let command = command.into_iter().map(PathBuf::into_os_string).collect();
            (command, Some(Arc::new(refusals::Refusals::new()?)))
        }
        None => {
            tracing::debug!(srt = %srt.program.display(), "srt's package is not readable: its network refusals are not reported");
            (srt.command(), None)
        }
    };
    let user_home = dirs::home_dir()
        .ok_or_else(|| Error::sandbox("cannot find the home directory for `~` paths"))?;
    // The workspace's own policy runs only as a person last accepted it; the text compared
    // is the text used (never read twice).
    let workspace_file = working_dir.join(policy::WORKSPACE_POLICY);
    let policy = match options.policy.as_deref() {
        Some(p) if p == workspace_file => policy::parse(
            &policy::accepted_text(home, working_dir)?,
            &workspace_file.display().to_string(),
        )?,
        other => policy::load(other)?,
    };
    let checker = access::Checker::new(policy.clone(), working_dir, &user_home, paths)
        .ok()
        .map(Arc::new);
    let rendered = policy::render(policy, working_dir, &user_home, paths.additions())?;
    let protected: Vec<PathBuf> = rendered["filesystem"]["denyWrite"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(PathBuf::from))
        .collect();
    let guards_dir = crate::home::workspace_dir(home, working_dir);
    let guard = placeholders::hold(&guards_dir, working_dir, &protected)?;
    let settings_path = state_dir.join("srt.json");
    let text = serde_json::to_string_pretty(&rendered).unwrap_or_default();
    std::fs::write(&settings_path, text)
        .map_err(|e| Error::io(format!("writing {}", settings_path.display()), e))?;
    wrapper.push("--settings".into());
    wrapper.push(settings_path.into_os_string());
    Ok(SandboxLaunch {
        wrapper,
        srt,
        guard: Some(Arc::new(guard)),
        checker,
        refusals,
    })
}

/// Where a sandboxed session's matplotlib configuration and cache live.
pub fn mplconfig_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("mplconfig")
}

/// What a sandboxed session adds to its gateway.
#[derive(Debug, Clone)]
pub struct SessionSandbox {
    /// How to run the gateway under srt.
    pub launch: SandboxLaunch,
    /// Variables for the gateway's environment.
    pub gateway_env: Vec<(String, String)>,
    /// Names of the gateway's variables its kernels inherit (srt's proxy settings, TMPDIR).
    pub inherited_env: Vec<String>,
}

/// Set up the sandbox of one session: its temporary and matplotlib directories in
/// `state_dir`, the policy with ipybox's additions, srt located and checked. `python` is
/// the gateway's interpreter, `kernel_python` the kernels' when another: their environments
/// stay readable whatever the policy hides, and the kernels' is not writable.
pub fn prepare_session(
    options: &SandboxOptions,
    home: &Path,
    working_dir: &Path,
    state_dir: &Path,
    mplconfig: &Path,
    python: &Path,
    kernel_python: Option<&Path>,
) -> Result<SessionSandbox> {
    #[cfg(not(target_os = "linux"))]
    return Err(not_on_this_system());
    check_workspace(working_dir, home, dirs::home_dir().as_deref())?;
    // srt points TMPDIR at a directory the sandbox cannot write (and tempfile would then
    // fall back to the workspace); the gateway config moves it to the state directory.
    let tmp = state_dir.join("tmp");
    for dir in [&tmp, &mplconfig.to_path_buf()] {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    }
    copy_font_cache(&home.join("mplconfig"), mplconfig);
    let mut paths = SessionPaths::new(options, home, working_dir, state_dir, python);
    if let Some(kernel_python) = kernel_python {
        paths = paths.with_kernel_python(kernel_python);
    }
    let launch = prepare(options, home, working_dir, state_dir, &paths)?;
    let mut inherited_env: Vec<String> = SRT_ENV.iter().map(|s| (*s).to_owned()).collect();
    inherited_env.push("TMPDIR".to_owned());
    Ok(SessionSandbox {
        launch,
        gateway_env: vec![(
            "IPYBOX_TMPDIR".to_owned(),
            tmp.to_string_lossy().into_owned(),
        )],
        inherited_env,
    })
}

/// What ipybox adds to every policy of a session, whatever the policy says: the paths of
/// [`policy::Additions`], owned. The sandbox and the "would this be allowed?" checker
/// ([`access`]) both take them from here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionPaths {
    /// The session's state directory.
    pub allow_write: Vec<PathBuf>,
    /// What configures the gateway, the next kernels and the next sessions.
    pub deny_write: Vec<PathBuf>,
    /// ipybox's data directory.
    pub deny_read: Vec<PathBuf>,
    /// What kernels need inside it: the state directory, the Python environment, srt.
    pub allow_read: Vec<PathBuf>,
    /// Not rendered into the policy: the places of this session no grant may open, for
    /// [`danger::way_out`] (ipybox's data directories, the Pythons the gateway and kernels
    /// run, the folders on the host's `PATH`).
    pub ways_out: Vec<(PathBuf, danger::Kind)>,
}

impl SessionPaths {
    /// The additions of a session on `working_dir` whose state is in `state_dir`, with
    /// ipybox's data directory `home` and the kernels' interpreter `python`.
    pub fn new(
        options: &SandboxOptions,
        home: &Path,
        working_dir: &Path,
        state_dir: &Path,
        python: &Path,
    ) -> SessionPaths {
        // Kernels write their connection files and temporary files in the state directory,
        // but cannot change what configures the gateway and later kernels (gateway config,
        // kernelspec, IPython profile and startup files): reset() gives a kernel the
        // previous one could not tamper with.
        let mut deny_write = vec![
            state_dir.join("config"),
            state_dir.join("data"),
            state_dir.join("ipython/profile_default"),
            // The owner's pid, which tells other ipybox processes whether the session is
            // alive.
            state_dir.join("pid"),
            // What ipybox reads from the workspace as configuration: `.env` (its variables
            // fill the ${VAR}s of servers ipybox starts on the host, in this session and
            // later ones). srt keeps a missing file from being created, too.
            working_dir.join(".env"),
        ];
        // A policy file in the workspace configures the next session's sandbox: the
        // workspace's own, whichever policy is in force now (srt keeps a missing one from
        // being created), and the file in force when it lies in the workspace.
        deny_write.push(working_dir.join(policy::WORKSPACE_POLICY));
        if let Some(policy) = options.policy.as_deref()
            && policy.starts_with(working_dir)
            && !deny_write.iter().any(|p| p == policy)
        {
            deny_write.push(policy.to_path_buf());
        }
        // ipybox's data directory is none of the kernel's business: other sessions' state
        // (gateway tokens), the MCP registry (server parameters, which may hold literal
        // keys), approval rules, the audit log. Kernels read only their own state, their
        // Python environment and srt's seccomp helper there.
        let mut allow_read = vec![state_dir.to_path_buf(), managed_srt_dir(home)];
        allow_read.extend(python_dirs(python));
        SessionPaths {
            allow_write: vec![state_dir.to_path_buf()],
            deny_write,
            deny_read: vec![home.to_path_buf()],
            allow_read,
            ways_out: own_places(home, python),
        }
        // Nor are the person's other data directories, and the record of them.
        .hiding(
            &crate::home::hidden_homes(),
            working_dir,
            dirs::home_dir().as_deref(),
        )
    }

    /// Kernels run `python` (not the gateway's interpreter): its environment, and the
    /// installation a virtual environment links to, are readable and not writable (a
    /// workspace `.venv` is otherwise as writable as the workspace, and kernel code could
    /// plant what the next kernel, or the host's installer, runs).
    ///
    /// Kernel code may have written that environment (a workspace `.venv`, in a session on
    /// ipybox's own): where its links lead is untrusted. A folder is made readable only when
    /// it is, once its links are resolved, a Python environment or installation (`pyvenv.cfg`,
    /// or a standard library), and holds nothing hidden nor lies in it (ipybox's data
    /// directory).
    pub fn with_kernel_python(mut self, python: &Path) -> SessionPaths {
        for dir in python_dirs(python) {
            let own = (dir.clone(), danger::Kind::Interpreter);
            if !self.ways_out.contains(&own) {
                self.ways_out.push(own);
            }
            if !self.deny_write.contains(&dir) {
                self.deny_write.push(dir.clone());
            }
            let Ok(real) = std::fs::canonicalize(&dir) else {
                continue;
            };
            let hidden = self
                .deny_read
                .iter()
                .any(|d| d.starts_with(&real) || real.starts_with(d));
            if !hidden && is_python_home(&real) && !self.allow_read.contains(&real) {
                self.allow_read.push(real);
            }
        }
        self
    }

    /// Hide `homes` too: the user's other data directories and the record of them
    /// ([`crate::home::hidden_homes`], links resolved). One that holds what the session works
    /// in (the workspace, the user's home, its own state) is left as the policy has it:
    /// hiding it would hide them. The sandbox runtime installed in one stays readable: srt
    /// runs its seccomp helper inside.
    pub fn hiding(
        mut self,
        homes: &[PathBuf],
        working_dir: &Path,
        user_home: Option<&Path>,
    ) -> SessionPaths {
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let own: Vec<PathBuf> = self.allow_write.iter().map(|p| real(p)).collect();
        let used: Vec<PathBuf> = [working_dir]
            .into_iter()
            .chain(user_home)
            .map(real)
            .collect();
        for home in homes {
            // The session's own data directory, which holds its state: hidden already.
            if own.iter().any(|p| p.starts_with(home)) {
                continue;
            }
            if used.iter().any(|p| p.starts_with(home)) {
                tracing::warn!(
                    dir = %home.display(),
                    "this ipybox data directory holds the workspace or your home directory, so the sandbox cannot hide it"
                );
                continue;
            }
            if !self.deny_read.contains(home) {
                self.deny_read.push(home.clone());
            }
            let srt = managed_srt_dir(home);
            if srt.is_dir() && !self.allow_read.contains(&srt) {
                self.allow_read.push(srt);
            }
        }
        self
    }

    /// Borrowed, for [`policy::render`].
    pub fn additions(&self) -> policy::Additions<'_> {
        policy::Additions {
            allow_write: &self.allow_write,
            deny_write: &self.deny_write,
            deny_read: &self.deny_read,
            allow_read: &self.allow_read,
        }
    }
}

/// The directories a Python environment reads from: the environment of `python`
/// (`<env>/bin/python`) and, for a virtual environment, the installation its interpreter
/// links to.
fn python_dirs(python: &Path) -> Vec<PathBuf> {
    let prefix = |p: &Path| p.parent().and_then(Path::parent).map(Path::to_path_buf);
    let mut dirs: Vec<PathBuf> = prefix(python).into_iter().collect();
    if let Some(real) = std::fs::canonicalize(python)
        .ok()
        .as_deref()
        .and_then(prefix)
        && !dirs.contains(&real)
    {
        dirs.push(real);
    }
    dirs
}

/// ipybox's own places no grant may open: its data directories (`home`, the default one
/// when `$IPYBOX_HOME` points elsewhere, its sockets' folder), the Python environment of
/// `python` and the installation it links to, and the folders on the host's `PATH`, whose
/// programs the person's shells run.
fn own_places(home: &Path, python: &Path) -> Vec<(PathBuf, danger::Kind)> {
    let mut data = vec![home.to_path_buf(), crate::home::runtime_dir(home)];
    data.extend(dirs::data_dir().map(|d| d.join("ipybox")));
    let mut out: Vec<(PathBuf, danger::Kind)> = data
        .into_iter()
        .map(|d| (d, danger::Kind::Ipybox))
        .collect();
    out.extend(
        python_dirs(python)
            .into_iter()
            .map(|d| (d, danger::Kind::Interpreter)),
    );
    out.extend(
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .filter(|d| d.is_absolute())
            .map(|d| (d, danger::Kind::RunsLater)),
    );
    out
}

/// Is `dir` a Python environment (`pyvenv.cfg`) or installation (`lib/python3.N/os.py`)?
fn is_python_home(dir: &Path) -> bool {
    dir.join("pyvenv.cfg").is_file()
        || std::fs::read_dir(dir.join("lib")).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                e.file_name().to_string_lossy().starts_with("python3")
                    && e.path().join("os.py").is_file()
            })
        })
}

/// A sandboxed kernel may write its workspace; a workspace that holds the user's home or
/// ipybox's data directory would let it write what the host runs and reads as
/// configuration (`~/.bashrc`, `~/.npmrc`, the kernels' Python environment).
fn check_workspace(workspace: &Path, ipybox_home: &Path, user_home: Option<&Path>) -> Result<()> {
    let ipybox_home = std::fs::canonicalize(ipybox_home).unwrap_or_else(|_| ipybox_home.into());
    let what = if workspace == Path::new("/") {
        Some("the whole file system")
    } else if user_home.is_some_and(|h| h.starts_with(workspace)) {
        Some("your home directory")
    } else if ipybox_home.starts_with(workspace) || workspace.starts_with(&ipybox_home) {
        Some("ipybox's data directory")
    } else {
        None
    };
    if let Some(what) = what {
        return Err(Error::sandbox(format!(
            "the workspace {} holds {what}: sandboxed code may write its workspace, and there it could change files your programs and ipybox run or read as configuration. Open a project folder instead (for example ~/ipybox-workspace).",
            workspace.display()
        )));
    }
    Ok(())
}

/// Copy matplotlib's font cache (`fontlist-*.json`) from the shared directory, so a
/// sandboxed session does not rebuild it on its first plot.
fn copy_font_cache(from: &Path, to: &Path) {
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let is_cache = name
            .to_str()
            .is_some_and(|n| n.starts_with("fontlist-") && n.ends_with(".json"));
        if is_cache && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::copy(entry.path(), to.join(&name));
        }
    }
}

/// The gateway's port inside a sandbox. The sandbox has a network namespace of its own, so
/// a fixed port cannot collide with the host; it stays below the ephemeral range.
pub const SANDBOX_GATEWAY_PORT: u16 = 18888;

impl Enclosure for SandboxLaunch {
    fn wrapper(&self) -> Vec<OsString> {
        self.wrapper.clone()
    }

    fn port(&self) -> u16 {
        SANDBOX_GATEWAY_PORT
    }

    /// srt must get SIGTERM: it tears its sandbox down then, while SIGKILL would leave the
    /// sandbox running (bwrap's own parent-death link is to an intermediate shell).
    fn death_signal(&self) -> i32 {
        libc::SIGTERM
    }

    fn passed_fd(&self) -> Option<(std::os::fd::OwnedFd, std::os::fd::RawFd)> {
        let writer = self.refusals.as_ref()?.take_writer()?;
        Some((writer, refusals::REPORT_FD))
    }

    fn attach<'a>(
        &'a self,
        child: &'a mut Child,
        timeout: Duration,
        log: &'a (dyn Fn() -> String + Send + Sync),
    ) -> AttachFuture<'a> {
        Box::pin(async move {
            #[cfg(target_os = "linux")]
            {
                let srt_pid = child.id();
                let helper = attach(child, self, timeout, log).await?;
                Ok(Arc::new(Sandboxed {
                    helper,
                    guard: self.guard.clone(),
                    srt_pid,
                }) as Arc<dyn Enclosed>)
            }
            #[cfg(not(target_os = "linux"))]
            {
                let _ = (child, timeout, log);
                Err(not_on_this_system())
            }
        })
    }
}

/// ipybox reaches the sandboxed gateway through the sandbox's network namespace, which only
/// Linux has.
#[cfg(not(target_os = "linux"))]
fn not_on_this_system() -> Error {
    Error::sandbox(
        "ipybox's sandbox runs on Linux only for now: it talks to the sandboxed gateway through the sandbox's own network namespace, which this system does not have. Run without --sandbox here, or on Linux.",
    )
}

#[cfg(target_os = "linux")]
/// A running sandbox: the helper that makes sockets in its network namespace, and the
/// workspace's write guards, released once the sandbox is gone.
#[derive(Debug)]
struct Sandboxed {
    helper: Arc<NetnsHelper>,
    #[allow(dead_code, reason = "held, not read: dropping it releases the guards")]
    guard: Option<Arc<placeholders::Guard>>,
    /// srt's process id, which names the socket it leaves behind.
    srt_pid: u32,
}

#[cfg(target_os = "linux")]
impl Enclosed for Sandboxed {
    fn connector(&self) -> SharedConnector {
        Arc::new(NetnsConnector(self.helper.clone()))
    }

    fn close_and_wait(&self, timeout: Duration) {
        self.helper.close_and_wait(timeout);
        remove_mux_sockets(self.srt_pid);
    }
}

/// srt leaves its multiplexer socket (`srt-mux-PID-N.sock`) in the temporary directory
/// when it ends. They pile up, and a later srt whose pid matches a stale one fails to
/// start (`EADDRINUSE`): remove those of the srt that ran this sandbox once it is gone.
#[cfg(target_os = "linux")]
fn remove_mux_sockets(srt_pid: u32) {
    let prefix = format!("srt-mux-{srt_pid}-");
    let dir = std::env::var_os("TMPDIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(&prefix) && name.ends_with(".sock") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(target_os = "linux")]
/// Wait until srt (`child`) has started its sandbox, then join the sandbox's network
/// namespace with a [`NetnsHelper`]. Fails if srt exits, or if no process in a separate
/// network namespace appears within `timeout` (a sandbox without network isolation is not
/// accepted).
async fn attach(
    child: &mut Child,
    launch: &SandboxLaunch,
    timeout: Duration,
    log: &(dyn Fn() -> String + Send + Sync),
) -> Result<Arc<NetnsHelper>> {
    let root = child.id() as i32;
    let started = Instant::now();
    let sandbox_pid = loop {
        if let Ok(Some(status)) = child.try_wait() {
            // A Node.js too old for srt is a likely cause; say so if it is.
            check_node(&launch.srt)?;
            // The usual cause: this computer forbids the user namespaces bubblewrap needs.
            let why = userns::why_no_sandbox()
                .unwrap_or_else(|| "Check that `srt echo ok` works on this system.".to_owned());
            return Err(Error::sandbox(format!(
                "the sandbox (srt) exited during start-up ({status}). {why} Its output:\n{}",
                log()
            )));
        }
        if let Some(pid) = netns::find_sandbox(root) {
            break pid;
        }
        if started.elapsed() >= timeout {
            return Err(Error::sandbox(format!(
                "srt did not start a network-isolated sandbox within {:.0} s. Its output:\n{}",
                timeout.as_secs_f64(),
                log()
            )));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    tracing::debug!(elapsed = ?started.elapsed(), sandbox_pid, "sandbox found");
    let watched = crate::process::process_tree(root);
    let helper = NetnsHelper::start(sandbox_pid, &watched, root).map_err(|e| {
        Error::sandbox(format!(
            "cannot reach into the sandbox's network namespace ({e}). ipybox needs to join the user and network namespaces srt created (setns); this system does not allow it, so the sandbox cannot be used."
        ))
    })?;
    Ok(Arc::new(helper))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every data directory the user's ipybox has used is hidden from a session's kernels,
    /// not only the session's own, and so is the record of them; the sandbox runtime
    /// installed in one stays readable (the sandbox runs its seccomp helper), and one that
    /// holds the workspace or the home is not hidden (that would hide them).
    #[test]
    fn every_recorded_home_is_hidden_from_kernels() {
        let root = tempfile::tempdir().expect("a temporary directory");
        let root = std::fs::canonicalize(root.path()).expect("exists");
        let at = |p: &str| root.join(p);
        let (data, ws, user, default, other) = (
            at("data"),
            at("projects/ws"),
            at("users/u"),
            at("xdg/ipybox"),
            at("other"),
        );
        for dir in [&data, &ws, &user, &default, &other.join("srt")] {
            std::fs::create_dir_all(dir).expect("a directory");
        }
        std::fs::create_dir_all(other.join("trust")).expect("a directory");
        std::fs::write(other.join("trust/key"), "secret").expect("a file");
        let known = crate::home::KnownHomes::in_dir(at("state/ipybox"));
        for home in [&data, &other, &at("projects"), &at("users"), &default] {
            known.record(home).expect("recorded");
        }
        let state = data.join("sessions/s1");
        let options = SandboxOptions::default();
        let paths = SessionPaths::new(&options, &data, &ws, &state, Path::new("/usr/bin/python3"))
            .hiding(&known.hidden(Some(&default)), &ws, Some(&user));
        for hidden in [&data, &default, &other, &at("state/ipybox")] {
            assert!(
                paths.deny_read.contains(hidden),
                "{} is hidden: {:?}",
                hidden.display(),
                paths.deny_read
            );
        }
        for kept in [at("projects"), at("users")] {
            assert!(
                !paths.deny_read.contains(&kept),
                "{} holds the workspace or the home: {:?}",
                kept.display(),
                paths.deny_read
            );
        }
        assert!(
            paths.allow_read.contains(&other.join("srt")),
            "srt installed in another data directory stays readable: {:?}",
            paths.allow_read
        );
        let rendered = policy::render(
            policy::load(None).expect("the default policy"),
            &ws,
            &user,
            paths.additions(),
        )
        .expect("rendered");
        let deny: Vec<&str> = rendered["filesystem"]["denyRead"]
            .as_array()
            .expect("a list")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        for hidden in [&data, &default, &other, &at("state/ipybox")] {
            assert!(
                deny.contains(&hidden.to_str().expect("UTF-8")),
                "srt is told to hide {}: {deny:?}",
                hidden.display()
            );
        }
    }

    #[test]
    fn workspaces_holding_home_or_the_data_dir_are_refused() {
        let data = Path::new("/home/u/.local/share/ipybox");
        let home = Some(Path::new("/home/u"));
        for bad in [
            "/",
            "/home",
            "/home/u",
            "/home/u/.local",
            "/home/u/.local/share/ipybox/x",
        ] {
            let err = check_workspace(Path::new(bad), data, home).expect_err(bad);
            assert_eq!(
                err.code(),
                crate::error::ErrorCode::SandboxUnavailable,
                "{bad}"
            );
        }
        assert!(check_workspace(Path::new("/home/u/project"), data, home).is_ok());
    }

    /// Sandboxed kernel code can write the workspace's `.venv` (in a session on ipybox's own
    /// environment): a link it leaves there must not make the next session, on that `.venv`,
    /// read what the sandbox hides — ipybox's data directory, or a folder of the home.
    #[test]
    fn a_planted_link_in_a_workspace_venv_opens_nothing_hidden() {
        use std::os::unix::fs::symlink;
        let root = tempfile::tempdir().expect("a temporary directory");
        let (data, ws, user) = (
            root.path().join("data"),
            root.path().join("ws"),
            root.path().join("home"),
        );
        let state = data.join("sessions/s1");
        let secret = data.join("workspaces/w1");
        for dir in [
            &state,
            &secret,
            &ws.join(".venv/bin"),
            &user.join(".local/bin"),
        ] {
            std::fs::create_dir_all(dir).expect("a directory");
        }
        std::fs::write(secret.join("audit.jsonl"), "{}").expect("a file");
        std::fs::write(user.join(".local/bin/tool"), "").expect("a file");
        let options = SandboxOptions::default();
        let base = SessionPaths::new(&options, &data, &ws, &state, Path::new("/usr/bin/python3"));
        // What the kernel's Python adds to what the session reads anyway.
        let paths = |python: &Path| -> Vec<PathBuf> {
            base.clone()
                .with_kernel_python(python)
                .allow_read
                .into_iter()
                .filter(|p| !base.allow_read.contains(p))
                .collect()
        };
        let opened = |allowed: &[PathBuf], hidden: &Path| {
            allowed
                .iter()
                .any(|a| hidden.starts_with(a) || a.starts_with(hidden))
        };
        // `.venv/bin/python` → a file in the data directory, in the home; `.venv` → the data dir.
        let python = ws.join(".venv/bin/python");
        symlink(secret.join("audit.jsonl"), &python).expect("a link");
        let allowed = paths(&python);
        assert!(
            !opened(&allowed, &data),
            "the data directory stays hidden: {allowed:?}"
        );
        std::fs::remove_file(&python).expect("removed");
        symlink(user.join(".local/bin/tool"), &python).expect("a link");
        let allowed = paths(&python);
        assert!(
            !allowed
                .iter()
                .any(|a| user.starts_with(a) || a.starts_with(&user)),
            "no folder of the home is made readable: {allowed:?}"
        );
        std::fs::remove_dir_all(ws.join(".venv")).expect("removed");
        symlink(&secret, ws.join(".venv")).expect("a link");
        let allowed = paths(&ws.join(".venv/bin/python"));
        assert!(
            !opened(&allowed, &data),
            "the data directory stays hidden: {allowed:?}"
        );
        // A real environment, linked to a real installation: both readable.
        std::fs::remove_file(ws.join(".venv")).expect("removed");
        let install = root.path().join("py");
        for dir in [
            ws.join(".venv/bin"),
            install.join("bin"),
            install.join("lib/python3.11"),
        ] {
            std::fs::create_dir_all(dir).expect("a directory");
        }
        std::fs::write(ws.join(".venv/pyvenv.cfg"), "version_info = 3.11.7\n").expect("a file");
        std::fs::write(install.join("lib/python3.11/os.py"), "").expect("a file");
        std::fs::write(install.join("bin/python3.11"), "").expect("a file");
        symlink(install.join("bin/python3.11"), ws.join(".venv/bin/python")).expect("a link");
        let allowed = paths(&ws.join(".venv/bin/python"));
        let real = |p: PathBuf| std::fs::canonicalize(p).expect("exists");
        assert_eq!(
            allowed,
            vec![real(ws.join(".venv")), real(install)],
            "the environment and its installation are readable"
        );
    }
}
