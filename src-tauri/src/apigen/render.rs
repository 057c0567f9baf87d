//! Lays out a tool module and a server package's `__init__.py` as Python source.
//!
//! The layout follows black (4-space indents, two blank lines between top-level
//! definitions, long calls split at their arguments) so the files read like hand-written
//! pydantic models. Only [`super::literal`] turns server text into source.

use std::fmt::Write as _;

use super::ToolSpec;
use super::literal::{DocPart, push_docstring, push_py_str, py_str, tidy_description};
use super::schema::{Class, Constraints, Extra, FieldDef, Module, Ty};

/// Black's default line length, used to decide when a `Field(...)` call is split.
const LINE_LENGTH: usize = 88;

/// The `typing` and `pydantic` names a module uses, so that it imports only those.
#[derive(Debug, Default)]
struct Uses {
    annotated: bool,
    any: bool,
    literal: bool,
    field: bool,
    config_dict: bool,
}

pub(crate) fn tool_module(server: &str, tool: &ToolSpec, module: &Module) -> String {
    let mut uses = Uses::default();
    let mut classes = String::new();
    for class in &module.classes {
        classes.push_str("\n\n");
        render_class(&mut classes, class, module, &mut uses, true);
    }
    let description = tool.description.as_deref().and_then(tidy_description);

    let mut out = String::with_capacity(classes.len() + 2048);
    push_module_docstring(&mut out, server, tool, description.as_deref());
    out.push_str("\n\nfrom __future__ import annotations\n\n");
    let typing: Vec<&str> = [
        (uses.annotated, "Annotated"),
        (uses.any, "Any"),
        (uses.literal, "Literal"),
    ]
    .into_iter()
    .filter_map(|(used, name)| used.then_some(name))
    .collect();
    if !typing.is_empty() {
        let _ = writeln!(out, "from typing import {}\n", typing.join(", "));
    }
    let pydantic: Vec<&str> = [
        (true, "BaseModel"),
        (uses.config_dict, "ConfigDict"),
        (uses.field, "Field"),
    ]
    .into_iter()
    .filter_map(|(used, name)| used.then_some(name))
    .collect();
    let _ = writeln!(out, "from pydantic import {}\n", pydantic.join(", "));
    out.push_str("from .._runtime import call_tool, call_tool_blocks\n");
    out.push_str(&classes);

    out.push_str("\n\nTOOL_NAME = ");
    push_py_str(&mut out, &tool.name);
    out.push_str("\nSERVER_NAME = ");
    push_py_str(&mut out, server);
    out.push('\n');

    push_run_signature(&mut out, tool, module, description.as_deref());
    out.push_str(concat!(
        "\n    arguments = params.model_dump(mode=\"json\", by_alias=True, exclude_unset=True)\n",
        "    result = call_tool(SERVER_NAME, TOOL_NAME, arguments)\n",
    ));
    if module.result.is_some() {
        out.push_str("    return Result.model_validate(result)\n");
    } else {
        out.push_str("    return result\n");
    }
    out.push_str(concat!(
        "\n\ndef run_blocks(params: Params) -> list:\n",
        "    \"\"\"Call the tool and return every content block it returned (text, images as\n",
        "    bytes with MIME type, audio, resources).\"\"\"\n",
        "    arguments = params.model_dump(mode=\"json\", by_alias=True, exclude_unset=True)\n",
        "    return call_tool_blocks(SERVER_NAME, TOOL_NAME, arguments)\n",
        "\n\n",
    ));
    for class in &module.classes {
        let _ = writeln!(out, "{}.model_rebuild()", class.name);
    }
    out
}

/// What a person reads of a tool's module: its classes (fields, types, defaults,
/// descriptions) and `def run(params: Params) -> Result:` with its docstring, without the
/// imports, the model configuration and the body — the same text the module holds, so a
/// change here is a change of the tool's signature.
pub(crate) fn interface(tool: &ToolSpec, module: &Module) -> String {
    let mut uses = Uses::default();
    let mut out = String::new();
    for class in &module.classes {
        out.push_str("\n\n");
        render_class(&mut out, class, module, &mut uses, false);
    }
    let description = tool.description.as_deref().and_then(tidy_description);
    push_run_signature(&mut out, tool, module, description.as_deref());
    out.push_str("\n    ...\n");
    out.trim_start_matches('\n').to_owned()
}

/// `\n\ndef run(params: Params) -> Result:` (or `-> str`) and its docstring, indented.
fn push_run_signature(
    out: &mut String,
    tool: &ToolSpec,
    module: &Module,
    description: Option<&str>,
) {
    let returns = if module.result.is_some() {
        "Result"
    } else {
        "str"
    };
    let _ = write!(out, "\n\ndef run(params: Params) -> {returns}:\n    ");
    let fallback = format!("Call the tool \"{}\".", tool.name);
    let doc = match description {
        Some(d) => [DocPart::lines(d)],
        None => [DocPart::line(&fallback)],
    };
    push_docstring(out, "    ", &doc);
}

fn push_module_docstring(
    out: &mut String,
    server: &str,
    tool: &ToolSpec,
    description: Option<&str>,
) {
    let mut parts = Vec::new();
    let (summary, body) = match description {
        Some(d) => match d.split_once('\n') {
            Some((summary, body)) => (summary, Some(body.trim_start_matches('\n'))),
            None => (d, None),
        },
        None => ("", None),
    };
    if summary.is_empty() {
        parts.extend([
            DocPart::line("Tool \""),
            DocPart::line(&tool.name),
            DocPart::line("\"."),
        ]);
    } else {
        parts.push(DocPart::lines(summary));
    }
    // A blank second line, always: Python reads an encoding declaration from a comment on
    // line 1 or 2, and a description must never be able to supply one.
    parts.push(DocPart::lines("\n\n"));
    if let Some(body) = body {
        parts.extend([DocPart::lines(body), DocPart::lines("\n\n")]);
    }
    parts.extend([
        DocPart::lines("Generated by ipybox from the MCP server \""),
        DocPart::line(server),
        DocPart::lines("\" (tool \""),
        DocPart::line(&tool.name),
        DocPart::lines("\"). Do not edit."),
    ]);
    push_docstring(out, "", &parts);
}

fn render_class(out: &mut String, class: &Class, module: &Module, uses: &mut Uses, config: bool) {
    let _ = writeln!(out, "class {}(BaseModel):", class.name);
    let mut blocks: Vec<String> = Vec::new();
    if let Some(doc) = class.doc.as_deref().and_then(tidy_description) {
        let mut block = String::from("    ");
        push_docstring(&mut block, "    ", &[DocPart::lines(&doc)]);
        block.push('\n');
        blocks.push(block);
    }

    let mut block = String::new();
    for comment in &class.comments {
        let _ = writeln!(block, "    # {comment}");
    }
    if config {
        let mut config = Vec::new();
        if class.fields.iter().any(|f| f.py_name != f.schema_name) {
            config.push("populate_by_name=True");
        }
        config.push(match class.extra {
            Extra::Allow => "extra=\"allow\"",
            Extra::Forbid => "extra=\"forbid\"",
        });
        uses.config_dict = true;
        let _ = writeln!(
            block,
            "    model_config = ConfigDict({})",
            config.join(", ")
        );
    }
    // Without the configuration, the comments about extra arguments sit right above the
    // fields they are about.
    if config || class.fields.is_empty() {
        if !block.is_empty() {
            blocks.push(block);
        }
        block = String::new();
    }

    if !class.fields.is_empty() {
        for field in &class.fields {
            render_field(&mut block, field, module, uses);
        }
        blocks.push(block);
    }
    if blocks.is_empty() || (class.fields.is_empty() && !config) {
        blocks.push("    ...\n".to_owned());
    }
    out.push_str(&blocks.join("\n"));
}

fn render_field(out: &mut String, field: &FieldDef, module: &Module, uses: &mut Uses) {
    for comment in &field.comments {
        let _ = writeln!(out, "    # {comment}");
    }
    let (mut annotation, constraints) = field_type(&field.ty, module, uses);
    if !field.required && !field.ty.admits_none() {
        annotation.push_str(" | None");
    }
    let default = if field.required {
        "...".to_owned()
    } else {
        field.default.clone().unwrap_or_else(|| "None".to_owned())
    };
    let mut arguments: Vec<String> = Vec::new();
    if field.py_name != field.schema_name {
        arguments.push(format!("alias={}", py_str(&field.schema_name)));
    }
    arguments.extend(
        constraints
            .0
            .iter()
            .map(|(name, value)| format!("{name}={value}")),
    );
    if let Some(title) = &field.title {
        arguments.push(format!("title={}", py_str(title)));
    }
    if let Some(description) = &field.description {
        arguments.push(format!("description={}", py_str(description)));
    }
    if let Some(examples) = &field.examples {
        arguments.push(format!("examples={examples}"));
    }
    let head = format!("    {}: {annotation}", field.py_name);
    if arguments.is_empty() {
        if field.required {
            let _ = writeln!(out, "{head}");
        } else {
            let _ = writeln!(out, "{head} = {default}");
        }
        return;
    }
    uses.field = true;
    arguments.insert(0, default);
    push_call(out, &format!("{head} = Field("), &arguments);
}

/// Appends `start` + arguments + `)` on one line if it fits, else with the arguments on
/// one indented line, else one argument per line with a trailing comma (black's order).
fn push_call(out: &mut String, start: &str, arguments: &[String]) {
    let joined = arguments.join(", ");
    if width(start) + width(&joined) < LINE_LENGTH {
        let _ = writeln!(out, "{start}{joined})");
    } else if 8 + width(&joined) <= LINE_LENGTH {
        let _ = writeln!(out, "{start}\n        {joined}\n    )");
    } else {
        out.push_str(start);
        out.push('\n');
        for argument in arguments {
            let _ = writeln!(out, "        {argument},");
        }
        out.push_str("    )\n");
    }
}

fn width(text: &str) -> usize {
    text.chars().count()
}

/// The annotation of a field and the constraints that go into its own `Field(...)`:
/// those of its type when the type is a constrained scalar, list or dict, optionally
/// `| None`. Constraints anywhere else stay inside `Annotated[...]`.
fn field_type(ty: &Ty, module: &Module, uses: &mut Uses) -> (String, Constraints) {
    let (inner, nullable) = match ty {
        Ty::Union(members) if members.len() == 2 && members[1] == Ty::None => (&members[0], true),
        other => (other, false),
    };
    let constraints = match inner {
        Ty::Str(c) | Ty::Int(c) | Ty::Float(c) | Ty::List(_, c) | Ty::Dict(_, c)
            if !c.is_empty() =>
        {
            c.clone()
        }
        _ => return (annotation(ty, module, uses), Constraints::default()),
    };
    let mut text = bare(inner, module, uses);
    if nullable {
        text.push_str(" | None");
    }
    (text, constraints)
}

/// A full annotation, constraints wrapped in `Annotated[T, Field(...)]`.
fn annotation(ty: &Ty, module: &Module, uses: &mut Uses) -> String {
    let constraints = match ty {
        Ty::Str(c) | Ty::Int(c) | Ty::Float(c) | Ty::List(_, c) | Ty::Dict(_, c) => c,
        _ => return bare(ty, module, uses),
    };
    let text = bare(ty, module, uses);
    if constraints.is_empty() {
        return text;
    }
    uses.annotated = true;
    uses.field = true;
    let arguments: Vec<String> = constraints
        .0
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    format!("Annotated[{text}, Field({})]", arguments.join(", "))
}

/// An annotation without the node's own constraints (inner nodes keep theirs).
fn bare(ty: &Ty, module: &Module, uses: &mut Uses) -> String {
    match ty {
        Ty::Any => {
            uses.any = true;
            "Any".to_owned()
        }
        Ty::None => "None".to_owned(),
        Ty::Bool => "bool".to_owned(),
        Ty::Str(_) => "str".to_owned(),
        Ty::Int(_) => "int".to_owned(),
        Ty::Float(_) => "float".to_owned(),
        Ty::Literal(values) => {
            uses.literal = true;
            let values: Vec<&str> = values.iter().map(|v| v.0.as_str()).collect();
            format!("Literal[{}]", values.join(", "))
        }
        Ty::List(items, _) => format!("list[{}]", annotation(items, module, uses)),
        Ty::Tuple(items) => {
            let items: Vec<String> = items.iter().map(|t| annotation(t, module, uses)).collect();
            format!("tuple[{}]", items.join(", "))
        }
        Ty::Dict(values, _) => format!("dict[str, {}]", annotation(values, module, uses)),
        Ty::Class(id) => module.classes[*id].name.clone(),
        Ty::Union(members) => {
            let members: Vec<String> = members
                .iter()
                .map(|t| annotation(t, module, uses))
                .collect();
            members.join(" | ")
        }
    }
}

/// `__init__.py` of a server package: what it is, `__all__`, and `TOOLS` mapping each
/// module to the tool name the server knows it by.
pub(crate) fn package_init(server: &str, tools: &[ToolSpec], modules: &[String]) -> String {
    let mut out = String::new();
    push_docstring(
        &mut out,
        "",
        &[
            DocPart::lines("Tools of the MCP server \""),
            DocPart::line(server),
            DocPart::lines("\", one module each.\n\nGenerated by ipybox. Do not edit."),
        ],
    );
    out.push_str("\n\n__all__ = [");
    for module in modules {
        out.push_str("\n    ");
        push_py_str(&mut out, module);
        out.push(',');
    }
    out.push_str(if modules.is_empty() { "]\n" } else { "\n]\n" });
    out.push_str("\nTOOLS = {");
    for (module, tool) in modules.iter().zip(tools) {
        out.push_str("\n    ");
        push_py_str(&mut out, module);
        out.push_str(": ");
        push_py_str(&mut out, &tool.name);
        out.push(',');
    }
    out.push_str(if modules.is_empty() || tools.is_empty() {
        "}\n"
    } else {
        "\n}\n"
    });
    out
}
