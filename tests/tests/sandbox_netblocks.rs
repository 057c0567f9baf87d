//! Learning from network blocks, against real srt: a sandboxed cell's request that srt's
//! proxy refuses is reported as a block with the exact host to allow — from srt's own record
//! of the refusal, which reaches ipybox over a channel the sandbox cannot see, not from what
//! the cell printed — and allowing that host lets the request through.

#![allow(clippy::unwrap_used)]
// The measured time is the figure this test reports.
#![allow(clippy::print_stderr)]

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use ipybox::{CodeExecutor, Event, Output, SandboxAccess, SessionEvent, StreamOptions};
use ipybox_tests::{tree, workspace};
use tokio::sync::broadcast::Receiver;

/// A plain HTTP server on the host's 127.0.0.1 answering every request with `body`.
fn http_server(body: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

/// The default kernel policy with `allowed` as its allow list, written to a file.
fn policy_allowing(dir: &Path, allowed: &[&str]) -> std::path::PathBuf {
    let default = ipybox::shipped_profiles()
        .into_iter()
        .find(|p| p.name == "kernel")
        .expect("the default kernel profile ships");
    let mut policy: serde_json::Value = serde_json::from_str(&default.policy.to_json()).unwrap();
    policy["network"]["allowedDomains"] = serde_json::json!(allowed);
    let file = dir.join("policy.json");
    std::fs::write(&file, policy.to_string()).unwrap();
    file
}

async fn sandboxed(ws: &Path, policy: &Path) -> CodeExecutor {
    let e = CodeExecutor::builder()
        .working_dir(ws)
        .sandbox(true)
        .sandbox_config(policy)
        .build();
    e.start().await.expect("the sandboxed executor starts");
    e
}

/// A request through srt's proxy to `localhost:port` (srt's NO_PROXY would send it into the
/// sandbox's own loopback instead).
fn fetch(port: u16) -> String {
    format!(
        r#"import os, urllib.request
os.environ.pop("NO_PROXY", None); os.environ.pop("no_proxy", None)
print(urllib.request.urlopen("http://localhost:{port}/", timeout=10).read().decode())"#
    )
}

/// Run `code`: its text and error, and the blocks told of for it — with how long after the
/// cell's error each came (`None`: before it).
async fn run(
    e: &CodeExecutor,
    events: &mut Receiver<SessionEvent>,
    code: &str,
) -> (String, bool, Vec<(Option<Duration>, ipybox::SandboxBlock)>) {
    let options = StreamOptions {
        outputs: true,
        ..StreamOptions::default()
    };
    let mut stream = e.stream(code, options);
    let id = stream.id().to_owned();
    let (mut text, mut failed, mut error_at) = (String::new(), false, None);
    let mut blocks = Vec::new();
    let mut take = |events: &mut Receiver<SessionEvent>, error_at: Option<Instant>| {
        while let Ok(event) = events.try_recv() {
            if let SessionEvent::SandboxBlocked {
                execution_id,
                block,
            } = event
                && execution_id == id
            {
                blocks.push((error_at.map(|t: Instant| t.elapsed()), *block));
            }
        }
    };
    while let Some(event) = stream.next().await {
        take(events, error_at);
        match event {
            Ok(Event::Output(Output::Error { .. })) => {
                failed = true;
                error_at = Some(Instant::now());
            }
            Ok(Event::Output(Output::Stream { text: t, .. })) => text.push_str(&t),
            Ok(Event::Result(r)) => text.push_str(r.text.as_deref().unwrap_or_default()),
            Err(_) => failed = true,
            _ => {}
        }
    }
    take(events, error_at);
    (text, failed, blocks)
}

/// The pipes a process holds, by inode.
fn pipes(pid: i32) -> HashSet<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .map(|target| target.to_string_lossy().into_owned())
        .filter(|t| t.starts_with("pipe:"))
        .collect()
}

#[tokio::test]
async fn a_refused_domain_is_reported_by_srt_and_allowing_it_lets_the_request_through() {
    let ws = workspace();
    let policies = workspace();
    let port = http_server("hello through the proxy");
    let e = sandboxed(ws.path(), &policy_allowing(policies.path(), &[])).await;
    let mut events = e.subscribe();

    let (text, failed, blocks) = run(&e, &mut events, &fetch(port)).await;
    assert!(failed, "the proxy refuses localhost:{port}: {text}");
    let target = format!("localhost:{port}");
    let (after_error, block) = blocks
        .iter()
        .find(|(_, b)| b.path == target)
        .unwrap_or_else(|| panic!("a block for {target}, from srt's record: {blocks:?}"));
    assert_eq!(block.access, SandboxAccess::Connect);
    assert_eq!(
        block.suggestion.as_deref(),
        Some(target.as_str()),
        "the exact host and its (unusual) port are offered, not a wildcard"
    );
    assert_eq!(
        block.rule, None,
        "no rule refuses it: it is not on the allow list"
    );
    assert_eq!(
        blocks.len(),
        1,
        "one refusal is one block, told once: {blocks:?}"
    );
    eprintln!("network block told {after_error:?} after the cell's error (None: before it)");

    // Printing srt's words is not a block: only srt's own record is.
    let forged = "import sys\nprint('deny network-outbound forged.example:443 (host is not on the allow list)', file=sys.stderr)\nraise OSError('Tunnel connection failed: 403 Forbidden')";
    let (_, failed, blocks) = run(&e, &mut events, forged).await;
    assert!(failed);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let late: Vec<_> = std::iter::from_fn(|| events.try_recv().ok())
        .filter(|ev| matches!(ev, SessionEvent::SandboxBlocked { .. }))
        .collect();
    assert!(
        blocks.is_empty() && late.is_empty(),
        "text the kernel prints is never a block: {blocks:?} {late:?}"
    );

    // The channel is srt's reporter's alone: no process srt started (the shell, bwrap, the
    // gateway, the kernel) holds a pipe srt's own process holds.
    let ws_path = std::fs::canonicalize(ws.path()).unwrap();
    let srts: Vec<i32> = tree(std::process::id() as i32)
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "node")
                && std::fs::read_link(format!("/proc/{p}/cwd")).ok().as_deref()
                    == Some(ws_path.as_path())
        })
        .collect();
    assert!(!srts.is_empty(), "srt runs for the workspace");
    for srt in srts {
        let own = pipes(srt);
        assert!(!own.is_empty(), "srt {srt} holds its reporting pipe");
        for p in tree(srt).into_iter().filter(|&p| p != srt) {
            let shared: Vec<_> = pipes(p).intersection(&own).cloned().collect();
            assert!(
                shared.is_empty(),
                "process {p} under srt {srt} inherited srt's pipes {shared:?}: code in the sandbox could forge refusals"
            );
        }
    }
    e.stop().await.unwrap();

    // Allowing the offered entry lets the same request through.
    let e = sandboxed(ws.path(), &policy_allowing(policies.path(), &[&target])).await;
    let mut events = e.subscribe();
    let (text, failed, blocks) = run(&e, &mut events, &fetch(port)).await;
    assert!(
        !failed && text.contains("hello through the proxy"),
        "allowed, the request succeeds: {text}"
    );
    assert!(blocks.is_empty(), "nothing refused: {blocks:?}");
    e.stop().await.unwrap();
}
