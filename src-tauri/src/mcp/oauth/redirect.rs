//! The loopback redirect that ends the browser step of a sign-in: a listener on 127.0.0.1
//! at a random port, for the one authorization response whose `state` is the sign-in's own.
//!
//! Spec: OAuth 2.0 for Native Apps, [RFC 8252 §7.3](https://www.rfc-editor.org/rfc/rfc8252#section-7.3)
//! (loopback redirection); the response's parameters as
//! [RFC 6749 §4.1.2](https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2) and
//! [RFC 9207](https://www.rfc-editor.org/rfc/rfc9207) (`iss`) give them.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Html;

use crate::error::{Error, Result};

/// The path the authorization server redirects to.
const PATH: &str = "/callback";

/// What the authorization server answered, through the browser.
#[derive(Debug)]
pub(crate) struct Callback {
    pub(crate) code: String,
    pub(crate) state: String,
    pub(crate) issuer: Option<String>,
}

type Answer = std::result::Result<Callback, String>;

#[derive(Clone)]
struct Waiting {
    state: Arc<str>,
    answer: Arc<Mutex<Option<tokio::sync::oneshot::Sender<Answer>>>>,
}

/// A bound loopback listener, waiting for one redirect.
#[derive(Debug)]
pub(crate) struct Redirect {
    listener: tokio::net::TcpListener,
    uri: String,
}

impl Redirect {
    /// Bind 127.0.0.1 at a port the system picks.
    pub(crate) async fn bind() -> Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| Error::io("listening on 127.0.0.1 for the sign-in's redirect", e))?;
        let port = listener
            .local_addr()
            .map_err(|e| Error::io("listening on 127.0.0.1 for the sign-in's redirect", e))?
            .port();
        Ok(Redirect {
            listener,
            uri: format!("http://127.0.0.1:{port}{PATH}"),
        })
    }

    /// The redirect URI to register and send.
    pub(crate) fn uri(&self) -> &str {
        &self.uri
    }

    /// Serve until a redirect carries `state` (others get a 400 and are ignored) or
    /// `timeout` passes; then stop listening.
    pub(crate) async fn wait(self, state: &str, timeout: Duration) -> Result<Callback> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let waiting = Waiting {
            state: state.into(),
            answer: Arc::new(Mutex::new(Some(tx))),
        };
        let app = axum::Router::new()
            .route(PATH, axum::routing::get(answer))
            .with_state(waiting);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            let _ = axum::serve(self.listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        let got = tokio::time::timeout(timeout, rx).await;
        let _ = stop.send(());
        // The browser has its page already; a connection it keeps open must not hold us.
        let _ = tokio::time::timeout(Duration::from_millis(500), server).await;
        match got {
            Ok(Ok(Ok(callback))) => Ok(callback),
            Ok(Ok(Err(refused))) => Err(Error::mcp(refused)),
            Ok(Err(_)) => Err(Error::mcp("the sign-in's redirect listener stopped")),
            Err(_) => Err(Error::mcp(format!(
                "the sign-in was not completed within {} s: open the link again, or sign in again",
                timeout.as_secs()
            ))),
        }
    }
}

async fn answer(
    State(waiting): State<Waiting>,
    RawQuery(query): RawQuery,
) -> (StatusCode, Html<&'static str>) {
    let query = query.unwrap_or_default();
    let mut code = None;
    let mut state = None;
    let mut issuer = None;
    let mut error = None;
    let mut description = None;
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        match k.as_ref() {
            "code" => code = Some(v.into_owned()),
            "state" => state = Some(v.into_owned()),
            "iss" => issuer = Some(v.into_owned()),
            "error" => error = Some(v.into_owned()),
            "error_description" => description = Some(v.into_owned()),
            _ => {}
        }
    }
    // Only the redirect of this sign-in counts: anything else reaching the port (another
    // page, a stale tab, a forged link) is turned away and the wait goes on.
    if state.as_deref() != Some(&*waiting.state) {
        return (
            StatusCode::BAD_REQUEST,
            Html("<p>This is not the sign-in ipybox is waiting for.</p>"),
        );
    }
    let (result, page) = match (code, error) {
        (Some(code), None) => (
            Ok(Callback {
                code,
                state: state.unwrap_or_default(),
                issuer,
            }),
            (
                StatusCode::OK,
                Html("<p>Signed in. You can close this tab and go back to ipybox.</p>"),
            ),
        ),
        (_, error) => {
            // The server's words are untrusted: shown escaped, and only to the person.
            let why = match (error.as_deref(), description) {
                (Some("access_denied"), _) => "the sign-in was refused".to_owned(),
                (Some(e), Some(d)) => format!(
                    "the authorization server refused the sign-in: {} ({})",
                    crate::display::escape(e),
                    crate::display::escape(&d)
                ),
                (Some(e), None) => format!(
                    "the authorization server refused the sign-in: {}",
                    crate::display::escape(e)
                ),
                (None, _) => "the authorization server sent no code".to_owned(),
            };
            (
                Err(why),
                (
                    StatusCode::OK,
                    Html("<p>The sign-in did not complete. Go back to ipybox for why.</p>"),
                ),
            )
        }
    };
    if let Some(tx) = waiting.answer.lock().ok().and_then(|mut a| a.take()) {
        let _ = tx.send(result);
    }
    page
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    async fn get(url: &str) -> u16 {
        reqwest::get(url).await.unwrap().status().as_u16()
    }

    #[tokio::test]
    async fn only_the_redirect_with_this_sign_ins_state_completes_it() {
        let redirect = Redirect::bind().await.unwrap();
        let uri = redirect.uri().to_owned();
        assert!(uri.starts_with("http://127.0.0.1:"), "loopback: {uri}");
        let waiting = tokio::spawn(redirect.wait("s1", Duration::from_secs(5)));
        // The listener is bound before wait() serves; requests queue until then.
        assert_eq!(get(&format!("{uri}?code=forged&state=other")).await, 400);
        assert_eq!(get(&format!("{uri}?code=forged")).await, 400);
        assert_eq!(get(&format!("{uri}?code=c%2B1&state=s1&iss=x")).await, 200);
        let callback = waiting.await.unwrap().unwrap();
        assert_eq!(
            callback.code, "c+1",
            "the code of the right redirect, decoded"
        );
        assert_eq!(callback.issuer.as_deref(), Some("x"));
    }

    #[tokio::test]
    async fn a_refused_sign_in_says_so() {
        let redirect = Redirect::bind().await.unwrap();
        let uri = redirect.uri().to_owned();
        let waiting = tokio::spawn(redirect.wait("s1", Duration::from_secs(5)));
        get(&format!("{uri}?error=access_denied&state=s1")).await;
        let err = waiting.await.unwrap().unwrap_err().to_string();
        assert!(err.contains("refused"), "{err}");
    }

    #[tokio::test]
    async fn nobody_signing_in_ends_in_time() {
        let redirect = Redirect::bind().await.unwrap();
        let err = redirect
            .wait("s1", Duration::from_millis(100))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("not completed"), "{err}");
    }
}
