//! JSON Schema → a small model of Python classes and types.
//!
//! Covers the parts of [JSON Schema 2020-12](https://json-schema.org/draft/2020-12/json-schema-core)
//! and draft-07 that MCP servers emit for `inputSchema` and `outputSchema`. Nothing here
//! produces text: names are decided, values are turned into Python literals, and
//! [`super::render`] lays the result out.
//!
//! The parts: `model` is what is built, `document` walks one schema document (input or
//! output) into it, `keywords` reads what a schema's keywords say, and `pattern` decides
//! whether a `pattern` can be enforced in Python.

use super::names::{MODULE_NAMES, NameSet, field_name_base, is_safe_field_name};
use super::{ApigenError, SchemaRole, ToolSpec};

mod document;
mod keywords;
mod model;
mod pattern;

use document::{Document, Shared};
pub(crate) use model::{Class, Constraints, Extra, FieldDef, Module, Ty};

/// Builds the classes for a tool's input schema and, when present, its output schema.
pub(crate) fn build(tool: &ToolSpec) -> Result<Module, ApigenError> {
    let mut shared = Shared {
        tool: &tool.name,
        classes: Vec::new(),
        class_names: NameSet::new(&MODULE_NAMES),
        spent: 0,
    };
    Document::new(&mut shared, SchemaRole::Input, &tool.input_schema)
        .root_class("Params", tool.description.as_deref())?;
    let result = match &tool.output_schema {
        Some(schema) => Some(
            Document::new(&mut shared, SchemaRole::Output, schema).root_class("Result", None)?,
        ),
        None => None,
    };
    let mut classes = shared.classes;
    assign_field_names(&mut classes);
    Ok(Module { classes, result })
}

/// Gives every field its Python name: schema names that are safe stay, the rest are
/// sanitized, and none may equal a class name (pydantic would resolve the annotation to the
/// field instead) or another field of the class.
fn assign_field_names(classes: &mut [Class]) {
    let class_names: Vec<String> = classes.iter().map(|c| c.name.clone()).collect();
    let is_class = |name: &str| class_names.iter().any(|c| c == name);
    for class in classes {
        let mut taken = NameSet::default();
        let keeps_name =
            |f: &FieldDef| is_safe_field_name(&f.schema_name) && !is_class(&f.schema_name);
        for field in class.fields.iter_mut().filter(|f| keeps_name(f)) {
            field.py_name = taken.claim(&field.schema_name);
        }
        for field in class.fields.iter_mut().filter(|f| !keeps_name(f)) {
            let mut base = field_name_base(&field.schema_name);
            if is_class(&base) {
                base.push('_');
            }
            let mut name = taken.claim(&base);
            while is_class(&name) {
                name = taken.claim(&base);
            }
            field.py_name = name;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value, json};

    fn module(input: Value) -> Module {
        let tool = ToolSpec {
            name: "t".to_owned(),
            description: None,
            input_schema: input,
            output_schema: None,
        };
        build(&tool).expect("schema converts")
    }

    #[test]
    fn recursive_refs_share_one_class() {
        let m = module(json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                "parent": {"$ref": "#"}
            }}}
        }));
        let names: Vec<&str> = m.classes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["Params", "Node"],
            "one class per $ref target, however often used"
        );
        assert_eq!(
            m.classes[1].fields[0].ty,
            Ty::List(Box::new(Ty::Class(1)), Constraints::default()),
            "a self-reference points at the class being built"
        );
        assert_eq!(
            m.classes[1].fields[1].ty,
            Ty::Class(0),
            "`#` is the root class"
        );
    }

    #[test]
    fn recursive_value_types_degrade_to_any() {
        let m = module(json!({
            "type": "object",
            "properties": {"v": {"$ref": "#/$defs/Json"}},
            "$defs": {"Json": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#/$defs/Json"}}]}}
        }));
        assert_eq!(
            m.classes[0].fields[0].ty,
            Ty::union(vec![
                Ty::Str(Constraints::default()),
                Ty::List(Box::new(Ty::Any), Constraints::default())
            ]),
            "the recursive reference itself becomes Any"
        );
    }

    #[test]
    fn exponential_refs_are_refused() {
        let mut defs = Map::new();
        defs.insert("d0".to_owned(), json!({"type": "string"}));
        for i in 1..12 {
            let prev = format!("#/$defs/d{}", i - 1);
            defs.insert(
                format!("d{i}"),
                json!({"anyOf": [
                    {"$ref": prev},
                    {"type": "array", "items": {"$ref": prev}},
                    {"type": "object", "additionalProperties": {"$ref": prev}}
                ]}),
            );
        }
        let tool = ToolSpec {
            name: "bomb".to_owned(),
            description: None,
            input_schema: json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d11"}}, "$defs": defs}),
            output_schema: None,
        };
        let error = build(&tool).expect_err("the type doubles with every level");
        assert!(matches!(error, ApigenError::TooLarge { .. }), "{error}");
    }

    #[test]
    fn wide_schemas_stay_fast() {
        let values: Vec<Value> = (0..20_000).map(|i| json!(format!("v{i}"))).collect();
        let branches: Vec<Value> = (0..5_000)
            .map(|i| json!({"type": "string", "minLength": i}))
            .collect();
        let properties: Map<String, Value> = (0..5_000)
            .map(|i| (format!("p{i}"), json!({"type": "integer"})))
            .collect();
        let start = std::time::Instant::now();
        let m = module(json!({"type": "object", "properties": {
            "e": {"enum": values},
            "u": {"anyOf": branches},
            "nested": {"type": "object", "properties": properties}
        }}));
        assert_eq!(
            m.classes[1].fields.len(),
            5_000,
            "every property becomes a field"
        );
        let elapsed = start.elapsed();
        assert!(
            elapsed.as_millis() < 2_000,
            "wide schemas convert in linear time ({elapsed:?})"
        );
    }
}
