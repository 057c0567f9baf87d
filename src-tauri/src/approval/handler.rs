//! Handlers that decide approval requests for a whole application, and the two fixed
//! policies (`--approval reject`, `--approval auto`).

use futures_util::future::BoxFuture;

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
}

/// Rejects every call (`--approval reject`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RejectAll;

impl ApprovalHandler for RejectAll {
    fn handle(&self, request: ApprovalRequest) -> BoxFuture<'static, ()> {
        self.decide_now(&request);
        Box::pin(std::future::ready(()))
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
