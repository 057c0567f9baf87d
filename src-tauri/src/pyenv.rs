//! The Python environment ipybox runs kernels in.
//!
//! By default a virtual environment in ipybox's data directory (`$IPYBOX_HOME`, else the XDG
//! data directory: `~/.local/share/ipybox`), created on first use from the pinned
//! `python/requirements.txt` — with `uv` when it is on `PATH`, otherwise `python -m venv` and
//! pip. Provisioning holds a file lock, so two ipybox processes starting at once build it
//! once; a marker written last (holding a digest of the requirements) makes the next start a
//! single file read. `--python PATH` / `IPYBOX_PYTHON` use an existing environment instead.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use crate::process::host_command;

use crate::error::{Error, Result};

mod choice;
mod kernel;
mod project;

pub use choice::PythonChoices;
pub use kernel::{
    Inspection, PROJECT_VENV, PythonChoice, env_prefix, inspect, interpreter_of, label,
    project_python, venv_version_of,
};
pub use project::{create_project_env, install_ipykernel};

/// The pinned requirements shipped with ipybox.
pub const REQUIREMENTS: &str = include_str!("../python/requirements.txt");

/// Modules the environment must provide.
const REQUIRED_MODULES: [&str; 4] = ["kernel_gateway", "ipykernel", "pydantic", "matplotlib"];

const MARKER: &str = ".ipybox-ready";

/// A Python environment with everything ipybox needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonEnv {
    python: PathBuf,
}

impl PythonEnv {
    /// The interpreter.
    pub fn python(&self) -> &Path {
        &self.python
    }

    /// The directory holding the interpreter (the environment's `bin/`), put first on the
    /// kernel's `PATH` so `!pip` and friends act on this environment.
    pub fn bin_dir(&self) -> PathBuf {
        self.python
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }
}

/// How much to tell the user while provisioning.
#[derive(Clone)]
pub enum Progress {
    /// Step lines and the installer's own output on stderr.
    Terminal,
    /// Nothing.
    Quiet,
    /// Each step to a callback (a window's progress bar); the installer's output is kept
    /// for the error message.
    Report(Arc<dyn Fn(ProvisionStep) + Send + Sync>),
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Progress::Terminal => "Terminal",
            Progress::Quiet => "Quiet",
            Progress::Report(_) => "Report",
        })
    }
}

impl Progress {
    fn is_terminal(&self) -> bool {
        matches!(self, Progress::Terminal)
    }
}

/// One step of provisioning the Python environment, for a progress bar.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ProvisionStep {
    /// This step, from 1.
    pub step: u32,
    /// How many steps there are.
    pub steps: u32,
    /// What happens now, in words.
    pub message: String,
}

/// The steps of [`provision`]: create, install, font cache, ready.
const STEPS: u32 = 4;

/// Find the environment to use: `explicit` (from `--python`), else `$IPYBOX_PYTHON`, else the
/// managed environment, provisioned now if needed. Blocking.
pub fn resolve(explicit: Option<&Path>, progress: Progress) -> Result<PythonEnv> {
    let explicit = explicit.map(Path::to_path_buf).or_else(|| {
        std::env::var_os("IPYBOX_PYTHON")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
    });
    match explicit {
        Some(python) => check_existing(&python),
        None => provision(&crate::home::ipybox_home()?, progress),
    }
}

/// Ensure the managed environment in `home/venv` exists and is current. Blocking; safe to
/// call from several processes at once.
pub fn provision(home: &Path, progress: Progress) -> Result<PythonEnv> {
    let venv = home.join("venv");
    let env = PythonEnv {
        python: venv.join("bin").join("python"),
    };
    let digest = requirements_digest();
    if is_ready(&venv, &digest) {
        return Ok(env);
    }
    crate::fsutil::create_private_dir(home)?;
    let lock_path = home.join("venv.lock");
    let lock = File::create(&lock_path)
        .map_err(|e| Error::io(format!("creating {}", lock_path.display()), e))?;
    if lock.try_lock().is_err() {
        say(
            &progress,
            1,
            "another ipybox process is setting up the Python environment; waiting for it",
        );
        lock.lock()
            .map_err(|e| Error::io(format!("locking {}", lock_path.display()), e))?;
    }
    // Someone else may have finished while we waited.
    if is_ready(&venv, &digest) {
        return Ok(env);
    }
    let started = std::time::Instant::now();
    if venv.exists() {
        say(
            &progress,
            1,
            &format!("rebuilding the Python environment in {}", venv.display()),
        );
        std::fs::remove_dir_all(&venv)
            .map_err(|e| Error::io(format!("removing {}", venv.display()), e))?;
    } else {
        say(
            &progress,
            1,
            &format!(
                "creating the Python environment in {} (once)",
                venv.display()
            ),
        );
    }
    let base = find_base_python()?;
    let req_path = home.join("requirements.txt");
    std::fs::write(&req_path, REQUIREMENTS)
        .map_err(|e| Error::io(format!("writing {}", req_path.display()), e))?;
    let result = match which("uv") {
        Some(uv) => {
            say(&progress, 1, &format!("using uv and {}", base.display()));
            run(
                &progress,
                host_command(&uv)
                    .arg("venv")
                    .arg("--seed")
                    .arg("--quiet")
                    .arg("--python")
                    .arg(&base)
                    .arg(&venv),
            )
            .and_then(|()| {
                say(
                    &progress,
                    2,
                    "installing ipykernel, jupyter-kernel-gateway, pydantic, matplotlib",
                );
                run(
                    &progress,
                    host_command(&uv)
                        .args(["pip", "install", "--no-deps", "--python"])
                        .arg(&env.python)
                        .arg("-r")
                        .arg(&req_path),
                )
            })
        }
        None => {
            say(
                &progress,
                1,
                &format!(
                    "using {} -m venv and pip (install uv to make this faster)",
                    base.display()
                ),
            );
            run(&progress, host_command(&base).args(["-I", "-m", "venv"]).arg(&venv))
                .map_err(|e| {
                    Error::python_env(format!(
                        "{e}\nOn Debian and Ubuntu, `python3 -m venv` needs the python3-venv package: apt-get install python3-venv"
                    ))
                })
                .and_then(|()| {
                    say(&progress, 2, "installing ipykernel, jupyter-kernel-gateway, pydantic, matplotlib");
                    run(
                        &progress,
                        host_command(&env.python)
                            .args(["-I", "-m", "pip", "install", "--no-deps", "--disable-pip-version-check", "--no-input"])
                            .args(if progress.is_terminal() { &[][..] } else { &["--quiet"][..] })
                            .arg("-r")
                            .arg(&req_path),
                    )
                })
        }
    };
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&venv);
        return Err(e);
    }
    // matplotlib builds its font list on first import; do it now, once, where every
    // session reads it (sandboxed sessions get a copy), instead of on a user's first plot.
    say(&progress, 3, "building matplotlib's font cache");
    let _ = host_command(&env.python)
        .args(["-I", "-c", "import matplotlib.font_manager"])
        .env("MPLCONFIGDIR", home.join("mplconfig"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let marker = venv.join(MARKER);
    std::fs::write(&marker, &digest)
        .map_err(|e| Error::io(format!("writing {}", marker.display()), e))?;
    say(
        &progress,
        4,
        &format!(
            "Python environment ready ({:.0} s)",
            started.elapsed().as_secs_f64()
        ),
    );
    Ok(env)
}

/// Is `spec` something ipybox lets pip install? A requirement (`pandas`, `pandas>=2`,
/// `pkg[extra]`) or a remote URL (`git+https://…`, `https://…/x.whl`); never a pip option.
/// With `sandboxed`, never a local path or `file:` URL either: pip runs on the host, and a
/// path would point into the workspace, where kernel code can leave a package whose build
/// script or `.pth` file then runs on the host.
pub fn check_requirement(spec: &str, sandboxed: bool) -> Result<()> {
    let spec = spec.trim();
    if spec.is_empty() || spec.starts_with('-') {
        return Err(Error::config(format!(
            "{spec:?} is not a package requirement (give a name such as `pandas>=2`)"
        )));
    }
    let remote = ["https://", "http://", "git+", "hg+", "svn+", "bzr+"]
        .iter()
        .any(|p| spec.contains(p));
    let local = spec.starts_with(['.', '/', '~'])
        || spec.contains("file:")
        || (!remote && (spec.contains('/') || spec.contains('\\')));
    if sandboxed && local {
        return Err(Error::config(format!(
            "{spec:?} is a local path; with the sandbox on, ipybox installs packages from an index or a URL only (a local package would be built and installed on the host, outside the sandbox)"
        )));
    }
    Ok(())
}

/// The command that installs into `python`'s environment, packages to be added: `uv pip
/// install --python` with `uv`, else that interpreter's own pip, isolated (`-I`) and quiet.
pub(crate) fn installer(python: &Path, uv: Option<PathBuf>) -> Command {
    match uv {
        Some(uv) => {
            let mut cmd = host_command(uv);
            cmd.args(["pip", "install", "--python"]).arg(python);
            cmd
        }
        None => {
            let mut cmd = host_command(python);
            cmd.args([
                "-I",
                "-m",
                "pip",
                "install",
                "--no-input",
                "--disable-pip-version-check",
                "--progress-bar",
                "off",
            ]);
            cmd
        }
    }
}

/// `pip install spec` into `python`'s environment, run isolated from the workspace (`-I`,
/// in the neutral directory); `uv pip install` for an environment without pip (uv makes
/// them so) when uv is there. With `wheels_only`, no package is built (a build script
/// would run on the host). Returns pip's output; a failure carries it too.
pub async fn pip_install(
    python: &Path,
    spec: &str,
    wheels_only: bool,
    mut on_line: impl FnMut(&str) + Send,
) -> Result<String> {
    use tokio::io::{AsyncBufReadExt, BufReader};
    check_requirement(spec, wheels_only)?;
    let uv = (python.exists() && !kernel::has_package(python, "pip"))
        .then(|| which("uv"))
        .flatten();
    let mut cmd = tokio::process::Command::from(installer(python, uv));
    if wheels_only {
        cmd.args(["--only-binary", ":all:"]);
    }
    let mut child = cmd
        .arg(spec.trim())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::python_env("cannot run pip").because(e))?;
    // pip's lines as they come (for a progress view), stdout and stderr interleaved.
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(Error::python_env("cannot read pip's output"));
    };
    let mut out = BufReader::new(stdout).lines();
    let mut err = BufReader::new(stderr).lines();
    let mut text = String::new();
    let (mut out_open, mut err_open) = (true, true);
    while out_open || err_open {
        let (from_stdout, line) = tokio::select! {
            l = out.next_line(), if out_open => (true, l),
            l = err.next_line(), if err_open => (false, l),
        };
        match line {
            Ok(Some(line)) => {
                on_line(&line);
                text.push_str(&line);
                text.push('\n');
            }
            // That stream ended (or cannot be read): stop reading it.
            Ok(None) | Err(_) if from_stdout => out_open = false,
            Ok(None) | Err(_) => err_open = false,
        }
    }
    let status = child
        .wait()
        .await
        .map_err(|e| Error::python_env("pip failed").because(e))?;
    let text = text.trim().to_owned();
    if status.success() {
        Ok(text)
    } else {
        Err(Error::python_env(format!(
            "pip could not install {} ({status}):\n{text}",
            spec.trim(),
        )))
    }
}

fn is_ready(venv: &Path, digest: &str) -> bool {
    std::fs::read_to_string(venv.join(MARKER)).is_ok_and(|m| m == digest)
        && venv.join("bin/python").exists()
}

fn requirements_digest() -> String {
    // FNV-1a: stable across Rust versions, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in REQUIREMENTS.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("requirements-fnv1a:{h:016x}\n")
}

fn say(progress: &Progress, step: u32, line: &str) {
    match progress {
        Progress::Terminal => {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "ipybox: {line}");
        }
        Progress::Quiet => {}
        Progress::Report(report) => report(ProvisionStep {
            step,
            steps: STEPS,
            message: line.to_owned(),
        }),
    }
}

fn run(progress: &Progress, cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}");
    // Installer output goes to stderr: stdout may be a protocol stream (MCP over stdio).
    let out = match progress {
        Progress::Quiet | Progress::Report(_) => Stdio::piped(),
        Progress::Terminal => {
            use std::os::fd::AsFd;
            std::io::stderr()
                .as_fd()
                .try_clone_to_owned()
                .map(Stdio::from)
                .unwrap_or_else(|_| Stdio::null())
        }
    };
    let child = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(if progress.is_terminal() {
            Stdio::inherit()
        } else {
            Stdio::piped()
        })
        .spawn()
        .map_err(|e| Error::python_env(format!("cannot run {shown}")).because(e))?;
    let output = child
        .wait_with_output()
        .map_err(|e| Error::python_env(format!("{shown} failed")).because(e))?;
    if output.status.success() {
        return Ok(());
    }
    let mut detail = String::from_utf8_lossy(&output.stderr).into_owned();
    detail.push_str(&String::from_utf8_lossy(&output.stdout));
    let tail: String = detail
        .lines()
        .rev()
        .take(20)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("\n");
    Err(Error::python_env(format!(
        "{shown} failed ({}){}",
        output.status,
        if tail.is_empty() {
            String::new()
        } else {
            format!(":\n{tail}")
        }
    )))
}

pub(crate) fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `(major, minor)` of an interpreter.
fn python_version(python: &Path) -> Option<(u32, u32)> {
    let out = host_command(python)
        .args([
            "-I",
            "-c",
            "import sys; print(sys.version_info[0], sys.version_info[1])",
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut parts = text.split_whitespace().map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??))
}

fn find_base_python() -> Result<PathBuf> {
    let candidates = [
        "python3.13",
        "python3.12",
        "python3.11",
        "python3.10",
        "python3",
        "python",
    ];
    let mut seen = Vec::new();
    for name in candidates {
        let Some(p) = which(name) else { continue };
        match python_version(&p) {
            Some(v) if v >= (3, 10) => return Ok(p),
            Some((a, b)) => seen.push(format!("{} is {a}.{b}", p.display())),
            None => seen.push(format!("{} does not run", p.display())),
        }
    }
    Err(Error::python_env(format!(
        "ipybox needs Python 3.10 or newer to create its environment, and none was found on PATH{}. \
         Install one (Debian/Ubuntu: apt-get install python3 python3-venv) or point IPYBOX_PYTHON / --python \
         at an interpreter that has ipykernel and jupyter-kernel-gateway installed.",
        if seen.is_empty() {
            String::new()
        } else {
            format!(" ({})", seen.join("; "))
        }
    )))
}

/// Check an environment the user pointed at.
fn check_existing(python: &Path) -> Result<PythonEnv> {
    let python = if python.is_dir() {
        python.join("bin").join("python")
    } else {
        python.to_path_buf()
    };
    let modules = REQUIRED_MODULES.map(|m| format!("'{m}'")).join(", ");
    let probe = format!(
        "import sys, importlib.util as u\nprint(sys.version_info[0], sys.version_info[1])\nprint(' '.join(m for m in ({modules},) if u.find_spec(m) is None))"
    );
    let out = host_command(&python)
        .args(["-I", "-c", &probe])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            Error::python_env(format!(
                "cannot run the Python at {} (set by IPYBOX_PYTHON or --python): {e}. \
                 Point it at a Python 3.10+ that has ipykernel and jupyter-kernel-gateway, \
                 or unset it to use the environment ipybox makes itself.",
                python.display()
            ))
        })?;
    if !out.status.success() {
        return Err(Error::python_env(format!(
            "the Python at {} failed to start: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let version: Vec<u32> = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    if version.len() != 2 || (version[0], version[1]) < (3, 10) {
        return Err(Error::python_env(format!(
            "the Python at {} is {}; ipybox needs 3.10 or newer",
            python.display(),
            version
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(".")
        )));
    }
    let missing = lines.next().unwrap_or("").trim();
    if !missing.is_empty() {
        return Err(Error::python_env(format!(
            "the Python at {} lacks the modules {missing}; install them with `{} -m pip install ipykernel jupyter-kernel-gateway pydantic matplotlib`, or drop --python/IPYBOX_PYTHON to let ipybox manage its own environment",
            python.display(),
            python.display()
        )));
    }
    Ok(PythonEnv { python })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_and_local_paths() {
        for ok in [
            "pandas",
            "pandas>=2",
            "pkg[extra]==1.0",
            "git+https://github.com/x/y",
        ] {
            assert!(check_requirement(ok, true).is_ok(), "{ok}");
        }
        for local in [
            "./pkg",
            "/abs/pkg",
            "~/pkg",
            "pkg @ file:///ws/pkg",
            "dist/x.whl",
        ] {
            assert!(check_requirement(local, true).is_err(), "{local} sandboxed");
            assert!(
                check_requirement(local, false).is_ok(),
                "{local} unsandboxed"
            );
        }
        for bad in ["", "  ", "-r", "--index-url=http://x"] {
            assert!(check_requirement(bad, false).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn digest_is_stable_and_ends_the_marker_line() {
        assert_eq!(requirements_digest(), requirements_digest());
        assert!(requirements_digest().starts_with("requirements-fnv1a:"));
    }

    #[test]
    fn requirements_pin_every_package() {
        for line in REQUIREMENTS
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        {
            assert!(line.contains("=="), "every requirement is pinned: {line}");
        }
        for m in [
            "ipykernel==",
            "jupyter-kernel-gateway==",
            "pydantic==",
            "matplotlib==",
            "tornado==",
        ] {
            assert!(REQUIREMENTS.contains(m), "{m} is pinned");
        }
    }

    #[test]
    fn an_interpreter_without_the_modules_is_refused_clearly() {
        let Some(python) = which("python3") else {
            return;
        };
        let err = check_existing(&python).err();
        // The system python may or may not have the modules; when it lacks them the message names them.
        if let Some(e) = err {
            let msg = e.to_string();
            assert!(
                msg.contains("lacks the modules") || msg.contains("3.10"),
                "{msg}"
            );
        }
    }
}
