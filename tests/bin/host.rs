//! A host process for lifecycle tests: starts an executor (sandboxed with `--sandbox` after
//! the workspace), runs a long cell, prints the gateway's pid and waits to be killed.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::io::Write;

use futures_util::StreamExt;

fn main() {
    let rt = ipybox_tests::runtime();
    rt.block_on(async {
        let dir = std::env::args().nth(1).expect("workspace dir");
        let sandbox = std::env::args().nth(2).as_deref() == Some("--sandbox");
        let e = ipybox::CodeExecutor::builder()
            .working_dir(dir)
            .sandbox(sandbox)
            .build();
        e.start().await.unwrap();
        let pid = e.gateway_pid().await.unwrap();
        let mut s = e.stream(
            "import time\nprint('sleeping', flush=True)\ntime.sleep(600)",
            ipybox::StreamOptions {
                timeout: None,
                outputs: true,
                ..Default::default()
            },
        );
        let _ = s.next().await;
        println!("{pid}");
        std::io::stdout().flush().unwrap();
        std::future::pending::<()>().await;
    });
}
