//! TCP sockets that live inside the sandbox's network namespace.
//!
//! On Linux srt runs its command in a fresh network namespace that has only its own
//! loopback, so neither side can reach the other over `127.0.0.1`. ipybox does not open any
//! door in the sandbox for that (no Unix sockets, no proxy route): a small helper process
//! joins the sandbox's network namespace from outside and creates sockets there, which it
//! hands back over a socket pair (`SCM_RIGHTS`). A socket keeps the namespace it was created
//! in, so ipybox can `connect()` it to the gateway inside the sandbox. Nothing listens for
//! the kernel: its tool calls come back over its own Jupyter channel, through the gateway.
//!
//! Joining is two `setns` calls: first into the user namespace that owns the network
//! namespace (found with `NS_GET_USERNS`; ipybox's user created it, so it may), then into the
//! network namespace. `setns` into a user namespace refuses multithreaded callers, hence a
//! forked, single-threaded helper. Between `fork` and `_exit` the helper only makes plain
//! system calls on memory prepared before the fork: no allocation, no locks.
//!
//! The helper doubles as a watchdog: when its socket pair reports end-of-file (ipybox stopped
//! the sandbox, or died, even by SIGKILL), it sends SIGTERM to srt, waits up to three seconds,
//! then SIGKILLs every process of the sandbox it was told about, through pidfds (immune to
//! pid reuse). Killing the sandbox's first process, the init of its pid namespace, takes
//! every process inside with it.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::kernel::connector::{ConnectFuture, Connector};
use crate::process;

/// `ioctl` request returning the user namespace that owns a namespace (`_IO(0xb7, 0x1)`).
const NS_GET_USERNS: libc::c_ulong = 0xb701;
/// At most this many sandbox processes are watched (srt, its socats, bwrap, the init).
const MAX_WATCHED: usize = 16;
/// After end-of-file, how long srt gets to tear the sandbox down before SIGKILL.
const WATCHDOG_GRACE_MS: i64 = 3000;

const OP_SOCKET: u8 = b'S';

/// The network namespace identity of `pid` (`net:[inode]`).
fn net_ns(pid: i32) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/ns/net")).ok()
}

/// The outermost process under `root` that runs in a network namespace other than
/// ipybox's: the sandbox's first process (bwrap's child, the init of its pid namespace).
pub fn find_sandbox(root: i32) -> Option<i32> {
    let own = net_ns(std::process::id() as i32)?;
    // process_tree lists parents before children.
    process::process_tree(root)
        .into_iter()
        .find(|&pid| net_ns(pid).is_some_and(|ns| ns != own))
}

/// A helper process inside the sandbox's network namespace that creates sockets on request.
#[derive(Debug)]
pub struct NetnsHelper {
    chan: Mutex<UnixStream>,
    pid: libc::pid_t,
}

fn last_error(context: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{context}: {e}"))
}

fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: a plain system call; a valid fd is owned by the caller.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: `fd` is a fresh descriptor we own.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

impl NetnsHelper {
    /// Join the network namespace of `sandbox_pid`. `watched` are the processes to kill when
    /// ipybox goes away; `srt` (one of them) receives SIGTERM first.
    pub fn start(sandbox_pid: i32, watched: &[i32], srt: i32) -> io::Result<NetnsHelper> {
        let net: OwnedFd = std::fs::File::open(format!("/proc/{sandbox_pid}/ns/net"))
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("opening the sandbox's network namespace: {e}"),
                )
            })?
            .into();
        // SAFETY: ioctl on a namespace fd we own; returns a new fd or -1.
        let user = unsafe { libc::ioctl(net.as_raw_fd(), NS_GET_USERNS as _) };
        if user < 0 {
            return Err(last_error(
                "finding the user namespace that owns the sandbox's network (NS_GET_USERNS)",
            ));
        }
        // SAFETY: `user` is a fresh descriptor we own.
        let user = unsafe { OwnedFd::from_raw_fd(user) };

        let mut pidfds = [-1 as RawFd; MAX_WATCHED];
        let mut owned_pidfds = Vec::new();
        let mut term_index = usize::MAX;
        for &pid in watched.iter().take(MAX_WATCHED) {
            if let Some(fd) = pidfd_open(pid) {
                if pid == srt {
                    term_index = owned_pidfds.len();
                }
                pidfds[owned_pidfds.len()] = fd.as_raw_fd();
                owned_pidfds.push(fd);
            }
        }
        let n_pidfds = owned_pidfds.len();

        let (ours, theirs) = UnixStream::pair()?;
        let mut keep = [-1 as RawFd; MAX_WATCHED + 3];
        keep[0] = theirs.as_raw_fd();
        keep[1] = net.as_raw_fd();
        keep[2] = user.as_raw_fd();
        keep[3..3 + n_pidfds].copy_from_slice(&pidfds[..n_pidfds]);
        let n_keep = 3 + n_pidfds;
        keep[..n_keep].sort_unstable();

        let chan_fd = theirs.as_raw_fd();
        let (net_fd, user_fd) = (net.as_raw_fd(), user.as_raw_fd());
        // SAFETY: fork; the child runs `helper_main`, which only makes system calls on the
        // stack data above and never returns.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(last_error("starting the sandbox network helper (fork)"));
        }
        if pid == 0 {
            // SAFETY: we are the single-threaded child; see helper_main.
            unsafe {
                helper_main(
                    chan_fd,
                    net_fd,
                    user_fd,
                    &keep[..n_keep],
                    &pidfds[..n_pidfds],
                    term_index,
                )
            }
        }
        drop(theirs);
        drop(net);
        drop(user);
        drop(owned_pidfds);
        let helper = NetnsHelper {
            chan: Mutex::new(ours),
            pid,
        };
        let mut chan = helper.lock()?;
        chan.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut status = [0u8; 4];
        chan.read_exact(&mut status).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("the sandbox network helper did not report back: {e}"),
            )
        })?;
        let status = i32::from_le_bytes(status);
        drop(chan);
        if status != 0 {
            let step = if status >> 16 == 1 {
                "entering the sandbox's user namespace"
            } else {
                "entering the sandbox's network namespace"
            };
            let e = io::Error::from_raw_os_error(status & 0xffff);
            return Err(io::Error::new(e.kind(), format!("{step} failed: {e}")));
        }
        Ok(helper)
    }

    fn lock(&self) -> io::Result<std::sync::MutexGuard<'_, UnixStream>> {
        self.chan
            .lock()
            .map_err(|_| io::Error::other("sandbox network helper lock poisoned"))
    }

    fn request(&self, op: u8, port: u16) -> io::Result<OwnedFd> {
        let mut chan = self.lock()?;
        let [hi, lo] = port.to_be_bytes();
        chan.write_all(&[op, hi, lo])?;
        let mut errno = [0u8; 4];
        let mut control = [0u64; 8];
        let mut iov = libc::iovec {
            iov_base: errno.as_mut_ptr().cast(),
            iov_len: errno.len(),
        };
        // SAFETY: zeroed msghdr is valid; pointers reference live stack buffers.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: recvmsg into the buffers above.
        let n = unsafe {
            libc::recvmsg(
                chan.as_raw_fd(),
                &mut msg,
                libc::MSG_WAITALL | libc::MSG_CMSG_CLOEXEC,
            )
        };
        if n < 0 {
            return Err(last_error("talking to the sandbox network helper"));
        }
        if n as usize != errno.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the sandbox network helper is gone (the sandbox stopped?)",
            ));
        }
        let mut fd = None;
        // SAFETY: walking the control messages the kernel wrote into `control`.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                    let raw = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
                    fd = Some(OwnedFd::from_raw_fd(raw));
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
        }
        let errno = i32::from_le_bytes(errno);
        if errno != 0 {
            return Err(io::Error::from_raw_os_error(errno));
        }
        fd.ok_or_else(|| io::Error::other("the sandbox network helper sent no socket"))
    }

    /// A new, unconnected, non-blocking TCP socket inside the sandbox.
    pub fn socket(&self) -> io::Result<OwnedFd> {
        self.request(OP_SOCKET, 0)
    }
}

impl NetnsHelper {
    /// Tell the helper to exit (its watchdog finds nothing left once the sandbox is stopped)
    /// and wait up to `timeout` for it, so that a caller returns when it is gone.
    pub fn close_and_wait(&self, timeout: std::time::Duration) {
        if let Ok(chan) = self.chan.lock() {
            let _ = chan.shutdown(std::net::Shutdown::Both);
        }
        let end = std::time::Instant::now() + timeout;
        loop {
            let mut status = 0;
            // SAFETY: polling our own child; 0 while it runs, its pid once reaped.
            let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
            if r != 0 || std::time::Instant::now() >= end {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

impl Drop for NetnsHelper {
    fn drop(&mut self) {
        // Closing our end is the helper's signal to clean up and exit; reap it off-thread.
        if let Ok(chan) = self.chan.get_mut() {
            let _ = chan.shutdown(std::net::Shutdown::Both);
        }
        let pid = self.pid;
        std::thread::spawn(move || {
            let mut status = 0;
            // SAFETY: waiting for our own child.
            unsafe {
                libc::waitpid(pid, &mut status, 0);
            }
        });
    }
}

/// The helper process. Only system calls, on data prepared before the fork.
///
/// # Safety
/// Must be called in the child right after `fork`, with valid descriptors.
unsafe fn helper_main(
    chan: RawFd,
    net: RawFd,
    user: RawFd,
    keep: &[RawFd],
    pidfds: &[RawFd],
    term_index: usize,
) -> ! {
    // SAFETY (whole body): raw system calls on descriptors and stack memory we own; this
    // process is single-threaded and exits with _exit.
    unsafe {
        // Out of ipybox's process group (a Ctrl-C in the terminal is for ipybox) and back
        // to default signal dispositions (the parent's handlers belong to its runtime).
        libc::setpgid(0, 0);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            libc::signal(sig, libc::SIG_DFL);
        }
        libc::prctl(
            libc::PR_SET_NAME,
            c"ipybox-netns".as_ptr() as libc::c_ulong,
            0,
            0,
            0,
        );
        close_all_except(keep);

        let mut status: i32 = 0;
        if libc::setns(user, libc::CLONE_NEWUSER) != 0 {
            status = (1 << 16) | errno();
        } else if libc::setns(net, libc::CLONE_NEWNET) != 0 {
            status = (2 << 16) | errno();
        }
        libc::close(user);
        libc::close(net);
        send_reply(chan, status, -1);
        if status != 0 {
            libc::_exit(1);
        }

        loop {
            let mut req = [0u8; 3];
            let n = libc::recv(chan, req.as_mut_ptr().cast(), req.len(), libc::MSG_WAITALL);
            if n < 0 && errno() == libc::EINTR {
                continue;
            }
            if n != req.len() as isize {
                break;
            }
            let (fd, err) = match req[0] {
                OP_SOCKET => new_socket(),
                _ => (-1, libc::EINVAL),
            };
            let sent = send_reply(chan, err, fd);
            if fd >= 0 {
                libc::close(fd);
            }
            if !sent {
                break;
            }
        }
        watchdog(pidfds, term_index);
        libc::_exit(0);
    }
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Close every descriptor but `keep` (sorted).
unsafe fn close_all_except(keep: &[RawFd]) {
    let mut from: u32 = 3;
    for &fd in keep {
        let fd = fd as u32;
        if fd > from {
            close_range(from, fd - 1);
        }
        from = from.max(fd + 1);
    }
    close_range(from, u32::MAX);
}

fn close_range(first: u32, last: u32) {
    // SAFETY: closing descriptors in the child; close_range exists since Linux 5.9.
    let r = unsafe { libc::syscall(libc::SYS_close_range, first, last, 0) };
    if r != 0 {
        let end = last.min(4096);
        for fd in first..=end {
            // SAFETY: as above.
            unsafe {
                libc::close(fd as RawFd);
            }
        }
    }
}

unsafe fn new_socket() -> (RawFd, i32) {
    // SAFETY: plain system call.
    let fd = unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 { (-1, errno()) } else { (fd, 0) }
}

/// Send a 4-byte status and, when `fd >= 0`, the descriptor. False when the peer is gone.
unsafe fn send_reply(chan: RawFd, status: i32, fd: RawFd) -> bool {
    // SAFETY: sendmsg with stack buffers laid out as the cmsg macros require.
    unsafe {
        let mut payload = status.to_le_bytes();
        let mut iov = libc::iovec {
            iov_base: payload.as_mut_ptr().cast(),
            iov_len: payload.len(),
        };
        let mut control = [0u64; 4];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if fd >= 0 {
            let space = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = space as _;
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
        }
        loop {
            let n = libc::sendmsg(chan, &msg, libc::MSG_NOSIGNAL);
            if n < 0 && errno() == libc::EINTR {
                continue;
            }
            return n == payload.len() as isize;
        }
    }
}

fn now_ms() -> i64 {
    // SAFETY: clock_gettime into a stack struct.
    unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
        ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000
    }
}

fn pidfd_signal(pidfd: RawFd, sig: i32) {
    // SAFETY: plain system call; ESRCH for a process that already exited.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd,
            sig,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        );
    }
}

/// SIGTERM to srt, wait for every watched process to exit, SIGKILL the rest.
fn watchdog(pidfds: &[RawFd], term_index: usize) {
    if pidfds.is_empty() {
        return;
    }
    if let Some(&srt) = pidfds.get(term_index) {
        pidfd_signal(srt, libc::SIGTERM);
    }
    let deadline = now_ms() + WATCHDOG_GRACE_MS;
    let mut polls = [libc::pollfd {
        fd: -1,
        events: libc::POLLIN,
        revents: 0,
    }; MAX_WATCHED];
    for (p, &fd) in polls.iter_mut().zip(pidfds) {
        p.fd = fd;
    }
    let polls = &mut polls[..pidfds.len()];
    loop {
        // A pidfd turns readable when its process exits; stop watching those.
        for p in polls.iter_mut() {
            if p.revents != 0 {
                p.fd = -1;
            }
            p.revents = 0;
        }
        if polls.iter().all(|p| p.fd < 0) {
            return;
        }
        let left = deadline - now_ms();
        if left <= 0 {
            break;
        }
        // SAFETY: poll on a stack array.
        unsafe {
            libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, left as i32);
        }
    }
    for p in polls.iter() {
        if p.fd >= 0 {
            pidfd_signal(p.fd, libc::SIGKILL);
        }
    }
}

/// A [`Connector`] whose connections start inside the sandbox.
#[derive(Debug, Clone)]
pub struct NetnsConnector(pub Arc<NetnsHelper>);

impl Connector for NetnsConnector {
    fn connect(&self, host: &str, port: u16) -> ConnectFuture {
        let helper = self.0.clone();
        let host = host.to_owned();
        Box::pin(async move {
            let ip: IpAddr = if host == "localhost" {
                Ipv4Addr::LOCALHOST.into()
            } else {
                host.parse().map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("inside the sandbox ipybox connects to IPv4 addresses only, not {host:?}"),
                    )
                })?
            };
            let fd = helper.socket()?;
            // SAFETY: a fresh, unconnected, non-blocking TCP socket we own.
            let stream = unsafe { std::net::TcpStream::from_raw_fd(fd.into_raw_fd()) };
            let socket = tokio::net::TcpSocket::from_std_stream(stream);
            socket.connect(SocketAddr::new(ip, port)).await
        })
    }
}
