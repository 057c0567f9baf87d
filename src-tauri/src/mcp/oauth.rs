//! OAuth sign-in for HTTP MCP servers, as the MCP authorization specification asks of a
//! client: discovery from a `401`'s `WWW-Authenticate` (protected resource metadata, then
//! the authorization server's metadata, with the well-known fallbacks), authorization code
//! with PKCE (S256) and the `resource` parameter, scopes from the challenge, else the
//! resource's `scopes_supported`, else none; client registration by a pre-registered client
//! ID, a client ID metadata document, or dynamic registration; refresh before expiry.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization>.
//! The protocol itself is rmcp's (`auth` feature): this module gives it ipybox's HTTP
//! client path, a browser step ([`Browser`] and a loopback redirect), and a place for tokens
//! kernel code cannot read ([`TokenStore`]). Once signed in, a call takes its token from
//! memory; the store (the OS keyring or a 0600 file, [`default_store`]) is read once per process
//! and written when a token changes.

#[cfg(feature = "keyring")]
mod keyring_store;
mod redirect;
pub mod store;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
    OAuthClientConfig, StoredCredentials, WWWAuthenticateParams,
};

#[cfg(feature = "keyring")]
pub use keyring_store::KeyringTokenStore;
pub use store::{FileTokenStore, Saved, TokenStore};

use super::http::HttpClient;
use crate::error::{Error, Result};
use store::Credentials;

/// A `tracing` directive that keeps rmcp's OAuth debug lines (token responses with their
/// extra fields) out of logs at any level: add it to every log filter.
pub const LOG_DIRECTIVE: &str = "rmcp::transport::auth=warn";

/// How long a sign-in waits for the person to finish in the browser.
pub const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);

/// Shows the authorization URL to the person: the step of a sign-in that happens in a
/// browser. It must not wait for the person; the sign-in waits for the redirect.
pub trait Browser: Send + Sync {
    /// Show `url` (an authorization server's page, where the person consents).
    fn open(&self, url: &str);
}

/// Opens the URL in the system's browser (`xdg-open`, `open` on macOS) where there is a
/// display, without waiting; prints nothing (the caller says what to open).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemBrowser;

impl Browser for SystemBrowser {
    fn open(&self, url: &str) {
        let opener = if cfg!(target_os = "macos") {
            "open"
        } else {
            "xdg-open"
        };
        let has_display = cfg!(target_os = "macos")
            || std::env::var_os("DISPLAY").is_some()
            || std::env::var_os("WAYLAND_DISPLAY").is_some();
        if !has_display {
            return;
        }
        let mut cmd = std::process::Command::new(opener);
        cmd.arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .current_dir(crate::process::neutral_dir());
        // Reaped on a thread of its own: the sign-in never waits on the browser.
        if let Ok(mut child) = cmd.spawn() {
            std::thread::spawn(move || child.wait());
        }
    }
}

/// How to sign in, beyond what the server publishes.
#[derive(Debug, Clone, Default)]
pub struct SignInOptions {
    /// A client ID registered for ipybox with the authorization server, when it offers no
    /// other way to register (the person enters it).
    pub client_id: Option<String>,
    /// The secret of that client, when it has one.
    pub client_secret: Option<String>,
    /// The scopes to ask for; empty: the challenge's, else the resource's
    /// `scopes_supported`, else none.
    pub scopes: Vec<String>,
    /// The HTTPS URL of ipybox's client ID metadata document, used as its client ID where
    /// the authorization server supports such documents.
    pub client_metadata_url: Option<String>,
    /// The `WWW-Authenticate` value of the response that asked for the sign-in; without one
    /// the server is asked (an unauthenticated `initialize`).
    pub challenge: Option<String>,
}

/// Whether ipybox is signed in to a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// No sign-in kept.
    SignedOut,
    /// Signed in.
    SignedIn {
        /// The authorization server that signed the person in (its issuer).
        issuer: Option<String>,
        /// The client ipybox signed in as.
        client_id: String,
        /// The scopes granted.
        scopes: Vec<String>,
        /// When the access token expires (it is refreshed before then where the server gave
        /// a refresh token).
        expires: Option<SystemTime>,
        /// A refresh token is kept.
        refreshable: bool,
        /// Who signed in, where the authorization server says so in its token response
        /// (`username`, as token introspection names it, else `email`); untrusted text.
        user: Option<String>,
    },
}

/// Why a server cannot be used before the person signs in (again): the typed cause of the
/// error a connection or a call returns ([`sign_in_needed`] finds it).
#[derive(Debug, Clone)]
pub struct SignInNeeded {
    /// The server's name.
    pub server: String,
    /// The server's URL.
    pub url: String,
    /// The `WWW-Authenticate` value the server answered with (start the sign-in with it).
    pub challenge: Option<String>,
    /// A sign-in was kept and no longer works (expired, revoked), or covers too little.
    pub again: bool,
    /// The scope a call needs beyond the sign-in's (a `403 insufficient_scope`).
    pub scope: Option<String>,
}

impl std::fmt::Display for SignInNeeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let server = crate::display::escape(&self.server);
        match (&self.scope, self.again) {
            (Some(scope), _) => write!(
                f,
                "it needs a wider sign-in (scope \"{scope}\"). Sign in again with `ipybox sign-in {server} --scope \"{scope}\"` or the app's MCP servers panel",
                scope = crate::display::escape(scope),
            ),
            // A sign-in that stopped working needs the same again; only a server never
            // signed in to might take a token of the person's own instead.
            (None, true) => write!(
                f,
                "its sign-in has expired or was revoked (HTTP 401). Sign in again with `ipybox sign-in {server}` or the app's MCP servers panel",
            ),
            (None, false) => write!(
                f,
                "it asks for a sign-in (HTTP 401). Sign in with `ipybox sign-in {server}` or the app's MCP servers panel (or give a token in the parameters' \"headers\", e.g. {{\"Authorization\": \"Bearer ${{TOKEN}}\"}}, if the server accepts one)",
            ),
        }
    }
}

impl std::error::Error for SignInNeeded {}

/// The sign-in `error` asks for, if it is one that asks for a sign-in.
pub fn sign_in_needed(error: &Error) -> Option<&SignInNeeded> {
    let mut cause = std::error::Error::source(error);
    while let Some(c) = cause {
        if let Some(needed) = c.downcast_ref::<SignInNeeded>() {
            return Some(needed);
        }
        cause = c.source();
    }
    None
}

/// Makes the token store of a data directory.
pub type StoreMaker = fn(&Path) -> Arc<dyn TokenStore>;

static STORE: OnceLock<StoreMaker> = OnceLock::new();

/// Keep this process's sign-ins in the stores `make` gives for a data directory, instead of
/// the default ([`default_store`]). Called once, before the first sign-in is used; `false`
/// when another store was chosen already.
pub fn keep_tokens_with(make: StoreMaker) -> bool {
    STORE.set(make).is_ok()
}

/// Where sign-ins are kept unless [`keep_tokens_with`] chose: the OS keyring with the 0600
/// files as fallback (feature `keyring`: the app and the command line share one store, so a
/// sign-in made in one is used by the other); without the feature, the files only.
pub fn default_store(home: &Path) -> Arc<dyn TokenStore> {
    #[cfg(feature = "keyring")]
    return KeyringTokenStore::make(home);
    #[cfg(not(feature = "keyring"))]
    Arc::new(FileTokenStore::in_home(home))
}

/// A signed-in server: rmcp's authorization manager (shared by every connection to the
/// server in this process, so a refresh happens once) and its credentials.
#[derive(Clone)]
struct Live {
    client: AuthClient<HttpClient>,
    credentials: Credentials,
}

/// The sign-ins of one data directory, in memory once used.
pub struct Authorizations {
    store: Arc<dyn TokenStore>,
    live: Mutex<HashMap<String, Live>>,
}

impl std::fmt::Debug for Authorizations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizations")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl Authorizations {
    /// Sign-ins kept in `store`.
    pub fn new(store: Arc<dyn TokenStore>) -> Self {
        Authorizations {
            store,
            live: Mutex::default(),
        }
    }

    /// The sign-ins of ipybox's data directory (`$IPYBOX_HOME`), one per process and
    /// directory.
    pub fn for_home() -> Result<Arc<Authorizations>> {
        Ok(Self::in_home(&crate::home::ipybox_home()?))
    }

    /// The sign-ins kept in data directory `home`, one per process, in the store
    /// [`keep_tokens_with`] chose, by default [`default_store`].
    pub fn in_home(home: &Path) -> Arc<Authorizations> {
        static ALL: OnceLock<Mutex<HashMap<PathBuf, Arc<Authorizations>>>> = OnceLock::new();
        let all = ALL.get_or_init(Mutex::default);
        let mut all = all.lock().unwrap_or_else(|p| p.into_inner());
        all.entry(home.to_path_buf())
            .or_insert_with(|| {
                let store = match STORE.get() {
                    Some(make) => make(home),
                    None => default_store(home),
                };
                Arc::new(Authorizations::new(store))
            })
            .clone()
    }

    fn live(&self, url: &str) -> Option<Live> {
        self.live.lock().ok().and_then(|l| l.get(url).cloned())
    }

    fn keep(&self, url: &str, live: Live) {
        if let Ok(mut l) = self.live.lock() {
            l.insert(url.to_owned(), live);
        }
    }

    /// An HTTP client that signs `url`'s requests with the kept sign-in (refreshing it
    /// before it expires), or `None` when there is none. The first use in a process reads
    /// the kept tokens and the authorization server's metadata.
    pub(crate) async fn client(&self, url: &str) -> Result<Option<AuthClient<HttpClient>>> {
        if let Some(live) = self.live(url) {
            let mut client = live.client.clone();
            client.http_client = HttpClient::new()?;
            return Ok(Some(client));
        }
        let Some(saved) = self.store.load(url)? else {
            return Ok(None);
        };
        let credentials = Credentials::new(
            url,
            &saved.redirect_uri,
            saved.client_secret.clone(),
            Some(saved.credentials.clone()),
            self.store.clone(),
        );
        let mut manager = manager(url).await?;
        manager.set_credential_store(credentials.clone());
        match manager.initialize_from_store().await {
            Ok(true) => {}
            // The authorization server changed: the tokens it did not mint were dropped.
            Ok(false) => return Ok(None),
            Err(e) => return Err(auth_error(url, "cannot use the kept sign-in", e)),
        }
        if let Some(secret) = &saved.client_secret {
            manager
                .configure_client(
                    OAuthClientConfig::new(saved.credentials.client_id.clone(), saved.redirect_uri)
                        .with_client_secret(secret.clone()),
                )
                .map_err(|e| auth_error(url, "cannot use the kept sign-in", e))?;
        }
        let live = Live {
            client: AuthClient::new(HttpClient::new()?, manager),
            credentials,
        };
        self.keep(url, live.clone());
        let mut client = live.client;
        client.http_client = HttpClient::new()?;
        Ok(Some(client))
    }

    /// Sign in to the MCP server at `url`: discover its authorization server, register
    /// ipybox with it as `options` and the server allow, show the person the authorization
    /// page through `browser`, wait (at most `timeout`) for the redirect to the loopback
    /// listener, exchange the code for tokens and keep them. Replaces a kept sign-in.
    pub async fn sign_in(
        &self,
        url: &str,
        options: &SignInOptions,
        browser: &dyn Browser,
        timeout: Duration,
    ) -> Result<Status> {
        let challenge = match &options.challenge {
            Some(c) => Some(c.clone()),
            None => probe(url).await?,
        };
        let redirect = redirect::Redirect::bind().await?;
        let mut manager = manager(url).await?;
        let resolution = manager
            .resolve_metadata_from_challenge(challenge.as_deref())
            .await
            .map_err(|e| auth_error(url, "cannot find how to sign in to it", e))?;
        manager.set_metadata(resolution.metadata);
        let credentials = Credentials::new(
            url,
            redirect.uri(),
            options.client_secret.clone(),
            None,
            self.store.clone(),
        );
        manager.set_credential_store(credentials.clone());
        let mut request = AuthorizationRequest::new(redirect.uri()).with_client_name("ipybox");
        if let Some(c) = &challenge {
            request = request.with_challenge(c.clone());
        }
        if let Some(id) = &options.client_id {
            request = request.with_preregistered_client(id.clone());
            if let Some(secret) = &options.client_secret {
                request = request.with_client_secret(secret.clone());
            }
        }
        if let Some(document) = &options.client_metadata_url {
            request = request.with_client_metadata_url(document.clone());
        }
        request = if options.scopes.is_empty() {
            request.with_initial_scope_selection()
        } else {
            request.with_scopes(options.scopes.iter().cloned())
        };
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| auth_error(url, "cannot start the sign-in", e))?;
        let page = url::Url::parse(&session.auth_url).ok();
        // The page comes from the server's metadata, and a browser opener hands a `file:`
        // or a custom scheme to whatever program handles it: only a web page is opened.
        if !page
            .as_ref()
            .is_some_and(|p| matches!(p.scheme(), "https" | "http") && p.host_str().is_some())
        {
            let shown = session.auth_url.split('?').next().unwrap_or_default();
            return Err(Error::mcp(format!(
                "MCP server at {url}: its authorization server's sign-in page is not a web page ({}): not opened",
                crate::display::escape(shown)
            )));
        }
        let state = page
            .and_then(|u| {
                u.query_pairs()
                    .find(|(k, _)| k == "state")
                    .map(|(_, v)| v.into_owned())
            })
            .ok_or_else(|| Error::mcp("the sign-in's authorization URL has no state"))?;
        browser.open(&session.auth_url);
        let callback = redirect.wait(&state, timeout).await?;
        session
            .handle_callback_with_issuer(
                &callback.code,
                &callback.state,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|e| auth_error(url, "the sign-in did not complete", e))?;
        let manager = session.auth_manager;
        self.keep(
            url,
            Live {
                client: AuthClient::new(HttpClient::new()?, manager),
                credentials: credentials.clone(),
            },
        );
        Ok(status_of(credentials.current()))
    }

    /// Forget the sign-in to `url`: its tokens leave memory and the store.
    pub fn sign_out(&self, url: &str) -> Result<()> {
        if let Ok(mut l) = self.live.lock() {
            l.remove(url);
        }
        self.store.remove(url)
    }

    /// [`sign_out`](Self::sign_out), and revoke the tokens at the authorization server
    /// where it offers revocation (RFC 7009, `revocation_endpoint` in its metadata): the
    /// refresh token (which ends the whole grant), else the access token. The tokens are
    /// forgotten here first, whatever the server answers. `true` when the server took the
    /// revocation; `false` when it offers none, or did not answer within a few seconds.
    pub async fn sign_out_and_revoke(&self, url: &str) -> Result<bool> {
        let saved = self.store.load(url).ok().flatten();
        let credentials = self
            .live(url)
            .and_then(|l| l.credentials.current())
            .or_else(|| saved.as_ref().map(|s| s.credentials.clone()));
        let secret = saved.and_then(|s| s.client_secret);
        self.sign_out(url)?;
        let Some(credentials) = credentials else {
            return Ok(false);
        };
        let revoked = tokio::time::timeout(REVOKE_TIMEOUT, revoke(url, &credentials, secret));
        Ok(matches!(revoked.await, Ok(Ok(true))))
    }

    /// Whether ipybox is signed in to `url`, as kept (no network).
    pub fn status(&self, url: &str) -> Result<Status> {
        if let Some(live) = self.live(url) {
            return Ok(status_of(live.credentials.current()));
        }
        Ok(status_of(self.store.load(url)?.map(|s| s.credentials)))
    }

    /// The scopes the kept sign-in to `url` was granted.
    pub fn granted_scopes(&self, url: &str) -> Vec<String> {
        match self.status(url) {
            Ok(Status::SignedIn { scopes, .. }) => scopes,
            _ => Vec::new(),
        }
    }
}

/// [`SignInOptions`] for a step-up: the scopes granted so far and the one the server asks
/// for in `challenge` (a `403 insufficient_scope`).
pub fn step_up_scopes(granted: &[String], challenge: &str, url: &str) -> Vec<String> {
    let mut scopes = granted.to_vec();
    if let Ok(base) = url::Url::parse(url)
        && let Some(scope) = WWWAuthenticateParams::parse(challenge, &base).scope
    {
        for s in scope.split_whitespace() {
            if !scopes.iter().any(|g| g == s) {
                scopes.push(s.to_owned());
            }
        }
    }
    scopes
}

fn status_of(credentials: Option<StoredCredentials>) -> Status {
    let Some(c) = credentials else {
        return Status::SignedOut;
    };
    let Some(token) = &c.token_response else {
        return Status::SignedOut;
    };
    // Read through JSON: rmcp's token type needs oauth2's traits for its getters.
    let fields = serde_json::to_value(token).unwrap_or_default();
    let expires = fields
        .get("expires_in")
        .and_then(|v| v.as_u64())
        .zip(c.token_received_at)
        .map(|(in_secs, at)| SystemTime::UNIX_EPOCH + Duration::from_secs(at + in_secs));
    Status::SignedIn {
        issuer: c.issuer.clone(),
        client_id: c.client_id.clone(),
        scopes: c.granted_scopes.clone(),
        expires,
        refreshable: fields.get("refresh_token").is_some_and(|v| !v.is_null()),
        user: ["username", "email"]
            .iter()
            .find_map(|k| fields.get(*k).and_then(|v| v.as_str()))
            .filter(|u| !u.is_empty())
            .map(str::to_owned),
    }
}

/// How long a sign-out waits for the authorization server to take the revocation.
const REVOKE_TIMEOUT: Duration = Duration::from_secs(5);

/// Revoke `credentials`' token at `url`'s authorization server, if it offers revocation.
async fn revoke(
    url: &str,
    credentials: &StoredCredentials,
    client_secret: Option<String>,
) -> Result<bool> {
    let Some(token) = &credentials.token_response else {
        return Ok(false);
    };
    let fields = serde_json::to_value(token).unwrap_or_default();
    let (token, hint) = match fields.get("refresh_token").and_then(|v| v.as_str()) {
        Some(refresh) => (refresh.to_owned(), "refresh_token"),
        None => match fields.get("access_token").and_then(|v| v.as_str()) {
            Some(access) => (access.to_owned(), "access_token"),
            None => return Ok(false),
        },
    };
    let challenge = probe(url).await.unwrap_or(None);
    let manager = manager(url).await?;
    let Ok(resolution) = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
    else {
        return Ok(false);
    };
    let Some(endpoint) = resolution
        .metadata
        .additional_fields
        .get("revocation_endpoint")
        .and_then(|v| v.as_str())
        .filter(|e| e.starts_with("https://") || e.starts_with("http://"))
    else {
        return Ok(false);
    };
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(REVOKE_TIMEOUT)
        .build()
        .map_err(|e| Error::mcp(format!("cannot make an HTTP client: {e}")))?;
    let mut form = vec![
        ("token", token),
        ("token_type_hint", hint.to_owned()),
        ("client_id", credentials.client_id.clone()),
    ];
    if let Some(secret) = client_secret {
        form.push(("client_secret", secret));
    }
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&form)
        .finish();
    let answer = client
        .post(endpoint)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(body)
        .send()
        .await;
    Ok(answer.is_ok_and(|a| a.status().is_success()))
}

/// rmcp's authorization manager for `url`. Metadata on a loopback or private address is
/// followed only when the server's own URL is of the same kind (rmcp's rule against a
/// server steering ipybox at the local network).
async fn manager(url: &str) -> Result<AuthorizationManager> {
    AuthorizationManager::new(url)
        .await
        .map_err(|e| auth_error(url, "cannot sign in to it", e))
}

/// Ask the server for its challenge: an `initialize` without a token. A `401` or `403`
/// gives its `WWW-Authenticate`; a server that answers without one leaves discovery to the
/// well-known addresses.
async fn probe(url: &str) -> Result<Option<String>> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| Error::mcp(format!("cannot make an HTTP client: {e}")))?;
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "ipybox", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let answer = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .map_err(|e| Error::mcp(format!("cannot reach {url}: {e}")))?;
    let status = answer.status();
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        return Ok(answer
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned));
    }
    Ok(None)
}

/// A sign-in failure in plain words. rmcp's messages name URLs and the server's own error
/// text, never a token.
fn auth_error(url: &str, what: &str, e: AuthError) -> Error {
    let why = match &e {
        AuthError::NoAuthorizationSupport => {
            "the server publishes no OAuth metadata (neither protected resource metadata nor an authorization server's)".to_owned()
        }
        AuthError::PkceUnsupported => {
            "its authorization server does not offer PKCE with S256, which MCP requires".to_owned()
        }
        AuthError::RegistrationFailed(detail) => format!(
            "its authorization server did not register ipybox as a client ({detail}); give a client ID registered for ipybox (`ipybox sign-in NAME --client-id ID`)"
        ),
        AuthError::TokenRefreshRejected(_) | AuthError::AuthorizationRequired => {
            "the sign-in has expired or was revoked. Sign in again".to_owned()
        }
        other => other.to_string(),
    };
    Error::mcp(format!(
        "MCP server at {url}: {what}: {}",
        crate::display::escape(&why)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_up_keeps_what_was_granted_and_adds_what_is_asked() {
        let scopes = step_up_scopes(
            &["mcp:basic".to_owned()],
            r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write""#,
            "http://127.0.0.1:1/mcp",
        );
        assert_eq!(scopes, ["mcp:basic", "mcp:write"], "a union, in order");
    }

    #[test]
    fn what_a_person_reads_names_the_way_out() {
        let needed = SignInNeeded {
            server: "docs".into(),
            url: "http://x/mcp".into(),
            challenge: None,
            again: true,
            scope: None,
        };
        let text = needed.to_string();
        assert!(text.contains("Sign in again"), "{text}");
        assert!(text.contains("ipybox sign-in docs"), "{text}");
    }
}
