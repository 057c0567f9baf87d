//! The client that the MCP conformance suite's client mode runs
//! (`tests/conformance/run-client.sh`): ipybox's own MCP client, driven the way ipybox
//! drives it. It registers the suite's server as `ipybox register` does (connect, list the
//! tools, write the Python API), then opens a session as the tool server does for a kernel's
//! call and calls the scenario's tool.
//!
//! ```text
//! MCP_CONFORMANCE_SCENARIO=NAME ipybox-conformance-client URL
//! ```
//!
//! A server that asks a question (elicitation) gets the answer of a person who accepts the
//! form as it is offered, with its defaults. Exits with status 1 and the reason on stderr
//! when a step fails.
//!
//! Suite: <https://github.com/modelcontextprotocol/conformance>.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use ipybox::ServerParams;
use ipybox::mcp_client::{Answer, Elicitor, Hooks, ToolProgress, connect_with};
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};

const TIMEOUT: Duration = Duration::from_secs(20);

/// A person who accepts every form unchanged: the client fills in the defaults.
struct AcceptDefaults;

impl Elicitor for AcceptDefaults {
    fn elicit(&self, _server: &str, _request: ElicitRequestParams) -> Answer {
        let mut answer = ElicitResult::new(ElicitationAction::Accept);
        answer.content = Some(serde_json::json!({}));
        Box::pin(std::future::ready(answer))
    }
}

/// The tool each scenario's server expects a call to, with its arguments; `None`: every tool
/// it lists, without arguments.
fn scenario_call(scenario: &str) -> Option<(&'static str, serde_json::Value)> {
    match scenario {
        "tools_call" => Some(("add_numbers", serde_json::json!({"a": 5, "b": 3}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", serde_json::json!({})))
        }
        "sse-retry" => Some(("test_reconnection", serde_json::json!({}))),
        _ => None,
    }
}

async fn run(scenario: &str, url: &str) -> Result<(), String> {
    let params =
        ServerParams::from_json(&serde_json::json!({ "url": url })).map_err(|e| e.to_string())?;
    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = workspace.path().join("mcptools");
    let modules = ipybox::generate_mcp_sources("conformance", &params, &root)
        .await
        .map_err(|e| format!("registering the server: {e}"))?;
    let mut out = std::io::stdout();
    let _ = writeln!(out, "registered: modules {modules:?}");
    if scenario == "initialize" {
        return Ok(());
    }
    let conn = connect_with(
        "conformance",
        &params,
        None,
        workspace.path(),
        TIMEOUT,
        Hooks::new().elicitor(Arc::new(AcceptDefaults)),
    )
    .await
    .map_err(|e| e.to_string())?;
    let calls: Vec<(String, serde_json::Value)> = match scenario_call(scenario) {
        Some((tool, args)) => vec![(tool.to_owned(), args)],
        None => conn
            .list_tools()
            .await
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|t| (t.name.to_string(), serde_json::json!({})))
            .collect(),
    };
    for (tool, args) in calls {
        let serde_json::Value::Object(args) = args else {
            unreachable!("arguments are objects")
        };
        let (progress, mut reports) = tokio::sync::mpsc::unbounded_channel::<ToolProgress>();
        let result =
            tokio::time::timeout(TIMEOUT, conn.call_tool_with_progress(&tool, args, progress))
                .await
                .map_err(|_| format!("no answer to the call to {tool} within {TIMEOUT:?}"))?
                .map_err(|e| e.to_string())?;
        while let Ok(p) = reports.try_recv() {
            let _ = writeln!(out, "progress of {tool}: {p:?}");
        }
        let _ = writeln!(
            out,
            "called {tool}: {}",
            serde_json::to_string(&result).unwrap_or_default()
        );
    }
    conn.close().await;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let Some(url) = std::env::args().nth(1) else {
        let _ = writeln!(
            std::io::stderr(),
            "usage: MCP_CONFORMANCE_SCENARIO=NAME ipybox-conformance-client URL"
        );
        return ExitCode::from(2);
    };
    match run(&scenario, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "ipybox-conformance-client ({scenario}): {e}"
            );
            ExitCode::FAILURE
        }
    }
}
