//! Tool-call benchmark: a kernel loop calling the Python echo server's `echo` tool (the same
//! server the Python ipybox was measured with) with approvals accepted in-process, plus
//! code generation per tool.
//!
//! `cargo bench -p ipybox-tests --no-default-features --bench tools [-- --quick] [--no-remote]`;
//! needs `tests/servers/install.sh`, and for the remote rows `unshare` and `socat` (root or
//! user namespaces).

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use ipybox::AutoApprove;
use ipybox::{CodeExecutor, Event, StreamOptions};

fn median(mut xs: Vec<f64>) -> (f64, f64, f64) {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (xs[xs.len() / 2], xs[0], xs[xs.len() - 1])
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let echo = ipybox_tests::echo_server();
    let rt = ipybox_tests::runtime();
    rt.block_on(async {
        let ws = ipybox_tests::workspace();
        println!("load average at start: {}", std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim());
        let t = Instant::now();
        let e = CodeExecutor::builder().working_dir(ws.path()).approval_handler(Arc::new(AutoApprove)).build();
        let generated = e.register_mcp_server("bench_echo", &echo).await.unwrap();
        println!("generate bench_echo ({} tools, incl. server start): {:.3} s", generated.modules.len(), t.elapsed().as_secs_f64());
        e.start().await.unwrap();
        tokio::time::sleep(Duration::from_secs(2)).await;
        let t = Instant::now();
        e.execute("from mcptools.bench_echo import echo, add\necho.run(echo.Params(text='warm'))", None).await.unwrap();
        println!("first call incl. import and server start: {:.3} s", t.elapsed().as_secs_f64());

        let n = if quick { 200 } else { 1000 };
        let rounds = if quick { 3 } else { 5 };
        for (name, call) in [("echo", "echo.run(echo.Params(text='x'))"), ("add (structured)", "add.run(add.Params(a=1, b=2))")] {
            let mut per_call = Vec::new();
            for _ in 0..rounds {
                let code = format!("import time\nt = time.perf_counter()\nfor i in range({n}): {call}\nprint((time.perf_counter() - t) / {n} * 1000)");
                let r = e.execute(&code, None).await.unwrap();
                per_call.push(r.text.unwrap().parse::<f64>().unwrap());
            }
            let (m, lo, hi) = median(per_call);
            println!("{name:<40} ms/call  median {m:.3}  min {lo:.3}  max {hi:.3}  ({n} calls x {rounds}, handler approval)");
        }
        e.stop().await.unwrap();

        // The desktop's shape: an "always allow" rule decides, then the person (never asked
        // here), with every call written to an audit log — against the handler that approves
        // everything. The three sessions run side by side and take turns, round by round, so
        // that the machine's drift falls on all three alike.
        let audit_dir = ipybox_tests::workspace();
        let audit_path = audit_dir.path().join("audit.jsonl");
        let rule = || {
            let rules = ipybox::Rules::from_json(
                r#"{"version": 1, "rules": [{"server": "bench_echo", "tool": "echo", "decision": "allow"}]}"#,
            )
            .unwrap();
            Arc::new(ipybox::RulesHandler::new(rules).then(Arc::new(ipybox::RejectAll))) as Arc<dyn ipybox::ApprovalHandler>
        };
        let sessions = [
            ("handler approving all", Arc::new(AutoApprove) as Arc<dyn ipybox::ApprovalHandler>),
            ("\"always allow\" rule", rule()),
            ("\"always allow\" rule + audit log", rule()),
        ]
        .map(|(how, handler)| (how, CodeExecutor::builder().working_dir(ws.path()).approval_handler(handler).build()));
        let recorder = ipybox::AuditLog::at(audit_path.clone()).record(ws.path().to_owned(), sessions[2].1.subscribe());
        for (_, e) in &sessions {
            e.start().await.unwrap();
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
        let mut per_call = [const { Vec::new() }; 3];
        for round in 0..=rounds * 2 {
            for (i, (_, e)) in sessions.iter().enumerate() {
                let code = if round == 0 {
                    "from mcptools.bench_echo import echo\necho.run(echo.Params(text='warm'))".to_owned()
                } else {
                    format!("import time\nt = time.perf_counter()\nfor i in range({n}): echo.run(echo.Params(text='x'))\nprint((time.perf_counter() - t) / {n} * 1000)")
                };
                let r = e.execute(&code, None).await.unwrap();
                if round > 0 {
                    per_call[i].push(r.text.unwrap().parse::<f64>().unwrap());
                }
            }
        }
        let base = median(per_call[0].clone()).0;
        for ((how, e), xs) in sessions.iter().zip(per_call) {
            let (m, lo, hi) = median(xs);
            println!("{:<40} ms/call  median {m:.3}  min {lo:.3}  max {hi:.3}  ({how}; {:+.3} ms; {n} calls x {}, in turns)", "echo", m - base, rounds * 2);
            e.stop().await.unwrap();
        }
        drop(sessions);
        let _ = tokio::time::timeout(Duration::from_secs(5), recorder).await;
        let (entries, _) = ipybox::AuditLog::at(audit_path).read().unwrap();
        println!("audit entries written: {}", entries.len());

        // Approvals through the stream consumer instead of a handler.
        let e = CodeExecutor::builder().working_dir(ws.path()).build();
        e.start().await.unwrap();
        e.execute("from mcptools.bench_echo import echo\necho.run(echo.Params(text='warm'))", None).await.unwrap();
        let code = format!("import time\nt = time.perf_counter()\nfor i in range({n}): echo.run(echo.Params(text='x'))\nprint((time.perf_counter() - t) / {n} * 1000)");
        let mut s = e.stream(&code, StreamOptions { timeout: None, ..Default::default() });
        while let Some(ev) = s.next().await {
            match ev.unwrap() {
                Event::ApprovalRequest(r) => r.accept(),
                Event::Result(r) => println!("{:<40} ms/call  {}", "echo, stream-consumer approval", r.text.unwrap()),
                _ => {}
            }
        }
        e.stop().await.unwrap();

        // A decision to the tool started: from the moment a person's choice is made (the
        // approval dialog's button handler calls the same `decide` as `accept` here) to the
        // server receiving the call (the fixture's `clock` tool says when, on the same wall
        // clock). The first two calls (server start, import) are left out.
        let fixture = ipybox::ServerParams::from_json(&serde_json::json!({
            "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"), "args": ["stdio"],
        }))
        .unwrap();
        let e = CodeExecutor::builder().working_dir(ws.path()).build();
        e.register_mcp_server("fx", &fixture).await.unwrap();
        e.start().await.unwrap();
        let calls = if quick { 20 } else { 50 };
        let code = format!("from mcptools.fx import clock\nfor i in range({}): print(clock.run(clock.Params()))", calls + 2);
        let mut s = e.stream(&code, StreamOptions { timeout: None, ..Default::default() });
        let now_us = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_micros() as f64;
        let mut decided = Vec::new();
        let mut received = Vec::new();
        while let Some(ev) = s.next().await {
            match ev.unwrap() {
                Event::ApprovalRequest(r) => {
                    decided.push(now_us());
                    r.accept();
                }
                Event::Result(r) => received = r.text.unwrap().lines().map(|l| l.trim().parse::<f64>().unwrap()).collect(),
                _ => {}
            }
        }
        let waits: Vec<f64> = received.iter().zip(&decided).skip(2).map(|(r, d)| (r - d) / 1000.0).collect();
        let (m, lo, hi) = median(waits.clone());
        println!("{:<40} ms       median {m:.3}  min {lo:.3}  max {hi:.3}  ({} calls)", "decision -> tool started (server got it)", waits.len());
        e.stop().await.unwrap();

        // Over the kernel's channel through a gateway in a network namespace with no route
        // back (as on a cluster): a Jupyter Server 2 and an Enterprise Gateway 3.3, the same
        // echo server, and the Rust fixture server beside it. `--no-remote` skips this.
        if !std::env::args().any(|a| a == "--no-remote") {
            let fixture = ipybox::ServerParams::from_json(&serde_json::json!({
                "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"), "args": ["stdio"],
            }))
            .unwrap();
            for (kind, label) in [
                (ipybox_tests::RemoteKind::JupyterServer, "Jupyter Server in a netns"),
                (ipybox_tests::RemoteKind::EnterpriseGateway, "Enterprise Gateway in a netns"),
            ] {
                let ws = ipybox_tests::workspace();
                let gw = ipybox_tests::RemoteGateway::start(kind, ws.path());
                let e = CodeExecutor::builder()
                    .working_dir(ws.path())
                    .gateway_url(&gw.url, Some(gw.token.clone()))
                    .approval_handler(Arc::new(AutoApprove))
                    .build();
                e.register_mcp_server("bench_echo", &echo).await.unwrap();
                e.register_mcp_server("fx", &fixture).await.unwrap();
                e.start().await.unwrap();
                e.execute("from mcptools.bench_echo import echo
from mcptools import fx
from mcptools.fx import echo as fx_echo
echo.run(echo.Params(text='warm'))
fx_echo.run(fx_echo.Params(text='warm'))", None).await.unwrap();
                for (name, call) in [("echo", "echo.run(echo.Params(text='x'))"), ("echo (Rust fixture server)", "fx_echo.run(fx_echo.Params(text='x'))")] {
                    let mut per_call = Vec::new();
                    for _ in 0..rounds {
                        let code = format!("import time, statistics
ts = []
for i in range({n}):
    t = time.perf_counter(); {call}; ts.append(time.perf_counter() - t)
print(statistics.median(ts) * 1000)");
                        let r = e.execute(&code, None).await.unwrap();
                        per_call.push(r.text.unwrap().parse::<f64>().unwrap());
                    }
                    let (m, lo, hi) = median(per_call);
                    println!("{:<40} ms/call  median {m:.3}  min {lo:.3}  max {hi:.3}  ({n} calls x {rounds}, {label})", name);
                }
                e.stop().await.unwrap();
            }
        }

        // Generation alone, per tool, over the committed corpus of real schemas.
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/apigen/corpus");
        let mut tools = 0usize;
        let out = ipybox_tests::workspace();
        let t = Instant::now();
        for entry in std::fs::read_dir(&corpus).unwrap() {
            let path = entry.unwrap().path();
            let specs: Vec<ipybox::ToolSpec> = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            tools += specs.len();
            let name = path.file_stem().unwrap().to_str().unwrap().replace('-', "_");
            ipybox::write_package(&name, &specs, &out.path().join("mcptools")).unwrap();
        }
        println!("generation (render + write), {tools} real tools: {:.3} ms/tool", t.elapsed().as_secs_f64() * 1000.0 / tools as f64);
    });
}
