//! Shared helpers for the end-to-end tests and benchmarks: executors on temporary
//! workspaces, process inspection.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ipybox::{CodeExecutor, CodeExecutorBuilder};

/// A temporary workspace directory.
pub fn workspace() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ipybox-test-")
        .tempdir()
        .expect("creating a temp dir")
}

/// A builder on `dir`, quiet, with a short start-up limit.
pub fn builder(dir: &Path) -> CodeExecutorBuilder {
    CodeExecutor::builder().working_dir(dir)
}

/// A started executor on `dir`.
pub async fn started(dir: &Path) -> CodeExecutor {
    let e = builder(dir).build();
    e.start().await.expect("the executor starts");
    e
}

/// Is a process alive (and not a zombie)?
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            stat.rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next())
                != Some("Z")
        }
        Err(_) => false,
    }
}

/// `root` and its live descendants.
pub fn tree(root: i32) -> Vec<i32> {
    ipybox::process::process_tree(root)
}

/// Wait until `cond` holds or `limit` passes; returns whether it held.
pub fn wait_for(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

/// The `ipybox` binary built next to the test executable (`cargo build` builds it).
pub fn ipybox_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("IPYBOX_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    let bin = dir.join("ipybox");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build --no-default-features` first",
        bin.display()
    );
    bin
}

/// Python of the environment the tests use (for helper servers).
pub fn python() -> PathBuf {
    ipybox::pyenv::resolve(None, ipybox::pyenv::Progress::Terminal)
        .expect("a Python environment")
        .python()
        .to_path_buf()
}

/// Resident set size of this process, in KiB (current, peak).
pub fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
