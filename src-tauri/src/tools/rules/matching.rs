//! Deciding a call by the rules: the first rule whose server, tool and arguments match
//! decides, and a call no rule matches is rejected with the rule that would allow it.

use serde_json::Value;

use super::args::{glob_match, lookup, names_top_level};
use super::format::{Rule, RuleDecision, Rules, Scope, now_ms};
use crate::approval::{ApprovalRequest, Decision};

/// What a rule may look at besides the names and arguments of a call.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallFacts<'a> {
    /// Whose code made the call (`Notebook` or `Agents`).
    pub caller: Scope,
    /// The tool's hints, as its server declares them.
    pub hints: Option<&'a crate::definition::ToolHints>,
    /// Now, in milliseconds since the Unix epoch.
    pub now_ms: u64,
}

impl<'a> CallFacts<'a> {
    /// The facts of `request`: an agent's call when it names an MCP client.
    pub fn of(request: &'a ApprovalRequest) -> CallFacts<'a> {
        let details = request.details();
        CallFacts {
            caller: if details.client.is_some() {
                Scope::Agents
            } else {
                Scope::Notebook
            },
            hints: details.tool.as_ref().map(|t| &t.hints),
            now_ms: now_ms(),
        }
    }
}

/// The decision for one call, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleOutcome {
    /// Accept or reject.
    pub decision: Decision,
    /// Index in `rules` of the rule that decided; `None` when no rule matched.
    pub rule: Option<usize>,
    /// For people and for the kernel code: which rule decided, or which rule to add.
    pub message: String,
}

impl Rule {
    /// The same rule but for its comment (a note for people, which decides nothing).
    fn decides_like(&self, other: &Rule) -> bool {
        Rule {
            comment: None,
            ..self.clone()
        } == Rule {
            comment: None,
            ..other.clone()
        }
    }

    /// Does the rule match this call? When the names match, `Err` says in words why its
    /// arguments do not.
    fn matches(
        &self,
        server: &str,
        tool: &str,
        args: &Value,
        facts: &CallFacts<'_>,
        default_scope: Scope,
    ) -> Option<Result<(), String>> {
        if !glob_match(&self.server, server) || !glob_match(&self.tool, tool) {
            return None;
        }
        if !self.scope.unwrap_or(default_scope).covers(facts.caller)
            || self.expires_at.is_some_and(|t| t <= facts.now_ms)
        {
            return None;
        }
        if self.read_only && facts.hints.and_then(|h| h.read_only) != Some(true) {
            return Some(Err(
                "it is for tools the server says are read-only, and this one's server does not say so"
                    .into(),
            ));
        }
        if let Some((key, _)) = self
            .args
            .iter()
            .find(|(key, m)| !m.matches(lookup(args, key)))
        {
            return Some(Err(format!(
                "its condition on argument {key:?} does not hold"
            )));
        }
        if self.exact_args
            && let Some(extra) = args
                .as_object()
                .into_iter()
                .flat_map(|o| o.keys())
                .find(|name| !self.args.keys().any(|key| names_top_level(key, name)))
        {
            return Some(Err(format!(
                "it allows no other arguments and the call also gives {extra:?}"
            )));
        }
        Some(Ok(()))
    }
}

impl Rules {
    /// The allow rules here that could let a call run without asking that `before` did not
    /// let run: an allow rule `before` lacks, or one that a reject rule no longer precedes.
    /// Empty when these rules allow nothing more (fewer allow rules, more reject rules, a
    /// comment edited): such a change needs no confirmation.
    pub fn widened_from(&self, before: &Rules) -> Vec<&Rule> {
        self.rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.decision == RuleDecision::Allow)
            .filter(|&(at, allow)| {
                let Some(was) = before.rules.iter().position(|b| b.decides_like(allow)) else {
                    return true;
                };
                before.rules[..was]
                    .iter()
                    .filter(|b| b.decision == RuleDecision::Reject)
                    .any(|reject| !self.rules[..at].iter().any(|r| r.decides_like(reject)))
            })
            .map(|(_, r)| r)
            .collect()
    }

    /// Decide a call: the first rule whose server, tool and arguments match decides; if none
    /// matches, the call is rejected and the message gives a rule that would allow it.
    pub fn decide(&self, server: &str, tool: &str, args: &Value) -> RuleOutcome {
        self.decide_with(
            server,
            tool,
            args,
            &CallFacts {
                now_ms: now_ms(),
                ..CallFacts::default()
            },
        )
    }

    /// [`decide`](Self::decide) a call whose caller, tool hints and time are `facts`.
    pub fn decide_with(
        &self,
        server: &str,
        tool: &str,
        args: &Value,
        facts: &CallFacts<'_>,
    ) -> RuleOutcome {
        let call = format!("{server}.{tool}");
        let of_file = match &self.path {
            Some(p) => format!(" of {}", p.display()),
            None => String::new(),
        };
        let mut near_miss = None;
        for (i, rule) in self.rules.iter().enumerate() {
            match rule.matches(server, tool, args, facts, self.default_scope) {
                None => {}
                Some(Err(why)) => {
                    near_miss.get_or_insert((i, why));
                }
                Some(Ok(())) => {
                    let message = match (rule.decision, &rule.reason) {
                        (RuleDecision::Allow, _) => {
                            format!("{call} is allowed by rules[{i}]{of_file}")
                        }
                        (RuleDecision::Reject, None) => {
                            format!("{call} is rejected by rules[{i}]{of_file}")
                        }
                        (RuleDecision::Reject, Some(reason)) => {
                            format!("{call} is rejected by rules[{i}]{of_file}: {reason}")
                        }
                    };
                    return RuleOutcome {
                        decision: rule.decision.into(),
                        rule: Some(i),
                        message,
                    };
                }
            }
        }
        let near_miss = match near_miss {
            Some((i, why)) => format!(" (rules[{i}] names it, but {why})"),
            None => String::new(),
        };
        let target = match &self.path {
            Some(p) => p.display().to_string(),
            None => "the approval rules".to_owned(),
        };
        RuleOutcome {
            decision: Decision::Reject,
            rule: None,
            message: format!(
                "no rule allows {call}{near_miss}; to allow it add {} to {target}",
                allow_rule(server, tool)
            ),
        }
    }
}

impl Rules {
    /// The rules that name `server` and `tool` literally (no wildcard in either), in their
    /// order: the only ones that may make a decision no broad rule should (letting an agent
    /// start a program). Decide with [`decide_with`](Self::decide_with) on them.
    pub fn naming_exactly(&self, server: &str, tool: &str) -> Rules {
        Rules {
            rules: self
                .rules
                .iter()
                .filter(|r| r.server == server && r.tool == tool)
                .cloned()
                .collect(),
            ..self.clone()
        }
    }
}

/// Which of `entries` (the last audited calls, say the last 100) `rule` would have matched,
/// by their index: what a panel shows beside a rule being written. Its arguments, scope
/// (an entry naming a client is an agent's call; `default_scope` for a rule without one)
/// and expiry (as of now) count; a `read_only` rule matches none, as the log does not keep
/// the tools' hints.
pub fn rule_would_match(
    rule: &Rule,
    entries: &[crate::audit::AuditEntry],
    default_scope: Scope,
) -> Vec<usize> {
    let now = now_ms();
    entries
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            let facts = CallFacts {
                caller: if e.client.is_some() {
                    Scope::Agents
                } else {
                    Scope::Notebook
                },
                hints: None,
                now_ms: now,
            };
            matches!(
                rule.matches(&e.server, &e.tool, &e.arguments, &facts, default_scope),
                Some(Ok(()))
            )
        })
        .map(|(i, _)| i)
        .collect()
}

/// The rule that allows every call of `server`.`tool`, as one line of JSON.
fn allow_rule(server: &str, tool: &str) -> String {
    format!(
        r#"{{"server": {}, "tool": {}, "decision": "allow"}}"#,
        Value::from(server),
        Value::from(tool)
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ACCEPT, REJECT, agent, decide, rules};
    use super::*;
    use crate::events::DecidedBy;

    #[test]
    fn only_a_change_that_allows_more_is_a_widening() {
        let before = rules(json!([
            {"server": "fx", "tool": "rm", "decision": "reject"},
            {"server": "fx", "decision": "allow", "comment": "the fixture"},
        ]));
        let widened = |after: Value| -> Vec<String> {
            rules(after)
                .widened_from(&before)
                .iter()
                .map(|r| r.text())
                .collect()
        };
        // Removing the allow rule, adding a reject rule, editing a comment: nothing more runs.
        assert!(widened(json!([{"server": "fx", "tool": "rm", "decision": "reject"}])).is_empty());
        assert!(
            widened(json!([
                {"server": "gh", "decision": "reject"},
                {"server": "fx", "tool": "rm", "decision": "reject"},
                {"server": "fx", "decision": "allow", "comment": "edited"},
            ]))
            .is_empty()
        );
        // A new allow rule, a reject rule gone, the allow rule moved above the reject rule.
        assert_eq!(
            widened(json!([
                {"server": "fx", "tool": "rm", "decision": "reject"},
                {"server": "fx", "decision": "allow"},
                {"server": "gh", "decision": "allow"},
            ])),
            [r#"{"server":"gh","tool":"*","decision":"allow"}"#]
        );
        assert_eq!(
            widened(json!([{"server": "fx", "decision": "allow"}])).len(),
            1
        );
        assert_eq!(
            widened(json!([
                {"server": "fx", "decision": "allow"},
                {"server": "fx", "tool": "rm", "decision": "reject"},
            ]))
            .len(),
            1
        );
        // An allow rule that now covers agents too is another rule.
        assert_eq!(
            widened(json!([
                {"server": "fx", "tool": "rm", "decision": "reject"},
                {"server": "fx", "decision": "allow", "scope": "any"},
            ]))
            .len(),
            1
        );
    }

    #[test]
    fn the_first_matching_rule_wins() {
        let r = rules(json!([
            {"server": "github", "tool": "delete_*", "decision": "reject", "reason": "no deletions"},
            {"server": "github", "tool": "*", "decision": "allow"},
            {"server": "github", "tool": "delete_repo", "decision": "allow"},
        ]));
        assert_eq!(
            decide(&r, "github", "delete_repo", json!({})),
            (REJECT, Some(0)),
            "the earlier reject wins over later allows"
        );
        assert_eq!(
            decide(&r, "github", "get_issue", json!({})),
            (ACCEPT, Some(1))
        );
        let o = r.decide("github", "delete_repo", &json!({}));
        assert_eq!(
            o.message, "github.delete_repo is rejected by rules[0]: no deletions",
            "the reason is told"
        );
        let reordered = rules(json!([
            {"server": "github", "tool": "delete_repo", "decision": "allow"},
            {"server": "github", "tool": "delete_*", "decision": "reject"},
        ]));
        assert_eq!(
            decide(&reordered, "github", "delete_repo", json!({})),
            (ACCEPT, Some(0)),
            "order, not specificity, decides"
        );
        assert_eq!(
            decide(&reordered, "github", "delete_issue", json!({})),
            (REJECT, Some(1))
        );
    }

    #[test]
    fn the_default_rejection_gives_a_rule_that_allows_the_call() {
        let original = json!([
            {"server": "github", "tool": "create_issue", "args": {"repo": {"equals": "acme/site"}}, "decision": "allow"},
            {"server": "github", "tool": "delete_*", "decision": "reject"},
        ]);
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("rules.json");
        for (server, tool, args) in [
            ("github", "create_issue", json!({"repo": "evil/site"})),
            ("filesystem", "read_file", json!({"path": "/x"})),
            ("we\"ird", "na*me?", json!({})),
        ] {
            std::fs::write(&path, json!({"version": 1, "rules": original}).to_string())
                .expect("write");
            let r = Rules::load(&path).expect("load");
            let o = r.decide(server, tool, &args);
            assert_eq!((o.decision, o.rule), (REJECT, None));
            let call = format!("no rule allows {server}.{tool}");
            assert!(o.message.starts_with(&call), "{}", o.message);
            let suffix = format!(" to {}", path.display());
            assert!(
                o.message.ends_with(&suffix),
                "names the file: {}",
                o.message
            );
            let (_, rest) = o
                .message
                .split_once("to allow it add ")
                .expect("a suggestion");
            let suggested = rest.strip_suffix(&suffix).expect("file at the end");
            let rule: Value = serde_json::from_str(suggested).expect("the rule is JSON");
            let mut appended = original.as_array().expect("list").clone();
            appended.push(rule);
            std::fs::write(&path, json!({"version": 1, "rules": appended}).to_string())
                .expect("write");
            let r = Rules::load(&path).expect("the suggested rule is valid");
            assert_eq!(
                decide(&r, server, tool, args),
                (ACCEPT, Some(2)),
                "appending the suggested rule allows the call"
            );
        }
        let r = rules(original);
        let o = r.decide("github", "create_issue", &json!({"repo": "evil/site"}));
        assert_eq!(
            o.message,
            r#"no rule allows github.create_issue (rules[0] names it, but its condition on argument "repo" does not hold); to allow it add {"server": "github", "tool": "create_issue", "decision": "allow"} to the approval rules"#,
            "a near miss is pointed out"
        );
        assert_eq!(
            rules(json!([])).decide("s", "t", &json!({})).decision,
            REJECT,
            "no rules reject everything"
        );
    }

    #[test]
    fn a_rule_says_which_audited_calls_it_would_have_matched() {
        let entry = |tool: &str, args: Value, client| crate::audit::AuditEntry {
            time: 1,
            workspace: "/w".into(),
            execution_id: None,
            origin: None,
            server: "fs".into(),
            tool: tool.into(),
            arguments: args,
            decision: crate::events::CallDecision::Approved,
            decided_by: DecidedBy::Person,
            reason: None,
            outcome: None,
            duration_ms: 0,
            rule: None,
            client,
            call_site: None,
        };
        let entries = vec![
            entry("read_file", json!({"path": "/p/a"}), None),
            entry("read_file", json!({"path": "/etc/passwd"}), None),
            entry("write_file", json!({"path": "/p/a"}), None),
            entry("read_file", json!({"path": "/p/b"}), agent()),
        ];
        let rule = rules(json!([{"server": "fs", "tool": "read_*",
            "args": {"path": {"under": "/p"}}, "decision": "allow"}]))
        .rules()[0]
            .clone();
        assert_eq!(rule_would_match(&rule, &entries, Scope::Notebook), vec![0]);
        assert_eq!(rule_would_match(&rule, &entries, Scope::Any), vec![0, 3]);
    }
}
