//! `generate_mcp_sources`: connect to an MCP server, list its tools and write the typed Python
//! package `<root>/<server>/` plus the runtime module the generated code calls through.

use std::path::Path;
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
    // Build the new package beside the old one, then swap, so a failure leaves the old one.
    let staging = root_dir.join(format!(".{server_name}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|e| io(&staging, e))?;
    let init = render_package_init(server_name, &good, &modules);
    std::fs::write(staging.join("__init__.py"), init).map_err(|e| io(&staging, e))?;
    for (module, src) in modules.iter().zip(&sources) {
        let path = staging.join(format!("{module}.py"));
        std::fs::write(&path, src).map_err(|e| io(&path, e))?;
    }
    let target = root_dir.join(server_name);
    if target.exists() {
        std::fs::remove_dir_all(&target).map_err(|e| io(&target, e))?;
    }
    std::fs::rename(&staging, &target).map_err(|e| io(&target, e))?;
    write_runtime(root_dir)?;
    Ok(Generated {
        modules,
        tools: good.into_iter().map(|t| t.name).collect(),
        skipped,
    })
}

/// Write `root_dir/_runtime.py` and `root_dir/__init__.py`.
pub fn write_runtime(root_dir: &Path) -> Result<()> {
    let runtime = root_dir.join("_runtime.py");
    if std::fs::read_to_string(&runtime).ok().as_deref() != Some(RUNTIME) {
        std::fs::write(&runtime, RUNTIME)
            .map_err(|e| Error::io(format!("writing {}", runtime.display()), e))?;
    }
    let init = root_dir.join("__init__.py");
    if !init.exists() {
        std::fs::write(&init, "\"\"\"MCP tools generated by ipybox: `from mcptools.<server>.<tool> import Params, run`.\"\"\"\n")
            .map_err(|e| Error::io(format!("writing {}", init.display()), e))?;
    }
    Ok(())
}
