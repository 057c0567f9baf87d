//! A desktop notification when a call waits and the app's window is not the one in use:
//! "fx.touch waits for your approval", through the freedesktop Notifications service on the
//! session bus (GIO's D-Bus client, already part of GTK). Clicking it brings the window
//! forward. Without a session bus or a notification service nothing is shown, and nothing
//! else changes: the dialog and the window's urgency hint still ask for attention.

use std::cell::RefCell;
use std::collections::HashMap;

use gtk::prelude::*;
use gtk::{gio, glib};
use tauri::{Emitter, Runtime};

use crate::tools::ApprovalRequest;

const SERVICE: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";

/// The session bus, once reached, and the notifications shown, by request id.
#[derive(Default)]
struct Notifier {
    bus: Option<gio::DBusConnection>,
    shown: HashMap<u64, u32>,
}

thread_local! {
    static NOTIFIER: RefCell<Notifier> = RefCell::default();
}

/// Tell the person that `request` waits, unless `main` is the window in use; a click on
/// the notification presents `main` and tells the page which request it was about (an
/// `approval-focus` event with its id).
pub(super) fn waiting<R: Runtime>(
    app: &tauri::AppHandle<R>,
    request: &ApprovalRequest,
    who: &str,
    main: &gtk::Window,
) {
    if main.is_active() {
        return;
    }
    let Some(bus) = bus(app, main) else { return };
    let summary = format!(
        "{}.{} waits for your approval",
        crate::display::escape(request.server_name()),
        crate::display::escape(request.tool_name())
    );
    // Some services read the body as markup: escaped, it is plain text.
    let body = glib::markup_escape_text(&format!("Asked by: {who}")).to_string();
    let hints: HashMap<String, glib::Variant> =
        HashMap::from([("urgency".to_owned(), 1u8.to_variant())]);
    let params = (
        "ipybox",
        0u32,
        "dialog-warning",
        summary,
        body,
        vec!["default", "Show"],
        hints,
        -1i32,
    )
        .to_variant();
    let id = request.id();
    bus.call(
        Some(SERVICE),
        PATH,
        SERVICE,
        "Notify",
        Some(&params),
        Some(glib::VariantTy::new("(u)").expect("a valid type")),
        gio::DBusCallFlags::NONE,
        2000,
        None::<&gio::Cancellable>,
        move |reply| match reply {
            Ok(reply) => {
                if let Some((nid,)) = reply.get::<(u32,)>() {
                    NOTIFIER.with(|n| n.borrow_mut().shown.insert(id, nid));
                }
            }
            Err(e) => tracing::debug!("no desktop notification: {e}"),
        },
    );
}

/// `request` no longer waits: its notification goes.
pub(super) fn settled(request_id: u64) {
    let (bus, nid) = NOTIFIER.with(|n| {
        let mut n = n.borrow_mut();
        (n.bus.clone(), n.shown.remove(&request_id))
    });
    if let (Some(bus), Some(nid)) = (bus, nid) {
        bus.call(
            Some(SERVICE),
            PATH,
            SERVICE,
            "CloseNotification",
            Some(&(nid,).to_variant()),
            None,
            gio::DBusCallFlags::NONE,
            2000,
            None::<&gio::Cancellable>,
            |_| {},
        );
    }
}

/// The session bus, connected (and listening for clicks on notifications) the first time.
fn bus<R: Runtime>(app: &tauri::AppHandle<R>, main: &gtk::Window) -> Option<gio::DBusConnection> {
    if let Some(bus) = NOTIFIER.with(|n| n.borrow().bus.clone()) {
        return Some(bus);
    }
    let bus = gio::bus_get_sync(gio::BusType::Session, None::<&gio::Cancellable>)
        .inspect_err(|e| tracing::debug!("no session bus for notifications: {e}"))
        .ok()?;
    let (app, main) = (app.clone(), main.downgrade());
    // Any sender: a click is only ever answered by bringing the window forward.
    bus.signal_subscribe(
        None,
        Some(SERVICE),
        Some("ActionInvoked"),
        Some(PATH),
        None,
        gio::DBusSignalFlags::NONE,
        move |_, _, _, _, _, params| {
            let Some((nid, _action)) = params.get::<(u32, String)>() else {
                return;
            };
            let request = NOTIFIER.with(|n| {
                n.borrow()
                    .shown
                    .iter()
                    .find(|(_, v)| **v == nid)
                    .map(|(k, _)| *k)
            });
            let Some(request) = request else { return };
            if let Some(main) = main.upgrade() {
                main.present();
            }
            let _ = app.emit("approval-focus", request);
        },
    );
    NOTIFIER.with(|n| n.borrow_mut().bus = Some(bus.clone()));
    Some(bus)
}
