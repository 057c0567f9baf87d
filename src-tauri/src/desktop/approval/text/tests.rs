//! The dialog's text for hostile and oversized calls: escaped, bounded, and still saying
//! what runs.

use std::sync::Arc;

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

/// `text` without line breaks: what it says, however it was wrapped.
fn flat(text: &str) -> String {
    text.replace('\n', "")
}

/// Every line of the message, as the dialog wraps it, fits the screen with the buttons.
fn assert_fits(text: &str) {
    assert!(
        text.split('\n')
            .all(|l| l.chars().map(width).sum::<usize>() <= WRAP),
        "no line is wider than the dialog: {text}"
    );
    assert!(
        lines(text) <= MESSAGE_LINES,
        "{} lines, more than {MESSAGE_LINES}: {text}",
        lines(text)
    );
}

#[test]
fn a_long_first_value_does_not_hide_the_next_argument() {
    let text = dialog(json!({ "content": "x".repeat(10_000), "path": "/home/me/notes.md" }));
    assert!(
        text.contains(r#""path": "/home/me/notes.md""#),
        "the argument after a long one is shown: {text}"
    );
    assert!(
        flat(&text).contains(&format!("\"{}… (9,800 more characters)\"", "x".repeat(200))),
        "the long value is shortened on its own, saying how much is left out: {text}"
    );
    assert!(text.chars().count() < 1_000, "the dialog stays short");
    assert_fits(&text);
}

#[test]
fn every_argument_name_stays_visible_when_many_values_are_long() {
    let args: serde_json::Map<_, _> = (0..12)
        .map(|i| (format!("part{i}"), json!("y".repeat(1_000))))
        .collect();
    let text = dialog(args.into());
    for i in 0..12 {
        assert!(
            flat(&text).contains(&format!("\"part{i}\": \"yyy")),
            "argument part{i} is named: {text}"
        );
    }
    assert!(text.contains("more characters)"), "{text}");
    assert!(!text.contains("more line"), "nothing is cut: {text}");
    assert_fits(&text);
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
    // As many elements as let the whole fit: three of each here.
    let expected = [
        "\"lines\": [\n      0,\n      1,\n      2,\n      … and 97 more\n    ],",
        "\"k2\": 2,\n      … and 27 more\n    },",
        "\"note\": \"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz… (470 more characters)\",\n    … and 1 more\n  },",
        "\"path\": \"/home/me/out.csv\"\n}",
    ];
    for part in expected {
        assert!(flat(&text).contains(&flat(part)), "{part:?} in {text}");
    }
    assert!(!text.contains("\"k3\""), "the 4th entry is left out");
    assert_fits(&text);
}

#[test]
fn many_arguments_are_cut_to_what_fits_saying_how_many_lines_are_left_out() {
    let args: serde_json::Map<_, _> = (0..60).map(|i| (format!("a{i}"), json!(i))).collect();
    let text = dialog(args.into());
    assert!(text.contains("{\n  \"a0\": 0,\n  \"a1\": 1,"), "{text}");
    assert!(
        text.contains("\"a17\": 17,\n… (43 more lines — see the Approvals panel)"),
        "the lines that fit, then how many more: {text}"
    );
    assert!(!text.contains("\"a18\""), "{text}");
    assert_fits(&text);
}

#[test]
fn the_whole_block_is_cut_only_as_a_last_resort() {
    let args: serde_json::Map<_, _> = (0..500)
        .map(|i| (format!("argument{i}"), json!("w".repeat(100))))
        .collect();
    let text = arguments_text(&args.into());
    assert!(
        text.ends_with("\n… (983 more lines — see the Approvals panel)"),
        "{text}"
    );
    assert!(lines(&text) <= ARGS_LINES, "bounded: {}", lines(&text));
    assert!(
        flat(&text).contains("\"argument0\": \"wwwwwwwwwwww… (88 more characters)\""),
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
    let command = format!("pip install {}", "package ".repeat(100));
    let text = shell(&command);
    assert!(
        flat(&text).contains(&format!("a shell command:{command}It runs")),
        "an 800-character command is shown whole: {text}"
    );
    assert_fits(&text);
    let long = format!("echo {}", "a".repeat(10_000));
    let text = shell(&long);
    // 56 characters a line, 19 lines, then what is left out.
    assert!(
        flat(&text).contains(&format!(
            "{}… (160 more lines — see the Approvals panel)It runs",
            &long[..56 * 19]
        )),
        "a longer one is cut, saying so: {text}"
    );
    assert_fits(&text);
    let many = "echo hi\n".repeat(100);
    let text = shell(&many);
    assert!(
        text.contains("echo hi\n… (82 more lines — see the Approvals panel)\n\n"),
        "{text}"
    );
    assert_fits(&text);
}

/// The attack: 150 line separators in a value made the dialog 2,866 pixels tall, the real
/// path and the buttons below an 800-pixel screen; Return approved.
#[test]
fn line_separators_are_shown_escaped_and_keep_the_dialog_short() {
    let filler = format!("report{}", "\u{2028}".repeat(150));
    let text = dialog(json!({ "content": filler, "path": "/home/me/.bashrc" }));
    assert!(
        !text.contains('\u{2028}') && !text.contains('\u{2029}'),
        "no line separator reaches GTK: {text:?}"
    );
    assert!(flat(&text).contains("report\\u2028\\u2028"), "{text}");
    assert!(
        text.contains(r#""path": "/home/me/.bashrc""#),
        "the real path is in the dialog: {text}"
    );
    assert_fits(&text);
    let shell = message(
        &request(
            crate::tools::server::SHELL_SERVER,
            "shell",
            json!({ "command": format!("true{}rm -rf ~", "\u{2029}".repeat(150)) }),
        ),
        Duration::from_secs(60),
    );
    assert!(!shell.contains('\u{2029}'), "{shell:?}");
    assert_fits(&shell);
}

/// The attack: `…/\u202etxt.stroper` was shown as `…/reports.txt`.
#[test]
fn bidi_overrides_are_shown_escaped_in_the_message_and_the_title() {
    let text = dialog(json!({ "path": "/home/me/\u{202e}txt.stroper" }));
    assert!(
        flat(&text).contains(r#""path": "/home/me/\u202etxt.stroper""#),
        "{text}"
    );
    let r = request("files\u{202e}", "write\u{2066}file\u{0}", json!({}));
    let (title, text) = (title(&r), message(&r, Duration::from_secs(60)));
    assert_eq!(
        title,
        r"Approve tool call — files\u202e.write\u2066file\u0000"
    );
    assert!(
        flat(&text).contains(r#"the tool "write\u2066file\u0000" of the MCP server "files\u202e""#),
        "{text}"
    );
    for shown in [&title, &text] {
        assert!(
            !shown
                .chars()
                .any(|c| c != '\n' && crate::display::hidden(c)),
            "nothing hidden, no NUL (rfd panics on it): {shown:?}"
        );
    }
}

#[test]
fn the_server_and_origin_are_escaped_and_bounded() {
    let approvals = Arc::new(Approvals::new(Duration::from_secs(60)));
    let call = ExternalCall {
        server: "files".into(),
        tool: "write_file".into(),
        arguments: json!({"path": "/tmp/x"}),
        server_description: format!("npx server {}", "\u{2028}--flag".repeat(300)),
        origin: format!("agent\u{1b}[8m{}", "x\n".repeat(300)),
    };
    let text = message(
        &approvals.request_external(call, None).0,
        Duration::from_secs(60),
    );
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{2028}'),
        "{text:?}"
    );
    assert!(text.contains(r#""path": "/tmp/x""#), "{text}");
    assert_fits(&text);
}

#[test]
fn a_percent_sign_reaches_gtk_as_a_percent_sign() {
    let text = dialog(json!({ "format": "%s%n%x 100%" }));
    let given = for_dialog(text.clone());
    if cfg!(target_os = "linux") {
        assert!(
            given.contains(r#""%%s%%n%%x 100%%""#),
            "doubled for GTK's printf: {given}"
        );
    } else {
        assert_eq!(given, text);
    }
}

#[test]
fn numbers_are_written_with_thousands_separators() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1_000), "1,000");
    assert_eq!(thousands(1_234_567), "1,234,567");
}

#[test]
fn who_asks_names_an_agents_client_escaped() {
    let r = request("fx", "touch", json!({}));
    let details = CallDetails {
        client: Some(crate::definition::Client {
            name: "claude-code\u{202e}".into(),
            version: Some("2.1.0".into()),
            session: "4f2a9c1e".into(),
            connected_at_ms: 1_000,
        }),
        ..CallDetails::default()
    };
    assert_eq!(
        who(&r, &details, 301_000),
        r"The agent claude-code\u202e 2.1.0 (its session 4f2a9c1e, connected 5 min ago)"
    );
    // The Python MCP SDK's default clientInfo names the library, not the agent.
    let unnamed = CallDetails {
        client: Some(crate::definition::Client {
            name: "mcp".into(),
            version: Some("0.1.0".into()),
            session: "4f2a9c1e".into(),
            connected_at_ms: 1_000,
        }),
        ..CallDetails::default()
    };
    assert_eq!(
        who(&r, &unnamed, 301_000),
        "An agent that did not give its name (its session 4f2a9c1e, connected 5 min ago)"
    );
    assert_eq!(
        who(&r, &CallDetails::default(), 0),
        "Code in agent session 4f2a",
        "without a client, the origin"
    );
}

#[test]
fn arguments_are_named_fields_with_their_schema_descriptions() {
    let schema = json!({"properties": {
        "path": {"type": "string", "description": "Where the file goes\u{2028}(overwritten)"},
        "content": {"type": "string"}
    }});
    let fields = fields(
        &json!({"path": "/home/me/\u{202e}txt.stroper", "content": "x".repeat(10_000)}),
        Some(&schema),
    );
    let path = fields.iter().find(|f| f.name == "path").expect("path");
    assert_eq!(path.value, r#""/home/me/\u202etxt.stroper""#);
    assert_eq!(
        path.description.as_deref(),
        Some(r"Where the file goes\u2028(overwritten)")
    );
    let content = fields
        .iter()
        .find(|f| f.name == "content")
        .expect("content");
    assert!(
        flat(&content.value).ends_with("… (9,800 more characters)\""),
        "shortened as the dialog's arguments always were: {}",
        content.value
    );
    assert_eq!(content.description, None);
    for f in &fields {
        assert!(
            lines(&f.value) <= PART_LINES,
            "each value is bounded: {}",
            f.value
        );
    }
}

#[test]
fn many_lines_in_one_value_are_cut_saying_how_many() {
    let value = "line\n".repeat(200);
    let fields = fields(
        &json!({ "a": (0..500).collect::<Vec<_>>(), "b": value }),
        None,
    );
    assert!(
        fields[0].value.contains("    7,\n    … and 492 more\n  ]"),
        "shortened to its first elements: {}",
        fields[0].value
    );
    assert!(lines(&fields[1].value) <= PART_LINES, "{}", fields[1].value);
}

#[test]
fn the_description_shows_three_lines_and_the_rest_on_demand() {
    let tool = ToolDefinition {
        name: "touch".into(),
        description: Some("one\ntwo\nthree\nfour\u{1b}[8m\nfive".into()),
        ..ToolDefinition::default()
    };
    let (first, rest) = description(&tool).expect("a description");
    assert_eq!(first, "one\ntwo\nthree");
    assert_eq!(rest.as_deref(), Some("four\\u001b[8m\nfive"));
    let short = ToolDefinition {
        description: Some("Create the file at the given path".into()),
        ..tool.clone()
    };
    assert_eq!(
        description(&short),
        Some(("Create the file at the given path".into(), None))
    );
    assert_eq!(description(&ToolDefinition::default()), None);
}

#[test]
fn hints_are_labelled_as_the_servers_claims() {
    let hints = ToolHints {
        destructive: Some(true),
        open_world: Some(true),
        ..ToolHints::default()
    };
    assert_eq!(
        hint_labels(&hints),
        [
            "The server says: may delete or overwrite",
            "The server says: reaches the internet or other systems"
        ]
    );
    let read_only = ToolHints {
        read_only: Some(true),
        destructive: Some(true),
        ..ToolHints::default()
    };
    assert_eq!(hint_labels(&read_only), ["The server says: read-only"]);
    assert!(hint_labels(&ToolHints::default()).is_empty());
}

#[test]
fn the_countdown_says_when_the_call_is_rejected() {
    assert_eq!(
        countdown(60_000, 12_000),
        "rejected in 48 s unless you decide"
    );
    assert_eq!(
        countdown(60_000, 59_500),
        "rejected in 1 s unless you decide"
    );
    assert_eq!(
        countdown(60_000, 61_000),
        "rejected now: nobody decided in time"
    );
    assert!(countdown(3_600_000, 0).starts_with("rejected in "));
    assert_eq!(more_waiting(0), "");
    assert_eq!(
        more_waiting(1_200),
        "1,200 more calls wait after this one (see the Approvals panel)"
    );
}

#[test]
fn a_changed_definition_shows_both_sides_escaped_and_bounded() {
    let now = ToolDefinition {
        name: "touch".into(),
        description: Some(format!("Also mails ~/.ssh\u{2066} {}", "z\n".repeat(500))),
        input_schema: json!({"type": "object"}),
        ..ToolDefinition::default()
    };
    let text = definition_text(Some(&now));
    assert!(text.starts_with(r"Also mails ~/.ssh\u2066"), "{text}");
    assert!(lines(&text) <= PART_LINES * 2, "{text}");
    assert!(definition_text(None).contains("did not exist"));
}
