//! The `ipybox exec` and `ipybox setup` commands.

#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::process::{Command, Stdio};

use ipybox_tests::{ipybox_bin, workspace};

fn exec(ws: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(ipybox_bin())
        .arg("exec")
        .arg("--workspace")
        .arg(ws)
        .args(args)
        .output()
        .unwrap()
}

/// Register the fixture MCP server as `fx` for `ws`.
fn register_fixture(ws: &std::path::Path) {
    ipybox_tests::register_with_cli(
        ws,
        "fx",
        &serde_json::json!({"command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"), "args": ["stdio"]}),
    );
}

#[test]
fn exec_streams_output_and_lists_images() {
    let ws = workspace();
    let out = exec(
        ws.path(),
        &[
            "-e",
            "GREETING=hi",
            "import os\nprint(os.environ['GREETING'])\nimport matplotlib.pyplot as plt\nplt.plot([1]); plt.show()\n6*7",
        ],
    );
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "hi");
    assert!(lines.contains(&"42"), "{stdout}");
    let image = lines
        .iter()
        .find_map(|l| l.strip_prefix("image: "))
        .expect("image path printed");
    assert!(std::path::Path::new(image).exists(), "{image} exists");
}

#[test]
fn exec_exits_non_zero_with_the_traceback_on_stderr() {
    let ws = workspace();
    let out = exec(
        ws.path(),
        &["print('partial')\nraise ValueError('bad value')"],
    );
    assert_eq!(out.status.code(), Some(1), "a raised exception exits 1");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "partial\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("ValueError: bad value") && stderr.contains("Traceback"),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}'),
        "no ANSI escapes on stderr: {stderr:?}"
    );

    // ipybox's own log lines, piped, are plain text too.
    let out = Command::new(ipybox_bin())
        .args(["--log", "debug", "exec", "--workspace"])
        .arg(ws.path())
        .arg("1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("DEBUG"), "debug logs on stderr: {stderr}");
    assert!(!stderr.contains('\u{1b}'), "plain logs: {stderr:?}");

    let out = exec(
        ws.path(),
        &["--timeout", "0.5", "import time; time.sleep(10)"],
    );
    assert_eq!(out.status.code(), Some(2), "a timeout exits 2");
    assert!(String::from_utf8_lossy(&out.stderr).contains("timed out"));
}

#[test]
fn exec_reads_code_from_stdin_and_files() {
    let ws = workspace();
    let mut child = Command::new(ipybox_bin())
        .args(["exec", "--workspace"])
        .arg(ws.path())
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"print('from stdin')")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "from stdin\n");
    let file = ws.path().join("script.py");
    std::fs::write(&file, "print('from file')\n").unwrap();
    let out = exec(ws.path(), &["--file", file.to_str().unwrap()]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "from file\n");
}

#[test]
fn help_and_version_and_bad_arguments() {
    let out = Command::new(ipybox_bin()).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("exec") && help.contains("setup"), "{help}");
    let out = Command::new(ipybox_bin())
        .arg("--version")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ipybox "));
    let out = Command::new(ipybox_bin())
        .args(["exec", "-e", "NOEQUALS", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("KEY=VALUE"));
}

#[test]
fn setup_without_a_suitable_python_fails_clearly() {
    let home = workspace();
    let fake_bin = home.path().join("bin");
    std::fs::create_dir(&fake_bin).unwrap();
    let fake = fake_bin.join("python3");
    std::fs::write(&fake, "#!/bin/sh\necho 3 8\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(ipybox_bin())
        .arg("setup")
        .env_remove("IPYBOX_PYTHON")
        .env("IPYBOX_HOME", home.path().join("home"))
        .env("PATH", &fake_bin)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Python 3.10 or newer") && stderr.contains("is 3.8"),
        "{stderr}"
    );
}

#[test]
fn python_flag_checks_the_environment() {
    let out = Command::new(ipybox_bin())
        .args(["setup", "--python", "/nonexistent/python"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("cannot run the Python at /nonexistent/python")
    );
}

/// `--approve ask` with nobody at the terminal: the call is rejected after the approval
/// timeout instead of waiting forever.
#[test]
fn ask_rejects_after_the_approval_timeout() {
    let ws = workspace();
    register_fixture(ws.path());
    let code = "from mcptools.fx.echo import Params, run\nprint(run(Params(text='hi')))";
    let inner = format!(
        "{} exec --workspace {} --approve ask --approval-timeout 2 \"{code}\"; echo EXIT:$?",
        ipybox_bin().display(),
        ws.path().display()
    );
    // script(1) gives ipybox a terminal; its stdin stays open and silent.
    let started = std::time::Instant::now();
    let mut script = Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    {
        use std::io::BufRead;
        let stdout = script.stdout.take().unwrap();
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.unwrap();
            seen.push_str(&line);
            seen.push('\n');
            if line.contains("EXIT:") {
                break;
            }
        }
    }
    let _ = script.kill();
    let _ = script.wait();
    let took = started.elapsed();
    assert!(seen.contains("EXIT:1"), "the code raised: {seen}");
    assert!(
        seen.contains("no answer within 2 s: rejected") || seen.contains("ApprovalTimeout"),
        "{seen}"
    );
    assert!(
        took < std::time::Duration::from_secs(30),
        "took {took:?}: {seen}"
    );
}

/// `exec` and `mcp` share one approval vocabulary; asking needs a terminal `mcp` does not
/// have, and a mode that needs a file says so.
#[test]
fn approval_modes_are_one_vocabulary() {
    let run = |args: &[&str]| {
        let out = Command::new(ipybox_bin())
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("ipybox runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, err) = run(&["mcp", "--approval", "ask"]);
    assert!(!ok && err.contains("no terminal to ask on"), "{err}");
    let (ok, err) = run(&["mcp", "--approval", "rules"]);
    assert!(!ok && err.contains("needs the rules file"), "{err}");
    let (ok, err) = run(&["exec", "--approval", "sometimes", "print(1)"]);
    assert!(
        !ok && err.contains("ask, auto, reject, rules or desktop"),
        "{err}"
    );
    let (ok, err) = run(&[
        "exec",
        "--approval",
        "auto",
        "--rules",
        "r.json",
        "print(1)",
    ]);
    assert!(!ok && err.contains("goes with --approval rules"), "{err}");
}

/// Every call `exec` makes goes into the workspace's audit log, kept outside the workspace,
/// and `ipybox audit` prints it.
#[test]
fn exec_records_calls_and_audit_prints_them() {
    let ws = workspace();
    register_fixture(ws.path());
    let code = "from mcptools.fx.echo import Params, run\nprint(run(Params(text='hi')))";
    let out = exec(ws.path(), &["--approval", "auto", code]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = exec(ws.path(), &["--approval", "reject", code]);
    assert_eq!(out.status.code(), Some(1), "the rejected call raises");

    let audit = |args: &[&str]| {
        let out = Command::new(ipybox_bin())
            .arg("audit")
            .arg("--workspace")
            .arg(ws.path())
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let entries: Vec<serde_json::Value> = audit(&["--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_eq!(entries[0]["tool"], "echo");
    assert_eq!(entries[0]["arguments"], serde_json::json!({"text": "hi"}));
    assert_eq!(entries[0]["decision"], "approved");
    assert_eq!(entries[0]["decided_by"], "policy");
    assert_eq!(entries[0]["outcome"]["kind"], "ok");
    assert!(entries[0]["execution_id"].is_string());
    assert_eq!(entries[1]["decision"], "rejected");
    assert_eq!(entries[1]["outcome"], serde_json::Value::Null);
    let text = audit(&["--last", "1"]);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.contains("fx.echo  rejected (by the session's policy)"),
        "{text}"
    );

    let state = ipybox::WorkspaceState::of(ws.path()).unwrap();
    assert!(
        !state.dir().starts_with(ws.path()),
        "the log is out of the workspace's reach"
    );
    std::fs::remove_dir_all(state.dir()).unwrap();
}
