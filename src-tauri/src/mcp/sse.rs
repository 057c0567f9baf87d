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

use std::{borrow::Cow, fmt, time::Duration};

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

mod parser;

use parser::EventParser;

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
mod tests;
