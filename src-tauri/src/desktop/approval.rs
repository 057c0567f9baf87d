//! A tool call waits for the person: a native Approve/Reject dialog, one at a time. Requests
//! that arrive while a dialog is open wait in a queue (the window's approval panel lists
//! them and can decide them in a batch); a dialog whose request was decided elsewhere or
//! withdrawn closes itself. Nothing is approved without a person or a rule they made (a
//! closed dialog rejects).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};

use super::settings::LiveSettings;
use crate::tools::{ApprovalHandler, ApprovalRequest};

/// How much of the arguments the dialog shows; the panel shows them whole.
const ARGS_SHOWN: usize = 1500;

/// The dialog's title: `Approve tool call — SERVER.TOOL`.
pub fn title(request: &ApprovalRequest) -> String {
    format!(
        "Approve tool call — {}.{}",
        request.server_name(),
        request.tool_name()
    )
}

/// What the dialog says: which tool of which server, asked by what, where the call goes,
/// with what, and how long it waits (`timeout`, the approval timeout in force).
pub fn message(request: &ApprovalRequest, timeout: Duration) -> String {
    let mut args =
        serde_json::to_string_pretty(request.tool_args()).unwrap_or_else(|_| "{}".into());
    if args.chars().count() > ARGS_SHOWN {
        args = args.chars().take(ARGS_SHOWN).collect::<String>()
            + "\n… (shortened: the approval panel shows it whole)";
    }
    let waits = format!(
        "if nobody decides within {}, the call is rejected",
        super::settings::describe_secs(timeout.as_secs())
    );
    let from = request.origin().map_or_else(
        || "Code in this notebook".to_owned(),
        |o| format!("Code in {o}"),
    );
    if request.server_name() == crate::tools::server::SHELL_SERVER {
        let command = request
            .tool_args()
            .get("command")
            .and_then(|c| c.as_str())
            .unwrap_or_default();
        return format!(
            "{from} wants to run a shell command:\n\n{command}\n\n\
             It runs with the kernel's rights (inside the sandbox when there is one). \
             Nothing runs until you decide; {waits}."
        );
    }
    format!(
        "{from} wants to call the tool \"{tool}\" of the MCP server \"{server}\".\n\n\
         Server: {description}\n\nArguments:\n{args}\n\nNothing runs until you decide; {waits}.",
        tool = request.tool_name(),
        server = request.server_name(),
        description = request.server(),
    )
}

/// Asks the person about each request, one dialog at a time.
#[derive(Debug)]
pub struct Asker<R: Runtime> {
    app: AppHandle<R>,
    queue: Arc<Mutex<Queue>>,
    /// The app's settings: the dialog says the approval timeout in force when it opens.
    settings: LiveSettings,
}

#[derive(Debug, Default)]
struct Queue {
    waiting: VecDeque<ApprovalRequest>,
    showing: Option<ApprovalRequest>,
}

impl<R: Runtime> Asker<R> {
    /// Ask in `app`'s window; `settings` tell how long a request waits.
    pub fn new(app: AppHandle<R>, settings: LiveSettings) -> Arc<Self> {
        Arc::new(Asker {
            app,
            queue: Arc::default(),
            settings,
        })
    }

    /// The request `id` no longer waits (decided in the panel, by a batch, withdrawn): close
    /// its dialog if it is open.
    pub fn settled(&self, id: u64) {
        let showing = lock(&self.queue)
            .showing
            .as_ref()
            .filter(|r| r.id() == id)
            .map(title);
        if let Some(title) = showing {
            close_dialog(&self.app, title);
        }
    }

    /// Show the next undecided request, unless a dialog is open.
    fn pump(app: &AppHandle<R>, queue: &Arc<Mutex<Queue>>, settings: &LiveSettings) {
        let next = {
            let mut q = lock(queue);
            if q.showing.is_some() {
                return;
            }
            let mut next = None;
            while let Some(request) = q.waiting.pop_front() {
                if !request.is_decided() {
                    next = Some(request);
                    break;
                }
            }
            q.showing = next.clone();
            next
        };
        let Some(request) = next else { return };
        let mut dialog = app
            .dialog()
            .message(message(&request, settings.get().approval_timeout()))
            .title(title(&request))
            .kind(MessageDialogKind::Warning)
            .buttons(MessageDialogButtons::OkCancelCustom(
                "Approve".into(),
                "Reject".into(),
            ));
        if let Some(window) = app.get_webview_window("main") {
            dialog = dialog.parent(&window);
        }
        let (app, queue, settings) = (app.clone(), queue.clone(), settings.clone());
        dialog.show(move |approved| {
            // A request settled elsewhere closed its dialog; deciding it again does nothing.
            if approved {
                request.accept();
            } else {
                request.reject_with("the person rejected it in the approval dialog");
            }
            lock(&queue).showing = None;
            Self::pump(&app, &queue, &settings);
        });
    }
}

impl<R: Runtime> ApprovalHandler for Asker<R> {
    fn handle(&self, request: ApprovalRequest) -> BoxFuture<'static, ()> {
        lock(&self.queue).waiting.push_back(request);
        Self::pump(&self.app, &self.queue, &self.settings);
        Box::pin(std::future::ready(()))
    }
}

/// Close the open dialog titled `title` as if it were dismissed.
fn close_dialog<R: Runtime>(app: &AppHandle<R>, title: String) {
    #[cfg(target_os = "linux")]
    {
        let _ = app.run_on_main_thread(move || {
            use gtk::prelude::{Cast, DialogExt, GtkWindowExt};
            for window in gtk::Window::list_toplevels() {
                if let Ok(dialog) = window.downcast::<gtk::Dialog>()
                    && dialog.title().is_some_and(|t| t == title)
                {
                    dialog.response(gtk::ResponseType::DeleteEvent);
                }
            }
        });
    }
    #[cfg(not(target_os = "linux"))]
    {
        // macOS and Windows dialogs cannot be closed from outside; the person's answer to
        // a withdrawn request is ignored.
        let _ = (app, title);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
