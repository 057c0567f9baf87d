//! The parameters of the server's tools, with their descriptions, as JSON Schema clients see.

use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;

// Descriptions are attributes, not doc comments: those would keep their line breaks.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = standard_json_schema)]
pub(super) struct RegisterParams {
    #[schemars(
        description = "Package name for the server's API, mcptools.<server_name>: a valid Python identifier (letters, digits and underscores, no leading digit)."
    )]
    pub(super) server_name: String,
    #[schemars(
        description = "Server config. Stdio: {\"command\", \"args\", \"env\", \"cwd\"}; HTTP: {\"url\", \"headers\"}; optional \"type\": \"stdio\" | \"streamable_http\" | \"sse\". ${VAR} placeholders are replaced from the environment and the workspace's .env."
    )]
    pub(super) server_params: serde_json::Map<String, serde_json::Value>,
}

pub(super) fn default_timeout() -> f64 {
    120.0
}

pub(super) fn default_max_output_chars() -> usize {
    5000
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = standard_json_schema)]
pub(super) struct ExecuteParams {
    #[schemars(description = "Python code to execute in the IPython kernel.")]
    pub(super) code: String,
    #[schemars(
        description = "Maximum execution time in seconds before the kernel is interrupted (it keeps its state). Time spent waiting for a tool call's approval does not count."
    )]
    #[serde(default = "default_timeout")]
    pub(super) timeout: f64,
    #[schemars(
        description = "Maximum number of characters of output to return (longer output is truncated)."
    )]
    #[serde(default = "default_max_output_chars")]
    pub(super) max_output_chars: usize,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = standard_json_schema)]
pub(super) struct InstallParams {
    #[schemars(
        description = "Package spec: a name, name==version or another specifier (numpy>=1.20.0), or a git+https://... URL."
    )]
    pub(super) package_name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = standard_json_schema)]
pub(super) struct ListToolsParams {
    #[schemars(
        description = "Only this MCP server's tools (a registered server name) or this category of saved code actions; omit for everything."
    )]
    #[serde(default)]
    pub(super) server: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = standard_json_schema)]
pub(super) struct CodeActionParameter {
    #[schemars(description = "A Python identifier.")]
    pub(super) name: String,
    #[schemars(
        description = "A Python type annotation: str, int, list[str], dict[str, float] | None, or the name of a model defined in `models`. Default: object."
    )]
    #[serde(rename = "type", default)]
    pub(super) ty: Option<String>,
    #[schemars(description = "What the parameter is (goes into the docstring).")]
    #[serde(default)]
    pub(super) description: Option<String>,
    #[schemars(
        description = "Its default value as JSON (null means None); omit for a required parameter."
    )]
    #[serde(default, deserialize_with = "present")]
    pub(super) default: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = standard_json_schema)]
pub(super) struct CodeActionReturns {
    #[schemars(description = "A Python type annotation (default: object).")]
    #[serde(rename = "type", default)]
    pub(super) ty: Option<String>,
    #[schemars(description = "What it returns (goes into the docstring).")]
    #[serde(default)]
    pub(super) description: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = standard_json_schema)]
pub(super) struct SaveCodeActionParams {
    #[schemars(
        description = "The tool's name, a Python identifier: it becomes gentools.<category>.<name>."
    )]
    pub(super) name: String,
    #[schemars(description = "Its category, a Python identifier (a group of related tools).")]
    pub(super) category: String,
    #[schemars(
        description = "What the tool does: a one-line summary, then details if needed. Becomes run()'s docstring."
    )]
    pub(super) description: String,
    #[schemars(description = "The parameters of run(), in order (those with a default last).")]
    #[serde(default)]
    pub(super) parameters: Vec<CodeActionParameter>,
    #[schemars(description = "What run() returns.")]
    #[serde(default)]
    pub(super) returns: Option<CodeActionReturns>,
    #[schemars(
        description = "Python source of pydantic models (BaseModel and Field are imported) that the annotations use; goes into api.py."
    )]
    #[serde(default)]
    pub(super) models: Option<String>,
    #[schemars(
        description = "The implementation: Python statements forming the body of a function whose arguments are the parameters; it must `return` the result. Imports go inside it; generated MCP tools are imported as in a cell (from mcptools.<server>.<tool> import Params, run)."
    )]
    pub(super) code: String,
}

/// `"default": null` means "defaults to None", not "no default".
pub(super) fn present<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(d).map(Some)
}

impl From<SaveCodeActionParams> for crate::apigen::codeaction::CodeAction {
    fn from(p: SaveCodeActionParams) -> Self {
        use crate::apigen::codeaction::{Parameter, Returns};
        let any = || "object".to_owned();
        crate::apigen::codeaction::CodeAction {
            name: p.name,
            category: p.category,
            description: p.description,
            parameters: p
                .parameters
                .into_iter()
                .map(|q| Parameter {
                    name: q.name,
                    ty: q.ty.unwrap_or_else(any),
                    description: q.description,
                    default: q.default,
                })
                .collect(),
            returns: p.returns.map(|r| Returns {
                ty: r.ty.unwrap_or_else(any),
                description: r.description,
            }),
            models: p.models,
            code: p.code,
        }
    }
}

/// Keep parameter schemas to standard JSON Schema, as the Python ipybox's are: schemars
/// marks Rust number types with formats no JSON Schema validator knows (`uint`, `double`),
/// and writes a whole-number float default as `120.0`.
pub(super) fn standard_json_schema(schema: &mut schemars::Schema) {
    let Some(properties) = schema
        .get_mut("properties")
        .and_then(serde_json::Value::as_object_mut)
    else {
        return;
    };
    for property in properties.values_mut() {
        let Some(property) = property.as_object_mut() else {
            continue;
        };
        property.remove("format");
        if let Some(whole) = property
            .get("default")
            .and_then(serde_json::Value::as_f64)
            .filter(|d| d.fract() == 0.0 && d.abs() < 1e15)
        {
            #[allow(clippy::cast_possible_truncation)]
            property.insert("default".into(), serde_json::json!(whole as i64));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::standard_json_schema;

    #[test]
    fn schemas_lose_rust_formats_and_float_defaults() {
        let mut schema = rmcp::schemars::json_schema!({
            "type": "object",
            "properties": {
                "timeout": {"type": "number", "format": "double", "default": 120.0},
                "max_output_chars": {"type": "integer", "format": "uint", "minimum": 0, "default": 5000},
                "ratio": {"type": "number", "default": 0.5}
            }
        });
        standard_json_schema(&mut schema);
        assert_eq!(
            serde_json::to_value(&schema).expect("json"),
            serde_json::json!({
                "type": "object",
                "properties": {
                    "timeout": {"type": "number", "default": 120},
                    "max_output_chars": {"type": "integer", "minimum": 0, "default": 5000},
                    "ratio": {"type": "number", "default": 0.5}
                }
            })
        );
    }
}
