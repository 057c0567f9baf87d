//! Kernel environment: the kernel sees the variables you pass, not ipybox's environment.
//!
//! `cargo run --example kernel_environment`

#![allow(clippy::print_stdout)]

use ipybox::{CodeExecutor, Error};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let executor = CodeExecutor::builder()
        .kernel_env([("API_BASE", "https://api.example.org"), ("DEBUG", "1")])
        .build();
    executor.start().await?;

    let code = "import os\nprint(os.environ['API_BASE'], os.environ['DEBUG'])\nprint('USER' in os.environ)";
    let result = executor.execute(code, None).await?;
    println!("{}", result.text.unwrap_or_default());

    executor.stop().await
}
