//! Registering MCP servers as a server panel does it: register or regenerate and learn
//! what changed, and see where each `${VAR}` of a form comes from without its value.

use serde::Serialize;

use super::{CodeExecutor, RegisteredServer};
use crate::error::{Error, Result};
use crate::mcp::ServerParams;
use crate::mcp::params::{VariableSource, Variables};
use crate::registry::{Registry, ToolChanges};

/// What registering (or regenerating) a server did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Registration {
    /// The server as registered now, with its tools.
    pub server: RegisteredServer,
    /// Tools that could not be generated, and why (the others were).
    pub skipped: Vec<SkippedTool>,
    /// What changed against the tools registered before (all added for a new server).
    pub changes: ToolChanges,
}

/// A tool the generator could not turn into a module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedTool {
    /// The tool's name on the server.
    pub tool: String,
    /// Why, in words.
    pub reason: String,
}

/// A `${NAME}` of server parameters, and where its value would come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Placeholder {
    /// The variable.
    pub name: String,
    /// `None`: set neither in the workspace's `.env` nor in ipybox's environment.
    pub source: Option<VariableSource>,
}

impl CodeExecutor {
    /// Register `name` with `params` (`None`: again with the parameters it is registered
    /// with, to pick up a changed server), and say which tools were added, removed or
    /// changed their signature.
    pub async fn update_mcp_server(
        &self,
        name: &str,
        params: Option<&ServerParams>,
    ) -> Result<Registration> {
        let registry = self.registry()?;
        let before = registry.tools.get(name).cloned().unwrap_or_default();
        let params = match params {
            Some(p) => p.clone(),
            None => registry.params_to_regenerate(name).ok_or_else(|| {
                Error::config(format!("no MCP server \"{name}\" is registered here"))
            })?,
        };
        let generated = self.register_mcp_server(name, &params).await?;
        let server = self
            .servers()?
            .into_iter()
            .find(|s| s.name == name)
            .ok_or_else(|| Error::config(format!("\"{name}\" was not kept in the registry")))?;
        Ok(Registration {
            changes: ToolChanges::between(&before, &server.tools),
            server,
            skipped: generated
                .skipped
                .into_iter()
                .map(|(tool, reason)| SkippedTool { tool, reason })
                .collect(),
        })
    }

    /// Where each of `names` would get its value when a server starts: the workspace's
    /// `.env`, ipybox's environment, or nowhere. Values are never returned.
    pub fn placeholders(&self, names: &[String]) -> Result<Vec<Placeholder>> {
        let vars = self.variables(&self.registry()?)?;
        Ok(names
            .iter()
            .map(|name| Placeholder {
                name: name.clone(),
                source: vars.source(name),
            })
            .collect())
    }

    /// The `${VAR}` values a server of this session starts with: a running session's
    /// (a sandboxed one took them at its start, never from a `.env` its kernel may have
    /// written since), else the environment and the workspace's `.env` now.
    pub(super) fn variables(&self, registry: &Registry) -> Result<Variables> {
        match self.snapshot().tools {
            Some(state) => state.variables(),
            None => Variables::load(Some(&registry.workspace)),
        }
    }
}
