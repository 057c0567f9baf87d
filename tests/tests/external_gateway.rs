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
    jupyter_server_with(root, &[], "http")
}

fn jupyter_server_with(root: &std::path::Path, extra: &[String], scheme: &str) -> Server {
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
        .args(extra)
        .env("JUPYTER_CONFIG_DIR", dirs.path().join("config"))
        .env("JUPYTER_DATA_DIR", dirs.path().join("data"))
        .env("JUPYTER_RUNTIME_DIR", dirs.path().join("runtime"))
        .env("JUPYTER_PLATFORM_DIRS", "1")
        .current_dir(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let host = if scheme == "https" {
        "localhost"
    } else {
        "127.0.0.1"
    };
    let url = format!("{scheme}://{host}:{port}");
    // Up means answering HTTP (plain HTTP; a TLS server once its port accepts).
    let up = || {
        use std::io::{Read, Write};
        let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
            return false;
        };
        if scheme == "https" {
            return true;
        }
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        let mut answer = String::new();
        s.write_all(b"GET /api HTTP/1.0\r\n\r\n").is_ok()
            && s.read_to_string(&mut answer).is_ok()
            && answer.starts_with("HTTP/1.1 200")
    };
    assert!(
        wait_for(Duration::from_secs(60), up),
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

#[tokio::test]
async fn a_call_waiting_for_approval_survives_a_dropped_connection_and_runs_once() {
    use futures_util::StreamExt;
    let ws = workspace();
    let server = jupyter_server(ws.path());
    let upstream: u16 = server.url.rsplit(':').next().unwrap().parse().unwrap();
    let proxy = ipybox_tests::Outage::start(upstream).await;
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .gateway_url(
            format!("http://127.0.0.1:{}", proxy.port),
            Some(server.token.clone()),
        )
        .kernel_env([("IPYBOX_CALL_RESEND", "2")])
        .approval_timeout(Duration::from_secs(60))
        .build();
    let fixture = ipybox::ServerParams::from_json(&serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
    }))
    .unwrap();
    e.register_mcp_server("fx", &fixture).await.unwrap();
    e.start().await.unwrap();
    let mut s = e.stream(
        "from mcptools.fx import echo, counter\nprint(echo.run(echo.Params(text='across a drop')))\nprint(counter.run(counter.Params()))",
        ipybox::StreamOptions {
            timeout: Some(Duration::from_secs(60)),
            ..Default::default()
        },
    );
    let mut asked = Vec::new();
    let result = loop {
        match s.next().await.expect("a result") {
            Ok(ipybox::Event::ApprovalRequest(r)) => {
                asked.push(r.tool_name().to_owned());
                if r.tool_name() == "echo" {
                    // The connection drops while the call waits for a person, and stays
                    // down longer than the kernel waits before asking again.
                    let before = proxy.accepted();
                    proxy.cut_for(Duration::from_secs(5));
                    tokio::time::sleep(Duration::from_secs(6)).await;
                    assert!(proxy.accepted() > before, "ipybox connected again");
                }
                r.accept();
            }
            Ok(ipybox::Event::Result(r)) => break r,
            Ok(_) => {}
            Err(err) => panic!("{err}"),
        }
    };
    assert_eq!(
        result.text.as_deref(),
        Some("across a drop\n2"),
        "the call ran once (the counter's own call is the second)"
    );
    assert_eq!(asked, ["echo", "counter"], "asked once, though sent again");
    let r = e.execute("print('still connected')", None).await.unwrap();
    assert_eq!(r.text.as_deref(), Some("still connected"));
    e.stop().await.unwrap();
}

#[test]
fn cli_exec_over_https_verifies_the_certificate_and_sends_headers() {
    let ws = workspace();
    let certs = tempfile::tempdir().unwrap();
    let dir = certs.path();
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // A certificate authority of the test's own, and a certificate for localhost it signed.
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "1",
        "-subj",
        "/CN=ipybox test CA",
    ]);
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]);
    std::fs::write(
        dir.join("ext"),
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "1",
        "-extfile",
        "ext",
    ]);
    let server = jupyter_server_with(
        ws.path(),
        &[
            format!("--ServerApp.certfile={}", dir.join("server.pem").display()),
            format!("--ServerApp.keyfile={}", dir.join("server.key").display()),
        ],
        "https",
    );
    let exec = |ca: Option<&std::path::Path>| {
        let mut cmd = Command::new(ipybox_bin());
        cmd.args([
            "exec",
            "--gateway-url",
            &server.url,
            "--gateway-token",
            &server.token,
            "--gateway-header",
            "X-Forwarded-User: ada",
            "print(6 * 7)",
        ])
        .current_dir(ws.path())
        .env_remove("SSL_CERT_DIR");
        match ca {
            Some(ca) => cmd.env("SSL_CERT_FILE", ca),
            None => cmd.env_remove("SSL_CERT_FILE"),
        };
        cmd.output().unwrap()
    };
    let out = exec(Some(&dir.join("ca.pem")));
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n");

    // A certificate nobody vouches for is refused, in words.
    let out = exec(None);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.to_lowercase().contains("certificate"), "{stderr}");

    let out = Command::new(ipybox_bin())
        .args([
            "exec",
            "--gateway-url",
            &server.url,
            "--gateway-header",
            "no colon",
            "1",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("'Name: value'"), "{stderr}");
}
