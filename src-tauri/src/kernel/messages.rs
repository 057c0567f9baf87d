//! Typed Jupyter messages (protocol 5.3) as they travel over the Kernel Gateway's channels
//! WebSocket: in `v1.kernel.websocket.jupyter.org` binary frames when the server speaks it,
//! else in JSON text frames.
//!
//! Spec: <https://jupyter-client.readthedocs.io/en/stable/messaging.html>. Only what ipybox
//! reads is typed; any other message parses to [`Content::Unknown`] instead of failing.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::channel::Message;

/// Protocol version ipybox speaks.
pub const PROTOCOL_VERSION: &str = "5.3";

/// The WebSocket subprotocol whose binary frames a Jupyter Server passes between the client
/// and the kernel's sockets as they are: no parsing and re-serializing of every message in
/// the server's Python, as the JSON text frames of the older protocol need.
pub const V1_SUBPROTOCOL: &str = "v1.kernel.websocket.jupyter.org";

/// How messages are framed on a channels WebSocket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// One JSON text frame per message (servers without [`V1_SUBPROTOCOL`]).
    Json,
    /// [`V1_SUBPROTOCOL`] binary frames.
    V1,
}

/// A v1 frame: the offsets, the channel name, then the message parts (header, parent
/// header, metadata, content, buffers).
fn encode_v1(channel: &str, parts: &[&[u8]]) -> Vec<u8> {
    let count = parts.len() + 2;
    let mut offsets = Vec::with_capacity(count);
    let mut at = 8 * (1 + count);
    offsets.push(at);
    at += channel.len();
    offsets.push(at);
    for part in parts {
        at += part.len();
        offsets.push(at);
    }
    let mut frame = Vec::with_capacity(at);
    frame.extend_from_slice(&(count as u64).to_le_bytes());
    for offset in offsets {
        frame.extend_from_slice(&(offset as u64).to_le_bytes());
    }
    frame.extend_from_slice(channel.as_bytes());
    for part in parts {
        frame.extend_from_slice(part);
    }
    frame
}

/// The channel name and parts of a v1 frame, or `None` when it is malformed.
fn decode_v1(frame: &[u8]) -> Option<(&str, Vec<&[u8]>)> {
    let word = |i: usize| -> Option<usize> {
        let bytes = frame.get(8 * i..8 * (i + 1))?;
        usize::try_from(u64::from_le_bytes(bytes.try_into().ok()?)).ok()
    };
    let count = word(0)?;
    if count < 2 || count > frame.len() / 8 {
        return None;
    }
    let offsets = (1..=count).map(word).collect::<Option<Vec<usize>>>()?;
    let slice = |i: usize| frame.get(*offsets.get(i)?..*offsets.get(i + 1)?);
    let channel = std::str::from_utf8(slice(0)?).ok()?;
    let parts = (1..count - 1).map(slice).collect::<Option<Vec<&[u8]>>>()?;
    Some((channel, parts))
}

/// Which kernel socket a message belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    /// Requests and replies (execute, kernel_info).
    Shell,
    /// Broadcast side effects: output, status.
    Iopub,
    /// Input requests from the kernel.
    Stdin,
    /// Priority requests (interrupt, shutdown).
    Control,
    /// Heartbeat.
    Heartbeat,
}

/// A message header ([spec](https://jupyter-client.readthedocs.io/en/stable/messaging.html#message-header)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Unique id of the message.
    pub msg_id: String,
    /// Client session id.
    #[serde(default)]
    pub session: String,
    /// User name.
    #[serde(default)]
    pub username: String,
    /// ISO 8601 creation time.
    #[serde(default)]
    pub date: String,
    /// Message type, e.g. `execute_request`.
    pub msg_type: String,
    /// Protocol version.
    #[serde(default)]
    pub version: String,
    /// The subshell that handles the request (kernel subshells, JEP 91); `None`: the main
    /// shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subshell_id: Option<String>,
}

impl Header {
    /// A new header for a request of `msg_type` in `session`.
    pub fn new(msg_type: &str, session: &str) -> Self {
        Header {
            msg_id: uuid::Uuid::new_v4().simple().to_string(),
            session: session.to_owned(),
            username: "ipybox".to_owned(),
            date: iso8601_now(),
            msg_type: msg_type.to_owned(),
            version: PROTOCOL_VERSION.to_owned(),
            subshell_id: None,
        }
    }
}

/// A message received from the gateway. The content stays raw until [`Incoming::content`]
/// is asked for it, so routing a message costs one parse of its envelope.
#[derive(Debug, Deserialize)]
pub struct Incoming {
    /// The channel the message came from.
    #[serde(default)]
    pub channel: Option<Channel>,
    /// The message's own header.
    pub header: Header,
    /// The header of the request this message answers; `None` when empty.
    #[serde(default, deserialize_with = "empty_header_as_none")]
    pub parent_header: Option<Header>,
    /// The message content, parsed on demand.
    pub content: Box<RawValue>,
    /// Why the content of a [`Wire::V1`] frame could not be taken as it came (not UTF-8,
    /// not JSON): a channel request in it is then malformed.
    #[serde(skip)]
    damaged: Option<&'static str>,
}

impl Incoming {
    /// A message from a [`Wire::V1`] binary frame.
    pub fn from_v1(frame: &[u8]) -> Option<Incoming> {
        let (channel, parts) = decode_v1(frame)?;
        let (header, parent, content) = (parts.first()?, parts.get(1)?, parts.get(3)?);
        let parent: Value = serde_json::from_slice(parent).ok()?;
        let parent_header = match parent {
            Value::Object(map) if map.contains_key("msg_id") => {
                serde_json::from_value(Value::Object(map)).ok()
            }
            _ => None,
        };
        // A kernel packs text with `surrogateescape`, so its content may not be UTF-8; taken
        // as Jupyter Server's JSON wire takes it (invalid bytes replaced), or as `null` when it
        // is no JSON, so that the request it carries is still answered.
        let (content, damaged) = match std::str::from_utf8(content) {
            Ok(text) => (RawValue::from_string(text.to_owned()), None),
            Err(_) => (
                RawValue::from_string(String::from_utf8_lossy(content).into_owned()),
                Some("it is not UTF-8"),
            ),
        };
        let (content, damaged) = match content {
            Ok(content) => (content, damaged),
            Err(_) => (
                RawValue::from_string("null".to_owned()).ok()?,
                Some("it is not JSON"),
            ),
        };
        Some(Incoming {
            channel: serde_json::from_value(Value::String(channel.to_owned())).ok(),
            header: serde_json::from_slice(header).ok()?,
            parent_header,
            content,
            damaged,
        })
    }

    /// The id of the request this message belongs to.
    pub fn parent_id(&self) -> Option<&str> {
        self.parent_header.as_ref().map(|h| h.msg_id.as_str())
    }

    /// The typed content. Content that does not match its declared type is `Unknown`.
    pub fn content(&self) -> Content {
        match Content::parse(&self.header.msg_type, self.content.get()) {
            // A plain `input()` keeps its prompt, invalid bytes replaced.
            Content::InputRequest(mut request) if request.ipybox.is_some() => {
                if let Some(why) = self.damaged {
                    request.ipybox = Some(Message::unreadable(why));
                }
                Content::InputRequest(request)
            }
            content => content,
        }
    }
}

fn empty_header_as_none<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Header>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    match v {
        Some(Value::Object(map)) if map.contains_key("msg_id") => {
            serde_json::from_value(Value::Object(map))
                .map(Some)
                .map_err(serde::de::Error::custom)
        }
        _ => Ok(None),
    }
}

/// Typed content of the messages ipybox handles.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// `status` (iopub).
    Status(Status),
    /// `stream` (iopub).
    Stream(Stream),
    /// `execute_result` (iopub).
    ExecuteResult(DisplayData),
    /// `display_data` (iopub).
    DisplayData(DisplayData),
    /// `update_display_data` (iopub).
    UpdateDisplayData(DisplayData),
    /// `clear_output` (iopub).
    ClearOutput(ClearOutput),
    /// `error` (iopub).
    Error(ErrorContent),
    /// `execute_reply` (shell).
    ExecuteReply(ExecuteReply),
    /// `kernel_info_reply` (shell).
    KernelInfoReply(Value),
    /// `input_request` (stdin): the code called `input()`.
    InputRequest(InputRequest),
    /// `execute_input` (iopub): the kernel began the request.
    ExecuteInput(ExecuteInput),
    /// `complete_reply` (shell).
    CompleteReply(CompleteReply),
    /// `inspect_reply` (shell).
    InspectReply(InspectReply),
    /// `create_subshell_reply` (control).
    CreateSubshellReply(CreateSubshellReply),
    /// Anything else (`execute_input`, comm messages, …).
    Unknown,
}

impl Content {
    fn parse(msg_type: &str, raw: &str) -> Content {
        fn p<T: for<'a> Deserialize<'a>>(raw: &str, f: fn(T) -> Content) -> Content {
            serde_json::from_str(raw).map(f).unwrap_or(Content::Unknown)
        }
        match msg_type {
            "status" => p(raw, Content::Status),
            "stream" => p(raw, Content::Stream),
            "execute_result" => p(raw, Content::ExecuteResult),
            "display_data" => p(raw, Content::DisplayData),
            "update_display_data" => p(raw, Content::UpdateDisplayData),
            "clear_output" => p(raw, Content::ClearOutput),
            "error" => p(raw, Content::Error),
            "execute_reply" => p(raw, Content::ExecuteReply),
            "kernel_info_reply" => p(raw, Content::KernelInfoReply),
            "input_request" => Content::InputRequest(InputRequest::parse(raw)),
            "execute_input" => p(raw, Content::ExecuteInput),
            "complete_reply" => p(raw, Content::CompleteReply),
            "inspect_reply" => p(raw, Content::InspectReply),
            "create_subshell_reply" => p(raw, Content::CreateSubshellReply),
            _ => Content::Unknown,
        }
    }
}

/// Kernel execution state ([spec](https://jupyter-client.readthedocs.io/en/stable/messaging.html#kernel-status)).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Status {
    /// What the kernel is doing.
    pub execution_state: ExecutionState,
}

/// `execution_state` of a status message: the kernel's, and the server's own
/// (`restarting`, `autorestarting`, `dead`) for a kernel process that exited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionState {
    /// Handling a request.
    Busy,
    /// Done with a request (all its output was sent).
    Idle,
    /// Starting up.
    Starting,
    /// The server restarts the kernel process.
    Restarting,
    /// The server restarts a kernel process that exited on its own.
    Autorestarting,
    /// The kernel process exited and was not restarted.
    Dead,
    /// A state this version does not know.
    #[serde(other)]
    Other,
}

/// Output on stdout or stderr.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Stream {
    /// Which stream.
    pub name: StreamName,
    /// The text.
    pub text: String,
}

/// The `name` of a stream message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum StreamName {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// `execute_input` (iopub): the kernel started a request, with its execution count.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ExecuteInput {
    /// The counter shown as `[n]` beside a cell.
    #[serde(default)]
    pub execution_count: Option<i64>,
}

/// A MIME bundle (`execute_result`, `display_data`, `update_display_data`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct DisplayData {
    /// MIME type → data (base64 for binary types).
    #[serde(default)]
    pub data: BTreeMap<String, Value>,
    /// MIME type → metadata.
    #[serde(default)]
    pub metadata: Value,
    /// `display_id` lives here.
    #[serde(default)]
    pub transient: Option<Transient>,
    /// The execution count (`execute_result` only).
    #[serde(default)]
    pub execution_count: Option<i64>,
}

impl DisplayData {
    /// The display id, if the output can be updated later.
    pub fn display_id(&self) -> Option<&str> {
        self.transient
            .as_ref()
            .and_then(|t| t.display_id.as_deref())
    }

    /// A string-valued entry (Jupyter allows multi-line strings as lists of lines).
    pub fn text(&self, mime: &str) -> Option<String> {
        match self.data.get(mime)? {
            Value::String(s) => Some(s.clone()),
            Value::Array(lines) => Some(lines.iter().filter_map(Value::as_str).collect()),
            _ => None,
        }
    }
}

/// Transient fields of a display message.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Transient {
    /// Id used by `update_display_data`.
    #[serde(default)]
    pub display_id: Option<String>,
}

/// `clear_output`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ClearOutput {
    /// Wait until the next output before clearing.
    #[serde(default)]
    pub wait: bool,
}

/// `error`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ErrorContent {
    /// Exception name.
    #[serde(default)]
    pub ename: String,
    /// Exception value.
    #[serde(default)]
    pub evalue: String,
    /// Traceback lines (with ANSI colours).
    #[serde(default)]
    pub traceback: Vec<String>,
}

/// `execute_reply`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ExecuteReply {
    /// How the request ended.
    pub status: ReplyStatus,
    /// The execution counter.
    #[serde(default)]
    pub execution_count: Option<i64>,
    /// Exception name when `status == "error"`.
    #[serde(default)]
    pub ename: Option<String>,
    /// Exception value when `status == "error"`.
    #[serde(default)]
    pub evalue: Option<String>,
    /// Traceback when `status == "error"`.
    #[serde(default)]
    pub traceback: Option<Vec<String>>,
    /// The values of the request's `user_expressions`, each a MIME bundle under `data` (or
    /// `status: error`).
    #[serde(default)]
    pub user_expressions: BTreeMap<String, Value>,
}

/// `status` of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReplyStatus {
    /// It ran.
    Ok,
    /// It raised.
    Error,
    /// It did not run (an earlier request failed, `stop_on_error`).
    Aborted,
    /// A status this version does not know.
    #[serde(other)]
    Other,
}

/// `input_request`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputRequest {
    /// The prompt shown to the user.
    pub prompt: String,
    /// Whether the input is a password.
    pub password: bool,
    /// A request of ipybox's channel (`crate::channel`): an ipybox addition to the content,
    /// absent in ordinary `input()` requests.
    pub ipybox: Option<Message>,
}

impl InputRequest {
    /// The request of the content `raw`. Kernel code can send anything here, and a thread of
    /// it waits for the answer: whatever cannot be read is a malformed channel request,
    /// refused at once, never dropped. The `ipybox` field is read apart from the rest, so
    /// that its own depth (not the content's) meets serde_json's limit, and a prompt that is
    /// no string does not stop a call.
    fn parse(raw: &str) -> InputRequest {
        #[derive(Deserialize)]
        struct Fields<'a> {
            #[serde(default, borrow)]
            prompt: Option<&'a RawValue>,
            #[serde(default, borrow)]
            password: Option<&'a RawValue>,
            #[serde(default, borrow)]
            ipybox: Option<&'a RawValue>,
        }
        // Only an object: a derived struct would read a list as well.
        let fields = if raw.trim_start().starts_with('{') {
            serde_json::from_str::<Fields<'_>>(raw).map_err(|e| e.to_string())
        } else {
            Err("the content is not an object".to_owned())
        };
        match fields {
            Ok(fields) => InputRequest {
                prompt: fields
                    .prompt
                    .and_then(|p| serde_json::from_str(p.get()).ok())
                    .unwrap_or_default(),
                password: fields
                    .password
                    .and_then(|p| serde_json::from_str(p.get()).ok())
                    .unwrap_or_default(),
                ipybox: fields.ipybox.map(|r| Message::read(r.get())),
            },
            Err(e) => InputRequest {
                prompt: String::new(),
                password: false,
                ipybox: Some(Message::unreadable(e)),
            },
        }
    }
}

/// The `input_reply` value for a plain `input()` nobody can answer: the kernel raises
/// `StdinNotImplementedError`, as ipykernel does when stdin is not allowed.
pub const NO_INPUT: &str = "\u{0}ipybox:no-input";

/// An outgoing message.
#[derive(Debug, Serialize)]
pub struct Request<'a, C: Serialize> {
    /// Header of the request.
    pub header: &'a Header,
    /// Empty for requests; the request answered for replies (`input_reply`).
    #[serde(serialize_with = "empty_object_if_none")]
    pub parent_header: Option<&'a Header>,
    /// Always empty here.
    pub metadata: BTreeMap<String, Value>,
    /// The request content.
    pub content: C,
    /// The channel to route to.
    pub channel: Channel,
    /// No binary buffers.
    pub buffers: [u8; 0],
}

impl<'a, C: Serialize> Request<'a, C> {
    /// A request on `channel`.
    pub fn new(header: &'a Header, channel: Channel, content: C) -> Self {
        Request {
            header,
            parent_header: None,
            metadata: BTreeMap::new(),
            content,
            channel,
            buffers: [],
        }
    }

    /// A reply on `channel` to the message with header `parent`.
    pub fn reply(header: &'a Header, parent: &'a Header, channel: Channel, content: C) -> Self {
        Request {
            parent_header: Some(parent),
            ..Request::new(header, channel, content)
        }
    }

    /// Serialized as one WebSocket text frame.
    pub fn to_json(&self) -> String {
        // Serializing plain strings and maps cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Serialized as one [`Wire::V1`] binary frame.
    pub fn to_v1(&self) -> Vec<u8> {
        // Serializing plain strings and maps cannot fail.
        let header = serde_json::to_vec(self.header).unwrap_or_default();
        let parent = match self.parent_header {
            Some(p) => serde_json::to_vec(p).unwrap_or_default(),
            None => b"{}".to_vec(),
        };
        let content = serde_json::to_vec(&self.content).unwrap_or_default();
        let channel = match self.channel {
            Channel::Shell => "shell",
            Channel::Iopub => "iopub",
            Channel::Stdin => "stdin",
            Channel::Control => "control",
            Channel::Heartbeat => "heartbeat",
        };
        encode_v1(channel, &[&header, &parent, b"{}", &content])
    }
}

/// `execute_request` content ([spec](https://jupyter-client.readthedocs.io/en/stable/messaging.html#execute)).
#[derive(Debug, Serialize)]
pub struct ExecuteRequest<'a> {
    /// Source code.
    pub code: &'a str,
    /// Silent requests produce no output and do not bump the counter.
    pub silent: bool,
    /// Record in history.
    pub store_history: bool,
    /// Expressions evaluated in the user namespace after the code; their values come back in
    /// the reply.
    pub user_expressions: BTreeMap<String, String>,
    /// Whether `input()` may ask (the caller answers `input_request`s); without it,
    /// `input()` raises in the kernel instead of hanging.
    pub allow_stdin: bool,
    /// Abort queued executions after an error.
    pub stop_on_error: bool,
}

impl<'a> ExecuteRequest<'a> {
    /// A normal, visible execution.
    pub fn new(code: &'a str) -> Self {
        ExecuteRequest {
            code,
            silent: false,
            store_history: true,
            user_expressions: BTreeMap::new(),
            allow_stdin: false,
            stop_on_error: true,
        }
    }
}

fn empty_object_if_none<S: serde::Serializer>(
    header: &Option<&Header>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match header {
        Some(h) => h.serialize(s),
        None => BTreeMap::<String, Value>::new().serialize(s),
    }
}

/// `complete_request` content ([spec](https://jupyter-client.readthedocs.io/en/stable/messaging.html#completion)).
#[derive(Debug, Serialize)]
pub struct CompleteRequest<'a> {
    /// The cell's text.
    pub code: &'a str,
    /// The cursor, in Unicode code points from the start of `code`.
    pub cursor_pos: usize,
}

/// `complete_reply` content.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CompleteReply {
    /// `ok` or `error`.
    pub status: ReplyStatus,
    /// The completions' texts.
    #[serde(default)]
    pub matches: Vec<String>,
    /// Start of the text the matches replace (code points).
    #[serde(default)]
    pub cursor_start: usize,
    /// End of the text the matches replace (code points).
    #[serde(default)]
    pub cursor_end: usize,
    /// IPython puts Jedi's types and signatures under `_jupyter_types_experimental`.
    #[serde(default)]
    pub metadata: Value,
}

/// `inspect_request` content ([spec](https://jupyter-client.readthedocs.io/en/stable/messaging.html#introspection)).
#[derive(Debug, Serialize)]
pub struct InspectRequest<'a> {
    /// The cell's text.
    pub code: &'a str,
    /// The cursor, in Unicode code points from the start of `code`.
    pub cursor_pos: usize,
    /// 0: signature and docstring; 1: more (the source, when there is one).
    pub detail_level: u8,
}

/// `inspect_reply` content.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct InspectReply {
    /// `ok` or `error`.
    pub status: ReplyStatus,
    /// Whether an object was found.
    #[serde(default)]
    pub found: bool,
    /// A MIME bundle (`text/plain` with ANSI colours, sometimes `text/html`).
    #[serde(default)]
    pub data: BTreeMap<String, Value>,
}

/// `create_subshell_reply` content (JEP 91).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CreateSubshellReply {
    /// The new subshell's id.
    #[serde(default)]
    pub subshell_id: Option<String>,
}

/// `input_reply` content.
#[derive(Debug, Serialize)]
pub struct InputReply<'a> {
    /// What the person typed.
    pub value: &'a str,
}

/// `kernel_info_request` has empty content.
#[derive(Debug, Serialize)]
pub struct Empty {}

/// Current UTC time as ISO 8601 with microseconds, as Jupyter headers carry it.
pub fn iso8601_now() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        now.subsec_micros()
    )
}

#[cfg(test)]
mod tests {

    #[test]
    fn v1_frames_round_trip_and_malformed_ones_are_refused() {
        let parent = Header::new("execute_request", "s1");
        let header = Header::new("input_reply", "s1");
        let frame =
            Request::reply(&header, &parent, Channel::Stdin, InputReply { value: "42" }).to_v1();
        let msg = Incoming::from_v1(&frame).expect("parses");
        assert_eq!(msg.channel, Some(Channel::Stdin));
        assert_eq!(msg.header, header);
        assert_eq!(msg.parent_id(), Some(parent.msg_id.as_str()));
        assert_eq!(msg.content.get(), r#"{"value":"42"}"#);

        // As a server frames a kernel's message (the format's reference encoder, by hand):
        // 6 offsets, channel "iopub", header, empty parent, metadata, content.
        let parts: [&[u8]; 5] = [
            b"iopub",
            br#"{"msg_id":"m","msg_type":"status"}"#,
            b"{}",
            b"{}",
            br#"{"execution_state":"idle"}"#,
        ];
        let mut frame = 6u64.to_le_bytes().to_vec();
        let mut at = 8 * 7;
        frame.extend_from_slice(&(at as u64).to_le_bytes());
        for p in parts {
            at += p.len();
            frame.extend_from_slice(&(at as u64).to_le_bytes());
        }
        for p in parts {
            frame.extend_from_slice(p);
        }
        let msg = Incoming::from_v1(&frame).expect("parses");
        assert_eq!((msg.channel, msg.parent_id()), (Some(Channel::Iopub), None));
        assert!(matches!(msg.content(), Content::Status(_)));

        for bad in [
            &frame[..20],
            &frame[..frame.len() - 1],
            b"".as_slice(),
            &[255; 64],
        ] {
            assert!(Incoming::from_v1(bad).is_none(), "{bad:?}");
        }
    }

    use super::*;

    #[test]
    fn parses_stream_and_routes_by_parent() {
        let raw = r#"{"channel":"iopub","header":{"msg_id":"a","msg_type":"stream","session":"s","username":"u","date":"","version":"5.3"},
            "parent_header":{"msg_id":"req1","msg_type":"execute_request"},"metadata":{},"content":{"name":"stdout","text":"hi\n"},"buffers":[],"msg_id":"a","msg_type":"stream"}"#;
        let m: Incoming = serde_json::from_str(raw).expect("valid message");
        assert_eq!(m.channel, Some(Channel::Iopub));
        assert_eq!(m.parent_id(), Some("req1"), "parent id routes the message");
        assert_eq!(
            m.content(),
            Content::Stream(Stream {
                name: StreamName::Stdout,
                text: "hi\n".into()
            })
        );
    }

    #[test]
    fn empty_parent_header_is_none_and_unknown_types_do_not_fail() {
        let raw = r#"{"channel":"iopub","header":{"msg_id":"b","msg_type":"comm_open"},"parent_header":{},"content":{"x":1}}"#;
        let m: Incoming = serde_json::from_str(raw).expect("valid message");
        assert_eq!(
            m.parent_id(),
            None,
            "an empty parent header means no parent"
        );
        assert_eq!(
            m.content(),
            Content::Unknown,
            "unknown message types parse to Unknown"
        );
    }

    /// A server's v1 frame of a kernel's message on `channel` (the format's reference
    /// encoder, by hand): offsets, channel, header, parent, metadata, content.
    fn v1_frame(channel: &str, header: &[u8], parent: &[u8], content: &[u8]) -> Vec<u8> {
        let parts: [&[u8]; 5] = [channel.as_bytes(), header, parent, b"{}", content];
        let mut frame = 6u64.to_le_bytes().to_vec();
        let mut at = 8 * 7;
        frame.extend_from_slice(&(at as u64).to_le_bytes());
        for p in parts {
            at += p.len();
            frame.extend_from_slice(&(at as u64).to_le_bytes());
        }
        for p in parts {
            frame.extend_from_slice(p);
        }
        frame
    }

    /// The content of an `input_request` carrying a tool call whose arguments are nested
    /// `depth` lists deep.
    fn nested_call(depth: usize) -> String {
        format!(
            r#"{{"prompt":"ipybox: fx.echo","password":false,"ipybox":{{"v":1,"id":"c1","server":"fx","tool":"echo","args":{}{}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    }

    /// How the `input_request` `content` reads, arriving whole on each wire: every request on
    /// ipybox's channel is a request or a malformed one, never dropped (which would leave the
    /// asking thread waiting until the cell's timeout).
    fn channel_message(content: &[u8]) -> Vec<Option<crate::channel::Message>> {
        let header = br#"{"msg_id":"r1","msg_type":"input_request","session":"k"}"#;
        let parent = br#"{"msg_id":"x1","msg_type":"execute_request"}"#;
        let mut on_wires = vec![Incoming::from_v1(&v1_frame(
            "stdin", header, parent, content,
        ))];
        if let Ok(content) = std::str::from_utf8(content) {
            let text = format!(
                r#"{{"channel":"stdin","header":{},"parent_header":{},"content":{content}}}"#,
                String::from_utf8_lossy(header),
                String::from_utf8_lossy(parent)
            );
            on_wires.push(serde_json::from_str(&text).ok());
        }
        on_wires
            .into_iter()
            .map(|msg| {
                let msg = msg.expect("the envelope is read");
                assert_eq!(msg.parent_id(), Some("x1"));
                match msg.content() {
                    Content::InputRequest(r) => r.ipybox,
                    other => panic!("an input_request read as {other:?}"),
                }
            })
            .collect()
    }

    #[test]
    fn a_channel_request_is_never_dropped_however_deep_or_broken() {
        use crate::channel::Message;
        for depth in [100, 126] {
            for read in channel_message(nested_call(depth).as_bytes()) {
                assert!(
                    matches!(read, Some(Message::Request(_))),
                    "{depth} deep is a request: {read:?}"
                );
            }
        }
        // Deeper than serde_json reads (128): refused in words, and no stack overflow.
        for depth in [127, 200, 10_000] {
            for read in channel_message(nested_call(depth).as_bytes()) {
                let Some(Message::Malformed(why)) = read else {
                    panic!("{depth} deep is malformed: {read:?}");
                };
                assert!(why.contains("recursion limit"), "{depth}: {why}");
            }
        }
        // Not UTF-8 (a kernel packs lone surrogates with `surrogateescape`), a lone surrogate
        // escape, duplicate fields, a content that is no object, a request that is no
        // object, a prompt that is no string.
        let broken: [&[u8]; 6] = [
            b"{\"prompt\":\"\",\"ipybox\":{\"v\":1,\"id\":\"c\xff\",\"server\":\"fx\",\"tool\":\"echo\"}}",
            br#"{"prompt":"","ipybox":{"v":1,"id":"c\udc80","server":"fx","tool":"echo"}}"#,
            br#"{"prompt":"","ipybox":{"v":1,"id":"c"},"ipybox":{"v":1,"id":"d"}}"#,
            br#"[{"ipybox":{"v":1,"id":"c","server":"fx","tool":"echo"}}]"#,
            br#"{"prompt":"","ipybox":[1,2]}"#,
            br#"{"prompt":7,"password":"no","ipybox":{"v":1,"id":"c","server":"fx","tool":"echo"}}"#,
        ];
        for (i, content) in broken.iter().enumerate() {
            for read in channel_message(content) {
                let answered = matches!(
                    (&read, i),
                    (Some(Message::Request(_)), 5) | (Some(Message::Malformed(_)), 0..=4)
                );
                assert!(answered, "{}: {read:?}", String::from_utf8_lossy(content));
            }
        }
        // A plain input() stays one, its prompt read as far as it can be.
        let plain = channel_message(br#"{"prompt":"name? ","password":false}"#);
        assert!(plain.iter().all(Option::is_none), "{plain:?}");
    }

    #[test]
    fn multiline_list_strings_are_joined() {
        let d: DisplayData =
            serde_json::from_str(r#"{"data":{"text/plain":["a\n","b"]}}"#).expect("valid");
        assert_eq!(d.text("text/plain").as_deref(), Some("a\nb"));
    }

    #[test]
    fn iso8601_has_the_expected_shape() {
        let s = iso8601_now();
        assert_eq!(s.len(), 27, "YYYY-MM-DDTHH:MM:SS.ffffffZ: {s}");
        assert!(s.starts_with("20"), "{s}");
        assert!(s.ends_with('Z'), "{s}");
    }
}
