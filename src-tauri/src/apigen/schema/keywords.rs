//! What a schema's keywords say, read without building anything: which keywords give a
//! shape, `allOf` parts merged, union branches and the names of their classes, `$ref`
//! pointers decoded.

use serde_json::{Map, Value};

/// Keywords that say what a schema is, as opposed to annotating or constraining it.
const TYPE_KEYWORDS: [&str; 11] = [
    "type",
    "$ref",
    "properties",
    "items",
    "prefixItems",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "allOf",
    "additionalProperties",
];

/// Keywords that describe one use of a schema, not its shape; they stay with the field
/// and are not copied into union branches.
pub(super) const ANNOTATION_KEYWORDS: [&str; 7] = [
    "description",
    "title",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "nullable",
];

/// Adds the keywords of `part` to `merged`: properties and `required` are combined,
/// `additionalProperties: false` wins, and otherwise the first value of a keyword stays.
pub(super) fn merge_into(merged: &mut Map<String, Value>, part: &Map<String, Value>) {
    for (key, value) in part {
        match key.as_str() {
            "properties" => {
                let Some(properties) = value.as_object() else {
                    continue;
                };
                let target = merged
                    .entry("properties")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(target) = target {
                    for (name, schema) in properties {
                        target.entry(name.clone()).or_insert_with(|| schema.clone());
                    }
                }
            }
            "required" => {
                let Some(names) = value.as_array() else {
                    continue;
                };
                let target = merged
                    .entry("required")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(target) = target {
                    for name in names {
                        if !target.contains(name) {
                            target.push(name.clone());
                        }
                    }
                }
            }
            "additionalProperties" if value == &Value::Bool(false) => {
                merged.insert(key.clone(), value.clone());
            }
            "allOf" | "$defs" | "definitions" | "$id" | "$schema" => {}
            _ => {
                merged.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
    }
}

pub(super) fn union_branches(map: &Map<String, Value>) -> &[Value] {
    map.get("anyOf")
        .or_else(|| map.get("oneOf"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Does a union branch say what it is (as opposed to only adding constraints)?
pub(super) fn is_typed(branch: &Value) -> bool {
    match branch {
        Value::Bool(_) => true,
        Value::Object(map) => has_type_keywords(map),
        _ => false,
    }
}

pub(super) fn has_type_keywords(map: &Map<String, Value>) -> bool {
    TYPE_KEYWORDS.iter().any(|k| map.contains_key(*k))
}

pub(super) fn has_properties(map: &Map<String, Value>) -> bool {
    map.get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty())
}

/// The class name source for a union branch: its title, or the value of a `const`
/// discriminator appended to the position's name, or the position's name.
pub(super) fn branch_name(branch: &Value, hint: &str, index: usize) -> String {
    if let Some(title) = branch
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| names_something(t))
    {
        return title.to_owned();
    }
    let discriminator = branch
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.values())
        .find_map(|p| {
            p.get("const")
                .or_else(|| {
                    p.get("enum")
                        .and_then(Value::as_array)
                        .filter(|e| e.len() == 1)
                        .and_then(|e| e.first())
                })
                .and_then(Value::as_str)
        });
    match discriminator {
        Some(value) if names_something(value) => format!("{hint}_{value}"),
        _ if index == 0 => hint.to_owned(),
        _ => format!("{hint}_option_{}", index + 1),
    }
}

/// Does `text` make a class name of its own (its first word starts with a letter)?
pub(super) fn names_something(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .find(|word| !word.is_empty())
        .is_some_and(|word| word.starts_with(|c: char| c.is_ascii_alphabetic()))
}

pub(super) fn last_segment(pointer: &str) -> String {
    let segment = pointer.rsplit('/').next().unwrap_or_default();
    let segment = segment.replace("~1", "/").replace("~0", "~");
    if segment.is_empty() {
        "Model".to_owned()
    } else {
        segment
    }
}

pub(super) fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

pub(super) fn describe_json(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(_) => "a number".to_owned(),
        Value::String(_) => "a string".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}
