//! Quick start: generate a typed Python API for an MCP server, run code that calls one of its
//! tools, and approve the call on the terminal.
//!
//! `cargo run --no-default-features --example quickstart`
//!
//! Uses the reference server `@modelcontextprotocol/server-everything` (no API key) through
//! `npx`; set `IPYBOX_EXAMPLE_SERVER` to other connection parameters (JSON) to use another
//! installation, and `IPYBOX_EXAMPLE_APPROVE=yes` to approve without asking.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::BufRead;

use futures_util::StreamExt;
use ipybox::{CodeExecutor, Event, ServerParams, StreamOptions};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let params = match std::env::var("IPYBOX_EXAMPLE_SERVER") {
        Ok(json) => serde_json::from_str(&json)?,
        Err(_) => {
            serde_json::json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]})
        }
    };
    let params = ServerParams::from_json(&params)?;
    let workspace = std::env::temp_dir().join("ipybox-quickstart");
    std::fs::create_dir_all(&workspace)?;

    let executor = CodeExecutor::builder().working_dir(&workspace).build();
    // Writes mcptools/everything/<tool>.py and registers the server for this workspace.
    let generated = executor.register_mcp_server("everything", &params).await?;
    println!("generated: {}", generated.modules.join(", "));

    executor.start().await?;
    let code = "from mcptools.everything.echo import Params, run\n\
                print(run(Params(message='hello from kernel code')))";
    let mut events = executor.stream(
        code,
        StreamOptions {
            outputs: true,
            ..Default::default()
        },
    );
    let auto = std::env::var("IPYBOX_EXAMPLE_APPROVE").is_ok_and(|v| v == "yes");
    while let Some(event) = events.next().await {
        match event? {
            Event::ApprovalRequest(request) => {
                eprint!("Approve {request} (server: {})? [y/N] ", request.server());
                let mut answer = String::from(if auto { "y" } else { "" });
                if auto {
                    eprintln!("y (IPYBOX_EXAMPLE_APPROVE=yes)");
                }
                if !auto {
                    let _ = std::io::stdin().lock().read_line(&mut answer);
                }
                if answer.trim().eq_ignore_ascii_case("y") {
                    request.accept();
                } else {
                    request.reject();
                }
            }
            Event::Output(output) => print!("{}", output.terminal_text().unwrap_or_default()),
            Event::Result(_) => {}
            _ => {}
        }
    }
    executor.stop().await?;
    Ok(())
}
