//! The app's own MCP endpoint: agents (Claude Code, Claude Desktop, …) connect to it over
//! Streamable HTTP on this machine's loopback with a bearer token. Each agent session runs
//! in a kernel of its own on the workspace; its cells appear in the window as they run, and
//! a person approves its tool calls in the window, by the same dialog, rules and audit log as
//! the notebook's (the [`Relay`]).
//!
//! Whether it is on, its port and its token are kept per workspace in ipybox's data
//! directory (so a configuration pasted into an agent keeps working), never in the
//! workspace.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Emitter, Runtime};
use tokio::sync::{mpsc, oneshot};

use super::place::Place;
use crate::audit::{AuditEntry, AuditLog};
use crate::error::{Error, Result};
use crate::executor::CodeExecutor;
use crate::mcp_server::{
    ActivityListener, AgentActivity, FixedAddresses, HttpOptions, Listener, McpServerConfig,
    SessionControl,
};
use crate::relay::Relay;
use crate::tools::grants::Grants;

/// Agents' activity reaches the window in frames of this length, not event by event.
const FRAME: Duration = Duration::from_millis(16);

/// A tool call of an agent waits this long on the agent's side; the window's approval
/// timeout (the person's setting) ends it first.
const AGENT_SIDE_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// What is kept for a workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Saved {
    /// Serve when the workspace opens.
    pub enabled: bool,
    /// The port last served on (the same one again, so pasted configurations keep working).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Agents send `Authorization: Bearer <token>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

impl Saved {
    fn path(state_dir: &Path) -> PathBuf {
        state_dir.join("mcp-endpoint.json")
    }

    /// As kept in `state_dir` (the defaults when nothing or something unreadable is).
    pub fn load(state_dir: &Path) -> Saved {
        std::fs::read(Self::path(state_dir))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Keep it in `state_dir` (which exists), readable by this user only: it holds the
    /// token.
    pub fn save(&self, state_dir: &Path) -> Result<()> {
        let text = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::config("the MCP endpoint's settings").because(e))?;
        crate::fsutil::write_private(&Self::path(state_dir), &text)
    }
}

/// A running endpoint.
#[derive(Debug)]
pub struct Endpoint {
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// The bearer token.
    pub token: String,
    stop: Option<oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<Result<()>>,
    control: SessionControl,
}

/// What the endpoint needs from the window's session.
pub struct Serve<'a, R: Runtime> {
    /// The window, told of agents' activity (`agent` events).
    pub app: &'a AppHandle<R>,
    /// The workspace.
    pub workspace: &'a Path,
    /// The window's executor: its session approves agents' calls.
    pub approver: CodeExecutor,
    /// Where the window's kernels run: agents' kernels run there too.
    pub place: Place,
    /// The workspace's audit log (calls the window never heard of are written here).
    pub audit: Option<AuditLog>,
    /// The session's grants: an agent session's end ends those given for it.
    pub grants: Arc<Grants>,
}

impl Endpoint {
    /// Serve on `saved.port` (a free one when it has none or it is taken), with
    /// `saved.token` (a new one when it has none). Returns the endpoint and what to keep.
    pub async fn start<R: Runtime>(
        serve: Serve<'_, R>,
        saved: &Saved,
    ) -> Result<(Endpoint, Saved)> {
        let listener = match saved.port {
            Some(port) => match bind_again(port).await {
                Ok(l) => l,
                Err(e) => {
                    tracing::warn!(
                        port,
                        "the MCP endpoint's port is taken ({e}); using another"
                    );
                    bind_any().await?
                }
            },
            None => bind_any().await?,
        };
        let port = listener
            .local_addr()
            .map_err(|e| Error::io("reading the MCP endpoint's address", e))?
            .port();
        let token = saved.token.clone().unwrap_or_else(crate::auth::new_token);
        let relay = Relay::new(serve.approver);
        let (audit, workspace) = (serve.audit, serve.workspace.to_path_buf());
        let forward = relay.clone();
        let listener_fn = Listener(Arc::new(move |event| {
            if forward.forward(&event) {
                return;
            }
            if let (Some(log), Some(entry)) = (&audit, AuditEntry::from_event(&event, &workspace))
                && let Err(e) = log.append(&entry)
            {
                tracing::error!("the audit log missed an agent's tool call: {e}");
            }
        }));
        let config = McpServerConfig {
            gateway: serve.place.remote,
            workspace: serve.workspace.to_path_buf(),
            approval: Arc::new(relay),
            python: None,
            sandbox: serve.place.sandbox,
            gateway_log_level: None,
            fixed: FixedAddresses::default(),
            listener: Some(listener_fn),
            activity: Some(activity_to(serve.app.clone(), serve.grants.clone())),
            approval_timeout: Some(AGENT_SIDE_TIMEOUT),
        };
        let control = SessionControl::default();
        let options = HttpOptions {
            token: Some(token.clone()),
            control: Some(control.clone()),
            ..HttpOptions::default()
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let served = tokio::spawn(crate::mcp_server::serve_http(
            config,
            listener,
            options,
            async move {
                let _ = stopped.await;
            },
        ));
        let kept = Saved {
            enabled: true,
            port: Some(port),
            token: Some(token.clone()),
        };
        Ok((
            Endpoint {
                url: format!("http://127.0.0.1:{port}/mcp"),
                token,
                stop: Some(stop),
                served,
                control,
            },
            kept,
        ))
    }

    /// End the agent session `serial` (its tab was closed): its kernel stops and its client
    /// is told the session is gone. `false` when no such session runs.
    pub async fn end_session(&self, serial: u64) -> bool {
        self.control
            .end(serial, "the person closed the agent's tab in the window")
            .await
    }

    /// Stop serving: agents' sessions end and their kernels stop.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match (&mut self.served).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("the MCP endpoint stopped with an error: {e}"),
            Err(e) => tracing::warn!("the MCP endpoint's task failed: {e}"),
        }
    }
}

/// The port served on last time. An app that just closed on this workspace may hold it for
/// a few more seconds while it stops its kernels: wait for it rather than move, so that the
/// configurations agents hold keep working.
async fn bind_again(port: u16) -> std::io::Result<tokio::net::TcpListener> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
            Err(e)
                if e.kind() == std::io::ErrorKind::AddrInUse
                    && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            other => return other,
        }
    }
}

async fn bind_any() -> Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| Error::io("opening a port on 127.0.0.1 for the MCP endpoint", e))
}

/// Agents' activity, to the window as `agent` events, a frame's worth at a time.
fn activity_to<R: Runtime>(app: AppHandle<R>, grants: Arc<Grants>) -> ActivityListener {
    let (tx, mut rx) = mpsc::unbounded_channel::<AgentActivity>();
    tokio::spawn(async move {
        while let Some(first) = rx.recv().await {
            let mut batch = vec![first];
            tokio::time::sleep(FRAME).await;
            while let Ok(more) = rx.try_recv() {
                batch.push(more);
            }
            let _ = app.emit("agent", &batch);
        }
    });
    // The names of the sessions seen, so that a session's end ends its grants ("Allow for
    // this session" in the approval dialog).
    let names = std::sync::Mutex::new(std::collections::HashMap::<u64, String>::new());
    ActivityListener(Arc::new(move |activity| {
        match &activity {
            AgentActivity::CellQueued { session, name, .. } => {
                if let Ok(mut names) = names.lock() {
                    names.insert(*session, name.clone());
                }
            }
            AgentActivity::SessionEnded { session, .. } => {
                let name = names.lock().ok().and_then(|mut n| n.remove(session));
                if let Some(name) = name {
                    let id = name.strip_prefix("agent session ").unwrap_or(&name);
                    grants.agent_session_ended(id);
                }
            }
            _ => {}
        }
        let _ = tx.send(activity);
    }))
}
