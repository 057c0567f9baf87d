//! What crosses the desktop link and where it is: the messages (JSON Lines tagged by
//! `type`), one side's framing of them, the proofs both sides give, and the paths of the
//! socket and the secret.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::approval::{Decision, ExternalCall};
use crate::error::{Error, Result};
use crate::events::{CallOutcome, DecidedBy};

/// The protocol's version; a peer with another one is refused with a message saying so.
/// `ask_program` / `program_decided` came later within version 1: an older app closes the
/// link on them, and the agent's side then refuses to start the program (it fails safe).
pub(super) const VERSION: u32 = 1;
/// How long a connection may take to prove itself.
pub(super) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest line either side accepts.
pub(super) const MAX_LINE: usize = 4 << 20;

/// One message on the link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Message {
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
    /// Agent → app: the agent asks to register a server that starts a program on this
    /// computer; the app's person (or a rule written for it) decides.
    AskProgram {
        id: u64,
        request: Box<crate::approval::ProgramRequest>,
    },
    /// App → agent: whether the program of `id` may start, and if not, why.
    ProgramDecided {
        id: u64,
        allowed: bool,
        reason: Option<String>,
    },
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

pub(super) fn proof(secret: &[u8], role: &str, first: &str, second: &str) -> String {
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

pub(super) fn link_error(what: impl Into<String>) -> Error {
    Error::config(what)
}

/// One side of a connection: lines in, lines out.
pub(super) struct Wire {
    pub(super) lines: tokio::io::Lines<BufReader<tokio::net::unix::OwnedReadHalf>>,
    pub(super) out: tokio::net::unix::OwnedWriteHalf,
}

impl Wire {
    pub(super) fn new(stream: UnixStream) -> Wire {
        let (read, out) = stream.into_split();
        Wire {
            lines: BufReader::new(read).lines(),
            out,
        }
    }

    pub(super) async fn send(&mut self, message: &Message) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.out.write_all(&line).await
    }

    /// The next message; `None` at the end. A line that is not a message is an error.
    pub(super) async fn recv(&mut self) -> std::io::Result<Option<Message>> {
        match self.lines.next_line().await? {
            None => Ok(None),
            Some(line) if line.len() > MAX_LINE => Err(std::io::Error::other("line too long")),
            Some(line) => serde_json::from_str(&line)
                .map(Some)
                .map_err(|e| std::io::Error::other(format!("not a link message: {e}"))),
        }
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
