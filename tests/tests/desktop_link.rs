//! The desktop link: an agent's calls (`ipybox mcp --approval desktop`) are approved in the
//! session of the app open on the workspace, decided there and recorded there; with no app
//! they are rejected with a message saying so; a process that does not know the app's
//! secret can neither pose as the app nor answer a request, and an agent cannot answer one;
//! another user can neither reach the link nor get past its peer check.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use hmac::{Hmac, Mac};
use ipybox::{
    ApprovalHandler, ApprovalRequest, CallDecision, CallOutcome, CodeExecutor, DecidedBy, Decision,
    DesktopApproval, LinkPaths, ServerParams, SessionEvent,
};
use ipybox_tests::workspace;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::broadcast;

/// Leaves every request to whoever decides it by id (the app's panel, here the test).
#[derive(Debug)]
struct Person;

impl ApprovalHandler for Person {
    fn handle(&self, request: ApprovalRequest) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            while !request.is_decided() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    }

    /// Says yes to the fixture server only, and keeps what it was asked.
    fn start_program(
        &self,
        request: ipybox::ProgramRequest,
    ) -> BoxFuture<'static, ipybox::ProgramVerdict> {
        PROGRAMS_ASKED.lock().unwrap().push(request.clone());
        let fixture = request.command.ends_with("ipybox-fixture-mcp");
        Box::pin(std::future::ready(if fixture {
            Ok(ipybox::DecidedBy::Person)
        } else {
            Err("the person said no".into())
        }))
    }
}

/// What the app's person was asked about programs, in this test process.
static PROGRAMS_ASKED: std::sync::Mutex<Vec<ipybox::ProgramRequest>> =
    std::sync::Mutex::new(Vec::new());

fn fixture() -> ServerParams {
    ServerParams::from_json(&serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
    }))
    .unwrap()
}

fn paths(dir: &std::path::Path) -> LinkPaths {
    LinkPaths {
        socket: dir.join("run/link.sock"),
        secret: dir.join("state/link.secret"),
    }
}

/// The next event matching `pick`, within 30 s.
async fn next<T>(
    rx: &mut broadcast::Receiver<SessionEvent>,
    mut pick: impl FnMut(&SessionEvent) -> Option<T>,
) -> T {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let Some(t) = pick(&rx.recv().await.unwrap()) {
                return t;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the event did not come within 30 s"))
}

/// The agent: a session whose calls the app decides; its call events go through `forward`
/// as `ipybox mcp` passes them, and those the app does not record come back here.
async fn agent(
    ws: &std::path::Path,
    link: &DesktopApproval,
) -> (CodeExecutor, broadcast::Receiver<SessionEvent>) {
    let e = CodeExecutor::builder()
        .working_dir(ws)
        .approval_handler(Arc::new(link.clone()))
        .approval_timeout(Duration::from_secs(20))
        .build();
    e.register_mcp_server("fx", &fixture()).await.unwrap();
    e.start().await.unwrap();
    let (tx, rx) = broadcast::channel(64);
    let mut events = e.subscribe();
    let link = link.clone();
    tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            if matches!(event, SessionEvent::ToolCall { .. }) && !link.forward(&event) {
                let _ = tx.send(event);
            }
        }
    });
    (e, rx)
}

const CALL: &str =
    "from mcptools.fx.echo import Params, run\nprint(run(Params(text='through the app')))";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_decides_an_agents_calls_and_records_them() {
    let (app_ws, agent_ws, dir) = (workspace(), workspace(), workspace());
    let app = CodeExecutor::builder()
        .working_dir(app_ws.path())
        .approval_handler(Arc::new(Person))
        .build();
    app.start().await.unwrap();
    let server = ipybox::LinkServer::serve_at(paths(dir.path()), app.clone())
        .await
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&server.paths().socket), 0o600);
    assert_eq!(mode(server.paths().socket.parent().unwrap()), 0o700);
    assert_eq!(mode(&server.paths().secret), 0o600);
    // A second app on the same workspace is refused, and the first keeps its link.
    let again = ipybox::LinkServer::serve_at(paths(dir.path()), app.clone()).await;
    assert!(
        again
            .unwrap_err()
            .to_string()
            .contains("another ipybox app")
    );

    let link = DesktopApproval::at(paths(dir.path()), agent_ws.path(), "test agent");
    let (agent, mut unrecorded) = agent(agent_ws.path(), &link).await;
    let mut seen = app.subscribe();

    // Approved in the app: the call runs, and its outcome is recorded by the app.
    let run = tokio::spawn({
        let agent = agent.clone();
        async move { agent.execute(CALL, None).await }
    });
    let request = next(&mut seen, |ev| match ev {
        SessionEvent::ApprovalRequested { request } => Some(request.clone()),
        _ => None,
    })
    .await;
    assert_eq!((request.server_name(), request.tool_name()), ("fx", "echo"));
    assert_eq!(request.tool_args()["text"], "through the app");
    assert!(
        request.origin().unwrap().contains("via test agent"),
        "{:?}",
        request.origin()
    );
    assert_eq!(app.pending_approvals().len(), 1, "the app's panel lists it");
    assert!(app.decide(request.id(), Decision::Accept));
    let r = run.await.unwrap().unwrap();
    assert_eq!(r.text.as_deref(), Some("through the app"));
    let (by, outcome) = next(&mut seen, |ev| match ev {
        SessionEvent::ToolCall {
            decision: CallDecision::Approved,
            decided_by,
            outcome,
            ..
        } => Some((*decided_by, outcome.clone())),
        _ => None,
    })
    .await;
    assert_eq!((by, outcome), (DecidedBy::Person, Some(CallOutcome::Ok)));

    // Rejected in the app: the agent's code gets the reason; the app recorded the refusal.
    let run = tokio::spawn({
        let agent = agent.clone();
        async move { agent.execute(CALL, None).await }
    });
    let request = next(&mut seen, |ev| match ev {
        SessionEvent::ApprovalRequested { request } => Some(request.clone()),
        _ => None,
    })
    .await;
    let rejected = ipybox_tests::wait_for(Duration::from_secs(5), || {
        app.decide_as(request.id(), Decision::Reject, DecidedBy::Batch)
    });
    assert!(rejected);
    let err = run.await.unwrap().expect_err("rejected");
    assert!(err.to_string().contains("ApprovalRejected"), "{err}");
    let by = next(&mut seen, |ev| match ev {
        SessionEvent::ToolCall {
            decision: CallDecision::Rejected,
            decided_by,
            ..
        } => Some(*decided_by),
        _ => None,
    })
    .await;
    assert_eq!(by, DecidedBy::Batch);
    assert!(
        unrecorded.try_recv().is_err(),
        "the agent records nothing the app decided"
    );

    // An interrupted execution withdraws its request in the app.
    let stream = agent.stream(CALL, Default::default());
    let request = next(&mut seen, |ev| match ev {
        SessionEvent::ApprovalRequested { request } => Some(request.clone()),
        _ => None,
    })
    .await;
    drop(stream);
    let withdrawn = next(&mut seen, |ev| match ev {
        SessionEvent::ApprovalWithdrawn { id, .. } => Some(*id),
        _ => None,
    })
    .await;
    assert_eq!(withdrawn, request.id());
    assert!(ipybox_tests::wait_for(Duration::from_secs(5), || app
        .pending_approvals()
        .is_empty()));

    // The app closes: the socket and secret go, and the agent's next call is rejected.
    drop(server);
    assert!(!paths(dir.path()).socket.exists() && !paths(dir.path()).secret.exists());
    let err = agent.execute(CALL, None).await.expect_err("no app");
    assert!(
        err.to_string().contains("no ipybox app approves calls"),
        "{err}"
    );
    let by = next(&mut unrecorded, |ev| match ev {
        SessionEvent::ToolCall { decided_by, .. } => Some(*decided_by),
        _ => None,
    })
    .await;
    assert_eq!(
        by,
        DecidedBy::Nobody,
        "the agent records what no app decided"
    );
    agent.stop().await.unwrap();
    app.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_app_or_a_fake_one_calls_are_rejected() {
    let (agent_ws, dir) = (workspace(), workspace());
    let paths = paths(dir.path());
    let link = DesktopApproval::at(paths.clone(), agent_ws.path(), "test agent");
    let (agent, _unrecorded) = agent(agent_ws.path(), &link).await;
    let err = agent.execute(CALL, None).await.expect_err("no app");
    let text = err.to_string();
    assert!(
        text.contains("no ipybox app approves calls") && text.contains("is not open"),
        "{text}"
    );

    // Something that listens on the app's socket without its secret (to approve the calls
    // itself) is found out before it can answer.
    std::fs::create_dir_all(paths.socket.parent().unwrap()).unwrap();
    std::fs::create_dir_all(paths.secret.parent().unwrap()).unwrap();
    std::fs::write(&paths.secret, "the real app's secret").unwrap();
    let fake = tokio::net::UnixListener::bind(&paths.socket).unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = fake.accept().await {
            let (read, mut write) = stream.into_split();
            let mut lines = BufReader::new(read).lines();
            let _hello = lines.next_line().await;
            let _ = write
                .write_all(b"{\"type\":\"welcome\",\"nonce\":\"n\",\"proof\":\"00\"}\n{\"type\":\"ready\"}\n{\"type\":\"decided\",\"id\":1,\"decision\":\"accept\",\"decided_by\":\"person\",\"reason\":null}\n")
                .await;
            let _ = lines.next_line().await;
        }
    });
    let err = agent.execute(CALL, None).await.expect_err("fake app");
    assert!(
        err.to_string().contains("does not know the app's secret"),
        "{err}"
    );
    agent.stop().await.unwrap();
}

fn proof(secret: &[u8], role: &str, first: &str, second: &str) -> String {
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret).unwrap();
    for part in [role, "\n", first, "\n", second] {
        mac.update(part.as_bytes());
    }
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Code that knows the secret (unsandboxed kernel code can read the user's files) gets to
/// *ask* — but an agent's side has no way to answer: a `decided` from it ends its link and
/// withdraws its requests; nothing it sends approves anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_cannot_answer_a_request() {
    let (app_ws, dir) = (workspace(), workspace());
    let app = CodeExecutor::builder()
        .working_dir(app_ws.path())
        .approval_handler(Arc::new(Person))
        .build();
    app.start().await.unwrap();
    let paths = paths(dir.path());
    let _server = ipybox::LinkServer::serve_at(paths.clone(), app.clone())
        .await
        .unwrap();
    let mut seen = app.subscribe();
    let secret = std::fs::read(&paths.secret).unwrap();
    let stream = UnixStream::connect(&paths.socket).await.unwrap();
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    write
        .write_all(
            b"{\"type\":\"hello\",\"version\":1,\"nonce\":\"mine\",\"agent\":\"kernel code\"}\n",
        )
        .await
        .unwrap();
    let welcome: serde_json::Value =
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    let theirs = welcome["nonce"].as_str().unwrap().to_owned();
    let answer =
        serde_json::json!({"type": "proof", "proof": proof(&secret, "agent", &theirs, "mine")});
    write
        .write_all(format!("{answer}\n").as_bytes())
        .await
        .unwrap();
    assert!(lines.next_line().await.unwrap().unwrap().contains("ready"));
    let ask = serde_json::json!({"type": "ask", "id": 7, "server": "fx", "tool": "delete_everything",
        "arguments": {}, "server_description": "fixture", "origin": "kernel code"});
    write
        .write_all(format!("{ask}\n").as_bytes())
        .await
        .unwrap();
    let request = next(&mut seen, |ev| match ev {
        SessionEvent::ApprovalRequested { request } => Some(request.clone()),
        _ => None,
    })
    .await;
    let forged = serde_json::json!({"type": "decided", "id": 7, "decision": "accept",
        "decided_by": "person", "reason": null});
    write
        .write_all(format!("{forged}\n").as_bytes())
        .await
        .unwrap();
    let (decision, by) = next(&mut seen, |ev| match ev {
        SessionEvent::ToolCall {
            decision,
            decided_by,
            ..
        } => Some((*decision, *decided_by)),
        SessionEvent::ApprovalDecided {
            decision: Decision::Accept,
            ..
        } => {
            panic!("a request was approved by its asker")
        }
        _ => None,
    })
    .await;
    assert_eq!((decision, by), (CallDecision::Rejected, DecidedBy::Nobody));
    assert!(
        !app.pending_approvals()
            .iter()
            .any(|r| r.id() == request.id()),
        "the request is decided"
    );
    assert!(app.pending_approvals().is_empty());
    assert!(
        lines.next_line().await.map(|l| l.is_none()).unwrap_or(true),
        "the link is closed"
    );
    app.stop().await.unwrap();
}

/// Set in the copy of this test binary that runs as another user: the socket's and the
/// secret's paths, one a line.
const PROBE: &str = "IPYBOX_TEST_LINK_PROBE";

/// What a process can do with the link: read the secret? connect, and get an answer to its
/// hello? One JSON line.
fn probe(socket: &std::path::Path, secret: &std::path::Path) -> serde_json::Value {
    use std::io::{BufRead, ErrorKind, Write};
    let secret = match std::fs::read(secret) {
        Ok(_) => "read".to_owned(),
        Err(e) if e.kind() == ErrorKind::PermissionDenied => "denied".to_owned(),
        Err(e) => format!("error: {e}"),
    };
    // The app may drop the connection while the hello is written or before it is read.
    let closed = |e: &std::io::Error| {
        matches!(
            e.kind(),
            ErrorKind::BrokenPipe | ErrorKind::ConnectionReset | ErrorKind::UnexpectedEof
        )
    };
    let link = match std::os::unix::net::UnixStream::connect(socket) {
        Err(e) if e.kind() == ErrorKind::PermissionDenied => "denied".to_owned(),
        Err(e) => format!("error: {e}"),
        Ok(mut stream) => {
            stream
                .set_read_timeout(Some(Duration::from_secs(20)))
                .unwrap();
            let hello =
                b"{\"type\":\"hello\",\"version\":1,\"nonce\":\"n\",\"agent\":\"another user\"}\n";
            let mut line = String::new();
            match stream
                .write_all(hello)
                .and_then(|()| std::io::BufReader::new(&stream).read_line(&mut line))
            {
                Ok(0) => "closed".to_owned(),
                Ok(_) => format!("answered: {line}"),
                Err(e) if closed(&e) => "closed".to_owned(),
                Err(e) => format!("error: {e}"),
            }
        }
    };
    serde_json::json!({ "secret": secret, "link": link })
}

/// The uid and gid of `ipybox-ci` (the unprivileged user CI tests as), else of `nobody`.
fn other_user() -> (u32, u32) {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let find = |name: &str| {
        passwd.lines().find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            if f.len() < 4 || f[0] != name {
                return None;
            }
            Some((f[2].parse().ok()?, f[3].parse().ok()?))
        })
    };
    find("ipybox-ci").unwrap_or((65534, 65534))
}

/// Another user can neither connect to the link nor read its secret (the socket's directory
/// is 0700, the socket 0600, the secret 0600 in a 0700 directory); and should the socket be
/// reachable after all, the app refuses a peer of another uid before the handshake (the
/// `SO_PEERCRED` check) — an own-uid peer sending the same hello is welcomed. Each half fails
/// if its protection is removed. Needs root, to act as another user (CI runs as root).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_user_can_neither_reach_the_link_nor_get_past_its_peer_check() {
    if let Ok(paths) = std::env::var(PROBE) {
        // The copy running as the other user.
        let (socket, secret) = paths.split_once('\n').unwrap();
        let said = format!("link probe: {}\n", probe(socket.as_ref(), secret.as_ref()));
        std::io::Write::write_all(&mut std::io::stdout(), said.as_bytes()).unwrap();
        return;
    }
    // SAFETY: geteuid cannot fail and touches no memory.
    if unsafe { libc::geteuid() } != 0 {
        let why = "skipped: acting as another user needs root (CI runs this test as root)\n";
        std::io::Write::write_all(&mut std::io::stderr(), why.as_bytes()).unwrap();
        return;
    }
    let (app_ws, dir) = (workspace(), workspace());
    // Only ipybox's own modes stand between the other user and the link, not the temp dir's.
    use std::os::unix::fs::PermissionsExt;
    let open = |p: &std::path::Path, mode| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    open(dir.path(), 0o755);
    let app = CodeExecutor::builder()
        .working_dir(app_ws.path())
        .approval_handler(Arc::new(Person))
        .build();
    let paths = paths(dir.path());
    let _server = ipybox::LinkServer::serve_at(paths.clone(), app.clone())
        .await
        .unwrap();
    let (uid, gid) = other_user();
    let as_other_user = || async {
        let out = tokio::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "another_user_can_neither_reach_the_link_nor_get_past_its_peer_check",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(
                PROBE,
                format!("{}\n{}", paths.socket.display(), paths.secret.display()),
            )
            .uid(uid)
            .gid(gid)
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout
            .lines()
            // libtest writes the test's name on the same line.
            .find_map(|l| l.split_once("link probe: ").map(|(_, probe)| probe))
            .unwrap_or_else(|| {
                panic!(
                    "the probe as uid {uid} said nothing: {stdout}{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            });
        serde_json::from_str::<serde_json::Value>(line).unwrap()
    };

    // The directory and file modes keep the other user out.
    let seen = as_other_user().await;
    assert_eq!(
        seen,
        serde_json::json!({ "secret": "denied", "link": "denied" }),
        "uid {uid} reads neither the secret nor connects to the socket"
    );

    // Opened up (as a careless umask or a shared runtime directory might): the other user
    // connects, but the app hangs up on it without a word.
    open(paths.socket.parent().unwrap(), 0o755);
    open(&paths.socket, 0o666);
    let seen = as_other_user().await;
    assert_eq!(
        seen["link"], "closed",
        "the app refuses a peer of uid {uid}: {seen}"
    );
    let (socket, secret) = (paths.socket.clone(), paths.secret.clone());
    let own = tokio::task::spawn_blocking(move || probe(&socket, &secret))
        .await
        .unwrap();
    assert!(
        own["link"]
            .as_str()
            .unwrap()
            .contains("\"type\":\"welcome\""),
        "the same hello from the app's own user is welcomed: {own}"
    );
    app.stop().await.unwrap();
}

/// `ipybox mcp --approval desktop` as an agent runs it, driven by an rmcp client over stdio:
/// its kernel's tool calls are approved and rejected in the session of the app open on the
/// workspace, and once the app is closed they are rejected with a message saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipybox_mcp_with_desktop_approval_driven_by_an_rmcp_client() {
    use ipybox_tests::mcp_client::{call, call_ok, stdio_client, text};

    let (app_ws, agent_ws, runtime) = (workspace(), workspace(), workspace());
    let app = CodeExecutor::builder()
        .working_dir(app_ws.path())
        .approval_handler(Arc::new(Person))
        .build();
    app.start().await.unwrap();
    // The app listens where `ipybox mcp` looks for it: its runtime directory is ours, the
    // secret in the workspace's state directory of the shared data directory.
    let usual = LinkPaths::of(agent_ws.path()).unwrap();
    let paths = LinkPaths {
        socket: runtime
            .path()
            .join("ipybox")
            .join(usual.socket.file_name().unwrap()),
        secret: usual.secret,
    };
    let server = ipybox::LinkServer::serve_at(paths, app.clone())
        .await
        .unwrap();
    let runtime_dir = runtime.path().to_str().unwrap();
    let c = stdio_client(
        agent_ws.path(),
        &[("XDG_RUNTIME_DIR", runtime_dir)],
        &["--approval", "desktop"],
    )
    .await;
    let fixture = serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
    });
    // An agent's new stdio server starts only once the app's person said yes to it.
    call_ok(
        &c,
        "register_mcp_server",
        serde_json::json!({"server_name": "fx", "server_params": fixture}),
    )
    .await;
    let asked = PROGRAMS_ASKED
        .lock()
        .unwrap()
        .iter()
        .find(|r| r.name == "fx")
        .cloned()
        .expect("the app was asked before the fixture server started");
    assert!(
        asked.agent.contains("via ipybox mcp"),
        "the app names the agent as it proved itself: {}",
        asked.agent
    );
    let r = call(
        &c,
        "register_mcp_server",
        serde_json::json!({"server_name": "helper", "server_params": {"command": "sh", "args": ["-c", "touch \"$0\"", agent_ws.path().join("ran").to_str().unwrap()]}}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    assert!(
        text(&r).contains("the person said no"),
        "the agent hears why: {}",
        text(&r)
    );
    assert!(
        !agent_ws.path().join("ran").exists(),
        "the refused program never ran"
    );
    let mut seen = app.subscribe();
    let cell = serde_json::json!({ "code": CALL });

    for (decision, expected) in [
        (Decision::Accept, "through the app"),
        (Decision::Reject, "ApprovalRejected"),
    ] {
        let decide = async {
            let request = next(&mut seen, |ev| match ev {
                SessionEvent::ApprovalRequested { request } => Some(request.clone()),
                _ => None,
            })
            .await;
            assert_eq!((request.server_name(), request.tool_name()), ("fx", "echo"));
            assert!(
                request.origin().unwrap().contains("ipybox mcp"),
                "the app names the agent: {:?}",
                request.origin()
            );
            assert!(app.decide(request.id(), decision));
        };
        let (r, ()) = tokio::join!(call(&c, "execute_ipython_cell", cell.clone()), decide);
        assert!(text(&r).contains(expected), "{decision:?}: {}", text(&r));
    }

    // The app closes: the next call is rejected at once, saying why and what to do.
    drop(server);
    let r = call(&c, "execute_ipython_cell", cell).await;
    assert!(
        text(&r).contains("no ipybox app approves calls for the workspace"),
        "{}",
        text(&r)
    );
    c.cancel().await.unwrap();
}
