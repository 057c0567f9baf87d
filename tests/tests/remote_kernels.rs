//! Kernels on a remote server with no route back: a real Jupyter Server and a real Jupyter
//! Enterprise Gateway, each in namespaces of its own (no network but its loopback, the
//! workspace hidden), reached through a forwarded port. Tool calls travel over the
//! kernel's own channel, and the generated modules are imported over it.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use futures_util::StreamExt;
use ipybox::{CodeExecutor, Error, Event, ServerParams, StreamOptions};
use ipybox_tests::{Outage, RemoteGateway, RemoteKind, run_with, workspace};

fn fixture() -> ServerParams {
    ServerParams::from_json(&serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
    }))
    .unwrap()
}

async fn remote_executor(ws: &std::path::Path, url: &str, token: &str) -> CodeExecutor {
    let e = CodeExecutor::builder()
        .working_dir(ws)
        .gateway_url(url, Some(token.to_owned()))
        .approval_timeout(Duration::from_secs(30))
        .build();
    e.register_mcp_server("fx", &fixture()).await.unwrap();
    e.start().await.unwrap();
    e
}

/// What every remote kernel must do: no way back but its channel, and tool calls work.
async fn tool_calls_without_a_route_back(kind: RemoteKind) {
    let ws = workspace();
    let gw = RemoteGateway::start(kind, ws.path());
    let e = remote_executor(ws.path(), &gw.url, &gw.token).await;

    // The kernel sees neither the workspace's files nor the host's ports.
    let probe = format!(
        "import os, socket\nprint(os.path.exists(os.path.join({:?}, 'mcptools')))\ntry:\n    socket.create_connection(('127.0.0.1', {}), timeout=2)\n    print('reached the host')\nexcept OSError as err:\n    print(type(err).__name__)",
        ws.path().display().to_string(),
        gw.port
    );
    let r = e.execute(&probe, None).await.unwrap();
    assert_eq!(r.text.as_deref(), Some("False\nConnectionRefusedError"));

    // Approved and rejected calls; the modules come over the channel.
    let code = "from mcptools.fx import echo\nfrom mcptools._runtime import ApprovalRejected\n\
                print(echo.run(echo.Params(text='from the cluster')), echo.__spec__.origin)\n\
                try:\n    echo.run(echo.Params(text='no'))\nexcept ApprovalRejected as err:\n    print('rejected')";
    let asked = std::cell::Cell::new(0);
    let (r, seen) = run_with(&e, code, None, |_| {
        asked.set(asked.get() + 1);
        Some(asked.get() == 1)
    })
    .await;
    assert_eq!(
        r.unwrap().text.as_deref(),
        Some("from the cluster ipybox:mcptools/fx/echo.py\nrejected")
    );
    assert_eq!(seen.len(), 2);

    // Threads and asyncio tasks at once.
    let code = r#"
import asyncio, threading
from mcptools.fx import echo
threaded = []
def worker(i):
    for j in range(5):
        threaded.append(echo.run(echo.Params(text=f"t{i}.{j}")))
threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
gathered = await asyncio.gather(*(asyncio.to_thread(echo.run, echo.Params(text=f"a{i}")) for i in range(10)))
for t in threads:
    t.join()
print(gathered == [f"a{i}" for i in range(10)], len(threaded))
"#;
    let (r, seen) = run_with(&e, code, Some(Duration::from_secs(60)), |_| Some(true)).await;
    assert_eq!(r.unwrap().text.as_deref(), Some("True 20"));
    assert_eq!(seen.len(), 30);

    // input() beside tool calls.
    let code = "import threading\nfrom mcptools.fx import echo\nout = []\n\
                t = threading.Thread(target=lambda: [out.append(echo.run(echo.Params(text=str(i)))) for i in range(10)])\n\
                t.start()\nname = input('name? ')\nt.join()\nprint(name, len(out))";
    let mut s = e.stream(
        code,
        StreamOptions {
            input: true,
            timeout: Some(Duration::from_secs(60)),
            ..Default::default()
        },
    );
    let result = loop {
        match s.next().await.expect("a result") {
            Ok(Event::ApprovalRequest(r)) => r.accept(),
            Ok(Event::Input(i)) => i.reply("Ada"),
            Ok(Event::Result(r)) => break r,
            Ok(_) => {}
            Err(err) => panic!("{err}"),
        }
    };
    assert_eq!(result.text.as_deref(), Some("Ada 10"));

    // A call from a thread after its cell ended is refused.
    let code = "import threading, time\nfrom mcptools.fx import echo\nlate = []\n\
                def later():\n    time.sleep(1.0)\n    try:\n        late.append(echo.run(echo.Params(text='late')))\n    except Exception as err:\n        late.append(type(err).__name__)\n\
                threading.Thread(target=later).start()";
    let (r, seen) = run_with(&e, code, None, |_| Some(true)).await;
    r.unwrap();
    assert!(seen.is_empty());
    tokio::time::sleep(Duration::from_secs(2)).await;
    let r = e.execute("print(late)", None).await.unwrap();
    assert_eq!(r.text.as_deref(), Some("['ApprovalRejected']"));
    e.stop().await.unwrap();
}

#[tokio::test]
async fn tool_calls_from_a_jupyter_server_with_no_route_back() {
    tool_calls_without_a_route_back(RemoteKind::JupyterServer).await;
}

#[tokio::test]
async fn tool_calls_from_an_enterprise_gateway_with_no_route_back() {
    tool_calls_without_a_route_back(RemoteKind::EnterpriseGateway).await;
}

#[tokio::test]
async fn images_interrupt_and_reset_on_a_remote_server_also_while_a_call_waits() {
    let ws = workspace();
    let gw = RemoteGateway::start(RemoteKind::JupyterServer, ws.path());
    let e = remote_executor(ws.path(), &gw.url, &gw.token).await;
    let r = e
        .execute(
            "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()",
            Some(Duration::from_secs(60)),
        )
        .await
        .unwrap();
    assert_eq!(r.images.len(), 1, "the plot came back as an image");
    assert!(r.images[0].exists());

    let running = e.clone();
    let spin = tokio::spawn(async move { running.execute("while True: pass", None).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    e.interrupt().await.unwrap();
    let err = spin.await.unwrap().unwrap_err();
    assert!(matches!(err, Error::Cancelled { .. }), "{err}");

    // Interrupted while a call waits for approval: the request is withdrawn, the cell ends,
    // the tool never runs, and the kernel goes on.
    let mut seen = e.subscribe();
    let mut s = e.stream(
        "from mcptools.fx import counter\nprint(counter.run(counter.Params()))",
        StreamOptions::default(),
    );
    let waiting = loop {
        match s.next().await.expect("the request") {
            Ok(Event::ApprovalRequest(r)) => break r,
            Ok(_) => {}
            Err(err) => panic!("{err}"),
        }
    };
    e.interrupt().await.unwrap();
    let ended = loop {
        match s.next().await {
            Some(Ok(Event::Result(r))) => break Ok(r),
            Some(Ok(_)) => {}
            Some(Err(err)) => break Err(err),
            None => panic!("the stream ended without an outcome"),
        }
    };
    assert!(ended.is_err(), "an interrupted cell fails: {ended:?}");
    let withdrawn = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Ok(ipybox::SessionEvent::ApprovalWithdrawn { id, .. }) = seen.recv().await
                && id == waiting.id()
            {
                break;
            }
        }
    })
    .await;
    assert!(withdrawn.is_ok(), "the request was withdrawn");
    drop(waiting);
    let (r, _) = run_with(
        &e,
        "from mcptools.fx import counter\nprint(counter.run(counter.Params()))",
        None,
        |_| Some(true),
    )
    .await;
    assert_eq!(
        r.unwrap().text.as_deref(),
        Some("1"),
        "the interrupted call never ran"
    );

    e.execute("state = 1", None).await.unwrap();
    e.reset().await.unwrap();
    assert!(e.execute("state", None).await.is_err(), "a fresh kernel");
    let (r, _) = run_with(
        &e,
        "from mcptools.fx import echo\nprint(echo.run(echo.Params(text='after reset')))",
        None,
        |_| Some(true),
    )
    .await;
    assert_eq!(r.unwrap().text.as_deref(), Some("after reset"));
    e.stop().await.unwrap();
}

#[tokio::test]
async fn a_call_survives_a_dropped_connection_to_an_enterprise_gateway() {
    let ws = workspace();
    let gw = RemoteGateway::start(RemoteKind::EnterpriseGateway, ws.path());
    let proxy = Outage::start(gw.port).await;
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .gateway_url(
            format!("http://127.0.0.1:{}", proxy.port),
            Some(gw.token.clone()),
        )
        .kernel_env([("IPYBOX_CALL_RESEND", "2")])
        .approval_timeout(Duration::from_secs(60))
        .build();
    e.register_mcp_server("fx", &fixture()).await.unwrap();
    e.start().await.unwrap();
    let mut s = e.stream(
        "from mcptools.fx import echo, counter\nprint(echo.run(echo.Params(text='across a drop')))\nprint(counter.run(counter.Params()))",
        StreamOptions {
            timeout: Some(Duration::from_secs(60)),
            ..Default::default()
        },
    );
    let mut asked = Vec::new();
    let result = loop {
        match s.next().await.expect("a result") {
            Ok(Event::ApprovalRequest(r)) => {
                asked.push(r.tool_name().to_owned());
                if r.tool_name() == "echo" {
                    let before = proxy.accepted();
                    proxy.cut_for(Duration::from_secs(5));
                    // The first connection once the network is back is refused by the
                    // server: a reconnection that fell back to JSON frames here lost a v1
                    // session's kernel.
                    proxy.fail_next(1);
                    let back = tokio::time::timeout(Duration::from_secs(20), async {
                        while proxy.accepted() == before {
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    })
                    .await;
                    assert!(back.is_ok(), "ipybox connected again");
                }
                r.accept();
            }
            Ok(Event::Result(r)) => break r,
            Ok(_) => {}
            Err(err) => panic!("{err}"),
        }
    };
    assert_eq!(result.text.as_deref(), Some("across a drop\n2"));
    assert_eq!(asked, ["echo", "counter"]);
    e.stop().await.unwrap();
}

#[tokio::test]
async fn ipybox_mcp_runs_an_agents_kernel_on_a_remote_gateway() {
    use ipybox_tests::mcp_client::{call, call_ok, stdio_client, text};
    let ws = workspace();
    let gw = RemoteGateway::start(RemoteKind::JupyterServer, ws.path());
    let c = stdio_client(
        ws.path(),
        &[],
        &["--gateway-url", &gw.url, "--gateway-token", &gw.token],
    )
    .await;
    let params = serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"), "args": ["stdio"],
    });
    call_ok(
        &c,
        "register_mcp_server",
        serde_json::json!({"server_name": "fx", "server_params": params}),
    )
    .await;
    let code = format!(
        "import os\nfrom mcptools.fx import echo\nprint(os.path.exists(os.path.join({:?}, 'mcptools')), echo.run(echo.Params(text='from an agent')))",
        ws.path().display().to_string()
    );
    let r = call(
        &c,
        "execute_ipython_cell",
        serde_json::json!({ "code": code }),
    )
    .await;
    assert_eq!(text(&r), "False from an agent");
    c.cancel().await.unwrap();
}

#[tokio::test]
async fn packages_install_in_the_remote_kernels_environment_not_here() {
    let ws = workspace();
    let gw = RemoteGateway::start(RemoteKind::EnterpriseGateway, ws.path());
    let e = remote_executor(ws.path(), &gw.url, &gw.token).await;
    // A wheel where the namespace sees it (beside the test binary, not in the workspace).
    let dir = tempfile::Builder::new()
        .prefix("wheel-")
        .tempdir_in(std::env::current_exe().unwrap().parent().unwrap())
        .unwrap();
    let name = format!("ipybox_probe_{}", std::process::id());
    let wheel = dir.path().join(format!("{name}-1.0-py3-none-any.whl"));
    let made = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile\nname, path = sys.argv[1], sys.argv[2]\nwith zipfile.ZipFile(path, 'w') as z:\n    z.writestr(f'{name}.py', 'VALUE = 42\\n')\n    z.writestr(f'{name}-1.0.dist-info/METADATA', f'Metadata-Version: 2.1\\nName: {name}\\nVersion: 1.0\\n')\n    z.writestr(f'{name}-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n    z.writestr(f'{name}-1.0.dist-info/RECORD', '')",
        ])
        .arg(&name)
        .arg(&wheel)
        .status()
        .unwrap();
    assert!(made.success());

    let mut events = e.subscribe();
    let out = e
        .install_package(wheel.to_str().unwrap())
        .await
        .expect("pip ran in the remote kernel");
    assert!(
        out.contains(&format!(
            "Successfully installed {}-1.0",
            name.replace('_', "-")
        )),
        "{out}"
    );
    let mut lines = 0;
    while let Ok(ev) = events.try_recv() {
        if matches!(ev, ipybox::SessionEvent::PackageInstall { .. }) {
            lines += 1;
        }
    }
    assert!(lines > 0, "pip's lines arrived as events");
    let r = e
        .execute(&format!("import {name}\nprint({name}.VALUE)"), None)
        .await
        .unwrap();
    assert_eq!(r.text.as_deref(), Some("42"), "the kernel imports it");
    let here = std::process::Command::new(ipybox_tests::python())
        .args(["-c", &format!("import {name}")])
        .output()
        .unwrap();
    assert!(
        !here.status.success(),
        "nothing was installed on this machine"
    );

    // A package that cannot be installed (the cluster has no network here) says so, in pip's words.
    let err = e
        .install_package("ipybox-no-such-package-anywhere")
        .await
        .expect_err("no network in the namespace");
    assert!(
        err.to_string()
            .contains("pip could not install ipybox-no-such-package-anywhere in the remote kernel's environment"),
        "{err}"
    );
    e.execute(&format!("import subprocess, sys\nsubprocess.run([sys.executable, '-m', 'pip', 'uninstall', '-y', '{name}'], capture_output=True)"), None)
        .await
        .unwrap();
    e.stop().await.unwrap();
}
