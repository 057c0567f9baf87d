//! Client for MCP servers that only speak the legacy "HTTP with SSE" transport.
//!
//! Protocol revision 2024-11-05 defined this transport:
//! <https://modelcontextprotocol.io/specification/2024-11-05/basic/transports#http-with-sse>.
//! rmcp 3.x dropped it in favour of Streamable HTTP, but SSE-only servers are still common in
//! the wild, so ipybox carries its own client side.
//!
//! The client opens a long-lived `GET` on the server's SSE URL. The server's first event is
//! `endpoint`, whose data is the URI (often relative, carrying a session id) that every
//! client→server JSON-RPC message is `POST`ed to. Every server→client message arrives as a
//! `message` event on the stream.
//!
//! [`connect`] performs that handshake and returns an [`SseClientTransport`], which implements
//! [`rmcp::transport::Transport`] for [`RoleClient`] directly, so rmcp's client accepts it as is:
//!
//! ```rust,ignore
//! let transport = sse::connect("http://127.0.0.1:3001/sse", &HeaderMap::new(), Duration::from_secs(10)).await?;
//! let client = ().serve(transport).await?;
//! let tools = client.list_all_tools().await?;
//! ```

use std::{borrow::Cow, collections::VecDeque, fmt, time::Duration};

use bytes::Bytes;
use futures_util::{StreamExt, stream::BoxStream};
use reqwest::{
    StatusCode, Url,
    header::{ACCEPT, CACHE_CONTROL, CONTENT_TYPE, HeaderMap, HeaderValue},
    redirect,
};
use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use tokio::time::{Instant, timeout_at};

/// Longest part of an error response body kept in an [`SseError`]: enough for a server's
/// explanation, short enough that an HTML error page does not flood the UI.
const MAX_ERROR_BODY: usize = 512;

/// Redirects beyond this many are treated as a loop.
const MAX_REDIRECTS: usize = 10;

/// Why an SSE MCP server could not be reached or a message could not be delivered.
///
/// Messages are written for the person who configured the server URL.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    #[error("invalid MCP SSE server URL {url:?}: {reason}")]
    InvalidUrl { url: String, reason: String },

    #[error("could not set up the HTTP client: {0}")]
    HttpClient(String),

    #[error("cannot reach the MCP SSE server at {url}: {reason}")]
    Unreachable { url: String, reason: String },

    #[error("the MCP SSE server at {url} did not respond within {timeout:?}")]
    ConnectTimeout { url: String, timeout: Duration },

    #[error("the MCP SSE server at {url} answered HTTP {status}{}", body_suffix(.body))]
    Status {
        url: String,
        status: StatusCode,
        body: String,
    },

    #[error(
        "{url} did not answer with an event stream (Content-Type {content_type:?}); \
         is it a Streamable HTTP MCP server rather than a legacy SSE one?"
    )]
    NotEventStream { url: String, content_type: String },

    #[error("the MCP SSE server at {url} did not send its endpoint event within {timeout:?}")]
    NoEndpoint { url: String, timeout: Duration },

    #[error(
        "the MCP SSE server at {url} closed the event stream before sending its endpoint event"
    )]
    ClosedBeforeEndpoint { url: String },

    #[error("the event stream from the MCP SSE server at {url} failed: {reason}")]
    StreamFailed { url: String, reason: String },

    #[error("the MCP SSE server at {url} sent an invalid endpoint {endpoint:?}: {reason}")]
    InvalidEndpoint {
        url: String,
        endpoint: String,
        reason: String,
    },

    #[error(
        "refusing the endpoint {endpoint} announced by the MCP SSE server at {url}: \
         it is on a different origin, and messages are only ever sent to the server's own origin"
    )]
    CrossOriginEndpoint { url: String, endpoint: String },

    #[error("could not encode a message for the MCP SSE server: {0}")]
    Encode(#[from] serde_json::Error),

    #[error("could not send a message to {endpoint}: {reason}")]
    Post { endpoint: String, reason: String },

    #[error("the MCP SSE server rejected a message posted to {endpoint} with HTTP {status}{}", body_suffix(.body))]
    PostRejected {
        endpoint: String,
        status: StatusCode,
        body: String,
    },
}

fn body_suffix(body: &str) -> String {
    if body.is_empty() {
        String::new()
    } else {
        format!(": {body}")
    }
}

/// Connect to a legacy SSE MCP server and return an rmcp client transport.
///
/// `url` is the server's SSE URL (for example `http://127.0.0.1:3001/sse`). `headers` go on the
/// event-stream `GET` and on every message `POST` (typically `Authorization`). `timeout` bounds
/// the whole handshake, from opening the connection to receiving the `endpoint` event, and also
/// the TCP connect of each later `POST`.
///
/// The endpoint must have the same origin (scheme, host and port) as the SSE URL: a server, or
/// whoever can inject into its stream, must not be able to redirect messages, and the headers
/// that carry credentials, to another host.
///
/// Spec: <https://modelcontextprotocol.io/specification/2024-11-05/basic/transports#http-with-sse>
pub async fn connect(
    url: &str,
    headers: &HeaderMap,
    timeout: Duration,
) -> Result<SseClientTransport, SseError> {
    let sse_url = parse_sse_url(url)?;
    let client = reqwest::Client::builder()
        .default_headers(headers.clone())
        .connect_timeout(timeout)
        .redirect(same_origin_redirects())
        .build()
        .map_err(|error| SseError::HttpClient(root_cause(&error)))?;

    let deadline = Instant::now() + timeout;
    let response = timeout_at(
        deadline,
        client
            .get(sse_url.clone())
            .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
            .header(CACHE_CONTROL, HeaderValue::from_static("no-cache"))
            .send(),
    )
    .await
    .map_err(|_| SseError::ConnectTimeout {
        url: sse_url.to_string(),
        timeout,
    })?
    .map_err(|error| SseError::Unreachable {
        url: sse_url.to_string(),
        reason: root_cause(&error),
    })?;

    let status = response.status();
    if !status.is_success() {
        // An error body can itself be a never-ending stream; what arrives before the deadline
        // is all the explanation the user gets.
        let body = timeout_at(deadline, error_body(response))
            .await
            .unwrap_or_default();
        return Err(SseError::Status {
            url: sse_url.to_string(),
            status,
            body,
        });
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        .unwrap_or_default();
    if !is_event_stream(&content_type) {
        return Err(SseError::NotEventStream {
            url: sse_url.to_string(),
            content_type,
        });
    }

    // Same-origin redirects may have moved the stream; relative endpoints resolve against where
    // it actually lives.
    let stream_url = response.url().clone();
    let mut events = EventStream {
        body: Some(response.bytes_stream().boxed()),
        parser: EventParser::default(),
    };
    let raw_endpoint = timeout_at(deadline, events.endpoint(&stream_url))
        .await
        .map_err(|_| SseError::NoEndpoint {
            url: sse_url.to_string(),
            timeout,
        })??;
    let endpoint = resolve_endpoint(&sse_url, &stream_url, &raw_endpoint)?;
    tracing::debug!(url = %sse_url, %endpoint, "connected to MCP SSE server");

    Ok(SseClientTransport {
        client,
        sse_url,
        endpoint,
        events,
    })
}

/// rmcp client transport over a legacy MCP SSE connection, made by [`connect`].
///
/// Implements [`Transport<RoleClient>`] itself (not `Sink` + `Stream`), so it goes straight
/// into `().serve(transport)` or `ServiceExt::serve` for any `ClientHandler`.
///
/// - `send` POSTs one JSON-RPC message; a status other than 2xx becomes
///   [`SseError::PostRejected`], which rmcp hands to the caller of the request.
/// - `receive` yields the next `message` event. When the server closes the stream or it fails,
///   it returns `None`, rmcp ends the session, and pending requests fail as closed: this
///   transport has no resumption, because the server's session dies with the stream.
/// - `close` (also dropping the transport) closes the stream, which ends the server's session.
///
/// Spec: <https://modelcontextprotocol.io/specification/2024-11-05/basic/transports#http-with-sse>
pub struct SseClientTransport {
    client: reqwest::Client,
    sse_url: Url,
    endpoint: Url,
    events: EventStream,
}

impl fmt::Debug for SseClientTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SseClientTransport")
            .field("sse_url", &self.sse_url.as_str())
            .field("endpoint", &self.endpoint.as_str())
            .field("open", &self.events.body.is_some())
            .finish_non_exhaustive()
    }
}

impl Transport<RoleClient> for SseClientTransport {
    type Error = SseError;

    fn name() -> Cow<'static, str> {
        // rmcp puts this in every transport error it reports ("Transport [SSE] error: …").
        Cow::Borrowed("SSE")
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let client = self.client.clone();
        let endpoint = self.endpoint.clone();
        async move { post_message(&client, endpoint, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.events.message(&self.sse_url).await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.events.body = None;
        Ok(())
    }
}

async fn post_message(
    client: &reqwest::Client,
    endpoint: Url,
    message: &TxJsonRpcMessage<RoleClient>,
) -> Result<(), SseError> {
    let body = serde_json::to_vec(message)?;
    let response = client
        .post(endpoint.clone())
        .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
        .body(body)
        .send()
        .await
        .map_err(|error| SseError::Post {
            endpoint: endpoint.to_string(),
            reason: root_cause(&error),
        })?;
    let status = response.status();
    if status.is_success() {
        // The reply (if any) comes on the event stream; the POST body is only an acknowledgement.
        return Ok(());
    }
    let body = error_body(response).await;
    tracing::warn!(%endpoint, %status, %body, "MCP SSE server rejected a message");
    Err(SseError::PostRejected {
        endpoint: endpoint.to_string(),
        status,
        body,
    })
}

/// The open event stream and the parser state that must survive between reads.
///
/// Everything lives here rather than in locals of `receive` because rmcp polls `receive` inside
/// `select!` and drops the future whenever another branch wins; only the `next()` await may be
/// interrupted, and that is cancel-safe.
struct EventStream {
    body: Option<BoxStream<'static, reqwest::Result<Bytes>>>,
    parser: EventParser,
}

impl EventStream {
    /// Read until the server announces its message endpoint, keeping any other events queued.
    async fn endpoint(&mut self, url: &Url) -> Result<String, SseError> {
        loop {
            if let Some(event) = self.parser.take("endpoint") {
                return Ok(event.data);
            }
            match self.next_chunk().await {
                Some(Ok(())) => {}
                Some(Err(error)) => {
                    return Err(SseError::StreamFailed {
                        url: url.to_string(),
                        reason: root_cause(&error),
                    });
                }
                None => {
                    return Err(SseError::ClosedBeforeEndpoint {
                        url: url.to_string(),
                    });
                }
            }
        }
    }

    /// The next JSON-RPC message from the server, or `None` once the stream is over.
    async fn message(&mut self, url: &Url) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            while let Some(event) = self.parser.next() {
                match event.kind.as_str() {
                    "message" => match serde_json::from_str(&event.data) {
                        Ok(message) => return Some(message),
                        // One malformed message should not cost the whole session.
                        Err(error) => tracing::warn!(
                            %url, %error, data = %event.data,
                            "ignoring an SSE message that is not JSON-RPC"
                        ),
                    },
                    kind => tracing::debug!(%url, kind, "ignoring SSE event"),
                }
            }
            match self.next_chunk().await? {
                Ok(()) => {}
                Err(error) => {
                    tracing::warn!(%url, error = %root_cause(&error), "MCP SSE stream failed");
                    self.body = None;
                    return None;
                }
            }
        }
    }

    /// Feed the parser one more chunk. `None` means the stream is over (and stays over).
    async fn next_chunk(&mut self) -> Option<reqwest::Result<()>> {
        let body = self.body.as_mut()?;
        match body.next().await {
            Some(Ok(chunk)) => {
                self.parser.feed(&chunk);
                Some(Ok(()))
            }
            Some(Err(error)) => {
                self.body = None;
                Some(Err(error))
            }
            None => {
                tracing::info!("MCP SSE server closed the event stream");
                self.body = None;
                None
            }
        }
    }
}

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Event {
    kind: String,
    data: String,
}

/// Incremental parser for `text/event-stream`, following
/// <https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>.
///
/// Written here rather than taken from `sse-stream` because that crate rejects the whole stream
/// on an unknown field, a line without a colon, or a repeated `event:` line, all of which the
/// spec says to tolerate, and SSE-only servers come from many hands.
#[derive(Debug, Default)]
struct EventParser {
    /// Bytes of a line whose end has not arrived yet.
    line: Vec<u8>,
    /// The last chunk ended in `\r`, so a `\n` starting the next one belongs to that line end.
    after_cr: bool,
    seen_first_line: bool,
    kind: String,
    data: String,
    ready: VecDeque<Event>,
}

impl EventParser {
    fn feed(&mut self, mut chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        if std::mem::take(&mut self.after_cr) && chunk[0] == b'\n' {
            chunk = &chunk[1..];
        }
        while let Some(end) = chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
            let mut line = std::mem::take(&mut self.line);
            line.extend_from_slice(&chunk[..end]);
            self.process_line(&line);
            line.clear();
            self.line = line;

            let was_cr = chunk[end] == b'\r';
            chunk = &chunk[end + 1..];
            if was_cr {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
        }
        self.line.extend_from_slice(chunk);
    }

    fn process_line(&mut self, line: &[u8]) {
        let line = if std::mem::replace(&mut self.seen_first_line, true) {
            line
        } else {
            line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line)
        };
        if line.is_empty() {
            self.dispatch();
            return;
        }
        let line = String::from_utf8_lossy(line);
        if line.starts_with(':') {
            // A comment; servers send these as keep-alives.
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (&*line, ""),
        };
        match field {
            "event" => value.clone_into(&mut self.kind),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            // `id` and `retry` only serve reconnection, which this protocol cannot use: the
            // server's session ends with the stream. Unknown fields are ignored by the spec.
            _ => {}
        }
    }

    fn dispatch(&mut self) {
        let kind = std::mem::take(&mut self.kind);
        let mut data = std::mem::take(&mut self.data);
        if data.is_empty() {
            return;
        }
        data.pop();
        let kind = if kind.is_empty() {
            "message".to_owned()
        } else {
            kind
        };
        self.ready.push_back(Event { kind, data });
    }

    fn next(&mut self) -> Option<Event> {
        self.ready.pop_front()
    }

    /// Remove and return the first queued event of `kind`, leaving the others in order.
    fn take(&mut self, kind: &str) -> Option<Event> {
        let index = self.ready.iter().position(|event| event.kind == kind)?;
        self.ready.remove(index)
    }
}

fn parse_sse_url(url: &str) -> Result<Url, SseError> {
    let parsed = Url::parse(url.trim()).map_err(|error| SseError::InvalidUrl {
        url: url.to_owned(),
        reason: error.to_string(),
    })?;
    match parsed.scheme() {
        "http" | "https" => Ok(parsed),
        scheme => Err(SseError::InvalidUrl {
            url: url.to_owned(),
            reason: format!("scheme {scheme:?} is not http or https"),
        }),
    }
}

fn resolve_endpoint(sse_url: &Url, stream_url: &Url, raw: &str) -> Result<Url, SseError> {
    let endpoint = stream_url
        .join(raw.trim())
        .map_err(|error| SseError::InvalidEndpoint {
            url: sse_url.to_string(),
            endpoint: raw.to_owned(),
            reason: error.to_string(),
        })?;
    if endpoint.origin() != sse_url.origin() {
        return Err(SseError::CrossOriginEndpoint {
            url: sse_url.to_string(),
            endpoint: endpoint.to_string(),
        });
    }
    Ok(endpoint)
}

/// Follow redirects only within the SSE URL's origin, for the same reason the endpoint must stay
/// there: credentials in the custom headers must not travel to another host.
fn same_origin_redirects() -> redirect::Policy {
    redirect::Policy::custom(|attempt| {
        let leaves_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() != attempt.url().origin());
        if leaves_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    })
}

fn is_event_stream(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("text/event-stream"))
}

/// The start of an error response's body, for the error message. Reading stops after
/// [`MAX_ERROR_BODY`] bytes so an endless body cannot stall the error, and a body that cannot be
/// read leaves the message with the status alone.
async fn error_body(mut response: reqwest::Response) -> String {
    let mut bytes = Vec::new();
    while bytes.len() <= MAX_ERROR_BODY {
        match response.chunk().await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    let truncated = bytes.len() > MAX_ERROR_BODY;
    bytes.truncate(MAX_ERROR_BODY);
    // Truncation may split a UTF-8 sequence; the lossy decoding turns that tail into U+FFFD.
    let mut body = String::from_utf8_lossy(&bytes).trim_end().to_owned();
    if truncated {
        body.push('…');
    }
    body
}

/// reqwest's own message ("error sending request for url …") hides the useful part, such as
/// "Connection refused", at the bottom of the source chain.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(source) = current.source() {
        current = source;
    }
    current.to_string()
}

#[cfg(test)]
mod tests {
    use std::{
        net::SocketAddr,
        path::PathBuf,
        process::Stdio,
        sync::{Arc, Mutex},
    };

    use reqwest::header::AUTHORIZATION;
    use rmcp::{
        ServiceExt,
        model::CallToolRequestParams,
        service::{QuitReason, ServiceError},
    };
    use serde_json::{Value, json};
    use tokio::{
        io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader},
        net::{TcpListener, TcpStream},
        sync::{Notify, mpsc},
    };

    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(10);

    // ---- parser ----------------------------------------------------------------------------

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<Event> {
        let mut parser = EventParser::default();
        for chunk in chunks {
            parser.feed(chunk);
        }
        std::iter::from_fn(|| parser.next()).collect()
    }

    fn event(kind: &str, data: &str) -> Event {
        Event {
            kind: kind.to_owned(),
            data: data.to_owned(),
        }
    }

    #[test]
    fn parser_joins_multi_line_data_and_defaults_to_message() {
        let events = parse_chunks(&[b"data: {\ndata:  \"a\": 1\ndata: }\n\n"]);
        assert_eq!(
            events,
            vec![event("message", "{\n \"a\": 1\n}")],
            "data lines join with LF, only one leading space is stripped"
        );
    }

    #[test]
    fn parser_handles_crlf_and_cr_split_anywhere() {
        let stream = b"event: endpoint\r\ndata: /m?s=1\r\n\r\ndata: x\rdata: y\r\r";
        let expected = vec![event("endpoint", "/m?s=1"), event("message", "x\ny")];
        for split in 0..=stream.len() {
            let (a, b) = stream.split_at(split);
            assert_eq!(
                parse_chunks(&[a, b]),
                expected,
                "split at byte {split} must not change the events"
            );
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(
            parse_chunks(&bytes),
            expected,
            "one byte per chunk parses the same"
        );
    }

    #[test]
    fn parser_skips_comments_and_tolerates_odd_lines() {
        let events = parse_chunks(&[
            "\u{feff}: keep-alive\n\n".as_bytes(),
            b"id: 7\nretry: 100\nfoo: bar\nevent: x\nevent: endpoint\n: ping\ndata\ndata: /e\n\n",
            b"event: empty\n\n",
            b"data: unfinished",
        ]);
        assert_eq!(
            events,
            vec![event("endpoint", "\n/e")],
            "BOM, comments, id/retry/unknown fields are ignored; the last event line wins; a bare \
             `data` line adds an empty line; events without data and unterminated events are dropped"
        );
    }

    // ---- errors without a peer ---------------------------------------------------------------

    #[tokio::test]
    async fn rejects_invalid_urls() {
        for url in ["not a url", "ftp://127.0.0.1/sse", "/sse"] {
            let error = connect(url, &HeaderMap::new(), TIMEOUT)
                .await
                .expect_err("an invalid URL cannot connect");
            assert!(
                matches!(error, SseError::InvalidUrl { .. }),
                "{url}: expected InvalidUrl, got {error:?}"
            );
        }
    }

    #[tokio::test]
    async fn reports_unreachable_server() {
        let port = free_port();
        let url = format!("http://127.0.0.1:{port}/sse");
        let error = connect(&url, &HeaderMap::new(), TIMEOUT)
            .await
            .expect_err("nothing listens on the port");
        assert!(
            matches!(error, SseError::Unreachable { .. }),
            "expected Unreachable, got {error:?}"
        );
        assert!(
            error.to_string().contains(&url),
            "the message names the URL: {error}"
        );
    }

    #[test]
    fn endpoint_must_keep_the_origin() {
        let sse = Url::parse("http://127.0.0.1:8000/mcp/sse").expect("valid URL");
        let resolve = |raw: &str| resolve_endpoint(&sse, &sse, raw).map(|url| url.to_string());
        assert_eq!(
            resolve("/messages?sessionId=a").expect("absolute path"),
            "http://127.0.0.1:8000/messages?sessionId=a"
        );
        assert_eq!(
            resolve("messages?sessionId=a").expect("path-relative"),
            "http://127.0.0.1:8000/mcp/messages?sessionId=a",
            "a path-relative endpoint resolves against the SSE URL's directory"
        );
        assert_eq!(
            resolve(" http://127.0.0.1:8000/x \n").expect("absolute URL, padded"),
            "http://127.0.0.1:8000/x"
        );
        for raw in [
            "http://evil.example/messages",
            "//evil.example/messages",
            "https://127.0.0.1:8000/messages",
            "http://127.0.0.1:8001/messages",
            "http://localhost:8000/messages",
        ] {
            assert!(
                matches!(
                    resolve_endpoint(&sse, &sse, raw),
                    Err(SseError::CrossOriginEndpoint { .. })
                ),
                "{raw} is another origin and must be refused"
            );
        }
    }

    // ---- fixture SSE server ------------------------------------------------------------------

    /// How the fixture server behaves; each test varies one thing.
    #[derive(Clone)]
    struct Script {
        /// Endpoint event data; `{base}` becomes `http://127.0.0.1:<port>`. `None` sends none.
        endpoint: Option<String>,
        eol: &'static str,
        /// Pretty-print replies so each spans many `data:` lines.
        multi_line: bool,
        /// Write events a few bytes at a time.
        fragmented: bool,
        /// Answer POSTs of this method with HTTP 500.
        fail_method: Option<&'static str>,
        /// Accept POSTs of this method but never reply.
        silent_method: Option<&'static str>,
        /// Promise a body longer than what is sent, so closing the stream is a read error for
        /// the client rather than a clean end.
        truncated_body: bool,
    }

    impl Default for Script {
        fn default() -> Self {
            Self {
                endpoint: Some("/messages?sessionId=abc".to_owned()),
                eol: "\n",
                multi_line: true,
                fragmented: false,
                fail_method: None,
                silent_method: None,
                truncated_body: false,
            }
        }
    }

    #[derive(Debug, Clone)]
    struct Recorded {
        method: String,
        target: String,
        headers: Vec<(String, String)>,
        body: String,
    }

    impl Recorded {
        fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, value)| value.as_str())
        }
    }

    struct State {
        script: Script,
        base: String,
        session: Mutex<Option<mpsc::UnboundedSender<String>>>,
        close_stream: Notify,
        requests: Mutex<Vec<Recorded>>,
    }

    /// A minimal HTTP/1.1 server speaking the 2024-11-05 SSE transport with a one-tool MCP
    /// server behind it. Raw TCP so the tests control every byte on the wire.
    struct Fixture {
        state: Arc<State>,
        task: tokio::task::JoinHandle<()>,
    }

    impl Drop for Fixture {
        fn drop(&mut self) {
            self.task.abort();
        }
    }

    impl Fixture {
        async fn start(script: Script) -> Self {
            let listener = TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind fixture");
            let addr: SocketAddr = listener.local_addr().expect("fixture address");
            let state = Arc::new(State {
                script,
                base: format!("http://{addr}"),
                session: Mutex::new(None),
                close_stream: Notify::new(),
                requests: Mutex::new(Vec::new()),
            });
            let task = tokio::spawn({
                let state = state.clone();
                async move {
                    while let Ok((stream, _)) = listener.accept().await {
                        tokio::spawn(serve_connection(stream, state.clone()));
                    }
                }
            });
            Self { state, task }
        }

        fn url(&self, path: &str) -> String {
            format!("{}{path}", self.state.base)
        }

        fn requests(&self) -> Vec<Recorded> {
            self.state.requests.lock().expect("requests lock").clone()
        }

        async fn wait_for_post(&self, method: &str) -> Recorded {
            let wait = async {
                loop {
                    if let Some(found) = self
                        .requests()
                        .into_iter()
                        .find(|r| r.method == "POST" && r.body.contains(method))
                    {
                        return found;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            };
            tokio::time::timeout(TIMEOUT, wait)
                .await
                .unwrap_or_else(|_| panic!("no POST of {method} reached the fixture"))
        }
    }

    async fn serve_connection(stream: TcpStream, state: Arc<State>) {
        let (read, mut write) = stream.into_split();
        let mut reader = BufReader::new(read);
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).await.is_err() {
            return;
        }
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_owned();
        let target = parts.next().unwrap_or_default().to_owned();
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.push((name.trim().to_owned(), value.trim().to_owned()));
            }
        }
        let length: usize = headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, value)| value.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        let recorded = Recorded {
            method,
            target,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        };
        state
            .requests
            .lock()
            .expect("requests lock")
            .push(recorded.clone());

        let path = recorded.target.split('?').next().unwrap_or_default();
        match (recorded.method.as_str(), path) {
            ("GET", "/sse") => serve_stream(write, &state).await,
            ("POST", "/messages") => serve_post(write, &state, &recorded.body).await,
            ("GET", "/json") => {
                respond(&mut write, "200 OK", "application/json", "{}").await;
            }
            _ => {
                respond(&mut write, "404 Not Found", "text/plain", "no route\n").await;
            }
        }
    }

    async fn serve_stream(mut write: tokio::net::tcp::OwnedWriteHalf, state: &State) {
        let script = &state.script;
        let eol = script.eol;
        let (sender, mut receiver) = mpsc::unbounded_channel();
        *state.session.lock().expect("session lock") = Some(sender);
        // Without Content-Length or chunking the body runs until the connection closes.
        let length = if script.truncated_body {
            "Content-Length: 100000000\r\n"
        } else {
            ""
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n\
             Cache-Control: no-cache\r\n{length}Connection: close\r\n\r\n"
        );
        if write.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let mut opening = format!(": keep-alive{eol}{eol}");
        if let Some(endpoint) = &script.endpoint {
            let endpoint = endpoint.replace("{base}", &state.base);
            opening.push_str(&format!(
                "event: endpoint{eol}: ping{eol}data: {endpoint}{eol}{eol}"
            ));
        }
        if write_event(&mut write, &opening, script.fragmented)
            .await
            .is_err()
        {
            return;
        }
        let mut keep_alive = tokio::time::interval(Duration::from_millis(50));
        loop {
            tokio::select! {
                message = receiver.recv() => {
                    let Some(message) = message else { return };
                    if write_event(&mut write, &message, script.fragmented).await.is_err() {
                        return;
                    }
                }
                _ = keep_alive.tick() => {
                    if write.write_all(format!(":{eol}").as_bytes()).await.is_err() {
                        return;
                    }
                }
                _ = state.close_stream.notified() => {
                    let _ = write.shutdown().await;
                    return;
                }
            }
        }
    }

    async fn respond(
        write: &mut tokio::net::tcp::OwnedWriteHalf,
        status: &str,
        content_type: &str,
        body: &str,
    ) {
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        );
        // The client may already have gone; the test's assertions report that, not the fixture.
        let _ = write.write_all(response.as_bytes()).await;
    }

    async fn write_event(
        write: &mut tokio::net::tcp::OwnedWriteHalf,
        text: &str,
        fragmented: bool,
    ) -> std::io::Result<()> {
        if !fragmented {
            return write.write_all(text.as_bytes()).await;
        }
        for piece in text.as_bytes().chunks(3) {
            write.write_all(piece).await?;
            write.flush().await?;
            tokio::task::yield_now().await;
        }
        Ok(())
    }

    async fn serve_post(mut write: tokio::net::tcp::OwnedWriteHalf, state: &State, body: &str) {
        let message: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let method = message["method"].as_str().unwrap_or_default();
        if state.script.fail_method == Some(method) {
            respond(
                &mut write,
                "500 Internal Server Error",
                "text/plain",
                "boom happened",
            )
            .await;
            return;
        }
        respond(&mut write, "202 Accepted", "text/plain", "Accepted").await;
        let Some(id) = message.get("id") else {
            return; // a notification: nothing to answer
        };
        if state.script.silent_method == Some(method) {
            return;
        }
        let reply = match method {
            "initialize" => json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2024-11-05",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "sse-fixture", "version": "0.0.0"},
            }}),
            "tools/list" => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{
                "name": "echo",
                "description": "Echo a message",
                "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
            }]}}),
            "tools/call" => {
                let text = format!(
                    "echo: {}",
                    message["params"]["arguments"]["message"]
                        .as_str()
                        .unwrap_or_default()
                );
                json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
            }
            _ => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}})
            }
        };
        let eol = state.script.eol;
        let json = if state.script.multi_line {
            serde_json::to_string_pretty(&reply).expect("encode reply")
        } else {
            reply.to_string()
        };
        let mut event = format!("event: message{eol}");
        for line in json.lines() {
            event.push_str(&format!("data: {line}{eol}"));
        }
        event.push_str(eol);
        if let Some(session) = state.session.lock().expect("session lock").as_ref() {
            let _ = session.send(event);
        }
    }

    fn free_port() -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind port 0");
        listener.local_addr().expect("local address").port()
    }

    fn auth_headers() -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer sesame"));
        headers
    }

    async fn call_echo(
        client: &rmcp::service::Peer<RoleClient>,
        message: &str,
    ) -> Result<String, ServiceError> {
        let arguments = json!({ "message": message });
        let params = CallToolRequestParams::new("echo")
            .with_arguments(arguments.as_object().cloned().unwrap_or_default());
        let result = tokio::time::timeout(TIMEOUT, client.call_tool(params))
            .await
            .expect("call_tool must not hang")?;
        Ok(result
            .content
            .iter()
            .filter_map(|content| content.as_text())
            .map(|text| text.text.clone())
            .collect())
    }

    // ---- against the fixture -----------------------------------------------------------------

    #[tokio::test]
    async fn relative_endpoint_multi_line_data_and_headers() {
        let fixture = Fixture::start(Script::default()).await;
        let transport = connect(&fixture.url("/sse"), &auth_headers(), TIMEOUT)
            .await
            .expect("connect to fixture");
        assert_eq!(
            transport.endpoint.as_str(),
            fixture.url("/messages?sessionId=abc"),
            "a relative endpoint resolves against the SSE URL"
        );
        let client = ().serve(transport).await.expect("initialize over SSE");
        let tools = client.list_all_tools().await.expect("list tools");
        assert_eq!(
            tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(),
            ["echo"],
            "the fixture's tool list arrives through multi-line data events"
        );
        assert_eq!(
            call_echo(client.peer(), "hi").await.expect("call echo"),
            "echo: hi"
        );

        let requests = fixture.requests();
        let get = requests
            .iter()
            .find(|r| r.method == "GET")
            .expect("the GET was recorded");
        assert_eq!(
            get.header("authorization"),
            Some("Bearer sesame"),
            "custom headers go on the GET"
        );
        assert_eq!(get.header("accept"), Some("text/event-stream"));
        let posts: Vec<_> = requests.iter().filter(|r| r.method == "POST").collect();
        assert!(
            posts.len() >= 4,
            "initialize, initialized, tools/list, tools/call were posted: {posts:?}"
        );
        for post in posts {
            assert_eq!(
                post.target, "/messages?sessionId=abc",
                "POSTs go to the announced endpoint"
            );
            assert_eq!(
                post.header("authorization"),
                Some("Bearer sesame"),
                "custom headers go on every POST"
            );
            assert_eq!(post.header("content-type"), Some("application/json"));
        }
        client.cancel().await.expect("shut the client down");
    }

    #[tokio::test]
    async fn absolute_endpoint_crlf_and_fragmented_writes() {
        let fixture = Fixture::start(Script {
            endpoint: Some("{base}/messages?sessionId=abs".to_owned()),
            eol: "\r\n",
            fragmented: true,
            ..Script::default()
        })
        .await;
        let transport = connect(&fixture.url("/sse"), &HeaderMap::new(), TIMEOUT)
            .await
            .expect("connect to fixture");
        assert_eq!(
            transport.endpoint.as_str(),
            fixture.url("/messages?sessionId=abs")
        );
        let client = ().serve(transport).await.expect("initialize over SSE");
        assert_eq!(
            call_echo(client.peer(), "crlf").await.expect("call echo"),
            "echo: crlf",
            "CRLF line ends split across TCP writes still parse"
        );
        client.cancel().await.expect("shut the client down");
    }

    #[tokio::test]
    async fn refuses_cross_origin_endpoint() {
        for endpoint in ["http://evil.example/messages", "//evil.example/messages"] {
            let fixture = Fixture::start(Script {
                endpoint: Some(endpoint.to_owned()),
                ..Script::default()
            })
            .await;
            let error = connect(&fixture.url("/sse"), &auth_headers(), TIMEOUT)
                .await
                .expect_err("a cross-origin endpoint must be refused");
            assert!(
                matches!(error, SseError::CrossOriginEndpoint { .. }),
                "{endpoint}: expected CrossOriginEndpoint, got {error:?}"
            );
            assert!(
                fixture.requests().iter().all(|r| r.method == "GET"),
                "nothing was posted anywhere"
            );
        }
    }

    #[tokio::test]
    async fn times_out_without_endpoint_event() {
        let fixture = Fixture::start(Script {
            endpoint: None,
            ..Script::default()
        })
        .await;
        let started = std::time::Instant::now();
        let error = connect(
            &fixture.url("/sse"),
            &HeaderMap::new(),
            Duration::from_millis(300),
        )
        .await
        .expect_err("no endpoint event was sent");
        assert!(
            matches!(error, SseError::NoEndpoint { .. }),
            "expected NoEndpoint, got {error:?}"
        );
        assert!(
            error.to_string().contains("did not send its endpoint"),
            "the message says what is missing: {error}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "keep-alive comments must not extend the timeout"
        );
    }

    #[tokio::test]
    async fn stream_closed_before_endpoint() {
        let fixture = Fixture::start(Script {
            endpoint: None,
            ..Script::default()
        })
        .await;
        // Notify keeps the permit, so the stream closes right after its opening comment.
        fixture.state.close_stream.notify_one();
        let error = connect(&fixture.url("/sse"), &HeaderMap::new(), TIMEOUT)
            .await
            .expect_err("the stream ended without an endpoint");
        assert!(
            matches!(error, SseError::ClosedBeforeEndpoint { .. }),
            "expected ClosedBeforeEndpoint, got {error:?}"
        );
    }

    #[tokio::test]
    async fn reports_http_status_and_wrong_content_type() {
        let fixture = Fixture::start(Script::default()).await;
        let error = connect(&fixture.url("/missing"), &HeaderMap::new(), TIMEOUT)
            .await
            .expect_err("404");
        assert!(
            matches!(
                error,
                SseError::Status {
                    status: StatusCode::NOT_FOUND,
                    ..
                }
            ),
            "expected Status 404, got {error:?}"
        );
        assert!(
            error.to_string().contains("404 Not Found: no route"),
            "status and body are named: {error}"
        );

        let error = connect(&fixture.url("/json"), &HeaderMap::new(), TIMEOUT)
            .await
            .expect_err("not an event stream");
        assert!(
            matches!(error, SseError::NotEventStream { .. }),
            "expected NotEventStream, got {error:?}"
        );
    }

    #[tokio::test]
    async fn failed_post_reaches_the_caller() {
        let fixture = Fixture::start(Script {
            fail_method: Some("tools/call"),
            ..Script::default()
        })
        .await;
        let transport = connect(&fixture.url("/sse"), &HeaderMap::new(), TIMEOUT)
            .await
            .expect("connect to fixture");
        let client = ().serve(transport).await.expect("initialize over SSE");
        let error = call_echo(client.peer(), "hi")
            .await
            .expect_err("the POST was answered with 500");
        let text = error.to_string();
        assert!(
            matches!(error, ServiceError::TransportSend(_)),
            "expected TransportSend, got {error:?}"
        );
        assert!(
            text.contains("500 Internal Server Error") && text.contains("boom happened"),
            "the error names the status and the body: {text}"
        );
        assert!(
            !client.is_transport_closed(),
            "a rejected POST does not end the session"
        );
        client.cancel().await.expect("shut the client down");
    }

    #[tokio::test]
    async fn stream_end_closes_the_session() {
        stream_close_ends_the_session(false).await;
    }

    #[tokio::test]
    async fn stream_error_closes_the_session() {
        stream_close_ends_the_session(true).await;
    }

    async fn stream_close_ends_the_session(truncated_body: bool) {
        let fixture = Fixture::start(Script {
            silent_method: Some("tools/call"),
            truncated_body,
            ..Script::default()
        })
        .await;
        let transport = connect(&fixture.url("/sse"), &HeaderMap::new(), TIMEOUT)
            .await
            .expect("connect to fixture");
        let client = ().serve(transport).await.expect("initialize over SSE");
        let peer = client.peer().clone();
        let pending = tokio::spawn(async move { call_echo(&peer, "never answered").await });
        fixture.wait_for_post("tools/call").await;

        fixture.state.close_stream.notify_one();
        let result = tokio::time::timeout(TIMEOUT, pending)
            .await
            .expect("the pending call ends when the stream closes")
            .expect("call task");
        assert!(
            matches!(result, Err(ServiceError::TransportClosed)),
            "expected TransportClosed, got {result:?}"
        );
        let reason = tokio::time::timeout(TIMEOUT, client.waiting())
            .await
            .expect("the service stops when the stream closes")
            .expect("service task");
        assert!(
            matches!(reason, QuitReason::Closed),
            "rmcp sees the transport close, got {reason:?}"
        );
    }

    // ---- against the reference server --------------------------------------------------------

    fn node_modules() -> PathBuf {
        let root = std::env::var_os("IPYBOX_TEST_NODE_MODULES")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/servers"))
            });
        let script =
            root.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        assert!(
            script.is_file(),
            "{} not found. Install the reference server with \
             `npm install --prefix <dir> @modelcontextprotocol/server-everything` and set \
             IPYBOX_TEST_NODE_MODULES=<dir> (default /work/main/tests/servers).",
            script.display()
        );
        root
    }

    #[tokio::test]
    async fn everything_server_over_sse() {
        let root = node_modules();
        let port = free_port();
        let mut server = tokio::process::Command::new("node")
            .arg(root.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
            .arg("sse")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start node (is it on PATH?)");
        let ready = async {
            while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), ready)
            .await
            .expect("server-everything listens within 30 s");

        let url = format!("http://127.0.0.1:{port}/sse");
        let transport = connect(&url, &auth_headers(), TIMEOUT)
            .await
            .expect("connect to server-everything");
        assert_eq!(
            transport.endpoint.path(),
            "/message",
            "server-everything posts to /message"
        );
        let client = ().serve(transport).await.expect("initialize over SSE");
        let tools = client.list_all_tools().await.expect("list tools");
        let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
        assert!(
            names.len() >= 10,
            "server-everything has about 13 tools: {names:?}"
        );
        assert!(
            names.iter().any(|n| n == "echo"),
            "echo is listed: {names:?}"
        );
        assert_eq!(
            call_echo(client.peer(), "hi").await.expect("call echo"),
            "Echo: hi"
        );
        client.cancel().await.expect("shut the client down");
        server.kill().await.expect("stop server-everything");
    }
}
