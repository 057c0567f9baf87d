//! Capture plots: images the code displays are saved as files and returned as paths.
//!
//! `cargo run --example capturing_plots`

#![allow(clippy::print_stdout)]

use ipybox::{CodeExecutor, Error};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let images = std::env::temp_dir().join("ipybox-example-images");
    let executor = CodeExecutor::builder().images_dir(&images).build();
    executor.start().await?;

    let code = r#"
import matplotlib.pyplot as plt
import numpy as np

x = np.linspace(0, 10, 100)
plt.figure(figsize=(6, 3))
plt.plot(x, np.sin(x), label="sin")
plt.legend()
plt.show()
"#;
    let result = executor.execute(code, None).await?;
    for image in &result.images {
        println!("saved plot: {}", image.display());
    }

    executor.stop().await
}
