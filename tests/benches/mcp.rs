//! `execute_ipython_cell("x=1")` round trip through `ipybox mcp` over stdio, from an rmcp
//! client: `cargo bench -p ipybox-tests --no-default-features --bench mcp`.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::process::Stdio;
use std::time::Instant;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;

fn main() {
    let rt = ipybox_tests::runtime();
    rt.block_on(async {
        let ws = ipybox_tests::workspace();
        println!("load average at start: {}", std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim());
        let mut cmd = tokio::process::Command::new(ipybox_tests::ipybox_bin());
        cmd.arg("mcp").arg("--workspace").arg(ws.path());
        let t = Instant::now();
        let (transport, _) = TokioChildProcess::builder(cmd).stderr(Stdio::null()).spawn().unwrap();
        let client = ().serve(transport).await.unwrap();
        println!("initialize: {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
        let args = serde_json::json!({"code": "x=1"});
        let serde_json::Value::Object(args) = args else { unreachable!() };
        let t = Instant::now();
        client.call_tool(CallToolRequestParams::new("execute_ipython_cell").with_arguments(args.clone())).await.unwrap();
        println!("first execute_ipython_cell (kernel start overlaps initialize): {:.3} s", t.elapsed().as_secs_f64());
        for _ in 0..20 {
            client.call_tool(CallToolRequestParams::new("execute_ipython_cell").with_arguments(args.clone())).await.unwrap();
        }
        let mut xs = Vec::new();
        for _ in 0..500 {
            let t = Instant::now();
            client.call_tool(CallToolRequestParams::new("execute_ipython_cell").with_arguments(args.clone())).await.unwrap();
            xs.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "execute_ipython_cell(\"x=1\") over stdio  ms  median {:.3}  min {:.3}  max {:.3}  n {}",
            xs[xs.len() / 2], xs[0], xs[xs.len() - 1], xs.len()
        );
        client.cancel().await.unwrap();
    });
}
