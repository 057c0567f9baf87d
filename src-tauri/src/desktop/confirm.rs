//! Security decisions are native: turning the sandbox off, running under a workspace policy
//! nobody accepted, trusting a notebook, serving agents, moving the kernel to a server,
//! deciding calls in a batch. A click in the window may ask the question; only a native
//! dialog, which nothing in the web view can draw over or click, answers it.

use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};

/// At most this many lines in a question, so its buttons stay on a small screen.
const MAX_LINES: usize = 28;
/// Lines longer than this are cut (GTK would wrap them onto more lines).
const MAX_LINE: usize = 110;

/// A question for the person.
#[derive(Debug, Clone)]
pub struct Question {
    /// The dialog's title.
    pub title: String,
    /// What changes, in words: a few short paragraphs, shown whole.
    pub message: String,
    /// What it is about, shown after the words: a policy, a list of calls. Untrusted text,
    /// escaped here; cut to a screenful.
    pub detail: String,
    /// The button that says yes (`Turn the sandbox off`), never a bare "OK".
    pub yes: String,
    /// The button that keeps things as they are.
    pub no: String,
}

impl Question {
    /// What the dialog says: the words, then the detail escaped and cut to a screenful.
    fn body(&self) -> String {
        super::approval::for_dialog(if self.detail.is_empty() {
            self.message.clone()
        } else {
            format!(
                "{}\n\n{}",
                self.message,
                bounded(&super::approval::wrap(&plain(&self.detail)))
            )
        })
    }
}

/// Ask `question` in a native dialog over the main window; `true` only when the person chose
/// the yes button (closing the dialog or Escape is no).
pub async fn confirm<R: Runtime>(app: &AppHandle<R>, question: Question) -> bool {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut dialog = app
        .dialog()
        .message(question.body())
        .title(question.title)
        .kind(MessageDialogKind::Warning)
        .buttons(MessageDialogButtons::OkCancelCustom(
            question.yes,
            question.no,
        ));
    if let Some(window) = app.get_webview_window("main") {
        dialog = dialog.parent(&window);
    }
    dialog.show(move |yes| {
        let _ = tx.send(yes);
    });
    rx.await.unwrap_or(false)
}

/// Whether `detail` shows whole in a question: nothing of it cut. A question about something
/// that does not fit is not asked.
pub fn fits(detail: &str) -> bool {
    super::approval::wrap(&plain(detail)).lines().count() < MAX_LINES
}

/// Tell the person something in a native dialog (an error: what went wrong, and that nothing
/// changed), and wait until they close it. `message` is escaped here.
pub async fn tell<R: Runtime>(app: &AppHandle<R>, title: &str, message: &str) {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut dialog = app
        .dialog()
        .message(super::approval::for_dialog(plain(message)))
        .title(title)
        .kind(MessageDialogKind::Error)
        .buttons(MessageDialogButtons::Ok);
    if let Some(window) = app.get_webview_window("main") {
        dialog = dialog.parent(&window);
    }
    dialog.show(move |_| {
        let _ = tx.send(());
    });
    let _ = rx.await;
}

/// [`confirm`] for a question nobody in the window asked (an `ipybox://` link arrives while
/// the person types in a cell): Return and Escape choose the keeping button, and the yes
/// button takes no click or key until the approval dialog's arming time has passed, so a
/// keystroke or a click meant for the window never says yes.
pub async fn confirm_unprompted<R: Runtime>(app: &AppHandle<R>, question: Question) -> bool {
    #[cfg(target_os = "linux")]
    {
        use gtk::prelude::*;
        let body = question.body();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let handle = app.clone();
        let shown = app.run_on_main_thread(move || {
            let parent = handle
                .get_webview_window("main")
                .and_then(|w| w.gtk_window().ok());
            let mut builder = gtk::MessageDialog::builder()
                .message_type(gtk::MessageType::Warning)
                .buttons(gtk::ButtonsType::None)
                .modal(true)
                .title(&question.title)
                .text(&question.title)
                .secondary_text(&body);
            if let Some(parent) = &parent {
                builder = builder.transient_for(parent);
            }
            let dialog = builder.build();
            // Each button's first letter is its mnemonic (Alt+A for "Add server").
            let mnemonic = |label: &str| format!("_{}", label.replace('_', "__"));
            dialog.add_button(&mnemonic(&question.no), gtk::ResponseType::Cancel);
            dialog.add_button(&mnemonic(&question.yes), gtk::ResponseType::Accept);
            dialog.set_default_response(gtk::ResponseType::Cancel);
            dialog.set_response_sensitive(gtk::ResponseType::Accept, false);
            let weak = dialog.downgrade();
            gtk::glib::timeout_add_local_once(super::approval::arming(), move || {
                if let Some(d) = weak.upgrade() {
                    d.set_response_sensitive(gtk::ResponseType::Accept, true);
                }
            });
            let tx = std::cell::RefCell::new(Some(tx));
            dialog.connect_response(move |d, response| {
                if let Some(tx) = tx.borrow_mut().take() {
                    let _ = tx.send(response == gtk::ResponseType::Accept);
                }
                // SAFETY: the dialog is ours and not borrowed elsewhere.
                unsafe { d.destroy() };
            });
            dialog.show_all();
        });
        if shown.is_err() {
            return false;
        }
        rx.await.unwrap_or(false)
    }
    #[cfg(not(target_os = "linux"))]
    {
        confirm(app, question).await
    }
}

/// Untrusted text as a person must read it: controls and invisible formatting shown as
/// `\uXXXX` (newlines kept).
pub fn plain(text: &str) -> String {
    crate::display::escape_lines(text).into_owned()
}

/// `text` cut to [`MAX_LINES`] lines of at most [`MAX_LINE`] characters, saying what was
/// left out.
pub fn bounded(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::new();
    let shown = if lines.len() > MAX_LINES {
        MAX_LINES - 1
    } else {
        lines.len()
    };
    for line in &lines[..shown] {
        let count = line.chars().count();
        if count > MAX_LINE {
            let cut: String = line.chars().take(MAX_LINE - 1).collect();
            out.push(format!("{cut}…"));
        } else {
            out.push((*line).to_owned());
        }
    }
    if lines.len() > shown {
        out.push(format!("… and {} more lines", lines.len() - shown));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_question_is_cut_to_a_screenful() {
        let text: String = (0..200)
            .map(|i| format!("line {i} {}\n", "x".repeat(i)))
            .collect();
        let shown = bounded(&text);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines.len(), MAX_LINES);
        assert_eq!(lines[MAX_LINES - 1], "… and 173 more lines");
        assert!(lines.iter().all(|l| l.chars().count() <= MAX_LINE));
        assert_eq!(bounded("short\ntext"), "short\ntext");
    }
}
