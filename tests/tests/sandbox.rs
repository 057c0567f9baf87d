//! Sandboxed kernels (real srt, real bubblewrap), probed by kernel code the way an attacker
//! would write it: the network, the host's ports and Unix sockets, secrets, writes outside
//! the workspace; custom policies, allowed domains, MCP tool calls with approval, a sandboxed
//! MCP server, and no process left behind.

#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ipybox::{CodeExecutor, Error, ErrorCode, ServerParams};
use ipybox_tests::{
    alive, ipybox_bin, output_of as run, run_with, spawn_host, tree, wait_for, workspace,
};

async fn sandboxed(ws: &Path, policy: Option<&Path>) -> CodeExecutor {
    let mut b = CodeExecutor::builder().working_dir(ws).sandbox(true);
    if let Some(p) = policy {
        b = b.sandbox_config(p);
    }
    let e = b.build();
    e.start().await.expect("the sandboxed executor starts");
    e
}

/// A Python helper printing `name: OK value` or `name: BLOCKED ExceptionType: message`.
const PROBE: &str = r#"
def probe(name, f):
    try:
        print(f"{name}: OK {f()!r}"[:200])
    except BaseException as e:
        print(f"{name}: BLOCKED {type(e).__name__}: {e}"[:200])
"#;

fn line<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no probe {name} in:\n{text}"))
}

fn assert_blocked(text: &str, name: &str, why: &str) {
    let l = line(text, name);
    assert!(
        l.contains("BLOCKED") && l.contains(why),
        "{name} must be blocked ({why}): {l}"
    );
}

fn assert_ok(text: &str, name: &str) {
    let l = line(text, name);
    assert!(l.contains(": OK "), "{name} must work: {l}");
}

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

#[tokio::test]
async fn the_network_is_unreachable() {
    let ws = workspace();
    let host_port = http_server("host service");
    let e = sandboxed(ws.path(), None).await;
    let code = format!(
        r#"{PROBE}
import os, socket, urllib.request
probe("dns", lambda: socket.getaddrinfo("pypi.org", 443))
probe("direct", lambda: socket.create_connection(("1.1.1.1", 80), timeout=3))
probe("proxy", lambda: urllib.request.urlopen("https://pypi.org/simple/", timeout=10).status)
probe("proxy_http", lambda: urllib.request.urlopen("http://example.com/", timeout=10).status)
probe("host_port", lambda: socket.create_connection(("127.0.0.1", {host_port}), timeout=3))
probe("tool_server_address", lambda: os.environ["IPYBOX_TOOL_SERVER"])
probe("unix_socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
probe("unix_dgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))
"#
    );
    let out = run(&e, &code).await;
    assert_blocked(&out, "dns", "gaierror");
    assert_blocked(&out, "direct", "unreachable");
    assert_blocked(&out, "proxy", "403");
    assert_blocked(&out, "proxy_http", "403");
    assert_blocked(&out, "host_port", "ConnectionRefusedError");
    assert_blocked(&out, "tool_server_address", "KeyError");
    assert_blocked(&out, "unix_socket", "Operation not permitted");
    assert_blocked(&out, "unix_dgram", "Operation not permitted");

    // reset() keeps the sandbox: a fresh kernel, still unable to resolve names. With the
    // spare sandbox up, the reset swaps it in rather than starting one (how fast that is,
    // the reset benchmark measures; a timed assert here failed on a loaded machine).
    run(&e, "secret_state = 1").await;
    let before = e.gateway_pid().await.expect("a gateway runs") as i32;
    let ws_path = std::fs::canonicalize(ws.path()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while sandbox_pythons(&ws_path) < 4 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let spare_up: Vec<i32> = srts_in(&ws_path).into_iter().flat_map(tree).collect();
    e.reset().await.unwrap();
    let after = e.gateway_pid().await.expect("a gateway runs") as i32;
    assert_ne!(after, before, "the reset replaced the sandbox");
    assert!(
        spare_up.contains(&after),
        "the reset swapped in the spare sandbox that was already running ({after} not in {:?})",
        names(&spare_up)
    );
    let out = run(
        &e,
        &format!(
            "{PROBE}\nimport socket\nprobe('state', lambda: secret_state)\nprobe('dns', lambda: socket.getaddrinfo('pypi.org', 443))"
        ),
    )
    .await;
    assert_blocked(&out, "state", "NameError");
    assert_blocked(&out, "dns", "gaierror");

    // A timeout interrupts the sandboxed kernel (a REST call through a socket made in the
    // sandbox) and keeps its state.
    run(&e, "kept = 41").await;
    let err = e
        .execute("import time\ntime.sleep(60)", Some(Duration::from_secs(1)))
        .await
        .expect_err("times out");
    match err {
        Error::Timeout {
            kernel_restarted, ..
        } => assert!(!kernel_restarted, "the interrupt worked"),
        other => panic!("expected a timeout: {other}"),
    }
    assert_eq!(run(&e, "print(kept + 1)").await, "42");
    e.stop().await.unwrap();
}

#[tokio::test]
async fn secrets_are_hidden_and_writes_stay_in_the_workspace() {
    let ws = workspace();
    std::fs::write(ws.path().join(".env"), "API_KEY=top-secret\n").unwrap();
    std::fs::create_dir_all(ws.path().join("sub/deeper")).unwrap();
    std::fs::write(ws.path().join("sub/deeper/.env"), "NESTED=secret\n").unwrap();
    std::fs::write(ws.path().join("README.md"), "# readable\n").unwrap();
    let home = ipybox::setup::ipybox_home().unwrap();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .sandbox(true)
        .build();
    // A registered server: its parameters are in the registry under the data directory.
    e.register_mcp_server("fx", &fixture()).await.unwrap();
    // Another session's state directory, with a gateway token in it.
    let other = tempfile::Builder::new()
        .prefix("other-session-")
        .tempdir_in(home.join("sessions"))
        .unwrap();
    std::fs::write(other.path().join("token"), "other-token").unwrap();
    e.start().await.unwrap();
    let outside = workspace();
    let code = format!(
        r#"{PROBE}
import os, sys, pathlib
probe("env", lambda: open(".env").read())
probe("nested_env", lambda: open("sub/deeper/.env").read())
probe("readme", lambda: open("README.md").read())
probe("write_ws", lambda: pathlib.Path("sub/out.txt").write_text("ok"))
probe("write_outside", lambda: open({outside:?} + "/x", "w"))
probe("write_home", lambda: open(os.path.expanduser("~/ipybox-sandbox-probe"), "w"))
probe("write_data_dir", lambda: open({home:?} + "/ipybox-sandbox-probe", "w"))
probe("write_venv", lambda: open(os.path.join(sys.prefix, "ipybox-sandbox-probe"), "w"))
probe("write_tmp", lambda: open("/tmp/ipybox-sandbox-probe", "w"))
import tempfile
probe("tempfile", lambda: tempfile.NamedTemporaryFile().name)
probe("mpl", lambda: __import__("matplotlib.pyplot").__name__)
state = os.path.dirname(os.environ["JUPYTER_RUNTIME_DIR"])
probe("kernelspec", lambda: open(state + "/data/kernels/ipybox/kernel.json", "a"))
probe("startup_file", lambda: open(state + "/ipython/profile_default/startup/00-persist.py", "w"))
probe("gateway_config", lambda: open(state + "/config/jupyter_kernel_gateway_config.py", "a"))
probe("owner_pid", lambda: open(state + "/pid", "w"))
probe("runtime_dir", lambda: open(os.environ["JUPYTER_RUNTIME_DIR"] + "/probe", "w").close())
probe("other_sessions", lambda: os.listdir({home:?} + "/sessions") == [os.path.basename(state)])
probe("registry", lambda: os.listdir({home:?} + "/workspaces"))
"#,
        outside = outside.path().display().to_string(),
        home = home.display().to_string(),
    );
    let out = run(&e, &code).await;
    assert_blocked(&out, "env", "Permission denied");
    assert_blocked(&out, "nested_env", "Permission denied");
    assert_ok(&out, "readme");
    assert_ok(&out, "write_ws");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("sub/out.txt")).unwrap(),
        "ok"
    );
    for name in ["write_outside", "write_home", "write_venv", "write_tmp"] {
        assert_blocked(&out, name, "Read-only file system");
    }
    // ipybox's data directory is hidden: a write lands in the sandbox's empty stand-in,
    // never in the real directory.
    assert!(
        !home.join("ipybox-sandbox-probe").exists(),
        "{}",
        line(&out, "write_data_dir")
    );
    assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
    assert_ok(&out, "tempfile");
    assert_ok(&out, "mpl");
    // What configures the gateway and the next kernels cannot be changed from a kernel, so
    // nothing a cell does survives reset().
    for name in ["kernelspec", "startup_file", "gateway_config", "owner_pid"] {
        assert_blocked(&out, name, "Read-only file system");
    }
    assert_ok(&out, "runtime_dir");
    // Other sessions' state and the MCP registry (server parameters) are hidden.
    assert_eq!(line(&out, "other_sessions"), "other_sessions: OK True");
    assert_blocked(&out, "registry", "FileNotFoundError");
    e.stop().await.unwrap();
    // Nothing of the kernel's own (temporary directories, caches) lands in the workspace.
    let mut entries: Vec<String> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(entries, [".env", "README.md", "mcptools", "sub"]);
}

#[tokio::test]
async fn a_custom_policy_replaces_the_default_and_can_allow_a_domain() {
    let ws = workspace();
    std::fs::write(ws.path().join(".env"), "VISIBLE=1\n").unwrap();
    std::fs::create_dir(ws.path().join("notes")).unwrap();
    std::fs::write(ws.path().join("notes/private.txt"), "private\n").unwrap();
    let allowed = http_server("hello from the allowed host");
    let other = http_server("should not be reachable");
    let policy_dir = workspace();
    let policy = policy_dir.path().join("policy.json");
    std::fs::write(
        &policy,
        serde_json::json!({
            "filesystem": {
                "denyRead": ["notes/private.txt"],
                "allowWrite": ["out"],
                "denyWrite": []
            },
            "network": {
                "allowedDomains": [format!("localhost:{allowed}")],
                "deniedDomains": []
            }
        })
        .to_string(),
    )
    .unwrap();
    std::fs::create_dir(ws.path().join("out")).unwrap();
    let e = sandboxed(ws.path(), Some(&policy)).await;
    let code = format!(
        r#"{PROBE}
import os, urllib.request
probe("private", lambda: open("notes/private.txt").read())
probe("env", lambda: open(".env").read())
probe("write_out", lambda: open("out/result.txt", "w").write("1"))
probe("write_root", lambda: open("root.txt", "w"))
# srt's NO_PROXY sends localhost direct (into the sandbox's own loopback); go through the proxy.
os.environ.pop("NO_PROXY", None); os.environ.pop("no_proxy", None)
probe("allowed", lambda: urllib.request.urlopen("http://localhost:{allowed}/", timeout=10).read().decode())
probe("other", lambda: urllib.request.urlopen("http://localhost:{other}/", timeout=10).read().decode())
probe("internet", lambda: urllib.request.urlopen("https://pypi.org/simple/", timeout=10).status)
"#
    );
    let out = run(&e, &code).await;
    assert_blocked(&out, "private", "Permission denied");
    assert!(
        line(&out, "env").contains("VISIBLE=1"),
        "the custom policy replaces the default, which hid .env: {out}"
    );
    assert_ok(&out, "write_out");
    assert_blocked(&out, "write_root", "Read-only file system");
    assert!(
        line(&out, "allowed").contains("hello from the allowed host"),
        "{out}"
    );
    assert_blocked(&out, "other", "403");
    assert_blocked(&out, "internet", "403");
    e.stop().await.unwrap();
}

fn fixture() -> ServerParams {
    ServerParams::from_json(&serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
    }))
    .unwrap()
}

async fn run_with_approval(
    e: &CodeExecutor,
    code: &str,
    approve: bool,
) -> (ipybox::Result<ipybox::CodeExecutionResult>, Vec<String>) {
    run_with(e, code, Some(Duration::from_secs(120)), |_| Some(approve)).await
}

#[tokio::test]
async fn mcp_tool_calls_work_from_the_sandbox_with_approval() {
    let ws = workspace();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .sandbox(true)
        .build();
    e.register_mcp_server("fx", &fixture()).await.unwrap();
    e.start().await.unwrap();
    let code =
        "from mcptools.fx.echo import Params, run\nprint(run(Params(text='from the sandbox')))";
    let (r, seen) = run_with_approval(&e, code, true).await;
    assert_eq!(r.unwrap().text.as_deref(), Some("from the sandbox"));
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].starts_with("fx.echo("), "{seen:?}");

    let code = "from mcptools.fx.echo import Params, run\nfrom mcptools._runtime import ApprovalRejected\ntry:\n    run(Params(text='no'))\nexcept ApprovalRejected as e:\n    print('rejected:', e)";
    let (r, seen) = run_with_approval(&e, code, false).await;
    let text = r.unwrap().text.unwrap_or_default();
    assert!(text.starts_with("rejected:"), "{text}");
    assert_eq!(seen.len(), 1);
    e.stop().await.unwrap();
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Processes whose command line holds `needle` and the path `arg`.
fn processes_with(needle: &str, arg: &Path) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline);
        if cmdline.contains(needle) && cmdline.contains(&*arg.to_string_lossy()) {
            out.push(pid);
        }
    }
    out
}

#[tokio::test]
async fn the_sandboxed_filesystem_server_reads_the_readme_but_not_env() {
    let ws = workspace();
    let ws_path = std::fs::canonicalize(ws.path()).unwrap();
    std::fs::write(ws_path.join("README.md"), "# the readme\n").unwrap();
    std::fs::write(ws_path.join(".env"), "TOKEN=do-not-leak\n").unwrap();
    let profile = repo_root().join("sandbox-profiles/mcp-server.json");
    let params = ServerParams::from_json(&serde_json::json!({
        "command": "srt",
        "args": [
            "--settings", profile,
            "npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "${WORKSPACE}"
        ],
    }))
    .unwrap();
    let e = CodeExecutor::builder()
        .working_dir(&ws_path)
        .sandbox(true)
        .mcp_connect_timeout(Duration::from_secs(120))
        .build();
    let generated = e.register_mcp_server("filesystem", &params).await.unwrap();
    assert!(
        generated.modules.contains(&"read_text_file".to_owned()),
        "{generated:?}"
    );
    e.start().await.unwrap();
    let list = "from mcptools.filesystem.list_directory import run, Params\nprint(run(Params(path='.')).content)";
    let (r, _) = run_with_approval(&e, list, true).await;
    let text = r.unwrap().text.unwrap_or_default();
    assert!(text.contains("README.md"), "{text}");

    let read = "from mcptools.filesystem.read_text_file import run, Params\nprint(run(Params(path='README.md')).content)";
    let (r, _) = run_with_approval(&e, read, true).await;
    assert_eq!(r.unwrap().text.as_deref(), Some("# the readme"));

    let read_env = "from mcptools.filesystem.read_text_file import run, Params\nprint(run(Params(path='.env')).content)";
    let (r, seen) = run_with_approval(&e, read_env, true).await;
    assert_eq!(seen.len(), 1, "the call was approved and made: {seen:?}");
    match r {
        Err(Error::CodeExecution { error, .. }) => {
            assert_eq!(error.name, "ToolError", "{error}");
            assert!(error.value.contains("EACCES"), "{error}");
            assert!(!error.value.contains("do-not-leak"), "{error}");
        }
        other => panic!("reading .env must fail in the server's sandbox: {other:?}"),
    }
    let servers = processes_with("srt/filesystem.json", &ws_path);
    assert!(!servers.is_empty(), "the server runs under srt");
    let pids: Vec<i32> = servers.iter().flat_map(|&p| tree(p)).collect();
    e.stop().await.unwrap();
    assert!(
        wait_for(Duration::from_secs(10), || pids.iter().all(|&p| !alive(p))),
        "sandboxed server processes left after stop(): {:?}",
        pids.iter().filter(|&&p| alive(p)).collect::<Vec<_>>()
    );
}

/// Names of the live processes among `pids`.
fn names(pids: &[i32]) -> Vec<String> {
    pids.iter()
        .filter(|&&p| alive(p))
        .map(|p| {
            let comm = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
            format!("{p} {}", comm.trim())
        })
        .collect()
}

/// The `srt` processes of this test process running in the workspace `ws` (other tests run
/// sandboxes of their own in this process).
fn srts_in(ws: &Path) -> Vec<i32> {
    children_of(std::process::id() as i32)
        .into_iter()
        .filter(|p| names(&[*p]).iter().any(|n| n.ends_with(" node")))
        .filter(|p| std::fs::read_link(format!("/proc/{p}/cwd")).ok().as_deref() == Some(ws))
        .collect()
}

/// Python processes (gateways and kernels) in the sandboxes of the workspace `ws`.
fn sandbox_pythons(ws: &Path) -> usize {
    srts_in(ws)
        .iter()
        .flat_map(|&s| names(&tree(s)))
        .filter(|n| n.ends_with("python"))
        .count()
}

fn children_of(pid: i32) -> Vec<i32> {
    tree(pid).into_iter().filter(|&p| p != pid).collect()
}

#[tokio::test]
async fn stop_leaves_no_sandbox_process_behind() {
    let ws = workspace();
    let e = sandboxed(ws.path(), None).await;
    run(&e, "x = 1").await;
    // Two sandboxes: the active one and the spare a reset will swap in, each with srt, its
    // socats, bwrap, a gateway and a kernel.
    let ws_path = std::fs::canonicalize(ws.path()).unwrap();
    // Waits without blocking: the spare sandbox starts on this (current-thread) runtime.
    let deadline = Instant::now() + Duration::from_secs(30);
    while sandbox_pythons(&ws_path) < 4 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        sandbox_pythons(&ws_path) >= 4,
        "two gateways and two kernels run: {:?}",
        srts_in(&ws_path)
            .iter()
            .map(|&s| names(&tree(s)))
            .collect::<Vec<_>>()
    );
    let mut pids: Vec<i32> = srts_in(&ws_path).into_iter().flat_map(tree).collect();
    let comms = names(&pids).join(" ");
    for expected in ["node", "bwrap", "python"] {
        assert!(comms.contains(expected), "{expected} in {comms}");
    }
    // The namespace helper is a child of this process.
    pids.extend(
        children_of(std::process::id() as i32)
            .into_iter()
            .filter(|p| names(&[*p]).iter().any(|n| n.ends_with("ipybox-netns"))),
    );
    e.stop().await.unwrap();
    assert!(
        wait_for(Duration::from_secs(5), || pids.iter().all(|&p| !alive(p))),
        "processes left after stop(): {:?}",
        names(&pids)
    );
}

#[test]
fn killing_the_host_leaves_no_sandbox_process_behind() {
    let ws = workspace();
    let (mut child, srt) = spawn_host(env!("CARGO_BIN_EXE_ipybox-test-host"), ws.path(), true);
    let host = child.id() as i32;
    assert!(
        wait_for(Duration::from_secs(30), || names(&tree(srt))
            .iter()
            .filter(|n| n.ends_with("python"))
            .count()
            >= 2),
        "gateway and kernel run: {:?}",
        names(&tree(srt))
    );
    let pids = children_of(host);
    let comms = names(&pids).join(" ");
    for expected in ["node", "bwrap", "python", "ipybox-netns"] {
        assert!(comms.contains(expected), "{expected} in {comms}");
    }
    // SAFETY: killing the child we spawned.
    unsafe {
        libc::kill(host, libc::SIGKILL);
    }
    child.wait().unwrap();
    assert!(
        wait_for(Duration::from_secs(10), || pids.iter().all(|&p| !alive(p))),
        "processes left after the host was killed: {:?}",
        names(&pids)
    );
}

#[tokio::test]
async fn misconfigurations_fail_clearly_and_never_run_unsandboxed() {
    let ws = workspace();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .sandbox(true)
        .gateway_url("http://127.0.0.1:9", None)
        .build();
    let err = e
        .start()
        .await
        .expect_err("a sandbox needs its own gateway");
    assert_eq!(err.code(), ErrorCode::InvalidConfig, "{err}");

    let bad = ws.path().join("bad.json");
    std::fs::write(&bad, "{\"filesystem\": [}").unwrap();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .sandbox_config(&bad)
        .build();
    let err = e.start().await.expect_err("invalid policy");
    assert_eq!(err.code(), ErrorCode::SandboxUnavailable, "{err}");
    assert!(err.to_string().contains("not valid JSON"), "{err}");
    assert!(!e.is_running().await);

    // srt itself cannot start its sandbox (bubblewrap replaced by a program that fails).
    let broken = ws.path().join("broken.json");
    std::fs::write(
        &broken,
        serde_json::json!({
            "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []},
            "network": {"allowedDomains": [], "deniedDomains": []},
            "bwrapPath": "/bin/false"
        })
        .to_string(),
    )
    .unwrap();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .sandbox_config(&broken)
        .build();
    let err = e.start().await.expect_err("srt cannot start a sandbox");
    assert_eq!(err.code(), ErrorCode::SandboxUnavailable, "{err}");
    assert!(err.to_string().contains("srt echo ok"), "{err}");
    assert!(!e.is_running().await);
}

#[test]
fn the_cli_says_how_to_install_a_missing_sandbox_piece() {
    let ws = workspace();
    let out = Command::new(ipybox_bin())
        .args(["exec", "--sandbox", "print('must not run')"])
        .current_dir(ws.path())
        .env("IPYBOX_SRT", "/nonexistent/srt")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("ipybox setup --sandbox"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("must not run"));

    // srt present, but bubblewrap & co. not on PATH.
    let home = ipybox::setup::ipybox_home().unwrap();
    let srt = ipybox::setup::locate_srt(None, &home).expect("srt is installed for the tests");
    let out = Command::new(ipybox_bin())
        .args(["exec", "--sandbox", "print('must not run')"])
        .current_dir(ws.path())
        .env("IPYBOX_SRT", &srt.program)
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("bwrap") && stderr.contains("apt-get install bubblewrap"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("must not run"));

    // A policy file that does not exist.
    let out = Command::new(ipybox_bin())
        .args(["exec", "--sandbox-config", "missing.json", "print(1)"])
        .current_dir(ws.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("missing.json"), "{stderr}");
}

#[test]
fn the_cli_runs_sandboxed_code() {
    let ws = workspace();
    std::fs::write(ws.path().join(".env"), "K=v\n").unwrap();
    let out = Command::new(ipybox_bin())
        .args([
            "exec",
            "--sandbox",
            "import socket\nprint(open('README', 'w').write('hi'))\ntry:\n    open('.env').read()\nexcept PermissionError:\n    print('env hidden')",
        ])
        .current_dir(ws.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim(), "2\nenv hidden");
}

#[tokio::test]
async fn kernel_code_cannot_steer_what_ipybox_does_on_the_host() {
    let ws = workspace();
    let ws_path = std::fs::canonicalize(ws.path()).unwrap();
    let outside = workspace();
    let params = ServerParams::from_json(&serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
        "env": {"MARK": "${HOME}"},
    }))
    .unwrap();
    let e = CodeExecutor::builder()
        .working_dir(&ws_path)
        .sandbox(true)
        .build();
    e.register_mcp_server("fx", &params).await.unwrap();
    e.start().await.unwrap();
    // 1. A planted .env must not change the ${VAR}s of servers ipybox starts on the host.
    // 2. A planted link must not make ipybox write images outside the images directory.
    let code = format!(
        r#"import os
try:
    open(".env", "w").write("HOME=/planted-by-the-kernel\n")
except OSError:
    pass  # refused outright since .env is write-protected; the snapshot is checked anyway
os.symlink({outside:?}, "images")
from mcptools.fx.env import Params, run
print("MARK=" + run(Params(name="MARK")))
from IPython.display import Image, display
import base64
png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
display(Image(data=png, format="png"))
"#,
        outside = outside.path().display().to_string(),
    );
    let (r, _) = run_with_approval(&e, &code, true).await;
    let r = r.unwrap();
    let text = r.text.unwrap_or_default();
    let home = std::env::var("HOME").unwrap();
    assert!(text.contains(&format!("MARK={home}")), "{text}");
    assert!(!text.contains("planted"), "{text}");
    assert!(text.contains("output not saved"), "{text}");
    assert!(r.images.is_empty(), "{:?}", r.images);
    assert!(
        std::fs::read_dir(outside.path()).unwrap().next().is_none(),
        "nothing was written through the link"
    );
    e.stop().await.unwrap();
}

/// `(pid, start time)` of each live process in `pids`, to recognise them later (pids are
/// reused).
fn identities(pids: &[i32]) -> Vec<(i32, String)> {
    pids.iter()
        .filter_map(|&p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            let start = stat[stat.rfind(')')? + 1..].split_whitespace().nth(19)?;
            Some((p, start.to_owned()))
        })
        .collect()
}

/// `ipybox exec --sandbox` returns only once every process of its sandbox is gone, zombies
/// included (an init that reaps slowly left them for two seconds).
#[test]
fn the_cli_returns_after_its_sandbox_is_gone() {
    let ws = workspace();
    let mut child = Command::new(ipybox_bin())
        .args(["exec", "--sandbox", "--workspace"])
        .arg(ws.path())
        .arg("import time\nprint('up', flush=True)\ntime.sleep(3)")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "up");
    let me = child.id() as i32;
    let seen = identities(
        &tree(me)
            .into_iter()
            .filter(|&p| p != me)
            .collect::<Vec<_>>(),
    );
    assert!(seen.len() >= 4, "srt, bwrap, gateway, kernel: {seen:?}");
    assert!(child.wait().unwrap().success());
    let left: Vec<_> = identities(&seen.iter().map(|(p, _)| *p).collect::<Vec<_>>())
        .into_iter()
        .filter(|id| seen.contains(id))
        .collect();
    assert!(
        left.is_empty(),
        "processes (or zombies) left when exec returned: {left:?}"
    );
}

/// The desktop link (where `ipybox mcp --approval desktop` asks the app open on the
/// workspace): sandboxed code can neither read its secret nor open a Unix socket to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandboxed_code_cannot_reach_the_desktop_link() {
    let ws = workspace();
    let app = CodeExecutor::builder().working_dir(ws.path()).build();
    let link = ipybox::LinkServer::serve(ws.path(), app).await.unwrap();
    let (secret, socket) = (link.paths().secret.clone(), link.paths().socket.clone());
    assert!(secret.exists() && socket.exists());
    let e = sandboxed(ws.path(), None).await;
    let code = format!(
        "{PROBE}\nimport socket\nprobe('secret', lambda: open({:?}).read())\n\
         def connect():\n    s = socket.socket(socket.AF_UNIX)\n    s.connect({:?})\n    return s.recv(10)\n\
         probe('socket', connect)",
        secret.to_str().unwrap(),
        socket.to_str().unwrap()
    );
    let out = run(&e, &code).await;
    assert_blocked(&out, "secret", "Error");
    assert_blocked(&out, "socket", "Operation not permitted");
    e.stop().await.unwrap();
}

/// The workspace's audit log and approval rules live in its state directory in ipybox's data
/// directory, which the sandbox hides (`denyRead` on `workspaces/`: an empty directory in its
/// place) and leaves read-only (only the workspace is writable): sandboxed code can neither
/// append to, overwrite, replace, delete nor symlink over either file, nor move their
/// directory away, and files it plants where they would be are not the host's. Guards both:
/// were the host's state directory writable from the sandbox, the probes would work and the
/// host's files would change.
#[tokio::test]
async fn sandboxed_code_cannot_touch_the_audit_log_or_the_rules() {
    let ws = workspace();
    let state = ipybox::WorkspaceState::of(ws.path()).unwrap();
    state.create().unwrap();
    let log = state.audit_log().path().to_owned();
    let rules = state.rules_file();
    let (log_text, rules_text) = (
        "{\"server\":\"fx\",\"tool\":\"write_file\",\"decision\":\"rejected\"}\n",
        r#"{"version": 1, "rules": [{"server": "fx", "tool": "*", "decision": "reject"}]}"#,
    );
    std::fs::write(&log, log_text).unwrap();
    std::fs::write(&rules, rules_text).unwrap();
    let e = sandboxed(ws.path(), None).await;
    let code = format!(
        r#"{PROBE}
import os, pathlib
allow_all = '{{"version": 1, "rules": [{{"server": "*", "tool": "*", "decision": "allow"}}]}}'
def append(p):
    with open(p, "a") as f:
        f.write('{{"decision": "approved", "forged": true}}\n')
def overwrite(p):
    with open(p, "w") as f:
        f.write(allow_all)
def replace(p):
    forged = pathlib.Path("forged.json")
    forged.write_text(allow_all)
    os.replace(forged, p)
def delete(p):
    os.remove(p)
def symlink_over(p):
    pathlib.Path("forged.json").write_text(allow_all)
    os.symlink(os.path.abspath("forged.json"), p + ".new")
    os.replace(p + ".new", p)
for name, p in [("log", {log:?}), ("rules", {rules:?})]:
    for how in [append, overwrite, replace, delete, symlink_over]:
        probe(f"{{how.__name__}}_{{name}}", lambda: how(p))
probe("move_state_dir", lambda: os.rename({dir:?}, {dir:?} + ".moved"))
# What the sandbox shows in place of the hidden directory may take new files; they are not
# the host's.
def plant():
    os.makedirs({dir:?}, exist_ok=True)
    overwrite({rules:?})
    append({log:?})
probe("plant", plant)
"#,
        log = log.display().to_string(),
        rules = rules.display().to_string(),
        dir = state.dir().display().to_string(),
    );
    let out = run(&e, &code).await;
    for name in ["log", "rules"] {
        for how in ["append", "overwrite", "replace", "delete", "symlink_over"] {
            assert_blocked(&out, &format!("{how}_{name}"), "Error");
        }
    }
    assert_blocked(&out, "move_state_dir", "Error");
    e.stop().await.unwrap();
    for (path, text) in [(&log, log_text), (&rules, rules_text)] {
        assert!(
            std::fs::symlink_metadata(path).unwrap().is_file(),
            "{} is still a file of its own",
            path.display()
        );
        assert_eq!(
            std::fs::read_to_string(path).unwrap(),
            text,
            "{} is unchanged",
            path.display()
        );
    }
    let planted: Vec<String> = std::fs::read_dir(state.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".new"))
        .collect();
    assert!(
        planted.is_empty(),
        "nothing was planted beside them: {planted:?}"
    );
    std::fs::remove_dir_all(state.dir()).unwrap();
}

/// Guards, for a sandboxed kernel as for any: only the approval handler decides a call, never
/// a message from the kernel, and an answer belongs to its call (a reused id runs nothing).
/// See `tool_calls.rs`; here the kernel's channel goes through srt's sandbox.
#[tokio::test]
async fn sandboxed_kernel_code_cannot_decide_its_own_calls() {
    let ws = workspace();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .sandbox(true)
        .approval_timeout(Duration::from_secs(2))
        .build();
    e.register_mcp_server("fx", &fixture()).await.unwrap();
    e.start().await.unwrap();
    let code = ipybox_tests::self_approval_attempts(ws.path());
    let (r, seen) = run_with(&e, &code, Some(Duration::from_secs(120)), |r| {
        (r.tool_name() == "echo").then_some(true)
    })
    .await;
    assert_eq!(
        r.unwrap().text.as_deref(),
        Some(ipybox_tests::SELF_APPROVAL_REFUSED),
        "no call was decided by the kernel"
    );
    assert_eq!(seen.len(), 3, "{seen:?}");
    let written: Vec<_> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("-marker"))
        .collect();
    assert!(written.is_empty(), "nothing was written: {written:?}");
    e.stop().await.unwrap();
}
