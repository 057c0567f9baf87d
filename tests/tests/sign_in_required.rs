//! An HTTP MCP server that asks for a sign-in (`401` with `WWW-Authenticate`, as the MCP
//! authorization specification has servers do): registering it fails with words a person
//! can act on, not the transport's internals.

#![allow(clippy::unwrap_used)]

use axum::http::{StatusCode, header};
use axum::response::IntoResponse;

/// A server that answers every request with the MCP authorization spec's challenge.
async fn protected_server() -> String {
    async fn challenge() -> impl IntoResponse {
        (
            StatusCode::UNAUTHORIZED,
            [(
                header::WWW_AUTHENTICATE,
                r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource""#,
            )],
        )
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback(challenge);
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/mcp")
}

#[tokio::test]
async fn registering_a_server_that_asks_for_a_sign_in_says_so_in_plain_words() {
    let url = protected_server().await;
    let ws = ipybox_tests::workspace();
    let params = ipybox::ServerParams::from_json(&serde_json::json!({ "url": url })).unwrap();
    let err = ipybox::generate_mcp_sources("hosted", &params, &ws.path().join("mcptools"))
        .await
        .expect_err("a server that wants a sign-in cannot be registered without one");
    let message = err.to_string();
    assert!(
        message.contains("asks for a sign-in (HTTP 401)"),
        "the person learns what the server wants: {message}"
    );
    assert!(
        message.contains("\"headers\""),
        "and what they can do now (a token in the parameters' headers): {message}"
    );
    assert!(
        !message.contains("WorkerTransport"),
        "no transport internals: {message}"
    );
}
