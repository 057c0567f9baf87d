//! Approval rules: a versioned JSON file that allows or rejects MCP tool calls by server
//! name, tool name and arguments, so that calls can be approved without a person to ask
//! (`--approval rules FILE`, and later the desktop app, which writes the same format).
//!
//! The first rule whose server, tool and argument conditions all match decides; a call that
//! no rule matches is rejected, and the rejection names a rule that would allow it. The
//! format is specified in `docs/approval-rules.md`:
//!
//! ```json
//! {
//!   "version": 1,
//!   "rules": [
//!     {"server": "github", "tool": "get_*", "decision": "allow"},
//!     {"server": "filesystem", "tool": "read_*",
//!      "args": {"path": {"under": "/home/me/project"}}, "decision": "allow"},
//!     {"server": "*", "tool": "delete_*", "decision": "reject",
//!      "reason": "deletions are never allowed"}
//!   ]
//! }
//! ```
//!
//! Rules see the arguments as the kernel code sent them, nothing more: `under` compares paths
//! lexically and does not resolve symlinks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::definition::DefinitionChange;
use crate::error::{Error, Result};
use crate::events::DecidedBy;
use crate::tools::{ApprovalHandler, ApprovalRequest, Decision};

/// The version of the rules format this module reads and writes.
pub const VERSION: u64 = 1;

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
    fn covers(self, caller: Scope) -> bool {
        self == Scope::Any || self == caller
    }
}

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

fn now_ms() -> u64 {
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

impl ArgMatcher {
    fn matches(&self, arg: Option<&Value>) -> bool {
        if self.absent == Some(true) {
            return arg.is_none();
        }
        let Some(arg) = arg else { return false };
        self.equals.as_ref().is_none_or(|v| json_eq(v, arg))
            && self
                .one_of
                .as_ref()
                .is_none_or(|vs| vs.iter().any(|v| json_eq(v, arg)))
            && self
                .glob
                .as_ref()
                .is_none_or(|g| arg.as_str().is_some_and(|s| glob_match(g, s)))
            && self
                .under
                .as_ref()
                .is_none_or(|p| arg.as_str().is_some_and(|s| is_under(p, s)))
    }

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
    /// This rule, made from the waiting request `from`, decides the calls of whoever made
    /// that one: a rule without a scope decides notebooks' calls only, so one made from an
    /// agent's call is scoped to agents (else it would never decide the next such call).
    pub fn scoped_to_caller(mut self, from: &ApprovalRequest) -> Rule {
        if self.scope.is_none() && from.details().client.is_some() {
            self.scope = Some(Scope::Agents);
        }
        self
    }

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

/// A rules file, loaded and checked. The default has no rules (it rejects every call, or
/// with [`RulesHandler::then`] hands every call on).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rules {
    rules: Vec<Rule>,
    path: Option<PathBuf>,
    /// Whose calls a rule without `scope` decides.
    default_scope: Scope,
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

/// Does the rule key `key` (a name, or a JSON Pointer) name the top-level argument `name`
/// or something inside it?
fn names_top_level(key: &str, name: &str) -> bool {
    match key.strip_prefix('/') {
        None => key == name,
        Some(pointer) => {
            let first = pointer.split('/').next().unwrap_or("");
            first.replace("~1", "/").replace("~0", "~") == name
        }
    }
}

fn lookup<'a>(args: &'a Value, key: &str) -> Option<&'a Value> {
    if key.starts_with('/') {
        args.pointer(key)
    } else {
        args.get(key)
    }
}

/// JSON equality, except that numbers compare by value, as Python's `1 == 1.0` does.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            x.as_f64() == y.as_f64()
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Does `text` match `pattern`, where `*` matches any run of characters and `?` one?
fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // Where to resume after the last `*`: its pattern index + 1, and the text it took so far.
    let mut resume: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                pi += 1;
                resume = Some((pi, ti));
            }
            Some(&c) if c == '?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match resume {
                Some((sp, st)) => {
                    pi = sp;
                    ti = st + 1;
                    resume = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The components of an absolute POSIX path after resolving `.`, `..` and empty components
/// without touching the filesystem; `None` for a relative path.
fn normalize(path: &str) -> Option<Vec<&str>> {
    let rest = path.strip_prefix('/')?;
    let mut parts = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    Some(parts)
}

/// Is `path` the directory `prefix` or below it, compared component by component (so
/// `/p-evil` is not under `/p`)?
fn is_under(prefix: &str, path: &str) -> bool {
    match (normalize(prefix), normalize(path)) {
        (Some(prefix), Some(path)) => path.starts_with(&prefix),
        _ => false,
    }
}

/// Decides approval requests by [`Rules`]: accepts what a rule allows, rejects what a rule
/// rejects, and for a call no rule matches either rejects it (telling the kernel code which
/// rule would allow it) or, with [`then`](Self::then), hands it on — "rules first, then ask
/// a person". The rules can be replaced while the session runs.
#[derive(Debug)]
pub struct RulesHandler {
    rules: std::sync::RwLock<Arc<Rules>>,
    fallback: Option<Arc<dyn ApprovalHandler>>,
}

impl RulesHandler {
    /// Decide by `rules`.
    pub fn new(rules: Rules) -> Self {
        RulesHandler {
            rules: std::sync::RwLock::new(Arc::new(rules)),
            fallback: None,
        }
    }

    /// Decide by the rules in the file at `path` (read once, now).
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        Rules::load(path).map(Self::new)
    }

    /// Hand calls no rule matches to `fallback` (a person) instead of rejecting them.
    pub fn then(mut self, fallback: Arc<dyn ApprovalHandler>) -> Self {
        self.fallback = Some(fallback);
        self
    }

    /// The rules in force.
    pub fn rules(&self) -> Arc<Rules> {
        self.rules
            .read()
            .map(|r| r.clone())
            .unwrap_or_else(|e| e.into_inner().clone())
    }

    /// Replace the rules; calls from now on are decided by `rules`.
    pub fn set_rules(&self, rules: Rules) {
        match self.rules.write() {
            Ok(mut r) => *r = Arc::new(rules),
            Err(e) => *e.into_inner() = Arc::new(rules),
        }
    }
}

impl RulesHandler {
    /// Decide `request` as `outcome` of `rules` (one snapshot: the index a decision names is
    /// into these very rules, even when the person saves others meanwhile). `false` when no
    /// rule matched and a fallback (a grant, the person) is to decide.
    fn decide_by(&self, request: &ApprovalRequest, rules: &Rules, outcome: RuleOutcome) -> bool {
        tracing::info!(rule = ?outcome.rule, "{}", outcome.message);
        let text = outcome
            .rule
            .and_then(|i| rules.rules().get(i))
            .map(Rule::text);
        match (text, &self.fallback, outcome.decision) {
            (None, Some(_), _) => return false,
            (Some(rule), _, Decision::Accept) => {
                request.decide_by_rule(Decision::Accept, rule, None)
            }
            (Some(rule), _, Decision::Reject) => {
                request.decide_by_rule(Decision::Reject, rule, Some(outcome.message))
            }
            (None, None, _) => {
                request.decide_as(Decision::Reject, DecidedBy::Rule, Some(outcome.message))
            }
        }
        true
    }

    /// A tool whose definition changed since a person accepted it: rules written for the
    /// tool as it was do not decide it; a person does (`false`: hand it on), or nobody.
    fn decide_changed(&self, request: &ApprovalRequest, change: &DefinitionChange) -> bool {
        if self.fallback.is_some() {
            return false;
        }
        let message =
            crate::definition::pins::refusal(request.server_name(), request.tool_name(), change);
        request.decide_as(Decision::Reject, DecidedBy::Rule, Some(message));
        true
    }
}

impl ApprovalHandler for RulesHandler {
    fn decide_now(&self, request: &ApprovalRequest) -> bool {
        // Whatever a rule (or the lack of one) decides is decided now; only a call handed
        // on to a person waits. The rules are tried once.
        if let Some(change) = &request.details().change {
            return self.decide_changed(request, change);
        }
        let rules = self.rules();
        let outcome = rules.decide_with(
            request.server_name(),
            request.tool_name(),
            request.tool_args(),
            &CallFacts::of(request),
        );
        if self.decide_by(request, &rules, outcome) {
            return true;
        }
        // No rule: whatever comes after the rules (a grant) may still decide now.
        self.fallback
            .as_ref()
            .is_some_and(|fallback| fallback.decide_now(request))
    }

    fn handle(&self, request: ApprovalRequest) -> BoxFuture<'static, ()> {
        let decided = match &request.details().change {
            Some(change) => self.decide_changed(&request, change),
            None => {
                let rules = self.rules();
                let outcome = rules.decide_with(
                    request.server_name(),
                    request.tool_name(),
                    request.tool_args(),
                    &CallFacts::of(&request),
                );
                self.decide_by(&request, &rules, outcome)
            }
        };
        match (&self.fallback, decided) {
            (Some(fallback), false) => fallback.handle(request),
            _ => Box::pin(std::future::ready(())),
        }
    }
}

#[cfg(test)]
mod tests {

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
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::approval::{Approvals, Refusal, ToolEvent};

    fn rules(rules: Value) -> Rules {
        Rules::from_json(&json!({"version": 1, "rules": rules}).to_string()).expect("valid rules")
    }

    fn decide(r: &Rules, server: &str, tool: &str, args: Value) -> (Decision, Option<usize>) {
        let o = r.decide(server, tool, &args);
        (o.decision, o.rule)
    }

    const ACCEPT: Decision = Decision::Accept;
    const REJECT: Decision = Decision::Reject;

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
    fn globs() {
        for (pattern, text, expected) in [
            ("*", "", true),
            ("*", "anything/at all", true),
            ("get_*", "get_issue", true),
            ("get_*", "get_", true),
            ("get_*", "list_issues", false),
            ("get_*", "xget_issue", false),
            ("*_issue", "create_issue", true),
            ("*_issue", "create_issues", false),
            ("?", "a", true),
            ("?", "", false),
            ("?", "ab", false),
            ("a?c", "abc", true),
            ("a?c", "äbc", false),
            ("ä?c", "äbc", true),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("a*b*c", "abcbc", true),
            ("**x", "yyx", true),
            ("", "", true),
            ("", "a", false),
            ("exact", "exact", true),
            ("exact", "Exact", false),
        ] {
            assert_eq!(
                glob_match(pattern, text),
                expected,
                "glob {pattern:?} on {text:?}"
            );
        }
        let r = rules(json!([{"server": "git*", "tool": "get_?", "decision": "allow"}]));
        assert_eq!(decide(&r, "github", "get_x", json!({})), (ACCEPT, Some(0)));
        assert_eq!(decide(&r, "gitlab", "get_y", json!({})), (ACCEPT, Some(0)));
        assert_eq!(decide(&r, "github", "get_xy", json!({})), (REJECT, None));
        assert_eq!(decide(&r, "fs", "get_x", json!({})), (REJECT, None));
    }

    #[test]
    fn equals_and_one_of() {
        let r = rules(json!([
            {"server": "s", "tool": "eq", "args": {"repo": {"equals": "acme/site"}}, "decision": "allow"},
            {"server": "s", "tool": "num", "args": {"n": {"equals": 1}}, "decision": "allow"},
            {"server": "s", "tool": "obj", "args": {"o": {"equals": {"a": 1, "b": [1, "x"]}}}, "decision": "allow"},
            {"server": "s", "tool": "null", "args": {"x": {"equals": null}}, "decision": "allow"},
            {"server": "s", "tool": "one", "args": {"level": {"one_of": ["low", 2, null]}}, "decision": "allow"},
        ]));
        let cases = [
            ("eq", json!({"repo": "acme/site"}), ACCEPT),
            ("eq", json!({"repo": "acme/site2"}), REJECT),
            ("eq", json!({"repo": ["acme/site"]}), REJECT),
            ("num", json!({"n": 1}), ACCEPT),
            ("num", json!({"n": 1.0}), ACCEPT),
            ("num", json!({"n": "1"}), REJECT),
            ("num", json!({"n": 1.5}), REJECT),
            ("obj", json!({"o": {"b": [1.0, "x"], "a": 1}}), ACCEPT),
            ("obj", json!({"o": {"a": 1, "b": [1, "x"], "c": 0}}), REJECT),
            ("obj", json!({"o": {"a": 1, "b": ["x", 1]}}), REJECT),
            ("null", json!({"x": null}), ACCEPT),
            ("null", json!({}), REJECT),
            ("one", json!({"level": "low"}), ACCEPT),
            ("one", json!({"level": 2}), ACCEPT),
            ("one", json!({"level": null}), ACCEPT),
            ("one", json!({"level": "high"}), REJECT),
        ];
        for (tool, args, expected) in cases {
            assert_eq!(
                r.decide("s", tool, &args).decision,
                expected,
                "{tool} with {args}"
            );
        }
    }

    #[test]
    fn glob_matcher_needs_a_string() {
        let r = rules(json!([
            {"server": "s", "tool": "t", "args": {"q": {"glob": "repo:acme/*"}}, "decision": "allow"},
        ]));
        for (args, expected) in [
            (json!({"q": "repo:acme/site"}), ACCEPT),
            (json!({"q": "repo:acme/a/b"}), ACCEPT),
            (json!({"q": "repo:evil/acme/x"}), REJECT),
            (json!({"q": 5}), REJECT),
            (json!({"q": ["repo:acme/site"]}), REJECT),
        ] {
            assert_eq!(r.decide("s", "t", &args).decision, expected, "{args}");
        }
    }

    #[test]
    fn under_is_lexical_and_component_wise() {
        let r = rules(json!([
            {"server": "fs", "tool": "read", "args": {"path": {"under": "/p"}}, "decision": "allow"},
            {"server": "fs", "tool": "deep", "args": {"path": {"under": "/home/me/project/"}}, "decision": "allow"},
        ]));
        for (tool, path, expected) in [
            ("read", json!("/p"), ACCEPT),
            ("read", json!("/p/"), ACCEPT),
            ("read", json!("/p/x/y.txt"), ACCEPT),
            ("read", json!("/p/./x"), ACCEPT),
            ("read", json!("/./p/x"), ACCEPT),
            ("read", json!("/p/x/."), ACCEPT),
            ("read", json!("//p//x"), ACCEPT),
            ("read", json!("/p/a/../b"), ACCEPT),
            ("read", json!("/p/.."), REJECT),
            ("read", json!("/p/../etc/passwd"), REJECT),
            ("read", json!("/p/x/../../etc"), REJECT),
            ("read", json!("/../p/x"), ACCEPT),
            ("read", json!("/p2"), REJECT),
            ("read", json!("/p-evil/x"), REJECT),
            ("read", json!("/"), REJECT),
            ("read", json!("p/x"), REJECT),
            ("read", json!("./p/x"), REJECT),
            ("read", json!("~/p"), REJECT),
            ("read", json!(""), REJECT),
            ("read", json!(["/p/x"]), REJECT),
            ("read", json!(7), REJECT),
            ("read", Value::Null, REJECT),
            ("deep", json!("/home/me/project"), ACCEPT),
            ("deep", json!("/home/me/project/src/main.rs"), ACCEPT),
            ("deep", json!("/home/me/project-evil/x"), REJECT),
            ("deep", json!("/home/me/projec"), REJECT),
            ("deep", json!("/home/me"), REJECT),
        ] {
            assert_eq!(
                r.decide("fs", tool, &json!({ "path": path })).decision,
                expected,
                "{tool} {path}"
            );
        }
        let root = rules(json!([
            {"server": "fs", "tool": "*", "args": {"path": {"under": "/"}}, "decision": "allow"},
        ]));
        assert_eq!(
            decide(&root, "fs", "x", json!({"path": "/etc/passwd"})),
            (ACCEPT, Some(0))
        );
        assert_eq!(
            decide(&root, "fs", "x", json!({"path": "etc"})),
            (REJECT, None),
            "relative paths never match, not even under /"
        );
    }

    #[test]
    fn missing_arguments_and_pointers() {
        let r = rules(json!([
            {"server": "s", "tool": "t", "args": {
                "repo": {"equals": "acme/site"},
                "/options/path": {"under": "/p"},
            }, "decision": "allow"},
        ]));
        let ok = json!({"repo": "acme/site", "options": {"path": "/p/x"}});
        assert_eq!(
            decide(&r, "s", "t", ok),
            (ACCEPT, Some(0)),
            "all conditions hold"
        );
        for args in [
            json!({"repo": "acme/site"}),
            json!({"options": {"path": "/p/x"}}),
            json!({"repo": "acme/site", "options": {"path": "/q"}}),
            json!({"repo": "acme/site", "options": "/p/x"}),
            json!({"repo": "acme/site", "/options/path": "/p/x"}),
            json!({}),
            Value::Null,
            json!(["acme/site"]),
        ] {
            assert_eq!(
                decide(&r, "s", "t", args.clone()),
                (REJECT, None),
                "a missing or failing argument does not match: {args}"
            );
        }
        let escaped = rules(json!([
            {"server": "s", "tool": "t", "args": {"/a~1b/~0c": {"equals": 1}}, "decision": "allow"},
        ]));
        assert_eq!(
            decide(&escaped, "s", "t", json!({"a/b": {"~c": 1}})),
            (ACCEPT, Some(0)),
            "JSON Pointer escapes"
        );
        let indexed = rules(json!([
            {"server": "s", "tool": "t", "args": {"/paths/0": {"under": "/p"}}, "decision": "allow"},
        ]));
        assert_eq!(
            decide(&indexed, "s", "t", json!({"paths": ["/p/a", "/etc"]})),
            (ACCEPT, Some(0)),
            "a pointer may index a list (and checks only that element)"
        );
    }

    #[test]
    fn absent_arguments_and_exact_argument_lists() {
        let r = rules(json!([
            {"server": "s", "tool": "t", "args": {"force": {"absent": true}, "path": {"absent": false}}, "decision": "allow"},
        ]));
        assert_eq!(decide(&r, "s", "t", json!({"path": 1})), (ACCEPT, Some(0)));
        assert_eq!(
            decide(&r, "s", "t", json!({"path": 1, "force": false})),
            (REJECT, None),
            "a given argument is not absent, whatever its value"
        );
        assert_eq!(
            decide(&r, "s", "t", json!({})),
            (REJECT, None),
            "absent: false needs the argument"
        );

        let exact = rules(json!([
            {"server": "s", "tool": "t", "exact_args": true,
             "args": {"repo": {"equals": "site"}, "/opts/depth": {"equals": 1}}, "decision": "allow"},
        ]));
        assert_eq!(
            decide(
                &exact,
                "s",
                "t",
                json!({"repo": "site", "opts": {"depth": 1}})
            ),
            (ACCEPT, Some(0))
        );
        let outcome = exact.decide(
            "s",
            "t",
            &json!({"repo": "site", "opts": {"depth": 1}, "delete": true}),
        );
        assert_eq!(
            (outcome.decision, outcome.rule),
            (REJECT, None),
            "another argument"
        );
        assert!(
            outcome.message.contains("\"delete\""),
            "{}",
            outcome.message
        );

        let bad = Rules::from_json(
            r#"{"version": 1, "rules": [{"server": "s", "tool": "t", "args": {"x": {"absent": true, "equals": 1}}, "decision": "allow"}]}"#,
        )
        .expect_err("absent with a value condition");
        assert!(
            bad.to_string().contains("absent: true cannot be combined"),
            "{bad}"
        );
        let again = Rules::from_json(&exact.to_json()).expect("own output parses");
        assert_eq!(again, exact, "exact_args round-trips");
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

    /// Ask `handler` through a real [`Approvals`], as the tool server does.
    async fn through(
        handler: &RulesHandler,
        tool: &str,
        args: Value,
    ) -> Result<DecidedBy, Refusal> {
        let approvals = Arc::new(Approvals::new(Duration::from_secs(5)));
        let (_guard, mut events) = approvals.listen();
        let a = approvals.clone();
        let tool = tool.to_owned();
        let call =
            tokio::spawn(async move { a.request("github", &tool, &args, "npx github").await });
        let Some(ToolEvent::Requested(request)) = events.recv().await else {
            panic!("a request")
        };
        handler.handle(request.clone()).await;
        assert!(request.is_decided(), "the handler decides at once");
        call.await.expect("joined").map(|approved| approved.by)
    }

    #[tokio::test]
    async fn the_handler_accepts_and_rejects_real_requests() {
        let handler = RulesHandler::new(rules(json!([
            {"server": "github", "tool": "get_*", "decision": "allow"},
            {"server": "*", "tool": "delete_*", "decision": "reject", "reason": "deletions are never allowed"},
        ])));
        assert_eq!(
            through(&handler, "get_issue", json!({"n": 1})).await,
            Ok(DecidedBy::Rule),
            "an allowed call runs, and says a rule decided"
        );
        assert_eq!(
            through(&handler, "delete_repo", json!({})).await,
            Err(Refusal::Rejected(
                "github.delete_repo is rejected by rules[1]: deletions are never allowed".into()
            )),
            "the rule's reason reaches the caller"
        );
        let Err(Refusal::Rejected(reason)) = through(&handler, "create_issue", json!({})).await
        else {
            panic!("an unmatched call is rejected")
        };
        assert!(
            reason.contains(
                r#"add {"server": "github", "tool": "create_issue", "decision": "allow"}"#
            ),
            "the caller is told which rule to add: {reason}"
        );
    }

    /// A request for `github.TOOL` as kernel code would make it, with `details`, decided by
    /// `handler`: who decided, the rule that did, or the refusal.
    async fn detailed(
        handler: &RulesHandler,
        tool: &str,
        details: crate::definition::CallDetails,
    ) -> (Result<DecidedBy, Refusal>, Option<String>) {
        let approvals = Arc::new(Approvals::new(Duration::from_secs(5)));
        let (_guard, mut events) = approvals.listen();
        let a = approvals.clone();
        let tool = tool.to_owned();
        let call = tokio::spawn(async move {
            a.request_with("github", &tool, &json!({}), "npx github", details)
                .await
        });
        let Some(ToolEvent::Requested(request)) = events.recv().await else {
            panic!("a request")
        };
        handler.handle(request.clone()).await;
        let by = call.await.expect("joined").map(|approved| approved.by);
        (by, request.rule().map(str::to_owned))
    }

    fn tool(read_only: Option<bool>) -> crate::definition::ToolDefinition {
        crate::definition::ToolDefinition {
            name: "get_issue".into(),
            hints: crate::definition::ToolHints {
                read_only,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn agent() -> Option<crate::definition::Client> {
        Some(crate::definition::Client {
            name: "claude-code".into(),
            version: Some("2.1".into()),
            session: "4f2a".into(),
            connected_at_ms: 1,
        })
    }

    #[tokio::test]
    async fn read_only_scope_expiry_and_changed_tools() {
        use crate::definition::{CallDetails, DefinitionChange};
        let handler = RulesHandler::new(rules(json!([
            {"server": "github", "read_only": true, "decision": "allow"},
        ])));
        let read_only = CallDetails {
            tool: Some(tool(Some(true))),
            ..Default::default()
        };
        let (by, rule) = detailed(&handler, "get_issue", read_only.clone()).await;
        assert_eq!(by, Ok(DecidedBy::Rule), "the server says read-only");
        assert_eq!(
            rule.as_deref(),
            Some(r#"{"server":"github","tool":"*","decision":"allow","read_only":true}"#),
            "the deciding rule, as the file writes it (a left-out tool is every tool)"
        );
        let (by, _) = detailed(
            &handler,
            "get_issue",
            CallDetails {
                tool: Some(tool(None)),
                ..Default::default()
            },
        )
        .await;
        assert!(
            matches!(by, Err(Refusal::Rejected(_))),
            "no claim, no match"
        );

        // A rule without a scope is for notebooks: an agent's call is not decided by it.
        let (by, _) = detailed(
            &handler,
            "get_issue",
            CallDetails {
                client: agent(),
                ..read_only.clone()
            },
        )
        .await;
        assert!(matches!(by, Err(Refusal::Rejected(_))), "{by:?}");
        let for_agents = RulesHandler::new(rules(json!([
            {"server": "github", "read_only": true, "scope": "agents", "decision": "allow"},
        ])));
        let agents_call = CallDetails {
            client: agent(),
            ..read_only.clone()
        };
        assert_eq!(
            detailed(&for_agents, "get_issue", agents_call.clone())
                .await
                .0,
            Ok(DecidedBy::Rule)
        );
        assert!(
            detailed(&for_agents, "get_issue", read_only.clone())
                .await
                .0
                .is_err(),
            "an agents' rule does not decide a notebook's call"
        );
        let any = RulesHandler::new(
            rules(json!([{"server": "github", "decision": "allow"}]))
                .with_default_scope(Scope::Any),
        );
        assert_eq!(
            detailed(&any, "get_issue", agents_call).await.0,
            Ok(DecidedBy::Rule)
        );

        // A grant that expired decides nothing.
        let expired = RulesHandler::new(rules(json!([
            {"server": "github", "decision": "allow", "expires_at": 1000},
        ])));
        assert!(
            detailed(&expired, "get_issue", read_only.clone())
                .await
                .0
                .is_err()
        );

        // A tool whose definition changed: the rule that allows it does not decide it.
        let changed = CallDetails {
            change: Some(DefinitionChange {
                accepted: Some(tool(Some(true))),
                now: tool(Some(true)),
            }),
            ..read_only
        };
        let Err(Refusal::Rejected(reason)) = detailed(&handler, "get_issue", changed).await.0
        else {
            panic!("held")
        };
        assert!(reason.contains("ipybox register github"), "{reason}");
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
