//! The HTTP client of ipybox's Streamable HTTP sessions: rmcp's reqwest client, except that
//! a session's first requests wait (briefly) until the server has answered the session's
//! standalone stream.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#listening-for-messages-from-the-server>.
//! A server sends the requests it makes of the client outside any call (an
//! `elicitation/create` made with the TypeScript SDK's `server.request`, for one) on the
//! stream the client opens with a `GET`, and drops them while there is none. rmcp opens that
//! stream in a task of its own once the session starts, so a tool call sent right after the
//! handshake could reach the server first: its question would be lost and the call would
//! wait until it timed out.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;

/// How long a request waits for the server to answer the standalone stream: a server that
/// never answers it delays one request of each session by this much.
const STREAM_WAIT: Duration = Duration::from_secs(2);

/// Redirects followed for one request, at most.
const MAX_REDIRECTS: usize = 10;

/// rmcp's reqwest client, holding a session's requests until its standalone stream is
/// answered.
#[derive(Clone, Debug)]
pub(crate) struct HttpClient {
    inner: reqwest::Client,
    /// The sessions whose standalone stream the server answered (or refused).
    answered: Arc<Mutex<HashSet<Arc<str>>>>,
    changed: Arc<tokio::sync::Notify>,
    /// The last `401` or `403` the server answered with, while no request has succeeded
    /// since: it wants a sign-in (or a wider one).
    refused: Arc<Mutex<Option<Refusal>>>,
}

/// A server's `401` or `403` with its challenge (MCP authorization spec).
#[derive(Clone, Debug)]
pub(crate) struct Refusal {
    /// Its `WWW-Authenticate` value.
    pub(crate) challenge: String,
    /// A `403 insufficient_scope`: the scope the request needs.
    pub(crate) scope: Option<String>,
}

impl HttpClient {
    /// A client configured as rmcp's own: no idle connections kept (a half-read response
    /// would stall the next request on one), and only same-origin 307/308 redirects followed
    /// (others would drop the request's body, or replay the session and headers elsewhere).
    pub(crate) fn new() -> crate::error::Result<Self> {
        let inner = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                let keeps_body = matches!(
                    attempt.status(),
                    reqwest::StatusCode::TEMPORARY_REDIRECT
                        | reqwest::StatusCode::PERMANENT_REDIRECT
                );
                let same_origin = attempt
                    .previous()
                    .first()
                    .is_some_and(|first| first.origin() == attempt.url().origin());
                if !keeps_body || !same_origin {
                    attempt.stop()
                } else if attempt.previous().len() > MAX_REDIRECTS {
                    attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
                } else {
                    attempt.follow()
                }
            }))
            .build()
            .map_err(|e| crate::error::Error::mcp(format!("cannot make an HTTP client: {e}")))?;
        Ok(HttpClient {
            inner,
            answered: Arc::default(),
            changed: Arc::default(),
            refused: Arc::default(),
        })
    }

    /// The server's last refusal (the MCP authorization spec's `401`/`403`), if no request
    /// has succeeded since.
    pub(crate) fn refusal(&self) -> Option<Refusal> {
        self.refused.lock().ok().and_then(|r| r.clone())
    }

    async fn wait_for_stream(&self, session: &Arc<str>) {
        let _ = tokio::time::timeout(STREAM_WAIT, async {
            loop {
                let notified = self.changed.notified();
                if self
                    .answered
                    .lock()
                    .map(|a| a.contains(session))
                    .unwrap_or(true)
                {
                    return;
                }
                notified.await;
            }
        })
        .await;
    }
}

impl StreamableHttpClient for HttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        if let (Some(session), JsonRpcMessage::Request(_)) = (&session_id, &message) {
            self.wait_for_stream(session).await;
        }
        let answer = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        let refusal = match &answer {
            Err(StreamableHttpError::AuthRequired(e)) => Some(Refusal {
                challenge: e.www_authenticate_header.clone(),
                scope: None,
            }),
            Err(StreamableHttpError::InsufficientScope(e)) => Some(Refusal {
                challenge: e.www_authenticate_header.clone(),
                // A 403 that names no scope still needs more than the sign-in gave.
                scope: Some(e.required_scope.clone().unwrap_or_default()),
            }),
            Err(_) => return answer,
            Ok(_) => None,
        };
        if let Ok(mut r) = self.refused.lock() {
            *r = refusal;
        }
        answer
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream(
                uri,
                session_id.clone(),
                last_event_id,
                auth_header,
                custom_headers,
            )
            .await;
        self.note_answered(session_id);
        stream
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id.clone(),
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.note_answered(session_id);
        stream
    }
}

impl HttpClient {
    fn note_answered(&self, session: Option<Arc<str>>) {
        if let Some(session) = session
            && let Ok(mut answered) = self.answered.lock()
        {
            answered.insert(session);
        }
        self.changed.notify_waiters();
    }
}
