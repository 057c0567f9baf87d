//! `generate_mcp_sources`: connect to an MCP server, list its tools and write the typed Python
//! package `<root>/<server>/` plus the runtime module the generated code calls through.

use std::path::Path;
use std::time::Duration;

use super::check_server_name;
use super::{
    ToolSpec, module_names, render_package_init, render_tool_interface, render_tool_module,
};
use crate::error::{Error, Result};
use crate::fsutil::Dir;
use crate::mcp::params::Variables;
use crate::mcp::{ServerParams, connect};

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
    /// The description of each module's tool.
    pub descriptions: Vec<Option<String>>,
    /// Each module's interface: its classes and `run`'s signature, for a person to read.
    pub interfaces: Vec<String>,
    /// The definition of every tool the server listed (skipped ones too), as pinned when
    /// the server is registered.
    pub definitions: Vec<crate::definition::ToolDefinition>,
}

/// Connect to the server, list all its tools and write `root_dir/<server_name>/`. Returns
/// the generated module names; use them as `from <root>.<server_name>.<module> import
/// Params, run`.
pub async fn generate_mcp_sources(
    server_name: &str,
    server_params: &ServerParams,
    root_dir: &Path,
) -> Result<Vec<String>> {
    let workspace = root_dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let vars = Variables::load(Some(workspace))?;
    Ok(generate(
        server_name,
        server_params,
        root_dir,
        &vars,
        Duration::from_secs(30),
    )
    .await?
    .modules)
}

/// [`generate_mcp_sources`] with the details: skipped tools and original names. `${VAR}`s
/// come from `vars`; the workspace is `root_dir`'s parent.
pub async fn generate(
    server_name: &str,
    server_params: &ServerParams,
    root_dir: &Path,
    vars: &Variables,
    connect_timeout: Duration,
) -> Result<Generated> {
    check_server_name(server_name)?;
    let workspace = root_dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (tools, definitions) =
        list_tools_defined(server_name, server_params, workspace, vars, connect_timeout).await?;
    let mut generated = write_package(server_name, &tools, root_dir)?;
    generated.definitions = definitions;
    Ok(generated)
}

/// Connect to a server, list all its tools, and close: what registering it would generate
/// from, without writing anything.
pub async fn list_tools(
    server_name: &str,
    server_params: &ServerParams,
    workspace: &Path,
    vars: &Variables,
    connect_timeout: Duration,
) -> Result<Vec<ToolSpec>> {
    Ok(
        list_tools_defined(server_name, server_params, workspace, vars, connect_timeout)
            .await?
            .0,
    )
}

/// [`list_tools`], with each tool's definition as ipybox pins it.
async fn list_tools_defined(
    server_name: &str,
    server_params: &ServerParams,
    workspace: &Path,
    vars: &Variables,
    connect_timeout: Duration,
) -> Result<(Vec<ToolSpec>, Vec<crate::definition::ToolDefinition>)> {
    let resolved = server_params.resolve(vars)?;
    let program = crate::sandbox::server_program(&resolved)?;
    let conn = connect(server_name, &resolved, program, workspace, connect_timeout).await?;
    let listed = conn.list_tools().await;
    conn.close().await;
    let listed = listed?;
    let definitions = listed
        .iter()
        .map(crate::definition::pins::definition_of)
        .collect();
    let specs = listed
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
    Ok((specs, definitions))
}

/// Remove `root_dir/<server_name>/` (through the opened directory: a link there is removed,
/// not followed).
pub fn remove_package(server_name: &str, root_dir: &Path) -> Result<()> {
    check_server_name(server_name)?;
    if std::fs::symlink_metadata(root_dir).is_err() {
        return Ok(());
    }
    open_root(root_dir)?.remove(server_name).map_err(|e| {
        Error::io(
            format!("removing {}", root_dir.join(server_name).display()),
            e,
        )
    })
}

/// Render `tools` and write them as `root_dir/<server_name>/`, replacing what was there.
pub fn write_package(server_name: &str, tools: &[ToolSpec], root_dir: &Path) -> Result<Generated> {
    check_server_name(server_name)?;
    let mut good = Vec::new();
    let mut sources = Vec::new();
    let mut interfaces = Vec::new();
    let mut skipped = Vec::new();
    for tool in tools {
        match render_tool_module(server_name, tool).and_then(|src| {
            let interface = render_tool_interface(tool)?;
            Ok((src, interface))
        }) {
            Ok((src, interface)) => {
                good.push(tool.clone());
                sources.push(src);
                interfaces.push(interface);
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
    let root = open_root(root_dir)?;
    // Build the new package beside the old one, then swap, so a failure leaves the old one.
    let staging_name = format!(".{server_name}.tmp-{}", uuid::Uuid::new_v4().simple());
    std::fs::create_dir(root.join(&staging_name)).map_err(|e| io(root_dir, e))?;
    let result = (|| {
        let staging_dir = root_dir.join(&staging_name);
        let staging =
            Dir::open_nofollow(&root.join(&staging_name)).map_err(|e| io(&staging_dir, e))?;
        let init = render_package_init(server_name, &good, &modules);
        staging
            .create_file("__init__.py", init.as_bytes())
            .map_err(|e| io(&staging_dir, e))?;
        for (module, src) in modules.iter().zip(&sources) {
            staging
                .create_file(&format!("{module}.py"), src.as_bytes())
                .map_err(|e| io(&staging_dir, e))?;
        }
        let target = root_dir.join(server_name);
        root.remove(server_name).map_err(|e| io(&target, e))?;
        std::fs::rename(root.join(&staging_name), root.join(server_name))
            .map_err(|e| io(&target, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(root.join(&staging_name));
    }
    result?;
    write_runtime_in(&root, root_dir)?;
    Ok(Generated {
        modules,
        descriptions: good.iter().map(|t| t.description.clone()).collect(),
        tools: good.into_iter().map(|t| t.name).collect(),
        skipped,
        interfaces,
        definitions: Vec::new(),
    })
}

/// `root_dir`, opened without following a link.
fn open_root(root_dir: &Path) -> Result<Dir> {
    Dir::open_nofollow(root_dir).map_err(|e| {
        if std::fs::symlink_metadata(root_dir).is_ok_and(|m| m.is_symlink()) {
            Error::config(format!(
                "{} is a symbolic link; ipybox writes generated code only into a real directory",
                root_dir.display()
            ))
        } else {
            Error::io(format!("opening {}", root_dir.display()), e)
        }
    })
}

/// `_runtime.py` (when it differs) and `__init__.py` (when missing) in `root`.
fn write_runtime_in(root: &Dir, root_dir: &Path) -> Result<()> {
    let io = |name: &str, e| Error::io(format!("writing {}", root_dir.join(name).display()), e);
    let current = root
        .is_file("_runtime.py")
        .then(|| std::fs::read_to_string(root.join("_runtime.py")).ok())
        .flatten();
    if current.as_deref() != Some(RUNTIME) {
        root.replace_file("_runtime.py", RUNTIME.as_bytes())
            .map_err(|e| io("_runtime.py", e))?;
    }
    if !root.is_file("__init__.py") {
        root.replace_file(
            "__init__.py",
            b"\"\"\"MCP tools generated by ipybox: `from mcptools.<server>.<tool> import Params, run`.\"\"\"\n",
        )
        .map_err(|e| io("__init__.py", e))?;
    }
    Ok(())
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
