//! The tests' shorthand: rules from a JSON list, a call's decision, an agent's client.

use serde_json::{Value, json};

use super::format::Rules;
use crate::approval::Decision;

pub const ACCEPT: Decision = Decision::Accept;
pub const REJECT: Decision = Decision::Reject;

pub fn rules(rules: Value) -> Rules {
    Rules::from_json(&json!({"version": 1, "rules": rules}).to_string()).expect("valid rules")
}

/// The decision for `server`.`tool` with `args`, and the index of the rule that made it.
pub fn decide(r: &Rules, server: &str, tool: &str, args: Value) -> (Decision, Option<usize>) {
    let o = r.decide(server, tool, &args);
    (o.decision, o.rule)
}

pub fn agent() -> Option<crate::definition::Client> {
    Some(crate::definition::Client {
        name: "claude-code".into(),
        version: Some("2.1".into()),
        session: "4f2a".into(),
        connected_at_ms: 1,
    })
}
