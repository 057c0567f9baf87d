//! The workspace is untrusted: kernel code can write there, so nothing ipybox does on the
//! host may import, execute or read as configuration a file kernel code left behind — in the
//! same session or a later one. Each test plants what a red team planted and checks, with a
//! marker file the planted code would write (outside the workspace where the planted code
//! runs on the host), that it took no effect.
//!
//! Run as root (CI) and as an unprivileged user (`scripts/test.sh` does both).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use ipybox::{CodeExecutor, Error, ServerParams};
use ipybox_tests::mcp_client::{call, stdio_client, text};
use ipybox_tests::{run_with, workspace};

fn canonical(dir: &tempfile::TempDir) -> PathBuf {
    std::fs::canonicalize(dir.path()).unwrap()
}

/// A directory outside the workspace that kernel code cannot write when sandboxed.
fn outside() -> tempfile::TempDir {
    workspace()
}

async fn executor(ws: &Path, sandbox: bool) -> CodeExecutor {
    let e = CodeExecutor::builder()
        .working_dir(ws)
        .sandbox(sandbox)
        .build();
    e.start().await.unwrap_or_else(|err| panic!("start: {err}"));
    e
}

async fn run(e: &CodeExecutor, code: &str) -> String {
    e.execute(code, Some(Duration::from_secs(60)))
        .await
        .unwrap_or_else(|err| panic!("{code}\nfailed: {err}"))
        .text
        .unwrap_or_default()
}

/// Python that writes `marker` when it runs.
fn mark(marker: &Path) -> String {
    format!(
        "open({:?}, 'w').write('ran')\n",
        marker.display().to_string()
    )
}

fn assert_absent(marker: &Path, what: &str) {
    assert!(
        !marker.exists(),
        "{what}: the planted code ran ({} exists)",
        marker.display()
    );
}

fn servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("servers")
}

/// `pip/__init__.py` in the workspace must not run when ipybox runs pip for
/// `install_package` (Python puts the working directory first on the module path for `-m`).
#[tokio::test]
async fn a_planted_pip_does_not_run_when_a_package_is_installed() {
    let ws = workspace();
    let out = outside();
    let marker = out.path().join("pip-ran");
    let c = stdio_client(ws.path(), &[], &["--sandbox"]).await;
    let plant = format!(
        "import os\nos.makedirs('pip', exist_ok=True)\nopen('pip/__init__.py', 'w').write({:?})\nprint('planted')",
        mark(&marker)
    );
    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": plant}),
    )
    .await;
    assert_eq!(text(&r), "planted", "{r:?}");
    let r = call(
        &c,
        "install_package",
        serde_json::json!({"package_name": "six==1.17.0"}),
    )
    .await;
    assert_absent(&marker, "install_package");
    assert_ne!(r.is_error, Some(true), "pip still works: {}", text(&r));
    c.cancel().await.unwrap();
}

/// A stdio MCP server started as `python -m MODULE` must not run a `MODULE.py` the kernel
/// wrote into the workspace.
#[tokio::test]
async fn a_planted_module_does_not_replace_a_python_m_server() {
    let ws = workspace();
    let out = outside();
    let marker = out.path().join("module-ran");
    let params = ServerParams::from_json(&serde_json::json!({
        "command": servers_dir().join(".venv/bin/python"),
        "args": ["-m", "echo_server"],
        "env": {"PYTHONPATH": servers_dir()},
    }))
    .unwrap();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .sandbox(true)
        .build();
    e.register_mcp_server("echo", &params).await.unwrap();
    e.start().await.unwrap();
    let code = format!(
        "open('echo_server.py', 'w').write({:?})\nfrom mcptools.echo.echo import Params, run\nprint(run(Params(text='real server')))",
        mark(&marker)
    );
    let (r, _) = run_with(&e, &code, Some(Duration::from_secs(60)), |_| Some(true)).await;
    assert_absent(&marker, "python -m server start");
    assert_eq!(r.unwrap().text.as_deref(), Some("real server"));
    e.stop().await.unwrap();
}

/// `npx -y PACKAGE` (the README's example) must not run a `node_modules/PACKAGE` the kernel
/// wrote into the workspace.
#[tokio::test]
async fn planted_node_modules_do_not_replace_an_npx_server() {
    let ws = workspace();
    let out = outside();
    let marker = out.path().join("npx-ran");
    let package = "@modelcontextprotocol/server-everything";
    let params = ServerParams::from_json(&serde_json::json!({
        "command": "npx",
        "args": ["-y", format!("{package}@2026.8.31")],
    }))
    .unwrap();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .sandbox(true)
        .mcp_connect_timeout(Duration::from_secs(120))
        .build();
    e.register_mcp_server("everything", &params).await.unwrap();
    e.start().await.unwrap();
    let evil = format!(
        "require('fs').writeFileSync({:?}, 'ran'); process.exit(1);",
        marker.display().to_string()
    );
    let code = format!(
        r##"import os, json
pkg = "node_modules/{package}"
os.makedirs(pkg, exist_ok=True)
os.makedirs("node_modules/.bin", exist_ok=True)
json.dump({{"name": "{package}", "version": "2026.8.31", "bin": {{"mcp-server-everything": "evil.js"}}}}, open(pkg + "/package.json", "w"))
open(pkg + "/evil.js", "w").write("#!/usr/bin/env node\n" + {evil:?})
os.chmod(pkg + "/evil.js", 0o755)
os.symlink("../{package}/evil.js", "node_modules/.bin/mcp-server-everything")
json.dump({{"name": "ws", "version": "1.0.0", "dependencies": {{"{package}": "2026.8.31"}}}}, open("package.json", "w"))
from mcptools.everything.echo import Params, run
print(run(Params(message="hi")))
"##
    );
    let (r, _) = run_with(&e, &code, Some(Duration::from_secs(120)), |_| Some(true)).await;
    assert_absent(&marker, "npx server start");
    assert_eq!(r.unwrap().text.as_deref(), Some("Echo: hi"));
    e.stop().await.unwrap();
}

/// `srt --settings policy.json …` with a relative policy: the policy is read at
/// registration; kernel code that rewrites the workspace's file does not widen the server's
/// sandbox.
#[tokio::test]
async fn a_relative_srt_policy_is_fixed_at_registration() {
    let ws = workspace();
    let ws_path = canonical(&ws);
    let out = outside();
    let target = out.path().join("written-by-server");
    let strict = serde_json::json!({
        "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
        "network": {"allowedDomains": [], "deniedDomains": []},
    });
    std::fs::write(ws_path.join("policy.json"), strict.to_string()).unwrap();
    let params = ServerParams::from_json(&serde_json::json!({
        "command": "srt",
        "args": ["--settings", "policy.json", env!("CARGO_BIN_EXE_ipybox-fixture-mcp"), "stdio"],
    }))
    .unwrap();
    let e = CodeExecutor::builder()
        .working_dir(&ws_path)
        .sandbox(true)
        .build();
    e.register_mcp_server("fx", &params).await.unwrap();
    e.start().await.unwrap();
    let wide = serde_json::json!({
        "filesystem": {"denyRead": [], "allowWrite": [out.path()], "denyWrite": []},
        "network": {"allowedDomains": [], "deniedDomains": []},
    });
    let code = format!(
        "open('policy.json', 'w').write({:?})\nfrom mcptools.fx.write_file import Params, run\nprint(run(Params(path={:?}, text='x')))",
        wide.to_string(),
        target.display().to_string()
    );
    let (r, _) = run_with(&e, &code, Some(Duration::from_secs(60)), |_| Some(true)).await;
    assert_absent(&target, "the server's sandbox policy");
    match r {
        Err(Error::CodeExecution { error, .. }) => {
            assert_eq!(error.name, "ToolError", "{error}");
        }
        other => panic!("writing outside the registered policy must fail: {other:?}"),
    }
    e.stop().await.unwrap();
}

/// A sandboxed kernel cannot create (or change) the workspace's `.env`, and what a `${VAR}`
/// resolved to is shown in the approval request, secrets masked.
#[tokio::test]
async fn env_files_cannot_be_planted_and_approvals_show_resolved_values() {
    let ws = workspace();
    let ws_path = canonical(&ws);
    let sub = ws_path.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let e = executor(&ws_path, true).await;
    let out = run(
        &e,
        r#"
for path in (".env", "sub/.env", ".env.local"):
    try:
        open(path, "w").write("FX_URL=http://attacker.example/\n")
        print(path, "written")
    except OSError as err:
        print(path, "refused", type(err).__name__)
"#,
    )
    .await;
    assert!(out.contains(".env refused"), "{out}");
    // While the sandbox runs, srt keeps an empty file there as the mount point of its guard.
    assert_eq!(
        std::fs::read_to_string(ws_path.join(".env")).unwrap_or_default(),
        "",
        "a sandboxed kernel wrote .env: {out}"
    );
    e.stop().await.unwrap();
    assert!(
        !ws_path.join(".env").exists(),
        "no .env is left behind: {out}"
    );

    // Values the user put in .env are resolved in the approval request; secrets masked.
    std::fs::write(
        ws_path.join(".env"),
        "FX_MODE=plain-value\nFX_API_KEY=sk-very-secret\n",
    )
    .unwrap();
    let params = ServerParams::from_json(&serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
        "env": {"MODE": "${FX_MODE}", "API_KEY": "${FX_API_KEY}"},
    }))
    .unwrap();
    let e = CodeExecutor::builder()
        .working_dir(&ws_path)
        .sandbox(true)
        .build();
    e.register_mcp_server("fx", &params).await.unwrap();
    e.start().await.unwrap();
    let shown = std::sync::Mutex::new(String::new());
    let (r, _) = run_with(
        &e,
        "from mcptools.fx.echo import Params, run\nprint(run(Params(text='ok')))",
        Some(Duration::from_secs(60)),
        |req| {
            *shown.lock().unwrap() = req.server().to_owned();
            Some(true)
        },
    )
    .await;
    assert_eq!(r.unwrap().text.as_deref(), Some("ok"));
    let shown = shown.into_inner().unwrap();
    assert!(shown.contains("MODE=plain-value"), "resolved: {shown}");
    assert!(!shown.contains("sk-very-secret"), "masked: {shown}");
    e.stop().await.unwrap();
}

/// A `ctypes.py` in the workspace must not run when later kernels start (the kernel
/// launcher imports ctypes), sandboxed or not.
async fn planted_ctypes(sandbox: bool) {
    let ws = workspace();
    let ws_path = canonical(&ws);
    let out = outside();
    // A sandboxed kernel can write only in the workspace: its marker goes there.
    let marker = if sandbox {
        ws_path.join("ctypes-ran")
    } else {
        out.path().join("ctypes-ran")
    };
    let e = executor(&ws_path, sandbox).await;
    run(
        &e,
        &format!("open('ctypes.py', 'w').write({:?})", mark(&marker)),
    )
    .await;
    e.reset().await.unwrap();
    let origin = run(&e, "import ctypes\nprint(ctypes.__file__)").await;
    e.stop().await.unwrap();
    let e = executor(&ws_path, sandbox).await;
    run(&e, "print(1)").await;
    e.stop().await.unwrap();
    assert_absent(&marker, "kernel start");
    assert!(
        !origin.starts_with(&ws_path.display().to_string()),
        "ctypes came from the workspace: {origin}"
    );
}

#[tokio::test]
async fn a_planted_ctypes_does_not_run_in_later_kernels() {
    planted_ctypes(false).await;
}

#[tokio::test]
async fn a_planted_ctypes_does_not_run_in_later_sandboxed_kernels() {
    planted_ctypes(true).await;
}

/// A `kernel_gateway.py` left by a sandboxed kernel must not run on the host when a later
/// session (here an unsandboxed one) starts the gateway.
#[tokio::test]
async fn a_planted_kernel_gateway_does_not_run_on_the_host() {
    let ws = workspace();
    let ws_path = canonical(&ws);
    let out = outside();
    let marker = out.path().join("gateway-ran");
    let e = executor(&ws_path, true).await;
    run(
        &e,
        &format!("open('kernel_gateway.py', 'w').write({:?})", mark(&marker)),
    )
    .await;
    e.stop().await.unwrap();
    let e = CodeExecutor::builder().working_dir(&ws_path).build();
    let started = e.start().await;
    assert_absent(&marker, "the gateway start");
    started.unwrap();
    assert_eq!(run(&e, "print(6 * 7)").await, "42");
    e.stop().await.unwrap();
}

/// The sandboxed kernel holds no capabilities (also when ipybox runs as root), so it cannot
/// bind-mount a workspace folder over the IPython startup directory; and nothing it planted
/// runs after reset().
#[tokio::test]
async fn the_sandboxed_kernel_holds_no_capabilities_and_reset_is_clean() {
    let ws = workspace();
    let ws_path = canonical(&ws);
    let marker = ws_path.join("startup-ran");
    let e = executor(&ws_path, true).await;
    let out = run(
        &e,
        &format!(
            r#"
import ctypes, os
status = dict(l.split(":\t", 1) for l in open("/proc/self/status").read().splitlines() if ":\t" in l)
print("CapEff", status["CapEff"].strip())
print("CapPrm", status["CapPrm"].strip())
os.makedirs("startup", exist_ok=True)
open("startup/00-planted.py", "w").write({planted:?})
target = os.path.join(os.environ["IPYTHONDIR"], "profile_default", "startup")
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.mount(os.path.abspath("startup").encode(), target.encode(), None, 4096, None)  # MS_BIND
print("mount", rc, os.strerror(ctypes.get_errno()) if rc else "ok")
"#,
            planted = mark(&marker)
        ),
    )
    .await;
    assert!(out.contains("CapEff 0000000000000000"), "{out}");
    assert!(out.contains("CapPrm 0000000000000000"), "{out}");
    assert!(out.contains("mount -1"), "the bind mount must fail: {out}");
    e.reset().await.unwrap();
    run(&e, "print(1)").await;
    assert_absent(&marker, "a startup file after reset()");
    e.stop().await.unwrap();
}

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// `ipybox mcp --sandbox` sends the images the code displayed; swapping a saved image for a
/// link to a secret must not make ipybox send the secret.
#[tokio::test]
async fn images_are_sent_as_saved_not_reread_through_a_link() {
    let ws = workspace();
    let out = outside();
    let secret = out.path().join("secret.txt");
    std::fs::write(&secret, "TOPSECRET").unwrap();
    let c = stdio_client(ws.path(), &[], &["--sandbox"]).await;
    let code = format!(
        r#"import base64, os, time
from IPython.display import Image, display
display(Image(data=base64.b64decode("{PNG}"), format="png"))
for _ in range(100):
    names = os.listdir("images") if os.path.isdir("images") else []
    if names:
        break
    time.sleep(0.05)
for name in names:
    os.remove("images/" + name)
    os.symlink({secret:?}, "images/" + name)
print("swapped", len(names))
"#,
        secret = secret.display().to_string()
    );
    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({"code": code}),
    )
    .await;
    assert!(text(&r).contains("swapped 1"), "{}", text(&r));
    let content = serde_json::to_value(&r.content).unwrap();
    let images: Vec<Vec<u8>> = content
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "image")
        .map(|b| {
            base64::engine::general_purpose::STANDARD
                .decode(b["data"].as_str().unwrap())
                .unwrap()
        })
        .collect();
    assert_eq!(images.len(), 1, "{content}");
    assert!(
        images[0].starts_with(b"\x89PNG"),
        "the image sent is the one displayed, not what a link points to: {:?}",
        String::from_utf8_lossy(&images[0])
    );
    c.cancel().await.unwrap();
}

/// An `images` link planted by one session must not redirect the host's image writes in
/// the next.
#[tokio::test]
async fn an_images_link_from_an_earlier_session_is_not_followed() {
    let ws = workspace();
    let ws_path = canonical(&ws);
    let out = outside();
    let e = executor(&ws_path, true).await;
    run(
        &e,
        &format!(
            "import os\nos.symlink({:?}, 'images')",
            out.path().display().to_string()
        ),
    )
    .await;
    e.stop().await.unwrap();
    let e = executor(&ws_path, false).await;
    let r = e
        .execute(
            &format!(
                "import base64\nfrom IPython.display import Image, display\ndisplay(Image(data=base64.b64decode('{PNG}'), format='png'))"
            ),
            None,
        )
        .await
        .unwrap();
    e.stop().await.unwrap();
    assert!(
        std::fs::read_dir(out.path()).unwrap().next().is_none(),
        "an image was written through the planted link: {r:?}"
    );
    assert!(r.images.is_empty(), "{r:?}");
    assert!(
        r.text.as_deref().unwrap_or("").contains("not saved"),
        "the cell says the image was not saved: {r:?}"
    );
}

/// Nothing the previous kernel started survives reset() in a sandbox: a process it left
/// behind, which drives every kernel whose connection file it can read, does not reach the
/// kernel after the reset.
#[tokio::test]
async fn a_process_left_by_a_sandboxed_kernel_does_not_reach_the_next_one() {
    let ws = workspace();
    let ws_path = canonical(&ws);
    let e = executor(&ws_path, true).await;
    run(
        &e,
        r#"
import subprocess, sys
daemon = '''
import glob, os, time
from jupyter_client import BlockingKernelClient
seen = set()
while True:
    for f in glob.glob(os.environ["JUPYTER_RUNTIME_DIR"] + "/kernel-*.json"):
        if f not in seen:
            seen.add(f)
            try:
                c = BlockingKernelClient(connection_file=f)
                c.load_connection_file()
                c.start_channels()
                c.execute("pwned = True")
            except Exception:
                pass
    time.sleep(0.05)
'''
subprocess.Popen([sys.executable, "-c", daemon], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
"#,
    )
    .await;
    // The daemon reaches the kernel it was started from: the attack works where it can.
    let mut reached = false;
    for _ in 0..100 {
        if run(&e, "print('pwned' in globals())").await == "True" {
            reached = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(reached, "the daemon drives the kernel that started it");
    e.reset().await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        run(&e, "print('pwned' in globals())").await,
        "False",
        "a process of the previous kernel reached the kernel after reset()"
    );
    e.stop().await.unwrap();
}

/// A policy that lets sandboxed code write `dir` (outside the workspace) and reach nothing.
fn permissive_policy(dir: &Path) -> String {
    serde_json::json!({
        "filesystem": {"denyRead": [], "allowWrite": [".", dir], "denyWrite": []},
        "network": {"allowedDomains": [], "deniedDomains": []}
    })
    .to_string()
}

/// `ipybox exec --sandbox-config workspace` with `code` in `ws`: its exit status and stderr.
fn exec_under_workspace_policy(ws: &Path, code: &str) -> (bool, String) {
    let out = std::process::Command::new(ipybox_tests::ipybox_bin())
        .args(["exec", "--workspace"])
        .arg(ws)
        .args(["--sandbox-config", "workspace", "--timeout", "60", code])
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The workspace's `sandbox-config.json` chooses the sandbox of later sessions, so neither
/// sandboxed code nor anyone who wrote the workspace may choose it: sandboxed code cannot
/// create it (whatever policy is in force), and a file nobody accepted on this machine — a
/// cloned project's, one written by an unsandboxed kernel, or a link — is not run under.
#[tokio::test]
async fn a_planted_workspace_policy_does_not_choose_the_next_sandbox() {
    let ws = workspace();
    let ws_path = canonical(&ws);
    let out = outside();
    let out_path = canonical(&out);
    let marker = out_path.join("escaped");

    // Sandboxed under ipybox's default policy, the kernel cannot create the file.
    let e = executor(&ws_path, true).await;
    let said = run(
        &e,
        &format!(
            "try:\n    open('sandbox-config.json', 'w').write({:?})\n    print('written')\nexcept OSError:\n    print('refused')\n",
            permissive_policy(&out_path)
        ),
    )
    .await;
    e.stop().await.unwrap();
    assert_eq!(
        said, "refused",
        "a sandboxed kernel planted the next policy"
    );
    assert!(
        std::fs::read(ws_path.join("sandbox-config.json")).map_or(true, |b| b.is_empty()),
        "no policy was left behind"
    );

    // Planted anyway (a cloned project, an unsandboxed kernel): not used unseen.
    std::fs::write(
        ws_path.join("sandbox-config.json"),
        permissive_policy(&out_path),
    )
    .unwrap();
    let (ok, stderr) = exec_under_workspace_policy(&ws_path, &mark(&marker));
    assert!(!ok, "ran under a policy nobody accepted");
    assert!(
        stderr.contains("sandbox-config.json") && stderr.contains("ipybox sandbox accept"),
        "the error names the file and how to accept it: {stderr}"
    );
    assert_absent(&marker, "an unaccepted workspace policy");
    // The library refuses it too, whoever builds the session.
    let e = CodeExecutor::builder()
        .working_dir(&ws_path)
        .sandbox_options(Some(ipybox::SandboxOptions {
            policy: Some(ws_path.join("sandbox-config.json")),
            srt: None,
        }))
        .build();
    let err = e.start().await.expect_err("an unaccepted policy");
    assert!(err.to_string().contains("ipybox sandbox accept"), "{err}");

    // Accepted by the person (as printed), it is the policy in force.
    let accepted = std::process::Command::new(ipybox_tests::ipybox_bin())
        .args(["sandbox", "accept", "--yes", "--workspace"])
        .arg(&ws_path)
        .output()
        .unwrap();
    assert!(accepted.status.success(), "{accepted:?}");
    assert!(String::from_utf8_lossy(&accepted.stdout).contains(&out_path.display().to_string()));
    let (ok, stderr) = exec_under_workspace_policy(&ws_path, &mark(&marker));
    assert!(ok, "{stderr}");
    assert!(marker.exists(), "the accepted policy is in force");
    std::fs::remove_file(&marker).unwrap();

    // Changed after it was accepted: not used until accepted again.
    std::fs::write(
        ws_path.join("sandbox-config.json"),
        permissive_policy(&out_path).replace(
            "\"allowedDomains\":[]",
            "\"allowedDomains\":[\"*.example.org\"]",
        ),
    )
    .unwrap();
    let (ok, stderr) = exec_under_workspace_policy(&ws_path, &mark(&marker));
    assert!(!ok && stderr.contains("changed since"), "{stderr}");
    assert_absent(&marker, "a changed workspace policy");

    // A link to a policy elsewhere is refused, whatever it points to.
    let elsewhere = out_path.join("policy.json");
    std::fs::write(&elsewhere, permissive_policy(&out_path)).unwrap();
    std::fs::remove_file(ws_path.join("sandbox-config.json")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, ws_path.join("sandbox-config.json")).unwrap();
    let (ok, stderr) = exec_under_workspace_policy(&ws_path, &mark(&marker));
    assert!(!ok && stderr.contains("is a link"), "{stderr}");
    assert_absent(&marker, "a linked workspace policy");
}
