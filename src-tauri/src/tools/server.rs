//! The tool server's HTTP API (axum): `POST /run {server, tool, args}` with
//! `Authorization: Bearer <session token>`.
//!
//! Answers: 200 `{"ok": true, "is_error": bool, "structured": …, "content": [MCP content
//! blocks]}` when the tool ran (a tool-reported failure has `is_error: true`); 200
//! `{"ok": false, "error": "rejected" | "approval_timeout", "message"}` when the call was not
//! approved; 401 without the right token; 400 for a malformed body or connection parameters
//! sent from the kernel; 404 for an unknown server or tool; 502 when the MCP server failed.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::sessions::Sessions;
use crate::approval::{Approvals, Refusal};
use crate::events::{CallDecision, CallOutcome, SessionEvent};
use crate::mcp::ServerParams;

pub use crate::apigen::SHELL_SERVER;
/// The tool name of shell commands.
pub const SHELL_TOOL: &str = "shell";

/// State of a tool server: token, registered servers, sessions, approvals.
#[derive(Debug)]
pub struct ToolServer {
    /// One token per place kernels run; a kernel presents the token of its own.
    tokens: RwLock<Vec<String>>,
    servers: RwLock<BTreeMap<String, ServerParams>>,
    sessions: Sessions,
    approvals: Arc<Approvals>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunRequest {
    server: String,
    tool: String,
    #[serde(default)]
    args: Option<serde_json::Map<String, Value>>,
}

fn error(status: StatusCode, kind: &str, message: impl Into<String>) -> Response {
    (
        status,
        axum::Json(json!({"ok": false, "error": kind, "message": message.into()})),
    )
        .into_response()
}

impl ToolServer {
    /// A tool server for `servers`; it accepts requests once a token is added.
    pub fn new(
        servers: BTreeMap<String, ServerParams>,
        sessions: Sessions,
        approvals: Arc<Approvals>,
    ) -> Self {
        ToolServer {
            tokens: RwLock::new(Vec::new()),
            servers: RwLock::new(servers),
            sessions,
            approvals,
        }
    }

    /// Accept requests carrying `token` too (the kernels of a new sandbox).
    pub fn add_token(&self, token: &str) {
        if let Ok(mut t) = self.tokens.write() {
            t.push(token.to_owned());
        }
    }

    /// Stop accepting `token` (its kernels are gone, or about to be).
    pub fn remove_token(&self, token: &str) {
        if let Ok(mut t) = self.tokens.write() {
            t.retain(|known| known != token);
        }
    }

    /// Register (or replace) a server for this session; `true` when it was registered
    /// with other parameters before (then [`restart`](Self::restart) it).
    pub fn set_server(&self, name: &str, params: ServerParams) -> bool {
        let replaced = self
            .servers
            .write()
            .ok()
            .and_then(|mut s| s.insert(name.to_owned(), params.clone()));
        replaced.is_some_and(|old| old != params)
    }

    /// Close `name`'s running session: its next call starts the server with the current
    /// parameters.
    pub async fn restart(&self, name: &str) {
        self.sessions.close(name).await;
    }

    /// Unregister a server for this session, closing its running session.
    pub async fn remove_server(&self, name: &str) {
        if let Ok(mut s) = self.servers.write() {
            s.remove(name);
        }
        self.sessions.close(name).await;
    }

    /// The variables `${VAR}`s in server parameters resolve from in this session.
    pub fn variables(&self) -> crate::error::Result<crate::mcp::params::Variables> {
        self.sessions.variables()
    }

    /// Close all MCP sessions (they restart on their next call).
    pub async fn reset(&self) {
        self.sessions.reset().await;
    }

    fn authorized(&self, headers: &HeaderMap) -> bool {
        self.tokens.read().is_ok_and(|tokens| {
            tokens
                .iter()
                .any(|t| crate::auth::bearer_matches(headers, t))
        })
    }

    async fn run(&self, headers: HeaderMap, body: Bytes) -> Response {
        if !self.authorized(&headers) {
            return error(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "missing or wrong tool server token",
            );
        }
        let value: Value = match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "bad_request",
                    format!("the body is not JSON: {e}"),
                );
            }
        };
        if let Some(obj) = value.as_object()
            && ["server_params", "params", "command", "url"]
                .iter()
                .any(|k| obj.contains_key(*k))
        {
            return error(
                StatusCode::BAD_REQUEST,
                "bad_request",
                "connection parameters are not accepted: ipybox only runs MCP servers the application registered, by name",
            );
        }
        let mut req: RunRequest = match serde_json::from_value(value) {
            Ok(r) => r,
            Err(e) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "bad_request",
                    format!("expected {{\"server\": str, \"tool\": str, \"args\": object}}: {e}"),
                );
            }
        };
        if req.server == SHELL_SERVER {
            return self.approve_shell(req).await;
        }
        let params = self
            .servers
            .read()
            .ok()
            .and_then(|s| s.get(&req.server).cloned());
        let Some(params) = params else {
            let known: Vec<String> = self
                .servers
                .read()
                .map(|s| s.keys().cloned().collect())
                .unwrap_or_default();
            return error(
                StatusCode::NOT_FOUND,
                "unknown_server",
                format!(
                    "no MCP server named {:?} is registered for this workspace (registered: {}); register it with `ipybox register`",
                    req.server,
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            );
        };
        let args = Value::Object(req.args.take().unwrap_or_default());
        let described = match self.sessions.variables() {
            Ok(vars) => params.describe(&vars),
            Err(_) => params.summary(),
        };
        let approved = match self
            .approvals
            .request(&req.server, &req.tool, &args, &described)
            .await
        {
            Ok(approved) => approved,
            Err(Refusal::Rejected(reason)) => {
                return (
                    StatusCode::OK,
                    axum::Json(json!({"ok": false, "error": "rejected", "message": reason})),
                )
                    .into_response();
            }
            Err(Refusal::TimedOut(t)) => {
                return (
                    StatusCode::OK,
                    axum::Json(json!({"ok": false, "error": "approval_timeout",
                        "message": format!("nobody approved the call within {:.0} s", t.as_secs_f64())})),
                )
                    .into_response();
            }
        };
        let started = std::time::Instant::now();
        let (response, outcome) = self.call(&req, &params, args).await;
        self.approvals.events().send(SessionEvent::ToolCall {
            request: approved.request,
            decision: CallDecision::Approved,
            decided_by: approved.by,
            reason: None,
            outcome: Some(outcome),
            duration_ms: started.elapsed().as_millis() as u64,
        });
        response
    }

    /// A shell command the kernel wants to run (`!cmd`, `%%bash`): only approval, the kernel
    /// runs it.
    async fn approve_shell(&self, req: RunRequest) -> Response {
        let command = req
            .args
            .as_ref()
            .and_then(|a| a.get("command"))
            .and_then(Value::as_str);
        let (SHELL_TOOL, Some(command)) = (req.tool.as_str(), command) else {
            return error(
                StatusCode::BAD_REQUEST,
                "bad_request",
                format!("{SHELL_SERVER}.{SHELL_TOOL} takes {{\"command\": str}}"),
            );
        };
        let args = json!({ "command": command });
        let what =
            "a shell command the code runs in its kernel (inside the sandbox when there is one)";
        match self
            .approvals
            .request(SHELL_SERVER, SHELL_TOOL, &args, what)
            .await
        {
            Ok(approved) => {
                self.approvals.events().send(SessionEvent::ToolCall {
                    request: approved.request,
                    decision: CallDecision::Approved,
                    decided_by: approved.by,
                    reason: None,
                    outcome: Some(CallOutcome::Ok),
                    duration_ms: 0,
                });
                (
                    StatusCode::OK,
                    axum::Json(json!({"ok": true, "is_error": false, "content": []})),
                )
                    .into_response()
            }
            Err(Refusal::Rejected(reason)) => (
                StatusCode::OK,
                axum::Json(json!({"ok": false, "error": "rejected", "message": reason})),
            )
                .into_response(),
            Err(Refusal::TimedOut(t)) => (
                StatusCode::OK,
                axum::Json(json!({"ok": false, "error": "approval_timeout",
                    "message": format!("nobody approved it within {:.0} s", t.as_secs_f64())})),
            )
                .into_response(),
        }
    }

    /// Call an approved tool: the HTTP answer for the kernel, and the outcome for listeners.
    async fn call(
        &self,
        req: &RunRequest,
        params: &ServerParams,
        args: Value,
    ) -> (Response, CallOutcome) {
        let failed = |status, kind, message: String| {
            let outcome = CallOutcome::Failed {
                message: message.clone(),
            };
            (error(status, kind, message), outcome)
        };
        let conn = match self.sessions.get(&req.server, params).await {
            Ok(c) => c,
            Err(e) => return failed(StatusCode::BAD_GATEWAY, "mcp_error", e.to_string()),
        };
        let Value::Object(arguments) = args else {
            unreachable!("built as an object above")
        };
        let limit = self.sessions.call_timeout();
        let called = match tokio::time::timeout(limit, conn.call_tool(&req.tool, arguments)).await {
            Ok(called) => called,
            Err(_) => {
                self.sessions.forget_conn(&req.server, &conn).await;
                return failed(
                    StatusCode::GATEWAY_TIMEOUT,
                    "mcp_timeout",
                    format!(
                        "the MCP server {:?} did not answer the call to {:?} within {:.0} s (it is stuck, or sent an answer ipybox could not read); the next call starts the server afresh",
                        req.server,
                        req.tool,
                        limit.as_secs_f64()
                    ),
                );
            }
        };
        match called {
            Ok(result) => {
                let content =
                    serde_json::to_value(&result.content).unwrap_or(Value::Array(Vec::new()));
                let mut body = json!({
                    "ok": true,
                    "is_error": result.is_error.unwrap_or(false),
                    "content": content,
                });
                if let Some(s) = result.structured_content {
                    body["structured"] = s;
                }
                let outcome = if result.is_error.unwrap_or(false) {
                    CallOutcome::ToolError
                } else {
                    CallOutcome::Ok
                };
                ((StatusCode::OK, axum::Json(body)).into_response(), outcome)
            }
            Err(e) => {
                self.sessions.forget_if_closed(&req.server, &conn).await;
                if !conn.is_closed()
                    && let Ok(tools) = conn.list_tools().await
                    && !tools.iter().any(|t| t.name == req.tool)
                {
                    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
                    return failed(
                        StatusCode::NOT_FOUND,
                        "unknown_tool",
                        format!(
                            "the MCP server {:?} has no tool {:?} (its tools: {})",
                            req.server,
                            req.tool,
                            names.join(", ")
                        ),
                    );
                }
                failed(StatusCode::BAD_GATEWAY, "mcp_error", e.to_string())
            }
        }
    }
}

/// The router of a tool server; tests call it directly.
pub fn router(state: Arc<ToolServer>) -> Router {
    Router::new()
        .route(
            "/run",
            post(
                |State(s): State<Arc<ToolServer>>, headers: HeaderMap, body: Bytes| async move {
                    s.run(headers, body).await
                },
            ),
        )
        .with_state(state)
}

/// A running tool server.
#[derive(Debug)]
pub struct ToolServerHandle {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl ToolServerHandle {
    /// Serve `state` on `listener` (bound by the caller: port 0 in tests, a socket inside
    /// the sandbox's network namespace when sandboxed).
    pub fn spawn(
        listener: tokio::net::TcpListener,
        state: Arc<ToolServer>,
    ) -> std::io::Result<Self> {
        let addr = listener.local_addr()?;
        let (tx, rx) = oneshot::channel::<()>();
        let app = router(state);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        Ok(ToolServerHandle {
            addr,
            shutdown: Some(tx),
            task: Some(task),
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stop serving this listener; the state (and its MCP sessions) stays.
    pub fn close(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            // Connections kept alive by kernels would hold graceful shutdown open.
            task.abort();
        }
    }
}

impl Drop for ToolServerHandle {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
