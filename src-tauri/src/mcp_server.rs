//! ipybox as an MCP server (`ipybox mcp`): agents such as Claude Code register MCP servers and
//! run Python in a stateful kernel whose code calls those servers' tools through the
//! generated API. Tool names, parameters and defaults follow the Python ipybox's server.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/tools>. Failures of
//! the code (exceptions, timeouts) are tool results flagged `isError`, not protocol faults.
//! Who approves the tool calls the code makes is an [`ApprovalHandler`] (approve all, or
//! rules); the desktop app plugs in its dialog the same way.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::executor::CodeExecutor;
use crate::mcp::ServerParams;
use crate::mcp::params::Variables;
use crate::tools::ApprovalHandler;

/// Prefix of environment variables passed to the kernel (without the prefix).
pub const KERNEL_ENV_PREFIX: &str = "KERNEL_ENV_";

/// How `ipybox mcp` is set up.
#[derive(Debug, Clone)]
pub struct McpServerConfig {
    /// The workspace: the kernel's working directory, home of `mcptools/` and `.env`.
    pub workspace: PathBuf,
    /// Decides the tool calls made by executed code.
    pub approval: Arc<dyn ApprovalHandler>,
    /// An existing Python environment instead of the managed one.
    pub python: Option<PathBuf>,
    /// Run the kernel in a sandbox. `install_package` then installs wheels only, so that no
    /// package build script runs on the host.
    pub sandbox: Option<crate::sandbox::SandboxOptions>,
}

/// The four tools of ipybox's MCP server.
#[derive(Debug, Clone)]
pub struct IpyboxMcpServer {
    executor: CodeExecutor,
    tool_router: ToolRouter<Self>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct RegisterParams {
    /// Name for the server; becomes the Python package `mcptools.<server_name>`, so it must
    /// be a valid Python identifier (e.g. `github`, `fs`).
    server_name: String,
    /// Connection parameters. Stdio: {"command": ..., "args": [...], "env": {...}, "cwd": ...}.
    /// HTTP: {"url": ..., "headers": {...}}. Optional "type": "stdio" | "streamable_http" | "sse".
    /// "${VAR}" placeholders are replaced from ipybox's environment and the workspace .env.
    server_params: serde_json::Map<String, serde_json::Value>,
}

fn default_timeout() -> f64 {
    120.0
}

fn default_max_output_chars() -> usize {
    5000
}

#[derive(Debug, Deserialize, JsonSchema)]
struct ExecuteParams {
    /// Python code to run. State (variables, imports) persists between calls.
    code: String,
    /// Seconds before the execution is interrupted (state is kept). Time spent waiting for
    /// tool-call approval does not count.
    #[serde(default = "default_timeout")]
    timeout: f64,
    /// Longer output is truncated, with a note saying so.
    #[serde(default = "default_max_output_chars")]
    max_output_chars: usize,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct InstallParams {
    /// A pip requirement: a name, a name with a version specifier (`pandas>=2`), or a
    /// `git+https://...` URL.
    package_name: String,
}

fn error_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.into())])
}

/// Cut `text` to at most `max` characters with a clear marker.
pub fn truncate_output(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}\n\n[output truncated: showing the first {max} of {total} characters]")
}

#[tool_router]
impl IpyboxMcpServer {
    /// A server for `config`; the kernel starts in the background right away.
    pub fn new(config: McpServerConfig) -> Result<Self> {
        let workspace = std::fs::canonicalize(&config.workspace).map_err(|e| {
            Error::Config(format!(
                "the workspace {} is not usable: {e}",
                config.workspace.display()
            ))
        })?;
        let vars = Variables::load(Some(&workspace))?;
        let kernel_env: BTreeMap<String, String> = vars
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix(KERNEL_ENV_PREFIX)
                    .filter(|k| !k.is_empty())
                    .map(|k| (k.to_owned(), v.to_owned()))
            })
            .collect();
        let mut builder = CodeExecutor::builder()
            .working_dir(&workspace)
            .kernel_env(kernel_env)
            .approval_handler(config.approval)
            .show_progress(true);
        if let Some(p) = &config.python {
            builder = builder.python(p);
        }
        builder = builder.sandbox_options(config.sandbox);
        let executor = builder.build();
        let background = executor.clone();
        tokio::spawn(async move {
            if let Err(e) = background.start().await {
                tracing::error!(error = %e, "starting the kernel failed; the next call retries");
            }
        });
        Ok(IpyboxMcpServer {
            executor,
            tool_router: Self::tool_router(),
        })
    }

    /// The executor behind the server.
    pub fn executor(&self) -> &CodeExecutor {
        &self.executor
    }

    #[tool(
        description = "Register an MCP server and generate a typed Python API for its tools, importable in execute_ipython_cell as `from mcptools.<server_name>.<tool> import Params, Result, run` (Result only when the tool declares an output schema; otherwise run() returns a str). Call `run(Params(...))`; every call is subject to approval. Returns the generated module names. Read a module's source (e.g. print(open('mcptools/<server_name>/<tool>.py').read())) to see its parameters."
    )]
    async fn register_mcp_server(
        &self,
        Parameters(p): Parameters<RegisterParams>,
    ) -> CallToolResult {
        if let Err(e) = crate::registry::check_server_name(&p.server_name) {
            return error_result(e.to_string());
        }
        let params = match ServerParams::from_json(&serde_json::Value::Object(p.server_params)) {
            Ok(params) => params,
            Err(e) => return error_result(e.to_string()),
        };
        match self
            .executor
            .register_mcp_server(&p.server_name, &params)
            .await
        {
            Ok(g) => {
                let mut text = format!(
                    "Registered \"{}\": {} tool module(s) in mcptools/{}/.\n",
                    p.server_name,
                    g.modules.len(),
                    p.server_name
                );
                for (module, tool) in g.modules.iter().zip(&g.tools) {
                    text.push_str(&format!(
                        "- from mcptools.{}.{module} import Params, run  # tool \"{tool}\"\n",
                        p.server_name
                    ));
                }
                for (tool, reason) in &g.skipped {
                    text.push_str(&format!("- skipped {tool}: {reason}\n"));
                }
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            Err(e) => error_result(e.to_string()),
        }
    }

    #[tool(
        description = "Execute Python code in a stateful IPython kernel (variables and imports persist across calls) and return its output: printed text, the value of the last expression, and images the code displays (e.g. matplotlib plots) as image content. The working directory is the workspace. Exceptions come back as an error result with the traceback. Tools of registered MCP servers are called from the code through the generated `mcptools` package."
    )]
    async fn execute_ipython_cell(
        &self,
        Parameters(p): Parameters<ExecuteParams>,
    ) -> CallToolResult {
        let timeout = (p.timeout > 0.0).then(|| Duration::from_secs_f64(p.timeout.min(1e9)));
        if let Err(e) = self.executor.start().await {
            return error_result(format!("the kernel could not start: {e}"));
        }
        match self.executor.execute(&p.code, timeout).await {
            Ok(result) => {
                let text =
                    truncate_output(result.text.as_deref().unwrap_or(""), p.max_output_chars);
                let mut content = Vec::new();
                let mut listing = String::new();
                // The bytes ipybox saved, not the file re-read: kernel code can replace the
                // file with a link to anything the host may read.
                for image in &result.image_data {
                    listing.push_str(&format!("\n![image]({})", image.path.display()));
                    content.push(ContentBlock::image(
                        base64::engine::general_purpose::STANDARD.encode(&image.data),
                        image.mime.clone(),
                    ));
                }
                let body = match (text.is_empty(), listing.is_empty()) {
                    (true, true) => String::from("(no output)"),
                    (_, true) => text,
                    (true, false) => format!("Generated images:{listing}"),
                    (false, false) => format!("{text}\n\nGenerated images:{listing}"),
                };
                content.insert(0, ContentBlock::text(body));
                CallToolResult::success(content)
            }
            Err(Error::CodeExecution { error, output }) => {
                let mut text = String::new();
                if let Some(out) = &output.text {
                    text.push_str(out);
                    text.push_str("\n\n");
                }
                text.push_str(&error.to_string());
                error_result(truncate_output(&text, p.max_output_chars.max(2000)))
            }
            Err(e) => {
                let mut text = e.to_string();
                if let Some(out) = e.partial_output().and_then(|o| o.text.as_deref()) {
                    text = format!("{}\n\n{text}", truncate_output(out, p.max_output_chars));
                }
                error_result(text)
            }
        }
    }

    #[tool(
        description = "Install a Python package with pip into the kernel's environment (a name, a version specifier like `pandas>=2`, or a git URL). It can be imported in the next execute_ipython_cell. Returns pip's output."
    )]
    async fn install_package(&self, Parameters(p): Parameters<InstallParams>) -> CallToolResult {
        let spec = p.package_name.trim().to_owned();
        match self.executor.install_package(&spec).await {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(format!(
                "Installed {spec}.\n{}",
                truncate_output(&text, 5000)
            ))]),
            Err(e) => error_result(truncate_output(&e.to_string(), 5000)),
        }
    }

    #[tool(
        description = "Reset the kernel: a fresh Python process with no variables or imports. Installed packages and generated mcptools/ stay; MCP server sessions restart on their next call."
    )]
    async fn reset(&self) -> CallToolResult {
        if let Err(e) = self.executor.start().await {
            return error_result(format!("the kernel could not start: {e}"));
        }
        match self.executor.reset().await {
            Ok(()) => CallToolResult::success(vec![ContentBlock::text("The kernel was reset.")]),
            Err(e) => error_result(e.to_string()),
        }
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "ipybox",
    instructions = "Run Python in a stateful IPython kernel with execute_ipython_cell. Register MCP servers with register_mcp_server to call their tools from that code through a typed API (mcptools.<server>.<tool>). Install packages with install_package; reset gives a fresh kernel."
)]
impl ServerHandler for IpyboxMcpServer {}

/// Serve over stdio until the client disconnects. Logs go to stderr; stdout is the protocol.
pub async fn serve_stdio(server: IpyboxMcpServer) -> Result<()> {
    use rmcp::ServiceExt;
    let executor = server.executor.clone();
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| Error::Mcp(format!("the MCP session over stdio failed to start: {e}")))?;
    let _ = running.waiting().await;
    executor.stop().await
}

/// Is a request with `Origin: origin` allowed? The MCP specification requires servers to
/// check it against DNS rebinding: a web page the person visits must not drive the server
/// from their browser. Allowed: `http(s)://` origins on a loopback host or the bound
/// address, any port. `null` and everything else are refused.
fn origin_allowed(origin: &str, bound: std::net::IpAddr) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = match rest.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => rest.split([':', '/']).next().unwrap_or(""),
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback() || ip == bound)
}

/// Serve Streamable HTTP at `http://<listener>/mcp`, requiring `Authorization: Bearer <token>`
/// (unless `token` is `None`)
/// and (against DNS rebinding) a loopback or the bound `Host`, until `shutdown` resolves.
pub async fn serve_http(
    server: IpyboxMcpServer,
    listener: tokio::net::TcpListener,
    token: Option<String>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<()> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let addr = listener
        .local_addr()
        .map_err(|e| Error::io("reading the bound address", e))?;
    let mut config = StreamableHttpServerConfig::default();
    if !addr.ip().is_loopback() {
        config.allowed_hosts.push(addr.ip().to_string());
        config.allowed_hosts.push(addr.to_string());
    }
    let sessions = config.cancellation_token.clone();
    let executor = server.executor.clone();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        LocalSessionManager::default().into(),
        config,
    );
    let token = Arc::new(token);
    let bound = addr.ip();
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let token = token.clone();
                async move {
                    use axum::http::StatusCode;
                    use axum::response::IntoResponse;
                    if let Some(origin) = request.headers().get(axum::http::header::ORIGIN)
                        && !origin_allowed(origin.to_str().unwrap_or(""), bound)
                    {
                        return (
                            StatusCode::FORBIDDEN,
                            "this Origin may not use the MCP server (only pages served from this machine's loopback or the bound address may)",
                        )
                            .into_response();
                    }
                    let ok = token
                        .as_deref()
                        .is_none_or(|t| crate::tools::server::bearer_matches(request.headers(), t));
                    if ok {
                        next.run(request).await
                    } else {
                        (
                            StatusCode::UNAUTHORIZED,
                            [(axum::http::header::WWW_AUTHENTICATE, "Bearer")],
                            "missing or wrong bearer token",
                        )
                            .into_response()
                    }
                }
            },
        ));
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            sessions.cancel();
        })
        .await
        .map_err(|e| Error::io("serving MCP over HTTP", e))?;
    executor.stop().await
}

#[cfg(test)]
mod tests {
    use super::origin_allowed;

    #[test]
    fn origins() {
        let lo: std::net::IpAddr = "127.0.0.1".parse().expect("ip");
        for ok in [
            "http://localhost:6274",
            "http://127.0.0.1",
            "https://[::1]:8080",
            "http://LOCALHOST",
        ] {
            assert!(origin_allowed(ok, lo), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "null",
            "http://127.0.0.1.evil.example",
            "file://",
            "",
        ] {
            assert!(!origin_allowed(bad, lo), "{bad}");
        }
        let lan: std::net::IpAddr = "192.168.1.5".parse().expect("ip");
        assert!(origin_allowed("http://192.168.1.5:3000", lan));
        assert!(!origin_allowed("http://192.168.1.6:3000", lan));
    }
}
