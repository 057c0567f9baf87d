//! Security decisions are native: turning the sandbox off, running under a workspace policy
//! nobody accepted, trusting a notebook, serving agents, moving the kernel to a server,
//! deciding calls in a batch, adding a server from a link, letting an agent start a program.
//! A click in the window may ask the question; only a native dialog, which nothing in the
//! web view can draw over or click, answers it.
//!
//! Every such question is one dialog with one behaviour, so that no "yes" is ever given by a
//! key meant for something else: the keeping button (Cancel) is what closing, Escape and the
//! window manager's close mean; Return and Space decide nothing; the yes button takes no
//! click and no key until the dialog has been on screen for the approval dialog's arming time
//! (counted from when it is mapped, not from when it was asked for); after that its mnemonic
//! (Alt and its underlined letter) or a click says yes.

use tauri::{AppHandle, Manager, Runtime};

/// How long the decision buttons take no click or key after the dialog shows, at least.
#[cfg(target_os = "linux")]
const ARMING: std::time::Duration = std::time::Duration::from_millis(700);
/// How long they do at most, when a person asks for longer.
#[cfg(target_os = "linux")]
const ARMING_MAX: std::time::Duration = std::time::Duration::from_secs(10);

/// How long the decision buttons take no click or key: [`ARMING`], or longer when ipybox
/// was started with `IPYBOX_APPROVAL_ARMING_MS` (a slower reader's choice; never shorter,
/// and it comes from ipybox's own environment, which kernel code cannot change).
#[cfg(target_os = "linux")]
pub(in crate::desktop) fn arming() -> std::time::Duration {
    static CHOSEN: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        std::env::var("IPYBOX_APPROVAL_ARMING_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(ARMING, |ms| {
                std::time::Duration::from_millis(ms).clamp(ARMING, ARMING_MAX)
            })
    })
}
/// At most this many lines in a question, so its buttons stay on a small screen.
const MAX_LINES: usize = 28;
/// Lines longer than this are cut (GTK would wrap them onto more lines).
const MAX_LINE: usize = 110;

/// A question for the person.
#[derive(Debug, Clone, Default)]
pub struct Question {
    /// The dialog's title.
    pub title: String,
    /// What changes, in words: a few short paragraphs, shown whole.
    pub message: String,
    /// What it is about, shown after the words: a policy, a list of calls. Untrusted text,
    /// escaped here; cut to a screenful.
    pub detail: String,
    /// What deserves a second look, one line each, shown in bold red under the detail, just
    /// above the buttons (escaped here).
    pub warnings: Vec<String>,
    /// The button that says yes (`Turn the sandbox off`), never a bare "OK".
    pub yes: String,
    /// The button that keeps things as they are.
    pub no: String,
}

impl Question {
    /// What the dialog says: the words, then the detail escaped and cut to a screenful.
    fn body(&self) -> String {
        super::approval::text::for_dialog(if self.detail.is_empty() {
            self.message.clone()
        } else {
            format!(
                "{}\n\n{}",
                self.message,
                bounded(&super::approval::text::wrap(&plain(&self.detail)))
            )
        })
    }

    /// The warnings as shown: each escaped, on a line of its own.
    fn warning_text(&self) -> String {
        self.warnings
            .iter()
            .map(|w| format!("⚠ {}", plain(w)))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The two buttons' labels with their mnemonics (`_Cancel`, `_Trust notebook`): each its
/// first letter, the yes button's the first of its letters the keeping button's is not.
fn mnemonics(yes: &str, no: &str) -> (String, String) {
    let escape = |label: &str| label.replace('_', "__");
    let first = |label: &str, not: Option<char>| {
        label.char_indices().find(|(_, c)| {
            c.is_alphanumeric() && not.is_none_or(|n| !c.to_lowercase().eq(n.to_lowercase()))
        })
    };
    let with_mark = |label: &str, at: Option<(usize, char)>| match at {
        Some((i, _)) => format!("{}_{}", escape(&label[..i]), escape(&label[i..])),
        None => escape(label),
    };
    let no_at = first(no, None);
    let yes_at = first(yes, no_at.map(|(_, c)| c));
    (with_mark(yes, yes_at), with_mark(no, no_at))
}

/// Ask `question` in a native dialog over the main window, asked for by the person (a
/// click in the window); `true` only when the person chose the yes button once it was
/// armed.
pub async fn confirm<R: Runtime>(app: &AppHandle<R>, question: Question) -> bool {
    ask(app, question, true).await
}

/// [`confirm`] for a question nobody in the window asked (an `ipybox://` link, an agent's
/// request): the dialog does not take the keyboard from a person typing in a cell.
pub async fn confirm_unprompted<R: Runtime>(app: &AppHandle<R>, question: Question) -> bool {
    ask(app, question, false).await
}

async fn ask<R: Runtime>(app: &AppHandle<R>, question: Question, take_focus: bool) -> bool {
    #[cfg(target_os = "linux")]
    {
        use gtk::prelude::*;
        use gtk::{gdk, glib, pango};
        let body = question.body();
        let warnings = question.warning_text();
        let (yes, no) = mnemonics(&question.yes, &question.no);
        let title = question.title;
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
                .title(&title)
                .text(&title)
                .secondary_text(&body);
            if let Some(parent) = &parent {
                builder = builder.transient_for(parent);
            }
            let dialog = builder.build();
            dialog.set_focus_on_map(take_focus);
            if !warnings.is_empty()
                && let Ok(area) = dialog.message_area().downcast::<gtk::Box>()
            {
                let label = gtk::Label::new(Some(&warnings));
                label.set_widget_name("warnings");
                label.set_xalign(0.0);
                label.set_line_wrap(true);
                label.set_max_width_chars(90);
                label.set_selectable(false);
                let attrs = pango::AttrList::new();
                attrs.insert(pango::AttrInt::new_weight(pango::Weight::Bold));
                attrs.insert(pango::AttrColor::new_foreground(0xb000, 0x1000, 0x1000));
                label.set_attributes(Some(&attrs));
                area.pack_start(&label, false, false, 0);
                label.show();
            }
            let keep = dialog.add_button(&no, gtk::ResponseType::Cancel);
            let say_yes = dialog.add_button(&yes, gtk::ResponseType::Accept);
            say_yes.set_widget_name("yes");
            keep.set_widget_name("no");
            for b in [&keep, &say_yes] {
                // No button holds the focus, so no key reaches one but its mnemonic.
                b.set_can_focus(false);
                b.set_focus_on_click(false);
                // A mnemonic decides at once (GTK's own activation holds a button pressed
                // for a quarter of a second first); an insensitive button takes none.
                b.connect_mnemonic_activate(|b, _| {
                    if b.is_sensitive()
                        && let Ok(b) = b.clone().downcast::<gtk::Button>()
                    {
                        b.clicked();
                    }
                    glib::Propagation::Stop
                });
            }
            say_yes.set_sensitive(false);
            let armed = say_yes.downgrade();
            dialog.connect_map(move |_| {
                let armed = armed.clone();
                glib::timeout_add_local_once(arming(), move || {
                    if let Some(b) = armed.upgrade() {
                        b.set_sensitive(true);
                    }
                });
            });
            dialog.connect_key_press_event(|_, key| {
                use gdk::keys::constants as k;
                let keyval = key.keyval();
                if [k::Return, k::KP_Enter, k::ISO_Enter, k::space, k::KP_Space].contains(&keyval) {
                    // Nothing is a default: these keys decide nothing here.
                    return glib::Propagation::Stop;
                }
                glib::Propagation::Proceed
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
        let _ = take_focus;
        use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};
        let (tx, rx) = tokio::sync::oneshot::channel();
        let text = if question.warnings.is_empty() {
            question.body()
        } else {
            format!("{}\n\n{}", question.warning_text(), question.body())
        };
        let mut dialog = app
            .dialog()
            .message(text)
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
}

/// Whether `detail` shows whole in a question: nothing of it cut. A question about something
/// that does not fit is not asked.
pub fn fits(detail: &str) -> bool {
    super::approval::text::wrap(&plain(detail)).lines().count() < MAX_LINES
}

/// Tell the person something in a native dialog (an error: what went wrong, and that nothing
/// changed), and wait until they close it. `message` is escaped here.
pub async fn tell<R: Runtime>(app: &AppHandle<R>, title: &str, message: &str) {
    use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut dialog = app
        .dialog()
        .message(super::approval::text::for_dialog(plain(message)))
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

    #[test]
    fn each_button_has_its_own_mnemonic() {
        assert_eq!(
            mnemonics("Trust notebook", "Cancel"),
            ("_Trust notebook".into(), "_Cancel".into())
        );
        assert_eq!(
            mnemonics("Continue", "Cancel"),
            ("C_ontinue".into(), "_Cancel".into()),
            "the yes button never shares the keeping button's letter"
        );
        assert_eq!(
            mnemonics("Run my_server", "Cancel"),
            ("_Run my__server".into(), "_Cancel".into()),
            "an underscore in a label is shown, not a mnemonic"
        );
    }
}
