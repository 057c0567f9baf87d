//! The desktop link: how `ipybox mcp --approval desktop` has the tool calls of an agent's
//! code approved by the ipybox app open on the same workspace, through the app's dialog,
//! rules and audit log.
//!
//! The app listens on a Unix socket in the user's runtime directory (`$XDG_RUNTIME_DIR`,
//! else ipybox's data directory), in a directory only the user can enter, mode 0600, and
//! checks that the peer runs as the same user. Both ends then prove they know a secret the
//! app wrote into the workspace's state directory in ipybox's data directory (0600; kernel
//! code never gets it, and a sandboxed kernel can neither read that directory nor create a
//! Unix socket): each answers the other's fresh nonce with an HMAC-SHA256, so neither a
//! process that merely opened the socket nor one that merely listens on its path (to approve
//! calls itself) gets anywhere.
//!
//! After that the agent's side only *asks*: it sends a call, and the app answers with the
//! decision its person, rules or batch made. Nothing an agent sends can decide a request.
//! The protocol is JSON Lines, one message per line, tagged by `type`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, oneshot};

use crate::approval::{ApprovalHandler, ApprovalRequest, Decision};
use crate::approval::{Approved, ExternalCall, Refusal};
use crate::error::{Error, Result};
use crate::events::{CallOutcome, DecidedBy, SessionEvent};
use crate::executor::CodeExecutor;

/// The protocol's version; a peer with another one is refused with a message saying so.
const VERSION: u32 = 1;
/// How long a connection may take to prove itself.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest line either side accepts.
const MAX_LINE: usize = 4 << 20;

/// One message on the link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Message {
    /// Agent → app: who is asking, and a nonce for the app to prove itself on.
    Hello {
        version: u32,
        nonce: String,
        agent: String,
    },
    /// App → agent: the app's proof, and a nonce for the agent's.
    Welcome { nonce: String, proof: String },
    /// Agent → app: its proof.
    Proof { proof: String },
    /// App → agent: the link is up.
    Ready,
    /// Either way: the other side is refused, and why.
    Refused { reason: String },
    /// Agent → app: a call to decide.
    Ask {
        id: u64,
        #[serde(flatten)]
        call: ExternalCall,
        /// The tool's definition, a change of it, the agent's client, the calling line
        /// (absent from an older ipybox).
        #[serde(default)]
        details: Box<crate::definition::CallDetails>,
    },
    /// App → agent: the decision on `id`.
    Decided {
        id: u64,
        decision: Decision,
        decided_by: DecidedBy,
        reason: Option<String>,
    },
    /// Agent → app: nobody waits for `id` any more (its execution ended).
    Withdraw { id: u64 },
    /// Agent → app: how the approved call `id` ended.
    Called {
        id: u64,
        outcome: Option<CallOutcome>,
        duration_ms: u64,
    },
}

/// Where the app open on `workspace` listens, and where it keeps the link's secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkPaths {
    /// The socket.
    pub socket: PathBuf,
    /// The secret (in the workspace's state directory).
    pub secret: PathBuf,
}

impl LinkPaths {
    /// The paths for `workspace` under ipybox's data directory `home`.
    pub fn new(home: &Path, workspace: &Path) -> LinkPaths {
        let canonical = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.into());
        let state = crate::home::workspace_dir(home, &canonical);
        // The workspace directory's name ends with the hash of its path; a socket's path must
        // stay short (108 bytes), so the socket is named by the hash alone.
        let name = state
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let hash = name.rsplit('-').next().unwrap_or(&name).to_owned();
        let runtime = crate::home::runtime_dir(home);
        LinkPaths {
            socket: runtime.join(format!("desktop-{hash}.sock")),
            secret: state.join("desktop-link.secret"),
        }
    }

    /// The paths for `workspace` in ipybox's data directory.
    pub fn of(workspace: &Path) -> Result<LinkPaths> {
        Ok(LinkPaths::new(&crate::home::ipybox_home()?, workspace))
    }
}

fn proof(secret: &[u8], role: &str, first: &str, second: &str) -> String {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret) else {
        return String::new();
    };
    for part in [role, "\n", first, "\n", second] {
        mac.update(part.as_bytes());
    }
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn link_error(what: impl Into<String>) -> Error {
    Error::config(what)
}

/// One side of a connection: lines in, lines out.
struct Wire {
    lines: tokio::io::Lines<BufReader<tokio::net::unix::OwnedReadHalf>>,
    out: tokio::net::unix::OwnedWriteHalf,
}

impl Wire {
    fn new(stream: UnixStream) -> Wire {
        let (read, out) = stream.into_split();
        Wire {
            lines: BufReader::new(read).lines(),
            out,
        }
    }

    async fn send(&mut self, message: &Message) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.out.write_all(&line).await
    }

    /// The next message; `None` at the end. A line that is not a message is an error.
    async fn recv(&mut self) -> std::io::Result<Option<Message>> {
        match self.lines.next_line().await? {
            None => Ok(None),
            Some(line) if line.len() > MAX_LINE => Err(std::io::Error::other("line too long")),
            Some(line) => serde_json::from_str(&line)
                .map(Some)
                .map_err(|e| std::io::Error::other(format!("not a link message: {e}"))),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The app's side.

/// The app's end of the link for one workspace: dropping it stops listening and removes
/// the socket and the secret.
#[derive(Debug)]
pub struct LinkServer {
    paths: LinkPaths,
    task: tokio::task::JoinHandle<()>,
    /// The socket's device and inode, and the secret: what is removed is only what is
    /// still this server's (a newer app on the workspace may have replaced both).
    socket_id: (u64, u64),
    secret: String,
}

impl Drop for LinkServer {
    fn drop(&mut self) {
        self.task.abort();
        if file_id(&self.paths.socket) == Some(self.socket_id) {
            let _ = std::fs::remove_file(&self.paths.socket);
        }
        if std::fs::read(&self.paths.secret).is_ok_and(|s| s == self.secret.as_bytes()) {
            let _ = std::fs::remove_file(&self.paths.secret);
        }
    }
}

fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

impl LinkServer {
    /// Where it listens.
    pub fn paths(&self) -> &LinkPaths {
        &self.paths
    }
}

impl LinkServer {
    /// Listen for agents' calls to approve in `executor`'s session (the app open on
    /// `workspace`). Fails when another app already listens for this workspace.
    pub async fn serve(workspace: &Path, executor: CodeExecutor) -> Result<LinkServer> {
        serve_at(LinkPaths::of(workspace)?, executor).await
    }

    /// [`serve`](Self::serve) on `paths`.
    pub async fn serve_at(paths: LinkPaths, executor: CodeExecutor) -> Result<LinkServer> {
        serve_at(paths, executor).await
    }
}

async fn serve_at(paths: LinkPaths, executor: CodeExecutor) -> Result<LinkServer> {
    let io = |what: &str, path: &Path, e| Error::io(format!("{what} {}", path.display()), e);
    if let Some(dir) = paths.socket.parent() {
        crate::fsutil::create_private_dir(dir)?;
        // An existing directory keeps its mode through create_dir_all: make it private.
        set_mode(dir, 0o700).map_err(|e| io("securing", dir, e))?;
    }
    if UnixStream::connect(&paths.socket).await.is_ok() {
        return Err(link_error(format!(
            "another ipybox app already approves calls for this workspace (it listens on {})",
            paths.socket.display()
        )));
    }
    // Left behind by an app that did not stop cleanly.
    let _ = std::fs::remove_file(&paths.socket);
    let secret = crate::auth::new_token();
    if let Some(dir) = paths.secret.parent() {
        crate::fsutil::create_private_dir(dir)?;
    }
    crate::fsutil::write_private(&paths.secret, secret.as_bytes())?;
    let listener =
        UnixListener::bind(&paths.socket).map_err(|e| io("listening on", &paths.socket, e))?;
    set_mode(&paths.socket, 0o600).map_err(|e| io("securing", &paths.socket, e))?;
    tracing::debug!(socket = %paths.socket.display(), "desktop link listening");
    let socket_id = file_id(&paths.socket).unwrap_or_default();
    let kept = secret.clone();
    let secret: Arc<[u8]> = secret.into_bytes().into();
    // The connections live in the listening task: stopping it ends them all.
    let task = tokio::spawn(async move {
        let mut agents = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let executor = executor.clone();
                    let secret = secret.clone();
                    agents.spawn(async move {
                        if let Err(e) = serve_agent(stream, &secret, executor).await {
                            tracing::info!(error = %e, "an agent's link ended");
                        }
                    });
                }
                Some(_) = agents.join_next() => {}
            }
        }
    });
    Ok(LinkServer {
        paths,
        task,
        socket_id,
        secret: kept,
    })
}

fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Prove the app to an agent and have the agent prove itself; returns who it is.
async fn accept(wire: &mut Wire, secret: &[u8]) -> std::result::Result<String, String> {
    let Ok(Some(Message::Hello {
        version,
        nonce,
        agent,
    })) = wire.recv().await
    else {
        return Err("the peer did not say hello".into());
    };
    if version != VERSION {
        let reason = format!(
            "this ipybox app speaks link version {VERSION}, the agent's ipybox {version}: use the same ipybox for both"
        );
        let _ = wire
            .send(&Message::Refused {
                reason: reason.clone(),
            })
            .await;
        return Err(reason);
    }
    let ours = crate::auth::new_token();
    let welcome = Message::Welcome {
        proof: proof(secret, "app", &nonce, &ours),
        nonce: ours.clone(),
    };
    wire.send(&welcome).await.map_err(|e| e.to_string())?;
    let Ok(Some(Message::Proof { proof: given })) = wire.recv().await else {
        return Err(format!("{agent} did not prove itself"));
    };
    if !crate::auth::same_secret(
        given.as_bytes(),
        proof(secret, "agent", &ours, &nonce).as_bytes(),
    ) {
        let _ = wire
            .send(&Message::Refused {
                reason: "wrong proof: the agent does not know this app's secret".into(),
            })
            .await;
        return Err(format!("{agent} gave a wrong proof"));
    }
    wire.send(&Message::Ready)
        .await
        .map_err(|e| e.to_string())?;
    Ok(agent)
}

/// The requests an agent asked that still wait: withdrawn when its connection ends, however
/// it ends (the agent went away, the app stopped listening).
#[derive(Default)]
struct Asked(HashMap<u64, ApprovalRequest>);

impl Drop for Asked {
    fn drop(&mut self) {
        for request in self.0.values() {
            request.decide_as(
                Decision::Reject,
                DecidedBy::Nobody,
                Some("the agent went away".into()),
            );
        }
    }
}

/// One agent's connection: its calls are approved in `executor`'s session until it goes.
async fn serve_agent(stream: UnixStream, secret: &[u8], executor: CodeExecutor) -> Result<()> {
    // SAFETY: geteuid cannot fail and touches no memory.
    let own_uid = unsafe { libc::geteuid() };
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == own_uid => {}
        _ => {
            return Err(link_error(
                "a process of another user tried the desktop link",
            ));
        }
    }
    let mut wire = Wire::new(stream);
    let agent = match tokio::time::timeout(HANDSHAKE_TIMEOUT, accept(&mut wire, secret)).await {
        Ok(Ok(agent)) => agent,
        Ok(Err(why)) => return Err(link_error(why)),
        Err(_) => return Err(link_error("the agent did not prove itself in time")),
    };
    tracing::info!(%agent, "an agent's calls are approved here");
    // Decisions come back from the tasks waiting for them; one task owns the connection.
    let (to_agent, mut outbox) = mpsc::unbounded_channel::<(u64, Message)>();
    let mut approved: HashMap<u64, Approved> = HashMap::new();
    // Declared before `asked`, so that when the app stops listening (this task is aborted)
    // the requests are settled before the tasks waiting for them go.
    let mut waits = tokio::task::JoinSet::new();
    let mut asked = Asked::default();
    loop {
        let line = tokio::select! {
            line = wire.lines.next_line() => line,
            Some((id, message)) = outbox.recv() => {
                asked.0.remove(&id);
                if wire.send(&message).await.is_err() {
                    break;
                }
                continue;
            }
        };
        let message = match line {
            Ok(Some(line)) if line.len() <= MAX_LINE => serde_json::from_str::<Message>(&line),
            _ => break,
        };
        match message {
            Ok(Message::Ask {
                id,
                mut call,
                details,
            }) => {
                call.origin = format!("{}, via {agent}", call.origin);
                let Some((request, wait)) = executor.request_external(call, *details) else {
                    let refused = Message::Decided {
                        id,
                        decision: Decision::Reject,
                        decided_by: DecidedBy::Nobody,
                        reason: Some(
                            "the ipybox app has no running session for this workspace".into(),
                        ),
                    };
                    if wire.send(&refused).await.is_err() {
                        break;
                    }
                    continue;
                };
                asked.0.insert(id, request);
                let to_agent = to_agent.clone();
                waits.spawn(async move {
                    let outcome = wait.await;
                    let decided = match &outcome {
                        Ok(a) => Message::Decided {
                            id,
                            decision: Decision::Accept,
                            decided_by: a.by,
                            reason: None,
                        },
                        Err((by, refusal)) => refusal_message(id, *by, refusal.clone()),
                    };
                    let _ = to_agent.send((id, decided));
                    (id, outcome.ok())
                });
            }
            Ok(Message::Withdraw { id }) => {
                if let Some(request) = asked.0.remove(&id) {
                    request.decide_as(
                        Decision::Reject,
                        DecidedBy::Nobody,
                        Some("the agent stopped waiting".into()),
                    );
                }
            }
            Ok(Message::Called {
                id,
                outcome,
                duration_ms,
            }) => {
                // Approvals that finished are collected here, so that their outcome finds them.
                while let Some(Ok((done, Some(a)))) = waits.try_join_next() {
                    approved.insert(done, a);
                }
                if let Some(a) = approved.remove(&id) {
                    executor.report_external(a, outcome, duration_ms);
                }
            }
            Ok(other) => {
                tracing::warn!(%agent, ?other, "an agent sent a message only the app sends; closing its link");
                break;
            }
            Err(e) => {
                tracing::warn!(%agent, error = %e, "an agent sent a line that is not a link message; closing its link");
                break;
            }
        }
    }
    // The agent went away (or broke the protocol): its requests are settled as refused and
    // recorded as such.
    drop(asked);
    while waits.join_next().await.is_some() {}
    Ok(())
}

fn refusal_message(id: u64, by: DecidedBy, refusal: Refusal) -> Message {
    match refusal {
        Refusal::Rejected(reason) => Message::Decided {
            id,
            decision: Decision::Reject,
            decided_by: by,
            reason: Some(reason),
        },
        Refusal::TimedOut(t) => Message::Decided {
            id,
            decision: Decision::Reject,
            decided_by: DecidedBy::Timeout,
            reason: Some(format!(
                "nobody decided in the ipybox app within {:.0} s",
                t.as_secs_f64()
            )),
        },
    }
}

// ---------------------------------------------------------------------------------------
// The agent's side.

/// An [`ApprovalHandler`] that has every call approved by the ipybox app open on the
/// workspace (`ipybox mcp --approval desktop`). With no app open, a call is rejected with a
/// message saying how to open one.
#[derive(Debug, Clone)]
pub struct DesktopApproval {
    inner: Arc<AgentSide>,
}

#[derive(Debug)]
struct AgentSide {
    workspace: PathBuf,
    paths: LinkPaths,
    agent: String,
    next_id: AtomicU64,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
    /// Calls the app decided, by request: their link id, and whether the app approved them
    /// (then their outcome goes back to it).
    decided: Mutex<Vec<(ApprovalRequest, u64, bool)>>,
}

#[derive(Debug)]
struct Connection {
    to_app: mpsc::UnboundedSender<Message>,
    waiting: Arc<Mutex<HashMap<u64, oneshot::Sender<Message>>>>,
    closed: Arc<std::sync::atomic::AtomicBool>,
}

impl DesktopApproval {
    /// Calls made by code running on `workspace`, asked as `agent` ("ipybox mcp").
    pub fn new(workspace: &Path, agent: impl Into<String>) -> Result<DesktopApproval> {
        Ok(DesktopApproval::at(
            LinkPaths::of(workspace)?,
            workspace,
            agent,
        ))
    }

    /// [`new`](Self::new) with the link at `paths`.
    pub fn at(paths: LinkPaths, workspace: &Path, agent: impl Into<String>) -> DesktopApproval {
        DesktopApproval {
            inner: Arc::new(AgentSide {
                workspace: workspace.to_path_buf(),
                paths,
                agent: agent.into(),
                next_id: AtomicU64::new(1),
                connection: tokio::sync::Mutex::new(None),
                decided: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Pass the end of a call to the app when the app decided it: `true` when the app
    /// takes care of recording it (an approved call's outcome is sent to it; a refusal it
    /// recorded itself), `false` when it never heard of it (record it here).
    pub fn forward(&self, event: &SessionEvent) -> bool {
        let SessionEvent::ToolCall {
            request,
            outcome,
            duration_ms,
            ..
        } = event
        else {
            return false;
        };
        let found = self.inner.decided.lock().ok().and_then(|mut d| {
            let at = d.iter().position(|(r, ..)| r.same(request))?;
            Some(d.swap_remove(at))
        });
        let Some((_, id, approved)) = found else {
            return false;
        };
        if approved {
            let connection = self
                .inner
                .connection
                .try_lock()
                .ok()
                .and_then(|c| c.clone());
            if let Some(c) = connection {
                let _ = c.to_app.send(Message::Called {
                    id,
                    outcome: outcome.clone(),
                    duration_ms: *duration_ms,
                });
            }
        }
        true
    }

    fn no_app(&self, why: &str) -> String {
        format!(
            "no ipybox app approves calls for the workspace {} ({why}). Open it in the app (`ipybox {}`) and run the code again, or start `ipybox mcp` with `--approval auto` or `--approval rules FILE`",
            self.inner.workspace.display(),
            self.inner.workspace.display()
        )
    }

    /// The link to the app, connecting (and proving both ends) when there is none.
    async fn connection(&self) -> std::result::Result<Arc<Connection>, String> {
        let mut slot = self.inner.connection.lock().await;
        if let Some(c) = slot.as_ref()
            && !c.closed.load(Ordering::Acquire)
        {
            return Ok(c.clone());
        }
        *slot = None;
        let stream = match UnixStream::connect(&self.inner.paths.socket).await {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(self.no_app("the app is not open on it"));
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Err(self.no_app("the app that was open on it is gone"));
            }
            Err(e) => return Err(self.no_app(&format!("its link cannot be reached: {e}"))),
        };
        let secret = std::fs::read(&self.inner.paths.secret)
            .map_err(|e| self.no_app(&format!("its link's secret cannot be read: {e}")))?;
        let mut wire = Wire::new(stream);
        match tokio::time::timeout(
            HANDSHAKE_TIMEOUT,
            hello(&mut wire, &secret, &self.inner.agent),
        )
        .await
        {
            Ok(Ok(())) => {}
            Ok(Err(why)) => return Err(self.no_app(&why)),
            Err(_) => return Err(self.no_app("the app did not answer in time")),
        }
        let connection = Arc::new(start_connection(wire));
        *slot = Some(connection.clone());
        Ok(connection)
    }

    async fn ask(&self, request: ApprovalRequest) {
        // A link found closed only once the call is on it (the app quit a moment ago) is
        // tried once more, afresh: the new attempt finds the app, or says there is none.
        for attempt in 0..2 {
            let connection = match self.connection().await {
                Ok(c) => c,
                Err(why) => {
                    request.decide_as(Decision::Reject, DecidedBy::Nobody, Some(why));
                    return;
                }
            };
            match self.ask_on(&connection, &request).await {
                AskEnd::Settled => return,
                AskEnd::LinkClosed if attempt == 0 => {
                    connection.closed.store(true, Ordering::Release);
                }
                AskEnd::LinkClosed => {
                    request.decide_as(
                        Decision::Reject,
                        DecidedBy::Nobody,
                        Some("the ipybox app closed before the call was decided".into()),
                    );
                    return;
                }
            }
        }
    }

    /// Ask the app on `connection` and wait for its decision, or for the request to be
    /// withdrawn here.
    async fn ask_on(&self, connection: &Connection, request: &ApprovalRequest) -> AskEnd {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut w) = connection.waiting.lock() {
            w.insert(id, tx);
        }
        let call = ExternalCall {
            server: request.server_name().to_owned(),
            tool: request.tool_name().to_owned(),
            arguments: request.tool_args().clone(),
            server_description: request.server().to_owned(),
            origin: request.origin().unwrap_or("an agent").to_owned(),
        };
        if connection
            .to_app
            .send(Message::Ask {
                id,
                call,
                details: Box::new(request.details().clone()),
            })
            .is_err()
        {
            return AskEnd::LinkClosed;
        }
        let gave_up = async {
            while !request.is_decided() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        tokio::select! {
            answer = rx => match answer {
                Ok(Message::Decided { decision, decided_by, reason, .. }) => {
                    if let Ok(mut d) = self.inner.decided.lock() {
                        d.push((request.clone(), id, decision == Decision::Accept));
                    }
                    request.decide_as(decision, decided_by, reason);
                    AskEnd::Settled
                }
                _ => AskEnd::LinkClosed,
            },
            () = gave_up => {
                if let Ok(mut w) = connection.waiting.lock() {
                    w.remove(&id);
                }
                let _ = connection.to_app.send(Message::Withdraw { id });
                AskEnd::Settled
            }
        }
    }
}

/// How asking on one link ended.
enum AskEnd {
    /// Decided by the app, or withdrawn here.
    Settled,
    /// The link closed before an answer came.
    LinkClosed,
}

impl ApprovalHandler for DesktopApproval {
    fn handle(&self, request: ApprovalRequest) -> BoxFuture<'static, ()> {
        let this = self.clone();
        Box::pin(async move { this.ask(request).await })
    }
}

/// Say hello, check the app's proof, give ours.
async fn hello(wire: &mut Wire, secret: &[u8], agent: &str) -> std::result::Result<(), String> {
    let ours = crate::auth::new_token();
    let hello = Message::Hello {
        version: VERSION,
        nonce: ours.clone(),
        agent: agent.to_owned(),
    };
    wire.send(&hello).await.map_err(|e| e.to_string())?;
    let (theirs, given) = match wire.recv().await {
        Ok(Some(Message::Welcome { nonce, proof })) => (nonce, proof),
        Ok(Some(Message::Refused { reason })) => return Err(reason),
        _ => return Err("the app did not answer the link's hello".into()),
    };
    if !crate::auth::same_secret(
        given.as_bytes(),
        proof(secret, "app", &ours, &theirs).as_bytes(),
    ) {
        return Err("the process listening on the link does not know the app's secret".into());
    }
    let ours_proof = Message::Proof {
        proof: proof(secret, "agent", &theirs, &ours),
    };
    wire.send(&ours_proof).await.map_err(|e| e.to_string())?;
    match wire.recv().await {
        Ok(Some(Message::Ready)) => Ok(()),
        Ok(Some(Message::Refused { reason })) => Err(reason),
        _ => Err("the app closed the link".into()),
    }
}

/// Run a proven link: a writer task, and a reader that hands decisions to their askers.
fn start_connection(wire: Wire) -> Connection {
    let Wire { mut lines, mut out } = wire;
    let (to_app, mut outbox) = mpsc::unbounded_channel::<Message>();
    let waiting: Arc<Mutex<HashMap<u64, oneshot::Sender<Message>>>> = Arc::default();
    let closed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    tokio::spawn(async move {
        while let Some(message) = outbox.recv().await {
            let mut line = serde_json::to_vec(&message).unwrap_or_default();
            line.push(b'\n');
            if out.write_all(&line).await.is_err() {
                break;
            }
        }
    });
    let reader_waiting = waiting.clone();
    let reader_closed = closed.clone();
    tokio::spawn(async move {
        let started = Instant::now();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(message @ Message::Decided { id, .. }) = serde_json::from_str(&line)
                && let Some(tx) = reader_waiting.lock().ok().and_then(|mut w| w.remove(&id))
            {
                let _ = tx.send(message);
            }
        }
        tracing::debug!(after = ?started.elapsed(), "the desktop link closed");
        reader_closed.store(true, Ordering::Release);
        // Dropping the senders tells every asker the app is gone.
        if let Ok(mut w) = reader_waiting.lock() {
            w.clear();
        }
    });
    Connection {
        to_app,
        waiting,
        closed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proofs_differ_by_role_order_and_secret() {
        let a = proof(b"s", "app", "n1", "n2");
        assert_eq!(a.len(), 64);
        assert_eq!(a, proof(b"s", "app", "n1", "n2"));
        assert_ne!(a, proof(b"s", "agent", "n1", "n2"));
        assert_ne!(a, proof(b"s", "app", "n2", "n1"));
        assert_ne!(a, proof(b"t", "app", "n1", "n2"));
    }

    #[test]
    fn messages_are_tagged_json_lines() {
        let m = Message::Decided {
            id: 3,
            decision: Decision::Accept,
            decided_by: DecidedBy::Rule,
            reason: None,
        };
        let text = serde_json::to_string(&m).unwrap_or_default();
        assert!(text.starts_with(r#"{"type":"decided","id":3"#), "{text}");
        assert_eq!(serde_json::from_str::<Message>(&text).ok(), Some(m));
    }

    #[test]
    fn paths_are_private_short_and_per_workspace() {
        let home = Path::new("/data/ipybox");
        let a = LinkPaths::new(home, Path::new("/nonexistent/a"));
        let b = LinkPaths::new(home, Path::new("/nonexistent/b"));
        assert_ne!(a.socket, b.socket);
        assert!(a.socket.as_os_str().len() < 108, "{}", a.socket.display());
        assert!(a.secret.starts_with(home.join("workspaces")));
    }
}
