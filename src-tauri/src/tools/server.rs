//! The tool server: runs the tool calls kernel code asks for, after approval.
//!
//! Kernel code asks over its own stdin channel (`ipybox_channel` in the kernel, see
//! `executor/calls.rs`; the protocol is `channel.rs`), so no network path from the kernel
//! to ipybox exists. Each [`Call`] gets an [`Answer`]: the tool's result when it ran, or a
//! refusal of a [`RefusalKind`].
//!
//! Only a tool its server lists is asked about: a call naming a server that is not
//! registered, or a tool the server does not list (or a name no tool can have), is refused
//! before anyone is asked, and recorded as refused. A person is never asked about a name
//! kernel code made up.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use serde_json::{Value, json};

use super::sessions::Sessions;
use crate::approval::{Approvals, Refusal};
use crate::channel::{Answer, Call, RefusalKind};
use crate::definition::pins::{DefinitionDigest, Pins};
use crate::definition::{CallDetails, ToolDefinition};
use crate::display::escape;
use crate::events::DecidedBy;
use crate::events::{CallDecision, CallOutcome, RequestSnapshot, SessionEvent};
use crate::mcp::ServerParams;
use crate::mcp::handler::ToolProgress;

pub use crate::apigen::SHELL_SERVER;
/// The tool name of shell commands.
pub const SHELL_TOOL: &str = "shell";

/// State of a tool server: token, registered servers, sessions, approvals.
#[derive(Debug)]
pub struct ToolServer {
    servers: RwLock<BTreeMap<String, ServerParams>>,
    sessions: Sessions,
    approvals: Arc<Approvals>,
    /// The tool definitions a person accepted; `None`: definitions are not checked (unit
    /// tests of the call path).
    pins: Option<Pins>,
}

/// The answer to a call that was not approved.
fn refused(refusal: Refusal) -> Answer {
    match refusal {
        Refusal::Rejected(reason) => Answer::refused(RefusalKind::Rejected, reason),
        Refusal::TimedOut(t) => Answer::refused(
            RefusalKind::ApprovalTimeout,
            format!("nobody approved it within {:.0} s", t.as_secs_f64()),
        ),
    }
}

impl ToolServer {
    /// A tool server for `servers`; it accepts requests once a token is added.
    pub fn new(
        servers: BTreeMap<String, ServerParams>,
        sessions: Sessions,
        approvals: Arc<Approvals>,
    ) -> Self {
        ToolServer {
            servers: RwLock::new(servers),
            sessions,
            approvals,
            pins: None,
        }
    }

    /// Check each call's tool definition against `pins`: a changed or new tool is held for a
    /// person.
    pub fn with_pins(mut self, pins: Pins) -> Self {
        self.pins = Some(pins);
        self
    }

    /// The tools `name` listed when it was registered. Kept for callers; a call is checked
    /// against what the running server lists and the definitions pinned for it.
    pub fn set_tools(&self, _name: &str, _tools: Vec<String>) {}

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

    /// Answer a call kernel code asked for: approve it, run it, say how it went.
    pub async fn answer(&self, req: &Call) -> Answer {
        let args = match &req.args {
            Value::Object(_) => req.args.clone(),
            Value::Null => json!({}),
            _ => {
                return Answer::refused(
                    RefusalKind::BadRequest,
                    "expected {\"server\": str, \"tool\": str, \"args\": object}: the arguments are not an object",
                );
            }
        };
        if req.server == SHELL_SERVER {
            return self.approve_shell(req, &args).await;
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
            let message = format!(
                "no MCP server named \"{}\" is registered for this workspace (registered: {}); register it with `ipybox register`",
                escape(&req.server),
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            );
            return self.refuse_unasked(req, &args, "", RefusalKind::UnknownServer, message);
        };
        let described = match self.sessions.variables() {
            Ok(vars) => params.describe(&vars),
            Err(_) => params.summary(),
        };
        let (definition, digest) = match self.listed(&req.server, &req.tool, &params).await {
            Ok(listed) => listed,
            Err((kind, message)) => {
                return self.refuse_unasked(req, &args, &described, kind, message);
            }
        };
        let change = self
            .pins
            .as_ref()
            .and_then(|pins| pins.check(&req.server, &definition, &digest));
        let details = CallDetails {
            tool: Some(definition),
            change,
            client: None,
            call_site: call_site(req),
        };
        let approved = match self
            .approvals
            .request_with(&req.server, &req.tool, &args, &described, details)
            .await
        {
            Ok(approved) => approved,
            Err(refusal) => return refused(refusal),
        };
        // A person approved a call to a tool whose definition changed: they accepted the
        // definition it has now — once, for the session or with a rule they made from this
        // very request (rules in force and grants never decide a changed tool, so a `Rule`
        // or `Grant` decision on one is the person's); a batch or a policy never accepts it.
        if matches!(
            approved.by,
            DecidedBy::Person | DecidedBy::Grant | DecidedBy::Rule
        ) && let (Some(pins), Some(change)) = (&self.pins, &approved.request.details().change)
            && let Err(e) = pins.accept(&req.server, &change.now)
        {
            tracing::warn!(error = %e, "could not keep the accepted tool definition");
        }
        let started = std::time::Instant::now();
        let (response, outcome) = self
            .call(req, &params, args, &approved.request.snapshot())
            .await;
        self.approvals.events().send(SessionEvent::ToolCall {
            request: Box::new(approved.request.snapshot()),
            decision: CallDecision::Approved,
            decided_by: approved.by,
            reason: None,
            outcome: Some(outcome),
            duration_ms: started.elapsed().as_millis() as u64,
        });
        response
    }

    /// The definition of `tool` as the running `server` lists it (the server is started when
    /// it is not running: what a person approves is the tool as it is now), with its
    /// digest; the list is the connection's, listed anew once when the tool is not on it.
    /// The refusal's kind and message when the server has no such tool.
    async fn listed(
        &self,
        server: &str,
        tool: &str,
        params: &ServerParams,
    ) -> Result<(ToolDefinition, DefinitionDigest), (RefusalKind, String)> {
        let no_such = |names: &[String]| {
            (
                RefusalKind::UnknownTool,
                format!(
                    "the MCP server \"{server}\" has no tool \"{}\" (its tools: {})",
                    escape(tool),
                    if names.is_empty() {
                        "none".to_owned()
                    } else {
                        // As the server named them: escaped, like every name a person may read.
                        names
                            .iter()
                            .map(|n| escape(n))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
            )
        };
        if !crate::apigen::is_tool_name(tool) {
            return Err((
                RefusalKind::UnknownTool,
                format!(
                    "the MCP server \"{server}\" has no tool \"{}\": that is not a tool name (MCP tool names are 1 to 128 letters, digits, _, -, . and /)",
                    escape(tool)
                ),
            ));
        }
        let conn = match self.sessions.running(server).await {
            Some(conn) => conn,
            None => self
                .sessions
                .get(server, params)
                .await
                .map_err(|e| (RefusalKind::McpError, e.to_string()))?,
        };
        let mut names = Vec::new();
        for fresh in [false, true] {
            let listing = conn
                .listing(fresh)
                .await
                .map_err(|e| (RefusalKind::McpError, e.to_string()))?;
            if let Some((definition, digest)) = listing.get(tool) {
                return Ok((definition.clone(), *digest));
            }
            names = listing.names.clone();
        }
        Err(no_such(&names))
    }

    /// Refuse a call nobody was asked about (no such server or tool): the kernel hears why,
    /// and the session's listeners (the audit log) hear of the call as rejected by ipybox's
    /// policy.
    fn refuse_unasked(
        &self,
        req: &Call,
        args: &Value,
        described: &str,
        kind: RefusalKind,
        message: String,
    ) -> Answer {
        self.approvals
            .refuse_unasked(&req.server, &req.tool, args, described, message.clone());
        Answer::refused(kind, message)
    }

    /// A shell command the kernel wants to run (`!cmd`, `%%bash`): only approval, the kernel
    /// runs it.
    async fn approve_shell(&self, req: &Call, args: &Value) -> Answer {
        let command = args.get("command").and_then(Value::as_str);
        let (SHELL_TOOL, Some(command)) = (req.tool.as_str(), command) else {
            return Answer::refused(
                RefusalKind::BadRequest,
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
                    request: Box::new(approved.request.snapshot()),
                    decision: CallDecision::Approved,
                    decided_by: approved.by,
                    reason: None,
                    outcome: Some(CallOutcome::Ok),
                    duration_ms: 0,
                });
                Answer::Result {
                    is_error: false,
                    content: json!([]),
                    structured: None,
                }
            }
            Err(refusal) => refused(refusal),
        }
    }

    /// Tell the session's listeners (the servers panel) that `server` asks for a sign-in,
    /// if `error` says so.
    fn tell_sign_in_needed(&self, server: &str, error: &crate::error::Error) {
        if let Some(needed) = crate::mcp::oauth::sign_in_needed(error) {
            self.approvals.events().send(SessionEvent::McpSignInNeeded {
                server: server.to_owned(),
                again: needed.again,
            });
        }
    }

    /// The questions servers ask during `execution_id`'s calls go when the returned guard
    /// drops (the execution ended).
    pub fn questions_of(&self, execution_id: String) -> Option<QuestionsOf> {
        Some(QuestionsOf {
            elicitations: self.sessions.elicitations()?.clone(),
            execution_id,
        })
    }

    /// Call an approved tool: the answer for the kernel, and the outcome for listeners.
    async fn call(
        &self,
        req: &Call,
        params: &ServerParams,
        args: Value,
        request: &RequestSnapshot,
    ) -> (Answer, CallOutcome) {
        let failed = |kind, message: String| {
            let outcome = CallOutcome::Failed {
                message: message.clone(),
            };
            (Answer::refused(kind, message), outcome)
        };
        let conn = match self.sessions.get(&req.server, params).await {
            Ok(c) => c,
            Err(e) => {
                self.tell_sign_in_needed(&req.server, &e);
                return failed(RefusalKind::McpError, e.to_string());
            }
        };
        let Value::Object(arguments) = args else {
            unreachable!("built as an object above")
        };
        let limit = self.sessions.call_timeout();
        let (progress, forwarded) = forward_progress(
            self.approvals.events().clone(),
            Following {
                id: request.id,
                execution_id: request.execution_id.clone(),
                server: req.server.clone(),
                tool: req.tool.clone(),
            },
        );
        // A question the server asks meanwhile belongs to this call, and goes when it ends.
        let _calling = self.sessions.elicitations().map(|e| {
            e.calling(crate::elicitation::CallRef::new(
                request.id,
                request.execution_id.clone(),
                &req.server,
                &req.tool,
            ))
        });
        let call = conn.call_tool_with_progress(&req.tool, arguments, progress);
        let called = tokio::time::timeout(limit, call).await;
        // The call is over, its sink dropped: the last report becomes an event before the
        // call's own.
        let _ = forwarded.await;
        let called = match called {
            Ok(called) => called,
            Err(_) => {
                self.sessions.forget_conn(&req.server, &conn).await;
                return failed(
                    RefusalKind::McpTimeout,
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
                let body = Answer::Result {
                    is_error: result.is_error.unwrap_or(false),
                    content,
                    structured: result.structured_content,
                };
                let outcome = if result.is_error.unwrap_or(false) {
                    CallOutcome::ToolError
                } else {
                    CallOutcome::Ok
                };
                (body, outcome)
            }
            Err(e) if crate::mcp::oauth::sign_in_needed(&e).is_some() => {
                // The connection holds the sign-in that no longer works: the next call,
                // after the person signed in again, connects afresh with the new one.
                self.sessions.forget_conn(&req.server, &conn).await;
                self.tell_sign_in_needed(&req.server, &e);
                failed(RefusalKind::McpError, e.to_string())
            }
            Err(e) => {
                self.sessions.forget_if_closed(&req.server, &conn).await;
                if !conn.is_closed()
                    && let Ok(tools) = conn.list_tools().await
                    && !tools.iter().any(|t| t.name == req.tool)
                {
                    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
                    return failed(
                        RefusalKind::UnknownTool,
                        format!(
                            "the MCP server {:?} has no tool {:?} (its tools: {})",
                            req.server,
                            req.tool,
                            names.join(", ")
                        ),
                    );
                }
                failed(RefusalKind::McpError, e.to_string())
            }
        }
    }
}

/// An execution's questions, withdrawn when it ends.
pub struct QuestionsOf {
    elicitations: Arc<crate::elicitation::Elicitations>,
    execution_id: String,
}

impl Drop for QuestionsOf {
    fn drop(&mut self) {
        self.elicitations.end_execution(&self.execution_id);
    }
}

/// The call whose progress is followed: its request id, execution, server and tool.
struct Following {
    id: u64,
    execution_id: Option<String>,
    server: String,
    tool: String,
}

/// The sink for the progress reports of the call `of`, and the task that
/// makes them events; it ends with the last report once the sink is dropped. At most one
/// event per [`PROGRESS_INTERVAL`], the latest report: a server that reports without pause
/// must not drown the session's other events (the audit log's listener would miss calls).
fn forward_progress(
    events: crate::events::Events,
    of: Following,
) -> (
    tokio::sync::mpsc::UnboundedSender<ToolProgress>,
    tokio::task::JoinHandle<()>,
) {
    let (sink, mut reports) = tokio::sync::mpsc::unbounded_channel::<ToolProgress>();
    let Following {
        id,
        execution_id,
        server,
        tool,
    } = of;
    let task = tokio::spawn(async move {
        let mut next_at = tokio::time::Instant::now();
        while let Some(mut report) = reports.recv().await {
            let mut ended = false;
            loop {
                while let Ok(newer) = reports.try_recv() {
                    report = newer;
                }
                if tokio::time::Instant::now() >= next_at {
                    break;
                }
                match tokio::time::timeout_at(next_at, reports.recv()).await {
                    Ok(Some(newer)) => report = newer,
                    Ok(None) => {
                        ended = true;
                        break;
                    }
                    Err(_) => break,
                }
            }
            let ToolProgress {
                progress,
                total,
                message,
            } = report;
            events.send(SessionEvent::ToolProgress {
                id,
                execution_id: execution_id.clone(),
                server: server.clone(),
                tool: tool.clone(),
                progress,
                total,
                message,
            });
            if ended {
                return;
            }
            next_at = tokio::time::Instant::now() + PROGRESS_INTERVAL;
        }
    });
    (sink, task)
}

/// The shortest time between two progress events of one call.
const PROGRESS_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// The longest calling line a request carries, in characters (it is kernel code's text).
const CALL_SITE_SHOWN: usize = 200;

/// The line of code that made the call, as the generated module found it (`site`: the cell's
/// number or the file, the line number, the line's text): "line 2: fx.touch(p)" in a cell,
/// "helpers.py, line 7: fx.touch(p)" in a module. It
/// is kernel code's claim, shortened, and escaped wherever a person reads it.
fn call_site(req: &Call) -> Option<String> {
    let site = req.site.as_ref()?;
    let short = |s: &str, n: usize| -> String {
        let mut out: String = s.chars().take(n).collect();
        if s.chars().count() > n {
            out.push('…');
        }
        out
    };
    // A cell is named by the request's origin ("cell 1 of analysis.ipynb"); the kernel's
    // own number for it counts executions, not the notebook's cells, and would contradict
    // it. A module is named by its file.
    let file = match (site.cell, &site.file) {
        (Some(_), _) | (None, None) => None,
        (None, Some(file)) => Some(short(file, 80)),
    };
    let line = site.line;
    let text = site
        .text
        .as_deref()
        .map(|t| short(t.trim(), CALL_SITE_SHOWN))
        .filter(|t| !t.is_empty());
    let place = match (file, line) {
        (Some(f), Some(l)) => format!("{f}, line {l}"),
        (Some(f), None) => f,
        (None, Some(l)) => format!("line {l}"),
        (None, None) => String::new(),
    };
    Some(match (place.is_empty(), text) {
        (false, Some(t)) => format!("{place}: {t}"),
        (true, Some(t)) => t,
        (false, None) => place,
        (true, None) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_flood_of_progress_reports_becomes_a_few_events_ending_with_the_last() {
        let events = crate::events::Events::default();
        let mut heard = events.subscribe();
        let of = Following {
            id: 7,
            execution_id: None,
            server: "fx".into(),
            tool: "sleep".into(),
        };
        let (sink, task) = forward_progress(events, of);
        for n in 1..=1000 {
            let report = ToolProgress {
                progress: f64::from(n),
                total: None,
                message: None,
            };
            sink.send(report)
                .unwrap_or_else(|_| panic!("the forwarder listens"));
        }
        drop(sink);
        task.await
            .unwrap_or_else(|e| panic!("the forwarder ends: {e}"));
        let mut seen = Vec::new();
        while let Ok(event) = heard.try_recv() {
            if let SessionEvent::ToolProgress { id, progress, .. } = event {
                assert_eq!(id, 7, "under the call's request id");
                seen.push(progress);
            }
        }
        assert!(
            seen.len() <= 2,
            "reports sent faster than one per interval are coalesced: {seen:?}"
        );
        assert_eq!(seen.last(), Some(&1000.0), "the last report always arrives");
    }
}
