//! One app per workspace. The app that runs on a workspace holds an exclusive lock named
//! after it, and listens on a socket beside the lock; a second `ipybox open` of that
//! workspace (a notebook double-clicked in a file manager, a terminal) finds the lock held,
//! hands its request to the running app over the socket and ends, so no two processes ever
//! share a workspace's kernel, rules and audit log. An `ipybox://` link goes to the app
//! used last.
//!
//! Both live in the user's runtime directory (`$XDG_RUNTIME_DIR/ipybox`, else `run/` in
//! ipybox's data directory: 0700), the socket 0600, and each end checks that the other runs
//! as the same user. No D-Bus is involved: without a session bus (a bare X server, a
//! container) it works the same. A request can only ask to show a notebook of the
//! workspace, or propose a server, which the app then asks its person about in a native
//! dialog: nothing arriving here decides anything.
//!
//! The protocol is one JSON line each way: the request, then `{"ok": true}` or an error.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

use crate::error::{Error, Result};

/// The longest request line read (a path, or a link of at most `MAX_LINK` characters).
const MAX_REQUEST: u64 = 64 * 1024;
/// How long a running app may take to answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the socket may take to appear after its lock is taken (the app binds it at once).
const CONNECT_PATIENCE: Duration = Duration::from_secs(3);

/// What a second `ipybox open` asks of the running app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Come forward; with a notebook of the workspace, open it.
    Open {
        /// An absolute path to a notebook in the running app's workspace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        notebook: Option<PathBuf>,
    },
    /// Come forward and show what an `ipybox://` link proposes.
    Link {
        /// The link as given.
        url: String,
    },
}

/// The files that stand for one workspace's app.
#[derive(Debug, Clone)]
pub struct InstancePaths {
    dir: PathBuf,
    lock: PathBuf,
    socket: PathBuf,
}

impl InstancePaths {
    /// The files for `workspace` (canonical) under ipybox's data directory `home`.
    pub fn new(home: &Path, workspace: &Path) -> InstancePaths {
        let dir = crate::home::runtime_dir(home);
        let hash = crate::home::workspace_hash(workspace);
        InstancePaths {
            lock: dir.join(format!("app-{hash}.lock")),
            socket: dir.join(format!("app-{hash}.sock")),
            dir,
        }
    }

    /// The files for `workspace` in ipybox's data directory.
    pub fn of(workspace: &Path) -> Result<InstancePaths> {
        Ok(InstancePaths::new(&crate::home::ipybox_home()?, workspace))
    }

    /// The file naming the app used last.
    fn last(&self) -> PathBuf {
        self.dir.join("app-last")
    }
}

/// The outcome of [`claim`].
#[derive(Debug)]
pub enum Claim {
    /// This process is the workspace's app: requests arrive on the channel given.
    Owner(Owner),
    /// Another process is.
    Taken,
}

/// This process runs the workspace's app: the lock held, the socket served. Dropping it
/// stops listening and lets the lock go.
#[derive(Debug)]
pub struct Owner {
    paths: InstancePaths,
    _lock: File,
    task: tokio::task::JoinHandle<()>,
}

impl Owner {
    /// Name this app the one used last: links go to it.
    pub fn mark_used(&self) {
        let name = self
            .paths
            .socket
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Err(e) = crate::fsutil::write_private(&self.paths.last(), name.as_bytes()) {
            tracing::debug!("the app used last is not recorded: {e}");
        }
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.task.abort();
        // The lock is still ours here: nobody else has bound the path.
        let _ = std::fs::remove_file(&self.paths.socket);
    }
}

/// Become `paths`' workspace's app, or learn that another process is. Requests that arrive
/// go to `requests`. Call inside a Tokio runtime.
pub fn claim(paths: &InstancePaths, requests: mpsc::UnboundedSender<Request>) -> Result<Claim> {
    let io = |what: &str, path: &Path, e| Error::io(format!("{what} {}", path.display()), e);
    crate::fsutil::create_private_dir(&paths.dir)?;
    secure_dir(&paths.dir).map_err(|e| io("securing", &paths.dir, e))?;
    let lock = open_lock(&paths.lock).map_err(|e| io("opening", &paths.lock, e))?;
    // SAFETY: flock on a descriptor this function owns; it touches no memory.
    if unsafe {
        libc::flock(
            std::os::fd::AsRawFd::as_raw_fd(&lock),
            libc::LOCK_EX | libc::LOCK_NB,
        )
    } != 0
    {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EWOULDBLOCK) => Ok(Claim::Taken),
            _ => Err(io("locking", &paths.lock, e)),
        };
    }
    // Left behind by an app that ended without cleaning up; the lock says nobody serves it.
    let _ = std::fs::remove_file(&paths.socket);
    let listener =
        UnixListener::bind(&paths.socket).map_err(|e| io("listening on", &paths.socket, e))?;
    set_mode(&paths.socket, 0o600).map_err(|e| io("securing", &paths.socket, e))?;
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let requests = requests.clone();
            tokio::spawn(async move {
                if let Err(e) = answer(stream, &requests).await {
                    tracing::warn!("a request from another `ipybox open` was refused: {e}");
                }
            });
        }
    });
    let owner = Owner {
        paths: paths.clone(),
        _lock: lock,
        task,
    };
    owner.mark_used();
    Ok(Claim::Owner(owner))
}

/// Hand `request` to the app running on `paths`' workspace (whose lock is taken).
pub async fn send(paths: &InstancePaths, request: &Request) -> Result<()> {
    let deadline = tokio::time::Instant::now() + CONNECT_PATIENCE;
    let stream = loop {
        match UnixStream::connect(&paths.socket).await {
            Ok(stream) => break stream,
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(Error::io(
                    format!(
                        "ipybox already runs on this workspace but does not answer on {}",
                        paths.socket.display()
                    ),
                    e,
                ));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    ask(stream, request).await
}

/// Hand a link to the app used last, else to any running app; `false` when none runs.
pub async fn send_to_any(home: &Path, request: &Request) -> Result<bool> {
    let dir = crate::home::runtime_dir(home);
    let mut sockets: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().is_some_and(|n| {
                        let n = n.to_string_lossy();
                        n.starts_with("app-") && n.ends_with(".sock")
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    if let Ok(last) = std::fs::read_to_string(dir.join("app-last")) {
        let last = dir.join(last.trim());
        if let Some(at) = sockets.iter().position(|s| *s == last) {
            let first = sockets.remove(at);
            sockets.insert(0, first);
        }
    }
    for socket in sockets {
        // A socket nobody serves is one an app left behind: try the next.
        let Ok(Ok(stream)) =
            tokio::time::timeout(ANSWER_TIMEOUT, UnixStream::connect(&socket)).await
        else {
            continue;
        };
        ask(stream, request).await?;
        return Ok(true);
    }
    Ok(false)
}

async fn ask(mut stream: UnixStream, request: &Request) -> Result<()> {
    same_user(&stream)?;
    let mut line = serde_json::to_string(request).unwrap_or_default();
    line.push('\n');
    let exchange = async {
        stream.write_all(line.as_bytes()).await?;
        let mut reply = String::new();
        BufReader::new(&mut stream)
            .take(MAX_REQUEST)
            .read_line(&mut reply)
            .await?;
        Ok::<_, std::io::Error>(reply)
    };
    let reply = match tokio::time::timeout(ANSWER_TIMEOUT, exchange).await {
        Ok(Ok(reply)) => reply,
        Ok(Err(e)) => return Err(Error::io("asking the running ipybox app", e)),
        Err(_) => {
            return Err(Error::config(
                "the running ipybox app did not answer in time",
            ));
        }
    };
    let reply: Reply = serde_json::from_str(&reply)
        .map_err(|_| Error::config("the running ipybox app answered something else"))?;
    match reply.error {
        None => Ok(()),
        Some(e) => Err(Error::config(format!(
            "the running ipybox app refused: {e}"
        ))),
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Reply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

async fn answer(mut stream: UnixStream, requests: &mpsc::UnboundedSender<Request>) -> Result<()> {
    same_user(&stream)?;
    let mut line = String::new();
    let mut reader = BufReader::new(&mut stream).take(MAX_REQUEST);
    let read = reader.read_line(&mut line);
    let read = tokio::time::timeout(ANSWER_TIMEOUT, read).await;
    drop(reader);
    match read {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return Err(Error::io("reading a request", e)),
        Err(_) => return Err(Error::config("no request came in time")),
    }
    let reply = match serde_json::from_str::<Request>(&line) {
        Ok(request) => {
            let _ = requests.send(request);
            Reply::default()
        }
        Err(_) => Reply {
            error: Some("not a request this app knows".into()),
        },
    };
    let mut out = serde_json::to_string(&reply).unwrap_or_default();
    out.push('\n');
    stream
        .write_all(out.as_bytes())
        .await
        .map_err(|e| Error::io("answering a request", e))
}

/// The peer must run as this user (the directory already keeps others out).
fn same_user(stream: &UnixStream) -> Result<()> {
    // SAFETY: geteuid cannot fail and touches no memory.
    let own = unsafe { libc::geteuid() };
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == own => Ok(()),
        _ => Err(Error::config("the other end runs as another user")),
    }
}

fn open_lock(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let _ = file.flush();
    Ok(file)
}

/// The directory must be this user's, and only theirs.
fn secure_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(dir)?;
    // SAFETY: geteuid cannot fail and touches no memory.
    let own = unsafe { libc::geteuid() };
    if !meta.is_dir() || meta.uid() != own {
        return Err(std::io::Error::other(
            "it is not a directory of this user's",
        ));
    }
    set_mode(dir, 0o700)
}

fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_claim_finds_the_workspace_taken_and_reaches_the_first() {
        let home = tempfile::tempdir().expect("tempdir");
        let paths = InstancePaths::new(home.path(), Path::new("/some/workspace"));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let Claim::Owner(owner) = claim(&paths, tx.clone()).expect("claim") else {
            panic!("the first claim owns the workspace");
        };
        assert!(
            matches!(claim(&paths, tx.clone()).expect("claim"), Claim::Taken),
            "a second claim on the same workspace is refused while the first holds it"
        );
        let other = InstancePaths::new(home.path(), Path::new("/another/workspace"));
        assert!(
            matches!(claim(&other, tx.clone()).expect("claim"), Claim::Owner(_)),
            "another workspace gets its own app"
        );
        let request = Request::Open {
            notebook: Some("/some/workspace/b.ipynb".into()),
        };
        send(&paths, &request).await.expect("sent");
        assert_eq!(
            rx.recv().await,
            Some(request),
            "the running app receives it"
        );
        drop(owner);
        assert!(
            matches!(claim(&paths, tx).expect("claim"), Claim::Owner(_)),
            "once the app ends, the workspace can be opened again"
        );
    }

    #[tokio::test]
    async fn a_link_goes_to_the_app_used_last_and_nowhere_without_one() {
        let home = tempfile::tempdir().expect("tempdir");
        let link = Request::Link {
            url: "ipybox://add-server".into(),
        };
        assert!(
            !send_to_any(home.path(), &link).await.expect("no app"),
            "without a running app nobody receives it"
        );
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (tx2, mut rx2) = mpsc::unbounded_channel();
        let a = claim(&InstancePaths::new(home.path(), Path::new("/a")), tx).expect("a");
        let Claim::Owner(b) =
            claim(&InstancePaths::new(home.path(), Path::new("/b")), tx2).expect("b")
        else {
            panic!("b owns /b");
        };
        b.mark_used();
        assert!(send_to_any(home.path(), &link).await.expect("sent"));
        assert_eq!(rx2.recv().await, Some(link), "the app used last gets it");
        assert!(rx.try_recv().is_err());
        drop(a);
    }

    #[tokio::test]
    async fn without_a_runtime_directory_the_claim_fails_at_once_instead_of_waiting() {
        let home = tempfile::tempdir().expect("tempdir");
        // Where the directory should be, a file: nothing can be created there.
        std::fs::write(home.path().join("run"), "").expect("file");
        let paths = InstancePaths {
            dir: home.path().join("run"),
            lock: home.path().join("run/app-x.lock"),
            socket: home.path().join("run/app-x.sock"),
        };
        let (tx, _rx) = mpsc::unbounded_channel();
        let started = std::time::Instant::now();
        assert!(
            claim(&paths, tx).is_err(),
            "an error the app logs before opening alone"
        );
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[tokio::test]
    async fn garbage_on_the_socket_is_refused() {
        let home = tempfile::tempdir().expect("tempdir");
        let paths = InstancePaths::new(home.path(), Path::new("/w"));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let _owner = claim(&paths, tx).expect("claim");
        let mut stream = UnixStream::connect(&paths.socket).await.expect("connect");
        stream
            .write_all(b"{\"type\":\"approve\",\"id\":1}\n")
            .await
            .expect("write");
        let mut reply = String::new();
        BufReader::new(&mut stream)
            .read_line(&mut reply)
            .await
            .expect("read");
        assert!(reply.contains("error"), "{reply}");
        assert!(rx.try_recv().is_err(), "nothing reaches the app");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&paths.socket)
            .expect("socket")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "only the user can connect");
    }
}
