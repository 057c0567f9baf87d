//! Session events and approvals a dialog can answer: every listener hears the kernel busy
//! and idle, resets, MCP servers starting and crashing, each tool call with its decision and
//! outcome; a pending request is decided by id from anywhere, and withdrawn (listeners told)
//! when nobody decides in time; rules decide first and hand the rest to a person.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use ipybox::{
    ApprovalHandler, ApprovalRequest, CallDecision, CallOutcome, CodeExecutor, DecidedBy, Decision,
    ServerParams, SessionEvent,
};
use ipybox::{Rules, RulesHandler};
use ipybox_tests::workspace;
use tokio::sync::broadcast;

fn fixture() -> ServerParams {
    ServerParams::from_json(&serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
    }))
    .unwrap()
}

/// Leaves every request to whoever decides it by id (a dialog listening to events).
#[derive(Debug)]
struct Person;

impl ApprovalHandler for Person {
    fn handle(&self, request: ApprovalRequest) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            // Keep the request alive until it is decided or withdrawn.
            while !request.is_decided() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    }
}

/// The next event matching `pick`, within 30 s.
async fn next<T>(
    rx: &mut broadcast::Receiver<SessionEvent>,
    mut pick: impl FnMut(&SessionEvent) -> Option<T>,
) -> T {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let event = rx.recv().await.unwrap();
            if let Some(t) = pick(&event) {
                return t;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the event did not come within 30 s"))
}

async fn executor(ws: &std::path::Path, rules: Arc<RulesHandler>) -> CodeExecutor {
    let e = CodeExecutor::builder()
        .working_dir(ws)
        .approval_timeout(Duration::from_secs(8))
        .approval_handler(rules)
        .build();
    e.register_mcp_server("fx", &fixture()).await.unwrap();
    e.start().await.unwrap();
    e
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_first_then_a_person_who_decides_by_id() {
    let ws = workspace();
    let rules = Rules::from_json(
        r#"{"version": 1, "rules": [{"server": "fx", "tool": "add", "decision": "allow"}]}"#,
    )
    .unwrap();
    let handler = Arc::new(RulesHandler::new(rules).then(Arc::new(Person)));
    let e = executor(ws.path(), handler.clone()).await;
    let mut events = e.subscribe();

    // A rule decides `add`; nobody is asked.
    let r = e
        .execute(
            "from mcptools.fx import add\nprint(add.run(add.Params(a=1, b=2)).sum)",
            None,
        )
        .await
        .unwrap();
    assert_eq!(r.text.as_deref(), Some("3"));
    let (decision, by, outcome, json) = next(&mut events, |ev| match ev {
        SessionEvent::ToolCall {
            request,
            decision,
            decided_by,
            outcome,
            ..
        } if request.tool_name() == "add" => Some((
            *decision,
            *decided_by,
            outcome.clone(),
            serde_json::to_value(ev).unwrap(),
        )),
        _ => None,
    })
    .await;
    assert_eq!(decision, CallDecision::Approved);
    assert_eq!(by, DecidedBy::Rule, "a rule decided, and says so");
    assert_eq!(outcome, Some(CallOutcome::Ok));
    assert_eq!(json["type"], "tool_call");
    assert_eq!(
        json["arguments"],
        serde_json::json!({"a": 1, "b": 2}),
        "{json}"
    );
    assert!(json["execution_id"].is_string(), "{json}");

    // No rule matches `echo`: the person is asked, and decides by id from another task.
    let decider = {
        let e = e.clone();
        let mut events = e.subscribe();
        tokio::spawn(async move {
            let request = next(&mut events, |ev| match ev {
                SessionEvent::ApprovalRequested { request } => Some(request.clone()),
                _ => None,
            })
            .await;
            let json = serde_json::to_value(&request).unwrap();
            assert_eq!(json["server"], "fx");
            assert_eq!(json["tool"], "echo");
            assert_eq!(json["arguments"]["text"], "hi");
            assert!(json["execution_id"].is_string(), "{json}");
            assert_eq!(e.pending_approvals().len(), 1);
            assert!(e.decide(request.id(), Decision::Accept));
            assert!(!e.decide(request.id(), Decision::Reject), "decided once");
        })
    };
    let r = e
        .execute(
            "from mcptools.fx.echo import Params, run\nprint(run(Params(text='hi')))",
            None,
        )
        .await
        .unwrap();
    assert_eq!(r.text.as_deref(), Some("hi"));
    decider.await.unwrap();

    // Nobody decides: the request is withdrawn after the approval timeout, listeners told.
    let err = e
        .execute(
            "from mcptools.fx.echo import Params, run\nrun(Params(text='late'))",
            None,
        )
        .await
        .expect_err("times out");
    assert!(err.to_string().contains("ApprovalTimeout"), "{err}");
    let reason = next(&mut events, |ev| match ev {
        SessionEvent::ApprovalWithdrawn { reason, .. } => Some(reason.clone()),
        _ => None,
    })
    .await;
    assert!(reason.contains("in time"), "{reason}");
    let (by, why) = next(&mut events, |ev| match ev {
        SessionEvent::ToolCall {
            decision: CallDecision::TimedOut,
            decided_by,
            reason,
            ..
        } => Some((*decided_by, reason.clone())),
        _ => None,
    })
    .await;
    assert_eq!(by, DecidedBy::Timeout);
    assert!(why.is_some_and(|w| w.contains("within 8 s")));
    assert!(e.pending_approvals().is_empty());

    // The approval timeout changed while the session runs applies to the next request.
    e.set_approval_timeout(Duration::from_secs(1));
    assert_eq!(e.approval_timeout(), Duration::from_secs(1));
    let asked = std::time::Instant::now();
    let err = e
        .execute(
            "from mcptools.fx.echo import Params, run\nrun(Params(text='later'))",
            None,
        )
        .await
        .expect_err("times out sooner");
    assert!(err.to_string().contains("ApprovalTimeout"), "{err}");
    // Well below the 8 s the session started with, with room for a loaded machine.
    assert!(
        asked.elapsed() < Duration::from_secs(4),
        "the new timeout (1 s), not the first (8 s): {:?}",
        asked.elapsed()
    );
    let why = next(&mut events, |ev| match ev {
        SessionEvent::ToolCall {
            decision: CallDecision::TimedOut,
            reason,
            ..
        } => Some(reason.clone()),
        _ => None,
    })
    .await;
    assert!(why.is_some_and(|w| w.contains("within 1 s")));

    // Rules replaced while the session runs: now `echo` is allowed without asking.
    handler.set_rules(
        Rules::from_json(
            r#"{"version": 1, "rules": [{"server": "fx", "tool": "*", "decision": "allow"}]}"#,
        )
        .unwrap(),
    );
    let r = e
        .execute(
            "from mcptools.fx.echo import Params, run\nprint(run(Params(text='ok')))",
            None,
        )
        .await
        .unwrap();
    assert_eq!(r.text.as_deref(), Some("ok"));
    e.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kernel_resets_and_servers_are_heard_by_every_listener() {
    let ws = workspace();
    let rules = Rules::from_json(
        r#"{"version": 1, "rules": [{"server": "fx", "tool": "*", "decision": "allow"}]}"#,
    )
    .unwrap();
    let e = executor(ws.path(), Arc::new(RulesHandler::new(rules))).await;
    let mut a = e.subscribe();
    let mut b = e.subscribe();
    let mut s = e.stream("print(1)", Default::default());
    let id = s.id().to_owned();
    while futures_util::StreamExt::next(&mut s).await.is_some() {}
    for rx in [&mut a, &mut b] {
        let busy = next(rx, |ev| match ev {
            SessionEvent::KernelBusy { execution_id } => Some(execution_id.clone()),
            _ => None,
        })
        .await;
        assert_eq!(busy, id);
        next(rx, |ev| {
            matches!(ev, SessionEvent::KernelIdle).then_some(())
        })
        .await;
    }
    e.reset().await.unwrap();
    next(&mut a, |ev| {
        matches!(ev, SessionEvent::KernelReplaced { reason } if reason == "reset").then_some(())
    })
    .await;

    // A server starts on its first call and is reported when it crashes, with its stderr.
    e.execute(
        "from mcptools.fx.echo import Params, run\nrun(Params(text='x'))",
        None,
    )
    .await
    .unwrap();
    let started = next(&mut a, |ev| match ev {
        SessionEvent::McpServerStarted { server } => Some(server.clone()),
        _ => None,
    })
    .await;
    assert_eq!(started, "fx");
    let _ = e
        .execute(
            "from mcptools.fx.crash import Params, run\nrun(Params())",
            None,
        )
        .await;
    let crashed = next(&mut a, |ev| match ev {
        SessionEvent::McpServerExited { .. } => Some(serde_json::to_value(ev).unwrap()),
        _ => None,
    })
    .await;
    assert_eq!(crashed["server"], "fx");
    assert_eq!(
        crashed["exit"],
        serde_json::json!({"code": 3}),
        "the event carries the status the fixture's crash tool exits with, so a crash that \
         wrote nothing on stderr is still told from a clean exit: {crashed}"
    );
    let json = serde_json::to_value(SessionEvent::McpServerStarted {
        server: "fx".into(),
    })
    .unwrap();
    assert_eq!(
        json,
        serde_json::json!({"type": "mcp_server_started", "server": "fx"})
    );
    e.stop().await.unwrap();
}

/// pip's output reaches listeners line by line while `install_package` runs (the window's
/// live view), and the same lines come back as the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_package_reports_pip_lines_as_they_come() {
    let ws = workspace();
    let e = CodeExecutor::builder().working_dir(ws.path()).build();
    let mut events = e.subscribe();
    let output = e
        .install_package("tabulate==0.9.0")
        .await
        .expect("pip installs it");
    let mut lines = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let SessionEvent::PackageInstall { spec, line } = event {
            assert_eq!(spec, "tabulate==0.9.0");
            lines.push(line);
        }
    }
    assert!(!lines.is_empty(), "pip's lines were sent as events");
    assert_eq!(
        lines.join("\n").trim(),
        output,
        "the events carry pip's whole output, in order"
    );
    let bad = e.install_package("--index-url=http://evil").await;
    assert!(bad.is_err(), "pip options are refused before pip runs");
}
