//! The registry as a form drives it: preview a server's tools without registering it,
//! list registered servers with their tools, re-register with new parameters (the running
//! server restarts), unregister.

#![allow(clippy::unwrap_used)]

use ipybox::{CodeExecutor, ServerParams};
use ipybox_tests::{run_with, workspace};

fn fixture(mark: &str) -> ServerParams {
    ServerParams::from_json(&serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
        "env": {"MARK": mark},
    }))
    .unwrap()
}

async fn mark(e: &CodeExecutor) -> ipybox::Result<ipybox::CodeExecutionResult> {
    run_with(
        e,
        "from mcptools.fx.env import Params, run\nprint(run(Params(name='MARK')))",
        None,
        |_| Some(true),
    )
    .await
    .0
}

#[tokio::test]
async fn preview_list_reregister_and_unregister() {
    let ws = workspace();
    let e = CodeExecutor::builder().working_dir(ws.path()).build();
    let preview = e.preview_mcp_server(&fixture("one")).await.unwrap();
    let echo = preview
        .iter()
        .find(|t| t.tool == "echo")
        .expect("echo listed");
    assert_eq!(echo.module, "echo");
    assert!(
        echo.description
            .as_deref()
            .unwrap_or("")
            .contains("unchanged")
    );
    assert!(
        !ws.path().join("mcptools").exists(),
        "a preview writes nothing"
    );
    assert!(e.servers().unwrap().is_empty());

    e.register_mcp_server("fx", &fixture("one")).await.unwrap();
    let servers = e.servers().unwrap();
    assert_eq!(servers.len(), 1);
    assert_eq!(servers[0].name, "fx");
    assert_eq!(servers[0].tools.len(), preview.len(), "{servers:?}");
    e.start().await.unwrap();
    assert_eq!(mark(&e).await.unwrap().text.as_deref(), Some("one"));

    // Re-registered with other parameters while running: the server restarts with them.
    e.register_mcp_server("fx", &fixture("two")).await.unwrap();
    assert_eq!(mark(&e).await.unwrap().text.as_deref(), Some("two"));

    assert!(e.unregister_mcp_server("fx").await.unwrap());
    assert!(e.servers().unwrap().is_empty());
    assert!(
        !ws.path().join("mcptools/fx").exists(),
        "its package is removed"
    );
    assert!(
        !e.unregister_mcp_server("fx").await.unwrap(),
        "unregistering twice says so"
    );
    let err = mark(&e).await.expect_err("it is gone");
    assert!(err.to_string().contains("fx"), "{err}");
    e.stop().await.unwrap();
}
