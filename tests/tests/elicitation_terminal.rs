//! A server's question on the terminal of `ipybox exec --approval ask`: who asks and what
//! (escaped), each field in turn with its default shown, a bad value named and asked again,
//! and the answer reaching the server. In another approval mode nobody is asked and the
//! server is told why.

#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ipybox_tests::{ipybox_bin, workspace};

fn register(ws: &Path) {
    ipybox_tests::register_with_cli(
        ws,
        "asker",
        &serde_json::json!({"command": env!("CARGO_BIN_EXE_ipybox-fixture-elicit")}),
    );
}

/// What `ipybox ARGS` writes to a terminal (script(1) gives it one), typing each step's
/// keys once its prompt has appeared (after the previous step's).
fn on_terminal(args: &[&str], steps: &[(&str, &[u8])]) -> String {
    let mut script = ipybox_tests::ipybox_on_terminal(args).spawn().unwrap();
    let mut keys = script.stdin.take().unwrap();
    let mut stdout = script.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut all = Vec::new();
    let mut next = 0;
    let mut seen_to = 0;
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(500)) {
            Ok(chunk) => all.extend_from_slice(&chunk),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let text = String::from_utf8_lossy(&all).into_owned();
        if let Some((prompt, typed)) = steps.get(next)
            && let Some(at) = text[seen_to..].find(prompt)
        {
            // The prompt waits for its line: give it a moment to start reading.
            std::thread::sleep(Duration::from_millis(300));
            keys.write_all(typed).unwrap();
            keys.flush().unwrap();
            seen_to += at + prompt.len();
            next += 1;
        }
        if text.contains("EXIT:") {
            break;
        }
    }
    let _ = script.kill();
    let _ = script.wait();
    String::from_utf8_lossy(&all).into_owned()
}

const CELL: &str = "from mcptools.asker import ask\n\
print(ask.run(ask.Params(message='Confirm\\x1b[2J your \\u202edetails')))\n";

#[test]
fn the_terminal_asks_each_field_and_the_server_gets_the_answer() {
    let ws = workspace();
    register(ws.path());
    let file = ws.path().join("cell.py");
    std::fs::write(&file, CELL).unwrap();
    let out = on_terminal(
        &[
            "exec",
            "--workspace",
            ws.path().to_str().unwrap(),
            "--approval",
            "ask",
            "--approval-timeout",
            "30",
            "--file",
            file.to_str().unwrap(),
        ],
        &[
            ("[y/N]", b"y\r"),
            ("[d]ecline, [c]ancel: ", b"a\r"),
            ("[Ada Lovelace]: ", b"\r"),
            ("(an email address, required): ", b"ada@example.org\r"),
            ("(a whole number from 0 to 150, required): ", b"forty\r"),
            ("Age: it must be a number", b"36\r"),
            ("(y or n) [y]: ", b"\r"),
            ("3 blue (Blue)): ", b"2\r"),
            ("(secret, not shown as you type): ", b"tok-SECRET\r"),
        ],
    );
    assert!(
        out.contains("The MCP server \"asker\" asks (its own words):"),
        "headed as the server's question: {out}"
    );
    assert!(
        out.contains(r"Confirm\u001b[2J your \u202edetails") && !out.contains("\u{1b}[2J"),
        "the server's words are shown escaped, not obeyed: {out}"
    );
    assert!(
        out.contains("Where the report goes"),
        "a field's description is shown: {out}"
    );
    assert!(
        out.contains(r#""content": {"name": "Ada Lovelace", "email": "ada@example.org", "age": 36, "subscribe": true, "color": "green", "api_token": "tok-SECRET"}"#)
            || out.contains(r#""content":{"name":"Ada Lovelace","email":"ada@example.org","age":36,"subscribe":true,"color":"green","api_token":"tok-SECRET"}"#),
        "the server received the answer, defaults kept, the age asked again: {out}"
    );
    assert_eq!(
        out.matches("tok-SECRET").count(),
        1,
        "the secret is not echoed as it is typed (only the server's answer shows it): {out}"
    );
}

#[test]
fn with_auto_approval_nobody_is_asked_and_the_server_hears_why() {
    let ws = workspace();
    register(ws.path());
    let out = Command::new(ipybox_bin())
        .args(["exec", "--workspace"])
        .arg(ws.path())
        .args(["--approval", "auto", CELL])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(r#""action":"decline""#) && text.contains("nobody can answer"),
        "declined, with the reason the server sees: {text}"
    );
}
