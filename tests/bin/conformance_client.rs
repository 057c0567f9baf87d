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
//! form as it is offered, with its defaults. A server that asks for a sign-in gets one
//! through ipybox's OAuth client (`ipybox::oauth`), with a browser stand-in that opens the
//! authorization URL and follows its redirects to ipybox's loopback listener, as a person
//! who consents would; a call refused for too narrow a sign-in signs in again with the
//! scope asked for, a few times at most. Sign-ins are kept in a data directory of the run's
//! own. Exits with status 1 and the reason on stderr when a step fails.
//!
//! Suite: <https://github.com/modelcontextprotocol/conformance>.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use ipybox::ServerParams;
use ipybox::mcp_client::{Answer, Elicitor, Hooks, ToolProgress, connect_with};
use ipybox::oauth::{Authorizations, Browser, SignInNeeded, SignInOptions};
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};

const TIMEOUT: Duration = Duration::from_secs(20);

/// Sign-ins a run makes at most: the first, and step-ups when a call needs more scope.
const SIGN_INS: usize = 3;

/// The client ID metadata document the suite's authorization servers accept (they do not
/// fetch it).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// What the suite hands a scenario's client (`MCP_CONFORMANCE_CONTEXT`): a pre-registered
/// client, for the servers that register none.
#[derive(Debug, Default, serde::Deserialize)]
struct Context {
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    client_secret: Option<String>,
}

/// A person who consents at once: opens the authorization URL and follows its redirects
/// back to ipybox's loopback listener.
struct FollowRedirects;

impl Browser for FollowRedirects {
    fn open(&self, url: &str) {
        let url = url.to_owned();
        tokio::spawn(async move {
            let _ = reqwest::get(&url).await;
        });
    }
}

/// Sign in as `needed` asks, widening the scopes granted so far by the one a refused call
/// asked for.
async fn sign_in(needed: &SignInNeeded, context: &Context) -> Result<(), String> {
    let auth = Authorizations::for_home().map_err(|e| e.to_string())?;
    let scopes = match (&needed.scope, &needed.challenge) {
        (Some(_), Some(challenge)) => {
            ipybox::oauth::step_up_scopes(&auth.granted_scopes(&needed.url), challenge, &needed.url)
        }
        _ => Vec::new(),
    };
    let options = SignInOptions {
        client_id: context.client_id.clone(),
        client_secret: context.client_secret.clone(),
        scopes,
        client_metadata_url: Some(CLIENT_METADATA_URL.to_owned()),
        challenge: needed.challenge.clone(),
    };
    let status = auth
        .sign_in(&needed.url, &options, &FollowRedirects, TIMEOUT)
        .await
        .map_err(|e| format!("signing in: {e}"))?;
    let _ = writeln!(std::io::stdout(), "signed in: {status:?}");
    Ok(())
}

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
    let context: Context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let mut sign_ins = 0;
    let params =
        ServerParams::from_json(&serde_json::json!({ "url": url })).map_err(|e| e.to_string())?;
    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = workspace.path().join("mcptools");
    let modules = loop {
        match ipybox::generate_mcp_sources("conformance", &params, &root).await {
            Ok(modules) => break modules,
            Err(e) => match ipybox::oauth::sign_in_needed(&e) {
                Some(needed) if sign_ins < SIGN_INS => {
                    sign_ins += 1;
                    sign_in(needed, &context).await?;
                }
                _ => return Err(format!("registering the server: {e}")),
            },
        }
    };
    let mut out = std::io::stdout();
    let _ = writeln!(out, "registered: modules {modules:?}");
    if scenario == "initialize" {
        return Ok(());
    }
    let connect = || {
        connect_with(
            "conformance",
            &params,
            None,
            workspace.path(),
            TIMEOUT,
            Hooks::new().elicitor(Arc::new(AcceptDefaults)),
        )
    };
    let mut conn = connect().await.map_err(|e| e.to_string())?;
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
        let result = loop {
            let answer = tokio::time::timeout(
                TIMEOUT,
                conn.call_tool_with_progress(&tool, args.clone(), progress.clone()),
            )
            .await
            .map_err(|_| format!("no answer to the call to {tool} within {TIMEOUT:?}"))?;
            match answer {
                Ok(result) => break result,
                Err(e) => match ipybox::oauth::sign_in_needed(&e) {
                    Some(needed) if sign_ins < SIGN_INS => {
                        sign_ins += 1;
                        sign_in(needed, &context).await?;
                        conn.close().await;
                        conn = connect().await.map_err(|e| e.to_string())?;
                    }
                    _ => return Err(e.to_string()),
                },
            }
        };
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

fn main() -> ExitCode {
    // Sign-ins of this run are kept in a data directory of its own, never the person's.
    let home = match tempfile::tempdir() {
        Ok(h) => h,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "ipybox-conformance-client: {e}");
            return ExitCode::FAILURE;
        }
    };
    // SAFETY: no other thread runs yet (the runtime is built below).
    unsafe { std::env::set_var("IPYBOX_HOME", home.path()) };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "ipybox-conformance-client: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(client())
}

async fn client() -> ExitCode {
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
