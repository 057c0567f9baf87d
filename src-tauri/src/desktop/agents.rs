//! A session's agents: the app's own MCP endpoint they connect to (served when the
//! workspace keeps it on, once the kernel runs), and the link over which `ipybox mcp
//! --approval desktop` asks this window to approve their calls.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tauri::{AppHandle, Emitter, Runtime};

use super::confirm::{Question, confirm};
use super::dto::{DesktopError, McpEndpointState};
use super::endpoint::{Endpoint, Saved, Serve};
use super::place::Place;
use crate::audit::WorkspaceState;
use crate::executor::CodeExecutor;
use crate::link::LinkServer;
use crate::tools::grants::Grants;

/// The endpoint as it is: serving, or why it could not.
#[derive(Debug, Default)]
pub struct EndpointSlot {
    running: Option<Endpoint>,
    error: Option<String>,
    /// The agents' kernels run in the sandbox.
    sandboxed: bool,
}

/// The slot a session keeps its endpoint in.
pub type Slot = Arc<tokio::sync::Mutex<EndpointSlot>>;

/// What a session's agents are served with.
#[derive(Debug, Clone)]
pub struct Agents {
    /// The workspace.
    pub workspace: PathBuf,
    /// The window's executor: its session approves agents' calls.
    pub approver: CodeExecutor,
    /// Where agents' kernels run.
    pub place: Place,
    /// The workspace's directory in ipybox's data directory.
    pub state: Option<WorkspaceState>,
    /// The session's grants.
    pub grants: Arc<Grants>,
}

impl Agents {
    /// The kernel runs: serve the endpoint if the workspace keeps it on (unless the window
    /// switched it on meanwhile), then take agents' approval requests over the link into
    /// `link` (dropped at once when the session is gone).
    pub async fn serve_once_started<R: Runtime>(
        self,
        app: &AppHandle<R>,
        slot: std::sync::Weak<tokio::sync::Mutex<EndpointSlot>>,
        link: std::sync::Weak<Mutex<Option<LinkServer>>>,
    ) {
        if let (Some(state), Some(slot)) = (&self.state, slot.upgrade()) {
            let saved = Saved::load(state.dir());
            let mut slot = slot.lock().await;
            if saved.enabled && slot.running.is_none() {
                serve(&mut slot, app, &self, state, saved).await;
                // The window asked before the endpoint was up: tell it now.
                let _ = app.emit("endpoint", state_of(&slot));
            }
        }
        match LinkServer::serve(&self.workspace, self.approver).await {
            Ok(server) => match link.upgrade() {
                Some(link) => *link.lock().unwrap_or_else(|e| e.into_inner()) = Some(server),
                None => drop(server),
            },
            Err(e) => tracing::warn!("agents cannot ask this window for approval: {e}"),
        }
    }

    /// Serve agents on this workspace, or stop (their sessions end, their kernels stop);
    /// `new_token`: serve with a new token. Serving is confirmed by the person first, in a
    /// native dialog that says what agents' code can do there. Kept for the next time the
    /// workspace opens.
    pub async fn set<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        slot: &Slot,
        state: &WorkspaceState,
        enabled: bool,
        new_token: bool,
    ) -> Result<McpEndpointState, DesktopError> {
        let mut slot = slot.lock().await;
        if enabled && slot.running.is_none() && !confirm(app, self.question()).await {
            return Ok(state_of(&slot));
        }
        if let Some(running) = slot.running.take() {
            running.stop().await;
        }
        slot.error = None;
        let mut saved = Saved::load(state.dir());
        saved.enabled = enabled;
        if new_token {
            saved.token = None;
        }
        state.create()?;
        if enabled {
            serve(&mut slot, app, self, state, saved).await;
        } else {
            saved.save(state.dir())?;
        }
        Ok(state_of(&slot))
    }

    fn question(&self) -> Question {
        let place = &self.place;
        Question {
            title: "Serve agents on this workspace?".into(),
            message: format!(
                "Any program on this computer that has the token shown in the window (an agent such as Claude Code) can then run code on {} and call this workspace's MCP tools. Each tool call still asks you, as the notebook's calls do.\n\nAgents may also ask to add MCP servers. A server that runs a program on this computer is added only if you say yes to it, in a dialog like this one, each time.\n\n{}",
                self.workspace.display(),
                if place.remote.is_some() {
                    "The agents' code runs on the kernel server this workspace uses, not on this computer."
                } else if place.sandbox.is_some() {
                    "The agents' code runs in the sandbox, under this workspace's policy, even if your own cells do not."
                } else {
                    "The kernel is NOT sandboxed: the agents' code runs with your own rights. It can read every file you can, change or delete them, start programs and reach the network."
                }
            ),
            detail: String::new(),
            warnings: Vec::new(),
            yes: "Serve agents".into(),
            no: "Cancel".into(),
        }
    }
}

/// End agent session `serial` and its kernel; `false` when no such session runs.
pub async fn end_session(slot: &Slot, serial: u64) -> bool {
    match &slot.lock().await.running {
        Some(endpoint) => endpoint.end_session(serial).await,
        None => false,
    }
}

/// The endpoint as it is now.
pub async fn state(slot: &Slot) -> McpEndpointState {
    state_of(&*slot.lock().await)
}

/// Stop serving agents: their sessions end, their kernels stop.
pub async fn stop(slot: &Slot) {
    let running = slot.lock().await.running.take();
    if let Some(running) = running {
        running.stop().await;
    }
}

/// Start serving into `slot` (which is empty), and keep what it served with; a failure is
/// kept in the slot for the window to show.
async fn serve<R: Runtime>(
    slot: &mut EndpointSlot,
    app: &AppHandle<R>,
    agents: &Agents,
    state: &WorkspaceState,
    saved: Saved,
) {
    let serve = Serve {
        app,
        workspace: &agents.workspace,
        approver: agents.approver.clone(),
        place: agents.place.clone(),
        audit: Some(state.audit_log()),
        grants: agents.grants.clone(),
    };
    slot.sandboxed = serve.place.sandbox.is_some();
    match Endpoint::start(serve, &saved).await {
        Ok((endpoint, kept)) => {
            if let Err(e) = kept.save(state.dir()) {
                tracing::warn!("the MCP endpoint's settings were not kept: {e}");
            }
            tracing::info!(url = %endpoint.url, "serving agents over MCP");
            slot.running = Some(endpoint);
        }
        Err(e) => slot.error = Some(e.to_string()),
    }
}

fn state_of(slot: &EndpointSlot) -> McpEndpointState {
    McpEndpointState {
        enabled: slot.running.is_some(),
        url: slot.running.as_ref().map(|e| e.url.clone()),
        token: slot.running.as_ref().map(|e| e.token.clone()),
        error: slot.error.clone(),
        sandboxed: slot.sandboxed,
    }
}
