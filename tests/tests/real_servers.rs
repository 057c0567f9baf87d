//! The reference MCP servers from npm and PyPI (installed by `tests/servers/install.sh`):
//! server-everything over stdio, Streamable HTTP and SSE, server-filesystem, mcp-server-time.
//! Generated modules are imported and called by real kernel code.

#![allow(clippy::unwrap_used)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ipybox::{CodeExecutor, ServerParams};
use ipybox_tests::{wait_for, workspace};

fn servers() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("servers");
    assert!(
        dir.join("node_modules").exists() && dir.join(".venv").exists(),
        "run tests/servers/install.sh"
    );
    dir
}

fn everything_js() -> String {
    servers()
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .to_string_lossy()
        .into_owned()
}

fn params(v: serde_json::Value) -> ServerParams {
    ServerParams::from_json(&v).unwrap()
}

struct Background(Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// server-everything in an HTTP mode on a free port.
fn everything_http(mode: &str) -> (Background, u16) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("node")
        .args([everything_js().as_str(), mode])
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_for(Duration::from_secs(30), || std::net::TcpStream::connect((
            "127.0.0.1",
            port
        ))
        .is_ok()),
        "server-everything {mode} did not start"
    );
    (Background(child), port)
}

async fn run(ws: &Path, name: &str, p: ServerParams, code: &str) -> String {
    let e = CodeExecutor::builder().working_dir(ws).build();
    let generated = e.register_mcp_server(name, &p).await.unwrap();
    assert!(!generated.modules.is_empty());
    e.start().await.unwrap();
    let r = e.execute(code, Some(Duration::from_secs(60))).await;
    e.stop().await.unwrap();
    r.unwrap_or_else(|err| panic!("{err}"))
        .text
        .unwrap_or_default()
}

const EVERYTHING_CODE: &str = "from mcptools.everything import echo, get_sum, get_tiny_image, get_structured_content\n\
    print(echo.run(echo.Params(message='hi')))\n\
    print(get_sum.run(get_sum.Params(a=1, b=2)))\n\
    blocks = get_tiny_image.run_blocks(get_tiny_image.Params())\n\
    img = [b for b in blocks if b.type == 'image'][0]\n\
    print(img.mime_type, img.data[:4] == b'\\x89PNG')\n\
    r = get_structured_content.run(get_structured_content.Params(location='New York'))\n\
    print(type(r).__name__, sorted(r.model_dump()))";

fn check_everything(text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Echo: hi", "{text}");
    assert!(
        lines[1].contains('3'),
        "get-sum (a hyphenated tool) works: {text}"
    );
    assert_eq!(
        lines[2], "image/png True",
        "the image reaches kernel code: {text}"
    );
    assert!(
        lines[3].starts_with("Result ['conditions', 'humidity', 'temperature']"),
        "structured output validates: {text}"
    );
}

#[tokio::test]
async fn everything_over_stdio() {
    let ws = workspace();
    let text = run(
        ws.path(),
        "everything",
        params(serde_json::json!({"command": "node", "args": [everything_js(), "stdio"]})),
        EVERYTHING_CODE,
    )
    .await;
    check_everything(&text);
    assert!(
        ws.path()
            .join("mcptools/everything/get_tiny_image.py")
            .exists(),
        "hyphens become underscores"
    );
}

#[tokio::test]
async fn everything_over_streamable_http() {
    let ws = workspace();
    let (_server, port) = everything_http("streamableHttp");
    let p = params(serde_json::json!({"url": format!("http://127.0.0.1:{port}/mcp")}));
    check_everything(&run(ws.path(), "everything", p, EVERYTHING_CODE).await);
}

#[tokio::test]
async fn everything_over_sse() {
    let ws = workspace();
    let (_server, port) = everything_http("sse");
    // No `type`: a URL with /sse means the legacy SSE transport.
    let p = params(serde_json::json!({"url": format!("http://127.0.0.1:{port}/sse")}));
    check_everything(&run(ws.path(), "everything", p, EVERYTHING_CODE).await);
}

#[tokio::test]
async fn filesystem_server_reads_and_writes_in_its_allowed_directory() {
    let ws = workspace();
    let allowed = ws.path().join("data");
    std::fs::create_dir(&allowed).unwrap();
    std::fs::write(allowed.join("notes.txt"), "line one\nline two\n").unwrap();
    let js = servers().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let p = params(serde_json::json!({"command": "node", "args": [js, allowed]}));
    let allowed = std::fs::canonicalize(&allowed).unwrap();
    let code = format!(
        "from mcptools.filesystem import read_text_file, write_file, list_directory\n\
         print(read_text_file.run(read_text_file.Params(path={p:?}, head=1)).content)\n\
         write_file.run(write_file.Params(path={w:?}, content='written by kernel code'))\n\
         print(open({w:?}).read())\n\
         from mcptools._runtime import ToolError\n\
         try:\n    read_text_file.run(read_text_file.Params(path='/etc/hostname'))\nexcept ToolError as err:\n    print('denied:', 'outside' in str(err) or 'denied' in str(err).lower())",
        p = allowed.join("notes.txt").to_str().unwrap(),
        w = allowed.join("out.txt").to_str().unwrap(),
    );
    let text = run(ws.path(), "filesystem", p, &code).await;
    assert_eq!(
        text, "line one\nwritten by kernel code\ndenied: True",
        "structured results and the server's own errors"
    );
}

#[tokio::test]
async fn time_server_from_pypi() {
    let ws = workspace();
    let p = params(
        serde_json::json!({"command": servers().join(".venv/bin/mcp-server-time"), "args": ["--local-timezone", "UTC"]}),
    );
    let code = "from mcptools.time import get_current_time, convert_time\nimport json\n\
                r = get_current_time.run(get_current_time.Params(timezone='Europe/Berlin'))\n\
                d = r if isinstance(r, dict) else (r.model_dump() if hasattr(r, 'model_dump') else json.loads(r))\nprint(d['timezone'])";
    assert_eq!(run(ws.path(), "time", p, code).await, "Europe/Berlin");
}
