//! The SSE client against a fixture server that controls every byte on the wire, and
//! against the reference "everything" server.

use std::{
    net::SocketAddr,
    path::PathBuf,
    process::Stdio,
    sync::{Arc, Mutex},
};

use reqwest::header::AUTHORIZATION;
use rmcp::{
    ServiceExt,
    model::CallToolRequestParams,
    service::{QuitReason, ServiceError},
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader},
    net::{TcpListener, TcpStream},
    sync::{Notify, mpsc},
};

use super::*;

const TIMEOUT: Duration = Duration::from_secs(10);

// ---- errors without a peer ---------------------------------------------------------------

#[tokio::test]
async fn rejects_invalid_urls() {
    for url in ["not a url", "ftp://127.0.0.1/sse", "/sse"] {
        let error = connect(url, &HeaderMap::new(), TIMEOUT)
            .await
            .expect_err("an invalid URL cannot connect");
        assert!(
            matches!(error, SseError::InvalidUrl { .. }),
            "{url}: expected InvalidUrl, got {error:?}"
        );
    }
}

#[tokio::test]
async fn reports_unreachable_server() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/sse");
    let error = connect(&url, &HeaderMap::new(), TIMEOUT)
        .await
        .expect_err("nothing listens on the port");
    assert!(
        matches!(error, SseError::Unreachable { .. }),
        "expected Unreachable, got {error:?}"
    );
    assert!(
        error.to_string().contains(&url),
        "the message names the URL: {error}"
    );
}

#[test]
fn endpoint_must_keep_the_origin() {
    let sse = Url::parse("http://127.0.0.1:8000/mcp/sse").expect("valid URL");
    let resolve = |raw: &str| resolve_endpoint(&sse, &sse, raw).map(|url| url.to_string());
    assert_eq!(
        resolve("/messages?sessionId=a").expect("absolute path"),
        "http://127.0.0.1:8000/messages?sessionId=a"
    );
    assert_eq!(
        resolve("messages?sessionId=a").expect("path-relative"),
        "http://127.0.0.1:8000/mcp/messages?sessionId=a",
        "a path-relative endpoint resolves against the SSE URL's directory"
    );
    assert_eq!(
        resolve(" http://127.0.0.1:8000/x \n").expect("absolute URL, padded"),
        "http://127.0.0.1:8000/x"
    );
    for raw in [
        "http://evil.example/messages",
        "//evil.example/messages",
        "https://127.0.0.1:8000/messages",
        "http://127.0.0.1:8001/messages",
        "http://localhost:8000/messages",
    ] {
        assert!(
            matches!(
                resolve_endpoint(&sse, &sse, raw),
                Err(SseError::CrossOriginEndpoint { .. })
            ),
            "{raw} is another origin and must be refused"
        );
    }
}

// ---- fixture SSE server ------------------------------------------------------------------

/// How the fixture server behaves; each test varies one thing.
#[derive(Clone)]
struct Script {
    /// Endpoint event data; `{base}` becomes `http://127.0.0.1:<port>`. `None` sends none.
    endpoint: Option<String>,
    eol: &'static str,
    /// Pretty-print replies so each spans many `data:` lines.
    multi_line: bool,
    /// Write events a few bytes at a time.
    fragmented: bool,
    /// Answer POSTs of this method with HTTP 500.
    fail_method: Option<&'static str>,
    /// Accept POSTs of this method but never reply.
    silent_method: Option<&'static str>,
    /// Promise a body longer than what is sent, so closing the stream is a read error for
    /// the client rather than a clean end.
    truncated_body: bool,
}

impl Default for Script {
    fn default() -> Self {
        Self {
            endpoint: Some("/messages?sessionId=abc".to_owned()),
            eol: "\n",
            multi_line: true,
            fragmented: false,
            fail_method: None,
            silent_method: None,
            truncated_body: false,
        }
    }
}

#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

struct State {
    script: Script,
    base: String,
    session: Mutex<Option<mpsc::UnboundedSender<String>>>,
    close_stream: Notify,
    requests: Mutex<Vec<Recorded>>,
}

/// A minimal HTTP/1.1 server speaking the 2024-11-05 SSE transport with a one-tool MCP
/// server behind it. Raw TCP so the tests control every byte on the wire.
struct Fixture {
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Fixture {
    async fn start(script: Script) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind fixture");
        let addr: SocketAddr = listener.local_addr().expect("fixture address");
        let state = Arc::new(State {
            script,
            base: format!("http://{addr}"),
            session: Mutex::new(None),
            close_stream: Notify::new(),
            requests: Mutex::new(Vec::new()),
        });
        let task = tokio::spawn({
            let state = state.clone();
            async move {
                while let Ok((stream, _)) = listener.accept().await {
                    tokio::spawn(serve_connection(stream, state.clone()));
                }
            }
        });
        Self { state, task }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.state.base)
    }

    fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().expect("requests lock").clone()
    }

    async fn wait_for_post(&self, method: &str) -> Recorded {
        let wait = async {
            loop {
                if let Some(found) = self
                    .requests()
                    .into_iter()
                    .find(|r| r.method == "POST" && r.body.contains(method))
                {
                    return found;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(TIMEOUT, wait)
            .await
            .unwrap_or_else(|_| panic!("no POST of {method} reached the fixture"))
    }
}

async fn serve_connection(stream: TcpStream, state: Arc<State>) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).await.is_err() {
        return;
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).await.is_err() {
        return;
    }
    let recorded = Recorded {
        method,
        target,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    state
        .requests
        .lock()
        .expect("requests lock")
        .push(recorded.clone());

    let path = recorded.target.split('?').next().unwrap_or_default();
    match (recorded.method.as_str(), path) {
        ("GET", "/sse") => serve_stream(write, &state).await,
        ("POST", "/messages") => serve_post(write, &state, &recorded.body).await,
        ("GET", "/json") => {
            respond(&mut write, "200 OK", "application/json", "{}").await;
        }
        _ => {
            respond(&mut write, "404 Not Found", "text/plain", "no route\n").await;
        }
    }
}

async fn serve_stream(mut write: tokio::net::tcp::OwnedWriteHalf, state: &State) {
    let script = &state.script;
    let eol = script.eol;
    let (sender, mut receiver) = mpsc::unbounded_channel();
    *state.session.lock().expect("session lock") = Some(sender);
    // Without Content-Length or chunking the body runs until the connection closes.
    let length = if script.truncated_body {
        "Content-Length: 100000000\r\n"
    } else {
        ""
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n\
         Cache-Control: no-cache\r\n{length}Connection: close\r\n\r\n"
    );
    if write.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let mut opening = format!(": keep-alive{eol}{eol}");
    if let Some(endpoint) = &script.endpoint {
        let endpoint = endpoint.replace("{base}", &state.base);
        opening.push_str(&format!(
            "event: endpoint{eol}: ping{eol}data: {endpoint}{eol}{eol}"
        ));
    }
    if write_event(&mut write, &opening, script.fragmented)
        .await
        .is_err()
    {
        return;
    }
    let mut keep_alive = tokio::time::interval(Duration::from_millis(50));
    loop {
        tokio::select! {
            message = receiver.recv() => {
                let Some(message) = message else { return };
                if write_event(&mut write, &message, script.fragmented).await.is_err() {
                    return;
                }
            }
            _ = keep_alive.tick() => {
                if write.write_all(format!(":{eol}").as_bytes()).await.is_err() {
                    return;
                }
            }
            _ = state.close_stream.notified() => {
                let _ = write.shutdown().await;
                return;
            }
        }
    }
}

async fn respond(
    write: &mut tokio::net::tcp::OwnedWriteHalf,
    status: &str,
    content_type: &str,
    body: &str,
) {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    // The client may already have gone; the test's assertions report that, not the fixture.
    let _ = write.write_all(response.as_bytes()).await;
}

async fn write_event(
    write: &mut tokio::net::tcp::OwnedWriteHalf,
    text: &str,
    fragmented: bool,
) -> std::io::Result<()> {
    if !fragmented {
        return write.write_all(text.as_bytes()).await;
    }
    for piece in text.as_bytes().chunks(3) {
        write.write_all(piece).await?;
        write.flush().await?;
        tokio::task::yield_now().await;
    }
    Ok(())
}

async fn serve_post(mut write: tokio::net::tcp::OwnedWriteHalf, state: &State, body: &str) {
    let message: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let method = message["method"].as_str().unwrap_or_default();
    if state.script.fail_method == Some(method) {
        respond(
            &mut write,
            "500 Internal Server Error",
            "text/plain",
            "boom happened",
        )
        .await;
        return;
    }
    respond(&mut write, "202 Accepted", "text/plain", "Accepted").await;
    let Some(id) = message.get("id") else {
        return; // a notification: nothing to answer
    };
    if state.script.silent_method == Some(method) {
        return;
    }
    let reply = match method {
        "initialize" => json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2024-11-05",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "sse-fixture", "version": "0.0.0"},
        }}),
        "tools/list" => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{
            "name": "echo",
            "description": "Echo a message",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
        }]}}),
        "tools/call" => {
            let text = format!(
                "echo: {}",
                message["params"]["arguments"]["message"]
                    .as_str()
                    .unwrap_or_default()
            );
            json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
        }
        _ => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}})
        }
    };
    let eol = state.script.eol;
    let json = if state.script.multi_line {
        serde_json::to_string_pretty(&reply).expect("encode reply")
    } else {
        reply.to_string()
    };
    let mut event = format!("event: message{eol}");
    for line in json.lines() {
        event.push_str(&format!("data: {line}{eol}"));
    }
    event.push_str(eol);
    if let Some(session) = state.session.lock().expect("session lock").as_ref() {
        let _ = session.send(event);
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind port 0");
    listener.local_addr().expect("local address").port()
}

fn auth_headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer sesame"));
    headers
}

async fn call_echo(
    client: &rmcp::service::Peer<RoleClient>,
    message: &str,
) -> Result<String, ServiceError> {
    let arguments = json!({ "message": message });
    let params = CallToolRequestParams::new("echo")
        .with_arguments(arguments.as_object().cloned().unwrap_or_default());
    let result = tokio::time::timeout(TIMEOUT, client.call_tool(params))
        .await
        .expect("call_tool must not hang")?;
    Ok(result
        .content
        .iter()
        .filter_map(|content| content.as_text())
        .map(|text| text.text.clone())
        .collect())
}

// ---- against the fixture -----------------------------------------------------------------

#[tokio::test]
async fn relative_endpoint_multi_line_data_and_headers() {
    let fixture = Fixture::start(Script::default()).await;
    let transport = connect(&fixture.url("/sse"), &auth_headers(), TIMEOUT)
        .await
        .expect("connect to fixture");
    assert_eq!(
        transport.endpoint.as_str(),
        fixture.url("/messages?sessionId=abc"),
        "a relative endpoint resolves against the SSE URL"
    );
    let client = ().serve(transport).await.expect("initialize over SSE");
    let tools = client.list_all_tools().await.expect("list tools");
    assert_eq!(
        tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(),
        ["echo"],
        "the fixture's tool list arrives through multi-line data events"
    );
    assert_eq!(
        call_echo(client.peer(), "hi").await.expect("call echo"),
        "echo: hi"
    );

    let requests = fixture.requests();
    let get = requests
        .iter()
        .find(|r| r.method == "GET")
        .expect("the GET was recorded");
    assert_eq!(
        get.header("authorization"),
        Some("Bearer sesame"),
        "custom headers go on the GET"
    );
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    let posts: Vec<_> = requests.iter().filter(|r| r.method == "POST").collect();
    assert!(
        posts.len() >= 4,
        "initialize, initialized, tools/list, tools/call were posted: {posts:?}"
    );
    for post in posts {
        assert_eq!(
            post.target, "/messages?sessionId=abc",
            "POSTs go to the announced endpoint"
        );
        assert_eq!(
            post.header("authorization"),
            Some("Bearer sesame"),
            "custom headers go on every POST"
        );
        assert_eq!(post.header("content-type"), Some("application/json"));
    }
    client.cancel().await.expect("shut the client down");
}

#[tokio::test]
async fn absolute_endpoint_crlf_and_fragmented_writes() {
    let fixture = Fixture::start(Script {
        endpoint: Some("{base}/messages?sessionId=abs".to_owned()),
        eol: "\r\n",
        fragmented: true,
        ..Script::default()
    })
    .await;
    let transport = connect(&fixture.url("/sse"), &HeaderMap::new(), TIMEOUT)
        .await
        .expect("connect to fixture");
    assert_eq!(
        transport.endpoint.as_str(),
        fixture.url("/messages?sessionId=abs")
    );
    let client = ().serve(transport).await.expect("initialize over SSE");
    assert_eq!(
        call_echo(client.peer(), "crlf").await.expect("call echo"),
        "echo: crlf",
        "CRLF line ends split across TCP writes still parse"
    );
    client.cancel().await.expect("shut the client down");
}

#[tokio::test]
async fn refuses_cross_origin_endpoint() {
    for endpoint in ["http://evil.example/messages", "//evil.example/messages"] {
        let fixture = Fixture::start(Script {
            endpoint: Some(endpoint.to_owned()),
            ..Script::default()
        })
        .await;
        let error = connect(&fixture.url("/sse"), &auth_headers(), TIMEOUT)
            .await
            .expect_err("a cross-origin endpoint must be refused");
        assert!(
            matches!(error, SseError::CrossOriginEndpoint { .. }),
            "{endpoint}: expected CrossOriginEndpoint, got {error:?}"
        );
        assert!(
            fixture.requests().iter().all(|r| r.method == "GET"),
            "nothing was posted anywhere"
        );
    }
}

#[tokio::test]
async fn times_out_without_endpoint_event() {
    let fixture = Fixture::start(Script {
        endpoint: None,
        ..Script::default()
    })
    .await;
    let started = std::time::Instant::now();
    let error = connect(
        &fixture.url("/sse"),
        &HeaderMap::new(),
        Duration::from_millis(300),
    )
    .await
    .expect_err("no endpoint event was sent");
    assert!(
        matches!(error, SseError::NoEndpoint { .. }),
        "expected NoEndpoint, got {error:?}"
    );
    assert!(
        error.to_string().contains("did not send its endpoint"),
        "the message says what is missing: {error}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "keep-alive comments must not extend the timeout"
    );
}

#[tokio::test]
async fn stream_closed_before_endpoint() {
    let fixture = Fixture::start(Script {
        endpoint: None,
        ..Script::default()
    })
    .await;
    // Notify keeps the permit, so the stream closes right after its opening comment.
    fixture.state.close_stream.notify_one();
    let error = connect(&fixture.url("/sse"), &HeaderMap::new(), TIMEOUT)
        .await
        .expect_err("the stream ended without an endpoint");
    assert!(
        matches!(error, SseError::ClosedBeforeEndpoint { .. }),
        "expected ClosedBeforeEndpoint, got {error:?}"
    );
}

#[tokio::test]
async fn reports_http_status_and_wrong_content_type() {
    let fixture = Fixture::start(Script::default()).await;
    let error = connect(&fixture.url("/missing"), &HeaderMap::new(), TIMEOUT)
        .await
        .expect_err("404");
    assert!(
        matches!(
            error,
            SseError::Status {
                status: StatusCode::NOT_FOUND,
                ..
            }
        ),
        "expected Status 404, got {error:?}"
    );
    assert!(
        error.to_string().contains("404 Not Found: no route"),
        "status and body are named: {error}"
    );

    let error = connect(&fixture.url("/json"), &HeaderMap::new(), TIMEOUT)
        .await
        .expect_err("not an event stream");
    assert!(
        matches!(error, SseError::NotEventStream { .. }),
        "expected NotEventStream, got {error:?}"
    );
}

#[tokio::test]
async fn failed_post_reaches_the_caller() {
    let fixture = Fixture::start(Script {
        fail_method: Some("tools/call"),
        ..Script::default()
    })
    .await;
    let transport = connect(&fixture.url("/sse"), &HeaderMap::new(), TIMEOUT)
        .await
        .expect("connect to fixture");
    let client = ().serve(transport).await.expect("initialize over SSE");
    let error = call_echo(client.peer(), "hi")
        .await
        .expect_err("the POST was answered with 500");
    let text = error.to_string();
    assert!(
        matches!(error, ServiceError::TransportSend(_)),
        "expected TransportSend, got {error:?}"
    );
    assert!(
        text.contains("500 Internal Server Error") && text.contains("boom happened"),
        "the error names the status and the body: {text}"
    );
    assert!(
        !client.is_transport_closed(),
        "a rejected POST does not end the session"
    );
    client.cancel().await.expect("shut the client down");
}

#[tokio::test]
async fn stream_end_closes_the_session() {
    stream_close_ends_the_session(false).await;
}

#[tokio::test]
async fn stream_error_closes_the_session() {
    stream_close_ends_the_session(true).await;
}

async fn stream_close_ends_the_session(truncated_body: bool) {
    let fixture = Fixture::start(Script {
        silent_method: Some("tools/call"),
        truncated_body,
        ..Script::default()
    })
    .await;
    let transport = connect(&fixture.url("/sse"), &HeaderMap::new(), TIMEOUT)
        .await
        .expect("connect to fixture");
    let client = ().serve(transport).await.expect("initialize over SSE");
    let peer = client.peer().clone();
    let pending = tokio::spawn(async move { call_echo(&peer, "never answered").await });
    fixture.wait_for_post("tools/call").await;

    fixture.state.close_stream.notify_one();
    let result = tokio::time::timeout(TIMEOUT, pending)
        .await
        .expect("the pending call ends when the stream closes")
        .expect("call task");
    assert!(
        matches!(result, Err(ServiceError::TransportClosed)),
        "expected TransportClosed, got {result:?}"
    );
    let reason = tokio::time::timeout(TIMEOUT, client.waiting())
        .await
        .expect("the service stops when the stream closes")
        .expect("service task");
    assert!(
        matches!(reason, QuitReason::Closed),
        "rmcp sees the transport close, got {reason:?}"
    );
}

// ---- against the reference server --------------------------------------------------------

fn node_modules() -> PathBuf {
    let root = std::env::var_os("IPYBOX_TEST_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/servers")));
    let script = root.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        script.is_file(),
        "{} not found. Install the reference server with \
         `npm install --prefix <dir> @modelcontextprotocol/server-everything` and set \
         IPYBOX_TEST_NODE_MODULES=<dir> (default /work/main/tests/servers).",
        script.display()
    );
    root
}

#[tokio::test]
async fn everything_server_over_sse() {
    let root = node_modules();
    let port = free_port();
    let mut server = tokio::process::Command::new("node")
        .arg(root.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
        .arg("sse")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start node (is it on PATH?)");
    let ready = async {
        while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), ready)
        .await
        .expect("server-everything listens within 30 s");

    let url = format!("http://127.0.0.1:{port}/sse");
    let transport = connect(&url, &auth_headers(), TIMEOUT)
        .await
        .expect("connect to server-everything");
    assert_eq!(
        transport.endpoint.path(),
        "/message",
        "server-everything posts to /message"
    );
    let client = ().serve(transport).await.expect("initialize over SSE");
    let tools = client.list_all_tools().await.expect("list tools");
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert!(
        names.len() >= 10,
        "server-everything has about 13 tools: {names:?}"
    );
    assert!(
        names.iter().any(|n| n == "echo"),
        "echo is listed: {names:?}"
    );
    assert_eq!(
        call_echo(client.peer(), "hi").await.expect("call echo"),
        "Echo: hi"
    );
    client.cancel().await.expect("shut the client down");
    server.kill().await.expect("stop server-everything");
}
