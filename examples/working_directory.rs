//! Working directory: the kernel runs in the directory you choose; files and packages there
//! are visible to the code.
//!
//! `cargo run --example working_directory`

#![allow(clippy::print_stdout)]

use ipybox::CodeExecutor;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join("ipybox-example-workspace");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("data.csv"), "a,b\n1,2\n3,4\n")?;

    let executor = CodeExecutor::builder().working_dir(&dir).build();
    executor.start().await?;

    let code = "import os, csv\nprint(os.getcwd())\nprint(list(csv.DictReader(open('data.csv'))))";
    let result = executor.execute(code, None).await?;
    println!("{}", result.text.unwrap_or_default());

    executor.stop().await?;
    Ok(())
}
