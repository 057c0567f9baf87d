//! Deciding approval requests by rules, and handing on what no rule decides.

use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::format::{Rule, Rules};
use super::matching::{CallFacts, RuleOutcome};
use crate::approval::{ApprovalHandler, ApprovalRequest, Decision};
use crate::definition::DefinitionChange;
use crate::error::Result;
use crate::events::DecidedBy;

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

impl RulesHandler {
    /// Whether the rules let an agent start the program of `request`: only a rule written
    /// for exactly that (`ipybox` / `start_server`, no wildcard in either) allows it — a
    /// rule that allows every tool call never does. `None`: no such rule decides.
    fn decide_program(
        &self,
        request: &crate::approval::ProgramRequest,
    ) -> Option<crate::approval::ProgramVerdict> {
        use crate::approval::{RULE_SERVER, RULE_TOOL};
        // Only agents ask to start programs: a rule for it without a scope means them.
        let rules = self
            .rules()
            .naming_exactly(RULE_SERVER, RULE_TOOL)
            .with_default_scope(super::format::Scope::Any);
        let facts = CallFacts {
            caller: super::format::Scope::Agents,
            hints: None,
            now_ms: super::format::now_ms(),
        };
        let outcome = rules.decide_with(RULE_SERVER, RULE_TOOL, &request.rule_args(), &facts);
        let rule = outcome.rule.and_then(|i| rules.rules().get(i));
        match (rule, outcome.decision) {
            (Some(rule), Decision::Reject) => {
                tracing::info!(rule = %rule.text(), "{}", outcome.message);
                Some(Err(outcome.message))
            }
            (Some(rule), Decision::Accept) => {
                tracing::info!(rule = %rule.text(), "{}", outcome.message);
                Some(Ok(DecidedBy::Rule))
            }
            _ if self.fallback.is_some() => None,
            _ => Some(Err(format!(
                "no rule lets an agent start the program of \"{}\" on this computer; a person may add one \
                 (server \"{RULE_SERVER}\", tool \"{RULE_TOOL}\", matching its command), or register it with `ipybox register`",
                request.name
            ))),
        }
    }
}

impl ApprovalHandler for RulesHandler {
    fn start_program(
        &self,
        request: crate::approval::ProgramRequest,
    ) -> BoxFuture<'static, crate::approval::ProgramVerdict> {
        match (self.decide_program(&request), &self.fallback) {
            (Some(verdict), _) => Box::pin(std::future::ready(verdict)),
            (None, Some(fallback)) => fallback.start_program(request),
            (None, None) => Box::pin(std::future::ready(Err("no rule allows it".into()))),
        }
    }

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
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::{Value, json};

    use super::super::format::Scope;
    use super::super::testing::{agent, rules};
    use super::*;
    use crate::approval::{Approvals, Refusal, ToolEvent};

    fn program(command: &str) -> crate::approval::ProgramRequest {
        crate::approval::ProgramRequest {
            agent: "an agent".into(),
            name: "helper".into(),
            command: command.into(),
            args: vec!["-c".into(), "x".into()],
            env: Default::default(),
            cwd: None,
            sandboxed: false,
            workspace: "/home/ann/work".into(),
        }
    }

    /// Decides every program as a person would: yes.
    #[derive(Debug)]
    struct Yes;

    impl ApprovalHandler for Yes {
        fn handle(&self, _request: ApprovalRequest) -> BoxFuture<'static, ()> {
            Box::pin(std::future::ready(()))
        }

        fn start_program(
            &self,
            _request: crate::approval::ProgramRequest,
        ) -> BoxFuture<'static, crate::approval::ProgramVerdict> {
            Box::pin(std::future::ready(Ok(DecidedBy::Person)))
        }
    }

    #[tokio::test]
    async fn only_a_rule_written_for_starting_programs_lets_an_agent_start_one() {
        let start = |json: Value| RulesHandler::new(rules(json));
        let wide = start(json!([
            {"server": "*", "tool": "*", "decision": "allow"},
            {"server": "ipybox", "tool": "*", "decision": "allow"},
            {"server": "*", "tool": "start_server", "decision": "allow"}
        ]));
        let refused = wide.start_program(program("sh")).await;
        assert!(
            refused
                .as_ref()
                .is_err_and(|why| why.contains("\"start_server\"")),
            "a rule with a wildcard never starts a program, and the agent hears which rule would: {refused:?}"
        );
        let exact = start(json!([
            {"server": "*", "tool": "*", "decision": "reject"},
            {"server": "ipybox", "tool": "start_server", "args": {"command": {"equals": "uvx"}}, "decision": "allow"}
        ]));
        assert_eq!(
            exact.start_program(program("uvx")).await,
            Ok(DecidedBy::Rule)
        );
        assert!(
            exact.start_program(program("sh")).await.is_err(),
            "another command is not allowed"
        );
        let no = start(json!([
            {"server": "ipybox", "tool": "start_server", "decision": "reject", "reason": "not here"}
        ]))
        .then(Arc::new(Yes));
        assert!(
            no.start_program(program("uvx"))
                .await
                .is_err_and(|why| why.contains("not here")),
            "a rule that rejects decides before the person"
        );
        let ask = start(json!([])).then(Arc::new(Yes));
        assert_eq!(
            ask.start_program(program("sh")).await,
            Ok(DecidedBy::Person),
            "no rule: the person behind the rules decides"
        );
        let wide_then_person =
            start(json!([{"server": "*", "tool": "*", "decision": "allow"}])).then(Arc::new(Yes));
        assert_eq!(
            wide_then_person.start_program(program("sh")).await,
            Ok(DecidedBy::Person),
            "a wildcard rule hands the program to the person, never says yes itself"
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
}
