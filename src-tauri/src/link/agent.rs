//! The agent's end of the desktop link (`ipybox mcp --approval desktop`): it asks the app
//! open on the workspace to approve each call, and reports the outcome of the calls the
//! app approved.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};

use super::wire::{HANDSHAKE_TIMEOUT, LinkPaths, Message, VERSION, Wire, proof};
use crate::approval::{ApprovalHandler, ApprovalRequest, Decision, ExternalCall};
use crate::error::Result;
use crate::events::{DecidedBy, SessionEvent};

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

impl DesktopApproval {
    /// Ask the app whether the program of `request` may start; no app, no yes.
    async fn ask_program(
        &self,
        request: crate::approval::ProgramRequest,
    ) -> crate::approval::ProgramVerdict {
        let connection = self.connection().await?;
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut w) = connection.waiting.lock() {
            w.insert(id, tx);
        }
        let asked = Message::AskProgram {
            id,
            request: Box::new(request),
        };
        if connection.to_app.send(asked).is_err() {
            return Err("the ipybox app closed before it was asked".into());
        }
        match rx.await {
            Ok(Message::ProgramDecided { allowed: true, .. }) => Ok(DecidedBy::Person),
            Ok(Message::ProgramDecided { reason, .. }) => {
                Err(reason.unwrap_or_else(|| "the ipybox app said no".into()))
            }
            _ => Err("the ipybox app closed before it decided".into()),
        }
    }
}

impl ApprovalHandler for DesktopApproval {
    fn handle(&self, request: ApprovalRequest) -> BoxFuture<'static, ()> {
        let this = self.clone();
        Box::pin(async move { this.ask(request).await })
    }

    /// The app open on the workspace decides, as for a call: its rules, then its person in
    /// a native dialog.
    fn start_program(
        &self,
        request: crate::approval::ProgramRequest,
    ) -> BoxFuture<'static, crate::approval::ProgramVerdict> {
        let this = self.clone();
        Box::pin(async move { this.ask_program(request).await })
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
            if let Ok(message @ (Message::Decided { id, .. } | Message::ProgramDecided { id, .. })) =
                serde_json::from_str(&line)
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
