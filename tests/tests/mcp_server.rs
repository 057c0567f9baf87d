//! `ipybox mcp`: a real MCP client (rmcp, and the Python SDK's) drives ipybox over stdio and
//! Streamable HTTP.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use ipybox_tests::mcp_client::{call, call_ok, stdio_client, text};
use ipybox_tests::{everything_params, ipybox_bin, wait_for, workspace};
use rmcp::ServiceExt;

#[tokio::test]
async fn stdio_tools_registration_timeout_reset() {
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
            "list_tools",
            "register_mcp_server",
            "reset",
            "save_code_action"
        ]
    );

    let r = call(
        &c,
        "register_mcp_server",
        serde_json::json!({"server_name": "everything", "server_params": everything_params()}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let modules: Vec<String> = text(&r).lines().map(str::to_owned).collect();
    assert_eq!(
        modules.len(),
        r.content.len(),
        "one text block per module: {modules:?}"
    );
    for module in ["echo", "get_sum", "get_tiny_image"] {
        assert!(
            modules.iter().any(|m| m == module),
            "the module names are the answer: {modules:?}"
        );
    }

    let r = call(&c, "execute_ipython_cell", serde_json::json!({"code": "from mcptools.everything.echo import Params, run\nx = 41\nprint(run(Params(message='via mcp')))"})).await;
    assert_eq!(
        text(&r),
        "Echo: via mcp",
        "the cell called a tool (auto approval)"
    );

    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": "import time; time.sleep(5)", "timeout": 0.5}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "a timeout is a tool error");
    assert!(
        text(&r).starts_with("Error executing tool execute_ipython_cell: execution timed out"),
        "the timeout says what happened (the Python ipybox's text is empty): {}",
        text(&r)
    );

    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": "print(x)"}),
    )
    .await;
    assert_eq!(text(&r), "41", "the interrupted kernel kept its state");

    let r = call(&c, "reset", serde_json::json!({})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let r = call(&c, "execute_ipython_cell", serde_json::json!({"code": "print('x' in dir())\nfrom mcptools.everything.echo import run, Params\nprint(run(Params(message='kept')))"})).await;
    assert_eq!(
        text(&r),
        "False\nEcho: kept",
        "reset clears variables and keeps mcptools/"
    );

    let r = call(
        &c,
        "register_mcp_server",
        serde_json::json!({"server_name": "not-valid", "server_params": everything_params()}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "an invalid name is refused");
    assert!(
        text(&r).starts_with("Error executing tool register_mcp_server: ")
            && text(&r).contains("valid identifier"),
        "{}",
        text(&r)
    );
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
    assert_eq!(r.content.len(), 1, "pip's output, one block");
    assert!(
        text(&r).contains("tabulate") && !text(&r).starts_with("Installed"),
        "the result is pip's own output: {}",
        text(&r)
    );
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
    assert!(
        text(&r).starts_with("Error executing tool install_package: ")
            && text(&r).contains("No matching distribution"),
        "pip's words are in the error: {}",
        text(&r)
    );
    c.cancel().await.unwrap();
}

/// The status the server at `port` answers `request` (a whole HTTP/1.1 request) with.
fn status_of(port: u16, request: &str) -> u16 {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    conn.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = conn.read_to_string(&mut response);
    response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {response:?}"))
}

/// The status of a bare POST to `/mcp` with `Origin: origin` (and no token).
fn post_status(port: u16, origin: Option<&str>) -> u16 {
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    status_of(
        port,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{origin}Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
        ),
    )
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
    assert_eq!(c.list_all_tools().await.unwrap().len(), 6);
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
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("Session termination failed"),
        "ending the session is a success to the Python SDK: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = server.start_kill();
    let _ = server.wait().await;
}

/// The status of an `initialize` POST to `/mcp` with the token and `Host: host`.
fn initialize_status(port: u16, host: &str, token: &str) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    status_of(
        port,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

#[tokio::test]
async fn http_answers_allowed_host_names_only() {
    let ws = workspace();
    let port = free_port();
    let mut server = tokio::process::Command::new(ipybox_bin())
        .args([
            "mcp",
            "--http",
            &port.to_string(),
            "--allow-host",
            "ipybox.test",
            "--workspace",
        ])
        .arg(ws.path())
        .env("IPYBOX_MCP_TOKEN", "secret-token")
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    assert!(wait_for(Duration::from_secs(60), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    }));
    assert_eq!(
        initialize_status(port, "elsewhere.test", "secret-token"),
        403,
        "a name nobody allowed is refused, token or not (DNS rebinding)"
    );
    assert_eq!(
        initialize_status(port, &format!("ipybox.test:{port}"), "secret-token"),
        200,
        "--allow-host names a host the server answers, on any port"
    );
    assert_eq!(
        initialize_status(port, &format!("127.0.0.1:{port}"), "secret-token"),
        200,
        "loopback names are still answered"
    );
    let _ = server.start_kill();
    let _ = server.wait().await;
}

/// A free port on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Drives `ipybox mcp` as a user of the Python ipybox would: its command line (with
/// `mcp`), the Python SDK's client, the calls its agents make. Prints what came back as JSON.
const PYTHON_IPYBOX_USER: &str = r#"
import asyncio, json, re, socket, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ipybox, ws, server_js, tool_port, gateway_port, errlog_path = sys.argv[1:7]

async def main():
    out = {}
    # What the Python ipybox answers register_mcp_server with: the server's tool names,
    # sanitized as its generator (mcpygen) does.
    server = StdioServerParameters(command="node", args=[server_js, "stdio"])
    async with stdio_client(server) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            out["expected_modules"] = [re.sub(r"[^a-zA-Z0-9_]", "_", t.name).lower() for t in tools]
    params = StdioServerParameters(command=ipybox, args=[
        "mcp", "--workspace", ws, "--log-level", "ERROR",
        "--tool-server-host", "localhost", "--tool-server-port", tool_port,
        "--kernel-gateway-host", "localhost", "--kernel-gateway-port", gateway_port,
    ])
    with open(errlog_path, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                out["schemas"] = {t.name: t.inputSchema for t in (await s.list_tools()).tools}
                async def call(name, args):
                    res = await s.call_tool(name, args)
                    return res.model_dump(mode="json", exclude_none=True)
                out["register"] = await call("register_mcp_server", {"server_name": "everything", "server_params": {"command": "node", "args": [server_js, "stdio"]}})
                out["silent"] = await call("execute_ipython_cell", {"code": "x = 1"})
                out["printed"] = await call("execute_ipython_cell", {"code": "print('hi')\n'last'"})
                out["truncated"] = await call("execute_ipython_cell", {"code": "print('y' * 100)", "max_output_chars": 10})
                out["raised"] = await call("execute_ipython_cell", {"code": "1/0"})
                out["raised_after_output"] = await call("execute_ipython_cell", {"code": "print('before')\n1/0"})
                out["plot"] = await call("execute_ipython_cell", {"code": "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()"})
                out["tool_server"] = await call("execute_ipython_cell", {"code": "import os\nprint(os.environ.get('IPYBOX_TOOL_SERVER'))"})
                with socket.create_connection(("127.0.0.1", int(gateway_port)), timeout=5):
                    out["gateway_port_open"] = True
                out["reset"] = await call("reset", {})
                out["after_reset"] = await call("execute_ipython_cell", {"code": "print('x' in dir())"})
                out["install"] = await call("install_package", {"package_name": "tabulate==0.9.0"})
                out["missing_argument"] = await call("execute_ipython_cell", {})
    print(json.dumps(out))

asyncio.run(main())
"#;

/// The text of block `i` of a result the Python SDK dumped.
fn block_text(result: &serde_json::Value, i: usize) -> &str {
    result["content"][i]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text block {i} in {result}"))
}

#[tokio::test]
async fn drop_in_for_the_python_ipybox_command_line_and_results() {
    use base64::Engine;
    let ws = workspace();
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("servers/.venv/bin/python");
    let server_js = everything_params()["args"][0].as_str().unwrap().to_owned();
    let (tool_port, gateway_port) = (free_port(), free_port());
    let errlog = ws.path().join("stderr.txt");
    let out = tokio::process::Command::new(py)
        .arg("-c")
        .arg(PYTHON_IPYBOX_USER)
        .arg(ipybox_bin())
        .arg(ws.path())
        .arg(&server_js)
        .arg(tool_port.to_string())
        .arg(gateway_port.to_string())
        .arg(&errlog)
        .output()
        .await
        .unwrap();
    let stderr = std::fs::read_to_string(&errlog).unwrap_or_default();
    assert!(
        out.status.success(),
        "{}\nipybox's stderr: {stderr}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !stderr.contains("note:") && !stderr.contains("WARN"),
        "every flag applies over stdio, and --log-level ERROR keeps warnings out: {stderr}"
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();

    // Parameter names, types, defaults and required ones as the Python ipybox's, in standard
    // JSON Schema (no schemars formats such as "uint" or "double").
    let schemas = &r["schemas"];
    let shape = |tool: &str| {
        let schema = &schemas[tool];
        assert!(
            !schema.to_string().contains("\"format\""),
            "{tool}: no non-standard formats: {schema}"
        );
        let props: BTreeMap<String, (serde_json::Value, serde_json::Value)> = schema["properties"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), (v["type"].clone(), v["default"].clone())))
            .collect();
        (props, schema["required"].clone())
    };
    let typed = |t: &str, d: serde_json::Value| (serde_json::json!(t), d);
    let null = serde_json::Value::Null;
    assert_eq!(
        shape("execute_ipython_cell"),
        (
            BTreeMap::from([
                ("code".into(), typed("string", null.clone())),
                ("timeout".into(), typed("number", serde_json::json!(120))),
                (
                    "max_output_chars".into(),
                    typed("integer", serde_json::json!(5000))
                ),
            ]),
            serde_json::json!(["code"])
        )
    );
    assert_eq!(
        shape("register_mcp_server"),
        (
            BTreeMap::from([
                ("server_name".into(), typed("string", null.clone())),
                ("server_params".into(), typed("object", null.clone())),
            ]),
            serde_json::json!(["server_name", "server_params"])
        )
    );
    assert_eq!(
        shape("install_package"),
        (
            BTreeMap::from([("package_name".into(), typed("string", null.clone()))]),
            serde_json::json!(["package_name"])
        )
    );
    assert_eq!(shape("reset").0, BTreeMap::new(), "reset takes nothing");

    let modules: Vec<serde_json::Value> = r["expected_modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| serde_json::json!({"type": "text", "text": m}))
        .collect();
    assert!(modules.len() > 5, "the server lists its tools: {modules:?}");
    assert_eq!(
        r["register"],
        serde_json::json!({"content": modules, "isError": false}),
        "register_mcp_server answers with one text block per generated module"
    );
    assert_eq!(
        r["silent"],
        serde_json::json!({"content": [{"type": "text", "text": ""}], "isError": false}),
        "no output is an empty text, not a placeholder"
    );
    assert_eq!(
        r["printed"],
        serde_json::json!({"content": [{"type": "text", "text": "hi\n'last'"}], "isError": false})
    );
    assert_eq!(
        r["truncated"],
        serde_json::json!({"content": [{"type": "text", "text": format!("{}\n\n[Output truncated: exceeded 10 character limit]", "y".repeat(10))}], "isError": false}),
        "the Python ipybox's truncation marker"
    );

    // An exception: the Python ipybox's text — FastMCP's prefix, then name, value and the
    // traceback (IPython's, without colours). Its cell numbers stay 1; ours count.
    let traceback_1_0 = |text: &str| {
        let cell = cell_number(text);
        format!(
            "Error executing tool execute_ipython_cell: ZeroDivisionError: division by zero\n\
             ---------------------------------------------------------------------------\n\
             ZeroDivisionError                         Traceback (most recent call last)\n\
             Cell In[{cell}], line 1\n\
             ----> 1 1/0\n\
             \n\
             ZeroDivisionError: division by zero"
        )
    };
    let raised = block_text(&r["raised"], 0);
    assert_eq!(
        raised,
        traceback_1_0(raised),
        "the error text, byte for byte"
    );
    assert_eq!(r["raised"]["isError"], true);
    assert_eq!(
        r["raised"]["content"].as_array().unwrap().len(),
        1,
        "nothing printed, nothing added"
    );
    let first = block_text(&r["raised_after_output"], 0);
    assert!(
        first.starts_with(
            "Error executing tool execute_ipython_cell: ZeroDivisionError: division by zero\n---"
        ) && first.ends_with("----> 2 1/0\n\nZeroDivisionError: division by zero"),
        "the first block is the Python ipybox's: {first}"
    );
    assert_eq!(
        block_text(&r["raised_after_output"], 1),
        "Output before the error:\nbefore",
        "ours adds what the code printed, in a block after it"
    );

    // Images: listed as the Python ipybox lists them, then sent as image content.
    let plot = block_text(&r["plot"], 0);
    let listing = plot
        .strip_prefix("<Figure size 640x480 with 1 Axes>\n\nGenerated images:\n\n- [")
        .and_then(|rest| rest.strip_suffix(")\n"))
        .unwrap_or_else(|| panic!("the Python ipybox's image listing: {plot:?}"));
    let (stem, path) = listing.split_once("](").unwrap();
    let path = Path::new(path);
    assert!(
        path.is_absolute()
            && path.starts_with(ws.path().canonicalize().unwrap().join("images"))
            && path.file_stem().unwrap() == stem,
        "a markdown link named after the file, to its absolute path in images/: {plot}"
    );
    let image = &r["plot"]["content"][1];
    assert_eq!(image["type"], "image");
    assert_eq!(image["mimeType"], "image/png");
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(image["data"].as_str().unwrap())
            .unwrap(),
        std::fs::read(path).unwrap(),
        "the image block carries the saved file's bytes"
    );

    assert_eq!(
        block_text(&r["tool_server"], 0),
        "None",
        "no tool server port: --tool-server-port is accepted and has nothing to set"
    );
    assert_eq!(
        r["gateway_port_open"], true,
        "--kernel-gateway-port is honoured"
    );
    assert_eq!(
        r["reset"],
        serde_json::json!({"content": [], "isError": false}),
        "reset answers with no content"
    );
    assert_eq!(block_text(&r["after_reset"], 0), "False");
    let install = &r["install"];
    assert_eq!(install["isError"], false);
    assert_eq!(install["content"].as_array().unwrap().len(), 1);
    let pip = block_text(install, 0);
    assert!(
        pip.starts_with("Collecting tabulate") || pip.starts_with("Requirement already satisfied"),
        "install_package answers with pip's output alone: {pip}"
    );
    assert!(
        block_text(&r["missing_argument"], 0)
            .starts_with("Error executing tool execute_ipython_cell: "),
        "arguments that do not fit are a tool error worded like the others: {}",
        r["missing_argument"]
    );
}

/// The number in `Cell In[n]` of an IPython traceback.
fn cell_number(text: &str) -> String {
    text.split_once("Cell In[")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(n, _)| n.to_owned())
        .unwrap_or_else(|| panic!("no cell number in {text:?}"))
}

/// `ipybox mcp --http PORT --no-auth EXTRA…` on `ws`, once it listens, and its URL.
async fn http_server(ws: &Path, extra: &[&str]) -> (tokio::process::Child, String) {
    let port = free_port();
    let server = tokio::process::Command::new(ipybox_bin())
        .args([
            "mcp",
            "--http",
            &port.to_string(),
            "--no-auth",
            "--workspace",
        ])
        .arg(ws)
        .args(extra)
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
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

/// A new MCP session with the server at `url`.
async fn http_session(
    url: &str,
) -> Result<ipybox_tests::mcp_client::Client, rmcp::service::ClientInitializeError> {
    use rmcp::transport::StreamableHttpClientTransport;
    ().serve(StreamableHttpClientTransport::from_uri(url)).await
}

/// Run `code` and return its text output, failing on an error result.
async fn run(c: &ipybox_tests::mcp_client::Client, code: &str) -> String {
    let r = call(c, "execute_ipython_cell", serde_json::json!({"code": code})).await;
    assert_ne!(r.is_error, Some(true), "{code}: {}", text(&r));
    text(&r)
}

#[tokio::test]
async fn http_sessions_have_kernels_of_their_own_and_share_the_workspace() {
    let ws = workspace();
    let (mut server, url) = http_server(ws.path(), &["--max-sessions", "2"]).await;
    let a = http_session(&url).await.unwrap();
    let b = http_session(&url).await.unwrap();
    run(&a, "x = 'a'").await;
    run(&b, "x = 'b'").await;
    assert_eq!(run(&a, "print(x)").await, "a", "B did not overwrite A's x");
    assert_eq!(run(&b, "print(x)").await, "b", "A did not overwrite B's x");
    let pid = "import os; print(os.getpid())";
    let (pid_a, pid_b): (i32, i32) = (
        run(&a, pid).await.parse().unwrap(),
        run(&b, pid).await.parse().unwrap(),
    );
    assert_ne!(pid_a, pid_b, "a kernel per session");

    let refused = http_session(&url)
        .await
        .expect_err("a third session is refused");
    let refused = format!("{refused:?}");
    assert!(
        refused.contains("maximum of 2 sessions") && refused.contains("--max-sessions"),
        "the refusal says why and what to do: {refused}"
    );

    // A server registered in one session is callable from another, already running one.
    let fixture = serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
    });
    call_ok(
        &a,
        "register_mcp_server",
        serde_json::json!({"server_name": "fx", "server_params": fixture}),
    )
    .await;
    assert_eq!(
        run(
            &b,
            "from mcptools.fx.echo import Params, run\nprint(run(Params(text='shared')))"
        )
        .await,
        "shared",
        "mcptools/ and the registry are the workspace's"
    );

    b.cancel().await.unwrap();
    assert!(
        wait_for(Duration::from_secs(15), || !ipybox_tests::alive(pid_b)),
        "the kernel of an ended session stops"
    );
    assert!(
        ipybox_tests::alive(pid_a),
        "the other session's kernel runs on"
    );
    let c = http_session(&url)
        .await
        .expect("an ended session frees its place");
    assert_eq!(
        run(&c, "print('x' in dir())").await,
        "False",
        "a new session starts with a fresh kernel"
    );
    assert_eq!(run(&a, "print(x)").await, "a");
    a.cancel().await.unwrap();
    c.cancel().await.unwrap();
    let _ = server.start_kill();
    let _ = server.wait().await;
}

#[tokio::test]
async fn an_idle_http_session_ends_and_its_kernel_stops() {
    let ws = workspace();
    let (mut server, url) = http_server(ws.path(), &["--session-idle-timeout", "2"]).await;
    let a = http_session(&url).await.unwrap();
    let pid: i32 = run(&a, "import os; x = 1; print(os.getpid())")
        .await
        .parse()
        .unwrap();
    assert_eq!(
        run(&a, "import time; time.sleep(3); print('done')").await,
        "done",
        "a running call is activity: the session outlives a call longer than the timeout"
    );
    assert!(
        wait_for(Duration::from_secs(15), || !ipybox_tests::alive(pid)),
        "the idle session's kernel stops"
    );
    // The MCP session is gone too, not just its kernel: told so (404), rmcp's client starts
    // a new one by itself (as the specification asks), with a fresh kernel.
    let r = call(
        &a,
        "execute_ipython_cell",
        serde_json::json!({"code": "print('x' in dir())"}),
    )
    .await;
    assert_eq!(
        text(&r),
        "False",
        "never the old session's kernel, which had x, nor an error from a half-ended session"
    );
    let b = http_session(&url).await.expect("a new session");
    assert_eq!(run(&b, "print(2)").await, "2");
    b.cancel().await.unwrap();
    let _ = server.start_kill();
    let _ = server.wait().await;
}

#[tokio::test]
async fn rules_allow_and_reject_including_an_argument_pattern() {
    let ws = workspace();
    let rules = ws.path().join("rules.json");
    std::fs::write(
        &rules,
        serde_json::json!({"version": 1, "rules": [
            {"server": "ipybox", "tool": "start_server", "args": {"command": {"equals": "node"}, "name": {"equals": "everything"}}, "decision": "allow"},
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
        serde_json::json!({"server_name": "everything", "server_params": everything_params()}),
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

/// An agent registers a server that would start `sh -c 'touch PROOF'` on the host; whether
/// it ran.
async fn agent_starts_a_program(approval: &[&str]) -> (bool, String) {
    let ws = workspace();
    let proof = ws.path().join("ran-on-the-host");
    let c = stdio_client(ws.path(), &[], approval).await;
    let r = call(
        &c,
        "register_mcp_server",
        serde_json::json!({"server_name": "helper", "server_params": {
            "command": "sh", "args": ["-c", "touch \"$0\"", proof.to_str().unwrap()]
        }}),
    )
    .await;
    // Registered or not, the registry says the same.
    let listed = text(&call(&c, "list_tools", serde_json::json!({})).await);
    c.cancel().await.unwrap();
    assert_eq!(
        listed.contains("MCP server helper"),
        r.is_error != Some(true) && proof.exists(),
        "a refused server is not registered: {listed}"
    );
    (proof.exists(), text(&r))
}

/// Finding 1 of the red team: an agent started any program on the host through
/// `register_mcp_server`. With rules or reject, a new stdio server starts only when a rule
/// written for exactly that allows its command; a rule allowing every tool call does not.
#[tokio::test]
async fn an_agent_starts_no_program_unless_a_rule_for_it_says_so() {
    let (ran, said) = agent_starts_a_program(&["--approval", "reject"]).await;
    assert!(!ran, "--approval reject: the program did not run ({said})");
    assert!(said.contains("agents cannot start programs here"), "{said}");

    let rules_dir = workspace();
    let rules = |json: serde_json::Value, name: &str| {
        let path = rules_dir.path().join(name);
        std::fs::write(&path, json.to_string()).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let everything = rules(
        serde_json::json!({"version": 1, "rules": [
            {"server": "*", "tool": "*", "decision": "allow"}
        ]}),
        "everything.json",
    );
    let (ran, said) = agent_starts_a_program(&["--approval", "rules", &everything]).await;
    assert!(
        !ran,
        "a rule that allows every call does not start programs ({said})"
    );
    assert!(
        said.contains("\"start_server\""),
        "the agent is told which rule would allow it: {said}"
    );

    let other = rules(
        serde_json::json!({"version": 1, "rules": [
            {"server": "ipybox", "tool": "start_server", "args": {"command": {"equals": "uvx"}}, "decision": "allow"}
        ]}),
        "other.json",
    );
    let (ran, said) = agent_starts_a_program(&["--approval", "rules", &other]).await;
    assert!(
        !ran,
        "a rule for another command does not start this one ({said})"
    );

    let sh = rules(
        serde_json::json!({"version": 1, "rules": [
            {"server": "ipybox", "tool": "start_server", "args": {"command": {"equals": "sh"}}, "decision": "allow"}
        ]}),
        "sh.json",
    );
    let (ran, said) = agent_starts_a_program(&["--approval", "rules", &sh]).await;
    assert!(
        ran,
        "a rule written for this command lets the agent start it: {said}"
    );

    // The Python ipybox's behaviour, kept for `--approval auto` (the default).
    let (ran, said) = agent_starts_a_program(&["--approval", "auto"]).await;
    assert!(ran, "--approval auto trusts the agent: {said}");
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

/// `ipybox mcp --sandbox-config workspace` over stdio, its stderr kept in `log`.
async fn workspace_policy_client(ws: &Path, log: &Path) -> ipybox_tests::mcp_client::Client {
    let mut cmd = tokio::process::Command::new(ipybox_bin());
    cmd.arg("mcp")
        .arg("--workspace")
        .arg(ws)
        .args(["--sandbox-config", "workspace"]);
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("starting ipybox mcp");
    ().serve(transport).await.expect("the MCP handshake")
}

/// Python that tries to write each of `paths` and prints `written` or `refused` for each.
fn write_probe(paths: &[&Path]) -> String {
    let mut code = String::from(
        "def probe(path):\n    try:\n        with open(path, 'w') as f:\n            f.write('x')\n        print('written')\n    except OSError:\n        print('refused')\n",
    );
    for p in paths {
        code.push_str(&format!("probe({:?})\n", p.display().to_string()));
    }
    code
}

/// What the codeact-sandbox plugin runs: the workspace's own sandbox-config.json is the
/// kernel's policy, ipybox's default while the workspace has none (then written as the
/// file), and sandboxed code can neither change nor replace it for the next session.
#[tokio::test]
async fn the_workspace_policy_rules_the_sandbox_and_is_out_of_the_kernels_reach() {
    let outside = workspace();
    let extra = outside.path().join("out");
    std::fs::create_dir(&extra).unwrap();
    let extra = std::fs::canonicalize(&extra).unwrap();

    // A workspace without a policy: the default, which writes only in the workspace.
    let ws = workspace();
    let log = outside.path().join("default.log");
    let c = workspace_policy_client(ws.path(), &log).await;
    let probe = write_probe(&[&ws.path().join("x"), &extra.join("x")]);
    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": probe}),
    )
    .await;
    assert_eq!(
        text(&r),
        "written\nrefused",
        "without sandbox-config.json the default policy is in force"
    );
    let file = ws.path().join("sandbox-config.json");
    let default = std::fs::read_to_string(&file).expect("the default is written as the file");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&default).unwrap(),
        serde_json::from_str::<serde_json::Value>(include_str!(
            "../../sandbox-profiles/kernel.json"
        ))
        .unwrap()
    );
    let tamper = r#"import os
def attempt(name, f):
    try:
        f()
        print(name, 'changed it')
    except OSError:
        print(name, 'refused')
attempt('write', lambda: open('sandbox-config.json', 'w').write('{"filesystem": {"allowWrite": ["/"]}}'))
def replace():
    with open('mine.json', 'w') as f:
        f.write('{}')
    os.replace('mine.json', 'sandbox-config.json')
attempt('replace', replace)
attempt('rename', lambda: os.rename('sandbox-config.json', 'old.json'))
attempt('remove', lambda: os.remove('sandbox-config.json'))
attempt('chmod', lambda: os.chmod('sandbox-config.json', 0o666))
"#;
    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": tamper}),
    )
    .await;
    assert_eq!(
        text(&r),
        "write refused\nreplace refused\nrename refused\nremove refused\nchmod refused",
        "kernel code must not choose the next session's policy"
    );
    c.cancel().await.unwrap();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        default,
        "the policy is as ipybox wrote it"
    );
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(
        said.contains(&format!(
            "sandbox policy: {}",
            std::fs::canonicalize(&file).unwrap().display()
        )) && said.contains("created as ipybox's default policy"),
        "ipybox says which policy is in force: {said}"
    );

    // A workspace whose policy lets the kernel write out/ and a folder outside, and nothing
    // else.
    let ws = workspace();
    std::fs::create_dir(ws.path().join("out")).unwrap();
    let mut policy: serde_json::Value = serde_json::from_str(&default).unwrap();
    policy["filesystem"]["allowWrite"] = serde_json::json!(["out/", extra]);
    let text_of_policy = serde_json::to_string_pretty(&policy).unwrap();
    std::fs::write(ws.path().join("sandbox-config.json"), &text_of_policy).unwrap();
    // A policy written into the workspace runs only once the person accepted it.
    let accepted = std::process::Command::new(ipybox_bin())
        .args(["sandbox", "accept", "--yes", "--workspace"])
        .arg(ws.path())
        .output()
        .unwrap();
    assert!(accepted.status.success(), "{accepted:?}");
    let log = outside.path().join("own.log");
    let c = workspace_policy_client(ws.path(), &log).await;
    let probe = write_probe(&[
        &ws.path().join("out/x"),
        &extra.join("x"),
        &ws.path().join("x"),
        &ws.path().join("sandbox-config.json"),
    ]);
    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": probe}),
    )
    .await;
    assert_eq!(
        text(&r),
        "written\nwritten\nrefused\nrefused",
        "the workspace's sandbox-config.json is the policy in force"
    );
    c.cancel().await.unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.path().join("sandbox-config.json")).unwrap(),
        text_of_policy
    );
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(
        said.contains("(the workspace's own)"),
        "ipybox says which policy is in force: {said}"
    );
}
