//! Handlers that decide approval requests for a whole application, and the two fixed
//! policies (`--approval reject`, `--approval auto`).

use futures_util::future::BoxFuture;

use super::program::{ProgramRequest, ProgramVerdict};
use super::request::ApprovalRequest;
use crate::events::{DecidedBy, Decision};

/// Decides approval requests for a whole application (a dialog, a rules file). When one is
/// set, it receives every request, from `stream()` and `execute()` alike.
pub trait ApprovalHandler: Send + Sync + std::fmt::Debug {
    /// Decide `request` (call `accept()` or `reject()` on it); may take as long as a person
    /// needs, up to the approval timeout.
    fn handle(&self, request: ApprovalRequest) -> BoxFuture<'static, ()>;

    /// Decide `request` at once when no person is needed (a rule matches it, a fixed policy
    /// applies), before anything is announced: `true` when it did. A request decided here
    /// raises no [`SessionEvent::ApprovalRequested`] (no panel or dialog flashes for it);
    /// only its [`SessionEvent::ToolCall`] is reported. `false` (the default) hands it to
    /// [`handle`](Self::handle) as a request that waits for a person.
    ///
    /// [`SessionEvent::ApprovalRequested`]: crate::events::SessionEvent::ApprovalRequested
    /// [`SessionEvent::ToolCall`]: crate::events::SessionEvent::ToolCall
    fn decide_now(&self, _request: &ApprovalRequest) -> bool {
        false
    }

    /// Decide whether an agent may register a server that starts a program on this
    /// computer ([`ProgramRequest`]): only a person, natively, or a rule written for exactly
    /// that says yes. The default refuses: a handler that cannot ask a person never lets an
    /// agent start a program.
    fn start_program(&self, request: ProgramRequest) -> BoxFuture<'static, ProgramVerdict> {
        Box::pin(std::future::ready(Err(format!(
            "starting the program of \"{}\" on this computer needs a person's yes, and nobody can be asked here: \
             register it yourself with `ipybox register`, or in the ipybox app's MCP servers panel",
            request.name
        ))))
    }
}

/// Rejects every call (`--approval reject`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RejectAll;

impl ApprovalHandler for RejectAll {
    fn handle(&self, request: ApprovalRequest) -> BoxFuture<'static, ()> {
        self.decide_now(&request);
        Box::pin(std::future::ready(()))
    }

    fn start_program(&self, request: ProgramRequest) -> BoxFuture<'static, ProgramVerdict> {
        Box::pin(std::future::ready(Err(format!(
            "agents cannot start programs here (--approval reject): a person registers \"{}\" with `ipybox register`",
            request.name
        ))))
    }

    fn decide_now(&self, request: &ApprovalRequest) -> bool {
        request.decide_as(
            Decision::Reject,
            DecidedBy::Policy,
            Some("tool calls are rejected (--approval reject)".into()),
        );
        true
    }
}

/// Approves every call (the Python ipybox's MCP server behaviour; `--approval auto`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AutoApprove;

impl ApprovalHandler for AutoApprove {
    fn handle(&self, request: ApprovalRequest) -> BoxFuture<'static, ()> {
        auto_approve(&request);
        Box::pin(std::future::ready(()))
    }

    /// `--approval auto` approves everything the agent does, as the Python ipybox's server
    /// does: the person who chose it trusts the agent with this computer.
    fn start_program(&self, _request: ProgramRequest) -> BoxFuture<'static, ProgramVerdict> {
        Box::pin(std::future::ready(Ok(DecidedBy::Policy)))
    }

    fn decide_now(&self, request: &ApprovalRequest) -> bool {
        auto_approve(request);
        true
    }
}

/// Approve `request` by the session's policy (`--approval auto`), unless its tool's
/// definition changed since it was registered: only a person accepts that, so it is
/// refused, saying how to accept it.
pub fn auto_approve(request: &ApprovalRequest) {
    match request.held() {
        None => request.decide_as(Decision::Accept, DecidedBy::Policy, None),
        Some(held) => request.decide_as(Decision::Reject, DecidedBy::Policy, Some(held)),
    }
}
