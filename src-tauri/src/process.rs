//! Child processes that never outlive ipybox.
//!
//! Every long-lived child (the Kernel Gateway or srt running it, stdio MCP servers) is
//! started here, and the programs ipybox runs briefly on its own behalf (pip, npm, `node
//! --version`) are made here ([`host_command`]), in a neutral directory. A long-lived child
//! gets its own process group and `PR_SET_PDEATHSIG`, so the kernel signals it when ipybox
//! dies (Linux; other systems have no such signal), and is forked from one thread that lives
//! as long as the process (the death signal fires when the *thread* that forked the child
//! exits, so spawning from a short-lived runtime thread would kill the child early).
//! Stopping sends SIGTERM to the whole tree, then SIGKILL after a timeout.

use std::collections::{HashMap, HashSet};
use std::io;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::{Duration, Instant};

type SpawnJob = Box<dyn FnOnce() + Send>;

/// The directory host-side helpers run in: pip, the unsandboxed gateway, MCP servers without
/// an explicit `cwd`. It is an empty directory in ipybox's data directory, never the
/// workspace: Python puts the working directory first on the module path (`-m`, `-c`), npm
/// and uv look for projects and configuration there, and kernel code can write the
/// workspace. Falls back to `/` when the data directory cannot be created.
pub fn neutral_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let made = crate::home::ipybox_home().and_then(|home| {
            let dir = home.join("empty");
            std::fs::create_dir_all(&dir)
                .map_err(|e| crate::error::Error::io(format!("creating {}", dir.display()), e))?;
            Ok(dir)
        });
        match made {
            Ok(dir) => dir,
            Err(e) => {
                tracing::warn!(error = %e, "no neutral directory in the data directory; using /");
                PathBuf::from("/")
            }
        }
    })
}

/// A command for a program ipybox runs on the host on its own behalf, in [`neutral_dir`],
/// inheriting no descriptor beyond its stdio.
pub fn host_command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(neutral_dir());
    // SAFETY: the hook only calls async-signal-safe functions.
    unsafe {
        cmd.pre_exec(|| {
            inherit_only_stdio();
            Ok(())
        });
    }
    cmd
}

/// Between fork and exec: only stdin, stdout and stderr reach the program, every other
/// descriptor is closed when it starts (close-on-exec, so the standard library's own pipe
/// still reports a failed exec). Descriptors libraries open without close-on-exec — a GLib
/// or D-Bus pipe the UI thread reads — would otherwise live as long as the child does, and a
/// read waiting for their end would wait for it.
///
/// # Safety
/// Call only between fork and exec; it calls only async-signal-safe functions (close_range,
/// getrlimit, fcntl).
unsafe fn inherit_only_stdio() {
    #[cfg(target_os = "linux")]
    // SAFETY: async-signal-safe system calls on the child's own descriptors.
    unsafe {
        if libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ) != 0
        {
            // Linux before 5.11: one descriptor at a time, up to the limit.
            let mut rlimit: libc::rlimit = std::mem::zeroed();
            let limit = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rlimit) == 0 {
                rlimit.rlim_cur.min(1 << 16) as libc::c_int
            } else {
                1024
            };
            for fd in 3..limit {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
    }
}

fn spawner() -> &'static std::sync::Mutex<mpsc::Sender<SpawnJob>> {
    static SPAWNER: OnceLock<std::sync::Mutex<mpsc::Sender<SpawnJob>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("ipybox-spawner".into())
            .spawn(move || {
                for job in rx {
                    job();
                }
            })
            .expect("spawning a thread at start-up");
        std::sync::Mutex::new(tx)
    })
}

/// Run `spawn` on the spawner thread and hand its result to `reply`.
fn on_spawner<T: Send + 'static>(
    spawn: impl FnOnce() -> T + Send + 'static,
    reply: impl FnOnce(T) + Send + 'static,
) -> io::Result<()> {
    spawner()
        .lock()
        .map_err(|_| io::Error::other("spawner lock poisoned"))?
        .send(Box::new(move || reply(spawn())))
        .map_err(|_| io::Error::other("spawner thread is gone"))
}

/// What a supervised child does between fork and exec: lead a new process group, get
/// `death_signal` when ipybox dies (Linux; elsewhere a child can outlive a killed ipybox),
/// inherit no descriptor beyond its stdio ([`inherit_only_stdio`]), and exit at once if ipybox died before
/// that was set up.
fn supervision(death_signal: i32) -> impl FnMut() -> io::Result<()> + Send + Sync + 'static {
    let parent = std::process::id() as libc::pid_t;
    move || {
        // SAFETY: runs between fork and exec and only calls async-signal-safe functions
        // (setpgid, prctl, close_range, getrlimit, fcntl, getppid, _exit).
        unsafe {
            if libc::setpgid(0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            #[cfg(target_os = "linux")]
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                death_signal as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            #[cfg(not(target_os = "linux"))]
            let _ = death_signal;
            inherit_only_stdio();
            // ipybox may have died between fork and prctl.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
        }
        Ok(())
    }
}

/// [`spawn_supervised_passing`] with nothing passed.
#[cfg(test)]
pub fn spawn_supervised(cmd: Command, death_signal: i32) -> io::Result<Child> {
    spawn_supervised_passing(cmd, death_signal, None)
}

/// Spawn `cmd` as a supervised child: a new process group led by the child, and a
/// death signal (`death_signal`, e.g. `libc::SIGTERM`) delivered when ipybox exits.
/// `passed` — a descriptor and the number the child gets it as — is the one descriptor past
/// the standard three the child inherits (a private channel from the child back to ipybox).
pub fn spawn_supervised_passing(
    mut cmd: Command,
    death_signal: i32,
    passed: Option<(std::os::fd::OwnedFd, std::os::fd::RawFd)>,
) -> io::Result<Child> {
    // SAFETY: the hook only calls async-signal-safe functions.
    unsafe {
        cmd.pre_exec(supervision(death_signal));
    }
    if let Some((fd, number)) = passed {
        use std::os::fd::AsRawFd;
        // After supervision's close-on-exec of everything past stdio: dup2 leaves the copy
        // without it. The original stays close-on-exec and goes with `cmd` after the spawn.
        // SAFETY: dup2 is async-signal-safe; `fd` is open until `cmd` is dropped.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(fd.as_raw_fd(), number) < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let (tx, rx) = mpsc::channel();
    on_spawner(move || cmd.spawn(), move |r| drop(tx.send(r)))?;
    rx.recv()
        .map_err(|_| io::Error::other("spawner thread is gone"))?
}

/// [`spawn_supervised_passing`] for a Tokio command, whose pipes are then read and written
/// asynchronously (an MCP server over stdio). Must be called within a Tokio runtime.
pub async fn spawn_supervised_async(
    mut cmd: tokio::process::Command,
    death_signal: i32,
) -> io::Result<tokio::process::Child> {
    // SAFETY: the hook only calls async-signal-safe functions.
    unsafe {
        cmd.pre_exec(supervision(death_signal));
    }
    let runtime = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    on_spawner(
        move || {
            let _entered = runtime.enter();
            cmd.spawn()
        },
        move |r| drop(tx.send(r)),
    )?;
    rx.await
        .map_err(|_| io::Error::other("spawner thread is gone"))?
}

/// Is there a process `pid` (possibly one that exited but was not reaped yet)? Works on
/// every Unix: `kill(pid, 0)` succeeds, or fails with `EPERM` for another user's process.
pub fn pid_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 sends nothing; it only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Parent pid of every process, read from `/proc`.
#[cfg(target_os = "linux")]
fn parent_map() -> HashMap<i32, i32> {
    let mut map = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return map;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
            if let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) {
                let mut fields = rest.split_whitespace();
                let _state = fields.next();
                if let Some(ppid) = fields.next().and_then(|s| s.parse().ok()) {
                    map.insert(pid, ppid);
                }
            }
        }
    }
    map
}

/// Parent pid of every process, from `ps` (no `/proc` here).
#[cfg(not(target_os = "linux"))]
fn parent_map() -> HashMap<i32, i32> {
    ps(&["-A", "-o", "pid=", "-o", "ppid="])
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace().map(str::parse::<i32>);
            Some((fields.next()?.ok()?, fields.next()?.ok()?))
        })
        .collect()
}

/// The output of `ps` with `args`, empty when it cannot run.
#[cfg(not(target_os = "linux"))]
fn ps(args: &[&str]) -> String {
    Command::new("ps")
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// `root` and all its descendants that are alive now.
pub fn process_tree(root: i32) -> Vec<i32> {
    let parents = parent_map();
    let mut tree = vec![root];
    let mut seen: HashSet<i32> = HashSet::from([root]);
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        for (&child, &ppid) in &parents {
            if ppid == p && seen.insert(child) {
                tree.push(child);
            }
        }
        i += 1;
    }
    if !parents.contains_key(&root) {
        tree.retain(|&p| p != root);
    }
    tree
}

/// Make this process the reaper of its orphaned descendants (`PR_SET_CHILD_SUBREAPER`):
/// the processes of a sandbox whose parent (srt) is gone become ipybox's children instead
/// of init's, so stopping a session reaps them and return only when they are gone (an
/// init that reaps slowly left them as zombies for two seconds). For programs that own their
/// process (the `ipybox` binary); a library user decides for theirs.
/// Linux only; elsewhere orphans go to init as usual.
pub fn become_subreaper() {
    // SAFETY: a plain prctl on this process.
    #[cfg(target_os = "linux")]
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// State letter and parent pid of `pid`, if it exists.
#[cfg(not(target_os = "linux"))]
fn stat(pid: i32) -> Option<(char, i32)> {
    let out = ps(&["-o", "stat=", "-o", "ppid=", "-p", &pid.to_string()]);
    let mut fields = out.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

/// State letter and parent pid of `pid`, if it exists.
#[cfg(target_os = "linux")]
fn stat(pid: i32) -> Option<(char, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

fn alive(pid: i32) -> bool {
    // A zombie still answers kill(0); treat it as gone.
    stat(pid).is_some_and(|(state, _)| state != 'Z')
}

/// Has `pid` ended for good? A zombie that is ipybox's own child (an orphan it inherited as
/// subreaper, or the root) is reaped here; one that belongs to a live process of the tree
/// is not gone yet; one that belongs to someone else (init) is theirs to reap.
fn gone(pid: i32, tree: &[i32]) -> bool {
    let me = std::process::id() as i32;
    match stat(pid) {
        None => true,
        Some(('Z', ppid)) if ppid == me => {
            let mut status = 0;
            // SAFETY: reaping one specific child of ours that has exited.
            unsafe {
                libc::waitpid(pid, &mut status, libc::WNOHANG);
            }
            stat(pid).is_none()
        }
        Some(('Z', ppid)) => !tree.contains(&ppid),
        Some(_) => false,
    }
}

fn signal_all(pids: &[i32], sig: i32) {
    for &pid in pids {
        // SAFETY: plain syscalls on pids we collected; a stale pid yields ESRCH.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// Terminate `child` and every descendant: SIGTERM to all of them, wait up to `grace`,
/// then SIGKILL whatever is left. Descendants that left the process group (kernels run in
/// their own sessions) are found through `/proc`. Reaps `child`.
pub fn terminate_tree(child: &mut Child, grace: Duration) {
    let root = child.id() as i32;
    let mut tree = process_tree(root);
    // Descendants first: a gateway shutting down waits for its kernels to exit, which is
    // instant when they are already gone.
    let descendants: Vec<i32> = tree.iter().copied().filter(|&p| p != root).collect();
    signal_all(&descendants, libc::SIGTERM);
    let settle = Instant::now() + Duration::from_millis(200);
    while descendants.iter().any(|&p| alive(p)) && Instant::now() < settle {
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: signalling the process group we created in spawn_supervised.
    unsafe {
        libc::kill(-root, libc::SIGTERM);
    }
    signal_all(&tree, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    loop {
        let _ = child.try_wait();
        // Children forked during shutdown (a kernel restarted by its manager) are caught on
        // the next scan.
        for pid in process_tree(root) {
            if !tree.contains(&pid) {
                signal_all(&[pid], libc::SIGTERM);
                tree.push(pid);
            }
        }
        let snapshot = tree.clone();
        tree.retain(|&p| !gone(p, &snapshot));
        if tree.is_empty() || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if tree.iter().any(|&p| alive(p)) {
        tracing::warn!(pids = ?tree, "processes ignored SIGTERM; sending SIGKILL");
        // SAFETY: as above.
        unsafe {
            libc::kill(-root, libc::SIGKILL);
        }
        signal_all(&tree, libc::SIGKILL);
        let end = Instant::now() + Duration::from_secs(1);
        while Instant::now() < end {
            let snapshot = tree.clone();
            tree.retain(|&p| !gone(p, &snapshot));
            if tree.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A descriptor ipybox holds without close-on-exec (GLib's and D-Bus's pipes are such)
    /// does not reach a child: a Kernel Gateway that inherits the write end of a pipe the
    /// UI thread reads keeps that read waiting for as long as the gateway lives.
    #[test]
    fn no_child_inherits_a_descriptor_beyond_its_stdio() {
        let mut fds = [0; 2];
        // SAFETY: a fresh pipe, both ends closed below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let probe = |fd: i32, supervised: bool| {
            let mut cmd = host_command("sh");
            cmd.arg("-c")
                .arg(format!(
                    "[ -e /proc/self/fd/{fd} ] && echo open || echo closed"
                ))
                .stdout(std::process::Stdio::piped());
            let child = if supervised {
                spawn_supervised(cmd, libc::SIGKILL)
            } else {
                cmd.spawn()
            };
            let out = child.expect("spawn sh").wait_with_output().expect("wait");
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        };
        // A long-lived child (the gateway) and a helper ipybox runs briefly (pip, uv, npm).
        let seen: Vec<String> = [
            (fds[0], true),
            (fds[1], true),
            (fds[0], false),
            (fds[1], false),
        ]
        .into_iter()
        .map(|(fd, supervised)| probe(fd, supervised))
        .collect();
        // SAFETY: closing the pipe opened above.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        assert_eq!(seen, ["closed"; 4]);
    }

    #[test]
    fn pid_exists_tells_live_from_gone() {
        assert!(pid_exists(std::process::id()));
        assert!(pid_exists(1), "init is always there (EPERM or not)");
        let mut child = Command::new("true").spawn().expect("spawn true");
        let pid = child.id();
        child.wait().expect("wait");
        assert!(!pid_exists(pid));
        assert!(!pid_exists(0));
        assert!(!pid_exists(u32::MAX));
    }

    #[test]
    fn terminates_a_tree_including_children_in_other_sessions() {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("setsid sleep 30 & sleep 30 & wait");
        let mut child = spawn_supervised(cmd, libc::SIGTERM).expect("spawn sh");
        let root = child.id() as i32;
        let deadline = Instant::now() + Duration::from_secs(5);
        while process_tree(root).len() < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let tree = process_tree(root);
        assert_eq!(tree.len(), 3, "sh and two sleeps are in the tree: {tree:?}");
        terminate_tree(&mut child, Duration::from_secs(2));
        for pid in tree {
            assert!(
                !alive(pid),
                "process {pid} must be gone after terminate_tree"
            );
        }
    }
}
