//! What an OAuth sign-in costs: per tool call once signed in (the token from memory), as the
//! difference between two sessions with one server process (`--open`: it takes calls with
//! or without a token, and looks the token up either way), one signed in and one not (its
//! URL differs by a query the server ignores, so no sign-in is kept for it), calls
//! alternating; and a sign-in from start to the tools listed (the browser step answered at
//! once) against the local fixture (`tests/bin/oauth_fixture.rs`).
//!
//! `cargo bench -p ipybox-tests --no-default-features --bench oauth`.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ipybox::oauth::{Authorizations, Browser, SignInOptions};

const FIXTURE: &str = env!("CARGO_BIN_EXE_ipybox-oauth-fixture");
const CALLS: usize = 400;
const SIGN_INS: usize = 7;

struct Fixture(Child, String);

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn fixture(open: bool) -> Fixture {
    let mut cmd = Command::new(FIXTURE);
    if open {
        cmd.arg("--open");
    }
    let mut child = cmd
        .arg("127.0.0.1:0")
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
    Fixture(child, format!("http://{addr}/mcp"))
}

struct Consent;

impl Browser for Consent {
    fn open(&self, url: &str) {
        let url = url.to_owned();
        tokio::spawn(async move {
            let _ = reqwest::get(&url).await;
        });
    }
}

/// One call, in milliseconds.
async fn once(
    conn: &ipybox::mcp_client::McpConnection,
    args: serde_json::Map<String, serde_json::Value>,
) -> f64 {
    let t = Instant::now();
    conn.call_tool("greet", args).await.unwrap();
    t.elapsed().as_secs_f64() * 1000.0
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn p(xs: &[f64], q: f64) -> f64 {
    xs[((xs.len() - 1) as f64 * q) as usize]
}

#[tokio::main]
async fn main() {
    let home = tempfile::tempdir().unwrap();
    let auth = Authorizations::in_home(home.path());
    let ws = tempfile::tempdir().unwrap();
    let connect = |url: String| {
        let ws = ws.path().to_path_buf();
        async move {
            let params =
                ipybox::ServerParams::from_json(&serde_json::json!({ "url": url })).unwrap();
            ipybox::mcp_client::connect("greet", &params, None, &ws, Duration::from_secs(20))
                .await
                .unwrap()
        }
    };
    // connect() takes sign-ins from $IPYBOX_HOME: point it at this run's directory.
    // SAFETY: set before any thread of ours reads the environment.
    unsafe { std::env::set_var("IPYBOX_HOME", home.path()) };

    let protected = fixture(false);
    let mut sign_in = Vec::new();
    for _ in 0..SIGN_INS {
        let t = Instant::now();
        auth.sign_in(
            &protected.1,
            &SignInOptions::default(),
            &Consent,
            Duration::from_secs(20),
        )
        .await
        .unwrap();
        let conn = connect(protected.1.clone()).await;
        assert!(!conn.list_tools().await.unwrap().is_empty());
        sign_in.push(t.elapsed().as_secs_f64() * 1000.0);
        conn.close().await;
    }
    let open = fixture(true);
    auth.sign_in(
        &open.1,
        &SignInOptions::default(),
        &Consent,
        Duration::from_secs(20),
    )
    .await
    .unwrap();
    assert!(
        matches!(
            auth.status(&open.1).unwrap(),
            ipybox::oauth::Status::SignedIn { .. }
        ),
        "the first session is signed in"
    );
    assert_eq!(
        auth.status(&format!("{}?plain", open.1)).unwrap(),
        ipybox::oauth::Status::SignedOut,
        "the second is not"
    );
    let signed = connect(open.1.clone()).await;
    let plain = connect(format!("{}?plain", open.1)).await;
    let args = || {
        let serde_json::Value::Object(a) = serde_json::json!({"name": "x"}) else {
            unreachable!()
        };
        a
    };
    for _ in 0..50 {
        signed.call_tool("greet", args()).await.unwrap();
        plain.call_tool("greet", args()).await.unwrap();
    }
    let (mut with, mut without, mut diffs) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..CALLS {
        // Alternating which goes first, so neither always runs on a warmer path.
        let (w, o) = if i % 2 == 0 {
            let w = once(&signed, args()).await;
            (w, once(&plain, args()).await)
        } else {
            let o = once(&plain, args()).await;
            (once(&signed, args()).await, o)
        };
        with.push(w);
        without.push(o);
        diffs.push(w - o);
    }
    let mean_diff = diffs.iter().sum::<f64>() / diffs.len() as f64;
    let sd =
        (diffs.iter().map(|d| (d - mean_diff).powi(2)).sum::<f64>() / diffs.len() as f64).sqrt();
    let (mw, mo) = (median(&mut with), median(&mut without));
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "tool call, signed in: median {mw:.3} ms (p10 {:.3}, p90 {:.3}); same server, no sign-in: median {mo:.3} ms (p10 {:.3}, p90 {:.3})",
        p(&with, 0.1),
        p(&with, 0.9),
        p(&without, 0.1),
        p(&without, 0.9),
    );
    println!(
        "OAuth per call: {:.3} ms (median difference), mean of paired differences {mean_diff:.3} ms ± {:.3} (standard error; {CALLS} pairs)",
        mw - mo,
        sd / (diffs.len() as f64).sqrt()
    );
    let ms = median(&mut sign_in);
    println!(
        "sign-in to tools listed: median {ms:.0} ms, max {:.0} ms ({SIGN_INS} sign-ins)",
        sign_in.last().unwrap()
    );
    signed.close().await;
    plain.close().await;
}
