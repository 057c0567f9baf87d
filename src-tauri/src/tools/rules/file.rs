//! The rules file: reading and checking it (errors name the file, the rule and the
//! fault), and writing rules back in the same format.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::format::{ArgMatcher, Rule, RuleDecision, Rules, Scope};
use crate::error::{Error, Result};

/// The version of the rules format this module reads and writes.
pub const VERSION: u64 = 1;

#[derive(Serialize)]
struct File<'a> {
    version: u64,
    rules: &'a [Rule],
}

impl Rules {
    /// Read and check a rules file. Errors are [`Error::Config`] naming the file and, for a
    /// bad rule, its index (`rules[2]`).
    pub fn load(path: impl AsRef<Path>) -> Result<Rules> {
        let path = path.as_ref();
        let source = format!("approval rules {}", path.display());
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::config(format!("{source}: cannot read the file")).because(e))?;
        let rules = parse(&text).map_err(|e| Error::config(source.to_string()).because(e))?;
        Ok(Rules {
            rules,
            path: Some(path.to_owned()),
            default_scope: Scope::default(),
        })
    }

    /// Parse and check rules given as JSON text, in the file format.
    pub fn from_json(text: &str) -> Result<Rules> {
        let rules = parse(text).map_err(|e| Error::config("approval rules").because(e))?;
        Ok(Rules {
            rules,
            path: None,
            default_scope: Scope::default(),
        })
    }

    /// Check rules built in code (e.g. by a settings UI).
    pub fn new(rules: Vec<Rule>) -> Result<Rules> {
        for (i, rule) in rules.iter().enumerate() {
            rule.validate()
                .map_err(|e| Error::config(format!("approval rules: rules[{i}]")).because(e))?;
        }
        Ok(Rules {
            rules,
            path: None,
            default_scope: Scope::default(),
        })
    }

    /// Let rules without `scope` decide `scope`'s calls: `Any` for a rules file given for
    /// one process whose calls are all of one kind (`ipybox mcp --approval rules FILE`).
    /// The default, `Notebook`, keeps the app's rules from deciding agents' calls.
    pub fn with_default_scope(mut self, scope: Scope) -> Self {
        self.default_scope = scope;
        self
    }

    /// Whose calls a rule without `scope` decides.
    pub fn default_scope(&self) -> Scope {
        self.default_scope
    }

    /// The rules, in matching order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The file the rules came from, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The rules in the file format, pretty-printed.
    pub fn to_json(&self) -> String {
        let file = File {
            version: VERSION,
            rules: &self.rules,
        };
        serde_json::to_string_pretty(&file).unwrap_or_default()
    }
}

/// Parse the file format; errors say where (`rules[2]`) but not which file.
fn parse(text: &str) -> std::result::Result<Vec<Rule>, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let Value::Object(mut top) = value else {
        return Err(r#"expected a JSON object with "version" and "rules""#.into());
    };
    match top.remove("version") {
        None => {
            return Err(format!(
                r#"missing "version" (this ipybox reads version {VERSION})"#
            ));
        }
        Some(v) if v.as_u64() == Some(VERSION) => {}
        Some(v) => {
            return Err(format!(
                "unsupported version {v} (this ipybox reads version {VERSION})"
            ));
        }
    }
    let rules = top.remove("rules");
    if let Some(key) = top.keys().next() {
        return Err(format!(
            "unknown field `{key}` at the top level, expected `version` or `rules`"
        ));
    }
    let Some(Value::Array(rules)) = rules else {
        return Err(r#""rules" must be a list of rules"#.into());
    };
    rules
        .into_iter()
        .enumerate()
        .map(|(i, rule)| parse_rule(rule).map_err(|e| format!("rules[{i}]: {e}")))
        .collect()
}

/// Arguments are parsed one by one so that an error names the argument.
fn parse_rule(rule: Value) -> std::result::Result<Rule, String> {
    let Value::Object(mut fields) = rule else {
        return Err(format!("expected an object, got {rule}"));
    };
    let args = match fields.remove("args") {
        None => serde_json::Map::new(),
        Some(Value::Object(args)) => args,
        Some(other) => return Err(format!("args must be an object, got {other}")),
    };
    let mut rule: Rule =
        serde_json::from_value(Value::Object(fields)).map_err(|e| e.to_string())?;
    for (key, matcher) in args {
        let matcher =
            serde_json::from_value(matcher).map_err(|e| format!("argument {key:?}: {e}"))?;
        rule.args.insert(key, matcher);
    }
    rule.validate()?;
    Ok(rule)
}

/// Only `~0` and `~1` are escapes in a JSON Pointer (RFC 6901, section 3).
fn check_pointer(pointer: &str) -> std::result::Result<(), String> {
    let mut chars = pointer.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return Err("invalid JSON Pointer: `~` must be followed by 0 or 1".into());
        }
    }
    Ok(())
}

impl ArgMatcher {
    fn validate(&self) -> std::result::Result<(), String> {
        let others = self.equals.is_some()
            || self.one_of.is_some()
            || self.glob.is_some()
            || self.under.is_some();
        if !others && self.absent.is_none() {
            return Err("no condition (give equals, one_of, glob, under or absent)".into());
        }
        if others && self.absent == Some(true) {
            return Err(
                "absent: true cannot be combined with other conditions (an absent argument has no value to compare)"
                    .into(),
            );
        }
        if self.one_of.as_ref().is_some_and(Vec::is_empty) {
            return Err("one_of is empty, so the rule could never match".into());
        }
        if let Some(p) = &self.under
            && !p.starts_with('/')
        {
            return Err(format!("under must be an absolute path, got {p:?}"));
        }
        Ok(())
    }
}

impl Rule {
    fn validate(&self) -> std::result::Result<(), String> {
        if self.server.is_empty() {
            return Err("empty server name (use \"*\" for any server)".into());
        }
        if self.tool.is_empty() {
            return Err("empty tool name (use \"*\" for any tool)".into());
        }
        if self.reason.is_some() && self.decision == RuleDecision::Allow {
            return Err(
                "reason is only for reject rules (it is what the code is told); use comment for notes"
                    .into(),
            );
        }
        for (key, matcher) in &self.args {
            let fail = |msg: String| format!("argument {key:?}: {msg}");
            if key.is_empty() {
                return Err("empty argument name".into());
            }
            if key.starts_with('/') {
                check_pointer(key).map_err(fail)?;
            }
            matcher.validate().map_err(fail)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::super::testing::{ACCEPT, REJECT, rules};
    use super::*;

    #[test]
    fn load_errors_name_the_file_the_rule_and_the_fault() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("my-rules.json");
        let good = json!({"server": "s", "tool": "t", "decision": "allow"});
        let with = |bad: Value| json!({"version": 1, "rules": [good, bad]}).to_string();
        let cases = [
            (
                with(json!({"server": "s", "tool": "t", "decison": "allow"})),
                "rules[1]: unknown field `decison`",
            ),
            (
                with(json!({"server": "s", "tool": "t", "decision": "alow"})),
                "rules[1]: unknown variant `alow`, expected `allow` or `reject`",
            ),
            (
                with(json!({"server": "s", "tool": "t"})),
                "rules[1]: missing field `decision`",
            ),
            (
                with(json!({"server": "", "tool": "t", "decision": "allow"})),
                "rules[1]: empty server name",
            ),
            (
                with(json!({"server": "s", "tool": "", "decision": "allow"})),
                "rules[1]: empty tool name",
            ),
            (
                with(
                    json!({"server": "s", "tool": "t", "decision": "allow", "args": {"p": {"prefix": "/x"}}}),
                ),
                "rules[1]: argument \"p\": unknown field `prefix`, expected one of `equals`, `one_of`, `glob`, `under`",
            ),
            (
                with(json!({"server": "s", "tool": "t", "decision": "allow", "args": {"p": {}}})),
                "rules[1]: argument \"p\": no condition",
            ),
            (
                with(
                    json!({"server": "s", "tool": "t", "decision": "allow", "args": {"p": {"under": "rel/x"}}}),
                ),
                "rules[1]: argument \"p\": under must be an absolute path",
            ),
            (
                with(
                    json!({"server": "s", "tool": "t", "decision": "allow", "args": {"p": {"one_of": []}}}),
                ),
                "rules[1]: argument \"p\": one_of is empty",
            ),
            (
                with(
                    json!({"server": "s", "tool": "t", "decision": "allow", "args": {"/a~2": {"equals": 1}}}),
                ),
                "rules[1]: argument \"/a~2\": invalid JSON Pointer",
            ),
            (
                with(json!({"server": "s", "tool": "t", "decision": "allow", "args": ["p"]})),
                "rules[1]: args must be an object",
            ),
            (
                with(json!({"server": "s", "tool": "t", "decision": "allow", "reason": "x"})),
                "rules[1]: reason is only for reject rules",
            ),
            (with(json!("allow all")), "rules[1]: expected an object"),
            (
                json!({"version": 2, "rules": []}).to_string(),
                "unsupported version 2 (this ipybox reads version 1)",
            ),
            (
                json!({"version": "1", "rules": []}).to_string(),
                "unsupported version \"1\"",
            ),
            (json!({"rules": []}).to_string(), "missing \"version\""),
            (
                json!({"version": 1, "rules": [], "default": "allow"}).to_string(),
                "unknown field `default` at the top level",
            ),
            (
                json!({"version": 1}).to_string(),
                "\"rules\" must be a list",
            ),
            ("{\"version\": 1, ".to_owned(), "not valid JSON"),
            ("[]".to_owned(), "expected a JSON object"),
        ];
        for (text, expected) in cases {
            std::fs::write(&path, &text).expect("write");
            let err = Rules::load(&path).expect_err(&text);
            assert!(matches!(err, Error::Config { .. }), "{err:?}");
            let msg = err.to_string();
            let prefix = format!("approval rules {}: ", path.display());
            assert!(msg.starts_with(&prefix), "names the file: {msg}");
            assert!(msg.contains(expected), "{msg:?} should say {expected:?}");
        }
        let missing = dir.path().join("absent.json");
        let err = Rules::load(&missing).expect_err("no file");
        assert!(
            err.to_string().contains("absent.json") && matches!(err, Error::Config { .. }),
            "{err}"
        );
    }

    #[test]
    fn round_trips_through_the_file_format() {
        let r = rules(json!([
            {"server": "a", "tool": "b", "args": {
                "x": {"equals": null}, "y": {"one_of": [1, "2"], "glob": "*"}, "/z/0": {"under": "/p"}
            }, "decision": "allow", "comment": "note"},
            {"server": "*", "tool": "*", "decision": "reject", "reason": "why"},
        ]));
        let again = Rules::from_json(&r.to_json()).expect("own output parses");
        assert_eq!(again, r, "to_json and from_json round trip, null included");
        assert_eq!(
            Rules::new(r.rules().to_vec()).expect("valid"),
            r,
            "rules built in code check the same"
        );
        let bad = Rule {
            server: String::new(),
            ..r.rules()[1].clone()
        };
        assert!(Rules::new(vec![bad]).is_err(), "new() validates");
    }

    #[test]
    fn the_shipped_example_loads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/approval-rules.json");
        let r = Rules::load(&path).expect("the example is valid");
        assert!(!r.rules().is_empty());
        assert_eq!(
            r.decide(
                "filesystem",
                "read_text_file",
                &json!({"path": "/home/me/project/README.md"})
            )
            .decision,
            ACCEPT
        );
        assert_eq!(
            r.decide(
                "filesystem",
                "read_text_file",
                &json!({"path": "/home/me/project/../.ssh/id_ed25519"})
            )
            .decision,
            REJECT
        );
    }
}
