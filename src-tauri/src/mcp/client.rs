//! Connecting to an MCP server as a client (rmcp), over stdio, Streamable HTTP or legacy SSE.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>. A stdio
//! server runs in its own process group with a parent-death signal, so it never outlives
//! ipybox; its stderr is kept (the last few KiB) to explain failures.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, RequestId, ServerResult, Tool,
};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use tokio::io::AsyncReadExt;

use super::handler::{Handler, Hooks, ToolProgress};
use super::http::HttpClient;
use super::oauth::{Authorizations, SignInNeeded};
use super::params::{ServerParams, TransportKind};
use super::sse;
use crate::error::{Error, Result};
use crate::events::ProcessExit;

/// Environment variables a stdio server inherits from ipybox (as the MCP SDKs do); anything
/// else it needs goes in the parameters' `env`.
const INHERITED_ENV: [&str; 8] = [
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR",
];

const STDERR_TAIL: usize = 8 * 1024;

/// A live client session with one MCP server.
pub struct McpConnection {
    /// Its exit was reported to the session's listeners.
    exit_reported: std::sync::atomic::AtomicBool,
    name: String,
    service: RunningService<RoleClient, Handler>,
    handler: Handler,
    process_group: Option<i32>,
    stderr: Arc<Mutex<String>>,
    /// How the server's process ended, once it has (stdio servers only).
    exit: Option<tokio::sync::watch::Receiver<Option<ProcessExit>>>,
    /// Its tools as it last listed them, each definition hashed once.
    listing: Mutex<Option<Arc<crate::definition::pins::Listing>>>,
    /// An HTTP server's client, which knows when the server asked for a sign-in.
    http: Option<HttpSide>,
}

/// What an HTTP session knows about its sign-in.
struct HttpSide {
    client: HttpClient,
    url: String,
    /// Its requests carry a kept OAuth sign-in.
    signed_in: bool,
}

impl HttpSide {
    /// The sign-in the server's last refusal asks for.
    fn sign_in_needed(&self, server: &str) -> Option<SignInNeeded> {
        let refusal = self.client.refusal()?;
        Some(SignInNeeded {
            server: server.to_owned(),
            url: self.url.clone(),
            challenge: Some(refusal.challenge),
            again: self.signed_in,
            scope: refusal.scope,
        })
    }
}

impl std::fmt::Debug for McpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpConnection")
            .field("name", &self.name)
            .field("pid", &self.process_group)
            .finish()
    }
}

/// Connect to server `name` with resolved `params` (no `${VAR}` left). A stdio server's
/// command runs as `program` when given (the caller's copy of a program ipybox provides
/// itself, like srt), else as written. A stdio server runs
/// in the neutral directory ([`crate::process::neutral_dir`]), never in the workspace
/// unless its parameters say so with `cwd` (relative to `workspace`): kernel code can write
/// the workspace, and `python -m`, `npx` and `uvx` load code and configuration from their
/// working directory.
pub async fn connect(
    name: &str,
    params: &ServerParams,
    program: Option<Vec<OsString>>,
    workspace: &Path,
    timeout: Duration,
) -> Result<McpConnection> {
    connect_with(name, params, program, workspace, timeout, Hooks::new()).await
}

/// [`connect`], with `hooks` for what the server sends on its own (questions for the
/// person, log messages).
pub async fn connect_with(
    name: &str,
    params: &ServerParams,
    program: Option<Vec<OsString>>,
    workspace: &Path,
    timeout: Duration,
    hooks: Hooks,
) -> Result<McpConnection> {
    let handler = Handler::new(name, hooks);
    let stderr = Arc::new(Mutex::new(String::new()));
    let what = params.summary();
    let fail = |e: String, stderr: &Arc<Mutex<String>>| {
        let tail = stderr
            .lock()
            .map(|s| s.trim().to_owned())
            .unwrap_or_default();
        Error::mcp(format!(
            "cannot connect to the MCP server \"{name}\" ({what}): {e}{}",
            if tail.is_empty() {
                String::new()
            } else {
                format!("\nIts stderr:\n{tail}")
            }
        ))
    };
    let mut http = None;
    let (service, process_group, exit) = match params.transport()? {
        TransportKind::Stdio => {
            let command = params.command.as_deref().unwrap_or_default();
            let program = program.unwrap_or_else(|| vec![command.into()]);
            if program_name(command) == "srt"
                && let Some(settings) = srt_settings(&params.args)
                && Path::new(settings).is_relative()
            {
                return Err(fail(
                    format!(
                        "its sandbox policy {settings:?} is a relative path, which ipybox no longer reads from the workspace (kernel code can rewrite it); register the server again to pin the policy"
                    ),
                    &stderr,
                ));
            }
            let cwd = match params.cwd.as_deref() {
                Some(dir) => workspace.join(dir),
                None => crate::process::neutral_dir().to_path_buf(),
            };
            let mut cmd = tokio::process::Command::new(&program[0]);
            cmd.args(&program[1..])
                .args(&params.args)
                .env_clear()
                .envs(
                    INHERITED_ENV
                        .iter()
                        .filter_map(|k| std::env::var(k).ok().map(|v| (*k, v))),
                )
                .envs(&params.env)
                .current_dir(&cwd)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = crate::process::spawn_supervised_async(cmd, libc::SIGTERM)
                .await
                .map_err(|e| fail(format!("cannot start `{command}`: {e}"), &stderr))?;
            let pgid = child.id().map(|p| p as i32);
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                kill_group(pgid);
                return Err(fail(
                    "its standard input and output are not pipes".into(),
                    &stderr,
                ));
            };
            if let Some(mut err) = child.stderr.take() {
                let sink = stderr.clone();
                let name = name.to_owned();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    while let Ok(n) = err.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        let text = String::from_utf8_lossy(&buf[..n]);
                        tracing::debug!(server = %name, stderr = %text.trim_end());
                        if let Ok(mut s) = sink.lock() {
                            s.push_str(&text);
                            if s.len() > STDERR_TAIL {
                                let cut = s.len() - STDERR_TAIL;
                                let cut = (cut..s.len())
                                    .find(|&i| s.is_char_boundary(i))
                                    .unwrap_or(s.len());
                                s.drain(..cut);
                            }
                        }
                    }
                });
            }
            // Waiting reaps the child and keeps how it ended for the exit report; stopping
            // it stays `kill_group`'s job.
            let (exited, exit) = tokio::sync::watch::channel(None);
            tokio::spawn(async move {
                if let Ok(status) = child.wait().await {
                    let _ = exited.send(ProcessExit::from_status(status));
                }
            });
            let transport = (stdout, stdin);
            match handshake(handler.clone(), transport, timeout).await {
                Ok(service) => (service, pgid, Some(exit)),
                Err(e) => {
                    if let Handshake::Failed(_) = e {
                        // Let the stderr reader catch up with a server that just exited.
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    kill_group(pgid);
                    return Err(fail(e.into_message(), &stderr));
                }
            }
        }
        TransportKind::StreamableHttp => {
            let url = params.url.as_deref().unwrap_or_default();
            let headers: HashMap<_, _> = header_map(params)?
                .into_iter()
                .filter_map(|(k, v)| Some((k?, v)))
                .collect();
            // A token the person gave in the headers is theirs to manage: no OAuth then.
            let own_token = headers.contains_key(&http::header::AUTHORIZATION);
            let authorized = match own_token {
                true => None,
                false => Authorizations::for_home()
                    .map_err(|e| fail(e.to_string(), &stderr))?
                    .client(url)
                    .await
                    .map_err(|e| fail(e.to_string(), &stderr))?,
            };
            let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
            let (answer, side) = match authorized {
                Some(auth) => {
                    let side = HttpSide {
                        client: auth.http_client.clone(),
                        url: url.to_owned(),
                        signed_in: true,
                    };
                    let transport = StreamableHttpClientTransport::with_client(auth, config);
                    (handshake(handler.clone(), transport, timeout).await, side)
                }
                None => {
                    let client = HttpClient::new().map_err(|e| fail(e.to_string(), &stderr))?;
                    let side = HttpSide {
                        client: client.clone(),
                        url: url.to_owned(),
                        signed_in: false,
                    };
                    let transport = StreamableHttpClientTransport::with_client(client, config);
                    (handshake(handler.clone(), transport, timeout).await, side)
                }
            };
            let service = match answer {
                Ok(service) => service,
                Err(e) => {
                    return Err(match side.sign_in_needed(name) {
                        Some(needed) => Error::mcp(format!(
                            "cannot connect to the MCP server \"{name}\" ({what})"
                        ))
                        .because(needed),
                        None => fail(e.into_message(), &stderr),
                    });
                }
            };
            http = Some(side);
            (service, None, None)
        }
        TransportKind::Sse => {
            let url = params.url.as_deref().unwrap_or_default();
            let headers = header_map(params)?;
            let transport = sse::connect(url, &headers, timeout)
                .await
                .map_err(|e| fail(e.to_string(), &stderr))?;
            let service = handshake(handler.clone(), transport, timeout)
                .await
                .map_err(|e| fail(e.into_message(), &stderr))?;
            (service, None, None)
        }
    };
    Ok(McpConnection {
        exit_reported: Default::default(),
        name: name.to_owned(),
        service,
        handler,
        process_group,
        stderr,
        exit,
        listing: Mutex::default(),
        http,
    })
}

/// Why an MCP handshake did not complete.
enum Handshake {
    /// The server answered with an error or closed the connection.
    Failed(String),
    /// No answer within the timeout.
    TimedOut(Duration),
}

impl Handshake {
    fn into_message(self) -> String {
        match self {
            Handshake::Failed(e) => e,
            Handshake::TimedOut(t) => format!("no answer within {:.0} s", t.as_secs_f64()),
        }
    }
}

/// The MCP initialize handshake over `transport`, within `timeout`.
async fn handshake<T, E, A>(
    handler: Handler,
    transport: T,
    timeout: Duration,
) -> std::result::Result<RunningService<RoleClient, Handler>, Handshake>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    match tokio::time::timeout(timeout, handler.serve(transport)).await {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(e)) => Err(Handshake::Failed(e.to_string())),
        Err(_) => Err(Handshake::TimedOut(timeout)),
    }
}

/// The file name of a command (`/usr/bin/srt` → `srt`).
pub(crate) fn program_name(command: &str) -> &str {
    Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command)
}

/// The value of srt's `--settings FILE` (or `--settings=FILE`) among `args`, if given.
pub(crate) fn srt_settings(args: &[String]) -> Option<&str> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--settings" || a == "-s" {
            return it.next().map(String::as_str);
        }
        if let Some(v) = a.strip_prefix("--settings=") {
            return Some(v);
        }
        if a == "-c" || a == "--control-fd" {
            it.next();
            continue;
        }
        if !a.starts_with('-') {
            return None; // the sandboxed command begins
        }
    }
    None
}

/// The parameters' HTTP headers, checked.
fn header_map(params: &ServerParams) -> Result<http::HeaderMap> {
    let mut headers = http::HeaderMap::new();
    for (k, v) in &params.headers {
        let name: http::HeaderName = k
            .parse()
            .map_err(|_| Error::config(format!("invalid HTTP header name {k:?}")))?;
        let value: http::HeaderValue = v
            .parse()
            .map_err(|_| Error::config(format!("invalid value for HTTP header {k}")))?;
        headers.insert(name, value);
    }
    Ok(headers)
}

fn kill_group(pgid: Option<i32>) {
    if let Some(pgid) = pgid.filter(|&p| p > 0) {
        // SAFETY: signalling the process group we created for the server.
        unsafe {
            libc::kill(-pgid, libc::SIGTERM);
        }
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(2));
            // SAFETY: as above; ESRCH when already gone.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        });
    }
}

impl McpConnection {
    /// Every tool the server offers (following pagination).
    pub async fn list_tools(&self) -> Result<Vec<Tool>> {
        self.service
            .list_all_tools()
            .await
            .map_err(|e| self.error("listing tools failed", &e.to_string()))
    }

    /// The tools the server offers, with their definitions: as it listed them before, or
    /// listed now when it has not been asked yet or `fresh` (a server may add or change
    /// tools while it runs). Cached per connection, so a call does not pay a `tools/list`.
    pub async fn listing(&self, fresh: bool) -> Result<Arc<crate::definition::pins::Listing>> {
        if !fresh && let Some(listing) = self.listing.lock().ok().and_then(|n| n.clone()) {
            return Ok(listing);
        }
        let listing = Arc::new(crate::definition::pins::Listing::new(
            &self.list_tools().await?,
        ));
        if let Ok(mut cached) = self.listing.lock() {
            *cached = Some(listing.clone());
        }
        Ok(listing)
    }

    /// Call `tool` with `arguments`. Protocol and transport failures are errors; a tool that
    /// reports failure (`isError`) is a normal result.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<CallToolResult> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        self.service
            .call_tool(params)
            .await
            .map_err(|e| self.call_error(tool, &e.to_string()))
    }

    /// [`Self::call_tool`], sending each progress report the server makes on the call to
    /// `progress` as it comes. Every request carries a progress token; this one is followed.
    pub async fn call_tool_with_progress(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        progress: tokio::sync::mpsc::UnboundedSender<ToolProgress>,
    ) -> Result<CallToolResult> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .service
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| self.call_error(tool, &e.to_string()))?;
        let _following = self.handler.follow(handle.progress_token.clone(), progress);
        let mut abandoned = Abandoned {
            peer: self.service.peer().clone(),
            id: Some(handle.id.clone()),
        };
        let answer = handle.await_response().await;
        abandoned.id = None;
        match answer.map_err(|e| self.call_error(tool, &e.to_string()))? {
            ServerResult::CallToolResult(result) => Ok(result),
            // A request for input across rounds, or a task: protocols after the one
            // ipybox negotiates.
            _ => Err(self.error(
                &format!("calling {tool} failed"),
                "the server answered with something other than a tool result",
            )),
        }
    }

    fn call_error(&self, tool: &str, detail: &str) -> Error {
        let what = if self.is_closed() {
            format!("the server exited or closed the connection during the call to {tool}")
        } else {
            format!("calling {tool} failed")
        };
        self.error(&what, detail)
    }

    /// `true` the first time it is called: whoever notices the exit first reports it.
    pub fn claim_exit_report(&self) -> bool {
        !self
            .exit_reported
            .swap(true, std::sync::atomic::Ordering::AcqRel)
    }

    /// The last lines the server wrote on stderr (stdio servers).
    pub fn stderr_tail(&self) -> String {
        self.stderr
            .lock()
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    }

    /// How the server's process ended: `None` for a remote server, or when it has not
    /// ended within `wait` (its stdout closes a moment before the OS reports the exit).
    pub async fn exit_status(&self, wait: Duration) -> Option<ProcessExit> {
        let mut exit = self.exit.clone()?;
        tokio::time::timeout(wait, exit.wait_for(Option::is_some))
            .await
            .ok()?
            .ok()
            .and_then(|e| *e)
    }

    /// Has the connection (or the server process) gone away?
    pub fn is_closed(&self) -> bool {
        self.service.is_transport_closed() || self.service.is_closed()
    }

    fn error(&self, what: &str, detail: &str) -> Error {
        if let Some(needed) = self
            .http
            .as_ref()
            .and_then(|h| h.sign_in_needed(&self.name))
        {
            return Error::mcp(format!("MCP server \"{}\": {what}", self.name)).because(needed);
        }
        let tail = self
            .stderr
            .lock()
            .map(|s| s.trim().to_owned())
            .unwrap_or_default();
        Error::mcp(format!(
            "MCP server \"{}\": {what}: {detail}{}",
            self.name,
            if tail.is_empty() {
                String::new()
            } else {
                format!("\nIts stderr:\n{tail}")
            }
        ))
    }

    /// Close the session and stop the server process (its whole process group).
    pub async fn close(mut self) {
        let _ = self
            .service
            .close_with_timeout(Duration::from_secs(2))
            .await;
        kill_group(self.process_group.take());
    }
}

/// Tells the server a call is no longer waited for (its caller gave up, e.g. on a timeout),
/// so it can stop the work.
struct Abandoned {
    peer: rmcp::Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let peer = self.peer.clone();
            tokio::spawn(async move {
                let reason = "ipybox stopped waiting for the call".to_owned();
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason)))
                    .await;
            });
        }
    }
}

impl Drop for McpConnection {
    fn drop(&mut self) {
        kill_group(self.process_group.take());
    }
}
