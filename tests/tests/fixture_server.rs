//! Checks that the fixture MCP server (`ipybox-fixture-mcp`) behaves as the other end-to-end
//! tests assume, by driving it with rmcp's own client over stdio and Streamable HTTP.

use std::{
    collections::BTreeSet,
    process::Stdio,
    time::{Duration, Instant},
};

use base64::{Engine as _, engine::general_purpose::STANDARD as BASE64};
use rmcp::{
    RoleClient, ServiceExt as _,
    model::{CallToolRequestParams, CallToolResult, PaginatedRequestParams},
    service::RunningService,
    transport::{ConfigureCommandExt as _, StreamableHttpClientTransport, TokioChildProcess},
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt as _, BufReader},
    process::{Child, Command},
};

const FIXTURE: &str = env!("CARGO_BIN_EXE_ipybox-fixture-mcp");

type Client = RunningService<RoleClient, ()>;

const FIXTURE_TOOLS: [&str; 13] = [
    "add",
    "clock",
    "counter",
    "crash",
    "deep",
    "echo",
    "env",
    "fail",
    "image",
    "mixed",
    "odd-names",
    "sleep",
    "write_file",
];

async fn stdio_client(args: &[&str], env: &[(&str, &str)]) -> Client {
    let transport = TokioChildProcess::new(Command::new(FIXTURE).configure(|cmd| {
        cmd.args(args).arg("stdio");
        cmd.envs(env.iter().copied());
    }))
    .expect("spawn the fixture server");
    ().serve(transport).await.expect("initialize over stdio")
}

/// Starts the fixture in HTTP mode on a free port; returns the child and the `/mcp` URL.
async fn http_server(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(FIXTURE)
        .args(args)
        .args(["http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the fixture server");
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines();
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("readiness line within 10 s")
        .expect("read stderr")
        .expect("stderr open until ready");
    let addr = line
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("readiness line, got {line:?}"))
        .to_owned();
    assert!(
        !addr.ends_with(":0"),
        "the readiness line carries the real port: {addr}"
    );
    (child, format!("http://{addr}/mcp"))
}

async fn http_client(url: &str) -> Client {
    ().serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
        .await
        .expect("initialize over Streamable HTTP")
}

async fn call(client: &Client, tool: &'static str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object");
    };
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("call {tool}: {e}"))
}

/// The result as it travels on the wire, which is what these tests describe.
fn wire(result: &CallToolResult) -> Value {
    serde_json::to_value(result).expect("serialize result")
}

fn first_text(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .expect("a first text block")
}

#[tokio::test]
async fn lists_the_fixture_tools_with_their_schemas() {
    let client = stdio_client(&[], &[]).await;
    let page = client.list_tools(None).await.expect("tools/list");
    assert!(page.next_cursor.is_none(), "no pagination without --tools");
    let names: BTreeSet<_> = page.tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(
        names,
        FIXTURE_TOOLS.iter().map(|s| s.to_string()).collect(),
        "tool names"
    );

    let tool = |name: &str| {
        let t = page
            .tools
            .iter()
            .find(|t| t.name == name)
            .expect("tool listed");
        (
            Value::Object((*t.input_schema).clone()),
            t.output_schema
                .as_ref()
                .map(|s| Value::Object((**s).clone())),
        )
    };
    let (_, echo_out) = tool("echo");
    assert_eq!(echo_out, None, "echo is unstructured: no outputSchema");
    let (_, add_out) = tool("add");
    let add_out = add_out.expect("add has an outputSchema");
    assert_eq!(
        add_out["properties"]["sum"]["type"], "integer",
        "add's outputSchema describes sum"
    );

    let (odd_in, odd_out) = tool("odd-names");
    let props: BTreeSet<_> = odd_in["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        props,
        ["class", "from", "model_config", "type-name"]
            .map(String::from)
            .into(),
        "odd-names uses names that are not Python identifiers"
    );
    assert_eq!(
        odd_in["additionalProperties"], false,
        "unknown argument names are rejected"
    );
    assert!(odd_out.is_some(), "odd-names returns structured content");

    let (deep_in, deep_out) = tool("deep");
    let defs = &deep_in["$defs"];
    assert_eq!(
        deep_in["properties"]["payload"]["$ref"], "#/$defs/Payload",
        "payload is a $ref"
    );
    assert_eq!(
        defs["Node"]["properties"]["children"]["items"]["$ref"], "#/$defs/Node",
        "Node is recursive"
    );
    let payload = &defs["Payload"]["properties"];
    assert_eq!(payload["version"]["const"], "v1", "const");
    assert_eq!(
        defs["Color"]["enum"],
        json!(["red", "green", "blue"]),
        "enum"
    );
    assert_eq!(
        payload["accent"]["anyOf"],
        json!([{"$ref": "#/$defs/Color"}, {"type": "null"}]),
        "anyOf with null"
    );
    assert_eq!(
        payload["point"]["prefixItems"].as_array().map(Vec::len),
        Some(3),
        "prefixItems"
    );
    assert!(deep_out.is_some(), "deep returns structured content");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn paginates_tools_list_when_extra_tools_are_registered() {
    let client = stdio_client(&["--tools", "25"], &[]).await;
    let first = client.list_tools(None).await.expect("first page");
    assert_eq!(first.tools.len(), 10, "page size is 10");
    assert_eq!(
        first.next_cursor.as_deref(),
        Some("10"),
        "a cursor to the second page"
    );

    let all = client.list_all_tools().await.expect("all pages");
    assert_eq!(
        all.len(),
        FIXTURE_TOOLS.len() + 25,
        "every tool, across 4 pages"
    );
    let names: BTreeSet<_> = all.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names.len(), all.len(), "no tool appears on two pages");
    assert!(
        names.contains("t0") && names.contains("t24"),
        "t0..t24 are listed"
    );

    let bad = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some("nope".into())),
        ))
        .await;
    assert!(bad.is_err(), "an invalid cursor is a protocol error");

    let r = call(&client, "t7", json!({})).await;
    assert_eq!(first_text(&r), "t7", "extra tools are callable");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn echo_add_and_fail() {
    let client = stdio_client(&[], &[]).await;

    let r = call(&client, "echo", json!({"text": "héllo \"world\""})).await;
    let r = wire(&r);
    assert_eq!(
        (&r["content"], &r["isError"], r.get("structuredContent")),
        (
            &json!([{"type": "text", "text": "héllo \"world\""}]),
            &json!(false),
            None
        ),
        "echo returns its text unstructured"
    );

    let r = call(&client, "add", json!({"a": 2, "b": 40})).await;
    assert_eq!(
        r.structured_content,
        Some(json!({"sum": 42})),
        "add is structured"
    );
    assert_eq!(
        first_text(&r),
        r#"{"sum":42}"#,
        "with a text copy of the structured content"
    );

    let r = call(&client, "fail", json!({"message": "it broke"})).await;
    assert_eq!(
        r.is_error,
        Some(true),
        "fail is a tool error, not a protocol error"
    );
    assert_eq!(first_text(&r), "it broke", "carrying the given message");

    let r = call(&client, "add", json!({"a": "two", "b": 40})).await;
    assert_eq!(
        r.is_error,
        Some(true),
        "bad arguments are a tool error in rmcp 3.9"
    );
    assert!(
        first_text(&r).contains("failed to deserialize parameters"),
        "{r:?}"
    );
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn sleep_runs_calls_concurrently() {
    let client = stdio_client(&[], &[]).await;
    let start = Instant::now();
    // Sleeps long enough that one after the other (8 s) stands well apart from together
    // (4 s), also on a busy machine.
    let (a, b) = tokio::join!(
        call(&client, "sleep", json!({"seconds": 4.0})),
        call(&client, "sleep", json!({"seconds": 4.0})),
    );
    let elapsed = start.elapsed();
    assert_eq!(
        (first_text(&a), first_text(&b)),
        ("slept".into(), "slept".into()),
        "sleep answers \"slept\""
    );
    assert!(
        elapsed >= Duration::from_secs(4),
        "sleep waits: {elapsed:?}"
    );
    assert!(
        elapsed < Duration::from_secs(6),
        "two sleeps overlap: {elapsed:?}"
    );

    let r = call(&client, "sleep", json!({"seconds": -1})).await;
    assert_eq!(
        r.is_error,
        Some(true),
        "a negative duration is a tool error"
    );
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn image_and_mixed_content_blocks() {
    let client = stdio_client(&[], &[]).await;

    let r = wire(&call(&client, "image", json!({})).await);
    let blocks = r["content"].as_array().expect("content");
    assert_eq!(blocks.len(), 2, "an image and a text block");
    assert_eq!(
        (&blocks[0]["type"], &blocks[0]["mimeType"]),
        (&json!("image"), &json!("image/png"))
    );
    let png = BASE64
        .decode(blocks[0]["data"].as_str().expect("data"))
        .expect("base64");
    let img =
        image::load_from_memory_with_format(&png, image::ImageFormat::Png).expect("a valid PNG");
    assert_eq!((img.width(), img.height()), (8, 8), "an 8x8 image");
    assert_eq!(blocks[1]["type"], "text");

    let r = wire(&call(&client, "mixed", json!({})).await);
    let blocks = r["content"].as_array().expect("content");
    let kinds: Vec<_> = blocks
        .iter()
        .map(|b| b["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        kinds,
        ["text", "image", "resource", "audio"],
        "one block of each kind, in order"
    );
    assert_eq!(
        blocks[2]["resource"]["uri"], "fixture://note",
        "embedded text resource"
    );
    assert_eq!(blocks[2]["resource"]["text"], "a note from the fixture");
    assert_eq!(blocks[3]["mimeType"], "audio/wav");
    let wav = BASE64
        .decode(blocks[3]["data"].as_str().expect("data"))
        .expect("base64");
    assert_eq!(
        (&wav[..4], &wav[8..12]),
        (&b"RIFF"[..], &b"WAVE"[..]),
        "a RIFF/WAVE file"
    );
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn counter_and_env_see_the_server_process() {
    let client = stdio_client(&[], &[("FIXTURE_GREETING", "hi there")]).await;
    let r = call(&client, "env", json!({"name": "FIXTURE_GREETING"})).await;
    assert_eq!(
        first_text(&r),
        "hi there",
        "env reads the server's environment"
    );
    let r = call(&client, "env", json!({"name": "FIXTURE_UNSET_VARIABLE"})).await;
    assert_eq!(first_text(&r), "", "an unset variable reads as empty");

    let r = call(&client, "counter", json!({})).await;
    assert_eq!(
        first_text(&r),
        "3",
        "counter counts every call, itself included"
    );
    client.cancel().await.expect("close");

    let client = stdio_client(&[], &[]).await;
    let r = call(&client, "counter", json!({})).await;
    assert_eq!(first_text(&r), "1", "a new process starts counting afresh");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn odd_names_and_deep_echo_their_arguments() {
    let client = stdio_client(&[], &[]).await;
    let args = json!({"from": "a", "class": 1, "type-name": "t", "model_config": true});
    let r = call(&client, "odd-names", args.clone()).await;
    assert_eq!(
        r.structured_content,
        Some(args),
        "arguments come back under their schema names"
    );

    let r = call(&client, "odd-names", json!({"from_": "a", "class_": 1})).await;
    assert_eq!(r.is_error, Some(true), "Python-side names are rejected");
    assert!(first_text(&r).contains("unknown field `from_`"), "{r:?}");

    let payload = json!({
        "version": "v1",
        "tree": {"name": "root", "children": [{"name": "leaf", "children": []}]},
        "color": "green",
        "accent": null,
        "point": [1.5, -2.0, "p"],
    });
    let r = call(&client, "deep", json!({"payload": payload.clone()})).await;
    assert_eq!(
        r.structured_content,
        Some(payload),
        "deep returns the payload unchanged"
    );

    let r = call(&client, "deep", json!({"payload": {"version": "v2"}})).await;
    assert_eq!(
        r.is_error,
        Some(true),
        "a payload against the schema is rejected"
    );
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn crash_exits_without_answering() {
    let client = stdio_client(&[], &[]).await;
    let outcome = tokio::time::timeout(
        Duration::from_secs(10),
        client.call_tool(CallToolRequestParams::new("crash")),
    )
    .await
    .expect("the client notices the crash within 10 s");
    assert!(
        outcome.is_err(),
        "no answer, the connection closes: {outcome:?}"
    );
    let again = client
        .call_tool(CallToolRequestParams::new("counter"))
        .await;
    assert!(again.is_err(), "the session is gone after a crash");
}

#[tokio::test]
async fn crash_exits_with_status_3() {
    use tokio::io::AsyncWriteExt as _;
    let mut child = Command::new(FIXTURE)
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    // Raw JSON-RPC, because the exit status is out of an rmcp client's reach.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let crash = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "crash", "arguments": {}}});
    for msg in [init, initialized, crash] {
        stdin
            .write_all(format!("{msg}\n").as_bytes())
            .await
            .expect("write");
    }
    stdin.flush().await.expect("flush");
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("exits within 10 s")
        .expect("wait");
    assert_eq!(status.code(), Some(3), "crash exits with status 3");
}

#[tokio::test]
async fn stderr_on_start_fails_before_the_protocol() {
    let out = Command::new(FIXTURE)
        .arg("stdio")
        .env("FIXTURE_STDERR_ON_START", "boom: missing API key")
        .stdin(Stdio::null())
        .output()
        .await
        .expect("run");
    assert_eq!(out.status.code(), Some(1), "exits 1");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "boom: missing API key\n",
        "prints the text to stderr"
    );
    assert!(
        out.stdout.is_empty(),
        "says nothing on the protocol channel"
    );

    let (transport, stderr) = TokioChildProcess::builder(Command::new(FIXTURE).configure(|cmd| {
        cmd.arg("stdio").env("FIXTURE_STDERR_ON_START", "boom");
    }))
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn");
    assert!(
        ().serve(transport).await.is_err(),
        "an rmcp client fails to initialize"
    );
    let mut text = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr.expect("piped stderr"), &mut text)
        .await
        .expect("read stderr");
    assert_eq!(
        text, "boom\n",
        "the server's stderr is there to quote in the error"
    );
}

#[tokio::test]
async fn serves_streamable_http_at_mcp() {
    let (mut child, url) = http_server(&["--tools", "25"]).await;

    let client = http_client(&url).await;
    let all = client.list_all_tools().await.expect("list over HTTP");
    assert_eq!(
        all.len(),
        FIXTURE_TOOLS.len() + 25,
        "paginated listing works over HTTP too"
    );
    let r = call(&client, "add", json!({"a": 1, "b": 2})).await;
    assert_eq!(
        r.structured_content,
        Some(json!({"sum": 3})),
        "add over HTTP"
    );
    let r = call(&client, "mixed", json!({})).await;
    assert_eq!(r.content.len(), 4, "mixed over HTTP");
    client.cancel().await.expect("close");

    // Every HTTP session is served by the same process, so the counter keeps going.
    let client = http_client(&url).await;
    let r = call(&client, "counter", json!({})).await;
    assert_eq!(
        first_text(&r),
        "3",
        "counter is per process, not per session"
    );
    client.cancel().await.expect("close");

    child.start_kill().expect("kill");
    let _ = child.wait().await;
}

#[tokio::test]
async fn http_mode_stops_on_sigterm() {
    let (mut child, url) = http_server(&[]).await;
    let client = http_client(&url).await;
    let pid = child.id().expect("pid");
    // Tokio's `Child` can only SIGKILL; send SIGTERM as a supervisor would.
    let status = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .await
        .expect("kill");
    assert!(status.success(), "sent SIGTERM");
    let exit = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("stops within 10 s of SIGTERM, even with a session open")
        .expect("wait");
    assert!(exit.success(), "a clean exit on SIGTERM: {exit:?}");
    drop(client);
}
