//! What ipybox's MCP client says about itself when it connects, and how it answers what a
//! server sends on its own during a session: a question for the person (elicitation),
//! progress of a long call, log messages.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation>,
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress>,
//! <https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging>.

// MCP logging is deprecated by SEP-2577 (rmcp marks it so), but servers speaking the
// protocol versions ipybox negotiates still send log messages.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};

pub use crate::elicitation::{Answer, Elicitor};

/// How far a long tool call has got, as its server reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolProgress {
    /// Work done so far; increases with each report.
    pub progress: f64,
    /// Work in all, when the server knows it.
    pub total: Option<f64>,
    /// What the server is doing now, in its own (untrusted) words.
    pub message: Option<String>,
}

/// A log message a server sent (`notifications/message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLog {
    /// Its severity as the server gave it: `debug`, `info`, `notice`, `warning`, `error`,
    /// `critical`, `alert` or `emergency`.
    pub level: String,
    /// The message, with the server's logger name before it when it gave one (untrusted
    /// text: escape it where a person reads it).
    pub message: String,
}

/// What a session does with what its server sends on its own: who answers its questions,
/// who hears its log messages (besides `tracing`, at the level the server gave).
#[derive(Clone, Default)]
pub struct Hooks {
    elicitor: Option<Arc<dyn Elicitor>>,
    log: Option<Arc<dyn Fn(ServerLog) + Send + Sync>>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("elicitor", &self.elicitor.is_some())
            .field("log", &self.log.is_some())
            .finish()
    }
}

impl Hooks {
    /// No elicitation offered; log messages go to `tracing` only.
    pub fn new() -> Self {
        Hooks::default()
    }

    /// Offer the server elicitation, answered by `elicitor`.
    pub fn elicitor(mut self, elicitor: Arc<dyn Elicitor>) -> Self {
        self.elicitor = Some(elicitor);
        self
    }

    /// Hand the server's log messages to `log` as well: at most [`LOG_RATE`] a second, the
    /// rest only to `tracing` (a server that floods must not drown its session's other
    /// events).
    pub fn on_log(mut self, log: impl Fn(ServerLog) + Send + Sync + 'static) -> Self {
        self.log = Some(Arc::new(log));
        self
    }
}

/// How many log messages a second a server may hand to [`Hooks::on_log`].
pub const LOG_RATE: u32 = 20;

/// Each followed call's sink, with whether a report reached it.
type ProgressSinks = Arc<Mutex<HashMap<ProgressToken, Sink>>>;

struct Sink {
    to: tokio::sync::mpsc::UnboundedSender<ToolProgress>,
    reported: bool,
}

/// How long a call that reported progress is still followed after its answer. rmcp hands
/// each notification to a task of its own and the answer to the caller at once, so the last
/// report can be handled just after the answer it came before.
const LATE_REPORTS: std::time::Duration = std::time::Duration::from_millis(100);

/// ipybox's side of one MCP session.
#[derive(Clone)]
pub(crate) struct Handler {
    server: String,
    hooks: Hooks,
    progress: ProgressSinks,
    /// The second log messages are counted in, and how many were handed on in it.
    logged: Arc<Mutex<(std::time::Instant, u32)>>,
}

impl Handler {
    pub(crate) fn new(server: &str, hooks: Hooks) -> Self {
        Handler {
            server: server.to_owned(),
            hooks,
            progress: Arc::default(),
            logged: Arc::new(Mutex::new((std::time::Instant::now(), 0))),
        }
    }

    /// Whether one more log message may be handed on this second.
    fn may_log(&self) -> bool {
        let Ok(mut logged) = self.logged.lock() else {
            return false;
        };
        if logged.0.elapsed() >= std::time::Duration::from_secs(1) {
            *logged = (std::time::Instant::now(), 0);
        }
        logged.1 += 1;
        logged.1 <= LOG_RATE
    }

    /// Send the progress reports that carry `token` to `sink` until the returned guard
    /// drops.
    pub(crate) fn follow(
        &self,
        token: ProgressToken,
        sink: tokio::sync::mpsc::UnboundedSender<ToolProgress>,
    ) -> Following {
        if let Ok(mut sinks) = self.progress.lock() {
            sinks.insert(
                token.clone(),
                Sink {
                    to: sink,
                    reported: false,
                },
            );
        }
        Following {
            sinks: self.progress.clone(),
            token,
        }
    }
}

/// Progress reports of one call reach its sink while this lives.
pub(crate) struct Following {
    sinks: ProgressSinks,
    token: ProgressToken,
}

impl Drop for Following {
    fn drop(&mut self) {
        let Ok(mut sinks) = self.sinks.lock() else {
            return;
        };
        // A call that reported nothing is let go at once (most calls: no wait); one that
        // reported is followed a moment longer, for its last report.
        let reported = sinks.get(&self.token).is_some_and(|s| s.reported);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) if reported => {
                let (sinks, token) = (self.sinks.clone(), self.token.clone());
                runtime.spawn(async move {
                    tokio::time::sleep(LATE_REPORTS).await;
                    if let Ok(mut sinks) = sinks.lock() {
                        sinks.remove(&token);
                    }
                });
            }
            _ => {
                sinks.remove(&self.token);
            }
        }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.hooks.elicitor.as_ref().is_some_and(|e| e.offered()) {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        }
        let mut config = ClientConfig::new(
            capabilities,
            Implementation::new("ipybox", env!("CARGO_PKG_VERSION")),
        );
        // rmcp's newest version (2026-07-28) has no `initialize`; offering it in one asks
        // the server for a protocol the handshake itself does not belong to.
        config.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        config
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(elicitor) = &self.hooks.elicitor else {
            let mut meta = rmcp::model::MetaObject::new();
            meta.0.insert(
                crate::elicitation::REASON_META.into(),
                "nobody can answer: this ipybox client does not ask the person questions".into(),
            );
            let mut declined = ElicitResult::new(ElicitationAction::Decline);
            declined.meta = Some(meta);
            return Ok(declined);
        };
        let schema = match &request {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => serde_json::to_value(requested_schema).ok(),
            _ => None,
        };
        let mut answer = elicitor.elicit(&self.server, request).await;
        if answer.action == ElicitationAction::Accept
            && let Some(schema) = schema
        {
            answer.content = Some(with_defaults(&schema, answer.content.take()));
        }
        Ok(answer)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let sink = self.progress.lock().ok().and_then(|mut s| {
            let sink = s.get_mut(&params.progress_token)?;
            sink.reported = true;
            Some(sink.to.clone())
        });
        if let Some(sink) = sink {
            let _ = sink.send(ToolProgress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let text = match &params.data {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let line = match &params.logger {
            Some(logger) => format!("{logger}: {text}"),
            None => text,
        };
        log_event(&self.server, params.level, &crate::display::escape(&line));
        if let Some(log) = &self.hooks.log
            && self.may_log()
        {
            let level = serde_json::to_value(params.level)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            log(ServerLog {
                level,
                message: line,
            });
        }
    }
}

/// A server's log message as a `tracing` event (shown on the command line by `IPYBOX_LOG`),
/// at the level the server gave it.
fn log_event(server: &str, level: rmcp::model::LoggingLevel, text: &str) {
    use rmcp::model::LoggingLevel as L;
    match level {
        L::Debug => tracing::debug!(target: "ipybox::mcp_server_log", server, "{text}"),
        L::Info | L::Notice => tracing::info!(target: "ipybox::mcp_server_log", server, "{text}"),
        L::Warning => tracing::warn!(target: "ipybox::mcp_server_log", server, "{text}"),
        _ => tracing::error!(target: "ipybox::mcp_server_log", server, "{text}"),
    }
}

/// `content` with the `default` of each property of `schema` that it leaves out.
fn with_defaults(
    schema: &serde_json::Value,
    content: Option<serde_json::Value>,
) -> serde_json::Value {
    let mut content = match content {
        Some(serde_json::Value::Object(m)) => m,
        Some(other) => return other,
        None => serde_json::Map::new(),
    };
    if let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) {
        for (name, property) in properties {
            if let Some(default) = property.get("default")
                && !content.contains_key(name)
            {
                content.insert(name.clone(), default.clone());
            }
        }
    }
    serde_json::Value::Object(content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_fill_only_what_the_answer_leaves_out() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "note": {"type": "string"},
        }});
        assert_eq!(
            with_defaults(&schema, Some(json!({"name": "Ada"}))),
            json!({"name": "Ada", "age": 30}),
            "a given value wins over the default; a field without a default stays out"
        );
        assert_eq!(
            with_defaults(&schema, None),
            json!({"name": "John Doe", "age": 30}),
            "an accepted answer without content gets every default"
        );
    }
}
