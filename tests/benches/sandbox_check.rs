//! "Would this be allowed?": the checker's time per question, against the default policy
//! with ipybox's own additions (80-odd rules, links resolved on the real file system).
//!
//! `cargo bench -p ipybox-tests --no-default-features --bench sandbox_check [-- --quick]`.
//! Target: ≤ 1 ms per path.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::Instant;

use ipybox::{SandboxChecker, SandboxOptions, SessionPaths};

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let ws = ipybox_tests::workspace();
    let ws = std::fs::canonicalize(ws.path()).unwrap();
    std::fs::create_dir_all(ws.join("sub/deeper")).unwrap();
    std::fs::write(ws.join("sub/deeper/data.csv"), "x").unwrap();
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .unwrap();
    let data = ipybox::setup::ipybox_home().unwrap();
    let paths = SessionPaths::new(
        &SandboxOptions::default(),
        &data,
        &ws,
        &data.join("sessions/bench"),
        &data.join("venv/bin/python"),
    );
    let policy: serde_json::Value =
        serde_json::from_str(&ipybox::shipped_profiles()[0].policy.to_json()).unwrap();
    let t = Instant::now();
    let checker = SandboxChecker::new(policy, &ws, &home, &paths).unwrap();
    let build_ms = t.elapsed().as_secs_f64() * 1000.0;
    let queries = [
        "sub/deeper/data.csv",
        "new-file.txt",
        ".env",
        "sub/deeper/.env",
        "~/.ssh/id_ed25519",
        "~/.claude/.credentials.json",
        "~/Documents/report.pdf",
        "/etc/passwd",
        "/tmp/x",
        ".git/hooks/pre-commit",
    ];
    let rounds = if quick { 200 } else { 2000 };
    let mut per_path = Vec::new();
    for _ in 0..rounds {
        for q in queries {
            let t = Instant::now();
            let verdicts = checker.check(q);
            per_path.push(t.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(verdicts.len(), 2, "read and write");
        }
    }
    let mut per_url = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let v = checker.check("https://api.github.com/repos");
        per_url.push(t.elapsed().as_secs_f64() * 1000.0);
        assert!(!v[0].allowed);
    }
    let stats = |name: &str, mut xs: Vec<f64>| {
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let (median, p99, max) = (xs[xs.len() / 2], xs[xs.len() * 99 / 100], xs[xs.len() - 1]);
        println!(
            "{name:<48}   ms  median {median:>8.4}  p99 {p99:>8.4}  max {max:>8.4}  n {}",
            xs.len()
        );
    };
    println!(
        "load average at start: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!(
        "{:<48}   ms  {build_ms:>8.4}",
        "checker built (render + resolve rules)"
    );
    stats("check a path (read + write), default policy", per_path);
    stats("check a URL, default policy", per_url);
}
