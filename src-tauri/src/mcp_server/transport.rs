//! Serving the tools: one session over stdio, or a session per client over Streamable HTTP.

use std::sync::{Arc, Mutex};

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::handler::IpyboxMcpServer;
use super::pool::{Pool, Workspace};
use super::{HttpOptions, McpServerConfig};
use crate::error::{Error, Result};

/// Serve one session over stdio until the client disconnects. Logs go to stderr; stdout is
/// the protocol.
pub async fn serve_stdio(config: McpServerConfig) -> Result<()> {
    use rmcp::ServiceExt;
    let server = IpyboxMcpServer::new(config)?;
    let executor = server.executor().cloned();
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| Error::mcp("the MCP session over stdio failed to start").because(e))?;
    let _ = running.waiting().await;
    match executor {
        Some(e) => e.stop().await,
        None => Ok(()),
    }
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

/// Serve Streamable HTTP at `http://<listener>/mcp` until `shutdown` resolves: a kernel per
/// MCP session, at most `options.max_sessions`, each ended after `options.idle_timeout`
/// without a tool call. Requests need `Authorization: Bearer <token>` (unless the token is
/// `None`) and (against DNS rebinding) a loopback, the bound or an allowed `Host`, and a
/// loopback or the bound `Origin`.
pub async fn serve_http(
    config: McpServerConfig,
    listener: tokio::net::TcpListener,
    options: HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<()> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let addr = listener
        .local_addr()
        .map_err(|e| Error::io("reading the bound address", e))?;
    let mut http = StreamableHttpServerConfig::default();
    if !addr.ip().is_loopback() {
        http.allowed_hosts.push(addr.ip().to_string());
        http.allowed_hosts.push(addr.to_string());
    }
    http.allowed_hosts
        .extend(options.allowed_hosts.iter().cloned());
    let sessions = http.cancellation_token.clone();
    let mut manager = LocalSessionManager::default();
    // Idle sessions are ended by the pool, which counts a running tool call as activity;
    // rmcp's own timer would end a session in the middle of a long execution.
    manager.session_config.keep_alive = None;
    let manager = Arc::new(manager);
    let pool = Arc::new(Pool {
        workspace: Workspace::open(config)?,
        max: options.max_sessions.max(1),
        sessions: Mutex::new(Vec::new()),
        stopping: Mutex::new(Vec::new()),
        manager: manager.clone(),
    });
    if let Some(control) = &options.control
        && let Ok(mut held) = control.0.lock()
    {
        *held = Arc::downgrade(&pool);
    }
    let reaper = options
        .idle_timeout
        .map(|idle| tokio::spawn(pool.clone().reap(idle)));
    let factory = pool.clone();
    let service =
        StreamableHttpService::new(move || Ok(IpyboxMcpServer::pooled(&factory)), manager, http);
    let token = Arc::new(options.token);
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
                        .is_none_or(|t| crate::auth::bearer_matches(request.headers(), t));
                    if ok {
                        let ending = request.method() == axum::http::Method::DELETE;
                        let mut response = next.run(request).await;
                        // rmcp answers an ended session with 202; the Python SDK's client
                        // takes only 200 and 204 as success and warns on every exit.
                        if ending && response.status() == StatusCode::ACCEPTED {
                            *response.status_mut() = StatusCode::NO_CONTENT;
                        }
                        response
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
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            sessions.cancel();
        })
        .await
        .map_err(|e| Error::io("serving MCP over HTTP", e));
    if let Some(reaper) = reaper {
        reaper.abort();
    }
    pool.stop_all().await;
    served
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
