//! Stream output chunks as the code produces them; the result comes last.
//!
//! `cargo run --example stream_chunks`

#![allow(clippy::print_stdout)]

use futures_util::StreamExt;
use ipybox::{CodeExecutor, Error, Event, StreamOptions};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let executor = CodeExecutor::builder().build();
    executor.start().await?;

    let code =
        "import time\nfor i in range(5):\n    print(f'step {i}', flush=True)\n    time.sleep(0.2)";
    let mut events = executor.stream(
        code,
        StreamOptions {
            outputs: true,
            ..Default::default()
        },
    );
    while let Some(event) = events.next().await {
        match event? {
            Event::Output(output) => {
                print!("output: {}", output.terminal_text().unwrap_or_default())
            }
            Event::Result(result) => println!("result: {:?}", result.text),
            _ => {}
        }
    }

    executor.stop().await
}
