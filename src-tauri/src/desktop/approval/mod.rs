//! A tool call waits for the person: a native approval dialog shows the request at the head
//! of the queue and how many wait behind it. The dialog is not modal: the window and its
//! approval panel stay usable while it is up, and a decision anywhere (the panel, a batch, a
//! rule, a grant, a withdrawal, the timeout) closes or advances it, by request id. Nothing is
//! approved without a person, a rule they made or a grant they gave (a closed dialog
//! rejects).
//!
//! On Linux the dialog is ipybox's own GTK window ([`gtk_dialog`]); elsewhere it is the
//! platform's message dialog (Approve/Reject), one at a time.

#[cfg(target_os = "linux")]
mod gtk_dialog;
#[cfg(target_os = "linux")]
mod notify;
// The dialog's parts are laid out for the GTK dialog; elsewhere only the message is used.
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "the GTK dialog's parts")
)]
pub(super) mod text;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tauri::{AppHandle, Runtime};

use super::settings::LiveSettings;
use crate::events::DecidedBy;
use crate::sync::lock;
use crate::tools::grants::Grants;
use crate::tools::{ApprovalHandler, ApprovalRequest, Decision, Rule};

/// Asks the person about each request, the head of the queue in a dialog.
#[derive(Debug)]
pub struct Asker<R: Runtime> {
    inner: Arc<Shared<R>>,
}

/// What the dialog's code on the main thread shares with the engine's threads.
struct Shared<R: Runtime> {
    app: AppHandle<R>,
    /// Undecided requests, oldest first; the dialog shows the first.
    queue: Mutex<VecDeque<ApprovalRequest>>,
    /// The app's settings (the fallback dialog says the approval timeout in force).
    #[cfg_attr(target_os = "linux", allow(dead_code))]
    settings: LiveSettings,
    /// "Allow for this session" grants; queued requests a new grant covers are decided by it.
    grants: Arc<Grants>,
    /// "Always allow this tool": the rule put first among the workspace's rules.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    add_rule: AddRule,
}

impl<R: Runtime> std::fmt::Debug for Shared<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("queue", &self.queue)
            .field("grants", &self.grants)
            .finish_non_exhaustive()
    }
}

/// Puts a rule first among the open workspace's rules and saves them; the rule's text, or
/// why it was not added, in words.
pub type AddRule = Arc<dyn Fn(Rule) -> Result<String, String> + Send + Sync>;

impl<R: Runtime> Asker<R> {
    /// Ask in `app`'s window; `settings` tell how long a request waits, `grants` hold what
    /// the person allowed for a session, `add_rule` keeps what they always allow.
    pub fn new(
        app: AppHandle<R>,
        settings: LiveSettings,
        grants: Arc<Grants>,
        add_rule: AddRule,
    ) -> Arc<Self> {
        Arc::new(Asker {
            inner: Arc::new(Shared {
                app,
                queue: Mutex::default(),
                settings,
                grants,
                add_rule,
            }),
        })
    }

    /// The request `id` no longer waits (decided in the panel, by a batch, withdrawn): its
    /// dialog closes, and the next request's opens.
    pub fn settled(&self, _id: u64) {
        refresh(&self.inner);
    }
}

impl<R: Runtime> ApprovalHandler for Asker<R> {
    fn handle(&self, request: ApprovalRequest) -> BoxFuture<'static, ()> {
        lock(&self.inner.queue).push_back(request);
        refresh(&self.inner);
        Box::pin(std::future::ready(()))
    }

    /// The person, in the native dialog every security question uses.
    fn start_program(
        &self,
        request: crate::approval::ProgramRequest,
    ) -> BoxFuture<'static, crate::approval::ProgramVerdict> {
        let app = self.inner.app.clone();
        Box::pin(async move { super::program::ask(&app, request).await })
    }
}

impl<R: Runtime> Shared<R> {
    /// Drop decided requests from the queue, deciding those a grant now covers; the head
    /// and how many wait behind it.
    fn head(&self) -> (Option<ApprovalRequest>, usize) {
        let mut q = lock(&self.queue);
        q.retain(|r| {
            if !r.is_decided() && r.details().change.is_none() && self.grants.covering(r).is_some()
            {
                r.decide_as(Decision::Accept, DecidedBy::Grant, None);
            }
            !r.is_decided()
        });
        (q.front().cloned(), q.len().saturating_sub(1))
    }
}

/// Bring the dialog up to date with the queue, on the main thread (GTK's).
fn refresh<R: Runtime>(shared: &Arc<Shared<R>>) {
    #[cfg(target_os = "linux")]
    {
        let s = shared.clone();
        let _ = shared
            .app
            .run_on_main_thread(move || gtk_dialog::refresh(&s));
    }
    #[cfg(not(target_os = "linux"))]
    fallback::pump(shared);
}

/// macOS and Windows: the platform's message dialog, Approve or Reject, one at a time.
#[cfg(not(target_os = "linux"))]
mod fallback {
    use std::sync::Arc;

    use tauri::{Manager, Runtime};
    use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};

    use super::{Shared, lock, text};

    static SHOWING: std::sync::Mutex<Option<u64>> = std::sync::Mutex::new(None);

    /// Show the head of the queue unless a dialog is open. Such a dialog cannot be closed
    /// from outside; the person's answer to a request decided meanwhile is ignored.
    pub(super) fn pump<R: Runtime>(shared: &Arc<Shared<R>>) {
        let (head, _) = shared.head();
        let Some(request) = head else { return };
        {
            let mut showing = lock(&SHOWING);
            if showing.is_some() {
                return;
            }
            *showing = Some(request.id());
        }
        let timeout = shared.settings.get().approval_timeout();
        let mut dialog = shared
            .app
            .dialog()
            .message(text::for_dialog(text::message(&request, timeout)))
            .title(text::title(&request))
            .kind(MessageDialogKind::Warning)
            .buttons(MessageDialogButtons::OkCancelCustom(
                "Approve".into(),
                "Reject".into(),
            ));
        if let Some(window) = shared.app.get_webview_window("main") {
            dialog = dialog.parent(&window);
        }
        let shared = shared.clone();
        dialog.show(move |approved| {
            if approved {
                request.accept();
            } else {
                request.reject_with("the person rejected it in the approval dialog");
            }
            *lock(&SHOWING) = None;
            pump(&shared);
        });
    }
}
