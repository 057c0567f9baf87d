//! The picker's commands for each notebook's Python (what is kept and shown is
//! `python.rs`): its options, a Python checked when the person picks it, the switch (which
//! restarts the session's kernel), and a choice carried with a renamed or copied notebook.
//! Installing ipykernel or making a project's `.venv` runs that environment's code on the
//! host: with the workspace sandboxed, a native dialog asks first.

use std::path::Path;

use tauri::{AppHandle, Runtime, State};
use tauri_plugin_dialog::DialogExt;

use super::confirm::{Question, confirm};
use super::dto::{AppState, DesktopError, PythonCheck, PythonOptions};
use super::python::managed_python;
use super::session::Desktop;
use crate::error::Error;
use crate::pyenv::{self, PythonChoice};

type Reply<T> = Result<T, DesktopError>;

/// `from`'s Python choice goes with it to `to` (renamed), or is copied (`keep`: saved as,
/// duplicated); a choice that cannot be kept is logged (the notebook then runs ipybox's).
pub fn carry(desktop: &Desktop, from: &Path, to: &Path, keep: bool) {
    let Ok((_, Some(ws_state), ..)) = desktop.python_context() else {
        return;
    };
    if let Err(e) = ws_state.python_choices().carry(from, to, keep) {
        tracing::warn!(
            "the notebook's Python choice was not carried to {}: {e}",
            to.display()
        );
    }
}

/// What the picker offers for the open notebook.
#[tauri::command]
pub fn python_options(state: State<'_, Desktop>) -> Reply<PythonOptions> {
    let (target, _, sandbox, current) = state.python_context()?;
    let project = pyenv::project_python(&target.workspace);
    Ok(PythonOptions {
        current,
        managed: managed_python().display().to_string(),
        project_exists: project.exists(),
        project: project.display().to_string(),
        pyproject: target.workspace.join("pyproject.toml").is_file(),
        uv: pyenv::which("uv").is_some(),
        sandbox,
    })
}

/// Look at the Python the person picked (their click): its version and ipykernel. A
/// virtual environment is read, not run; see `pyenv::inspect`.
#[tauri::command]
pub async fn check_python(state: State<'_, Desktop>, choice: PythonChoice) -> Reply<PythonCheck> {
    let (target, ..) = state.python_context()?;
    let path = choice
        .interpreter(&target.workspace)
        .unwrap_or_else(managed_python);
    let workspace = target.workspace.clone();
    let found = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || pyenv::inspect(&path, &workspace))
            .await
            .map_err(|e| Error::python_env("looking at the Python failed").because(e))??
    };
    Ok(PythonCheck {
        label: pyenv::label(&choice, found.version.as_deref()),
        path: path.display().to_string(),
        version: found.version,
        ipykernel: found.ipykernel,
    })
}

/// Run the open notebook's kernel on `choice` from now on: kept in ipybox's data directory,
/// and the session restarts (its kernel's state is lost, as the picker said).
#[tauri::command]
pub async fn set_python<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
    choice: PythonChoice,
) -> Reply<AppState> {
    let (target, ws_state, ..) = state.python_context()?;
    if let Some(python) = choice.interpreter(&target.workspace) {
        let workspace = target.workspace.clone();
        let found = tokio::task::spawn_blocking(move || pyenv::inspect(&python, &workspace))
            .await
            .map_err(|e| Error::python_env("looking at the Python failed").because(e))??;
        if !found.ipykernel {
            return Err(Error::python_env(
                "that Python has no ipykernel, which runs the kernel: install it first",
            )
            .into());
        }
    }
    ws_state
        .ok_or_else(|| {
            Error::config(
                "this workspace has no place in ipybox's data directory to keep the choice",
            )
        })?
        .python_choices()
        .set(&target.notebook, &choice)?;
    state.restart(&app).await
}

/// Install ipykernel into the picked environment (a person's click); the installer's log.
#[tauri::command]
pub async fn install_ipykernel<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
    choice: PythonChoice,
) -> Reply<String> {
    let (target, _, sandbox, _) = state.python_context()?;
    let python = choice
        .interpreter(&target.workspace)
        .ok_or_else(|| Error::config("ipybox's own environment has ipykernel already"))?;
    if sandbox && !ask_to_run_on_host(&app, &python, "Install ipykernel").await {
        return Err(Error::config("nothing was installed").into());
    }
    Ok(pyenv::install_ipykernel(&python).await?)
}

/// Make the workspace's `.venv` from its `pyproject.toml` with uv (a person's click); the log.
#[tauri::command]
pub async fn create_project_env<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
) -> Reply<String> {
    let (target, _, sandbox, _) = state.python_context()?;
    let python = pyenv::project_python(&target.workspace);
    if sandbox && !ask_to_run_on_host(&app, &python, "Make the environment").await {
        return Err(Error::config("no environment was made").into());
    }
    Ok(pyenv::create_project_env(&target.workspace).await?)
}

/// The native file picker for an interpreter; `None` when cancelled.
#[tauri::command]
pub async fn choose_python<R: Runtime>(app: AppHandle<R>) -> Reply<Option<String>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_title("Pick a Python interpreter (bin/python of an environment)")
        .pick_file(move |file| {
            let _ = tx.send(file.and_then(|f| f.into_path().ok()));
        });
    Ok(rx.await.ok().flatten().map(|p| p.display().to_string()))
}

/// The workspace is sandboxed, and installing runs the environment's Python (and a
/// project's build steps) on this computer, outside the sandbox: kernel code could have
/// changed a workspace environment. Only a native dialog says yes.
async fn ask_to_run_on_host<R: Runtime>(app: &AppHandle<R>, python: &Path, yes: &str) -> bool {
    confirm(
        app,
        Question {
            title: "Run the environment's code outside the sandbox?".into(),
            message: "Installing runs this environment's Python, and the project's build steps, on this computer outside the sandbox. Sandboxed kernel code can write the workspace: go on only if you trust what is in it.".into(),
            detail: python.display().to_string(),
            warnings: Vec::new(),
            yes: yes.into(),
            no: "Cancel".into(),
        },
    )
    .await
}
