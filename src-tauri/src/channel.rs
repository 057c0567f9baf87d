//! The protocol kernel code speaks with ipybox over the kernel's own stdin channel.
//!
//! The `ipybox_channel` module ipybox's kernel init installs (used by the generated tool
//! modules through `mcptools_runtime.py`) sends a [`Request`] as the `ipybox` field of an
//! `input_request`; ipybox answers with the `input_reply`'s value, an [`Answer`] as a JSON
//! object. No network path from the kernel to ipybox exists, so the same protocol serves
//! local, sandboxed and remote kernels.
//!
//! The kernel is untrusted: a request ipybox cannot read becomes [`Message::Malformed`] and
//! is refused at once (rather than left to hang the cell until its timeout), and what a
//! request says is only ever a claim.
//!
//! `tests/fixtures/channel.json` holds an example of every request and every answer; the
//! tests here and the Python test of the kernel's runtime (`tests/python/test_channel.py`)
//! both read it, so the two ends cannot drift apart. Adding a refusal kind is a variant of
//! [`RefusalKind`] and an example in that file.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The version of the protocol kernel code sends as `"v"`.
pub const VERSION: u64 = 1;

/// The longest answer sent in one reply, in bytes: a longer one is sent in parts the kernel
/// asks for one by one (Jupyter Server takes at most 10 MiB from a client in one WebSocket
/// message, and JSON escaping at most doubles a part on the wire).
pub const PART_BYTES: usize = 2 << 20;

/// Fields a call may not carry: kernel code names a registered server, never how to start
/// one.
const CONNECTION_FIELDS: [&str; 4] = ["server_params", "params", "command", "url"];

/// What kernel code sent: a request ipybox can read, or why it cannot (the message the
/// kernel receives with a [`RefusalKind::BadRequest`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A well-formed request.
    Request(Box<Request>),
    /// Not a request: why, in words.
    Malformed(String),
}

impl Message {
    /// What `text`, the JSON of a request, holds. Any text is a message: one ipybox cannot
    /// read for whatever reason (not JSON, nested deeper than serde_json reads, not UTF-8 on
    /// the wire, the wrong shape) is [`Message::Malformed`], answered at once.
    pub fn read(text: &str) -> Message {
        match serde_json::from_str(text) {
            Ok(value) => match Request::read(value) {
                Ok(request) => Message::Request(Box::new(request)),
                Err(why) => Message::Malformed(why),
            },
            Err(e) => Message::unreadable(e),
        }
    }

    /// The malformed message whose text could not be read, because of `why`.
    pub fn unreadable(why: impl std::fmt::Display) -> Message {
        Message::Malformed(unreadable(why))
    }
}

fn unreadable(why: impl std::fmt::Display) -> String {
    format!("ipybox could not read this request from the kernel: {why}")
}

/// A request from kernel code; every one carries an `id` chosen by the kernel (a request
/// asked again, after a lost reply, carries the same id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Run a tool, after approval.
    Call(Call),
    /// Part `part` of the answer to the request `id`, too long for one reply.
    Part { id: String, part: usize },
    /// The source of a generated module (`mcptools.fx.echo`), for the import hook of a
    /// kernel on a remote gateway, which does not see the workspace.
    Module { id: String, module: String },
    /// The cell failed on a file operation the sandbox may have blocked.
    Block { id: String, report: BlockReport },
}

/// A tool call kernel code asks for.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Call {
    pub id: String,
    /// The MCP server, by the name it was registered under (`ipybox` for shell commands).
    #[serde(default)]
    pub server: String,
    /// The tool.
    #[serde(default)]
    pub tool: String,
    /// The arguments as sent (checked by the tool server).
    #[serde(default)]
    pub args: Value,
    /// The line of code that made the call, shown to whoever approves it.
    #[serde(default)]
    pub site: Option<Site>,
}

/// The line of code that made a call, as the generated module found it: kernel code's
/// claim, shortened and escaped wherever a person reads it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct Site {
    /// The execution count of the cell it is in.
    #[serde(default)]
    pub cell: Option<u64>,
    /// The file it is in, when not a cell.
    #[serde(default)]
    pub file: Option<String>,
    /// Its line number.
    #[serde(default)]
    pub line: Option<u64>,
    /// Its text.
    #[serde(default)]
    pub text: Option<String>,
}

/// What the kernel's hook reports about a cell that failed with an `OSError`: its `errno`
/// and `filename`, and the operation when the hook could tell. Only a hint: the host checks
/// the path against the policy before anything is offered.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BlockReport {
    /// The `OSError`'s `errno`.
    pub errno: i32,
    /// Its `filename`, made absolute in the kernel's working directory.
    pub path: String,
    /// The operation, when the hook could tell.
    #[serde(default)]
    pub op: Option<FileOp>,
}

/// A file operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileOp {
    Read,
    Write,
}

/// Every field a request may carry, each kind of request reading its own.
#[derive(Deserialize)]
struct Fields {
    #[serde(default)]
    v: Option<u64>,
    id: String,
    #[serde(default)]
    part: Option<usize>,
    #[serde(default)]
    module: Option<String>,
    #[serde(default)]
    block: Option<BlockReport>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

impl Request {
    /// The request `value` holds, or why it is none, in words.
    fn read(value: Value) -> Result<Request, String> {
        let fields: Fields = serde_json::from_value(value).map_err(unreadable)?;
        if let Some(v) = fields.v.filter(|v| *v != VERSION) {
            return Err(format!(
                "this kernel speaks version {v} of ipybox's channel, and this ipybox version {VERSION}; restart the kernel"
            ));
        }
        let id = fields.id;
        if let Some(report) = fields.block {
            return Ok(Request::Block { id, report });
        }
        if let Some(part) = fields.part {
            return Ok(Request::Part { id, part });
        }
        if let Some(module) = fields.module {
            return Ok(Request::Module { id, module });
        }
        if CONNECTION_FIELDS
            .iter()
            .any(|k| fields.rest.contains_key(*k))
        {
            return Err("connection parameters are not accepted: ipybox only runs MCP servers the application registered, by name".into());
        }
        let mut rest = fields.rest;
        rest.insert("id".into(), Value::String(id));
        serde_json::from_value(Value::Object(rest))
            .map(Request::Call)
            .map_err(unreadable)
    }

    /// The id the kernel gave the request.
    pub fn id(&self) -> &str {
        match self {
            Request::Call(call) => &call.id,
            Request::Part { id, .. } | Request::Module { id, .. } | Request::Block { id, .. } => id,
        }
    }
}

/// Why a request was not answered with what it asked for. Serialized as the `error` field
/// of the answer; the kernel's runtime raises `ApprovalTimeout` for `approval_timeout`,
/// `ApprovalRejected` for `rejected`, and `ToolServerError` for every other kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalKind {
    /// A person or a rule rejected the call, or nobody could be asked.
    Rejected,
    /// Nobody approved the call in time.
    ApprovalTimeout,
    /// A request ipybox cannot read, or one asking for what it may not.
    BadRequest,
    /// No server of that name is registered.
    UnknownServer,
    /// The server has no tool of that name.
    UnknownTool,
    /// The MCP server could not be started or failed the call.
    McpError,
    /// The MCP server did not answer in time.
    McpTimeout,
    /// No generated module of that name.
    NotFound,
    /// Said by the kernel's runtime itself, never by ipybox: the code was not run by
    /// ipybox, so nobody can approve a call.
    NoChannel,
}

#[cfg(test)]
impl RefusalKind {
    /// Every kind, for the tests that hold both ends to the examples.
    pub const ALL: [RefusalKind; 9] = [
        RefusalKind::Rejected,
        RefusalKind::ApprovalTimeout,
        RefusalKind::BadRequest,
        RefusalKind::UnknownServer,
        RefusalKind::UnknownTool,
        RefusalKind::McpError,
        RefusalKind::McpTimeout,
        RefusalKind::NotFound,
        RefusalKind::NoChannel,
    ];
}

/// What ipybox answers a request with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The tool ran: its MCP result (`is_error` when the tool reported a failure). An
    /// approved shell command is an empty result: the kernel runs it.
    Result {
        is_error: bool,
        content: Value,
        structured: Option<Value>,
    },
    /// A generated module's source.
    Module {
        package: bool,
        path: String,
        source: String,
    },
    /// A report was taken.
    Noted,
    /// The request was refused or failed: the kernel raises with `message`.
    Refused { kind: RefusalKind, message: String },
}

impl Answer {
    /// A refusal.
    pub fn refused(kind: RefusalKind, message: impl Into<String>) -> Answer {
        Answer::Refused {
            kind,
            message: message.into(),
        }
    }

    /// The answer as the kernel reads it.
    pub fn to_value(&self) -> Value {
        match self {
            Answer::Result {
                is_error,
                content,
                structured,
            } => {
                let mut body = json!({"ok": true, "is_error": is_error, "content": content});
                if let Some(s) = structured {
                    body["structured"] = s.clone();
                }
                body
            }
            Answer::Module {
                package,
                path,
                source,
            } => json!({"ok": true, "package": package, "path": path, "source": source}),
            Answer::Noted => json!({"ok": true}),
            Answer::Refused { kind, message } => {
                json!({"ok": false, "error": kind, "message": message})
            }
        }
    }

    /// The reply's values: the answer whole, or its text in parts of at most
    /// [`PART_BYTES`] (split on character boundaries), the kernel asking for each after the
    /// first ([`first_reply`] and [`part_reply`]).
    pub fn to_parts(&self) -> Vec<String> {
        let text = self.to_value().to_string();
        if text.len() <= PART_BYTES {
            return vec![text];
        }
        let mut parts = Vec::new();
        let mut rest = text.as_str();
        while !rest.is_empty() {
            let mut end = PART_BYTES.min(rest.len());
            while !rest.is_char_boundary(end) {
                end -= 1;
            }
            parts.push(rest[..end].to_owned());
            rest = &rest[end..];
        }
        parts
    }

    /// The value of the reply: the answer, whole.
    pub fn to_reply(&self) -> String {
        self.to_value().to_string()
    }
}

/// The value of the first reply to a request whose answer is `parts`: the answer itself, or
/// the first part with the count.
pub fn first_reply(parts: &[String]) -> String {
    match parts {
        [whole] => whole.clone(),
        _ => json!({"parts": parts.len(), "part": parts[0]}).to_string(),
    }
}

/// The value of the reply to a [`Request::Part`].
pub fn part_reply(part: &str) -> String {
    json!({ "part": part }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tests/fixtures/channel.json`: the examples both ends are held to.
    fn examples() -> Value {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/channel.json"
        );
        let text = std::fs::read_to_string(path).expect("reading the channel's examples");
        serde_json::from_str(&text).expect("the examples are JSON")
    }

    fn named<'a>(list: &'a Value, name: &str) -> &'a Value {
        list.as_array()
            .expect("a list")
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("no example named {name:?}"))
    }

    fn read(example: &Value) -> Message {
        Message::read(&example["request"].to_string())
    }

    #[test]
    fn every_example_request_reads_as_its_kind() {
        let all = examples();
        for example in all["requests"].as_array().expect("requests") {
            let message = read(example);
            let kind = match &message {
                Message::Request(r) => match **r {
                    Request::Call(_) => "call",
                    Request::Part { .. } => "part",
                    Request::Module { .. } => "module",
                    Request::Block { .. } => "block",
                },
                Message::Malformed(_) => "malformed",
            };
            assert_eq!(
                example["reads_as"], kind,
                "{}: {message:?}",
                example["name"]
            );
        }
        let Message::Request(call) = read(named(&all["requests"], "a tool call from a cell"))
        else {
            panic!("a call")
        };
        let Request::Call(call) = *call else {
            panic!("a call")
        };
        assert_eq!((call.server.as_str(), call.tool.as_str()), ("fx", "echo"));
        assert_eq!(call.args, json!({"text": "hi"}));
        let site = call.site.expect("a site");
        assert_eq!((site.cell, site.line), (Some(3), Some(2)));

        let Message::Request(block) = read(named(&all["requests"], "a blocked write")) else {
            panic!("a block")
        };
        assert_eq!(
            *block,
            Request::Block {
                id: "b1".into(),
                report: BlockReport {
                    errno: 30,
                    path: "/tmp/report.csv".into(),
                    op: Some(FileOp::Write),
                },
            }
        );
        let Message::Malformed(why) = read(named(&all["requests"], "connection parameters")) else {
            panic!("refused")
        };
        assert!(
            why.contains("connection parameters are not accepted"),
            "{why}"
        );
    }

    #[test]
    fn every_answer_is_written_as_the_examples_show() {
        let all = examples();
        let answers = &all["answers"];
        let written = |name: &str, answer: Answer| {
            assert_eq!(answer.to_value(), named(answers, name)["answer"], "{name}");
        };
        written(
            "a tool's result",
            Answer::Result {
                is_error: false,
                content: json!([{"type": "text", "text": "hi"}]),
                structured: Some(json!({"text": "hi"})),
            },
        );
        written(
            "a tool's own error",
            Answer::Result {
                is_error: true,
                content: json!([{"type": "text", "text": "no such file"}]),
                structured: None,
            },
        );
        written(
            "a module",
            Answer::Module {
                package: false,
                path: "mcptools/fx/echo.py".into(),
                source: "x = 1\n".into(),
            },
        );
        written("noted", Answer::Noted);
        // Every refusal kind has its example, with the kind written as the example says.
        for kind in RefusalKind::ALL {
            let text = serde_json::to_value(kind).expect("a kind is a string");
            let example = answers
                .as_array()
                .expect("answers")
                .iter()
                .find(|e| e["answer"]["error"] == text)
                .unwrap_or_else(|| panic!("no example of the refusal {text}"));
            let message = example["answer"]["message"].as_str().expect("a message");
            assert_eq!(
                Answer::refused(kind, message).to_value(),
                example["answer"],
                "{kind:?}"
            );
        }
    }

    #[test]
    fn long_answers_go_in_parts_that_join_again() {
        let short = Answer::Noted;
        assert_eq!(short.to_parts(), vec![short.to_reply()]);
        assert_eq!(first_reply(&short.to_parts()), short.to_reply());

        let long = Answer::refused(RefusalKind::McpError, "é".repeat(PART_BYTES));
        let parts = long.to_parts();
        assert!(parts.len() > 1);
        assert!(parts.iter().all(|p| p.len() <= PART_BYTES));
        assert_eq!(parts.concat(), long.to_reply());
        let first: Value = serde_json::from_str(&first_reply(&parts)).expect("json");
        assert_eq!(first["parts"], parts.len());
        assert_eq!(first["part"], parts[0]);
        let second: Value = serde_json::from_str(&part_reply(&parts[1])).expect("json");
        assert_eq!(second["part"], parts[1]);
    }

    #[test]
    fn other_versions_and_bad_fields_are_refused_in_words() {
        let bad = |v: Value| match Message::read(&v.to_string()) {
            Message::Malformed(why) => why,
            other => panic!("read as {other:?}"),
        };
        assert!(bad(json!({"v": 2, "id": "a", "server": "fx", "tool": "t"})).contains("version 2"));
        assert!(bad(json!({"server": "fx"})).contains("could not read"));
        assert!(bad(json!({"id": "a", "site": {"line": "two"}})).contains("could not read"));
        assert!(
            bad(json!({"id": "a", "block": {"errno": 30, "path": "/x", "op": "delete"}}))
                .contains("could not read")
        );
    }

    #[test]
    fn any_text_is_a_message_however_deep_or_broken() {
        let call = |depth: usize| {
            format!(
                r#"{{"v":1,"id":"c1","server":"fx","tool":"echo","args":{}{}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            )
        };
        assert!(
            matches!(Message::read(&call(126)), Message::Request(_)),
            "126 lists deep (127 with the request) is as deep as serde_json reads"
        );
        for depth in [127, 200, 10_000, 1_000_000] {
            let Message::Malformed(why) = Message::read(&call(depth)) else {
                panic!("{depth} deep is refused");
            };
            assert!(
                why.contains("could not read") && why.contains("recursion limit"),
                "{depth}: {why}"
            );
        }
        for text in ["", "{", "nul", r#"{"id":"\ud800"}"#, "[]", "7"] {
            assert!(
                matches!(Message::read(text), Message::Malformed(_)),
                "{text:?} is refused"
            );
        }
    }
}
