//! The approval dialog on Linux: a GTK window of ipybox's own, for the request at the head
//! of the queue.
//!
//! It is not modal: it stays above the app's window (transient for it) but the window, its
//! cells and its approval panel keep taking clicks and keys. It never takes the keyboard from
//! a person who is typing: it does not take the focus when it appears (`focus_on_map` off)
//! and does not accept it at all until the pointer enters it (`accept_focus` off, then on).
//! Under openbox (and most window managers) `focus_on_map` alone is a request the manager may
//! override for a transient window of the focused app; a window that does not accept the
//! focus is never given it. It asks for attention instead: the urgency hint, on it and on the
//! app's window. Its decision buttons stay insensitive for its first 700 ms on screen, none
//! is a default and none takes the focus, so Return and Space decide nothing; the buttons'
//! mnemonics (Alt+A, Alt+S, Alt+W, Alt+R) and Escape (reject) are its keys.
//!
//! Every text it shows that kernel code, a notebook, an agent or a server chose is escaped
//! and bounded by [`super::text`] and set with `set_text` (never as markup).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use gtk::prelude::*;
use gtk::{gdk, glib, pango};
use tauri::{Manager, Runtime};

use super::{Shared, text};
use crate::events::DecidedBy;
use crate::tools::{ApprovalRequest, Decision};

/// How wide the dialog is, in pixels.
const DIALOG_WIDTH: i32 = 640;
/// How wide the window's side panel (where the approval panel is) is at most, in pixels:
/// the dialog stays left of it, so the panel's buttons are never under the dialog.
const SIDE_PANEL: i32 = 400;
/// How tall the part of the dialog between its heading and its buttons may grow before it
/// scrolls: with them and the title bar, the dialog fits an 800-pixel-high screen.
const BODY_HEIGHT: i32 = 520;

thread_local! {
    /// The open dialogs, by request id (on GTK's thread only).
    static OPEN: RefCell<HashMap<u64, Open>> = RefCell::default();
}

/// An open dialog: its window, and the line that says how many more wait.
struct Open {
    window: gtk::Window,
    more: gtk::Label,
}

/// Bring the dialogs up to date with the queue: close those whose request was decided or
/// withdrawn, show the head's (or update how many wait behind it). On GTK's thread.
pub(super) fn refresh<R: Runtime>(shared: &Arc<Shared<R>>) {
    let (head, more) = shared.head();
    let head_id = head.as_ref().map(ApprovalRequest::id);
    let stale: Vec<(u64, Open)> = OPEN.with(|open| {
        let mut open = open.borrow_mut();
        let ids: Vec<u64> = open
            .keys()
            .copied()
            .filter(|id| Some(*id) != head_id)
            .collect();
        ids.into_iter()
            .filter_map(|id| open.remove(&id).map(|o| (id, o)))
            .collect()
    });
    for (id, _) in &stale {
        super::notify::settled(*id);
    }
    for (_, gone) in stale {
        // SAFETY: the window is ours, no other code holds a borrow into it, and destroying
        // a toplevel is how GTK 3 closes one without emitting delete-event (which rejects).
        unsafe { gone.window.destroy() };
    }
    let main = main_window(shared);
    let Some(request) = head else {
        if let Some(main) = main {
            main.set_urgency_hint(false);
        }
        return;
    };
    let shown = OPEN.with(|open| open.borrow().get(&request.id()).map(|o| o.more.clone()));
    match shown {
        Some(label) => set_optional(&label, &text::more_waiting(more)),
        None => {
            let open = build(shared, &request, more, main.as_ref());
            OPEN.with(|o| o.borrow_mut().insert(request.id(), open));
        }
    }
}

fn main_window<R: Runtime>(shared: &Shared<R>) -> Option<gtk::Window> {
    let window = shared.app.get_webview_window("main")?;
    window.gtk_window().ok().map(|w| w.upcast())
}

/// Put `dialog` over the notebook, left of the side panel and near the top of `main`.
fn place(dialog: &gtk::Window, main: &gtk::Window) {
    let (x, y) = main.position();
    let (width, _) = main.size();
    let (own, _) = dialog.size();
    let left = ((width - SIDE_PANEL - own) / 2).max(0);
    dialog.move_(x + left, y + 90);
}

/// A label showing `text` as it is (no markup, no mnemonic), wrapped, left-aligned.
fn label(text: &str) -> gtk::Label {
    let l = gtk::Label::new(None);
    l.set_text(text);
    l.set_xalign(0.0);
    l.set_line_wrap(true);
    l.set_line_wrap_mode(pango::WrapMode::WordChar);
    l.set_max_width_chars(64);
    l
}

/// `label` with these text attributes.
fn styled(text: &str, attrs: &[pango::Attribute]) -> gtk::Label {
    let l = label(text);
    let list = pango::AttrList::new();
    for a in attrs {
        list.insert(a.clone());
    }
    l.set_attributes(Some(&list));
    l
}

fn bold() -> pango::Attribute {
    pango::AttrInt::new_weight(pango::Weight::Bold).into()
}

fn small() -> pango::Attribute {
    pango::AttrFloat::new_scale(0.85).into()
}

fn grey() -> pango::Attribute {
    pango::AttrColor::new_foreground(0x5500, 0x5500, 0x5500).into()
}

fn mono() -> pango::Attribute {
    pango::AttrString::new_family("monospace").into()
}

/// Show `text`, and hide the label when there is none.
fn set_optional(l: &gtk::Label, text: &str) {
    l.set_text(text);
    l.set_visible(!text.is_empty());
    l.set_no_show_all(text.is_empty());
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

/// The dialog for `request`, shown.
fn build<R: Runtime>(
    shared: &Arc<Shared<R>>,
    request: &ApprovalRequest,
    more: usize,
    main: Option<&gtk::Window>,
) -> Open {
    let details = request.details();
    let window = gtk::Window::new(gtk::WindowType::Toplevel);
    window.set_title(&text::title(request));
    window.set_type_hint(gdk::WindowTypeHint::Dialog);
    window.set_modal(false);
    window.set_focus_on_map(false);
    window.set_accept_focus(false);
    window.set_urgency_hint(true);
    window.set_default_size(DIALOG_WIDTH, -1);
    window.set_border_width(16);
    if let Some(main) = main {
        window.set_transient_for(Some(main));
        window.set_destroy_with_parent(true);
        if !main.is_active() {
            main.set_urgency_hint(true);
        }
        super::notify::waiting(
            &shared.app,
            request,
            &text::who(request, details, now_ms()),
            main,
        );
    }

    let outer = gtk::Box::new(gtk::Orientation::Vertical, 10);
    let shell = request.server_name() == crate::tools::server::SHELL_SERVER;
    let heading = if shell {
        "Run this shell command?".to_owned()
    } else {
        format!(
            "Allow the tool {}.{}?",
            crate::display::escape(request.server_name()),
            crate::display::escape(request.tool_name())
        )
    };
    outer.pack_start(
        &styled(&heading, &[bold(), pango::AttrFloat::new_scale(1.2).into()]),
        false,
        false,
        0,
    );
    let more_label = styled("", &[small(), grey()]);
    set_optional(&more_label, &text::more_waiting(more));
    outer.pack_start(&more_label, false, false, 0);

    let body = gtk::Box::new(gtk::Orientation::Vertical, 8);
    let now = now_ms();
    body.pack_start(
        &label(&format!("Asked by: {}", text::who(request, details, now))),
        false,
        false,
        0,
    );
    if let Some(site) = text::call_site(details) {
        body.pack_start(&label(&format!("From: {site}")), false, false, 0);
    }
    if let Some(change) = &details.change {
        body.pack_start(
            &styled(
                "This tool changed since you accepted it",
                &[
                    bold(),
                    pango::AttrColor::new_foreground(0xa000, 0x2000, 0).into(),
                ],
            ),
            false,
            false,
            0,
        );
        let grid = gtk::Grid::new();
        grid.set_column_spacing(16);
        grid.set_row_spacing(4);
        grid.set_column_homogeneous(true);
        grid.attach(&styled("Before", &[bold()]), 0, 0, 1, 1);
        grid.attach(&styled("Now", &[bold()]), 1, 0, 1, 1);
        let before = styled(
            &text::definition_text(change.accepted.as_ref()),
            &[small(), mono()],
        );
        let after = styled(
            &text::definition_text(Some(&change.now)),
            &[small(), mono()],
        );
        before.set_max_width_chars(38);
        after.set_max_width_chars(38);
        before.set_yalign(0.0);
        after.set_yalign(0.0);
        grid.attach(&before, 0, 1, 1, 1);
        grid.attach(&after, 1, 1, 1, 1);
        body.pack_start(&grid, false, false, 0);
    }
    if let Some(tool) = &details.tool {
        if let Some((first, rest)) = text::description(tool) {
            body.pack_start(
                &styled("What the server says the tool does", &[bold()]),
                false,
                false,
                0,
            );
            body.pack_start(&label(&first), false, false, 0);
            if let Some(rest) = rest {
                let expander = gtk::Expander::new(Some("More of the description"));
                expander.add(&label(&rest));
                body.pack_start(&expander, false, false, 0);
            }
        }
        let hints = text::hint_labels(&tool.hints);
        if !hints.is_empty() {
            for hint in hints {
                body.pack_start(&label(hint), false, false, 0);
            }
            body.pack_start(
                &styled(text::HINTS_NOTE, &[small(), grey()]),
                false,
                false,
                0,
            );
        }
    }
    body.pack_start(
        &styled(
            &format!(
                "Server: {}",
                text::shorten(&crate::display::escape(request.server()), 150)
            ),
            &[small(), grey()],
        ),
        false,
        false,
        0,
    );
    body.pack_start(&styled("Arguments", &[bold()]), false, false, 0);
    let fields = text::fields(
        request.tool_args(),
        details.tool.as_ref().map(|t| &t.input_schema),
    );
    if fields.is_empty() {
        body.pack_start(&styled("(none)", &[grey()]), false, false, 0);
    } else {
        let grid = gtk::Grid::new();
        grid.set_column_spacing(12);
        grid.set_row_spacing(2);
        let mut row = 0;
        for field in fields {
            let name = styled(&field.name, &[bold()]);
            name.set_yalign(0.0);
            name.set_max_width_chars(20);
            grid.attach(&name, 0, row, 1, 1);
            let value = styled(&field.value, &[mono()]);
            value.set_max_width_chars(52);
            value.set_hexpand(true);
            grid.attach(&value, 1, row, 1, 1);
            row += 1;
            if let Some(d) = field.description {
                grid.attach(&styled(&d, &[small(), grey()]), 1, row, 1, 1);
                row += 1;
            }
        }
        body.pack_start(&grid, false, false, 0);
    }
    let scroll = gtk::ScrolledWindow::new(None::<&gtk::Adjustment>, None::<&gtk::Adjustment>);
    scroll.set_policy(gtk::PolicyType::Never, gtk::PolicyType::Automatic);
    scroll.set_propagate_natural_height(true);
    scroll.set_max_content_height(BODY_HEIGHT);
    scroll.add(&body);
    outer.pack_start(&scroll, true, true, 0);

    let deadline = serde_json::to_value(request)
        .ok()
        .and_then(|v| v["deadline"].as_u64())
        .unwrap_or_default();
    let countdown = styled(&text::countdown(deadline, now), &[bold()]);
    outer.pack_start(&countdown, false, false, 0);
    let weak = countdown.downgrade();
    glib::timeout_add_local(Duration::from_millis(500), move || match weak.upgrade() {
        Some(l) => {
            l.set_text(&text::countdown(deadline, now_ms()));
            glib::ControlFlow::Continue
        }
        None => glib::ControlFlow::Break,
    });

    let buttons = gtk::ButtonBox::new(gtk::Orientation::Horizontal);
    buttons.set_layout(gtk::ButtonBoxStyle::End);
    buttons.set_spacing(8);
    let choices = [
        ("_Reject", Choice::Reject),
        ("Al_ways allow this tool…", Choice::Always),
        ("Allow for this _session", Choice::Session),
        ("_Allow once", Choice::Once),
    ];
    let mut all = Vec::new();
    for (text, choice) in choices {
        let b = gtk::Button::with_mnemonic(text);
        b.set_can_focus(false);
        b.set_focus_on_click(false);
        b.set_sensitive(false);
        b.set_widget_name(choice.name());
        let (shared, request, dialog) = (shared.clone(), request.clone(), window.downgrade());
        b.connect_clicked(move |_| {
            if let Some(dialog) = dialog.upgrade() {
                choose(&shared, &request, choice, &dialog);
            }
        });
        // A mnemonic decides at once: GTK's own activation of a button holds it pressed for
        // a quarter of a second before it counts as clicked.
        b.connect_mnemonic_activate(|b, _| {
            if b.is_sensitive() {
                b.clicked();
            }
            glib::Propagation::Stop
        });
        buttons.add(&b);
        all.push(b);
    }
    if let Some(reject) = all.first() {
        buttons.set_child_secondary(reject, true);
    }
    outer.pack_start(&buttons, false, false, 0);
    window.add(&outer);

    // The buttons take clicks once the dialog has been on screen for a moment.
    let armed = all.iter().map(|b| b.downgrade()).collect::<Vec<_>>();
    window.connect_map(move |_| {
        let armed = armed.clone();
        glib::timeout_add_local_once(crate::desktop::confirm::arming(), move || {
            for b in armed.iter().filter_map(|b| b.upgrade()) {
                b.set_sensitive(true);
            }
        });
    });
    // The pointer in it: a click may focus it from now on.
    window.connect_enter_notify_event(|w, _| {
        w.set_accept_focus(true);
        glib::Propagation::Proceed
    });
    {
        let (shared, request) = (shared.clone(), request.clone());
        window.connect_key_press_event(move |w, key| {
            use gdk::keys::constants as k;
            let keyval = key.keyval();
            if keyval == k::Escape {
                choose(&shared, &request, Choice::Reject, w);
                return glib::Propagation::Stop;
            }
            if [k::Return, k::KP_Enter, k::ISO_Enter, k::space, k::KP_Space].contains(&keyval) {
                // Nothing is a default: these keys decide nothing here.
                return glib::Propagation::Stop;
            }
            glib::Propagation::Proceed
        });
    }
    {
        let (shared, request) = (shared.clone(), request.clone());
        window.connect_delete_event(move |w, _| {
            choose(&shared, &request, Choice::Reject, w);
            glib::Propagation::Stop
        });
    }
    window.show_all();
    // As tall as its content, up to BODY_HEIGHT, then scrolling; and no taller (wrapped
    // labels first ask for more height than they take at the dialog's width).
    let (_, natural) = body.preferred_height_for_width(DIALOG_WIDTH - 32);
    scroll.set_min_content_height(natural.min(BODY_HEIGHT));
    window.resize(DIALOG_WIDTH, 1);
    if let Some(main) = main {
        place(&window, main);
    }
    Open {
        window,
        more: more_label,
    }
}

/// The dialog's choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Once,
    Session,
    Always,
    Reject,
}

impl Choice {
    /// The button's widget name (for tests reading the dialog's accessibility tree).
    fn name(self) -> &'static str {
        match self {
            Choice::Once => "allow-once",
            Choice::Session => "allow-session",
            Choice::Always => "always-allow",
            Choice::Reject => "reject",
        }
    }
}

/// The person chose `choice` for `request` in `dialog`.
fn choose<R: Runtime>(
    shared: &Arc<Shared<R>>,
    request: &ApprovalRequest,
    choice: Choice,
    dialog: &gtk::Window,
) {
    match choice {
        Choice::Once => request.decide_as(Decision::Accept, DecidedBy::Person, None),
        Choice::Reject => request.decide_as(
            Decision::Reject,
            DecidedBy::Person,
            Some("the person rejected it in the approval dialog".into()),
        ),
        Choice::Session => {
            shared.grants.grant(request);
            request.decide_as(Decision::Accept, DecidedBy::Grant, None);
        }
        Choice::Always => return confirm_rule(shared, request, dialog),
    }
    refresh(shared);
}

/// "Always allow this tool…": a rule for every call to the tool, once the person confirms
/// it in a dialog that says what the rule covers.
fn confirm_rule<R: Runtime>(
    shared: &Arc<Shared<R>>,
    request: &ApprovalRequest,
    dialog: &gtk::Window,
) {
    let name = format!(
        "{}.{}",
        crate::display::escape(request.server_name()),
        crate::display::escape(request.tool_name())
    );
    let confirm = gtk::MessageDialog::builder()
        .transient_for(dialog)
        .destroy_with_parent(true)
        .message_type(gtk::MessageType::Question)
        .buttons(gtk::ButtonsType::None)
        .title(format!("Always allow {name}?"))
        .text(format!("Always allow every call to {name}?"))
        .secondary_text(format!(
            "The rule allows {name} with any arguments, from {whose} in this workspace, \
             without asking, until you remove it in the Approvals panel. It is saved with \
             this workspace's approval rules, and it allows this call too.",
            whose = if request.details().client.is_some() {
                "agents' code"
            } else {
                "this notebook's code"
            }
        ))
        .build();
    confirm.add_button("_Cancel", gtk::ResponseType::Cancel);
    confirm.add_button("_Always allow", gtk::ResponseType::Accept);
    confirm.set_default_response(gtk::ResponseType::Cancel);
    let (shared, request) = (shared.clone(), request.clone());
    confirm.connect_response(move |confirm, response| {
        // SAFETY: as for the approval dialog: ours, and not borrowed elsewhere.
        unsafe { confirm.destroy() };
        if response != gtk::ResponseType::Accept {
            return;
        }
        match add_rule(&shared, &request) {
            Ok(rule) => request.decide_by_rule(Decision::Accept, rule, None),
            Err(e) => {
                let error = gtk::MessageDialog::builder()
                    .message_type(gtk::MessageType::Error)
                    .buttons(gtk::ButtonsType::Close)
                    .text("The rule was not added")
                    .secondary_text(crate::display::escape(&e).into_owned())
                    .build();
                error.connect_response(|e, _| unsafe { e.destroy() });
                error.show_all();
            }
        }
        refresh(&shared);
    });
    confirm.show_all();
}

/// The rule the panel's "Always allow this tool" adds, first among the workspace's rules.
fn add_rule<R: Runtime>(shared: &Shared<R>, request: &ApprovalRequest) -> Result<String, String> {
    use crate::tools::{Rule, RuleDecision};
    let rule = Rule {
        server: request.server_name().to_owned(),
        tool: request.tool_name().to_owned(),
        args: Default::default(),
        exact_args: false,
        decision: RuleDecision::Allow,
        reason: None,
        comment: Some("added from the approval dialog".into()),
        read_only: false,
        scope: None,
        expires_at: None,
    };
    (shared.add_rule)(rule.scoped_to_caller(request))
}
