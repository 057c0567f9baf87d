//! What reaches the running app from outside: another `ipybox open` of this workspace (the
//! window comes forward, and the notebook it names opens through the window's own
//! open-notebook path, which saves the current one first), and `ipybox://add-server` links,
//! which propose a server that is registered only once the person confirms it in a native
//! dialog. A link does nothing else: it cannot approve a call, change the sandbox or serve
//! agents.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tauri::{AppHandle, Emitter, Manager, Runtime};
use tokio::sync::mpsc;

use super::confirm::{Question, confirm_unprompted, fits, tell};
use super::session::Desktop;
use crate::display::escape;
use crate::instance::{Owner, Request};
use crate::server_link::ServerLink;

/// How the app takes requests: the workspace's lock and socket (none when they could not be
/// had: the app then runs alone, as before), the channel requests arrive on, and the
/// requests of its own command line (a link it was started with).
#[derive(Debug)]
pub struct Arrivals {
    /// The workspace's lock and socket.
    pub owner: Option<Owner>,
    /// Where requests are sent (a new workspace's socket sends here too).
    pub sender: mpsc::UnboundedSender<Request>,
    /// Where they arrive.
    pub receiver: mpsc::UnboundedReceiver<Request>,
    /// Requests of the app's own command line, handled once the window is up.
    pub first: Vec<Request>,
}

impl Arrivals {
    /// A channel, no lock, nothing to do at start.
    pub fn alone() -> Arrivals {
        let (sender, receiver) = mpsc::unbounded_channel();
        Arrivals {
            owner: None,
            sender,
            receiver,
            first: Vec::new(),
        }
    }
}

/// Handle requests as they come, once the window has loaded (a notebook to open is the
/// window's to open, and a dialog needs its window).
pub(super) fn listen<R: Runtime>(
    app: &AppHandle<R>,
    mut receiver: mpsc::UnboundedReceiver<Request>,
    first: Vec<Request>,
) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        app.state::<Desktop>().window_loaded().await;
        // One link's question at a time: a page firing links by the dozen gets one dialog.
        let asking = Arc::new(AtomicBool::new(false));
        for request in first {
            handle(&app, request, &asking);
        }
        while let Some(request) = receiver.recv().await {
            handle(&app, request, &asking);
        }
    });
}

fn handle<R: Runtime>(app: &AppHandle<R>, request: Request, asking: &Arc<AtomicBool>) {
    bring_forward(app);
    match request {
        Request::Open { notebook: None } => {}
        Request::Open {
            notebook: Some(notebook),
        } => {
            let desktop = app.state::<Desktop>();
            let ours = desktop.workspace().ok();
            // Only a notebook of this workspace: another one is another app's.
            if notebook.is_absolute() && notebook.parent() == ours.as_deref() {
                let _ = app.emit("open-request", notebook.display().to_string());
            } else {
                tracing::warn!(
                    notebook = %escape(&notebook.display().to_string()),
                    "a request to open a notebook of another workspace was ignored"
                );
            }
        }
        Request::Link { url } => {
            if asking.swap(true, Ordering::SeqCst) {
                tracing::warn!("an ipybox link was ignored: another link's question is open");
                return;
            }
            let (app, asking) = (app.clone(), asking.clone());
            tauri::async_runtime::spawn(async move {
                propose(&app, &url).await;
                asking.store(false, Ordering::SeqCst);
            });
        }
    }
}

/// The window in front, as if the person had switched to it.
fn bring_forward<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
}

/// Show what `url` proposes and register it only if the person confirms.
async fn propose<R: Runtime>(app: &AppHandle<R>, url: &str) {
    const REFUSED: &str = "This ipybox link cannot be used";
    let link = match ServerLink::parse(url) {
        Ok(link) => link,
        Err(e) => {
            tracing::warn!("an ipybox link was refused: {e}");
            let why = e.to_string();
            let mut chars = why.chars();
            let why: String = chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect())
                .unwrap_or_default();
            tell(app, REFUSED, &format!("{why}.\n\nNothing was changed.")).await;
            return;
        }
    };
    let desktop = app.state::<Desktop>();
    let (Ok(workspace), Ok(executor)) = (desktop.workspace(), desktop.executor()) else {
        tell(
            app,
            REFUSED,
            "No workspace is open to add the server to.\n\nNothing was changed.",
        )
        .await;
        return;
    };
    // A path given absolutely may still be in the workspace, which kernel code writes.
    if let Some(place) = link.names_place_in(&workspace) {
        tell(
            app,
            REFUSED,
            &format!("The server it proposes names “{place}”, in this workspace's folder, where code in the kernel writes; a link cannot name the workspace. Register such a server from the MCP servers panel or with `ipybox register`.\n\nNothing was changed."),
        )
        .await;
        return;
    }
    let detail = link.describe();
    if !fits(&detail) {
        tell(
            app,
            REFUSED,
            "The server it proposes is too large to show on one screen, so it cannot be confirmed here. Register it with `ipybox register` instead.\n\nNothing was changed.",
        )
        .await;
        return;
    }
    let existing = executor
        .servers()
        .ok()
        .and_then(|list| list.into_iter().find(|s| s.name == link.name));
    let mut message = format!(
        "A link asks to add the MCP server “{}” to the workspace {}.\n\n",
        link.name,
        escape(&workspace.display().to_string())
    );
    message.push_str(if link.runs_a_program() {
        "Adding it RUNS THE PROGRAM BELOW ON THIS COMPUTER with your rights: it can read and change your files and reach the network. It runs now, to list its tools, and again whenever code calls them. Add it only if you trust where the link came from."
    } else {
        "ipybox will connect to the address below and send it the headers shown: now, to list its tools, and again whenever code calls them. Add it only if you trust where the link came from."
    });
    if let Some(old) = &existing {
        message.push_str(&format!(
            "\n\nIt REPLACES the server “{}” registered now: {}",
            old.name,
            escape(&old.params.summary())
        ));
    }
    let folder = match &link.params.cwd {
        Some(cwd) => std::path::PathBuf::from(cwd),
        None => crate::process::neutral_dir().to_path_buf(),
    };
    let question = Question {
        title: "Add an MCP server from a link?".into(),
        message,
        detail,
        warnings: match &link.params.command {
            Some(command) => crate::approval::risks(
                command,
                &link.params.args,
                &link.params.env,
                &workspace,
                &folder,
            ),
            None => Vec::new(),
        },
        yes: if existing.is_some() {
            "Replace server".into()
        } else {
            "Add server".into()
        },
        no: "Cancel".into(),
    };
    if !confirm_unprompted(app, question).await {
        tracing::info!(server = %link.name, "a server proposed by a link was declined");
        return;
    }
    match executor
        .update_mcp_server(&link.name, Some(&link.params))
        .await
    {
        Ok(_) => {
            tracing::info!(server = %link.name, "a server proposed by a link was registered");
            let _ = app.emit("servers-changed", &link.name);
        }
        Err(e) => {
            tell(
                app,
                "The server was not added",
                &format!("“{}” could not be added: {e}", link.name),
            )
            .await;
        }
    }
}
