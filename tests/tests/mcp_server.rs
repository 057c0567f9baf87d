//! `ipybox mcp`: a real MCP client (rmcp, and the Python SDK's) drives ipybox over stdio and
//! Streamable HTTP.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use ipybox_tests::mcp_client::{call, stdio_client, text};
use ipybox_tests::{ipybox_bin, wait_for, workspace};
use rmcp::ServiceExt;

fn everything() -> serde_json::Value {
    let js = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(js.exists(), "run tests/servers/install.sh");
    serde_json::json!({"command": "node", "args": [js, "stdio"]})
}

#[tokio::test]
async fn stdio_tools_execution_registration_images_truncation_reset() {
    let ws = workspace();
    let c = stdio_client(ws.path(), &[], &[]).await;
    let mut names: Vec<String> = c
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "execute_ipython_cell",
            "install_package",
            "register_mcp_server",
            "reset"
        ]
    );

    let r = call(
        &c,
        "register_mcp_server",
        serde_json::json!({"server_name": "everything", "server_params": everything()}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert!(
        text(&r).contains("from mcptools.everything.echo import Params, run"),
        "{}",
        text(&r)
    );

    let r = call(&c, "execute_ipython_cell", serde_json::json!({"code": "from mcptools.everything.echo import Params, run\nx = 41\nprint(run(Params(message='via mcp')))"})).await;
    assert_eq!(
        text(&r),
        "Echo: via mcp",
        "the cell called a tool (auto approval)"
    );

    let r = call(&c, "execute_ipython_cell", serde_json::json!({"code": "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()"})).await;
    let blocks = serde_json::to_value(&r.content).unwrap();
    let image = blocks
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .expect("an image block");
    assert_eq!(image["mimeType"], "image/png");
    assert!(text(&r).contains("Generated images:"), "{}", text(&r));

    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": "print('y' * 100)", "max_output_chars": 10}),
    )
    .await;
    assert!(
        text(&r).starts_with(
            "yyyyyyyyyy\n\n[output truncated: showing the first 10 of 100 characters]"
        ),
        "{}",
        text(&r)
    );

    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": "1/0"}),
    )
    .await;
    assert_eq!(
        r.is_error,
        Some(true),
        "an exception is a tool error, not a protocol fault"
    );
    assert!(
        text(&r).contains("ZeroDivisionError") && text(&r).contains("Traceback")
            || text(&r).contains("----> 1"),
        "{}",
        text(&r)
    );

    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": "import time; time.sleep(5)", "timeout": 0.5}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("timed out"), "{}", text(&r));

    let r = call(&c, "reset", serde_json::json!({})).await;
    assert_ne!(r.is_error, Some(true));
    let r = call(&c, "execute_ipython_cell", serde_json::json!({"code": "print('x' in dir())\nfrom mcptools.everything.echo import run, Params\nprint(run(Params(message='kept')))"})).await;
    assert_eq!(
        text(&r),
        "False\nEcho: kept",
        "reset clears variables and keeps mcptools/"
    );

    let r = call(
        &c,
        "register_mcp_server",
        serde_json::json!({"server_name": "not-valid", "server_params": everything()}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("valid identifier"), "{}", text(&r));
    c.cancel().await.unwrap();
}

#[tokio::test]
async fn kernel_env_prefix_reaches_the_kernel_other_variables_do_not() {
    let ws = workspace();
    std::fs::write(
        ws.path().join(".env"),
        "KERNEL_ENV_FROM_FILE=file\nSECRET_FROM_FILE=s\n",
    )
    .unwrap();
    let c = stdio_client(
        ws.path(),
        &[
            ("KERNEL_ENV_API_BASE", "https://example.org"),
            ("IPYBOX_TEST_SECRET", "hidden"),
        ],
        &[],
    )
    .await;
    let code = "import os\nprint(os.environ.get('API_BASE'), os.environ.get('FROM_FILE'), os.environ.get('IPYBOX_TEST_SECRET'), os.environ.get('SECRET_FROM_FILE'), os.environ.get('KERNEL_ENV_API_BASE'))";
    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": code}),
    )
    .await;
    assert_eq!(text(&r), "https://example.org file None None None");
    c.cancel().await.unwrap();
}

#[tokio::test]
async fn install_package_then_import_it() {
    let ws = workspace();
    let c = stdio_client(ws.path(), &[], &[]).await;
    let r = call(
        &c,
        "install_package",
        serde_json::json!({"package_name": "tabulate==0.9.0"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": "import tabulate\nprint(tabulate.__version__)"}),
    )
    .await;
    assert_eq!(text(&r), "0.9.0");
    let r = call(
        &c,
        "install_package",
        serde_json::json!({"package_name": "this-package-does-not-exist-ipybox-xyz"}),
    )
    .await;
    assert_eq!(
        r.is_error,
        Some(true),
        "a failed install is reported: {}",
        text(&r)
    );
    c.cancel().await.unwrap();
}

/// The status of a bare POST to `/mcp` with `Origin: origin` (and no token).
fn post_status(port: u16, origin: Option<&str>) -> u16 {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    write!(
        conn,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{origin}Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    )
    .unwrap();
    let mut response = String::new();
    let _ = conn.read_to_string(&mut response);
    response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {response:?}"))
}

#[tokio::test]
async fn http_requires_the_token_and_works_with_it() {
    let ws = workspace();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = tokio::process::Command::new(ipybox_bin())
        .args(["mcp", "--http", &port.to_string(), "--workspace"])
        .arg(ws.path())
        .env("IPYBOX_MCP_TOKEN", "secret-token")
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    assert!(wait_for(Duration::from_secs(60), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    }));
    let url = format!("http://127.0.0.1:{port}/mcp");
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let bad = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.as_str()).auth_header("wrong"),
    );
    assert!(().serve(bad).await.is_err(), "a wrong token is refused");
    let good = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.as_str()).auth_header("secret-token"),
    );
    let c = ().serve(good).await.unwrap();
    assert_eq!(c.list_all_tools().await.unwrap().len(), 4);
    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": "print(6 * 7)"}),
    )
    .await;
    assert_eq!(text(&r), "42");
    c.cancel().await.unwrap();

    // A web page elsewhere must not drive the server through the person's browser (DNS
    // rebinding): a foreign Origin is refused before anything else.
    assert_eq!(post_status(port, Some("http://evil.example")), 403);
    assert_eq!(post_status(port, Some("null")), 403);
    assert_ne!(
        post_status(port, Some(&format!("http://localhost:{port}"))),
        403
    );
    assert_eq!(post_status(port, None), 401, "no token, no Origin");

    // The Python SDK's client over Streamable HTTP.
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("servers/.venv/bin/python");
    let script = r#"
import asyncio, sys
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

async def main():
    async with streamablehttp_client(sys.argv[1], headers={"Authorization": "Bearer secret-token"}) as (r, w, _):
        async with ClientSession(r, w) as s:
            await s.initialize()
            res = await s.call_tool("execute_ipython_cell", {"code": "print('py-http')"})
            print(res.content[0].text)

asyncio.run(main())
"#;
    let out = tokio::process::Command::new(py)
        .arg("-c")
        .arg(script)
        .arg(&url)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "py-http");
    let _ = server.start_kill();
    let _ = server.wait().await;
}

#[tokio::test]
async fn python_sdk_client_over_stdio() {
    let ws = workspace();
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("servers/.venv/bin/python");
    let script = r#"
import asyncio, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    params = StdioServerParameters(command=sys.argv[1], args=["mcp", "--workspace", sys.argv[2]])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            tools = sorted(t.name for t in (await s.list_tools()).tools)
            res = await s.call_tool("execute_ipython_cell", {"code": "print(sum(range(10)))"})
            print(tools, res.content[0].text, res.isError)

asyncio.run(main())
"#;
    let t = Instant::now();
    let out = tokio::process::Command::new(py)
        .arg("-c")
        .arg(script)
        .arg(ipybox_bin())
        .arg(ws.path())
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "['execute_ipython_cell', 'install_package', 'register_mcp_server', 'reset'] 45 False",
        "in {:?}",
        t.elapsed()
    );
}

#[tokio::test]
async fn rules_allow_and_reject_including_an_argument_pattern() {
    let ws = workspace();
    let rules = ws.path().join("rules.json");
    std::fs::write(
        &rules,
        serde_json::json!({"version": 1, "rules": [
            {"server": "everything", "tool": "echo", "args": {"message": {"equals": "allowed"}}, "decision": "allow"},
            {"server": "everything", "tool": "get-sum", "decision": "reject", "reason": "no arithmetic today"}
        ]})
        .to_string(),
    )
    .unwrap();
    let c = stdio_client(
        ws.path(),
        &[],
        &["--approval", "rules", rules.to_str().unwrap()],
    )
    .await;
    call(
        &c,
        "register_mcp_server",
        serde_json::json!({"server_name": "everything", "server_params": everything()}),
    )
    .await;
    let code = "from mcptools.everything import echo, get_sum\nfrom mcptools._runtime import ApprovalRejected\n\
                print(echo.run(echo.Params(message='allowed')))\n\
                for f in (lambda: echo.run(echo.Params(message='other')), lambda: get_sum.run(get_sum.Params(a=1, b=2))):\n\
                \x20   try:\n        f()\n    except ApprovalRejected as err:\n        print('rejected:', err)";
    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": code}),
    )
    .await;
    let out = text(&r);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Echo: allowed", "{out}");
    assert!(
        lines[1].starts_with("rejected: everything.echo:")
            && lines[1].contains("\"decision\": \"allow\""),
        "the agent is told which rule to add: {out}"
    );
    assert!(
        lines[2].contains("no arithmetic today"),
        "a reject rule's reason reaches the code: {out}"
    );
    c.cancel().await.unwrap();

    let out = std::process::Command::new(ipybox_bin())
        .args(["mcp", "--approval", "rules", "/no/such/rules.json"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/rules.json"));
}

#[tokio::test]
async fn sandboxed_mcp_server_isolates_the_kernel_and_still_calls_tools() {
    let ws = workspace();
    std::fs::write(ws.path().join(".env"), "KERNEL_ENV_GREETING=hello\n").unwrap();
    let c = stdio_client(ws.path(), &[], &["--sandbox"]).await;
    let fixture = serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
    });
    let r = call(
        &c,
        "register_mcp_server",
        serde_json::json!({"server_name": "fx", "server_params": fixture}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let code = r#"import os, socket
from mcptools.fx.echo import Params, run
print(run(Params(text="tool call from the sandbox")))
print(os.environ.get("GREETING"))
try:
    open(".env").read()
except PermissionError:
    print(".env hidden")
try:
    socket.getaddrinfo("pypi.org", 443)
except socket.gaierror:
    print("no DNS")
"#;
    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": code}),
    )
    .await;
    assert_eq!(
        text(&r),
        "tool call from the sandbox\nhello\n.env hidden\nno DNS"
    );
    let r = call(&c, "reset", serde_json::json!({})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": "import socket\ntry:\n    socket.socket(socket.AF_UNIX)\nexcept PermissionError:\n    print('no unix sockets after reset')"}),
    )
    .await;
    assert_eq!(text(&r), "no unix sockets after reset");
    c.cancel().await.unwrap();
}
