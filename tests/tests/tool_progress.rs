//! Progress and log messages of a long tool call: ipybox sends a progress token with each
//! call, the server's progress reports reach the caller (the library's MCP client, and the
//! session's events under the call's request id), and its log messages reach the session's
//! listeners. The fixture's `sleep` tool logs once, then reports after each quarter.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use ipybox::mcp_client::{Hooks, ServerLog, ToolProgress, connect_with};
use ipybox::{CodeExecutor, Event, ServerParams, SessionEvent};
use ipybox_tests::workspace;

fn fixture() -> ServerParams {
    ServerParams::from_json(&serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
    }))
    .unwrap()
}

fn sleep_args(seconds: f64) -> serde_json::Map<String, serde_json::Value> {
    let serde_json::Value::Object(args) = serde_json::json!({ "seconds": seconds }) else {
        unreachable!()
    };
    args
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_hears_each_progress_report_and_log_message_of_a_call() {
    let ws = workspace();
    let logs = Arc::new(Mutex::new(Vec::<ServerLog>::new()));
    let hooks = {
        let logs = logs.clone();
        Hooks::new().on_log(move |log| logs.lock().unwrap().push(log))
    };
    let conn = connect_with(
        "fx",
        &fixture(),
        None,
        ws.path(),
        Duration::from_secs(20),
        hooks,
    )
    .await
    .unwrap();
    let (sink, mut reports) = tokio::sync::mpsc::unbounded_channel();
    let result = conn
        .call_tool_with_progress("sleep", sleep_args(0.4), sink)
        .await
        .unwrap();
    assert_eq!(
        result.content[0].as_text().map(|t| t.text.as_str()),
        Some("slept"),
        "the call itself still answers"
    );
    // Every report comes, the last one possibly just after the answer (rmcp hands each
    // notification to a task of its own); the channel closes once the call is let go.
    let mut seen = Vec::new();
    while let Ok(Some(report)) = tokio::time::timeout(Duration::from_secs(5), reports.recv()).await
    {
        seen.push(report);
    }
    let expected: Vec<ToolProgress> = (1..=4)
        .map(|q| ToolProgress {
            progress: f64::from(q),
            total: Some(4.0),
            message: Some(format!("{q} of 4")),
        })
        .collect();
    assert_eq!(
        seen, expected,
        "the server saw a progress token on the call, and every report it made reached the caller, in order"
    );
    assert_eq!(
        *logs.lock().unwrap(),
        vec![ServerLog {
            level: "info".into(),
            message: "sleeping 0.4 s".into(),
        }],
        "the server's log message reached the hook, with its level"
    );

    // A call nobody follows is answered the same, and its reports go nowhere.
    let plain = conn.call_tool("sleep", sleep_args(0.04)).await.unwrap();
    assert_eq!(plain.is_error, Some(false));
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cells_long_tool_call_reports_progress_as_session_events() {
    let ws = workspace();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .approval_handler(Arc::new(ipybox::AutoApprove))
        .build();
    e.register_mcp_server("fx", &fixture()).await.unwrap();
    e.start().await.unwrap();
    let mut events = e.subscribe();
    let mut stream = e.stream(
        "from mcptools.fx import sleep\nprint(sleep.run(sleep.Params(seconds=0.8)))",
        Default::default(),
    );
    let execution_id = stream.id().to_owned();
    let mut text = None;
    while let Some(event) = stream.next().await {
        if let Event::Result(r) = event.unwrap() {
            text = r.text;
        }
    }
    assert_eq!(text.as_deref(), Some("slept"));

    let mut progress = Vec::new();
    let mut logs = Vec::new();
    let mut call_id = None;
    tokio::time::timeout(Duration::from_secs(10), async {
        // The last report may come a moment after the call's own event.
        while call_id.is_none() || progress.last().map(|p: &(u64, f64)| p.1) != Some(4.0) {
            match events.recv().await.unwrap() {
                SessionEvent::ToolProgress {
                    id,
                    execution_id: of,
                    server,
                    tool,
                    progress: done,
                    total,
                    message,
                } => {
                    assert_eq!((server.as_str(), tool.as_str()), ("fx", "sleep"));
                    assert_eq!(of.as_deref(), Some(execution_id.as_str()), "under its cell");
                    assert_eq!(total, Some(4.0));
                    assert_eq!(message, Some(format!("{done} of 4")));
                    progress.push((id, done));
                }
                SessionEvent::McpServerLog {
                    server,
                    level,
                    message,
                } => logs.push((server, level, message)),
                SessionEvent::ToolCall { request, .. } if request.tool_name() == "sleep" => {
                    call_id = Some(request.id());
                }
                _ => {}
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no final progress report; seen {progress:?}"));
    let call_id = call_id.unwrap();
    assert!(
        progress.iter().all(|(id, _)| *id == call_id),
        "every report carries the call's request id: {progress:?}, call {call_id}"
    );
    assert!(
        progress.windows(2).all(|w| w[0].1 < w[1].1),
        "reports increase: {progress:?}"
    );
    assert_eq!(
        logs,
        vec![("fx".into(), "info".into(), "sleeping 0.8 s".into())],
        "the server's log message is a session event"
    );
    e.stop().await.unwrap();
}
