//! Basic execution: start an executor, run code, read the text result, handle an error.
//!
//! `cargo run --example basic_execution`

#![allow(clippy::print_stdout)]

use ipybox::{CodeExecutor, Error};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let executor = CodeExecutor::builder().build();
    executor.start().await?;

    let result = executor.execute("print('Hello, world!')", None).await?;
    println!("output: {}", result.text.unwrap_or_default());

    // State persists between executions.
    executor.execute("numbers = [1, 2, 3]", None).await?;
    let result = executor.execute("sum(numbers)", None).await?;
    println!("sum: {}", result.text.unwrap_or_default());

    // A Python exception is an error value with the exception name, value and traceback.
    match executor.execute("1 / 0", None).await {
        Err(Error::CodeExecution { error, .. }) => {
            println!("raised {}: {}", error.name, error.value)
        }
        other => println!("unexpected: {other:?}"),
    }

    executor.stop().await
}
