//! Typed Python APIs for MCP tools: one pydantic module per tool, generated offline from
//! the tool's [`tools/list`](https://modelcontextprotocol.io/specification/2025-06-18/server/tools#listing-tools)
//! entry.
//!
//! Code in a kernel calls a tool as
//! `from mcptools.<server>.<module> import Params, Result, run`. Each module holds a
//! `Params` model built from the tool's `inputSchema`, a `Result` model when it has an
//! `outputSchema`, and `run`/`run_blocks`, which send the arguments under their schema
//! names through the `_runtime` module that ipybox writes beside the server packages.
//!
//! How JSON Schema maps to pydantic v2 (Python ≥ 3.10):
//!
//! | schema | Python |
//! |---|---|
//! | `string` / `integer` / `number` / `boolean` / `null` | `str` / `int` / `float` / `bool` / `None` |
//! | required property; optional one | `name: T`; `name: T \| None = <default or None>` |
//! | `description`, `title`, `examples` | `Field(description=…, title=…, examples=[…])` (a title equal to pydantic's own is left out) |
//! | `enum`, `const` | `Literal[…]`, `null` as `\| None`; floats, arrays, objects widen to their type and are listed in the description |
//! | `anyOf` / `oneOf` / type arrays / `nullable` | `A \| B`, `T \| None` |
//! | `allOf` | one merged class (properties and `required` combined) |
//! | object with properties | its own class, named after its `$defs` key, title or property (`Point`, `Entity`, `ShapeCircle`) |
//! | object without properties | `dict[str, T]` from `additionalProperties`, else `dict[str, Any]` |
//! | `additionalProperties: false`; absent/`true`/schema | `extra="forbid"`; `extra="allow"` (unknown keys are kept and sent) |
//! | `items`; `prefixItems` (or draft-07 `items: […]`) | `list[T]`; `tuple[A, B]` when closed, else a `list` of the union |
//! | `$ref` (`$defs`, `definitions`, `#`), recursive too | the target's class; recursion through non-objects becomes `Any` |
//! | `minimum`… `multipleOf`, `minLength`/`maxLength`/`pattern`, `minItems`/`maxItems` | `ge`/`gt`/`le`/`lt`/`multiple_of`, `min_length`/`max_length`/`pattern`, in `Field(…)` or `Annotated[T, Field(…)]` |
//! | `format`, a pattern Rust's regex engine may reject | `str`, with the format or pattern in the description |
//! | `{}` / `true` | `Any` |
//!
//! Property names that are not safe Python field names become one (`from` → `from_`)
//! with `alias="from"`; models with aliases set `populate_by_name=True`, and arguments are
//! dumped with `by_alias=True, exclude_unset=True`: the server sees its own names, gets
//! every value the caller set (explicit `None`s included), and applies its own defaults.
//!
//! Schemas come from servers we do not trust. No name, description, enum value, default,
//! pattern or any other text from a schema becomes code: text is emitted only as escaped
//! string literals or escaped docstrings (module `literal`), and names only after sanitizing
//! (module `names`).

pub mod codeaction;
pub mod generate;
mod literal;
pub mod modules;
mod names;
mod render;
mod schema;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use names::{is_valid_identifier, module_names};

/// One tool as listed by an MCP server (`tools/list`).
///
/// See [the `Tool` type](https://modelcontextprotocol.io/specification/2025-06-18/schema#tool).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub input_schema: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
}

/// Which of a tool's schemas an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaRole {
    Input,
    Output,
}

impl fmt::Display for SchemaRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SchemaRole::Input => "input schema",
            SchemaRole::Output => "output schema",
        })
    }
}

/// Why a tool's module could not be generated. Tool names are shown escaped, as they come
/// from the server.
#[derive(Debug, thiserror::Error)]
pub enum ApigenError {
    #[error("tool {tool:?}: the {role} is not an object schema (found {found})")]
    NotAnObjectSchema {
        tool: String,
        role: SchemaRole,
        found: String,
    },
    #[error(
        "tool {tool:?}: cannot resolve $ref {reference:?} in the {role} (only local references are supported)"
    )]
    UnresolvableRef {
        tool: String,
        role: SchemaRole,
        reference: String,
    },
    #[error("tool {tool:?}: the {role} nests deeper than {limit} levels")]
    TooDeep {
        tool: String,
        role: SchemaRole,
        limit: usize,
    },
    #[error(
        "tool {tool:?}: the {role} is too large to generate code for (over {limit} schema nodes)"
    )]
    TooLarge {
        tool: String,
        role: SchemaRole,
        limit: usize,
    },
}

/// The server name of shell commands (`!cmd`, `%%bash`) in approvals and the audit log
/// (`ipybox.shell`); no MCP server can be registered under it.
pub const SHELL_SERVER: &str = "ipybox";

/// A server name becomes a Python package name (`mcptools.<name>`): it must be a valid,
/// non-keyword identifier.
pub fn check_server_name(name: &str) -> crate::error::Result<()> {
    if name == SHELL_SERVER {
        return Err(crate::error::Error::config(format!(
            "{name:?} cannot be a server name: ipybox uses it for the approval of shell commands (ipybox.shell)"
        )));
    }
    if is_valid_identifier(name) && !name.starts_with('_') {
        Ok(())
    } else {
        Err(crate::error::Error::config(format!(
            "{name:?} cannot be a server name: it becomes the Python package mcptools.{name}, so it must be a valid identifier (letters, digits, underscores; not starting with a digit or underscore; not a Python keyword)"
        )))
    }
}

/// Whether `name` can be an MCP tool's name: 1 to 128 ASCII letters, digits, `_`, `-` and `.`
/// as the [specification](https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-names)
/// asks, and `/`, which its first draft allowed and some servers use. A name with anything
/// else (a space, a control character, an escape sequence) is no tool's: kernel code that
/// asks for one is refused before a person is asked.
pub fn is_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'))
}

/// Source of `<server>/<module>.py` for one tool.
pub fn render_tool_module(server_name: &str, tool: &ToolSpec) -> Result<String, ApigenError> {
    let module = schema::build(tool)?;
    Ok(render::tool_module(server_name, tool, &module))
}

/// What a person reads of a tool's module (see `render::interface`): its `Params` and
/// `Result` classes and `def run(params: Params) -> Result:` with its docstring, without
/// imports or the call's body. Two tools with the same interface are called alike.
pub(crate) fn render_tool_interface(tool: &ToolSpec) -> Result<String, ApigenError> {
    let module = schema::build(tool)?;
    Ok(render::interface(tool, &module))
}

/// Source of `<server>/__init__.py`: a docstring naming the server, `__all__` listing the
/// modules, and `TOOLS` mapping each module name to its tool's original name. `modules`
/// is what [`module_names`] returned for `tools`.
pub fn render_package_init(server_name: &str, tools: &[ToolSpec], modules: &[String]) -> String {
    render::package_init(server_name, tools, modules)
}

#[cfg(test)]
mod tests;
