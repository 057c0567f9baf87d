//! What the approval dialog says, as text: every part kernel code, a notebook, an agent or
//! a server chose is escaped ([`crate::display::escape`]) and bounded, so that the dialog
//! fits an 800-pixel-high screen with its buttons whatever the call carries.

use std::time::Duration;

use crate::definition::{CallDetails, ToolDefinition, ToolHints};
use crate::display::{escape, escape_lines};
use crate::tools::ApprovalRequest;

/// How much of the arguments the dialog shows at most, in characters; the panel shows them
/// whole.
const ARGS_SHOWN: usize = 2500;
/// How many lines the arguments (or a shell command) take at most in the dialog, counting
/// each line as the lines it wraps to. With the rest of the message (at most
/// `MESSAGE_LINES - ARGS_LINES` lines) the dialog stays short enough for an 800-pixel-high
/// screen to show all of it: the end of the arguments and the buttons below them. Text that
/// is taller pushes them off the screen, and Return approves what nobody could read.
#[cfg_attr(
    target_os = "linux",
    allow(dead_code, reason = "the fallback dialog of other platforms")
)]
const ARGS_LINES: usize = 20;
/// How many lines the whole message takes at most, as [`ARGS_LINES`] counts them.
#[cfg_attr(
    target_os = "linux",
    allow(dead_code, reason = "the fallback dialog of other platforms")
)]
const MESSAGE_LINES: usize = 32;
/// How wide a line of the dialog's text is at most, in tenths of an average character (see
/// [`width`]): the text is wrapped to it before GTK sees it. GtkMessageDialog's labels are 60
/// average characters wide; a longer line would wrap again (taller than counted) and a word
/// wider than that would widen the dialog past the screen, its buttons with it.
const WRAP: usize = 560;
/// How long the server's description and the origin may be, in characters.
const DESCRIPTION_SHOWN: usize = 150;
const ORIGIN_SHOWN: usize = 80;
/// How far each value is shortened, tried in turn until the whole block fits: characters of
/// a string, then elements of a list or of a nested object. The first matches the panel; the
/// names of the arguments themselves are never left out by shortening, so one long value
/// cannot hide the arguments after it. Only when even the shortest form does not fit is the
/// block cut, saying how many lines are left out.
const SHORTENINGS: [(usize, usize); 4] = [(200, 20), (80, 8), (30, 3), (12, 2)];
/// Where the person sees what the dialog leaves out.
const SEE_PANEL: &str = "see the Approvals panel";

/// The dialog's title: `Approve tool call — SERVER.TOOL`, names escaped.
pub fn title(request: &ApprovalRequest) -> String {
    format!(
        "Approve tool call — {}.{}",
        escape(request.server_name()),
        escape(request.tool_name())
    )
}

/// What the dialog says: which tool of which server, asked by what, where the call goes,
/// with what, and how long it waits (`timeout`, the approval timeout in force). Every part
/// kernel code, a notebook or a server chose is escaped ([`crate::display::escape`]), and the
/// whole is at most [`MESSAGE_LINES`] lines high.
#[cfg_attr(
    target_os = "linux",
    allow(dead_code, reason = "the fallback dialog of other platforms")
)]
pub fn message(request: &ApprovalRequest, timeout: Duration) -> String {
    let waits = format!(
        "if nobody decides within {}, the call is rejected",
        crate::desktop::settings::describe_secs(timeout.as_secs())
    );
    let from = request.origin().map_or_else(
        || "Code in this notebook".to_owned(),
        |o| format!("Code in {}", shorten(&escape(o), ORIGIN_SHOWN)),
    );
    if request.server_name() == crate::tools::server::SHELL_SERVER {
        let command = request
            .tool_args()
            .get("command")
            .and_then(|c| c.as_str())
            .unwrap_or_default();
        let command = fit(&wrap(&escape_lines(command)), ARGS_LINES, ARGS_SHOWN);
        return bounded(&format!(
            "{from} wants to run a shell command:\n\n{command}\n\n\
             It runs with the kernel's rights (inside the sandbox when there is one). \
             Nothing runs until you decide; {waits}."
        ));
    }
    bounded(&format!(
        "{from} wants to call the tool \"{tool}\" of the MCP server \"{server}\".\n\n\
         Server: {description}\n\nArguments:\n{args}\n\nNothing runs until you decide; {waits}.",
        tool = escape(request.tool_name()),
        server = escape(request.server_name()),
        description = shorten(&escape(request.server()), DESCRIPTION_SHOWN),
        args = arguments_text(request.tool_args()),
    ))
}

/// The message wrapped to the dialog's width, and cut to [`MESSAGE_LINES`] should its parts,
/// each bounded, together be taller.
#[cfg_attr(
    target_os = "linux",
    allow(dead_code, reason = "the fallback dialog of other platforms")
)]
fn bounded(message: &str) -> String {
    fit(&wrap(message), MESSAGE_LINES, usize::MAX)
}

/// `text` with every line wider than [`WRAP`] broken into lines that are not: after its last
/// space when there is one in the second half of the line, else within a word.
pub(in crate::desktop) fn wrap(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / WRAP);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut rest = line;
        loop {
            let mut wide = 0;
            let end = rest
                .char_indices()
                .find(|&(_, c)| {
                    wide += width(c);
                    wide > WRAP
                })
                .map(|(at, _)| at);
            let Some(end) = end else {
                out.push_str(rest);
                break;
            };
            let end = match rest[..end].rfind(' ') {
                Some(space) if space >= end / 2 => space + 1,
                _ => end,
            };
            out.push_str(&rest[..end]);
            out.push('\n');
            rest = &rest[end..];
        }
    }
    out
}

/// The message as the dialog is given it. On Linux the dialog (rfd's GTK message dialog)
/// passes its text to `gtk_message_dialog_format_secondary_text` as a printf format: a `%`
/// in an argument would be read as a conversion (`%s`, `%n` read and write memory that is
/// not there). Doubled, it is a `%` again.
pub(in crate::desktop) fn for_dialog(message: String) -> String {
    if cfg!(target_os = "linux") {
        message.replace('%', "%%")
    } else {
        message
    }
}

/// The arguments as indented JSON, escaped, each long value shortened on its own: a string to
/// its first characters and how many more there are, a list or nested object to its first
/// elements and how many more. Shortened further while the whole is taller than
/// [`ARGS_LINES`] or longer than [`ARGS_SHOWN`], and only then cut.
#[cfg_attr(
    target_os = "linux",
    allow(dead_code, reason = "the fallback dialog of other platforms")
)]
fn arguments_text(args: &serde_json::Value) -> String {
    shortened(args, 0, ARGS_LINES)
}

/// `value` written at `depth` as [`pretty`] writes it, escaped and wrapped, shortened by each
/// of [`SHORTENINGS`] in turn until it is at most `max_lines` high and [`ARGS_SHOWN`] long,
/// and only then cut.
fn shortened(value: &serde_json::Value, depth: usize, max_lines: usize) -> String {
    let mut text = String::new();
    for (chars, items) in SHORTENINGS {
        let mut raw = String::new();
        pretty(&mut raw, value, depth, chars, items);
        text = wrap(&escape_lines(&raw));
        if lines(&text) <= max_lines && text.chars().count() <= ARGS_SHOWN {
            return text;
        }
    }
    fit(&text, max_lines, ARGS_SHOWN)
}

/// How many lines `text` takes in the dialog, each wrapped at [`WRAP`].
fn lines(text: &str) -> usize {
    text.split('\n').map(line_height).sum()
}

/// How many lines one line of text wraps to.
fn line_height(line: &str) -> usize {
    line.chars().map(width).sum::<usize>().div_ceil(WRAP).max(1)
}

/// About how wide `c` is in a proportional font, in tenths of the average character GTK
/// measures labels by (that of lowercase text): a generous guess, so that a line counted as
/// fitting does fit.
fn width(c: char) -> usize {
    match c {
        'i' | 'j' | 'l' | 'f' | 't' | 'r' | 'I' | '.' | ',' | ':' | ';' | '\'' | '!' | '|'
        | ' ' => 6,
        'm' | 'w' | 'M' | 'W' | '@' | '%' | '&' | '—' | '…' => 17,
        'A'..='Z' | '0'..='9' | '#' | '~' | '_' => 13,
        c if c.is_ascii() => 10,
        c => match c as u32 {
            // Wide East Asian characters and emoji.
            0x1100..=0x115f
            | 0x2e80..=0xa4cf
            | 0xac00..=0xd7a3
            | 0xf900..=0xfaff
            | 0xfe30..=0xfe4f
            | 0xff00..=0xff60
            | 0xffe0..=0xffe6
            | 0x1f300..=0x1faff
            | 0x20000..=0x3fffd => 22,
            _ => 13,
        },
    }
}

/// `text`, or as much of it as fits in `limit` dialog lines and `chars` characters, the last
/// line saying how many lines are left out. It is cut at a line's end; a line taller than
/// the room left (a long shell command) is cut within.
fn fit(text: &str, limit: usize, chars: usize) -> String {
    if lines(text) <= limit && text.chars().count() <= chars {
        return text.to_owned();
    }
    let all: Vec<&str> = text.split('\n').collect();
    let room = limit.saturating_sub(1);
    let mut out = String::new();
    let (mut used, mut count) = (0, 0);
    for (i, line) in all.iter().enumerate() {
        let length = line.chars().count() + 1;
        if used + line_height(line) > room || count + length > chars {
            let rows = room.saturating_sub(used);
            let left = chars.saturating_sub(count + 1);
            if rows > 0 && left > 0 {
                let mut wide = 0;
                let part: String = line
                    .chars()
                    .take(left)
                    .take_while(|&c| {
                        wide += width(c);
                        wide < rows * WRAP
                    })
                    .collect();
                out.push_str(&part);
                out.push_str("…\n");
            }
            let rest = all.len() - i;
            out.push_str(&format!(
                "… ({} more line{} — {SEE_PANEL})",
                thousands(rest),
                if rest == 1 { "" } else { "s" }
            ));
            return out;
        }
        out.push_str(line);
        out.push('\n');
        used += line_height(line);
        count += length;
    }
    out
}

/// Writes `value` as `serde_json::to_string_pretty` would, shortened: strings to `chars`
/// characters, lists and objects below the top level to `items` elements.
fn pretty(out: &mut String, value: &serde_json::Value, depth: usize, chars: usize, items: usize) {
    use serde_json::Value;
    let indent = |out: &mut String, depth: usize| out.extend(std::iter::repeat_n("  ", depth));
    // The arguments themselves (the top level) are all shown: a person must see every name.
    let shown = if depth == 0 { usize::MAX } else { items };
    // A list's elements and an object's entries are written alike, an entry with its key.
    let (open, close, entries): (char, char, Vec<(Option<&String>, &Value)>) = match value {
        Value::String(s) => return out.push_str(&shorten_json(s, chars)),
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
            out.push_str(&shorten_json(key, chars));
            out.push_str(": ");
        }
        pretty(out, v, depth + 1, chars, items);
    }
    more(out, entries.len(), shown, depth + 1);
    out.push('\n');
    indent(out, depth);
    out.push(close);

    /// A JSON string of `s`'s first `chars` characters, saying how many more there are.
    fn shorten_json(s: &str, chars: usize) -> String {
        let count = s.chars().count();
        if count <= chars {
            return serde_json::to_string(s).unwrap_or_default();
        }
        let kept: String = s.chars().take(chars).collect();
        let kept = serde_json::to_string(&kept).unwrap_or_default();
        format!(
            "{}… ({} more characters)\"",
            &kept[..kept.len() - 1],
            thousands(count - chars)
        )
    }
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
pub(super) fn shorten(text: &str, limit: usize) -> String {
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

/// How many lines of the tool's description show before "More"; the rest is behind it.
const DESCRIPTION_LINES: usize = 3;
/// How many lines each shown part (a description's rest, one argument's value, one side of
/// a changed definition) takes at most.
const PART_LINES: usize = 12;
/// How many characters of a schema property's description show under its argument.
const FIELD_DESCRIPTION_SHOWN: usize = 200;

/// Who asks, in words: an agent's MCP client as it declared itself ("claude-code 2.1.0,
/// agent session 4f2a9c1e, connected 5 min ago"), else where the code came from ("Code in
/// cell 3 of analysis.ipynb"). Escaped and bounded; `now_ms` is the time now.
pub fn who(request: &ApprovalRequest, details: &CallDetails, now_ms: u64) -> String {
    if let Some(client) = &details.client {
        // An SDK's default name says which library, not which agent.
        let name = match client.declared() {
            Some(name) => format!("The agent {}", escape(&name)),
            None => "An agent that did not give its name".to_owned(),
        };
        let since = if client.connected_at_ms > 0 {
            format!(
                ", connected {}",
                ago(now_ms.saturating_sub(client.connected_at_ms) / 1000)
            )
        } else {
            String::new()
        };
        return shorten(
            &format!("{name} (its session {}{since})", escape(&client.session)),
            ORIGIN_SHOWN * 2,
        );
    }
    request.origin().map_or_else(
        || "Code in this notebook".to_owned(),
        |o| format!("Code in {}", shorten(&escape(o), ORIGIN_SHOWN)),
    )
}

/// "just now", "40 s ago", "5 min ago", "2 h ago".
pub fn ago(secs: u64) -> String {
    match secs {
        0..5 => "just now".to_owned(),
        5..60 => format!("{secs} s ago"),
        60..3600 => format!("{} min ago", secs / 60),
        _ => format!("{} h ago", secs / 3600),
    }
}

/// The line of code that made the call ("line 2: fx.touch(path=p)"), escaped and
/// bounded.
pub fn call_site(details: &CallDetails) -> Option<String> {
    details
        .call_site
        .as_deref()
        .map(|s| shorten(&escape(s), DESCRIPTION_SHOWN))
}

/// The tool's description: its first [`DESCRIPTION_LINES`] lines, and the rest (shown on
/// demand), each escaped, wrapped and bounded. `None` when the server gives none.
pub fn description(tool: &ToolDefinition) -> Option<(String, Option<String>)> {
    let text = tool.description.as_deref()?.trim();
    if text.is_empty() {
        return None;
    }
    let wrapped = wrap(&escape_lines(text));
    let all: Vec<&str> = wrapped.split('\n').collect();
    let first = all[..all.len().min(DESCRIPTION_LINES)].join("\n");
    let rest = (all.len() > DESCRIPTION_LINES)
        .then(|| fit(&all[DESCRIPTION_LINES..].join("\n"), PART_LINES, ARGS_SHOWN));
    Some((fit(&first, DESCRIPTION_LINES + 1, ARGS_SHOWN), rest))
}

/// What the server claims about the tool, as plain labels.
pub fn hint_labels(hints: &ToolHints) -> Vec<&'static str> {
    let mut out = Vec::new();
    if hints.read_only == Some(true) {
        out.push("The server says: read-only");
    }
    if hints.destructive == Some(true) && hints.read_only != Some(true) {
        out.push("The server says: may delete or overwrite");
    }
    if hints.open_world == Some(true) {
        out.push("The server says: reaches the internet or other systems");
    }
    out
}

/// The note under the hints: they are the server's word.
pub const HINTS_NOTE: &str = "These are the server's own claims, not checked by ipybox.";

/// One argument as the dialog shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Its name, escaped.
    pub name: String,
    /// Its value as JSON, shortened as the arguments are (each value on its own), escaped.
    pub value: String,
    /// The schema's description of it, escaped and bounded.
    pub description: Option<String>,
}

/// The arguments as named fields, in the order the call gives them, each value shortened on
/// its own as [`arguments_text`] shortens values, and with the schema property's
/// description (`schema`: the tool's input schema, when known). Arguments that are not an
/// object are one field, "arguments".
pub fn fields(args: &serde_json::Value, schema: Option<&serde_json::Value>) -> Vec<Field> {
    // Shortened further while taller than PART_LINES, as the whole arguments block is.
    let value_text = |v: &serde_json::Value| shortened(v, 1, PART_LINES);
    let Some(map) = args.as_object() else {
        return vec![Field {
            name: "arguments".into(),
            value: value_text(args),
            description: None,
        }];
    };
    map.iter()
        .map(|(name, value)| Field {
            name: shorten(&escape(name), ORIGIN_SHOWN),
            value: value_text(value),
            description: schema
                .and_then(|s| s.pointer("/properties"))
                .and_then(|p| p.get(name))
                .and_then(|p| p.get("description"))
                .and_then(|d| d.as_str())
                .map(|d| shorten(&escape(d), FIELD_DESCRIPTION_SHOWN)),
        })
        .collect()
}

/// "rejected in 48 s unless you decide", from the request's deadline and the time now.
pub fn countdown(deadline_ms: u64, now_ms: u64) -> String {
    let left = deadline_ms.saturating_sub(now_ms).div_ceil(1000);
    match left {
        0 => "rejected now: nobody decided in time".to_owned(),
        1..=120 => format!("rejected in {left} s unless you decide"),
        _ => format!(
            "rejected in {} unless you decide",
            crate::desktop::settings::describe_secs(left)
        ),
    }
}

/// One side of a changed definition: its description and its input schema, escaped and
/// bounded; "(the tool did not exist)" for a tool that appeared since.
pub fn definition_text(tool: Option<&ToolDefinition>) -> String {
    let Some(tool) = tool else {
        return "(the tool did not exist when you accepted this server)".to_owned();
    };
    let description = tool.description.as_deref().unwrap_or("(no description)");
    let schema = serde_json::to_string_pretty(&tool.input_schema).unwrap_or_default();
    fit(
        &wrap(&escape_lines(&format!(
            "{description}\n\nArguments:\n{schema}"
        ))),
        PART_LINES * 2,
        ARGS_SHOWN,
    )
}

/// "2 more calls wait" under the dialog's heading; empty when none does.
pub fn more_waiting(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => "1 more call waits after this one (see the Approvals panel)".to_owned(),
        n => format!(
            "{} more calls wait after this one (see the Approvals panel)",
            thousands(n)
        ),
    }
}

#[cfg(test)]
mod tests;
