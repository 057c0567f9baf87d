//! What a person is shown about the tool a call goes to and about who made the call: the
//! tool's definition as its server lists it (description, schema, the server's own hints),
//! whether that definition changed since a person accepted it, the MCP client of an agent,
//! and the line of code that made the call. Everything here comes from untrusted sources
//! (the server, the agent, kernel code) and is escaped wherever a person reads it. The
//! definitions a person accepted are pinned in [`pins`].

pub mod pins;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool as its server lists it (`tools/list`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// Its human-readable title, when the server gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub title: Option<String>,
    /// What the server says it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    #[serde(default)]
    pub input_schema: Value,
    /// What the server claims about its behaviour.
    #[serde(default)]
    pub hints: ToolHints,
}

/// The MCP tool annotations: claims the server makes, not facts ipybox checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ToolHints {
    /// `readOnlyHint`: the tool does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub read_only: Option<bool>,
    /// `destructiveHint`: the tool may delete or overwrite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub destructive: Option<bool>,
    /// `idempotentHint`: calling it again with the same arguments does nothing more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub idempotent: Option<bool>,
    /// `openWorldHint`: the tool reaches outside (the internet, other systems).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub open_world: Option<bool>,
}

/// A tool whose definition differs from the one a person accepted: calls to it are held for
/// a person, whatever the rules say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct DefinitionChange {
    /// The definition accepted before; `None` when the tool appeared since.
    pub accepted: Option<ToolDefinition>,
    /// The definition the running server lists now.
    pub now: ToolDefinition,
}

/// The MCP client an agent connected with, as it declared itself (`clientInfo`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Client {
    /// Its declared name ("claude-code").
    pub name: String,
    /// Its declared version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub version: Option<String>,
    /// The agent session (ipybox's id for it).
    pub session: String,
    /// Since when it is connected, in milliseconds since the Unix epoch.
    pub connected_at_ms: u64,
}

/// Names MCP SDKs give a client that did not name itself (the Python SDK's "mcp 0.1.0",
/// rmcp's own crate name): they say which library, not which agent.
const LIBRARY_NAMES: [&str; 5] = ["mcp", "rmcp", "mcp-client", "client", "python-sdk"];

impl Client {
    /// Its declared name and version as a person reads them ("claude-code 2.1.0"), or None
    /// when it gave none of its own (an SDK's default such as "mcp 0.1.0"). Untrusted text,
    /// not escaped.
    pub fn declared(&self) -> Option<String> {
        declared_name(&self.name, self.version.as_deref())
    }
}

/// A client's declared `name` and `version` as a person reads them, or None for an SDK's
/// default name (see [`Client::declared`]).
pub fn declared_name(name: &str, version: Option<&str>) -> Option<String> {
    let trimmed = name.trim();
    if trimmed.is_empty() || LIBRARY_NAMES.contains(&trimmed.to_ascii_lowercase().as_str()) {
        return None;
    }
    Some(match version {
        Some(v) => format!("{name} {v}"),
        None => name.to_owned(),
    })
}

/// What a request carries besides the call itself. Empty where it is not known.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct CallDetails {
    /// The tool's definition as the running server lists it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub tool: Option<ToolDefinition>,
    /// Set when the definition changed since a person accepted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub change: Option<DefinitionChange>,
    /// The agent's MCP client, for a call an agent's code made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub client: Option<Client>,
    /// The line of code that made the call ("line 2: fx.touch(path=p)").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub call_site: Option<String>,
}
