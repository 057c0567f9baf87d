//! Signing in to an MCP server that asks for OAuth, against a local server with its own
//! authorization server (`tests/bin/oauth_fixture.rs`): `ipybox register` prints the link,
//! the test opens it as a consenting person's browser would, the tokens are kept outside
//! the workspace, 0600, and a cell's tool call (a new ipybox process) uses them without
//! signing in again; a token about to expire is refreshed, one the server no longer accepts
//! is refreshed and retried, and a revoked sign-in says "Sign in again".

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::io::{BufRead as _, BufReader};
use std::os::unix::fs::PermissionsExt as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ipybox::oauth::{Authorizations, Browser, SignInOptions, Status};
use ipybox_tests::{ipybox_bin, workspace};

const FIXTURE: &str = env!("CARGO_BIN_EXE_ipybox-oauth-fixture");

/// The fixture, stopped when dropped.
struct Fixture {
    child: Child,
    base: String,
}

impl Fixture {
    fn start(expires_in: u64) -> Fixture {
        let mut child = Command::new(FIXTURE)
            .args(["--expires-in", &expires_in.to_string(), "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap()
            .to_owned();
        Fixture {
            child,
            base: format!("http://{addr}"),
        }
    }

    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    async fn stats(&self) -> serde_json::Value {
        reqwest::get(format!("{}/admin/stats", self.base))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn admin(&self, what: &str) {
        let client = reqwest::Client::new();
        let r = client
            .post(format!("{}/admin/{what}", self.base))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{what}: {}", r.status());
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Forgets the sign-in to a URL when dropped, so a failed test leaves no tokens behind.
struct SignOut(String);

impl Drop for SignOut {
    fn drop(&mut self) {
        let _ = Authorizations::for_home().map(|a| a.sign_out(&self.0));
    }
}

/// A person who consents at once: the browser opens the link and follows its redirects to
/// ipybox's loopback listener.
struct Consent;

impl Browser for Consent {
    fn open(&self, url: &str) {
        let url = url.to_owned();
        tokio::spawn(async move {
            let _ = reqwest::get(&url).await;
        });
    }
}

fn greet_cell() -> &'static str {
    "from mcptools.greet.greet import Params, run\nprint(run(Params(name='cell')))"
}

/// A new `ipybox exec` process runs [`greet_cell`] on `ws`, approving its call, with no
/// display (no browser to open) and nothing to read.
fn exec_greet_cell(ws: &std::path::Path) -> std::process::Output {
    Command::new(ipybox_bin())
        .args(["exec", "--approval", "auto", "--workspace"])
        .arg(ws)
        .arg(greet_cell())
        .env_remove("DISPLAY")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[tokio::test]
async fn register_signs_in_and_a_new_process_calls_with_the_kept_token() {
    let fixture = Fixture::start(3600);
    let ws = workspace();
    let _forget = SignOut(fixture.url());
    let params = serde_json::json!({ "url": fixture.url() }).to_string();
    let started = Instant::now();
    let mut register = Command::new(ipybox_bin())
        .args(["register", "greet", "--params", &params, "--workspace"])
        .arg(ws.path())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The person reads the link on the terminal and opens it.
    let mut stderr = BufReader::new(register.stderr.take().unwrap());
    let mut said = String::new();
    let link = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "register printed no link: {said}"
        );
        said.push_str(&line);
        if line.starts_with("http") {
            break line.trim().to_owned();
        }
    };
    assert!(
        said.contains("asks you to sign in"),
        "the person is told why: {said}"
    );
    let page = reqwest::get(&link).await.unwrap();
    assert!(
        page.status().is_success(),
        "the browser lands on ipybox's page: {}",
        page.status()
    );
    let out = tokio::task::spawn_blocking(move || register.wait_with_output().unwrap())
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}{rest}");
    assert!(stdout.contains("greet"), "the tool's module: {stdout}");
    assert!(rest.contains("Signed in to \"greet\""), "{rest}");
    println!("sign-in, from `register` started to tools listed: {elapsed:?}");

    // The tokens: in ipybox's data directory, the user's alone, nowhere in the workspace.
    let home = ipybox::oauth::FileTokenStore::in_home(&ipybox_home());
    let token_file = home.path(&fixture.url());
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the token file is the user's alone");
    assert!(
        !token_file.starts_with(ws.path()),
        "the token file is outside the workspace"
    );
    let kept: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&token_file).unwrap()).unwrap();
    let access = kept["credentials"]["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!access.is_empty());
    assert!(
        !stdout.contains(&access) && !said.contains(&access) && !rest.contains(&access),
        "the token is never printed"
    );
    for entry in walk(ws.path()) {
        let text = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains(&access),
            "{} holds the token",
            entry.display()
        );
    }

    // A new ipybox process: the cell's call goes out with the kept token, no sign-in.
    let out = exec_greet_cell(ws.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert_eq!(
        stdout.trim(),
        "hello cell, from behind the sign-in",
        "the call reached the protected tool"
    );
    assert!(!stderr.contains("http"), "no sign-in asked: {stderr}");
    let stats = fixture.stats().await;
    assert_eq!(stats["code_grants"], 1, "one sign-in in all: {stats}");
    let audit = walk(&ipybox_home())
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("audit"))
        .map(|p| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned())
        .collect::<String>();
    assert!(!audit.contains(&access), "the audit log holds no token");

    let out = Command::new(ipybox_bin())
        .args(["sign-out", "greet", "--workspace"])
        .arg(ws.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!token_file.exists(), "signing out forgets the tokens");
}

#[tokio::test]
async fn a_token_is_refreshed_before_it_expires_and_a_revoked_sign_in_asks_to_sign_in_again() {
    // Tokens for 31 s: rmcp refreshes one with less than 30 s left, so within a second.
    let fixture = Fixture::start(31);
    let url = fixture.url();
    let _forget = SignOut(url.clone());
    let auth = Authorizations::for_home().unwrap();
    let status = auth
        .sign_in(
            &url,
            &SignInOptions::default(),
            &Consent,
            Duration::from_secs(20),
        )
        .await
        .unwrap();
    let Status::SignedIn {
        scopes,
        refreshable,
        expires,
        ..
    } = status
    else {
        panic!("signed in: {status:?}")
    };
    assert_eq!(scopes, ["mcp:tools"], "the scope the challenge asked for");
    assert!(refreshable && expires.is_some());
    let ws = workspace();
    let params = ipybox::ServerParams::from_json(&serde_json::json!({ "url": url })).unwrap();
    let connect =
        || ipybox::mcp_client::connect("greet", &params, None, ws.path(), Duration::from_secs(20));
    let args = || {
        let serde_json::Value::Object(a) = serde_json::json!({"name": "x"}) else {
            unreachable!()
        };
        a
    };
    let conn = connect().await.unwrap();
    conn.call_tool("greet", args()).await.unwrap();
    assert_eq!(fixture.stats().await["refreshes"], 0);

    // rmcp counts whole seconds: past 2 s, less than 30 s are left.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    conn.call_tool("greet", args()).await.unwrap();
    assert_eq!(
        fixture.stats().await["refreshes"],
        1,
        "a token about to expire is refreshed before the call"
    );

    fixture.admin("expire").await;
    conn.call_tool("greet", args()).await.unwrap();
    assert_eq!(
        fixture.stats().await["refreshes"],
        2,
        "a token the server no longer accepts is refreshed once and the call retried"
    );

    fixture.admin("revoke").await;
    let err = conn.call_tool("greet", args()).await.unwrap_err();
    let needed = ipybox::oauth::sign_in_needed(&err).expect("the error asks for a sign-in");
    assert!(needed.again, "a sign-in was kept: {needed:?}");
    let text = err.to_string();
    assert!(text.contains("Sign in again"), "{text}");
    assert!(text.contains("ipybox sign-in greet"), "{text}");
    assert_eq!(
        auth.status(&url).unwrap(),
        Status::SignedOut,
        "a refused refresh token is forgotten"
    );
    conn.close().await;

    let err = connect().await.unwrap_err();
    assert!(
        ipybox::oauth::sign_in_needed(&err).is_some(),
        "a new connection asks for a sign-in too: {err}"
    );
    auth.sign_out(&url).unwrap();
}

fn ipybox_home() -> std::path::PathBuf {
    ipybox::setup::ipybox_home().unwrap()
}

#[test]
fn a_sandboxed_kernel_cannot_read_the_kept_tokens() {
    let store = ipybox::oauth::FileTokenStore::in_home(&ipybox_home());
    let url = format!("https://tokens.example/{}", std::process::id());
    let saved: ipybox::oauth::Saved = serde_json::from_value(serde_json::json!({
        "url": url, "redirect_uri": "http://127.0.0.1:1/callback",
        "credentials": {"client_id": "c", "token_response": null}
    }))
    .unwrap();
    ipybox::oauth::TokenStore::save(&store, &saved).unwrap();
    let path = store.path(&url);
    let code = format!(
        r#"import os
for p in [{path:?}, {dir:?}]:
    try:
        print("READ" if (os.listdir(p) if os.path.isdir(p) else open(p).read()) else "EMPTY")
    except OSError as e:
        print("BLOCKED", type(e).__name__)
"#,
        path = path.display().to_string(),
        dir = path.parent().unwrap().display().to_string(),
    );
    let ws = workspace();
    let out = Command::new(ipybox_bin())
        .args(["exec", "--sandbox", &code])
        .current_dir(ws.path())
        .output()
        .unwrap();
    ipybox::oauth::TokenStore::remove(&store, &url).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines.iter().all(|l| l.starts_with("BLOCKED")),
        "the token file and its folder are hidden from a sandboxed kernel: {stdout}"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    out
}

#[tokio::test]
async fn signing_out_revokes_at_the_server_and_says_who_signed_in() {
    let fixture = Fixture::start(3600);
    let url = fixture.url();
    let _forget = SignOut(url.clone());
    let auth = Authorizations::for_home().unwrap();
    let status = auth
        .sign_in(
            &url,
            &SignInOptions::default(),
            &Consent,
            Duration::from_secs(20),
        )
        .await
        .unwrap();
    let Status::SignedIn { user, .. } = status else {
        panic!("signed in: {status:?}")
    };
    assert_eq!(
        user.as_deref(),
        Some("ada@example.org"),
        "the token response's username"
    );
    let ws = workspace();
    let params = ipybox::ServerParams::from_json(&serde_json::json!({ "url": url })).unwrap();
    let conn =
        ipybox::mcp_client::connect("greet", &params, None, ws.path(), Duration::from_secs(20))
            .await
            .unwrap();
    let serde_json::Value::Object(args) = serde_json::json!({"name": "x"}) else {
        unreachable!()
    };
    conn.call_tool("greet", args.clone()).await.unwrap();

    assert!(
        auth.sign_out_and_revoke(&url).await.unwrap(),
        "the fixture offers revocation and took it"
    );
    assert_eq!(fixture.stats().await["revocations"], 1);
    assert_eq!(
        auth.status(&url).unwrap(),
        Status::SignedOut,
        "forgotten here"
    );
    let err = conn.call_tool("greet", args).await.unwrap_err();
    assert!(
        ipybox::oauth::sign_in_needed(&err).is_some(),
        "the server no longer takes the revoked token: {err}"
    );
    conn.close().await;
    assert!(
        !auth.sign_out_and_revoke(&url).await.unwrap(),
        "nothing kept, nothing to revoke"
    );
}

/// A browser that only notes what it was asked to open.
struct Recorder(std::sync::Mutex<Vec<String>>);

impl Browser for Recorder {
    fn open(&self, url: &str) {
        self.0.lock().unwrap().push(url.to_owned());
    }
}

/// An MCP server whose authorization server names a local file as its sign-in page: what
/// `xdg-open` would hand to whatever program opens such a thing.
async fn server_with_a_hostile_sign_in_page(page: &'static str) -> String {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let b = base.clone();
    let challenge = move || {
        let b = b.clone();
        async move {
            (
                StatusCode::UNAUTHORIZED,
                [(
                    header::WWW_AUTHENTICATE,
                    format!(
                        r#"Bearer resource_metadata="{b}/.well-known/oauth-protected-resource""#
                    ),
                )],
            )
                .into_response()
        }
    };
    let b = base.clone();
    let resource = move || {
        let b = b.clone();
        async move {
            axum::Json(serde_json::json!({
                "resource": format!("{b}/mcp"), "authorization_servers": [b],
            }))
        }
    };
    let b = base.clone();
    let metadata = move || {
        let b = b.clone();
        async move {
            axum::Json(serde_json::json!({
                "issuer": b, "authorization_endpoint": page,
                "token_endpoint": format!("{b}/token"),
                "registration_endpoint": format!("{b}/register"),
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            }))
        }
    };
    let register = |axum::Json(body): axum::Json<serde_json::Value>| async move {
        (
            StatusCode::CREATED,
            axum::Json(serde_json::json!({
                "client_id": "c", "redirect_uris": body["redirect_uris"].clone(),
            })),
        )
    };
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(challenge))
        .route(
            "/.well-known/oauth-protected-resource",
            axum::routing::get(resource),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(metadata),
        )
        .route("/register", axum::routing::post(register));
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("{base}/mcp")
}

#[tokio::test]
async fn only_a_web_page_is_opened_for_a_sign_in() {
    for page in ["file:///etc/passwd", "ms-settings:privacy"] {
        let url = server_with_a_hostile_sign_in_page(page).await;
        let _forget = SignOut(url.clone());
        let browser = Recorder(std::sync::Mutex::default());
        let err = Authorizations::for_home()
            .unwrap()
            .sign_in(
                &url,
                &SignInOptions::default(),
                &browser,
                Duration::from_secs(3),
            )
            .await
            .expect_err("no sign-in through a page that is not on the web");
        assert_eq!(
            *browser.0.lock().unwrap(),
            Vec::<String>::new(),
            "the browser was never asked to open {page}"
        );
        let text = err.to_string();
        assert!(text.contains("not a web page"), "{text}");
    }
}

/// The app keeps sign-ins in the OS keyring, reached over the D-Bus session bus: a sandboxed
/// kernel cannot open a connection to it (srt refuses Unix sockets), while an unsandboxed one
/// — the same user, as the person chose — can, which shows the probe would see a way through.
/// Needs a session bus: scripts/test.sh runs it on a private one (`IPYBOX_TEST_KEYRING`).
#[test]
fn a_sandboxed_kernel_cannot_reach_the_keyring() {
    let Some(address) = std::env::var("DBUS_SESSION_BUS_ADDRESS")
        .ok()
        .filter(|_| std::env::var_os("IPYBOX_TEST_KEYRING").is_some())
    else {
        println!("no private session bus (IPYBOX_TEST_KEYRING): nothing to reach");
        return;
    };
    let code = format!(
        r#"import socket
addr = {address:?}
path = addr.split("path=", 1)[1].split(",")[0] if "path=" in addr else None
name = path if path else "\0" + addr.split("abstract=", 1)[1].split(",")[0]
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect(name)
    print("CONNECTED")
except OSError as e:
    print("BLOCKED", type(e).__name__)
"#
    );
    let ws = workspace();
    let run = |sandbox: bool| {
        let mut cmd = Command::new(ipybox_bin());
        cmd.arg("exec");
        if sandbox {
            cmd.arg("--sandbox");
        }
        let out = cmd.arg(&code).current_dir(ws.path()).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    assert_eq!(
        run(false),
        "CONNECTED",
        "the probe reaches the bus unsandboxed"
    );
    let sandboxed = run(true);
    assert!(
        sandboxed.starts_with("BLOCKED"),
        "a sandboxed kernel cannot reach the keyring's bus: {sandboxed}"
    );
}

/// A sign-in the app made, kept where the app keeps it (the OS keyring, else the 0600 file),
/// is used by the command line: `ipybox register` lists the tools and `ipybox exec` calls
/// one without asking to sign in. scripts/test.sh runs it under GNOME Keyring on a private
/// session bus (`IPYBOX_TEST_KEYRING`), where the sign-in must be in the keyring and in no
/// file; the ipybox binary must be built with the `keyring` feature (the default build).
#[cfg(feature = "keyring")]
#[tokio::test]
async fn the_command_line_uses_a_sign_in_the_app_kept_in_the_keyring() {
    let fixture = Fixture::start(3600);
    let url = fixture.url();
    let _forget = SignOut(url.clone());
    // The app's store, as the servers tab signs in.
    let app = Authorizations::new(ipybox::oauth::KeyringTokenStore::make(&ipybox_home()));
    let status = app
        .sign_in(
            &url,
            &SignInOptions::default(),
            &Consent,
            Duration::from_secs(20),
        )
        .await
        .unwrap();
    assert!(matches!(status, Status::SignedIn { .. }), "{status:?}");
    let file = ipybox::oauth::FileTokenStore::in_home(&ipybox_home()).path(&url);
    if std::env::var_os("IPYBOX_TEST_KEYRING").is_some() {
        assert!(!file.exists(), "kept in the keyring, no copy in a file");
    }

    let ws = workspace();
    let params = serde_json::json!({ "url": url }).to_string();
    let cli = |args: &[&str]| {
        Command::new(ipybox_bin())
            .args(args)
            .arg("--workspace")
            .arg(ws.path())
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    // A sign-in asked for prints its link: register is stopped there, and the test fails.
    let mut register = Command::new(ipybox_bin())
        .args(["register", "greet", "--params", &params, "--workspace"])
        .arg(ws.path())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    for line in BufReader::new(register.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        said.push_str(&line);
        said.push('\n');
        if line.contains("asks you to sign in") {
            let _ = register.kill();
            let _ = register.wait();
            panic!("register asked for a sign-in the app had made: {said}");
        }
    }
    assert!(register.wait().unwrap().success(), "register: {said}");
    let out = exec_greet_cell(ws.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert_eq!(stdout.trim(), "hello cell, from behind the sign-in");
    assert_eq!(
        fixture.stats().await["code_grants"],
        1,
        "the app's sign-in was the only one"
    );

    // Signing out on the command line forgets it where the app looks too.
    let out = cli(&["sign-out", "greet"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fresh = Authorizations::new(ipybox::oauth::KeyringTokenStore::make(&ipybox_home()));
    assert_eq!(fresh.status(&url).unwrap(), Status::SignedOut);
}
