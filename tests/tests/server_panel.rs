//! What the desktop app's MCP servers tab asks of the engine, against the fixture server:
//! each tool's readable interface (in a preview too), what registering and regenerating
//! changed, where each `${VAR}` comes from without its value, and a server registered while
//! the session starts is callable once it has started.

#![allow(clippy::unwrap_used)]

use ipybox::{CodeExecutor, ServerParams, VariableSource};
use ipybox_tests::{run_with, workspace};

fn fixture() -> ServerParams {
    ServerParams::from_json(&serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
    }))
    .unwrap()
}

#[tokio::test]
async fn interfaces_changes_and_placeholders() {
    let ws = workspace();
    std::fs::write(ws.path().join(".env"), "PANEL_TOKEN=s3cret-value\n").unwrap();
    let e = CodeExecutor::builder().working_dir(ws.path()).build();

    let preview = e.preview_mcp_server(&fixture()).await.unwrap();
    let echo = preview
        .iter()
        .find(|t| t.tool == "echo")
        .expect("echo listed");
    let interface = echo
        .interface
        .as_deref()
        .expect("a preview shows the interface");
    assert!(
        interface.starts_with("class Params(BaseModel):")
            && interface.contains("text: str")
            && interface.contains("def run(params: Params) -> str:"),
        "{interface}"
    );

    let first = e.update_mcp_server("fx", Some(&fixture())).await.unwrap();
    assert_eq!(
        first.changes.added.len(),
        preview.len(),
        "a new server's tools are all added"
    );
    assert!(first.changes.removed.is_empty() && first.changes.changed.is_empty());
    assert_eq!(
        first
            .server
            .tools
            .iter()
            .find(|t| t.tool == "echo")
            .and_then(|t| t.interface.as_deref()),
        Some(interface),
        "the registry keeps what the preview showed"
    );

    let again = e.update_mcp_server("fx", None).await.unwrap();
    assert_eq!(
        again.changes,
        ipybox::ToolChanges::default(),
        "regenerating an unchanged server changes nothing"
    );
    let err = e
        .update_mcp_server("nope", None)
        .await
        .expect_err("unknown");
    assert!(err.to_string().contains("no MCP server \"nope\""), "{err}");

    let names: Vec<String> = ["PANEL_TOKEN", "PANEL_MISSING", "WORKSPACE"]
        .map(String::from)
        .to_vec();
    let found = e.placeholders(&names).unwrap();
    let sources: Vec<Option<VariableSource>> = found.iter().map(|p| p.source).collect();
    assert_eq!(
        sources,
        [
            Some(VariableSource::DotEnv),
            None,
            Some(VariableSource::Workspace)
        ]
    );
    let json = serde_json::to_string(&found).unwrap();
    assert!(!json.contains("s3cret"), "values never leave: {json}");
}

#[tokio::test]
async fn a_server_registered_while_the_session_starts_is_callable() {
    let ws = workspace();
    let e = CodeExecutor::builder().working_dir(ws.path()).build();
    let started = e.start_now();
    // The session reads the registry early in its start; this lands before it is ready.
    e.register_mcp_server("fx", &fixture()).await.unwrap();
    started.await.unwrap();
    let (result, _) = run_with(
        &e,
        "from mcptools.fx.echo import Params, run\nprint(run(Params(text='late')))",
        None,
        |_| Some(true),
    )
    .await;
    assert_eq!(result.unwrap().text.as_deref(), Some("late"));
    e.stop().await.unwrap();
}
