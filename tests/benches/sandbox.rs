//! Sandbox overhead, side by side: the same figures with and without srt, measured in
//! alternation so that machine load hits both the same way.
//!
//! - cold start: `start()` + first `execute("print(1)")`, fresh executor each time;
//! - warm `execute("x=1")`: median of many;
//! - tool call with approval: an in-kernel loop calling the Python echo server;
//! - `reset()` with the spare kernel ready.
//!
//! `cargo bench -p ipybox-tests --no-default-features --bench sandbox [-- --quick]`; needs
//! `ipybox setup --sandbox` and `tests/servers/install.sh`.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ipybox::AutoApprove;
use ipybox::CodeExecutor;

fn median(mut xs: Vec<f64>) -> (f64, f64) {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (xs[xs.len() / 2], xs[0])
}

fn builder(ws: &Path, sandbox: bool) -> ipybox::CodeExecutorBuilder {
    CodeExecutor::builder()
        .working_dir(ws)
        .sandbox(sandbox)
        .approval_handler(Arc::new(AutoApprove))
}

const MODES: [(&str, bool); 2] = [("unsandboxed", false), ("sandboxed", true)];

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let echo = ipybox_tests::echo_server();
    let rt = ipybox_tests::runtime();
    rt.block_on(async {
        println!(
            "load average at start: {}",
            std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim()
        );
        let ws = ipybox_tests::workspace();
        builder(ws.path(), false)
            .build()
            .register_mcp_server("bench_echo", &echo)
            .await
            .unwrap();

        // Cold start, alternating.
        let rounds = if quick { 4 } else { 10 };
        let mut cold = [Vec::new(), Vec::new()];
        for i in 0..rounds + 1 {
            let order: [usize; 2] = if i % 2 == 0 { [0, 1] } else { [1, 0] };
            for m in order {
                let sandbox = MODES[m].1;
                let e = builder(ws.path(), sandbox).spare_kernel(false).build();
                let t = Instant::now();
                e.start().await.unwrap();
                let r = e.execute("print(1)", None).await.unwrap();
                let took = t.elapsed().as_secs_f64();
                assert_eq!(r.text.as_deref(), Some("1"));
                e.stop().await.unwrap();
                if i > 0 {
                    cold[m].push(took);
                }
            }
        }
        for (m, (name, _)) in MODES.iter().enumerate() {
            let mut xs = cold[m].clone();
            xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let xs: Vec<String> = xs.iter().map(|x| format!("{x:.2}")).collect();
            println!("cold starts, {name}: {} s", xs.join(" "));
        }
        let mut report = Vec::new();
        for (m, (name, _)) in MODES.iter().enumerate() {
            let (med, min) = median(cold[m].clone());
            report.push((format!("cold start to first result, {name}"), "s", med, min));
        }

        // Warm figures, one executor per mode, measured in alternating blocks.
        let executors = [
            builder(ws.path(), false).build(),
            builder(ws.path(), true).build(),
        ];
        for e in &executors {
            e.start().await.unwrap();
            e.execute(
                "from mcptools.bench_echo import echo\necho.run(echo.Params(text='warm'))",
                None,
            )
            .await
            .unwrap();
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        let n = if quick { 200 } else { 500 };
        let blocks = if quick { 4 } else { 10 };
        let mut warm = [Vec::new(), Vec::new()];
        let mut tool = [Vec::new(), Vec::new()];
        let mut reset = [Vec::new(), Vec::new()];
        let calls = if quick { 200 } else { 1000 };
        for block in 0..blocks {
            // Alternate which mode goes first, so neither always follows the other.
            let order: [usize; 2] = if block % 2 == 0 { [0, 1] } else { [1, 0] };
            for m in order {
                let e = &executors[m];
                for _ in 0..n / blocks {
                    let t = Instant::now();
                    e.execute("x=1", None).await.unwrap();
                    warm[m].push(t.elapsed().as_secs_f64() * 1000.0);
                }
                let code = format!(
                    "from mcptools.bench_echo import echo\nimport time\nt = time.perf_counter()\nfor i in range({calls}): echo.run(echo.Params(text='x'))\nprint((time.perf_counter() - t) / {calls} * 1000)"
                );
                let r = e.execute(&code, None).await.unwrap();
                tool[m].push(r.text.unwrap().parse::<f64>().unwrap());
                tokio::time::sleep(Duration::from_millis(1500)).await; // spare kernel ready
                let t = Instant::now();
                e.reset().await.unwrap();
                reset[m].push(t.elapsed().as_secs_f64() * 1000.0);
                // reset() also restarts MCP sessions: start the server again outside the
                // measured loop.
                e.execute(
                    "from mcptools.bench_echo import echo\necho.run(echo.Params(text='warm'))",
                    None,
                )
                .await
                .unwrap();
            }
        }
        for e in &executors {
            e.stop().await.unwrap();
        }
        for (m, (name, _)) in MODES.iter().enumerate() {
            let (med, min) = median(warm[m].clone());
            report.push((format!("warm execute(\"x=1\"), {name}"), "ms", med, min));
            let (med, min) = median(tool[m].clone());
            report.push((format!("echo tool call with approval, {name}"), "ms", med, min));
            let (med, min) = median(reset[m].clone());
            report.push((format!("reset() with spare ready, {name}"), "ms", med, min));
        }
        report.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, unit, med, min) in &report {
            println!("{name:<50} median {med:>8.3} {unit}   min {min:>8.3} {unit}");
        }
        let get = |k: &str| report.iter().find(|r| r.0 == k).map(|r| r.2).unwrap();
        let cold_delta = get("cold start to first result, sandboxed")
            - get("cold start to first result, unsandboxed");
        println!("sandbox cold-start overhead: {cold_delta:+.3} s (target ≤ +0.6 s)");
        for what in ["warm execute(\"x=1\")", "echo tool call with approval"] {
            let ratio = get(&format!("{what}, sandboxed")) / get(&format!("{what}, unsandboxed"));
            println!("{what}: sandboxed/unsandboxed = {ratio:.3} (target ≤ 1.10)");
        }
    });
}
