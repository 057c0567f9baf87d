//! Registering MCP servers: `${VAR}` substitution, start-up errors that quote the server,
//! timeouts, pagination, and the `ipybox register` / `exec --approve` commands.

#![allow(clippy::unwrap_used)]

use std::process::Command;
use std::time::{Duration, Instant};

use ipybox::{CodeExecutor, ServerParams};
use ipybox_tests::{ipybox_bin, workspace};

const FIXTURE: &str = env!("CARGO_BIN_EXE_ipybox-fixture-mcp");

fn params(v: serde_json::Value) -> ServerParams {
    ServerParams::from_json(&v).unwrap()
}

#[tokio::test]
async fn placeholders_come_from_the_workspace_env_file_and_unknown_ones_are_named() {
    let ws = workspace();
    std::fs::write(ws.path().join(".env"), "FIXTURE_SECRET=from-dotenv\n").unwrap();
    let p = params(
        serde_json::json!({"command": FIXTURE, "args": ["stdio"], "env": {"SECRET": "${FIXTURE_SECRET}"}}),
    );
    let e = CodeExecutor::builder().working_dir(ws.path()).build();
    e.register_mcp_server("fx", &p).await.unwrap();
    let generated = std::fs::read_to_string(ws.path().join("mcptools/fx/__init__.py")).unwrap();
    assert!(
        !generated.contains("from-dotenv"),
        "resolved secrets never reach generated code"
    );
    e.start().await.unwrap();
    let r = e
        .execute(
            "from mcptools.fx import env\nprint(env.run(env.Params(name='SECRET')))",
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("from-dotenv"),
        "the server got the substituted value"
    );
    let r = e
        .execute(
            "import os\nprint(os.environ.get('FIXTURE_SECRET'), os.environ.get('SECRET'))",
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("None None"),
        "the kernel does not get it"
    );
    e.stop().await.unwrap();

    let bad = params(
        serde_json::json!({"command": FIXTURE, "args": ["stdio"], "env": {"K": "${NOT_SET_ANYWHERE_123}"}}),
    );
    let err = e.register_mcp_server("fx2", &bad).await.unwrap_err();
    assert!(err.to_string().contains("NOT_SET_ANYWHERE_123"), "{err}");
}

#[tokio::test]
async fn start_up_failures_quote_the_server_and_time_out() {
    let ws = workspace();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .mcp_connect_timeout(Duration::from_secs(2))
        .build();
    let p = params(
        serde_json::json!({"command": FIXTURE, "args": ["stdio"], "env": {"FIXTURE_STDERR_ON_START": "error: GITHUB_TOKEN is not set"}}),
    );
    let err = e
        .register_mcp_server("fx", &p)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("GITHUB_TOKEN is not set") && err.contains("\"fx\""),
        "the server's stderr is quoted: {err}"
    );

    let t = Instant::now();
    let p =
        params(serde_json::json!({"command": "sh", "args": ["-c", "echo starting >&2; sleep 60"]}));
    let err = e
        .register_mcp_server("slow", &p)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "the connect timeout applies, not the server's 60 s: {:?}",
        t.elapsed()
    );
    assert!(
        err.contains("no answer within 2 s") && err.contains("starting"),
        "{err}"
    );

    let p = params(serde_json::json!({"command": "/no/such/program"}));
    let err = e
        .register_mcp_server("missing", &p)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot start `/no/such/program`"), "{err}");

    let p = params(serde_json::json!({"url": "http://127.0.0.1:9/mcp"}));
    assert!(
        e.register_mcp_server("down", &p).await.is_err(),
        "an unreachable URL is an error"
    );
    assert!(
        e.register_mcp_server(
            "not-valid",
            &params(serde_json::json!({"command": FIXTURE}))
        )
        .await
        .is_err()
    );
}

#[tokio::test]
async fn all_pages_of_tools_are_generated() {
    let ws = workspace();
    let e = CodeExecutor::builder().working_dir(ws.path()).build();
    let p = params(serde_json::json!({"command": FIXTURE, "args": ["--tools", "25", "stdio"]}));
    let g = e.register_mcp_server("many", &p).await.unwrap();
    assert!(
        g.modules.contains(&"t0".to_owned()) && g.modules.contains(&"t24".to_owned()),
        "{:?}",
        g.modules
    );
    assert!(
        g.modules.len() >= 35,
        "fixture tools plus 25 across three pages: {}",
        g.modules.len()
    );
    let init = std::fs::read_to_string(ws.path().join("mcptools/many/__init__.py")).unwrap();
    assert!(init.contains("t24"), "__init__ lists the tools");
}

#[test]
fn cli_register_then_exec_with_each_approval_mode() {
    let ws = workspace();
    let spec = serde_json::json!({"command": FIXTURE, "args": ["stdio"]}).to_string();
    let file = ws.path().join("fx.json");
    std::fs::write(&file, &spec).unwrap();
    let out = Command::new(ipybox_bin())
        .args(["register", "fx", "--params"])
        .arg(format!("@{}", file.display()))
        .arg("--workspace")
        .arg(ws.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("odd_names  (tool \"odd-names\")") && stdout.contains("  echo"),
        "lists the tools: {stdout}"
    );

    let code = "from mcptools.fx import echo\nfrom mcptools._runtime import ApprovalRejected\ntry:\n    print(echo.run(echo.Params(text='via cli')))\nexcept ApprovalRejected:\n    print('rejected')";
    let exec = |mode: &str| {
        let out = Command::new(ipybox_bin())
            .args(["exec", "--approval", mode, "--workspace"])
            .arg(ws.path())
            .arg(code)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(
        exec("auto").0,
        "via cli\n",
        "a later exec on the workspace runs the registered server"
    );
    assert_eq!(exec("reject").0, "rejected\n");
    assert_eq!(exec("all").0, "via cli\n", "`all` still means `auto`");
    assert_eq!(exec("none").0, "rejected\n", "`none` still means `reject`");
    // A rules file decides first; the same words as `ipybox mcp --approval`.
    let rules = ws.path().join("rules.json");
    let with_rules = |decision: &str| {
        std::fs::write(
            &rules,
            format!(r#"{{"version": 1, "rules": [{{"server": "fx", "tool": "echo", "decision": "{decision}"}}]}}"#),
        )
        .unwrap();
        let out = Command::new(ipybox_bin())
            .args(["exec", "--approval", "rules", "--rules"])
            .arg(&rules)
            .arg("--workspace")
            .arg(ws.path())
            .arg(code)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(with_rules("allow"), "via cli\n", "a rule allows the call");
    assert_eq!(with_rules("reject"), "rejected\n", "a rule rejects it");
    let (stdout, stderr) = exec("ask");
    assert!(
        stderr.contains("Approve tool call fx.echo") && stderr.contains(FIXTURE),
        "the prompt shows the call and the server: {stderr}"
    );
    assert!(stdout == "rejected\n" || stdout == "via cli\n", "{stdout}");

    let out = Command::new(ipybox_bin())
        .args(["register", "fx", "--params", "{\"cmd\": 1}"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid MCP server parameters"));
}
