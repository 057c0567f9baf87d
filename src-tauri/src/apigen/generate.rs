//! `generate_mcp_sources`: connect to an MCP server, list its tools and write the typed Python
//! package `<root>/<server>/` plus the runtime module the generated code calls through.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{ToolSpec, module_names, render_package_init, render_tool_module};
use crate::error::{Error, Result};
use crate::mcp::params::Variables;
use crate::mcp::{ServerParams, connect};
use crate::registry::check_server_name;

/// The runtime module written as `<root>/_runtime.py`.
pub const RUNTIME: &str = include_str!("../../python/mcptools_runtime.py");

/// What a generation produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Generated {
    /// Module names, one per generated tool, in the server's order.
    pub modules: Vec<String>,
    /// The original tool name of each module.
    pub tools: Vec<String>,
    /// Tools that could not be generated, with the reason (the rest still are).
    pub skipped: Vec<(String, String)>,
}

/// Connect to the server, list all its tools and write `root_dir/<server_name>/`. Returns
/// the generated module names; use them as `from <root>.<server_name>.<module> import
/// Params, run`.
pub async fn generate_mcp_sources(
    server_name: &str,
    server_params: &ServerParams,
    root_dir: &Path,
) -> Result<Vec<String>> {
    Ok(generate(
        server_name,
        server_params,
        root_dir,
        Duration::from_secs(30),
    )
    .await?
    .modules)
}

/// [`generate_mcp_sources`] with the details: skipped tools and original names.
pub async fn generate(
    server_name: &str,
    server_params: &ServerParams,
    root_dir: &Path,
    connect_timeout: Duration,
) -> Result<Generated> {
    check_server_name(server_name)?;
    let workspace = root_dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let vars = Variables::load(Some(workspace))?;
    let resolved = server_params.resolve(&vars)?;
    let conn = connect(server_name, &resolved, workspace, connect_timeout).await?;
    let listed = conn.list_tools().await;
    conn.close().await;
    let tools: Vec<ToolSpec> = listed?
        .into_iter()
        .map(|t| ToolSpec {
            name: t.name.to_string(),
            description: t.description.map(|d| d.to_string()),
            input_schema: serde_json::Value::Object((*t.input_schema).clone()),
            output_schema: t
                .output_schema
                .map(|s| serde_json::Value::Object((*s).clone())),
        })
        .collect();
    write_package(server_name, &tools, root_dir)
}

/// Render `tools` and write them as `root_dir/<server_name>/`, replacing what was there.
pub fn write_package(server_name: &str, tools: &[ToolSpec], root_dir: &Path) -> Result<Generated> {
    check_server_name(server_name)?;
    let mut good = Vec::new();
    let mut sources = Vec::new();
    let mut skipped = Vec::new();
    for tool in tools {
        match render_tool_module(server_name, tool) {
            Ok(src) => {
                good.push(tool.clone());
                sources.push(src);
            }
            Err(e) => {
                tracing::warn!(server = server_name, error = %e, "tool skipped");
                skipped.push((tool.name.clone(), e.to_string()));
            }
        }
    }
    let modules = module_names(&good);
    let io = |what: &Path, e: std::io::Error| Error::io(format!("writing {}", what.display()), e);
    std::fs::create_dir_all(root_dir).map_err(|e| io(root_dir, e))?;
    // Everything below goes through the opened directory, never through a link: kernel code
    // (sandboxed or not) can change the workspace, and must not turn ipybox's writes and
    // deletions into writes and deletions elsewhere.
    let root = RealDir::open(root_dir)?;
    // Build the new package beside the old one, then swap, so a failure leaves the old one.
    let staging_name = format!(".{server_name}.tmp-{}", uuid::Uuid::new_v4().simple());
    std::fs::create_dir(root.join(&staging_name)).map_err(|e| io(root_dir, e))?;
    let result = (|| {
        let staging = RealDir::open(&root.join(&staging_name))?;
        let init = render_package_init(server_name, &good, &modules);
        staging.create_file("__init__.py", init.as_bytes())?;
        for (module, src) in modules.iter().zip(&sources) {
            staging.create_file(&format!("{module}.py"), src.as_bytes())?;
        }
        root.remove(server_name)?;
        std::fs::rename(root.join(&staging_name), root.join(server_name))
            .map_err(|e| io(&root_dir.join(server_name), e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(root.join(&staging_name));
    }
    result?;
    root.write_runtime()?;
    Ok(Generated {
        modules,
        tools: good.into_iter().map(|t| t.name).collect(),
        skipped,
    })
}

/// Write `root_dir/_runtime.py` and `root_dir/__init__.py`.
pub fn write_runtime(root_dir: &Path) -> Result<()> {
    RealDir::open(root_dir)?.write_runtime()
}

/// A directory opened without following a link, addressed through its descriptor
/// (`/proc/self/fd/N`) so that a later swap of its path for a link changes nothing.
struct RealDir {
    handle: std::fs::File,
    shown: PathBuf,
}

impl RealDir {
    fn open(path: &Path) -> Result<RealDir> {
        use std::os::unix::fs::OpenOptionsExt;
        let handle = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| {
                let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink());
                if link {
                    Error::Config(format!(
                        "{} is a symbolic link; ipybox writes generated code only into a real directory",
                        path.display()
                    ))
                } else {
                    Error::io(format!("opening {}", path.display()), e)
                }
            })?;
        Ok(RealDir {
            handle,
            shown: path.to_path_buf(),
        })
    }

    fn join(&self, name: &str) -> PathBuf {
        use std::os::fd::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}", self.handle.as_raw_fd())).join(name)
    }

    fn err(&self, name: &str, e: std::io::Error) -> Error {
        Error::io(format!("writing {}", self.shown.join(name).display()), e)
    }

    /// Create `name`, which must not exist yet (so never through a link).
    fn create_file(&self, name: &str, contents: &[u8]) -> Result<()> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.join(name))
            .map_err(|e| self.err(name, e))?;
        f.write_all(contents).map_err(|e| self.err(name, e))
    }

    /// Replace `name` with `contents` (a new file renamed over it: a link is replaced, not
    /// followed).
    fn replace_file(&self, name: &str, contents: &[u8]) -> Result<()> {
        let tmp = format!(".{name}.tmp-{}", uuid::Uuid::new_v4().simple());
        self.create_file(&tmp, contents)?;
        std::fs::rename(self.join(&tmp), self.join(name)).map_err(|e| {
            let _ = std::fs::remove_file(self.join(&tmp));
            self.err(name, e)
        })
    }

    /// Remove the entry `name` if there is one: a directory with its contents, a file or a
    /// link (itself, not what it points to).
    fn remove(&self, name: &str) -> Result<()> {
        let path = self.join(name);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
            Ok(_) => std::fs::remove_file(&path),
            Err(_) => Ok(()),
        }
        .map_err(|e| self.err(name, e))
    }

    fn write_runtime(&self) -> Result<()> {
        let current = std::fs::symlink_metadata(self.join("_runtime.py"))
            .ok()
            .filter(|m| m.is_file())
            .and_then(|_| std::fs::read_to_string(self.join("_runtime.py")).ok());
        if current.as_deref() != Some(RUNTIME) {
            self.replace_file("_runtime.py", RUNTIME.as_bytes())?;
        }
        let init = std::fs::symlink_metadata(self.join("__init__.py"));
        if !init.is_ok_and(|m| m.is_file()) {
            self.replace_file(
                "__init__.py",
                b"\"\"\"MCP tools generated by ipybox: `from mcptools.<server>.<tool> import Params, run`.\"\"\"\n",
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn echo() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "echo".into(),
            description: None,
            input_schema: serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            output_schema: None,
        }]
    }

    #[test]
    fn generation_never_writes_or_deletes_through_a_link() {
        let ws = tempfile::tempdir().expect("tempdir");
        let elsewhere = tempfile::tempdir().expect("tempdir");
        let precious = elsewhere.path().join("precious.txt");
        std::fs::write(&precious, "keep me").expect("write");

        // mcptools itself is a link: refused, nothing touched.
        let root = ws.path().join("mcptools");
        std::os::unix::fs::symlink(elsewhere.path(), &root).expect("symlink");
        let err = write_package("fx", &echo(), &root).expect_err("a linked mcptools");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_dir(elsewhere.path()).expect("dir").count(), 1);
        std::fs::remove_file(&root).expect("unlink");

        // The package directory and _runtime.py are links: replaced, not followed.
        std::fs::create_dir(&root).expect("mkdir");
        std::os::unix::fs::symlink(elsewhere.path(), root.join("fx")).expect("symlink");
        std::os::unix::fs::symlink(&precious, root.join("_runtime.py")).expect("symlink");
        write_package("fx", &echo(), &root).expect("generates");
        assert_eq!(std::fs::read_to_string(&precious).expect("read"), "keep me");
        assert_eq!(std::fs::read_dir(elsewhere.path()).expect("dir").count(), 1);
        let pkg = std::fs::symlink_metadata(root.join("fx")).expect("fx");
        assert!(pkg.is_dir(), "a real package directory");
        assert!(root.join("fx/echo.py").is_file());
        let rt = std::fs::symlink_metadata(root.join("_runtime.py")).expect("runtime");
        assert!(rt.is_file(), "the runtime is a real file");
        assert_eq!(
            std::fs::read_to_string(root.join("_runtime.py")).expect("read"),
            RUNTIME
        );
        // No staging leftovers.
        let names: Vec<String> = std::fs::read_dir(&root)
            .expect("dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.contains(".tmp-")), "{names:?}");
    }
}
