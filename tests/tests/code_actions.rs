//! Code actions that become tools, as the codeact skill has an agent use them: an rmcp
//! client registers a reference MCP server, lists the tools, runs a code action calling two
//! of them, saves it with `save_code_action`, resets the kernel and calls the saved tool from
//! a new cell — over stdio and over Streamable HTTP. Bad names and code that does not import
//! (a syntax error, a module the kernel cannot find) are refused, and nothing is written
//! outside `gentools/`.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use ipybox_tests::mcp_client::{Client, call, call_ok, stdio_client, text};
use ipybox_tests::{everything_params, ipybox_bin, wait_for, workspace};
use rmcp::ServiceExt;

async fn refused(c: &Client, tool: &str, args: serde_json::Value) -> String {
    let r = call(c, tool, args.clone()).await;
    assert_eq!(
        r.is_error,
        Some(true),
        "{tool} {args} is refused: {}",
        text(&r)
    );
    text(&r)
}

fn sum_and_echo(code: &str) -> serde_json::Value {
    serde_json::json!({
        "name": "sum_and_echo",
        "category": "demo",
        "description": "Add two numbers with get_sum, then echo the sentence.",
        "parameters": [
            {"name": "a", "type": "int", "description": "The first number."},
            {"name": "b", "type": "int", "description": "The second number.", "default": 1},
        ],
        "returns": {"type": "str", "description": "The echoed sentence."},
        "code": code,
    })
}

const CODE: &str = "from mcptools.everything import echo, get_sum\n\
                    sentence = get_sum.run(get_sum.Params(a=a, b=b))\n\
                    return echo.run(echo.Params(message=sentence))";

/// What the skill describes, start to end, on one MCP session.
async fn the_skill(c: &Client, ws: &Path) {
    call_ok(
        c,
        "register_mcp_server",
        serde_json::json!({"server_name": "everything", "server_params": everything_params()}),
    )
    .await;

    // Discover: interfaces, compactly, without reading files one by one.
    let listing = call_ok(c, "list_tools", serde_json::json!({})).await;
    assert!(listing.contains("mcptools.everything.echo"), "{listing}");
    assert!(listing.contains("mcptools.everything.get_sum"), "{listing}");
    assert!(
        listing.contains("class Params(BaseModel):") && listing.contains("def run(params: Params)"),
        "interfaces, not just names: {listing}"
    );
    let narrowed = call_ok(c, "list_tools", serde_json::json!({"server": "everything"})).await;
    assert_eq!(narrowed, listing, "one server registered: the same");
    let none = call_ok(c, "list_tools", serde_json::json!({"server": "nope"})).await;
    assert!(none.contains("\"nope\""), "{none}");

    // Compose two tools in one cell, intermediate results in variables.
    let out = call_ok(
        c,
        "execute_ipython_cell",
        serde_json::json!({"code": "from mcptools.everything import echo, get_sum\ns = get_sum.run(get_sum.Params(a=2, b=3))\nprint(echo.run(echo.Params(message=s)))"}),
    )
    .await;
    assert_eq!(out, "Echo: The sum of 2 and 3 is 5.");

    // Save it; the answer is its interface.
    let saved = call_ok(c, "save_code_action", sum_and_echo(CODE)).await;
    assert!(
        saved.contains("from gentools.demo.sum_and_echo.api import run"),
        "{saved}"
    );
    assert!(
        saved.contains("def run(a: int, b: int = 1) -> str:"),
        "{saved}"
    );
    let listing = call_ok(c, "list_tools", serde_json::json!({"server": "demo"})).await;
    assert!(
        listing.contains("gentools.demo.sum_and_echo") && listing.contains("The first number."),
        "{listing}"
    );

    // A fresh kernel calls the saved tool from a new cell.
    call_ok(c, "reset", serde_json::json!({})).await;
    let out = call_ok(
        c,
        "execute_ipython_cell",
        serde_json::json!({"code": "from gentools.demo.sum_and_echo.api import run\nprint(run(4, 5))\nprint(run(a=10))"}),
    )
    .await;
    assert_eq!(
        out,
        "Echo: The sum of 4 and 5 is 9.\nEcho: The sum of 10 and 1 is 11."
    );

    // An import the code guards itself (an optional module) is its own business.
    let guarded = format!(
        "try:\n    import ipybox_no_such_module\nexcept ImportError:\n    ipybox_no_such_module = None\n{CODE}"
    );
    call_ok(c, "save_code_action", sum_and_echo(&guarded)).await;

    // Refused: names that are no identifiers (a path among them), and code that does not
    // import — which leaves the saved version in place.
    for (field, value) in [
        ("name", "../../evil"),
        ("name", "bad name"),
        ("category", "x/y"),
        ("category", "import"),
    ] {
        let mut args = sum_and_echo(CODE);
        args[field] = value.into();
        let why = refused(c, "save_code_action", args).await;
        assert!(why.contains("not a Python identifier"), "{why}");
    }
    let mut broken = sum_and_echo(CODE);
    broken["models"] = "class Broken(BaseModel:\n    x: int".into();
    let why = refused(c, "save_code_action", broken).await;
    assert!(
        why.contains("does not import") && why.contains("SyntaxError"),
        "{why}"
    );
    let why = refused(c, "save_code_action", sum_and_echo("return (")).await;
    assert!(why.contains("does not import"), "{why}");
    // The code is the body of run(): its imports would fail only at the first call, so the
    // modules they name are looked for when it is saved.
    for (code, module) in [
        (
            "from ipybox_no_such_module import x\nreturn x(a, b)",
            "ipybox_no_such_module",
        ),
        (
            "import mcptools.no_such_server.tool as tool\nreturn tool.run(a)",
            "mcptools.no_such_server.tool",
        ),
    ] {
        let why = refused(c, "save_code_action", sum_and_echo(code)).await;
        assert!(
            why.contains("does not import")
                && why.contains(&format!(
                    "the code imports {module}, which the kernel cannot find"
                )),
            "{why}"
        );
    }
    let out = call_ok(
        c,
        "execute_ipython_cell",
        serde_json::json!({"code": "from gentools.demo.sum_and_echo import api\nprint(api.run(1, 2))"}),
    )
    .await;
    assert_eq!(
        out, "Echo: The sum of 1 and 2 is 3.",
        "the good version stayed"
    );

    // Nothing outside gentools/ was written, and nothing stray is left in it.
    let mut top: Vec<String> = std::fs::read_dir(ws)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    top.sort();
    for name in &top {
        assert!(
            ["gentools", "images", "mcptools"].contains(&name.as_str()),
            "only what ipybox writes is in the workspace: {top:?}"
        );
    }
    assert!(!ws.parent().unwrap().join("evil").exists());
    let demo: Vec<String> = std::fs::read_dir(ws.join("gentools/demo"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "__pycache__")
        .collect();
    assert_eq!(demo.len(), 2, "__init__.py and sum_and_echo only: {demo:?}");
}

#[tokio::test]
async fn code_actions_over_stdio() {
    let ws = workspace();
    let c = stdio_client(ws.path(), &[], &[]).await;
    the_skill(&c, ws.path()).await;
    c.cancel().await.unwrap();
}

#[tokio::test]
async fn code_actions_over_http() {
    let ws = workspace();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = tokio::process::Command::new(ipybox_bin())
        .args([
            "mcp",
            "--http",
            &port.to_string(),
            "--no-auth",
            "--workspace",
        ])
        .arg(ws.path())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    assert!(
        wait_for(Duration::from_secs(60), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        }),
        "ipybox mcp --http listens"
    );
    let url = format!("http://127.0.0.1:{port}/mcp");
    let c = ()
        .serve(rmcp::transport::StreamableHttpClientTransport::from_uri(
            url,
        ))
        .await
        .unwrap();
    the_skill(&c, ws.path()).await;
    c.cancel().await.unwrap();
    server.kill().await.unwrap();
}
