//! A sandboxed kernel: it works in its workspace, but the internet, `.env` files and
//! everything outside the workspace are out of reach.
//!
//! `cargo run --example sandbox` (needs `ipybox setup --sandbox`, see docs/sandbox.md)

#![allow(clippy::print_stdout)]

use ipybox::CodeExecutor;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let workspace = std::env::temp_dir().join("ipybox-sandbox-example");
    std::fs::create_dir_all(&workspace)?;
    std::fs::write(workspace.join(".env"), "API_KEY=not-for-the-kernel\n")?;

    let executor = CodeExecutor::builder()
        .working_dir(&workspace)
        .sandbox(true)
        .build();
    executor.start().await?;

    let code = r#"
import os, socket, urllib.request
open("notes.txt", "w").write("the workspace is writable")
print(open("notes.txt").read())
for name, attempt in [
    (".env", lambda: open(".env").read()),
    ("home", lambda: open(os.path.expanduser("~/ipybox-was-here"), "w")),
    ("DNS", lambda: socket.getaddrinfo("example.org", 443)),
    ("web", lambda: urllib.request.urlopen("https://example.org", timeout=5)),
]:
    try:
        attempt()
        print(f"{name}: reachable")
    except Exception as e:
        print(f"{name}: blocked ({type(e).__name__})")
"#;
    let result = executor.execute(code, None).await?;
    println!("{}", result.text.unwrap_or_default());
    executor.stop().await?;
    Ok(())
}
