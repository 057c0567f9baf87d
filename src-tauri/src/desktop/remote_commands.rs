//! Where the workspace's kernel runs, as the window chooses it: what is kept, a server
//! asked before it is chosen, and the session restarted there. What is kept, and how its
//! secret is, is in `remote.rs`.

use tauri::{AppHandle, Runtime, State};

use super::dto::{DesktopError, RemoteChoice, RemoteRequest, RemoteState};
use super::remote::{gateway_for, save};
use super::session::Desktop;
use crate::audit::WorkspaceState;
use crate::error::Error;
use crate::executor::GatewayProbe;

type Reply<T> = std::result::Result<T, DesktopError>;

/// What the Settings dialog shows of where the kernel runs.
pub fn state_of(desktop: &Desktop) -> Result<RemoteState, DesktopError> {
    let state = WorkspaceState::of(&desktop.workspace()?)?;
    Ok(RemoteState {
        choice: RemoteChoice::load(state.dir()),
        running: desktop.session_remote()?,
        command_line: desktop.launch_remote().map(|r| r.url),
    })
}

/// Where the workspace's kernel runs, and what is kept for it.
#[tauri::command]
pub fn remote_state(desktop: State<'_, Desktop>) -> Reply<RemoteState> {
    state_of(&desktop)
}

/// Ask a server what it is and which kernels it offers, without starting one.
#[tauri::command]
pub async fn probe_remote(
    desktop: State<'_, Desktop>,
    request: RemoteRequest,
) -> Reply<GatewayProbe> {
    let state = WorkspaceState::of(&desktop.workspace()?)?;
    let gateway = gateway_for(&request, &state)?;
    Ok(gateway.probe().await?)
}

/// Run the workspace's kernels on a server (`request`), or on this computer (`None`): the
/// server must answer first (else the error, and the running kernel stays); then the choice
/// is kept and the session restarts there, its state lost. A kernel that cannot start there
/// brings the previous choice back.
#[tauri::command]
pub async fn apply_remote<R: Runtime>(
    app: AppHandle<R>,
    desktop: State<'_, Desktop>,
    request: Option<RemoteRequest>,
) -> Reply<RemoteState> {
    if let Some(launch) = desktop.launch_remote() {
        return Err(Error::config(format!(
            "this run's server was set on the command line ({}); start ipybox without --gateway-url to choose it here",
            launch.url
        ))
        .into());
    }
    let state = WorkspaceState::of(&desktop.workspace()?)?;
    let gateway = request
        .as_ref()
        .map(|r| gateway_for(r, &state))
        .transpose()?;
    if let Some(gateway) = &gateway {
        gateway.probe().await?;
        if desktop.session_remote()?.as_deref() != Some(gateway.url.as_str()) {
            let question = super::confirm::Question {
                title: "Run the kernel on a server?".into(),
                message: format!(
                    "The kernel of this notebook restarts on {}.\n\nYour code, its output and the arguments of the tool calls it makes go to that server, which runs them with whatever rights it has there. ipybox's sandbox does not apply on a server.",
                    crate::display::escape(&gateway.url)
                ),
                detail: String::new(),
                warnings: Vec::new(),
                yes: "Run on the server".into(),
                no: "Cancel".into(),
            };
            if !super::confirm::confirm(&app, question).await {
                return Err(Error::config("Not applied: the kernel stays where it runs").into());
            }
        }
    }
    // A kept server whose secret is gone counts as this computer.
    let previous = RemoteChoice::load(state.dir()).and_then(|c| c.gateway(&state).ok());
    save(&state, gateway.as_ref())?;
    desktop.restart(&app).await?;
    if let Some(why) = super::policy_commands::start_failure(&desktop).await
        && previous != gateway
    {
        // The server answered but no kernel starts there: back to where it ran before.
        save(&state, previous.as_ref())?;
        desktop.restart(&app).await?;
        return Err(Error::kernel_start(format!(
            "no kernel could start there, so it was started again where it ran before (its variables are lost): {why}"
        ))
        .into());
    }
    state_of(&desktop)
}
