//! Learning from network blocks: the domains srt's proxy refused a sandboxed kernel, as srt
//! itself records them — never what the kernel prints, which kernel code controls.
//!
//! srt 0.0.78 keeps each refusal in an in-process store (its library's
//! `getSandboxViolationStore()`) and tells no one outside. ipybox runs srt's own command line
//! inside a small Node.js module of its own (`srt-report.mjs`) that shares srt's modules,
//! subscribes to that store and writes each proxy refusal to a pipe only ipybox reads; the
//! module closes the inherited end before srt starts the sandbox, so nothing inside can
//! write to it. srt keeps doing the filtering itself: ipybox only listens.
//!
//! A refusal names what the client asked the proxy for (kernel code chooses that), so it is
//! a hint like the file hook's report: [`assess`] checks it against the policy in force, and
//! offers only the exact host (with its port when it is not a web port), never a wildcard.

use std::io::{BufRead, BufReader};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tokio::sync::mpsc;

use super::access::{Access, Checker};
use super::block::Block;
use crate::error::{Error, Result};

/// The Node.js module srt's command line runs in (see the module's docs).
const REPORTER: &str = include_str!("srt-report.mjs");

/// The descriptor the reporter finds its end of the pipe at.
pub const REPORT_FD: i32 = 3;

/// A request srt's proxy refused: the host and port the client asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// As the client named it, lower case.
    pub host: String,
    pub port: u16,
}

/// srt's record of a refusal, `deny network-outbound HOST:PORT (REASON)`; `None` for
/// anything else, and for a host no policy entry could name.
pub fn parse(line: &str) -> Option<Refusal> {
    let rest = line.strip_prefix("deny network-outbound ")?;
    let target = rest.split(' ').next()?;
    let (host, port) = target.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = port.parse().ok().filter(|p| *p > 0)?;
    let plausible = !host.is_empty()
        && host.len() <= 253
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
    plausible.then(|| Refusal {
        host: host.to_ascii_lowercase(),
        port,
    })
}

/// The block `refusal` is, when the policy in force agrees the proxy refuses it; with the
/// allow-list entry that would let it through unless a `deniedDomains` entry refuses it.
pub fn assess(refusal: &Refusal, checker: &Checker) -> Option<Block> {
    let verdict = checker.proxy(&refusal.host, refusal.port);
    if verdict.allowed {
        return None;
    }
    let target = target(refusal);
    Some(Block {
        access: Access::Connect,
        suggestion: verdict.rule.is_none().then(|| target.clone()),
        path: target,
        rule: verdict.rule,
        reason: verdict.reason,
        refusal: None,
    })
}

/// How a policy names just this host: the host, with the port unless it is 80 or 443.
fn target(refusal: &Refusal) -> String {
    let host = if refusal.host.contains(':') {
        format!("[{}]", refusal.host)
    } else {
        refusal.host.clone()
    };
    match refusal.port {
        80 | 443 => host,
        port => format!("{host}:{port}"),
    }
}

#[cfg(any(test, feature = "desktop"))]
/// `host[:port]` as [`assess`] writes it: the host and the port (443 when none is given).
pub fn split_target(target: &str) -> Option<(String, u16)> {
    let target = target.trim();
    if let Some(v6) = target.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => 443,
        };
        return Some((host.to_ascii_lowercase(), port));
    }
    match target.rsplit_once(':') {
        Some((host, port)) => Some((host.to_ascii_lowercase(), port.parse().ok()?)),
        None => (!target.is_empty()).then(|| (target.to_ascii_lowercase(), 443)),
    }
}

/// The pipe srt's reporter writes refusals to: the write end goes to srt (once), the read
/// end is read by a thread of ipybox's.
#[derive(Debug)]
pub struct Refusals {
    writer: Mutex<Option<OwnedFd>>,
    reader: Mutex<Option<OwnedFd>>,
}

impl Refusals {
    /// A new pipe, both ends close-on-exec: no other child inherits either.
    pub fn new() -> Result<Refusals> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills `fds` with two new descriptors this process then owns.
        #[cfg(target_os = "linux")]
        let failed = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0;
        // SAFETY: as above; children ipybox starts inherit nothing past stdio anyway
        // (`process::spawn_supervised_passing`), close-on-exec is for any other.
        #[cfg(not(target_os = "linux"))]
        let failed = unsafe {
            libc::pipe(fds.as_mut_ptr()) != 0
                || fds
                    .iter()
                    .any(|&fd| libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) != 0)
        };
        if failed {
            return Err(Error::io(
                "creating the sandbox's refusal channel",
                std::io::Error::last_os_error(),
            ));
        }
        // SAFETY: just created, owned by nothing else.
        let (reader, writer) = unsafe {
            use std::os::fd::FromRawFd;
            (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
        };
        Ok(Refusals {
            writer: Mutex::new(Some(writer)),
            reader: Mutex::new(Some(reader)),
        })
    }

    /// The end srt's reporter writes to (once).
    pub fn take_writer(&self) -> Option<OwnedFd> {
        self.writer.lock().ok()?.take()
    }

    /// Read the refusals as they come (once): a thread reads the pipe until srt and its
    /// reporter are gone.
    pub fn watch(&self) -> Option<mpsc::UnboundedReceiver<Refusal>> {
        let reader = self.reader.lock().ok()?.take()?;
        let (tx, rx) = mpsc::unbounded_channel();
        let spawned = std::thread::Builder::new()
            .name("ipybox-srt-refusals".into())
            .spawn(move || {
                let lines = BufReader::new(std::fs::File::from(reader)).lines();
                for line in lines.map_while(std::result::Result::ok) {
                    let Ok(record) = serde_json::from_str::<String>(&line) else {
                        continue;
                    };
                    if let Some(refusal) = parse(&record)
                        && tx.send(refusal).is_err()
                    {
                        break;
                    }
                }
            });
        spawned.ok().map(|_| rx)
    }
}

/// Write the reporter module into `dir` (one the sandbox cannot write) and return how to
/// run srt inside it: `node <dir>/srt-report.mjs <cli.js>`.
pub fn reporter_command(node: &Path, cli: &Path, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let module = dir.join("srt-report.mjs");
    std::fs::write(&module, REPORTER)
        .map_err(|e| Error::io(format!("writing {}", module.display()), e))?;
    Ok(vec![node.to_path_buf(), module, cli.to_path_buf()])
}

/// May a request for `target` (`host[:port]`, as a network block names it) pass srt's
/// proxy under the policy `text` on `workspace`?
#[cfg(feature = "desktop")]
pub fn check_proxy_text(
    text: &str,
    workspace: &Path,
    target: &str,
) -> Result<super::access::Verdict> {
    let (host, port) = split_target(target)
        .ok_or_else(|| Error::config(format!("{target:?} is not a host[:port]")))?;
    let home = crate::home::ipybox_home()?;
    let user_home = dirs::home_dir()
        .ok_or_else(|| Error::sandbox("cannot find the home directory for `~` paths"))?;
    let policy = super::policy::parse(text, "being edited")?;
    let file = workspace.join(super::policy::WORKSPACE_POLICY);
    let checker = super::access::for_session(policy, Some(&file), &home, workspace, &user_home)?;
    Ok(checker.proxy(&host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srt_records_are_read_and_anything_else_is_not() {
        assert_eq!(
            parse("deny network-outbound pypi.org:443 (host is not on the allow list)"),
            Some(Refusal {
                host: "pypi.org".into(),
                port: 443
            })
        );
        assert_eq!(
            parse("deny network-outbound LocalHost:8000 (x)").map(|r| (r.host, r.port)),
            Some(("localhost".into(), 8000))
        );
        assert_eq!(
            parse("deny network-outbound [::1]:80 (x)").map(|r| r.host),
            Some("::1".into())
        );
        for other in [
            "deny file-write /etc/passwd",
            "deny http-request GET http://x/ (y)",
            "deny network-outbound nohost (x)",
            "deny network-outbound a/b:443 (x)",
            "deny network-outbound x:0 (x)",
        ] {
            assert_eq!(parse(other), None, "{other}");
        }
    }

    #[test]
    fn the_offer_is_the_exact_host_with_a_port_only_when_unusual() {
        let r = |host: &str, port| Refusal {
            host: host.into(),
            port,
        };
        assert_eq!(target(&r("pypi.org", 443)), "pypi.org");
        assert_eq!(target(&r("example.com", 80)), "example.com");
        assert_eq!(target(&r("localhost", 8000)), "localhost:8000");
        assert_eq!(target(&r("::1", 8000)), "[::1]:8000");
        for t in ["pypi.org", "localhost:8000", "[::1]:8000"] {
            let (host, port) = split_target(t).expect(t);
            assert_eq!(
                target(&r(&host, port)),
                t,
                "split_target reads back what target writes"
            );
        }
    }
}
