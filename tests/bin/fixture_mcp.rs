//! A small MCP server whose tools exercise the corners of the protocol that ipybox's MCP
//! client and API generator must handle: unstructured and structured results, tool errors,
//! slow and crashing tools, every content-block kind, awkward names, rich schemas and
//! paginated tool lists.
//!
//! ```text
//! ipybox-fixture-mcp [--tools N] stdio
//! ipybox-fixture-mcp [--tools N] http 127.0.0.1:PORT   # Streamable HTTP at /mcp
//! ```
//!
//! In HTTP mode the server prints `listening on ADDR` to stderr once bound (port 0 picks a
//! free port, and the line carries the real one). If `FIXTURE_STDERR_ON_START` is set, the
//! server prints its value to stderr and exits with status 1 before speaking any protocol.
//!
//! Speaks MCP as specified at <https://modelcontextprotocol.io/specification>.

// MCP logging is deprecated by SEP-2577 (rmcp marks it so); the fixture still logs as servers
// of the protocol versions ipybox negotiates do.
#![allow(deprecated)]

use std::collections::HashMap;
use std::{
    io::Write as _,
    net::SocketAddr,
    process::ExitCode,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use base64::{Engine as _, engine::general_purpose::STANDARD as BASE64};
use rmcp::{
    ErrorData, Json, RoleServer, ServerHandler, ServiceExt as _,
    handler::server::{
        common::schema_for_empty_input,
        tool::{ToolCallContext, ToolRoute, ToolRouter},
        wrapper::Parameters,
    },
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
        LoggingLevel, LoggingMessageNotificationParam, PaginatedRequestParams,
        ProgressNotificationParam, Tool,
    },
    schemars::{self, JsonSchema},
    service::RequestContext,
    tool, tool_handler, tool_router,
    transport::{
        stdio,
        streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        },
    },
};
use serde::{Deserialize, Serialize};

/// Page size of `tools/list` when extra tools are registered with `--tools N`.
const PAGE_SIZE: usize = 10;

const USAGE: &str = "usage: ipybox-fixture-mcp [--tools N] (stdio | http HOST:PORT)";

#[derive(Deserialize, JsonSchema)]
struct EchoParams {
    /// Text to return unchanged.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct AddParams {
    /// Left operand.
    a: i64,
    /// Right operand.
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct AddResult {
    /// a + b
    sum: i64,
}

#[derive(Deserialize, JsonSchema)]
struct FailParams {
    /// Message of the tool error.
    message: String,
}

#[derive(Deserialize, JsonSchema)]
struct SleepParams {
    /// How long to sleep, in seconds.
    seconds: f64,
}

#[derive(Deserialize, JsonSchema)]
struct WriteParams {
    /// Absolute path of the file to create or replace.
    path: String,
    /// Its contents.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct EnvParams {
    /// Name of the environment variable to read.
    name: String,
}

/// Property names that are Python keywords, invalid identifiers or pydantic internals, so
/// that generated code must alias them and send them under these exact names.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OddNames {
    /// A Python keyword.
    from: String,
    /// Another Python keyword.
    class: i64,
    /// Not a Python identifier.
    #[serde(rename = "type-name", default, skip_serializing_if = "Option::is_none")]
    type_name: Option<String>,
    /// Reserved by pydantic v2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model_config: Option<bool>,
}

/// A tree node; `children` makes the schema recursive through `$defs`.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Node {
    name: String,
    #[serde(default)]
    children: Vec<Node>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Color {
    Red,
    Green,
    Blue,
}

#[derive(Serialize, Deserialize)]
enum SchemaVersion {
    #[serde(rename = "v1")]
    V1,
}

/// Hand-written because schemars renders a one-variant enum as `enum: ["v1"]`, not `const`.
fn schema_version_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "const": "v1" })
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Payload {
    /// Always "v1".
    #[schemars(schema_with = "schema_version_schema")]
    version: SchemaVersion,
    /// Root of a recursive tree.
    tree: Node,
    /// One of a fixed set of colours.
    color: Color,
    /// An optional colour: `anyOf` a `$ref` and `null`.
    accent: Option<Color>,
    /// A fixed-shape tuple: `prefixItems`.
    point: (f64, f64, String),
}

#[derive(Deserialize, JsonSchema)]
struct DeepParams {
    payload: Payload,
}

#[derive(Clone)]
struct Fixture {
    tool_router: ToolRouter<Self>,
    /// Calls to any tool in this process, shared by every session.
    calls: Arc<AtomicU64>,
    paginate: bool,
}

#[tool_router]
impl Fixture {
    fn new(extra_tools: usize, calls: Arc<AtomicU64>) -> Self {
        let mut tool_router = Self::tool_router();
        for i in 0..extra_tools {
            let name = format!("t{i}");
            let tool = Tool::new(
                name.clone(),
                format!("Trivial tool {i}."),
                schema_for_empty_input(),
            );
            tool_router.add_route(ToolRoute::new_dyn(
                tool,
                move |_: ToolCallContext<'_, Self>| {
                    let text = name.clone();
                    Box::pin(async move {
                        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
                    })
                },
            ));
        }
        // A server that changes a tool after it was trusted: the descriptions named in the
        // JSON file `FIXTURE_DESCRIPTIONS_FILE` (`{"echo": "…"}`) replace the tools' own,
        // read when the server starts.
        if let Some(file) = std::env::var_os("FIXTURE_DESCRIPTIONS_FILE")
            && let Ok(text) = std::fs::read_to_string(file)
            && let Ok(map) = serde_json::from_str::<HashMap<String, String>>(&text)
        {
            for (name, description) in map {
                if let Some(route) = tool_router.map.get_mut(name.as_str()) {
                    route.attr.description = Some(description.into());
                }
            }
        }
        Self {
            tool_router,
            calls,
            paginate: extra_tools > 0,
        }
    }

    #[tool(description = "Return the given text unchanged.")]
    fn echo(&self, Parameters(EchoParams { text }): Parameters<EchoParams>) -> String {
        text
    }

    #[tool(description = "Add two integers.")]
    fn add(&self, Parameters(AddParams { a, b }): Parameters<AddParams>) -> Json<AddResult> {
        Json(AddResult { sum: a + b })
    }

    #[tool(description = "Fail with the given message as a tool error.")]
    fn fail(&self, Parameters(FailParams { message }): Parameters<FailParams>) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(message)])
    }

    #[tool(description = "Sleep for the given number of seconds, then return \"slept\".")]
    async fn sleep(
        &self,
        Parameters(SleepParams { seconds }): Parameters<SleepParams>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        match Duration::try_from_secs_f64(seconds) {
            Ok(duration) => {
                // A long call as a client sees one: a log message when it starts, then a
                // progress report after each quarter, when the request carries a token.
                let _ = context
                    .peer
                    .notify_logging_message(LoggingMessageNotificationParam::new(
                        LoggingLevel::Info,
                        serde_json::json!(format!("sleeping {seconds} s")),
                    ))
                    .await;
                let token = context.meta.get_progress_token();
                for quarter in 1..=4u32 {
                    tokio::time::sleep(duration / 4).await;
                    if let Some(token) = &token {
                        let report = ProgressNotificationParam::new(token.clone(), quarter.into())
                            .with_total(4.0)
                            .with_message(format!("{quarter} of 4"));
                        let _ = context.peer.notify_progress(report).await;
                    }
                }
                CallToolResult::success(vec![ContentBlock::text("slept")])
            }
            Err(err) => CallToolResult::error(vec![ContentBlock::text(format!(
                "invalid seconds {seconds}: {err}"
            ))]),
        }
    }

    #[tool(description = "Write text to a file; a tool error says why it could not.")]
    fn write_file(
        &self,
        Parameters(WriteParams { path, text }): Parameters<WriteParams>,
    ) -> CallToolResult {
        match std::fs::write(&path, text) {
            Ok(()) => CallToolResult::success(vec![ContentBlock::text("written")]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!("{path}: {e}"))]),
        }
    }

    #[tool(description = "Exit the server process at once with status 3, without answering.")]
    fn crash(&self) -> String {
        std::process::exit(3)
    }

    #[tool(description = "Return a small PNG image and a text block.")]
    fn image(&self) -> Result<CallToolResult, ErrorData> {
        Ok(CallToolResult::success(vec![
            ContentBlock::image(BASE64.encode(png()?), "image/png"),
            ContentBlock::text("an 8x8 PNG"),
        ]))
    }

    #[tool(
        description = "Return one content block of each kind: text, image, embedded resource, audio."
    )]
    fn mixed(&self) -> Result<CallToolResult, ErrorData> {
        Ok(CallToolResult::success(vec![
            ContentBlock::text("mixed content"),
            ContentBlock::image(BASE64.encode(png()?), "image/png"),
            ContentBlock::embedded_text("fixture://note", "a note from the fixture"),
            ContentBlock::audio(BASE64.encode(wav()), "audio/wav"),
        ]))
    }

    #[tool(
        description = "Return how many tool calls this server process has answered, this one included."
    )]
    fn counter(&self) -> String {
        // `call_tool` has already counted this call.
        self.calls.load(Ordering::SeqCst).to_string()
    }

    #[tool(
        description = "Return when this server received the call, in microseconds since the Unix epoch (for timing a call's way in)."
    )]
    fn clock(&self) -> String {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros())
            .unwrap_or_default()
            .to_string()
    }

    #[tool(
        description = "Return the value of an environment variable of the server process, or \"\" if unset."
    )]
    fn env(&self, Parameters(EnvParams { name }): Parameters<EnvParams>) -> String {
        std::env::var(name).unwrap_or_default()
    }

    #[tool(
        name = "odd-names",
        description = "Return the arguments received, keyed by their schema names."
    )]
    fn odd_names(&self, Parameters(args): Parameters<OddNames>) -> Json<OddNames> {
        Json(args)
    }

    #[tool(
        description = "Return the payload unchanged; its schema uses $defs, a recursive $ref, anyOf with null, an enum, const and prefixItems."
    )]
    fn deep(&self, Parameters(DeepParams { payload }): Parameters<DeepParams>) -> Json<Payload> {
        Json(payload)
    }
}

#[tool_handler(router = self.tool_router, name = "ipybox-fixture", version = "0.1.0")]
impl ServerHandler for Fixture {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.tool_router
            .call(ToolCallContext::new(self, request, context))
            .await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.tool_router.list_all();
        if !self.paginate {
            return Ok(ListToolsResult::with_all_items(tools));
        }
        // The cursor is the offset of the page, opaque to clients.
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|&start| start < tools.len())
                .ok_or_else(|| {
                    ErrorData::invalid_params(format!("invalid cursor {cursor:?}"), None)
                })?,
        };
        let end = (start + PAGE_SIZE).min(tools.len());
        let mut page = ListToolsResult::with_all_items(tools[start..end].to_vec());
        page.next_cursor = (end < tools.len()).then(|| end.to_string());
        Ok(page)
    }
}

/// An 8x8 RGB gradient, encoded as PNG.
fn png() -> Result<Vec<u8>, ErrorData> {
    let img = image::RgbImage::from_fn(8, 8, |x, y| {
        // x, y < 8, so the products fit in a byte.
        image::Rgb([(x * 32) as u8, (y * 32) as u8, 128])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png)
        .map_err(|e| ErrorData::internal_error(format!("PNG encoding failed: {e}"), None))?;
    Ok(out.into_inner())
}

/// A 1 ms, 8 kHz, 16-bit mono PCM WAV file.
fn wav() -> Vec<u8> {
    const RATE: u32 = 8000;
    let samples: Vec<i16> = (0..8)
        .map(|i| if i % 2 == 0 { 1000 } else { -1000 })
        .collect();
    let data_len = (samples.len() * 2) as u32;
    let mut out = Vec::with_capacity(44 + data_len as usize);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // channels
    out.extend_from_slice(&RATE.to_le_bytes());
    out.extend_from_slice(&(RATE * 2).to_le_bytes()); // byte rate
    out.extend_from_slice(&2u16.to_le_bytes()); // block align
    out.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    for s in samples {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out
}

enum Mode {
    Stdio,
    Http(SocketAddr),
}

fn parse_args() -> Result<(Mode, usize), String> {
    let mut args = std::env::args().skip(1);
    let mut extra_tools = 0;
    let mut mode = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--tools" => {
                let n = args.next().ok_or("--tools needs a number")?;
                extra_tools = n
                    .parse()
                    .map_err(|_| format!("--tools: not a number: {n}"))?;
            }
            "stdio" => mode = Some(Mode::Stdio),
            "http" => {
                let addr = args.next().ok_or("http needs HOST:PORT")?;
                mode = Some(Mode::Http(
                    addr.parse()
                        .map_err(|e| format!("bad address {addr}: {e}"))?,
                ));
            }
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    Ok((mode.ok_or("no mode given")?, extra_tools))
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Serves Streamable HTTP at `/mcp` on `listener` until `shutdown` resolves.
async fn serve_http(
    listener: tokio::net::TcpListener,
    extra_tools: usize,
    calls: Arc<AtomicU64>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let config = StreamableHttpServerConfig::default();
    let sessions = config.cancellation_token.clone();
    let service = StreamableHttpService::new(
        move || Ok(Fixture::new(extra_tools, calls.clone())),
        LocalSessionManager::default().into(),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            shutdown.await;
            // Open SSE streams would otherwise hold the graceful shutdown forever.
            sessions.cancel();
        })
        .await
}

async fn run(mode: Mode, extra_tools: usize) -> Result<(), Box<dyn std::error::Error>> {
    let calls = Arc::new(AtomicU64::new(0));
    match mode {
        Mode::Stdio => {
            Fixture::new(extra_tools, calls)
                .serve(stdio())
                .await?
                .waiting()
                .await?;
        }
        Mode::Http(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            let bound = listener.local_addr()?;
            // The readiness line is this binary's interface: tests wait for it and read the port.
            writeln!(std::io::stderr(), "listening on {bound}")?;
            serve_http(listener, extra_tools, calls, shutdown_signal()).await?;
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    if let Ok(text) = std::env::var("FIXTURE_STDERR_ON_START") {
        let _ = writeln!(std::io::stderr(), "{text}");
        return ExitCode::from(1);
    }
    let (mode, extra_tools) = match parse_args() {
        Ok(parsed) => parsed,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "{err}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(mode, extra_tools).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "ipybox-fixture-mcp: {err}");
            ExitCode::FAILURE
        }
    }
}
