//! Making a Python fit to run kernels, on a person's click: `ipykernel` installed into an
//! environment that lacks it, a workspace's `.venv` created from its `pyproject.toml` with
//! `uv sync`. Both run on the host and run the environment's interpreter (and, for `uv sync`,
//! the project's build steps), so the desktop asks first, in a native dialog, when the
//! workspace is sandboxed.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::process::host_command;

/// Installing can take a while (a large project), but not for ever.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);

/// Install `ipykernel` into `python`'s environment: `uv pip install` when uv is on `PATH`
/// (a uv environment has no pip), else `python -I -m pip install`. The installer's output.
pub async fn install_ipykernel(python: &Path) -> Result<String> {
    let mut cmd = super::installer(python, super::which("uv"));
    cmd.arg("ipykernel");
    run("installing ipykernel", &mut cmd).await
}

/// Create `workspace`'s `.venv` from its `pyproject.toml` (`uv sync`), then install
/// `ipykernel` there when the project does not list it. The installers' output.
pub async fn create_project_env(workspace: &Path) -> Result<String> {
    if !workspace.join("pyproject.toml").is_file() {
        return Err(Error::python_env(format!(
            "{} has no pyproject.toml to make an environment from",
            workspace.display()
        )));
    }
    let uv = super::which("uv").ok_or_else(|| {
        Error::python_env(
            "making the project's environment needs uv, which is not installed (https://docs.astral.sh/uv/)",
        )
    })?;
    let mut cmd = host_command(&uv);
    cmd.arg("sync").arg("--project").arg(workspace);
    let mut log = run("uv sync", &mut cmd).await?;
    let python = super::project_python(workspace);
    if !super::inspect(&python, workspace)?.ipykernel {
        log.push('\n');
        log.push_str(&install_ipykernel(&python).await?);
    }
    Ok(log)
}

async fn run(what: &str, cmd: &mut std::process::Command) -> Result<String> {
    let mut cmd =
        tokio::process::Command::from(std::mem::replace(cmd, std::process::Command::new("true")));
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = cmd
        .spawn()
        .map_err(|e| Error::python_env(format!("{what}: cannot start the installer")).because(e))?;
    let output = tokio::time::timeout(INSTALL_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| {
            Error::python_env(format!(
                "{what} did not finish within {} minutes",
                INSTALL_TIMEOUT.as_secs() / 60
            ))
        })?
        .map_err(|e| Error::python_env(format!("{what} failed")).because(e))?;
    let mut log = String::from_utf8_lossy(&output.stderr).into_owned();
    log.push_str(&String::from_utf8_lossy(&output.stdout));
    let log = log.trim().to_owned();
    if output.status.success() {
        Ok(log)
    } else {
        Err(Error::python_env(format!(
            "{what} failed ({}):\n{log}",
            output.status
        )))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_workspace_without_pyproject_is_told_so() {
        let ws = tempfile::tempdir().unwrap();
        let err = create_project_env(ws.path()).await.unwrap_err().to_string();
        assert!(err.contains("has no pyproject.toml"), "{err}");
    }
}
