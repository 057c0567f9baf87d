//! `execute_ipython_cell("x=1")` round trips through `ipybox mcp`, from rmcp clients: over
//! stdio, and over Streamable HTTP with one session and with 8 concurrent sessions (each a
//! kernel of its own); the time to start a session (`initialize` to the first result) and the
//! memory each additional session costs (PSS of ipybox and everything it started).
//!
//! `cargo build --release -p ipybox --no-default-features` first (the bench runs
//! `target/release/ipybox`), then
//! `cargo bench -p ipybox-tests --no-default-features --bench mcp`.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::process::Stdio;
use std::time::{Duration, Instant};

use ipybox_tests::mcp_client::Client;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

/// Sessions run at once in the concurrent part.
const SESSIONS: usize = 8;

fn x_equals_1() -> CallToolRequestParams {
    let serde_json::Value::Object(args) = serde_json::json!({"code": "x=1"}) else {
        unreachable!()
    };
    CallToolRequestParams::new("execute_ipython_cell").with_arguments(args)
}

/// `n` round trips of `x=1`, in milliseconds.
async fn loop_x_equals_1(client: &Client, n: usize) -> Vec<f64> {
    let mut xs = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let r = client.call_tool(x_equals_1()).await.unwrap();
        assert_ne!(r.is_error, Some(true), "x=1 fails: {r:?}");
        xs.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    xs
}

fn summary(xs: &mut [f64]) -> String {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    format!(
        "median {:.3}  p90 {:.3}  min {:.3}  max {:.3}  n {}",
        xs[xs.len() / 2],
        xs[xs.len() * 9 / 10],
        xs[0],
        xs[xs.len() - 1],
        xs.len()
    )
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs[xs.len() / 2]
}

/// Proportional set size of ipybox (`root`) itself, its gateways and its kernels, in MiB:
/// memory shared between processes (the Python libraries of every kernel) counts once in
/// total.
fn pss_mib(root: i32) -> [f64; 3] {
    let mut mib = [0.0; 3];
    for pid in ipybox_tests::tree(root) {
        let Some(kib) = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("Pss:"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|v| v.parse::<u64>().ok())
            })
        else {
            continue;
        };
        mib[kind(root, pid)] += kib as f64 / 1024.0;
    }
    mib
}

/// 0 for ipybox itself, 1 for a gateway, 2 for a kernel.
fn kind(root: i32, pid: i32) -> usize {
    let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    if pid == root {
        0
    } else if cmdline.contains("kernel_gateway") {
        1
    } else {
        2
    }
}

/// CPU time (user + system) so far of ipybox (`root`) itself, its gateways and its kernels,
/// in milliseconds.
fn cpu_ms(root: i32) -> [f64; 3] {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let mut cpu = [0.0; 3];
    for pid in ipybox_tests::tree(root) {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        let used = fields
            .get(11..13)
            .map(|f| f.iter().filter_map(|v| v.parse::<f64>().ok()).sum::<f64>())
            .unwrap_or(0.0);
        cpu[kind(root, pid)] += used * 1000.0 / ticks;
    }
    cpu
}

async fn session(url: &str) -> Client {
    ().serve(StreamableHttpClientTransport::from_uri(url))
        .await
        .unwrap()
}

async fn stdio(ws: &std::path::Path) {
    let mut cmd = tokio::process::Command::new(ipybox_tests::ipybox_bin());
    cmd.arg("mcp").arg("--workspace").arg(ws);
    let t = Instant::now();
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.unwrap();
    println!(
        "stdio: initialize {:.1} ms",
        t.elapsed().as_secs_f64() * 1000.0
    );
    let t = Instant::now();
    client.call_tool(x_equals_1()).await.unwrap();
    println!(
        "stdio: first execute_ipython_cell (kernel start overlaps initialize) {:.3} s",
        t.elapsed().as_secs_f64()
    );
    loop_x_equals_1(&client, 20).await;
    let mut xs = loop_x_equals_1(&client, 500).await;
    println!(
        "stdio: execute_ipython_cell(\"x=1\")  ms  {}",
        summary(&mut xs)
    );
    client.cancel().await.unwrap();
}

async fn http(ws: &std::path::Path) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = tokio::process::Command::new(ipybox_tests::ipybox_bin())
        .args(["mcp", "--no-auth", "--http", &port.to_string()])
        .args(["--max-sessions", &SESSIONS.to_string(), "--workspace"])
        .arg(ws)
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = i32::try_from(server.id().unwrap()).unwrap();
    assert!(ipybox_tests::wait_for(Duration::from_secs(30), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    }));
    let url = format!("http://127.0.0.1:{port}/mcp");
    let settle = || tokio::time::sleep(Duration::from_secs(3));

    // Starting a session: the client's initialize to the first result, one at a time (each
    // session ended before the next starts).
    let mut starts = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let c = session(&url).await;
        c.call_tool(x_equals_1()).await.unwrap();
        starts.push(t.elapsed().as_secs_f64());
        c.cancel().await.unwrap();
        settle().await;
    }
    println!(
        "http: session start (initialize + first x=1)  s  median {:.3}  min {:.3}  max {:.3}  n {}",
        median(&mut starts.clone()),
        starts.iter().copied().fold(f64::MAX, f64::min),
        starts.iter().copied().fold(0.0, f64::max),
        starts.len()
    );

    settle().await;
    let idle = pss_mib(pid);
    let mut clients = vec![session(&url).await];
    loop_x_equals_1(&clients[0], 20).await;
    settle().await;
    let one = pss_mib(pid);
    let cpu = cpu_ms(pid);
    let mut single = loop_x_equals_1(&clients[0], 500).await;
    let spent = cpu_ms(pid);
    println!(
        "http: 1 session, CPU per call  ms  ipybox {:.2}  gateway {:.2}  kernel {:.2}",
        (spent[0] - cpu[0]) / 500.0,
        (spent[1] - cpu[1]) / 500.0,
        (spent[2] - cpu[2]) / 500.0
    );
    let single_median = median(&mut single);
    println!(
        "http: 1 session, execute_ipython_cell(\"x=1\")  ms  {}",
        summary(&mut single)
    );

    // One session per core: concurrency the machine can run in parallel.
    clients.push(session(&url).await);
    loop_x_equals_1(&clients[1], 20).await;
    let loops = clients.iter().map(|c| loop_x_equals_1(c, 300));
    let mut pair: Vec<f64> = futures_util::future::join_all(loops)
        .await
        .into_iter()
        .flatten()
        .collect();
    println!(
        "http: 2 concurrent sessions, execute_ipython_cell(\"x=1\")  ms  {}",
        summary(&mut pair)
    );

    for _ in 2..SESSIONS {
        let c = session(&url).await;
        loop_x_equals_1(&c, 20).await;
        clients.push(c);
    }
    settle().await;
    let all = pss_mib(pid);
    let cpu = cpu_ms(pid);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let spent = cpu_ms(pid);
    println!(
        "http: {SESSIONS} idle sessions, CPU  % of a core  ipybox {:.1}  gateways {:.1}  kernels {:.1}",
        (spent[0] - cpu[0]) / 50.0,
        (spent[1] - cpu[1]) / 50.0,
        (spent[2] - cpu[2]) / 50.0
    );
    let cpu = cpu_ms(pid);
    let t = Instant::now();
    let loops = clients.iter().map(|c| loop_x_equals_1(c, 200));
    let mut concurrent: Vec<f64> = futures_util::future::join_all(loops)
        .await
        .into_iter()
        .flatten()
        .collect();
    let wall = t.elapsed().as_secs_f64();
    let spent = cpu_ms(pid);
    let calls = concurrent.len() as f64;
    println!(
        "http: {SESSIONS} sessions, CPU per call  ms  ipybox {:.2}  gateways {:.2}  kernels {:.2}",
        (spent[0] - cpu[0]) / calls,
        (spent[1] - cpu[1]) / calls,
        (spent[2] - cpu[2]) / calls
    );
    let concurrent_median = median(&mut concurrent);
    println!(
        "http: {SESSIONS} concurrent sessions, execute_ipython_cell(\"x=1\")  ms  {}  ({:.0} calls/s in all)",
        summary(&mut concurrent),
        concurrent.len() as f64 / wall
    );
    println!(
        "http: concurrent median / single median = {:.2}",
        concurrent_median / single_median
    );
    let total = |m: [f64; 3]| m.iter().sum::<f64>();
    let per = |i: usize| (all[i] - one[i]) / (SESSIONS - 1) as f64;
    println!(
        "http: PSS of ipybox and everything it started  MiB  no session {:.0}  1 session {:.0}  {SESSIONS} sessions {:.0}  => first session {:.0}, each additional {:.0} (gateway {:.0}, kernel and spare kernel {:.0}, in ipybox {:.1})",
        total(idle),
        total(one),
        total(all),
        total(one) - total(idle),
        (total(all) - total(one)) / (SESSIONS - 1) as f64,
        per(1),
        per(2),
        per(0)
    );
    for c in clients {
        c.cancel().await.unwrap();
    }
    let _ = server.start_kill();
    let _ = server.wait().await;
}

fn main() {
    let rt = ipybox_tests::runtime();
    rt.block_on(async {
        println!(
            "load average at start: {}",
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .trim()
        );
        let ws = ipybox_tests::workspace();
        stdio(ws.path()).await;
        http(ws.path()).await;
        println!(
            "load average at end: {}",
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .trim()
        );
    });
}
