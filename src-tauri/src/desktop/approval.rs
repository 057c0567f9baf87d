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

/// How much of the arguments the dialog shows at most, a last resort after each value was
/// shortened on its own; the panel shows them whole.
const ARGS_SHOWN: usize = 2500;
/// How long a shell command may be and still be shown whole.
const COMMAND_SHOWN: usize = 4000;
/// How far each value is shortened, tried in turn until the whole block fits in
/// `ARGS_SHOWN`: characters of a string, then elements of a list or of a nested object. The
/// first matches the panel; the names of the arguments themselves are never left out, so one
/// long value cannot hide the arguments after it.
const SHORTENINGS: [(usize, usize); 3] = [(200, 20), (80, 8), (30, 3)];
/// Where the person sees what the dialog leaves out.
const SEE_PANEL: &str = "see the Approvals panel";

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
    let args = arguments_text(request.tool_args());
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
        let command = shorten(command, COMMAND_SHOWN);
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

/// The arguments as indented JSON, each long value shortened on its own: a string to its
/// first characters and how many more there are, a list or nested object to its first
/// elements and how many more. Shortened further while the whole is longer than
/// `ARGS_SHOWN`, and only then cut.
fn arguments_text(args: &serde_json::Value) -> String {
    let mut text = String::new();
    for (chars, items) in SHORTENINGS {
        text.clear();
        pretty(&mut text, args, 0, chars, items);
        if text.chars().count() <= ARGS_SHOWN {
            return text;
        }
    }
    // Cut at a line's end, so no line is left half-written.
    let kept: String = text.chars().take(ARGS_SHOWN).collect();
    let kept = kept.rfind('\n').map_or(kept.as_str(), |end| &kept[..end]);
    format!("{kept}\n… (more arguments — {SEE_PANEL})")
}

/// Writes `value` as `serde_json::to_string_pretty` would, shortened: strings to `chars`
/// characters, lists and objects below the top level to `items` elements.
fn pretty(out: &mut String, value: &serde_json::Value, depth: usize, chars: usize, items: usize) {
    use serde_json::Value;
    let indent = |out: &mut String, depth: usize| out.extend(std::iter::repeat_n("  ", depth));
    let json = |s: &str| serde_json::to_string(s).unwrap_or_default();
    // The arguments themselves (the top level) are all shown: a person must see every name.
    let shown = if depth == 0 { usize::MAX } else { items };
    // A list's elements and an object's entries are written alike, an entry with its key.
    let (open, close, entries): (char, char, Vec<(Option<&String>, &Value)>) = match value {
        Value::String(s) => return out.push_str(&json(&shorten(s, chars))),
        Value::Array(list) if !list.is_empty() => {
            ('[', ']', list.iter().map(|v| (None, v)).collect())
        }
        Value::Object(map) if !map.is_empty() => {
            ('{', '}', map.iter().map(|(k, v)| (Some(k), v)).collect())
        }
        other => return out.push_str(&other.to_string()),
    };
    out.push(open);
    out.push('\n');
    for (i, (key, v)) in entries.iter().take(shown).enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        indent(out, depth + 1);
        if let Some(key) = key {
            out.push_str(&json(&shorten(key, chars)));
            out.push_str(": ");
        }
        pretty(out, v, depth + 1, chars, items);
    }
    more(out, entries.len(), shown, depth + 1);
    out.push('\n');
    indent(out, depth);
    out.push(close);
}

/// The line that stands for the elements of a list or object left out.
fn more(out: &mut String, len: usize, shown: usize, depth: usize) {
    if len > shown {
        out.push_str(",\n");
        out.extend(std::iter::repeat_n("  ", depth));
        out.push_str(&format!("… and {} more", thousands(len - shown)));
    }
}

/// `text`, or its first `limit` characters and how many more there are.
fn shorten(text: &str, limit: usize) -> String {
    let count = text.chars().count();
    if count <= limit {
        return text.to_owned();
    }
    let kept: String = text.chars().take(limit).collect();
    format!(
        "{kept}… ({} more characters — {SEE_PANEL})",
        thousands(count - limit)
    )
}

/// `n` with thousands separated by commas, as the panel writes numbers (en-US).
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::approval::{Approvals, ExternalCall};

    fn request(server: &str, tool: &str, arguments: serde_json::Value) -> ApprovalRequest {
        let approvals = Arc::new(Approvals::new(Duration::from_secs(60)));
        let call = ExternalCall {
            server: server.into(),
            tool: tool.into(),
            arguments,
            server_description: "npx @modelcontextprotocol/server-filesystem".into(),
            origin: "agent session 4f2a".into(),
        };
        approvals.request_external(call, None).0
    }

    fn dialog(arguments: serde_json::Value) -> String {
        message(
            &request("files", "write_file", arguments),
            Duration::from_secs(60),
        )
    }

    #[test]
    fn a_long_first_value_does_not_hide_the_next_argument() {
        let text = dialog(json!({ "content": "x".repeat(10_000), "path": "/home/me/notes.md" }));
        assert!(
            text.contains(r#""path": "/home/me/notes.md""#),
            "the argument after a long one is shown: {text}"
        );
        assert!(
            text.contains(&format!(
                "\"{}… (9,800 more characters — see the Approvals panel)\"",
                "x".repeat(200)
            )),
            "the long value is shortened on its own, saying how much is left out: {text}"
        );
        assert!(text.chars().count() < 1_000, "the dialog stays short");
    }

    #[test]
    fn every_argument_name_stays_visible_when_many_values_are_long() {
        let args: serde_json::Map<_, _> = (0..12)
            .map(|i| (format!("part{i}"), json!("y".repeat(1_000))))
            .collect();
        let text = dialog(args.into());
        for i in 0..12 {
            assert!(
                text.contains(&format!("\"part{i}\": \"yyy")),
                "argument part{i} is named: {text}"
            );
        }
        assert!(
            text.contains("more characters — see the Approvals panel"),
            "{text}"
        );
        assert!(!text.contains("more arguments"), "nothing is cut: {text}");
    }

    #[test]
    fn nested_lists_and_objects_are_shortened_by_elements() {
        let wide: serde_json::Map<_, _> = (0..30).map(|i| (format!("k{i}"), json!(i))).collect();
        let text = dialog(json!({
            "options": {
                "lines": (0..100).collect::<Vec<_>>(),
                "wide": wide,
                "note": "z".repeat(500),
                "flag": true
            },
            "path": "/home/me/out.csv"
        }));
        let expected = [
            "\"lines\": [\n      0,\n      1,",
            "      19,\n      … and 80 more\n    ],",
            "\"k19\": 19,\n      … and 10 more\n    },",
            "… (300 more characters — see the Approvals panel)\",\n    \"flag\": true\n  },",
            "\"path\": \"/home/me/out.csv\"\n}",
        ];
        for part in expected {
            assert!(text.contains(part), "{part:?} in {text}");
        }
        assert!(!text.contains("\"k20\""), "the 21st entry is left out");
    }

    #[test]
    fn many_short_arguments_are_all_named() {
        let args: serde_json::Map<_, _> = (0..60).map(|i| (format!("a{i}"), json!(i))).collect();
        let text = dialog(args.into());
        assert!(text.contains("\"a59\": 59\n}"), "{text}");
        assert!(
            !text.contains("… and"),
            "arguments are never left out by count"
        );
    }

    #[test]
    fn the_whole_block_is_cut_only_as_a_last_resort() {
        let args: serde_json::Map<_, _> = (0..500)
            .map(|i| (format!("argument{i}"), json!("w".repeat(100))))
            .collect();
        let text = arguments_text(&args.into());
        assert!(
            text.ends_with("\n… (more arguments — see the Approvals panel)"),
            "{text}"
        );
        assert!(
            text.chars().count() <= ARGS_SHOWN + 50,
            "bounded: {}",
            text.len()
        );
        assert!(
            text.contains("\"argument0\": \"wwwwwwwwwwwwwwwwwwwwwwwwwwwwww… (70 more characters"),
            "shortened as far as it goes first: {text}"
        );
    }

    #[test]
    fn a_shell_command_is_shown_whole_up_to_a_limit() {
        let shell = |command: &str| {
            message(
                &request(
                    crate::tools::server::SHELL_SERVER,
                    "shell",
                    json!({ "command": command }),
                ),
                Duration::from_secs(60),
            )
        };
        let command = format!("pip install {}", "package ".repeat(400));
        let text = shell(&command);
        assert!(
            text.contains(&format!("a shell command:\n\n{command}\n\n")),
            "a 3,200-character command is shown whole: {text}"
        );
        let long = format!("echo {}", "a".repeat(10_000));
        let text = shell(&long);
        assert!(
            text.contains(&format!(
                "{}… (6,005 more characters — see the Approvals panel)\n\n",
                &long[..COMMAND_SHOWN]
            )),
            "a longer one is shortened, saying so"
        );
    }

    #[test]
    fn numbers_are_written_with_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
