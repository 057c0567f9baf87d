//! The Python a notebook's kernel runs: ipybox's managed environment (the default), the
//! workspace's project environment (`.venv`, made from `pyproject.toml` when missing), or an
//! interpreter the person points to. The gateway stays in the managed environment; only the
//! kernelspec's interpreter changes, which needs nothing but `ipykernel`.
//!
//! The workspace is writable by kernel code, so looking at an environment there never runs
//! it: a virtual environment is read from its `pyvenv.cfg` and its `site-packages`, without
//! executing its interpreter (whose `.pth` files and `sitecustomize` kernel code could have
//! planted). Only an interpreter outside the workspace that is not a virtual environment is
//! asked for its version — after a person chose it, with a minimal environment, from the
//! neutral directory, with a timeout, its answer read as untrusted text.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::process::host_command;

/// The project environment's directory in a workspace.
pub const PROJECT_VENV: &str = ".venv";

/// Which Python a notebook's kernel runs, as a person chose it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PythonChoice {
    /// ipybox's own environment (no choice made).
    #[default]
    Managed,
    /// The workspace's `.venv`.
    Project,
    /// An interpreter the person pointed to.
    Custom {
        /// Its path.
        #[cfg_attr(test, ts(type = "string"))]
        path: PathBuf,
    },
}

impl PythonChoice {
    /// The interpreter this choice names in `workspace`; `None` for the managed environment.
    pub fn interpreter(&self, workspace: &Path) -> Option<PathBuf> {
        match self {
            PythonChoice::Managed => None,
            PythonChoice::Project => Some(project_python(workspace)),
            PythonChoice::Custom { path } => Some(interpreter_of(path)),
        }
    }
}

/// `.venv/bin/python` of `workspace`.
pub fn project_python(workspace: &Path) -> PathBuf {
    workspace.join(PROJECT_VENV).join("bin").join("python")
}

/// A directory given for an interpreter means its environment's `bin/python`.
pub fn interpreter_of(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("bin").join("python")
    } else {
        path.to_path_buf()
    }
}

/// What ipybox found out about an interpreter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    /// `major.minor`, when known.
    pub version: Option<String>,
    /// Is `ipykernel` installed?
    pub ipykernel: bool,
    /// Is it a virtual environment (read from its files, never run)?
    pub venv: bool,
}

/// Look at `python` to run kernels: its version and whether it has `ipykernel`. A virtual
/// environment is read, not run; any other interpreter is run once (see the module's
/// words), unless it lies in `workspace`, where kernel code could have replaced it.
pub fn inspect(python: &Path, workspace: &Path) -> Result<Inspection> {
    if !python.exists() {
        return Err(Error::python_env(format!(
            "there is no Python at {}",
            python.display()
        )));
    }
    let prefix = env_prefix(python);
    if let Some(cfg) = prefix
        .as_deref()
        .and_then(|p| std::fs::read_to_string(p.join("pyvenv.cfg")).ok())
    {
        let prefix = prefix.unwrap_or_default();
        return Ok(Inspection {
            version: venv_version(&cfg),
            ipykernel: site_packages(&prefix)
                .iter()
                .any(|d| d.join("ipykernel").join("__init__.py").is_file()),
            venv: true,
        });
    }
    if within(python, workspace) {
        return Err(Error::python_env(format!(
            "{} is in the workspace but is not a virtual environment; ipybox does not run an interpreter from the workspace on this computer to look at it. Make a virtual environment there (`uv venv`), or pick a Python outside the workspace",
            python.display()
        )));
    }
    probe(python)
}

/// The environment an interpreter `<prefix>/bin/python` belongs to.
pub fn env_prefix(python: &Path) -> Option<PathBuf> {
    python
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
}

/// A short name for the status bar: "Python 3.12 · .venv".
pub fn label(choice: &PythonChoice, version: Option<&str>) -> String {
    let python = match version {
        Some(v) => format!("Python {v}"),
        None => "Python".to_owned(),
    };
    let place = match choice {
        PythonChoice::Managed => "ipybox".to_owned(),
        PythonChoice::Project => PROJECT_VENV.to_owned(),
        PythonChoice::Custom { path } => {
            let python = interpreter_of(path);
            env_prefix(&python)
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| python.display().to_string())
        }
    };
    format!("{python} · {place}")
}

/// `major.minor` of a virtual environment's interpreter, from its `pyvenv.cfg` (one file
/// read: what the status bar shows costs a session's start nothing more).
pub fn venv_version_of(python: &Path) -> Option<String> {
    let prefix = env_prefix(python)?;
    venv_version(&std::fs::read_to_string(prefix.join("pyvenv.cfg")).ok()?)
}

/// `major.minor` from a `pyvenv.cfg` (`version_info = 3.12.3` from uv, `version = 3.12.3`
/// from venv).
fn venv_version(cfg: &str) -> Option<String> {
    cfg.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        if !matches!(key.trim(), "version" | "version_info") {
            return None;
        }
        let mut parts = value.trim().split('.');
        let (major, minor) = (parts.next()?, parts.next()?);
        (major.chars().all(|c| c.is_ascii_digit()) && minor.chars().all(|c| c.is_ascii_digit()))
            .then(|| format!("{major}.{minor}"))
    })
}

/// Does `python`'s environment hold the package `name` (read from its files, nothing run)?
pub(super) fn has_package(python: &Path, name: &str) -> bool {
    env_prefix(python).is_some_and(|prefix| {
        site_packages(&prefix)
            .iter()
            .any(|d| d.join(name).join("__init__.py").is_file())
    })
}

fn site_packages(prefix: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect()
}

/// Is `path` (or where its links lead) inside `dir`?
fn within(path: &Path, dir: &Path) -> bool {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    path.starts_with(&dir)
        || std::fs::canonicalize(path).is_ok_and(|p| p.starts_with(&dir))
        || path
            .parent()
            .and_then(|p| std::fs::canonicalize(p).ok())
            .is_some_and(|p| p.starts_with(&dir))
}

const PROBE: &str = "import sys, importlib.util as u\nprint('%d.%d' % sys.version_info[:2], u.find_spec('ipykernel') is not None)";
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Ask an interpreter outside the workspace for its version and ipykernel: isolated (`-I`),
/// a minimal environment, the neutral directory, killed after a timeout.
fn probe(python: &Path) -> Result<Inspection> {
    let mut child = host_command(python)
        .args(["-I", "-c", PROBE])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| {
            Error::python_env(format!("cannot run the Python at {}", python.display())).because(e)
        })?;
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < PROBE_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::python_env(format!(
                    "the Python at {} did not answer within {} s",
                    python.display(),
                    PROBE_TIMEOUT.as_secs()
                )));
            }
        }
    }
    let output = child
        .wait_with_output()
        .map_err(|e| Error::io("reading the Python's answer", e))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut words = text.split_whitespace();
    let version = words
        .next()
        .filter(|v| v.len() <= 7 && v.chars().all(|c| c.is_ascii_digit() || c == '.'));
    let (Some(version), Some(ipykernel)) = (version, words.next()) else {
        return Err(Error::python_env(format!(
            "{} does not answer as a Python 3 interpreter",
            python.display()
        )));
    };
    Ok(Inspection {
        version: Some(version.to_owned()),
        ipykernel: ipykernel == "True",
        venv: false,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn fake_venv(dir: &Path, cfg: &str, ipykernel: bool) -> PathBuf {
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        // A script that would leave a mark if run: inspecting a venv must not run it.
        let python = bin.join("python");
        std::fs::write(&python, format!("#!/bin/sh\ntouch {}/ran\n", dir.display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.join("pyvenv.cfg"), cfg).unwrap();
        let site = dir.join("lib/python3.12/site-packages");
        std::fs::create_dir_all(&site).unwrap();
        if ipykernel {
            std::fs::create_dir_all(site.join("ipykernel")).unwrap();
            std::fs::write(site.join("ipykernel/__init__.py"), "").unwrap();
        }
        python
    }

    #[test]
    fn a_venv_is_read_not_run() {
        let ws = tempfile::tempdir().unwrap();
        let venv = ws.path().join(".venv");
        let python = fake_venv(
            &venv,
            "home = /usr/bin\nimplementation = CPython\nversion_info = 3.12.3\n",
            true,
        );
        let found = inspect(&python, ws.path()).unwrap();
        assert_eq!(
            found.version.as_deref(),
            Some("3.12"),
            "version from pyvenv.cfg"
        );
        assert!(found.ipykernel, "ipykernel found in site-packages");
        assert!(found.venv);
        assert!(
            !venv.join("ran").exists(),
            "the workspace's interpreter was not run"
        );
        let bare = tempfile::tempdir().unwrap();
        let python = fake_venv(bare.path(), "version = 3.11.9\n", false);
        let found = inspect(&python, ws.path()).unwrap();
        assert_eq!(found.version.as_deref(), Some("3.11"));
        assert!(!found.ipykernel, "no ipykernel in site-packages");
    }

    #[test]
    fn an_interpreter_in_the_workspace_that_is_no_venv_is_not_run() {
        let ws = tempfile::tempdir().unwrap();
        let python = fake_venv(&ws.path().join("env"), "", false);
        std::fs::remove_file(ws.path().join("env/pyvenv.cfg")).unwrap();
        let err = inspect(&python, ws.path()).unwrap_err().to_string();
        assert!(err.contains("not a virtual environment"), "{err}");
        assert!(!ws.path().join("env/ran").exists(), "it was not run");
    }

    #[test]
    fn a_missing_interpreter_is_said_in_words() {
        let ws = tempfile::tempdir().unwrap();
        let err = inspect(&ws.path().join("nope/bin/python"), ws.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("there is no Python at"), "{err}");
    }

    #[test]
    fn an_interpreter_outside_the_workspace_is_asked() {
        let Some(python) = super::super::which("python3") else {
            return;
        };
        let ws = tempfile::tempdir().unwrap();
        let found = inspect(&python, ws.path()).unwrap();
        assert!(
            found
                .version
                .as_deref()
                .is_some_and(|v| v.starts_with("3.")),
            "{found:?}"
        );
    }

    #[test]
    fn labels_name_the_version_and_the_place() {
        assert_eq!(
            label(&PythonChoice::Project, Some("3.12")),
            "Python 3.12 · .venv"
        );
        assert_eq!(label(&PythonChoice::Managed, None), "Python · ipybox");
        let custom = PythonChoice::Custom {
            path: "/opt/envs/science/bin/python".into(),
        };
        assert_eq!(label(&custom, Some("3.11")), "Python 3.11 · science");
        assert_eq!(venv_version("version = 3.10.2\n").as_deref(), Some("3.10"));
        assert_eq!(venv_version("version_info = x.y\n"), None);
    }
}
