//! Agents that the desktop app serves itself (its own MCP endpoint) run in kernels of their
//! own, but a person approves their tool calls in the window's session: each call is asked
//! there — its rules, its dialog, its approval panel, its audit log — and the answer comes
//! back. The same as `ipybox mcp --approval desktop`, without the socket: both ends are in
//! this process.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;

use crate::approval::{Approved, ExternalCall, Refusal};
use crate::events::{DecidedBy, SessionEvent};
use crate::executor::CodeExecutor;
use crate::tools::{ApprovalHandler, ApprovalRequest, Decision};

/// Has every call approved in another executor's session (the window's).
#[derive(Debug, Clone)]
pub(crate) struct Relay(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    to: CodeExecutor,
    /// Calls decided there (with the approval, when approved), kept until their end is
    /// reported here.
    decided: Mutex<Vec<(ApprovalRequest, Option<Approved>)>>,
}

impl Relay {
    /// Ask `to`'s session about every call.
    pub(crate) fn new(to: CodeExecutor) -> Relay {
        Relay(Arc::new(Inner {
            to,
            decided: Mutex::new(Vec::new()),
        }))
    }

    /// Pass the end of a call to the session that approved it: `true` when that session
    /// records it (the outcome of an approved call; a refusal it recorded when it refused),
    /// `false` when it never heard of the call (record it yourself).
    pub(crate) fn forward(&self, event: &SessionEvent) -> bool {
        let SessionEvent::ToolCall {
            request,
            outcome,
            duration_ms,
            ..
        } = event
        else {
            return false;
        };
        let found = self.0.decided.lock().ok().and_then(|mut d| {
            let at = d.iter().position(|(r, _)| r.same(request))?;
            Some(d.swap_remove(at))
        });
        match found {
            Some((_, Some(approved))) => {
                self.0
                    .to
                    .report_external(approved, outcome.clone(), *duration_ms);
                true
            }
            // Refused there: recorded there when it was refused.
            Some((_, None)) => true,
            None => false,
        }
    }

    fn keep(&self, request: &ApprovalRequest, approved: Option<Approved>) {
        if let Ok(mut d) = self.0.decided.lock() {
            d.push((request.clone(), approved));
        }
    }
}

impl ApprovalHandler for Relay {
    /// The window's session decides: its rules, then its person, natively.
    fn start_program(
        &self,
        request: crate::approval::ProgramRequest,
    ) -> BoxFuture<'static, crate::approval::ProgramVerdict> {
        let to = self.0.to.clone();
        Box::pin(async move { to.decide_program(request).await })
    }

    fn handle(&self, request: ApprovalRequest) -> BoxFuture<'static, ()> {
        let relay = self.clone();
        let inner = self.0.clone();
        Box::pin(async move {
            let call = ExternalCall {
                server: request.server_name().to_owned(),
                tool: request.tool_name().to_owned(),
                arguments: request.tool_args().clone(),
                server_description: request.server().to_owned(),
                origin: request.origin().unwrap_or("an agent").to_owned(),
            };
            let Some((asked, wait)) = inner.to.request_external(call, request.details().clone())
            else {
                request.decide_as(
                    Decision::Reject,
                    DecidedBy::Nobody,
                    Some("the ipybox window has no running session to approve calls in".into()),
                );
                return;
            };
            // The agent may stop waiting first (its cell was interrupted or timed out): the
            // window's request goes too, and its dialog closes.
            let gave_up = async {
                while !request.is_decided() {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            };
            tokio::pin!(wait);
            let outcome = tokio::select! {
                outcome = &mut wait => outcome,
                () = gave_up => {
                    asked.decide_as(
                        Decision::Reject,
                        DecidedBy::Nobody,
                        Some("the agent stopped waiting".into()),
                    );
                    relay.keep(&request, None);
                    let _ = wait.await;
                    return;
                }
            };
            match outcome {
                Ok(approved) => {
                    let by = approved.by;
                    relay.keep(&request, Some(approved));
                    request.decide_as(Decision::Accept, by, None);
                }
                Err((by, Refusal::Rejected(reason))) => {
                    relay.keep(&request, None);
                    request.decide_as(Decision::Reject, by, Some(reason));
                }
                Err((_, Refusal::TimedOut(t))) => {
                    relay.keep(&request, None);
                    request.decide_as(
                        Decision::Reject,
                        DecidedBy::Timeout,
                        Some(format!(
                            "nobody decided in the ipybox window within {:.0} s",
                            t.as_secs_f64()
                        )),
                    );
                }
            }
        })
    }
}
