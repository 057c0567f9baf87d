//! Approval of tool calls. Decisions travel in-process only: the tool server hands each
//! request to the execution that is running (as a stream event) or to an application-wide
//! [`ApprovalHandler`], and waits. There is no network endpoint through which kernel code
//! could approve its own call, and a call that arrives while no execution is running (say,
//! from a thread a cell left behind) is rejected.
//!
//! The request and its decision are in `request`, the handlers that decide for a whole
//! application in `handler`; here is the registry that routes each request to whoever
//! decides and waits for the answer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use crate::definition::{CallDetails, Client};
use crate::events::{CallDecision, DecidedBy, Events, SessionEvent};

mod handler;
mod program;
mod request;

pub use crate::events::Decision;
pub use handler::{ApprovalHandler, AutoApprove, RejectAll, auto_approve};
#[cfg(feature = "desktop")]
pub use program::risks;
pub use program::{ProgramRequest, ProgramVerdict, RULE_SERVER, RULE_TOOL};
pub use request::ApprovalRequest;
use request::{Inner, KEYS, Verdict};

/// What an execution hears from the tool server.
#[derive(Debug)]
pub enum ToolEvent {
    /// A call needs a decision.
    Requested(ApprovalRequest),
    /// The request with this id was decided or timed out.
    Settled(u64),
}

/// An approved call: the request, and who approved it.
#[derive(Debug, Clone)]
pub struct Approved {
    /// The request.
    pub request: ApprovalRequest,
    /// Who or what approved it.
    pub by: DecidedBy,
}

/// Why a call was not approved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Someone rejected it (or nobody could be asked).
    Rejected(String),
    /// Nobody answered in time.
    TimedOut(Duration),
}

/// The execution listening for requests.
#[derive(Debug)]
struct Listener {
    tx: mpsc::UnboundedSender<ToolEvent>,
    execution_id: Option<String>,
    origin: Option<String>,
    /// The agent's MCP client, when an agent's code runs.
    client: Option<Client>,
}

/// Routes approval requests from the tool server to whoever decides.
#[derive(Debug)]
pub struct Approvals {
    listener: Mutex<Option<Listener>>,
    /// The approval timeout in milliseconds, shared with the executor so that it can be
    /// changed while the session runs.
    timeout: Arc<AtomicU64>,
    next_id: AtomicU64,
    /// Undecided requests, for [`decide`](Self::decide).
    pending: Mutex<HashMap<u64, Weak<Inner>>>,
    events: Events,
    /// The agent's MCP client, in an agent's session (set when it connects).
    client: Arc<Mutex<Option<Client>>>,
    /// The session's handler, asked to decide each request before it is announced.
    handler: Option<Arc<dyn ApprovalHandler>>,
}

impl Approvals {
    /// Requests time out (and are rejected) after `timeout`.
    #[cfg(test)]
    pub fn new(timeout: Duration) -> Self {
        Self::with_events(
            Arc::new(AtomicU64::new(timeout.as_millis() as u64)),
            Events::default(),
        )
    }

    /// Requests time out (and are rejected) after `timeout` milliseconds, read when each
    /// request is made; `events` hears of each request, decision and withdrawal.
    pub fn with_events(timeout: Arc<AtomicU64>, events: Events) -> Self {
        Approvals {
            listener: Mutex::new(None),
            timeout,
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            events,
            client: Arc::default(),
            handler: None,
        }
    }

    /// Let `handler` decide requests it can decide at once (by a rule, by a policy) before
    /// they are announced ([`ApprovalHandler::decide_now`]).
    pub fn with_handler(mut self, handler: Option<Arc<dyn ApprovalHandler>>) -> Self {
        self.handler = handler;
        self
    }

    /// Requests name the agent's client `client` holds (an agent's session sets it when the
    /// agent connects).
    pub fn with_client(mut self, client: Arc<Mutex<Option<Client>>>) -> Self {
        self.client = client;
        self
    }

    /// Listen for requests while an execution runs; the returned guard stops listening.
    #[cfg(test)]
    pub fn listen(self: &Arc<Self>) -> (ListenGuard, mpsc::UnboundedReceiver<ToolEvent>) {
        self.listen_as(None, None)
    }

    /// [`listen`](Self::listen) for the execution `execution_id`, whose code came from
    /// `origin`; requests name both.
    pub fn listen_as(
        self: &Arc<Self>,
        execution_id: Option<String>,
        origin: Option<String>,
    ) -> (ListenGuard, mpsc::UnboundedReceiver<ToolEvent>) {
        self.listen_for(execution_id, origin, None)
    }

    /// [`listen_as`](Self::listen_as) for code an agent sent through `client`: its requests
    /// name the client.
    pub fn listen_for(
        self: &Arc<Self>,
        execution_id: Option<String>,
        origin: Option<String>,
        client: Option<Client>,
    ) -> (ListenGuard, mpsc::UnboundedReceiver<ToolEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        if let Ok(mut l) = self.listener.lock() {
            *l = Some(Listener {
                tx,
                execution_id,
                origin,
                client,
            });
        }
        (
            ListenGuard {
                approvals: self.clone(),
                execution_id: lock_listener_id(self),
            },
            rx,
        )
    }

    /// `by` decides the pending request `id` (from a dialog, a panel, a rule, an agent's
    /// channel); `false` when there is no such request (already decided, withdrawn, unknown).
    pub fn decide_as(&self, id: u64, decision: Decision, by: DecidedBy) -> bool {
        let inner = self
            .pending
            .lock()
            .ok()
            .and_then(|p| p.get(&id).and_then(Weak::upgrade));
        match inner {
            Some(inner) => {
                let request = ApprovalRequest(inner);
                let open = !request.is_decided();
                request.decide_as(decision, by, None);
                open
            }
            None => false,
        }
    }

    /// The requests waiting for a decision now.
    pub fn pending(&self) -> Vec<ApprovalRequest> {
        let mut out: Vec<ApprovalRequest> = self
            .pending
            .lock()
            .map(|p| {
                p.values()
                    .filter_map(Weak::upgrade)
                    .map(ApprovalRequest)
                    .collect()
            })
            .unwrap_or_default();
        out.retain(|r| !r.is_decided());
        out.sort_by_key(ApprovalRequest::id);
        out
    }

    /// The session's event sender.
    pub(crate) fn events(&self) -> &Events {
        &self.events
    }

    /// Ask for approval of a call and wait for the decision. A refused call is reported to
    /// listeners as a [`SessionEvent::ToolCall`] here; an approved one by the caller, once
    /// it ran.
    pub async fn request(
        &self,
        server_name: &str,
        tool_name: &str,
        tool_args: &serde_json::Value,
        server: &str,
    ) -> Result<Approved, Refusal> {
        self.request_with(
            server_name,
            tool_name,
            tool_args,
            server,
            CallDetails::default(),
        )
        .await
    }

    /// [`request`](Self::request) with what is known about the tool and the caller: the
    /// request carries `details` to whoever decides. The listener's client (an agent's)
    /// is added.
    pub async fn request_with(
        &self,
        server_name: &str,
        tool_name: &str,
        tool_args: &serde_json::Value,
        server: &str,
        mut details: CallDetails,
    ) -> Result<Approved, Refusal> {
        let listener = self.listener.lock().ok().and_then(|l| {
            l.as_ref().filter(|l| !l.tx.is_closed()).map(|l| {
                (
                    l.tx.clone(),
                    l.execution_id.clone(),
                    l.origin.clone(),
                    l.client.clone(),
                )
            })
        });
        let (tx, rx) = oneshot::channel();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (execution_id, origin) = listener
            .as_ref()
            .map(|(_, e, o, _)| (e.clone(), o.clone()))
            .unwrap_or_default();
        let request = ApprovalRequest(Arc::new(Inner {
            key: KEYS.fetch_add(1, Ordering::Relaxed),
            id,
            server_name: server_name.to_owned(),
            tool_name: tool_name.to_owned(),
            tool_args: tool_args.clone(),
            server: server.to_owned(),
            execution_id,
            origin,
            asked_at_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or_default(),
            timeout_ms: self.timeout.load(Ordering::Relaxed),
            details: {
                if details.client.is_none() {
                    details.client = listener
                        .as_ref()
                        .and_then(|(_, _, _, c)| c.clone())
                        .or_else(|| self.client.lock().ok().and_then(|c| c.clone()));
                }
                details
            },
            decision: Mutex::new(Some(tx)),
            rule: std::sync::OnceLock::new(),
        }));
        let Some((listener, ..)) = listener else {
            return Err(self.refuse(
                request,
                DecidedBy::Policy,
                Refusal::Rejected(
                    "no execution is running to approve this call (tool calls from code that outlives its cell are rejected)".into(),
                ),
            ));
        };
        let timeout = Duration::from_millis(request.0.timeout_ms);
        if self
            .handler
            .as_ref()
            .is_some_and(|h| h.decide_now(&request))
        {
            // Decided by a rule or a policy: nothing was announced, nobody waits.
            let withdraw = Withdraw {
                approvals: self,
                id,
                reason: None,
            };
            let outcome = tokio::time::timeout(timeout, rx).await;
            return self
                .conclude(request, withdraw, outcome, timeout, None)
                .map_err(|(_, refusal)| refusal);
        }
        if let Ok(mut p) = self.pending.lock() {
            p.insert(id, Arc::downgrade(&request.0));
        }
        // Until it is settled, a request that goes away (its call's connection closed when
        // the execution ended) is withdrawn for its listeners.
        let withdraw = Withdraw {
            approvals: self,
            id,
            reason: Some(ENDED),
        };
        self.events.send(SessionEvent::ApprovalRequested {
            request: Box::new(request.snapshot()),
        });
        if listener
            .send(ToolEvent::Requested(request.clone()))
            .is_err()
        {
            return Err(self.refuse(
                request,
                DecidedBy::Nobody,
                Refusal::Rejected("the execution ended before the call could be approved".into()),
            ));
        }
        let outcome = tokio::time::timeout(timeout, rx).await;
        let _ = listener.send(ToolEvent::Settled(id));
        self.conclude(request, withdraw, outcome, timeout, Some(ENDED))
            .map_err(|(_, refusal)| refusal)
    }

    /// The end of a wait for a decision: listeners hear of the decision, or of the request's
    /// withdrawal (`gone`: why, when nobody is left to decide; `None` for a request that was
    /// never announced, which listeners hear of only as a finished call); a refusal is
    /// reported.
    fn conclude(
        &self,
        request: ApprovalRequest,
        mut withdraw: Withdraw<'_>,
        outcome: std::result::Result<
            std::result::Result<Verdict, oneshot::error::RecvError>,
            tokio::time::error::Elapsed,
        >,
        timeout: Duration,
        gone: Option<&'static str>,
    ) -> Result<Approved, (DecidedBy, Refusal)> {
        if let Ok(Ok(Verdict {
            rule: Some(rule), ..
        })) = &outcome
        {
            let _ = request.0.rule.set(rule.clone());
        }
        withdraw.reason = match &outcome {
            _ if gone.is_none() => None,
            Ok(Ok(verdict)) if verdict.by == DecidedBy::Nobody => gone,
            Ok(Ok(verdict)) => {
                self.events.send(SessionEvent::ApprovalDecided {
                    id: request.id(),
                    decision: verdict.decision,
                    decided_by: verdict.by,
                });
                None
            }
            Ok(Err(_)) => Some("nobody could decide the request"),
            Err(_) => Some("nobody decided in time"),
        };
        drop(withdraw);
        let (by, refusal) = match outcome {
            Ok(Ok(Verdict {
                decision: Decision::Accept,
                by,
                ..
            })) => return Ok(Approved { request, by }),
            Ok(Ok(Verdict {
                decision: Decision::Reject,
                reason,
                by,
                ..
            })) => (
                by,
                Refusal::Rejected(reason.unwrap_or_else(|| match by {
                    DecidedBy::Person => "rejected by you".into(),
                    _ => "the call was rejected".into(),
                })),
            ),
            Ok(Err(_)) => (
                DecidedBy::Nobody,
                Refusal::Rejected("the approval request was dropped without a decision".into()),
            ),
            Err(_) => (DecidedBy::Timeout, Refusal::TimedOut(timeout)),
        };
        Err((by, self.refuse(request, by, refusal)))
    }

    /// Ask for approval of a call made by another process's code (an agent's kernel under
    /// `ipybox mcp --approval desktop`): it is pending here like this session's own calls
    /// (listed, decided by id, withdrawn when nobody decides in time), and `handler`
    /// decides it. A refusal is reported to listeners here; an approved call by whoever
    /// learns its outcome ([`report`](Self::report)). Returns the request, which
    /// [`ApprovalRequest::decide_as`] withdraws (its asker went away).
    #[cfg(test)]
    pub fn request_external(
        self: &Arc<Self>,
        call: ExternalCall,
        handler: Option<Arc<dyn ApprovalHandler>>,
    ) -> (ApprovalRequest, ExternalWait) {
        self.request_external_with(call, CallDetails::default(), handler)
    }

    /// [`request_external`](Self::request_external) with what the asker knows about the
    /// tool and the caller.
    pub fn request_external_with(
        self: &Arc<Self>,
        call: ExternalCall,
        details: CallDetails,
        handler: Option<Arc<dyn ApprovalHandler>>,
    ) -> (ApprovalRequest, ExternalWait) {
        let (tx, rx) = oneshot::channel();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let request = ApprovalRequest(Arc::new(Inner {
            key: KEYS.fetch_add(1, Ordering::Relaxed),
            id,
            server_name: call.server,
            tool_name: call.tool,
            tool_args: call.arguments,
            server: call.server_description,
            execution_id: None,
            origin: Some(call.origin),
            asked_at_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or_default(),
            timeout_ms: self.timeout.load(Ordering::Relaxed),
            details,
            decision: Mutex::new(Some(tx)),
            rule: std::sync::OnceLock::new(),
        }));
        // Decided at once by a rule or a policy: not announced, not listed as pending.
        let announced = !handler.as_ref().is_some_and(|h| h.decide_now(&request));
        if announced {
            if let Ok(mut p) = self.pending.lock() {
                p.insert(id, Arc::downgrade(&request.0));
            }
            self.events.send(SessionEvent::ApprovalRequested {
                request: Box::new(request.snapshot()),
            });
            if let Some(handler) = handler {
                tokio::spawn(handler.handle(request.clone()));
            }
        }
        let approvals = self.clone();
        let asked = request.clone();
        let gone = announced.then_some(ASKER_GONE);
        let wait = Box::pin(async move {
            let withdraw = Withdraw {
                approvals: &approvals,
                id,
                reason: gone,
            };
            let timeout = Duration::from_millis(asked.0.timeout_ms);
            let outcome = tokio::time::timeout(timeout, rx).await;
            approvals.conclude(asked, withdraw, outcome, timeout, gone)
        });
        (request, wait)
    }

    /// Tell listeners how an approved call made elsewhere ended (the audit log, a panel).
    pub fn report(
        &self,
        approved: Approved,
        outcome: Option<crate::events::CallOutcome>,
        duration_ms: u64,
    ) {
        self.events.send(SessionEvent::ToolCall {
            request: Box::new(approved.request.snapshot()),
            decision: CallDecision::Approved,
            decided_by: approved.by,
            reason: None,
            outcome,
            duration_ms,
        });
    }

    /// Tell listeners of a call refused before anyone was asked (it names a server or tool
    /// that does not exist): rejected by ipybox's policy, for `reason`.
    pub fn refuse_unasked(
        &self,
        server_name: &str,
        tool_name: &str,
        tool_args: &serde_json::Value,
        server: &str,
        reason: String,
    ) {
        let (execution_id, origin) = self
            .listener
            .lock()
            .ok()
            .and_then(|l| {
                l.as_ref()
                    .map(|l| (l.execution_id.clone(), l.origin.clone()))
            })
            .unwrap_or_default();
        let request = ApprovalRequest(Arc::new(Inner {
            key: KEYS.fetch_add(1, Ordering::Relaxed),
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            server_name: server_name.to_owned(),
            tool_name: tool_name.to_owned(),
            tool_args: tool_args.clone(),
            server: server.to_owned(),
            execution_id,
            origin,
            asked_at_ms: now_ms(),
            timeout_ms: 0,
            details: CallDetails::default(),
            decision: Mutex::new(None),
            rule: std::sync::OnceLock::new(),
        }));
        self.refuse(request, DecidedBy::Policy, Refusal::Rejected(reason));
    }

    /// Tell listeners that `request` was refused, and why.
    fn refuse(&self, request: ApprovalRequest, by: DecidedBy, refusal: Refusal) -> Refusal {
        let (decision, reason) = match &refusal {
            Refusal::Rejected(reason) => (CallDecision::Rejected, reason.clone()),
            Refusal::TimedOut(t) => (
                CallDecision::TimedOut,
                format!("nobody decided within {:.0} s", t.as_secs_f64()),
            ),
        };
        self.events.send(SessionEvent::ToolCall {
            request: Box::new(request.snapshot()),
            decision,
            decided_by: by,
            reason: Some(reason),
            outcome: None,
            duration_ms: 0,
        });
        refusal
    }
}

/// Forgets a request when its wait ends, and tells listeners it is withdrawn unless it
/// was decided.
struct Withdraw<'a> {
    approvals: &'a Approvals,
    id: u64,
    reason: Option<&'static str>,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if let Ok(mut p) = self.approvals.pending.lock() {
            p.remove(&self.id);
        }
        if let Some(reason) = self.reason {
            self.approvals.events.send(SessionEvent::ApprovalWithdrawn {
                id: self.id,
                reason: reason.to_owned(),
            });
        }
    }
}

/// Ends listening when dropped.
#[derive(Debug)]
pub struct ListenGuard {
    approvals: Arc<Approvals>,
    execution_id: Option<String>,
}

/// Why a request is withdrawn when its execution ends.
const ENDED: &str = "the execution that made the call ended";

/// Why a request made elsewhere is withdrawn when its asker goes away.
const ASKER_GONE: &str = "the agent that made the call stopped waiting for it";

/// Waits for the decision on an external call: the approval, or who refused it and why.
pub type ExternalWait = BoxFuture<'static, Result<Approved, (DecidedBy, Refusal)>>;

/// A tool call made by another process's code, to be approved here.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ExternalCall {
    /// The registered server's name.
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// The arguments, as they will be sent.
    pub arguments: serde_json::Value,
    /// What the server is (its command line or URL, secrets masked).
    pub server_description: String,
    /// Who made the call, in words ("agent session 4f2a, via ipybox mcp").
    pub origin: String,
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

fn lock_listener_id(approvals: &Approvals) -> Option<String> {
    approvals
        .listener
        .lock()
        .ok()
        .and_then(|l| l.as_ref().and_then(|l| l.execution_id.clone()))
}

impl Drop for ListenGuard {
    fn drop(&mut self) {
        // Requests the execution's code is still waiting for are withdrawn: the code was
        // interrupted or finished, and nobody may approve them any more.
        for request in self.approvals.pending() {
            if request.execution_id() == self.execution_id.as_deref() {
                request.decide_as(Decision::Reject, DecidedBy::Nobody, Some(ENDED.into()));
            }
        }
        if let Ok(mut l) = self.approvals.listener.lock()
            && l.as_ref().map(|l| &l.execution_id) == Some(&self.execution_id)
        {
            *l = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn without_a_listener_calls_are_rejected() {
        let a = Arc::new(Approvals::new(Duration::from_secs(1)));
        let r = a.request("s", "t", &serde_json::json!({}), "cmd").await;
        assert!(matches!(r, Err(Refusal::Rejected(_))), "{r:?}");
    }

    #[tokio::test]
    async fn accept_reject_drop_and_timeout() {
        let a = Arc::new(Approvals::new(Duration::from_millis(200)));
        let (_guard, mut rx) = a.listen();
        for (decide, expected_ok) in [
            (Some(Decision::Accept), true),
            (Some(Decision::Reject), false),
            (None, false),
        ] {
            let a2 = a.clone();
            let call = tokio::spawn(async move {
                a2.request("s", "t", &serde_json::json!({"x": 1}), "cmd")
                    .await
            });
            let Some(ToolEvent::Requested(req)) = rx.recv().await else {
                panic!("a request")
            };
            assert_eq!(req.tool_args()["x"], 1);
            match decide {
                Some(d) => req.decide(d),
                None => drop(req),
            }
            assert_eq!(call.await.expect("joined").is_ok(), expected_ok);
            assert!(
                matches!(rx.recv().await, Some(ToolEvent::Settled(_))),
                "settled is reported"
            );
        }
        let a2 = a.clone();
        let call =
            tokio::spawn(async move { a2.request("s", "t", &serde_json::json!({}), "cmd").await });
        let Some(ToolEvent::Requested(req)) = rx.recv().await else {
            panic!("a request")
        };
        req.reject_with("rule 3 says no");
        req.accept();
        assert_eq!(
            call.await.expect("joined").map(|a| a.by),
            Err(Refusal::Rejected("rule 3 says no".into())),
            "the reason reaches the caller, and the first decision wins"
        );
        assert!(matches!(rx.recv().await, Some(ToolEvent::Settled(_))));
        let a2 = a.clone();
        let call =
            tokio::spawn(async move { a2.request("s", "t", &serde_json::json!({}), "cmd").await });
        let Some(ToolEvent::Requested(_req)) = rx.recv().await else {
            panic!("a request")
        };
        assert!(
            matches!(call.await.expect("joined"), Err(Refusal::TimedOut(_))),
            "nobody answers: timeout"
        );
    }

    #[test]
    fn a_request_says_until_when_it_waits() {
        let approvals = Arc::new(Approvals::new(Duration::from_secs(5)));
        let call = ExternalCall {
            server: "s".into(),
            tool: "t".into(),
            arguments: serde_json::json!({}),
            server_description: "s".into(),
            origin: "a test".into(),
        };
        let (request, _wait) = approvals.request_external(call, None);
        // A later change of the timeout is for the next requests, not this one.
        approvals.timeout.store(60_000, Ordering::Relaxed);
        let json = serde_json::to_value(&request).expect("serializes");
        let asked = json["asked_at"].as_u64().expect("asked_at");
        assert_eq!(json["deadline"].as_u64(), Some(asked + 5000), "{json}");
    }
}
