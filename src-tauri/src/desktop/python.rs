//! Each notebook's Python: the person's choice kept per notebook in ipybox's data directory
//! (never in the notebook or the workspace), what the status bar shows of it, and a session's
//! kernel started on it. The picker's commands are `python_commands.rs`.

use std::path::{Path, PathBuf};

use super::dto::KernelPython;
use super::place::Place;
use crate::audit::WorkspaceState;
use crate::error::Error;
use crate::executor::CodeExecutorBuilder;
use crate::pyenv::{self, PythonChoice};
use crate::workspace::Target;

/// `notebook`'s choice as kept; the managed environment when none is (or nowhere to keep one).
pub fn choice_of(state: Option<&WorkspaceState>, notebook: &Path) -> PythonChoice {
    state
        .map(|s| s.python_choices().get(notebook))
        .unwrap_or_default()
}

/// The interpreter of ipybox's own environment (`IPYBOX_PYTHON` when set), not provisioned
/// here: the session does that.
pub fn managed_python() -> PathBuf {
    std::env::var_os("IPYBOX_PYTHON")
        .filter(|p| !p.is_empty())
        .map(|p| pyenv::interpreter_of(Path::new(&p)))
        .or_else(|| {
            crate::home::ipybox_home()
                .ok()
                .map(|h| h.join("venv").join("bin").join("python"))
        })
        .unwrap_or_default()
}

fn describe(choice: PythonChoice, workspace: &Path) -> KernelPython {
    let path = choice.interpreter(workspace).unwrap_or_else(managed_python);
    KernelPython {
        label: pyenv::label(&choice, pyenv::venv_version_of(&path).as_deref()),
        path: path.display().to_string(),
        choice,
    }
}

/// What `target`'s notebook runs: its choice as kept, named for the status bar (one file
/// read for the version; nothing runs). A kernel on a server runs the server's Python, and
/// the status bar says so rather than name a local one it does not run.
pub fn of_notebook(state: Option<&WorkspaceState>, target: &Target, place: &Place) -> KernelPython {
    let choice = choice_of(state, &target.notebook);
    match &place.remote {
        Some(server) => KernelPython {
            label: "Python on the kernel server".into(),
            path: server.url.clone(),
            choice,
        },
        None => describe(choice, &target.workspace),
    }
}

/// Point the session's kernels at `python` (a kernel on a server runs the server's Python).
/// A chosen interpreter that is gone is the session's start-up problem, said in words.
pub fn apply(
    builder: CodeExecutorBuilder,
    python: &KernelPython,
    target: &Target,
    place: &Place,
    problem: Option<Error>,
) -> (CodeExecutorBuilder, Option<Error>) {
    let Some(interpreter) = python.choice.interpreter(&target.workspace) else {
        return (builder, problem);
    };
    if place.remote.is_some() {
        return (builder, problem);
    }
    let problem = problem.or_else(|| {
        (!interpreter.exists()).then(|| {
            Error::python_env(format!(
                "this notebook runs the Python at {}, which is gone; pick another from the status bar",
                interpreter.display()
            ))
        })
    });
    (builder.kernel_python(interpreter), problem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::RemoteGateway;

    #[test]
    fn a_kernel_on_a_server_is_said_to_run_the_servers_python() {
        let target = Target {
            workspace: PathBuf::from("/w"),
            notebook: PathBuf::from("/w/a.ipynb"),
        };
        let here = of_notebook(None, &target, &Place::default());
        assert!(here.label.starts_with("Python"), "{}", here.label);
        assert!(!here.label.contains("server"), "{}", here.label);
        let remote = Place {
            sandbox: None,
            remote: Some(RemoteGateway {
                url: "https://kernels.example.org".into(),
                token: None,
                headers: vec![],
            }),
        };
        let there = of_notebook(None, &target, &remote);
        assert_eq!(there.label, "Python on the kernel server");
        assert_eq!(there.path, "https://kernels.example.org");
    }
}
