//! A question an MCP server asks a person during a tool call, as data: the question with
//! its form (`question/form.rs`: built from the requested schema, answers checked, secrets
//! never recorded) and the call it came during, and what came of it (what the audit log
//! records). Session events carry these; `elicitation` asks them.

pub mod form;

use rmcp::model::ElicitationAction;
use serde::Serialize;
use serde_json::{Map, Value};

use form::Form;

/// The tool call a question came during.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct CallRef {
    /// The call's approval request ([`RequestSnapshot::id`](crate::RequestSnapshot::id)).
    pub id: u64,
    /// The execution whose code made the call.
    pub execution_id: Option<String>,
    /// The tool's name.
    pub tool: String,
    /// The registered server's name.
    #[serde(skip)]
    pub(crate) server: String,
}

impl CallRef {
    /// The call `id` of `server`'s `tool`, made by `execution_id`'s code.
    pub fn new(id: u64, execution_id: Option<String>, server: &str, tool: &str) -> CallRef {
        CallRef {
            id,
            execution_id,
            tool: tool.to_owned(),
            server: server.to_owned(),
        }
    }
}

/// A question waiting for its answer, as data for a window.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ServerQuestion"))]
pub struct Question {
    /// Unique within the session.
    pub id: u64,
    /// The registered server that asks.
    pub server: String,
    /// What it asks, in its own words (untrusted).
    pub message: String,
    /// The form to fill in.
    pub form: Form,
    /// The tool call it came during, when ipybox can tell (one call of that server running).
    pub call: Option<CallRef>,
    /// When it was asked, in milliseconds since the Unix epoch.
    pub asked_at: u64,
}

/// What came of a question: what the audit log records.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Answered {
    /// The question's id.
    pub id: u64,
    /// The registered server that asked.
    pub server: String,
    /// What it asked (untrusted).
    pub message: String,
    /// The tool call it came during.
    pub call: Option<CallRef>,
    /// `accept`, `decline` or `cancel`, as it went back to the server.
    #[cfg_attr(test, ts(type = "\"accept\" | \"decline\" | \"cancel\""))]
    pub action: ElicitationAction,
    /// The values that went back, but for secret fields'.
    pub values: Option<Map<String, Value>>,
    /// The fields whose values went back but are not recorded (secrets).
    pub withheld: Vec<String>,
    /// Why it was declined or cancelled without a person (nobody to ask, the call ended).
    pub reason: Option<String>,
}
