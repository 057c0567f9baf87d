//! A server's question in the middle of a cell's tool call: whoever answers the session's
//! questions (an elicitor, or the session's listeners) is asked, the answer is checked and
//! reaches the server, and the audit log records the question and the answer — never a
//! secret's value. Without anyone to ask, the server is declined with a reason it sees.
//! The fixture's `ask` tool asks, then returns what came back.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use ipybox::mcp_client::{Answer, Elicitation, Elicitor};
use ipybox::{AuditLog, CodeExecutor, Event, ServerParams, SessionEvent};
use ipybox_tests::workspace;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::{Value, json};

fn fixture() -> ServerParams {
    ServerParams::from_json(&json!({"command": env!("CARGO_BIN_EXE_ipybox-fixture-elicit")}))
        .unwrap()
}

const CELL: &str = "from mcptools.asker import ask\nprint(ask.run(ask.Params()))";

/// What the server received, as its tool returned it.
async fn cell_result(e: &CodeExecutor, code: &str) -> Value {
    let mut stream = e.stream(code, Default::default());
    let mut text = None;
    while let Some(event) = stream.next().await {
        if let Event::Result(r) = event.unwrap() {
            text = r.text;
        }
    }
    serde_json::from_str(text.as_deref().unwrap_or("null")).unwrap()
}

/// A person who accepts, typing their age as text and giving a token.
struct Accepts;

impl Elicitor for Accepts {
    fn elicit(&self, server: &str, request: ElicitRequestParams) -> Answer {
        assert_eq!(server, "asker");
        assert!(matches!(
            request,
            ElicitRequestParams::FormElicitationParams { .. }
        ));
        Box::pin(async {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({
                "email": "ada@example.org", "age": "36", "api_token": "tok-SECRET-42",
            }))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_elicitors_answer_reaches_the_server_and_the_audit_log_keeps_no_secret() {
    let ws = workspace();
    let state = workspace();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .approval_handler(Arc::new(ipybox::AutoApprove))
        .elicitation(Elicitation::By(Arc::new(Accepts)))
        .build();
    let log = AuditLog::at(state.path().join("audit.jsonl"));
    let recording = log.clone().record(ws.path().into(), e.subscribe());
    e.register_mcp_server("asker", &fixture()).await.unwrap();
    e.start().await.unwrap();
    let received = cell_result(&e, CELL).await;
    assert_eq!(
        received,
        json!({"action": "accept", "content": {
            "name": "Ada Lovelace", "email": "ada@example.org", "age": 36, "subscribe": true,
            "api_token": "tok-SECRET-42"}, "reason": null}),
        "the server received the checked values: defaults filled in, the age a number, the token"
    );
    e.stop().await.unwrap();
    drop(e);
    tokio::time::timeout(Duration::from_secs(10), recording)
        .await
        .unwrap()
        .unwrap();
    let entries = log.read_elicitations().unwrap();
    assert_eq!(entries.len(), 1, "one question, one entry: {entries:?}");
    let entry = &entries[0];
    assert_eq!(entry.server, "asker");
    assert_eq!(
        entry.tool.as_deref(),
        Some("ask"),
        "tied to the call it came during"
    );
    assert_eq!(entry.message, "Who is running this analysis?");
    assert_eq!(entry.action, ElicitationAction::Accept);
    assert_eq!(entry.withheld, ["api_token"], "the secret is named");
    assert_eq!(
        entry.values.as_ref().and_then(|v| v.get("email")),
        Some(&json!("ada@example.org"))
    );
    let text = std::fs::read_to_string(log.path()).unwrap();
    assert!(
        !text.contains("tok-SECRET-42"),
        "the token's value is nowhere in the log: {text}"
    );
    let (calls, skipped) = log.read().unwrap();
    assert_eq!(
        (calls.len(), skipped),
        (1, 0),
        "the call is logged too; the question's line is no torn line"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_anyone_to_ask_the_server_is_declined_with_a_reason() {
    let ws = workspace();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .approval_handler(Arc::new(ipybox::AutoApprove))
        .build();
    e.register_mcp_server("asker", &fixture()).await.unwrap();
    e.start().await.unwrap();
    let received = cell_result(&e, CELL).await;
    assert_eq!(received["action"], "decline", "{received}");
    assert!(
        received["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("nobody can answer")),
        "the server sees why: {received}"
    );
    e.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_answers_a_question_tied_to_the_cells_call() {
    let ws = workspace();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .approval_handler(Arc::new(ipybox::AutoApprove))
        .elicitation(Elicitation::Listeners)
        .build();
    e.register_mcp_server("asker", &fixture()).await.unwrap();
    e.start().await.unwrap();
    let mut events = e.subscribe();
    let cell = tokio::spawn({
        let e = e.clone();
        async move { cell_result(&e, CELL).await }
    });
    let question = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let Ok(SessionEvent::ElicitationRequested { question }) = events.recv().await {
                return question;
            }
        }
    })
    .await
    .unwrap();
    let call = question.call.clone().expect("tied to the cell's call");
    assert_eq!(call.tool, "ask");
    assert!(call.execution_id.is_some(), "and to the cell's execution");
    assert_eq!(e.waiting_questions().len(), 1);
    let values = |v: Value| match v {
        Value::Object(m) => Some(m),
        _ => None,
    };
    let bad = e.answer_elicitation(
        question.id,
        ElicitationAction::Accept,
        values(json!({"email": "ada", "age": 3})),
    );
    assert_eq!(
        bad.map_err(|e| e.to_string()),
        Err("Email: it must be an email address, like name@example.com".into())
    );
    e.answer_elicitation(
        question.id,
        ElicitationAction::Accept,
        values(json!({"email": "ada@example.org", "age": 3, "color": "green", "subscribe": false})),
    )
    .unwrap();
    let received = tokio::time::timeout(Duration::from_secs(30), cell)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        received["content"],
        json!({"name": "Ada Lovelace", "email": "ada@example.org", "age": 3, "subscribe": false, "color": "green"})
    );
    assert!(
        e.answer_elicitation(question.id, ElicitationAction::Cancel, None)
            .is_err(),
        "a finished question cannot be answered again"
    );
    e.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_goes_when_its_cell_is_interrupted() {
    let ws = workspace();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .approval_handler(Arc::new(ipybox::AutoApprove))
        .elicitation(Elicitation::Listeners)
        .build();
    e.register_mcp_server("asker", &fixture()).await.unwrap();
    e.start().await.unwrap();
    let mut events = e.subscribe();
    let cell = tokio::spawn({
        let e = e.clone();
        async move {
            let mut stream = e.stream(CELL, Default::default());
            let mut last = None;
            while let Some(event) = stream.next().await {
                last = Some(event.map(|_| ()).map_err(|e| e.to_string()));
            }
            last
        }
    });
    let question = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let Ok(SessionEvent::ElicitationRequested { question }) = events.recv().await {
                return question;
            }
        }
    })
    .await
    .unwrap();
    e.interrupt().await.unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            if let Ok(SessionEvent::ElicitationEnded { answered }) = events.recv().await {
                return answered;
            }
        }
    })
    .await
    .expect("the question ends with its cell");
    assert_eq!(ended.id, question.id);
    assert_eq!(
        ended.action,
        ElicitationAction::Cancel,
        "the server is told it was cancelled"
    );
    assert!(
        e.waiting_questions().is_empty(),
        "nothing waits for an answer any more"
    );
    assert!(
        e.answer_elicitation(question.id, ElicitationAction::Accept, None)
            .is_err(),
        "an answer that comes late is refused"
    );
    tokio::time::timeout(Duration::from_secs(30), cell)
        .await
        .unwrap()
        .unwrap();
    e.stop().await.unwrap();
}
