//! A tool call waiting for a decision: what it asks, the first decision made on it, and
//! how a UI sees it.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use serde::{Serialize, Serializer};
use tokio::sync::oneshot;

use crate::definition::CallDetails;
use crate::events::{DecidedBy, Decision, RequestSnapshot};

/// Numbers requests uniquely in the process (ids are unique per session only), so that a
/// snapshot in an event can be matched with its request.
pub(super) static KEYS: AtomicU64 = AtomicU64::new(1);

#[derive(Debug)]
pub(super) struct Inner {
    /// Unique in the process (see [`KEYS`]).
    pub(super) key: u64,
    pub(super) id: u64,
    pub(super) server_name: String,
    pub(super) tool_name: String,
    pub(super) tool_args: serde_json::Value,
    pub(super) server: String,
    pub(super) execution_id: Option<String>,
    pub(super) origin: Option<String>,
    pub(super) asked_at_ms: u64,
    /// How long it waits for a decision (the approval timeout when it was asked).
    pub(super) timeout_ms: u64,
    /// The tool's definition, the agent's client, the calling line.
    pub(super) details: CallDetails,
    /// The rule that decided it, once one did.
    pub(super) rule: std::sync::OnceLock<String>,
    pub(super) decision: Mutex<Option<oneshot::Sender<Verdict>>>,
}

/// A decision, with the reason given for a rejection.
#[derive(Debug)]
pub(super) struct Verdict {
    pub(super) decision: Decision,
    pub(super) reason: Option<String>,
    pub(super) by: DecidedBy,
    /// The rule that decided, as the rules file writes it.
    pub(super) rule: Option<String>,
}

/// A tool call waiting for a decision. Cheap to clone; the first `accept()`/`reject()` wins,
/// and dropping every clone undecided rejects the call.
#[derive(Debug, Clone)]
pub struct ApprovalRequest(pub(super) Arc<Inner>);

impl PartialEq for ApprovalRequest {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for ApprovalRequest {}

/// What a UI shows: `{id, server, tool, arguments, server_description, execution_id, origin,
/// asked_at, deadline, details}` (times in milliseconds since the Unix epoch).
impl Serialize for ApprovalRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("ApprovalRequest", 11)?;
        st.serialize_field("id", &self.0.id)?;
        st.serialize_field("server", &self.0.server_name)?;
        st.serialize_field("tool", &self.0.tool_name)?;
        st.serialize_field("arguments", &self.0.tool_args)?;
        st.serialize_field("server_description", &self.0.server)?;
        st.serialize_field("execution_id", &self.0.execution_id)?;
        st.serialize_field("origin", &self.0.origin)?;
        st.serialize_field("asked_at", &self.0.asked_at_ms)?;
        st.serialize_field(
            "deadline",
            &self.0.asked_at_ms.saturating_add(self.0.timeout_ms),
        )?;
        st.serialize_field("details", &self.0.details)?;
        st.serialize_field("rule", &self.0.rule.get())?;
        st.end()
    }
}

impl ApprovalRequest {
    /// Unique id within the process.
    pub fn id(&self) -> u64 {
        self.0.id
    }

    /// The registered server's name, as the code named it.
    pub fn server_name(&self) -> &str {
        &self.0.server_name
    }

    /// The tool's name.
    pub fn tool_name(&self) -> &str {
        &self.0.tool_name
    }

    /// The arguments, as they will be sent.
    pub fn tool_args(&self) -> &serde_json::Value {
        &self.0.tool_args
    }

    /// What the server is: its command line or URL with `${VAR}`s resolved (secrets
    /// masked), so a person sees what will actually run and where the call goes, not just a
    /// name.
    pub fn server(&self) -> &str {
        &self.0.server
    }

    /// The execution whose code made the call.
    pub fn execution_id(&self) -> Option<&str> {
        self.0.execution_id.as_deref()
    }

    /// Where the code that made the call came from, in words ("cell 3 of analysis.ipynb",
    /// "agent session 4f2a"), as the caller of [`CodeExecutor::stream`](crate::CodeExecutor::stream)
    /// named it in [`StreamOptions::origin`](crate::StreamOptions::origin).
    pub fn origin(&self) -> Option<&str> {
        self.0.origin.as_deref()
    }

    /// What is known about the tool and the caller besides the call itself.
    pub fn details(&self) -> &CallDetails {
        &self.0.details
    }

    /// Why the call is held for a person, when its tool's definition changed since it was
    /// registered: nothing but a person decides it (a policy or a rule refuses it with this
    /// message, which says how to accept the new definition).
    pub fn held(&self) -> Option<String> {
        self.0.details.change.as_ref().map(|change| {
            crate::definition::pins::refusal(&self.0.server_name, &self.0.tool_name, change)
        })
    }

    /// When it was asked, in milliseconds since the Unix epoch.
    pub fn asked_at_ms(&self) -> u64 {
        self.0.asked_at_ms
    }

    /// A person approves the call.
    pub fn accept(&self) {
        self.decide(Decision::Accept);
    }

    /// A person rejects the call.
    pub fn reject(&self) {
        self.decide(Decision::Reject);
    }

    /// A person rejects the call and tells the kernel code why (the `ApprovalRejected`
    /// message).
    pub fn reject_with(&self, reason: impl Into<String>) {
        self.decide_as(Decision::Reject, DecidedBy::Person, Some(reason.into()));
    }

    /// A person decides; later decisions are ignored.
    pub fn decide(&self, decision: Decision) {
        self.decide_as(decision, DecidedBy::Person, None);
    }

    /// Decide as `by` (a rule, a batch, a policy), with the reason told to the kernel code
    /// for a rejection (e.g. which rule rejected it or which rule would allow it); later
    /// decisions are ignored.
    pub fn decide_as(&self, decision: Decision, by: DecidedBy, reason: Option<String>) {
        self.settle(Verdict {
            decision,
            reason,
            by,
            rule: None,
        });
    }

    /// A rule decides: `rule` is the rule as the rules file writes it (the audit log and the
    /// panel say which rule decided), `reason` what the kernel code is told of a rejection.
    pub fn decide_by_rule(&self, decision: Decision, rule: String, reason: Option<String>) {
        self.settle(Verdict {
            decision,
            reason,
            by: DecidedBy::Rule,
            rule: Some(rule),
        });
    }

    /// The rule that decided the request, when a rule did.
    pub fn rule(&self) -> Option<&str> {
        self.0.rule.get().map(String::as_str)
    }

    fn settle(&self, verdict: Verdict) {
        if let Some(tx) = self.0.decision.lock().ok().and_then(|mut d| d.take()) {
            let _ = tx.send(verdict);
        }
    }

    /// Is `other` a snapshot of this very request (not merely of one with the same id,
    /// which another session may also use)?
    pub fn same(&self, other: &RequestSnapshot) -> bool {
        self.0.key == other.key
    }

    /// The request as it is now, as data: what events carry (not this handle, which can
    /// decide the request).
    pub fn snapshot(&self) -> RequestSnapshot {
        RequestSnapshot {
            key: self.0.key,
            id: self.0.id,
            server: self.0.server_name.clone(),
            tool: self.0.tool_name.clone(),
            arguments: self.0.tool_args.clone(),
            server_description: self.0.server.clone(),
            execution_id: self.0.execution_id.clone(),
            origin: self.0.origin.clone(),
            asked_at: self.0.asked_at_ms,
            deadline: self.0.asked_at_ms.saturating_add(self.0.timeout_ms),
            details: self.0.details.clone(),
            rule: self.0.rule.get().cloned(),
        }
    }

    /// Has a decision been made (or the request been withdrawn)?
    pub fn is_decided(&self) -> bool {
        self.0
            .decision
            .lock()
            .map(|d| d.as_ref().is_none_or(|tx| tx.is_closed()))
            .unwrap_or(true)
    }
}

impl std::fmt::Display for ApprovalRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}.{}({})",
            self.0.server_name, self.0.tool_name, self.0.tool_args
        )
    }
}
