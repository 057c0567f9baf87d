//! The rule format as types: a rule, the conditions on its arguments, whose calls it
//! decides, and a checked list of rules (see `docs/approval-rules.md`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::approval::{ApprovalRequest, Decision};

/// What a rule does with the calls it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum RuleDecision {
    /// Run the call.
    Allow,
    /// Do not run it; the kernel code raises `ApprovalRejected` with the rule's `reason`.
    Reject,
}

impl From<RuleDecision> for Decision {
    fn from(d: RuleDecision) -> Self {
        match d {
            RuleDecision::Allow => Decision::Accept,
            RuleDecision::Reject => Decision::Reject,
        }
    }
}

/// One entry of `rules`, as written in the file (see `docs/approval-rules.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The registered server's name, or a glob (`*`, `?`) over names.
    pub server: String,
    /// The tool's name, or a glob (`*`, `?`) over names; every tool of the server when
    /// left out.
    #[serde(default = "any_tool")]
    pub tool: String,
    /// Conditions on arguments, all of which must hold. A key is an argument's name, or a
    /// [JSON Pointer](https://www.rfc-editor.org/rfc/rfc6901) (starting with `/`) into the
    /// arguments for nested values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, ArgMatcher>,
    /// The call may have no top-level argument that `args` does not name: a rule made from
    /// one call's arguments then does not match a call that adds another.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact_args: bool,
    /// What to do with a matching call.
    pub decision: RuleDecision,
    /// Told to the kernel code when this rule rejects a call (reject rules only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub reason: Option<String>,
    /// A note for people; ignored when matching.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub comment: Option<String>,
    /// Only tools whose server says they are read-only (`readOnlyHint`). That is the
    /// server's claim, not something ipybox checked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
    /// Whose calls the rule decides: `notebook` (cells, and `ipybox exec`), `agents`
    /// (agents' code), or `any`. Left out: the rules' default (see [`Rules::default_scope`]),
    /// notebooks in the app, so that rules written before agents existed do not decide
    /// agents' calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub scope: Option<Scope>,
    /// When the rule stops deciding (a grant for 15 minutes), in milliseconds since the
    /// Unix epoch; it never does when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub expires_at: Option<u64>,
}

fn any_tool() -> String {
    "*".to_owned()
}

/// Whose calls a rule decides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Calls from a notebook's cells (and `ipybox exec`).
    #[default]
    Notebook,
    /// Calls from agents' code.
    Agents,
    /// Both.
    Any,
}

impl Scope {
    pub(super) fn covers(self, caller: Scope) -> bool {
        self == Scope::Any || self == caller
    }
}

pub(super) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

/// Conditions on one argument; every condition given must hold, and a missing argument
/// matches none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ArgMatcher {
    /// The argument equals this JSON value (numbers compare by value: `1` equals `1.0`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(test, ts(optional))]
    pub equals: Option<Value>,
    /// The argument equals one of these JSON values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub one_of: Option<Vec<Value>>,
    /// The argument is a string matching this glob (`*` any characters, `/` included; `?`
    /// one character).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub glob: Option<String>,
    /// The argument is an absolute path that, after lexical normalization (`.`, `..`, `//`;
    /// no filesystem access, symlinks not resolved), is this path or lies below it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub under: Option<String>,
    /// `true`: the argument is not given (the only condition that a missing argument
    /// meets); `false`: it is given, with any value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub absent: Option<bool>,
}

/// `"equals": null` means "equals null", not "no condition".
fn present<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl Rule {
    /// This rule, made from the waiting request `from`, decides the calls of whoever made
    /// that one: a rule without a scope decides notebooks' calls only, so one made from an
    /// agent's call is scoped to agents (else it would never decide the next such call).
    pub fn scoped_to_caller(mut self, from: &ApprovalRequest) -> Rule {
        if self.scope.is_none() && from.details().client.is_some() {
            self.scope = Some(Scope::Agents);
        }
        self
    }
}

/// A rules file, loaded and checked. The default has no rules (it rejects every call, or
/// with `RulesHandler::then` hands every call on).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rules {
    pub(super) rules: Vec<Rule>,
    pub(super) path: Option<PathBuf>,
    /// Whose calls a rule without `scope` decides.
    pub(super) default_scope: Scope,
}
