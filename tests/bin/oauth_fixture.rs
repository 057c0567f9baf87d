//! An MCP server that asks for an OAuth sign-in, with its own authorization server: what
//! ipybox's sign-in is tested against, end to end, on the loopback.
//!
//! ```text
//! ipybox-oauth-fixture [--expires-in SECS] [--open] 127.0.0.1:PORT
//! ```
//!
//! Prints `listening on ADDR` to stderr once bound. The MCP server is at `/mcp` (one tool,
//! `greet`); it answers `401` with the MCP authorization spec's challenge until a request
//! carries a token its authorization server issued. The authorization server publishes RFC
//! 8414 metadata, registers clients dynamically (RFC 7591, public clients), and grants an
//! authorization code with PKCE S256 to anyone who opens the authorization URL (the person
//! consenting), then tokens (naming the person, `username`) and refreshes, and revokes
//! tokens at `POST /revoke` (RFC 7009, in its metadata). `POST /admin/expire` makes every access token
//! expire (refresh tokens stay good), `POST /admin/revoke` revokes every token, and
//! `GET /admin/stats` counts what happened. With `--open` the MCP server takes requests
//! without a token (the same server otherwise, for measuring what a sign-in costs a call).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization>.

use std::collections::HashMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Form, Json};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::schemars::{self, JsonSchema};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};

const USAGE: &str = "usage: ipybox-oauth-fixture [--expires-in SECS] [--open] HOST:PORT";
const SCOPE: &str = "mcp:tools";
/// Who signs in: every token response names this person.
const USER: &str = "ada@example.org";

#[derive(Debug, Clone)]
struct Greeter {
    tool_router: rmcp::handler::server::tool::ToolRouter<Self>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

#[tool_router]
impl Greeter {
    fn new() -> Self {
        Greeter {
            tool_router: Self::tool_router(),
        }
    }

    /// Greets someone, for a signed-in caller only.
    #[tool]
    fn greet(&self, Parameters(args): Parameters<GreetArgs>) -> String {
        format!("hello {}, from behind the sign-in", args.name)
    }
}

#[tool_handler(router = self.tool_router, name = "ipybox-oauth-fixture", version = "0.1.0")]
impl ServerHandler for Greeter {}

#[derive(Debug, Default, Clone, serde::Serialize)]
struct Stats {
    registrations: u64,
    authorizations: u64,
    code_grants: u64,
    refreshes: u64,
    refused_refreshes: u64,
    mcp_requests: u64,
    refused_requests: u64,
    revocations: u64,
}

struct Grant {
    client_id: String,
    challenge: String,
    redirect_uri: String,
    scope: String,
}

#[derive(Default)]
struct Tokens {
    clients: HashMap<String, Vec<String>>,
    codes: HashMap<String, Grant>,
    access: HashMap<String, Instant>,
    refresh: HashMap<String, String>,
    stats: Stats,
}

#[derive(Clone)]
struct Server {
    base: String,
    expires_in: u64,
    open: bool,
    tokens: Arc<Mutex<Tokens>>,
}

impl Server {
    fn tokens(&self) -> std::sync::MutexGuard<'_, Tokens> {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn resource(&self) -> String {
        format!("{}/mcp", self.base)
    }

    fn issue(&self, tokens: &mut Tokens, scope: &str) -> serde_json::Value {
        let access = uuid::Uuid::new_v4().simple().to_string();
        let refresh = uuid::Uuid::new_v4().simple().to_string();
        tokens.access.insert(
            access.clone(),
            Instant::now() + Duration::from_secs(self.expires_in),
        );
        tokens.refresh.insert(refresh.clone(), scope.to_owned());
        json!({
            "access_token": access, "token_type": "Bearer", "expires_in": self.expires_in,
            "refresh_token": refresh, "scope": scope,
            // Who signed in, as token introspection (RFC 7662) names it.
            "username": USER,
        })
    }
}

fn random() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

async fn resource_metadata(State(s): State<Server>) -> Json<serde_json::Value> {
    Json(json!({
        "resource": s.resource(),
        "authorization_servers": [s.base],
        "scopes_supported": [SCOPE],
        "bearer_methods_supported": ["header"],
    }))
}

async fn server_metadata(State(s): State<Server>) -> Json<serde_json::Value> {
    Json(json!({
        "issuer": s.base,
        "authorization_endpoint": format!("{}/authorize", s.base),
        "token_endpoint": format!("{}/token", s.base),
        "registration_endpoint": format!("{}/register", s.base),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": [SCOPE],
        "authorization_response_iss_parameter_supported": true,
        "revocation_endpoint": format!("{}/revoke", s.base),
    }))
}

async fn register(
    State(s): State<Server>,
    Json(body): Json<serde_json::Value>,
) -> (StatusCode, Json<serde_json::Value>) {
    let redirect_uris: Vec<String> = body["redirect_uris"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let client_id = random();
    let mut tokens = s.tokens();
    tokens.stats.registrations += 1;
    tokens
        .clients
        .insert(client_id.clone(), redirect_uris.clone());
    (
        StatusCode::CREATED,
        Json(json!({
            "client_id": client_id, "redirect_uris": redirect_uris,
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"], "client_name": body["client_name"],
        })),
    )
}

async fn authorize(State(s): State<Server>, Query(q): Query<HashMap<String, String>>) -> Response {
    let get = |k: &str| q.get(k).cloned().unwrap_or_default();
    let redirect_uri = get("redirect_uri");
    let mut tokens = s.tokens();
    let known = tokens
        .clients
        .get(&get("client_id"))
        .is_some_and(|uris| uris.contains(&redirect_uri));
    if !known {
        return (StatusCode::BAD_REQUEST, "unknown client or redirect URI").into_response();
    }
    let error = if get("response_type") != "code" {
        Some("unsupported_response_type")
    } else if get("code_challenge_method") != "S256" || get("code_challenge").is_empty() {
        Some("invalid_request")
    } else if get("resource") != s.resource() {
        Some("invalid_target")
    } else {
        None
    };
    let state = get("state");
    let to = |query: String| Redirect::to(&format!("{redirect_uri}?{query}")).into_response();
    if let Some(error) = error {
        return to(format!("error={error}&state={state}"));
    }
    tokens.stats.authorizations += 1;
    let code = random();
    tokens.codes.insert(
        code.clone(),
        Grant {
            client_id: get("client_id"),
            challenge: get("code_challenge"),
            redirect_uri: redirect_uri.clone(),
            scope: q.get("scope").cloned().unwrap_or_else(|| SCOPE.to_owned()),
        },
    );
    let iss: String = url_encode(&s.base);
    to(format!(
        "code={code}&state={}&iss={iss}",
        url_encode(&state)
    ))
}

fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn token_error(error: &str) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({ "error": error }))).into_response()
}

async fn token(State(s): State<Server>, Form(f): Form<HashMap<String, String>>) -> Response {
    let get = |k: &str| f.get(k).cloned().unwrap_or_default();
    let mut tokens = s.tokens();
    match get("grant_type").as_str() {
        "authorization_code" => {
            let Some(grant) = tokens.codes.remove(&get("code")) else {
                return token_error("invalid_grant");
            };
            let verified = URL_SAFE_NO_PAD.encode(Sha256::digest(get("code_verifier").as_bytes()))
                == grant.challenge;
            if !verified
                || grant.client_id != get("client_id")
                || grant.redirect_uri != get("redirect_uri")
                || get("resource") != s.resource()
            {
                return token_error("invalid_grant");
            }
            tokens.stats.code_grants += 1;
            let body = s.issue(&mut tokens, &grant.scope);
            Json(body).into_response()
        }
        "refresh_token" => match tokens.refresh.remove(&get("refresh_token")) {
            Some(scope) => {
                tokens.stats.refreshes += 1;
                let body = s.issue(&mut tokens, &scope);
                Json(body).into_response()
            }
            None => {
                tokens.stats.refused_refreshes += 1;
                token_error("invalid_grant")
            }
        },
        _ => token_error("unsupported_grant_type"),
    }
}

async fn guard(
    State(s): State<Server>,
    headers: HeaderMap,
    request: Request,
    next: Next,
) -> Response {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_owned();
    let valid = {
        let mut tokens = s.tokens();
        tokens.stats.mcp_requests += 1;
        let valid = tokens
            .access
            .get(&token)
            .is_some_and(|until| *until > Instant::now());
        if !valid {
            tokens.stats.refused_requests += 1;
        }
        valid
    };
    if valid || s.open {
        return next.run(request).await;
    }
    let challenge = format!(
        r#"Bearer error="invalid_token", resource_metadata="{}/.well-known/oauth-protected-resource/mcp", scope="{SCOPE}""#,
        s.base
    );
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, challenge)],
    )
        .into_response()
}

async fn expire(State(s): State<Server>) -> StatusCode {
    let mut tokens = s.tokens();
    let now = Instant::now();
    for until in tokens.access.values_mut() {
        *until = now;
    }
    StatusCode::NO_CONTENT
}

async fn revoke(State(s): State<Server>) -> StatusCode {
    let mut tokens = s.tokens();
    tokens.access.clear();
    tokens.refresh.clear();
    StatusCode::NO_CONTENT
}

/// Token revocation (RFC 7009): a refresh token revokes the whole sign-in, an access token
/// itself; an unknown token is no error.
async fn revocation(State(s): State<Server>, Form(f): Form<HashMap<String, String>>) -> StatusCode {
    let token = f.get("token").cloned().unwrap_or_default();
    let mut tokens = s.tokens();
    tokens.stats.revocations += 1;
    if tokens.refresh.remove(&token).is_some() {
        tokens.access.clear();
    }
    tokens.access.remove(&token);
    StatusCode::OK
}

async fn stats(State(s): State<Server>) -> Json<Stats> {
    Json(s.tokens().stats.clone())
}

fn router(server: Server) -> axum::Router {
    let mcp = StreamableHttpService::new(
        || Ok(Greeter::new()),
        LocalSessionManager::default().into(),
        StreamableHttpServerConfig::default(),
    );
    let mcp = axum::Router::new()
        .nest_service("/mcp", mcp)
        .layer(axum::middleware::from_fn_with_state(server.clone(), guard));
    axum::Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            axum::routing::get(resource_metadata),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(server_metadata),
        )
        .route("/register", axum::routing::post(register))
        .route("/authorize", axum::routing::get(authorize))
        .route("/token", axum::routing::post(token))
        .route("/revoke", axum::routing::post(revocation))
        .route("/admin/expire", axum::routing::post(expire))
        .route("/admin/revoke", axum::routing::post(revoke))
        .route("/admin/stats", axum::routing::get(stats))
        .with_state(server)
        .merge(mcp)
}

fn parse_args() -> Result<(SocketAddr, u64, bool), String> {
    let mut args = std::env::args().skip(1);
    let mut expires_in = 3600;
    let mut open = false;
    let mut addr = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--expires-in" => {
                let n = args.next().ok_or("--expires-in needs seconds")?;
                expires_in = n.parse().map_err(|_| format!("not a number: {n}"))?;
            }
            "--open" => open = true,
            other => {
                addr = Some(
                    other
                        .parse()
                        .map_err(|e| format!("bad address {other}: {e}"))?,
                )
            }
        }
    }
    Ok((addr.ok_or("no address given")?, expires_in, open))
}

#[tokio::main]
async fn main() -> ExitCode {
    let (addr, expires_in, open) = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "ipybox-oauth-fixture: {e}");
            return ExitCode::FAILURE;
        }
    };
    let bound = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let server = Server {
        base: format!("http://{bound}"),
        expires_in,
        open,
        tokens: Arc::default(),
    };
    // The readiness line is this binary's interface: tests wait for it and read the port.
    let _ = writeln!(std::io::stderr(), "listening on {bound}");
    match axum::serve(listener, router(server)).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "ipybox-oauth-fixture: {e}");
            ExitCode::FAILURE
        }
    }
}
