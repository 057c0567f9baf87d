//! A rule for a person: on one line as the rules file writes it, or in words.

use serde_json::Value;

use super::format::{Rule, RuleDecision, Scope, now_ms};

impl Rule {
    /// The rule as the rules file writes it, on one line: what the audit log and the
    /// approval panel show as the rule that decided a call.
    pub fn text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The rule in words, for a person asked to confirm it: "Allow every call to fx.touch,
    /// with any arguments, from the notebook's code, until you remove it". Names and values
    /// are as written in the rule (escape them where a person reads them).
    pub fn in_words(&self, default_scope: Scope) -> String {
        let verb = match self.decision {
            RuleDecision::Allow => "Allow",
            RuleDecision::Reject => "Reject",
        };
        let server = if self.server == "*" {
            "any server".to_owned()
        } else {
            self.server.clone()
        };
        let what = match (self.tool.as_str(), self.read_only) {
            ("*", false) => format!("every call to every tool of {server}"),
            ("*", true) => {
                format!("every call to the tools of {server} that the server says are read-only")
            }
            (tool, false) => format!("every call to {server}.{tool}"),
            (tool, true) => {
                format!("every call to {server}.{tool}, if the server says the tool is read-only")
            }
        };
        let mut conditions: Vec<String> = self
            .args
            .iter()
            .map(|(name, m)| {
                let mut parts = Vec::new();
                if m.absent == Some(true) {
                    parts.push(format!("{name} is not given"));
                }
                if m.absent == Some(false) {
                    parts.push(format!("{name} is given"));
                }
                if let Some(v) = &m.equals {
                    parts.push(format!("{name} is {v}"));
                }
                if let Some(vs) = &m.one_of {
                    let vs: Vec<String> = vs.iter().map(Value::to_string).collect();
                    parts.push(format!("{name} is one of {}", vs.join(", ")));
                }
                if let Some(g) = &m.glob {
                    parts.push(format!("{name} matches {g:?}"));
                }
                if let Some(p) = &m.under {
                    parts.push(format!("{name} is a path under {p}"));
                }
                parts.join(" and ")
            })
            .collect();
        if self.exact_args {
            conditions.push("no other argument is given".into());
        }
        let args = if conditions.is_empty() {
            "with any arguments".to_owned()
        } else {
            format!("when {}", conditions.join(" and "))
        };
        let whose = match self.scope.unwrap_or(default_scope) {
            Scope::Notebook => "from the notebook's code",
            Scope::Agents => "from agents' code",
            Scope::Any => "from the notebook's and agents' code",
        };
        let until = match self.expires_at {
            None => "until you remove it".to_owned(),
            Some(at) => {
                let minutes = at.saturating_sub(now_ms()).div_ceil(60_000);
                match minutes {
                    0 => "(it has expired)".to_owned(),
                    1 => "for the next minute".to_owned(),
                    n => format!("for the next {n} minutes"),
                }
            }
        };
        format!("{verb} {what}, {args}, {whose}, {until}")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::rules;
    use super::*;

    #[test]
    fn a_rule_reads_as_what_it_lets_run() {
        let r = rules(json!([
            {"server": "fx", "tool": "touch", "decision": "allow"},
            {"server": "fx", "decision": "allow", "read_only": true, "scope": "agents"},
            {"server": "fs", "tool": "write", "decision": "allow", "exact_args": true,
             "args": {"path": {"under": "/tmp"}, "mode": {"absent": true}}},
        ]));
        let words: Vec<String> = r
            .rules()
            .iter()
            .map(|r| r.in_words(Scope::Notebook))
            .collect();
        assert_eq!(
            words,
            [
                "Allow every call to fx.touch, with any arguments, from the notebook's code, until you remove it",
                "Allow every call to the tools of fx that the server says are read-only, with any arguments, from agents' code, until you remove it",
                "Allow every call to fs.write, when mode is not given and path is a path under /tmp and no other argument is given, from the notebook's code, until you remove it",
            ]
        );
    }
}
