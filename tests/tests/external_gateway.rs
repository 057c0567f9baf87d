//! Using a Jupyter Server (or Kernel Gateway) that is already running, from the library and
//! from `ipybox exec --gateway-url`.

#![allow(clippy::unwrap_used)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ipybox::CodeExecutor;
use ipybox_tests::{ipybox_bin, python, wait_for, workspace};

struct Server {
    child: Child,
    url: String,
    token: String,
    _dirs: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn jupyter_server(root: &std::path::Path) -> Server {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let token = "test-token-123".to_owned();
    let dirs = tempfile::tempdir().unwrap();
    let child = Command::new(python())
        .args([
            "-m",
            "jupyter_server",
            "--ServerApp.ip=127.0.0.1",
            "--ServerApp.open_browser=False",
            "--allow-root",
        ])
        .arg(format!("--ServerApp.port={port}"))
        .arg(format!("--IdentityProvider.token={token}"))
        .arg(format!("--ServerApp.root_dir={}", root.display()))
        .env("JUPYTER_CONFIG_DIR", dirs.path().join("config"))
        .env("JUPYTER_DATA_DIR", dirs.path().join("data"))
        .env("JUPYTER_RUNTIME_DIR", dirs.path().join("runtime"))
        .env("JUPYTER_PLATFORM_DIRS", "1")
        .current_dir(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    assert!(
        wait_for(Duration::from_secs(60), || std::net::TcpStream::connect((
            "127.0.0.1",
            port
        ))
        .is_ok()),
        "jupyter server did not start"
    );
    Server {
        child,
        url,
        token,
        _dirs: dirs,
    }
}

#[tokio::test]
async fn executes_on_a_running_jupyter_server() {
    let ws = workspace();
    let server = jupyter_server(ws.path());
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .kernel_env([("FROM_IPYBOX", "yes")])
        .gateway_url(&server.url, Some(server.token.clone()))
        .build();
    e.start().await.unwrap();
    assert_eq!(
        e.gateway_pid().await,
        None,
        "ipybox started no gateway of its own"
    );
    e.execute("x = 2", None).await.unwrap();
    let r = e
        .execute(
            "import os; print(x * 21, os.environ.get('FROM_IPYBOX'), os.getcwd())",
            None,
        )
        .await
        .unwrap();
    let cwd = std::fs::canonicalize(ws.path()).unwrap();
    assert_eq!(r.text.unwrap(), format!("42 yes {}", cwd.display()));
    e.reset().await.unwrap();
    assert!(
        e.execute("x", None).await.is_err(),
        "reset works on an external server too"
    );
    e.stop().await.unwrap();

    let bad = CodeExecutor::builder()
        .gateway_url(&server.url, Some("wrong".into()))
        .build();
    let err = bad.start().await.unwrap_err();
    assert!(
        err.to_string().contains("403") || err.to_string().contains("401"),
        "a wrong token is reported: {err}"
    );
}

#[test]
fn cli_exec_uses_gateway_url() {
    let ws = workspace();
    let server = jupyter_server(ws.path());
    let out = Command::new(ipybox_bin())
        .args([
            "exec",
            "--gateway-url",
            &server.url,
            "--gateway-token",
            &server.token,
            "print(6 * 7)",
        ])
        .current_dir(ws.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n");
}
