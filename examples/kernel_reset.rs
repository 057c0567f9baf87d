//! Kernel reset: a fresh kernel with no variables and no imports, near-instantly.
//!
//! `cargo run --example kernel_reset`

#![allow(clippy::print_stdout)]

use std::time::Instant;

use ipybox::{CodeExecutor, Error};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let executor = CodeExecutor::builder().build();
    executor.start().await?;

    executor.execute("import math\nx = math.pi", None).await?;
    println!(
        "before reset: {:?}",
        executor.execute("x", None).await?.text
    );

    let t = Instant::now();
    executor.reset().await?;
    println!("reset took {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);

    match executor.execute("x", None).await {
        Err(Error::CodeExecution { error, .. }) => {
            println!("after reset: {}: {}", error.name, error.value)
        }
        other => println!("unexpected: {other:?}"),
    }

    executor.stop().await
}
