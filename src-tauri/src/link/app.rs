//! The app's end of the desktop link: it listens on the workspace's socket, proves itself
//! to each agent that proves itself, and has the agents' calls approved by the app's
//! dialog, rules and audit log.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

use super::wire::{
    HANDSHAKE_TIMEOUT, LinkPaths, MAX_LINE, Message, VERSION, Wire, link_error, proof,
};
use crate::approval::{ApprovalRequest, Approved, Decision, Refusal};
use crate::error::{Error, Result};
use crate::events::DecidedBy;
use crate::executor::CodeExecutor;

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
            Ok(Message::AskProgram { id, mut request }) => {
                // The app's side names the agent as it proved itself, before its own words.
                request.agent = format!("{}, via {agent},", request.agent);
                // What the agent's side says of the program is read again here.
                let params = crate::mcp::ServerParams::program(
                    request.command.clone(),
                    request.args.clone(),
                    request.env.clone(),
                    request.cwd.clone(),
                );
                request.sandboxed = crate::registry::srt_policy(&params).is_some();
                let (executor, to_agent) = (executor.clone(), to_agent.clone());
                // Asked beside the calls: a person reading the question holds up nothing else.
                tokio::spawn(async move {
                    let verdict = executor.decide_program(*request).await;
                    let _ = to_agent.send((
                        id,
                        Message::ProgramDecided {
                            id,
                            allowed: verdict.is_ok(),
                            reason: verdict.err(),
                        },
                    ));
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
