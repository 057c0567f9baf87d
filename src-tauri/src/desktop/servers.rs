//! The MCP server panel's commands: each a few lines over the engine's registry. Server
//! parameters arrive as JSON and are checked by the engine, so a form's mistake comes back
//! as `InvalidConfig` in words rather than as a Tauri argument error.

use tauri::State;

use super::dto::{DesktopError, ServerList, ServerProfile};
use super::session::Desktop;
use crate::executor::{Placeholder, Registration};
use crate::mcp::ServerParams;
use crate::registry::ToolSummary;

type Reply<T> = Result<T, DesktopError>;

#[tauri::command]
pub fn mcp_servers(state: State<'_, Desktop>) -> Reply<ServerList> {
    Ok(ServerList {
        servers: state.executor()?.servers()?,
        profiles: crate::sandbox::profile::shipped_profiles()
            .into_iter()
            .filter(|p| p.name.starts_with("mcp-"))
            .map(|p| ServerProfile {
                name: p.name,
                purpose: p.purpose,
            })
            .collect(),
    })
}

/// "Test connection": the tools `params` offers, nothing registered or written.
#[tauri::command]
pub async fn preview_mcp_server(
    state: State<'_, Desktop>,
    params: serde_json::Value,
) -> Reply<Vec<ToolSummary>> {
    let params = ServerParams::from_json(&params)?;
    Ok(state.executor()?.preview_mcp_server(&params).await?)
}

/// Register `name` (generating `mcptools/<name>/`), replacing a server of that name.
#[tauri::command]
pub async fn register_mcp_server(
    state: State<'_, Desktop>,
    name: String,
    params: serde_json::Value,
) -> Reply<Registration> {
    let params = ServerParams::from_json(&params)?;
    Ok(state
        .executor()?
        .update_mcp_server(&name, Some(&params))
        .await?)
}

/// Generate `name` again from what the server offers now; what changed.
#[tauri::command]
pub async fn regenerate_mcp_server(state: State<'_, Desktop>, name: String) -> Reply<Registration> {
    Ok(state.executor()?.update_mcp_server(&name, None).await?)
}

/// Forget `name` and remove `mcptools/<name>/`; `false` when it was not registered.
#[tauri::command]
pub async fn unregister_mcp_server(state: State<'_, Desktop>, name: String) -> Reply<bool> {
    Ok(state.executor()?.unregister_mcp_server(&name).await?)
}

/// Where each `${NAME}` of a form would get its value (never the value).
#[tauri::command]
pub fn mcp_placeholders(state: State<'_, Desktop>, names: Vec<String>) -> Reply<Vec<Placeholder>> {
    Ok(state.executor()?.placeholders(&names)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::RegisteredServer;

    /// The shapes `ui/src/ipc.ts` reads, pinned.
    #[test]
    fn server_lists_keep_the_shape_the_window_reads() {
        let params = ServerParams::from_json(&serde_json::json!({
            "command": "srt", "args": ["--settings", "/p.json", "uvx", "x"], "env": {"K": "${K}"}
        }))
        .expect("valid");
        let list = ServerList {
            servers: vec![RegisteredServer {
                name: "fx".into(),
                params,
                policy: Some("ipybox:mcp-server".into()),
                tools: vec![ToolSummary {
                    tool: "echo-it".into(),
                    module: "echo_it".into(),
                    description: None,
                    interface: Some("class Params(BaseModel):\n    ...".into()),
                }],
            }],
            profiles: vec![ServerProfile {
                name: "mcp-server",
                purpose: "p",
            }],
        };
        assert_eq!(
            serde_json::to_value(list).expect("json"),
            serde_json::json!({
                "servers": [{
                    "name": "fx",
                    "params": {"command": "srt", "args": ["--settings", "/p.json", "uvx", "x"], "env": {"K": "${K}"}},
                    "policy": "ipybox:mcp-server",
                    "tools": [{"tool": "echo-it", "module": "echo_it", "interface": "class Params(BaseModel):\n    ..."}]
                }],
                "profiles": [{"name": "mcp-server", "purpose": "p"}]
            })
        );
        let changes = crate::registry::ToolChanges::between(
            &[ToolSummary {
                tool: "add".into(),
                module: "add".into(),
                description: None,
                interface: Some("class Params(BaseModel):\n    a: int".into()),
            }],
            &[ToolSummary {
                tool: "add".into(),
                module: "add".into(),
                description: None,
                interface: Some("class Params(BaseModel):\n    a: float".into()),
            }],
        );
        assert_eq!(
            serde_json::to_value(changes).expect("json"),
            serde_json::json!({
                "added": [], "removed": [],
                "changed": [{"module": "add", "before": "class Params(BaseModel):\n    a: int", "after": "class Params(BaseModel):\n    a: float"}]
            }),
            "a changed tool comes with its interface before and after"
        );
        let placeholder = Placeholder {
            name: "TOKEN".into(),
            source: Some(crate::mcp::params::VariableSource::DotEnv),
        };
        assert_eq!(
            serde_json::to_value(placeholder).expect("json"),
            serde_json::json!({"name": "TOKEN", "source": "dot_env"})
        );
    }
}
