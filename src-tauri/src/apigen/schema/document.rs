//! One schema document (a tool's input or output schema) walked into classes and types:
//! objects become classes, `$ref`s are resolved (recursive ones share a class), unions
//! flattened, constraints carried over, and what Python cannot enforce noted.

use std::borrow::Cow;
use std::collections::HashMap;
use std::mem;

use serde_json::{Map, Value};

use super::keywords::{
    ANNOTATION_KEYWORDS, branch_name, describe_json, has_properties, has_type_keywords, is_typed,
    last_segment, merge_into, names_something, percent_decode, union_branches,
};
use super::model::{Class, Constraints, Extra, FieldDef, Lit, Ty};
use super::pattern::pattern_is_portable;
use crate::apigen::literal::{py_int, py_number, py_str, py_value};
use crate::apigen::names::{NameSet, class_name_base, default_title, item_name};
use crate::apigen::{ApigenError, SchemaRole};

/// Nesting beyond this is refused: real schemas stay far below it, and the generated
/// annotations must stay within what Python's parser accepts.
const MAX_DEPTH: usize = 64;

/// Upper bound on the work for one tool (schema nodes visited plus nodes copied from
/// `$ref`s), so that a hostile schema cannot make generation slow or the output huge.
const MAX_NODES: usize = 100_000;

/// State shared by the input and output schema of one tool: they end up in one module.
pub(super) struct Shared<'t> {
    pub(super) tool: &'t str,
    pub(super) classes: Vec<Class>,
    pub(super) class_names: NameSet,
    pub(super) spent: usize,
}

/// Text added to a field's description: what the schema says that the Python type does
/// not enforce.
type Notes = Vec<String>;

/// One schema document (input or output) and what has been built from it.
pub(super) struct Document<'s, 't, 'a> {
    shared: &'s mut Shared<'t>,
    role: SchemaRole,
    root: &'a Value,
    /// Classes built for JSON pointers (`""` is the root), so that `$ref`s, including
    /// recursive ones, share one class.
    classes_by_pointer: HashMap<String, usize>,
    /// Types built for `$ref` targets, with the notes they produced.
    types_by_pointer: HashMap<String, (Ty, Notes)>,
    /// `$ref`s being resolved, innermost last.
    resolving: Vec<String>,
    notes: Notes,
    comments: Vec<&'static str>,
}

impl<'s, 't, 'a> Document<'s, 't, 'a> {
    pub(super) fn new(shared: &'s mut Shared<'t>, role: SchemaRole, root: &'a Value) -> Self {
        Self {
            shared,
            role,
            root,
            classes_by_pointer: HashMap::new(),
            types_by_pointer: HashMap::new(),
            resolving: Vec::new(),
            notes: Vec::new(),
            comments: Vec::new(),
        }
    }

    fn error_not_object(&self, found: String) -> ApigenError {
        ApigenError::NotAnObjectSchema {
            tool: self.shared.tool.to_owned(),
            role: self.role,
            found,
        }
    }

    fn spend(&mut self, nodes: usize) -> Result<(), ApigenError> {
        self.shared.spent += nodes;
        if self.shared.spent > MAX_NODES {
            return Err(ApigenError::TooLarge {
                tool: self.shared.tool.to_owned(),
                role: self.role,
                limit: MAX_NODES,
            });
        }
        Ok(())
    }

    fn check_depth(&self, depth: usize) -> Result<(), ApigenError> {
        if depth > MAX_DEPTH {
            return Err(ApigenError::TooDeep {
                tool: self.shared.tool.to_owned(),
                role: self.role,
                limit: MAX_DEPTH,
            });
        }
        Ok(())
    }

    /// Builds the class `name` (`Params` or `Result`) from the document root, which must
    /// describe an object.
    pub(super) fn root_class(
        mut self,
        name: &str,
        fallback_doc: Option<&str>,
    ) -> Result<usize, ApigenError> {
        let mut pointers = vec![String::new()];
        let mut schema = self.root;
        // Follow a root `$ref` (pydantic and others emit `{"$ref": "#/$defs/Args"}`).
        while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let pointer = self.pointer(reference)?;
            if pointers.contains(&pointer) {
                return Err(self.error_not_object("a $ref cycle".to_owned()));
            }
            schema = self.resolve(&pointer, reference)?;
            pointers.push(pointer);
        }
        let schema: Cow<'a, Map<String, Value>> = match schema {
            Value::Bool(true) => Cow::Owned(Map::new()),
            Value::Object(map) if map.contains_key("allOf") => {
                Cow::Owned(self.merge_all_of(map, 0)?)
            }
            Value::Object(map) => Cow::Borrowed(map),
            other => return Err(self.error_not_object(describe_json(other))),
        };
        if let Some(types) = schema.get("type") {
            let names: Vec<&str> = match types {
                Value::String(t) => vec![t.as_str()],
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if !names.contains(&"object") {
                return Err(self.error_not_object(format!("type {types}")));
            }
        }
        let doc = schema
            .get("description")
            .and_then(Value::as_str)
            .or(fallback_doc)
            .map(str::to_owned);
        let id = self.push_class(name.to_owned(), doc, &schema);
        for pointer in pointers {
            self.classes_by_pointer.insert(pointer, id);
        }
        let branches = union_branches(&schema);
        if !has_properties(&schema) && branches.iter().any(is_typed) {
            // A union of argument shapes cannot be one flat model: offer every property
            // of every branch as an optional field and let the server decide.
            let mut merged = Map::new();
            for branch in branches {
                let flat = self.flatten(branch, 0)?;
                merge_into(&mut merged, &flat);
            }
            merged.remove("required");
            self.fill_fields(id, &merged, 0)?;
            self.shared.classes[id].extra = Extra::Allow;
            self.shared.classes[id].comments.push(
                "The schema is a union of object shapes; each field belongs to some of them.",
            );
        } else {
            self.fill_fields(id, &schema, 0)?;
        }
        if name == "Params" && self.shared.classes[id].extra == Extra::Allow {
            self.shared.classes[id]
                .comments
                .push("Arguments not declared below are passed to the tool as given.");
        }
        Ok(id)
    }

    fn push_class(
        &mut self,
        name: String,
        doc: Option<String>,
        schema: &Map<String, Value>,
    ) -> usize {
        let forbids = |key: &str| schema.get(key) == Some(&Value::Bool(false));
        let extra = if forbids("additionalProperties") || forbids("unevaluatedProperties") {
            Extra::Forbid
        } else {
            Extra::Allow
        };
        self.shared.classes.push(Class {
            name,
            doc,
            fields: Vec::new(),
            extra,
            comments: Vec::new(),
        });
        self.shared.classes.len() - 1
    }

    fn fill_fields(
        &mut self,
        id: usize,
        schema: &Map<String, Value>,
        depth: usize,
    ) -> Result<(), ApigenError> {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return Ok(());
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, property) in properties {
            if property == &Value::Bool(false) {
                continue;
            }
            self.spend(1)?;
            let outer_notes = mem::take(&mut self.notes);
            let outer_comments = mem::take(&mut self.comments);
            let ty = self.ty(property, name, None, depth + 1);
            let notes = mem::replace(&mut self.notes, outer_notes);
            let comments = mem::replace(&mut self.comments, outer_comments);
            let field = field_def(
                name,
                property,
                ty?,
                required.contains(&name.as_str()),
                notes,
                comments,
            );
            self.shared.classes[id].fields.push(field);
        }
        Ok(())
    }

    /// The type of `schema`. `hint` names a class made for it; `pointer` is set when
    /// `schema` is the target of a `$ref`, so its class is shared.
    fn ty(
        &mut self,
        schema: &Value,
        hint: &str,
        pointer: Option<&str>,
        depth: usize,
    ) -> Result<Ty, ApigenError> {
        self.spend(1)?;
        self.check_depth(depth)?;
        let Value::Object(map) = schema else {
            // `true`, and anything that is not a schema at all.
            return Ok(Ty::Any);
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            return self.ref_ty(reference, depth);
        }
        let nullable = map.get("nullable") == Some(&Value::Bool(true));
        let ty = self.shape_ty(map, hint, pointer, depth)?;
        Ok(if nullable {
            Ty::union(vec![ty, Ty::None])
        } else {
            ty
        })
    }

    fn shape_ty(
        &mut self,
        map: &Map<String, Value>,
        hint: &str,
        pointer: Option<&str>,
        depth: usize,
    ) -> Result<Ty, ApigenError> {
        if let Some(parts) = map
            .get("allOf")
            .and_then(Value::as_array)
            .filter(|p| !p.is_empty())
        {
            let mut rest = map.clone();
            rest.remove("allOf");
            if parts.len() == 1 && !has_type_keywords(&rest) {
                return self.ty(&parts[0], hint, pointer, depth + 1);
            }
            let merged = Value::Object(self.merge_all_of(map, depth)?);
            return self.ty(&merged, hint, pointer, depth + 1);
        }
        let branches = union_branches(map);
        if branches.iter().any(is_typed) {
            let mut base = map.clone();
            for key in ["anyOf", "oneOf"].into_iter().chain(ANNOTATION_KEYWORDS) {
                base.remove(key);
            }
            let distribute = has_type_keywords(&base);
            let mut members = Vec::with_capacity(branches.len());
            for (index, branch) in branches.iter().enumerate() {
                let name = branch_name(branch, hint, index);
                let member = if distribute {
                    // Keywords beside `anyOf` apply to every branch; the branch's own
                    // keywords (its `type`, say) take precedence.
                    let mut merged = self.flatten(branch, depth + 1)?;
                    merge_into(&mut merged, &base);
                    self.ty(&Value::Object(merged), &name, None, depth + 1)?
                } else {
                    self.ty(branch, &name, None, depth + 1)?
                };
                members.push(member);
            }
            return Ok(Ty::union(members));
        }
        if let Some(values) = map.get("enum").and_then(Value::as_array) {
            return self.enum_ty(values);
        }
        if let Some(value) = map.get("const") {
            return self.enum_ty(std::slice::from_ref(value));
        }
        match map.get("type") {
            Some(Value::String(name)) => self.typed(map, name, hint, pointer, depth),
            Some(Value::Array(names)) => {
                let mut members = Vec::new();
                for name in names.iter().filter_map(Value::as_str) {
                    members.push(self.typed(map, name, hint, pointer, depth)?);
                }
                Ok(Ty::union(members))
            }
            _ if ["properties", "additionalProperties"]
                .iter()
                .any(|k| map.contains_key(*k)) =>
            {
                self.typed(map, "object", hint, pointer, depth)
            }
            _ if ["items", "prefixItems"]
                .iter()
                .any(|k| map.contains_key(*k)) =>
            {
                self.typed(map, "array", hint, pointer, depth)
            }
            _ => Ok(Ty::Any),
        }
    }

    fn typed(
        &mut self,
        map: &Map<String, Value>,
        type_name: &str,
        hint: &str,
        pointer: Option<&str>,
        depth: usize,
    ) -> Result<Ty, ApigenError> {
        Ok(match type_name {
            "string" => Ty::Str(self.string_constraints(map)),
            "integer" => Ty::Int(number_constraints(map)),
            "number" => Ty::Float(number_constraints(map)),
            "boolean" => Ty::Bool,
            "null" => Ty::None,
            "array" => self.array_ty(map, hint, depth)?,
            "object" => self.object_ty(map, hint, pointer, depth)?,
            _ => Ty::Any,
        })
    }

    fn object_ty(
        &mut self,
        map: &Map<String, Value>,
        hint: &str,
        pointer: Option<&str>,
        depth: usize,
    ) -> Result<Ty, ApigenError> {
        if has_properties(map) {
            if let Some(&id) = pointer.and_then(|p| self.classes_by_pointer.get(p)) {
                return Ok(Ty::Class(id));
            }
            let source = match pointer {
                Some(p) => last_segment(p),
                None => map
                    .get("title")
                    .and_then(Value::as_str)
                    .filter(|t| names_something(t))
                    .unwrap_or(hint)
                    .to_owned(),
            };
            let name = self
                .shared
                .class_names
                .claim_class(&class_name_base(&source));
            let doc = map
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let id = self.push_class(name, doc, map);
            if let Some(p) = pointer {
                self.classes_by_pointer.insert(p.to_owned(), id);
            }
            self.fill_fields(id, map, depth)?;
            return Ok(Ty::Class(id));
        }
        let values = match map.get("additionalProperties") {
            Some(schema @ Value::Object(_)) => {
                self.ty(schema, &format!("{hint}_value"), None, depth + 1)?
            }
            _ => Ty::Any,
        };
        let mut constraints = Constraints::default();
        push_count(&mut constraints, map, "minProperties", "min_length");
        push_count(&mut constraints, map, "maxProperties", "max_length");
        Ok(Ty::Dict(Box::new(values), constraints))
    }

    fn array_ty(
        &mut self,
        map: &Map<String, Value>,
        hint: &str,
        depth: usize,
    ) -> Result<Ty, ApigenError> {
        let item_hint = item_name(hint);
        let (prefix, rest) = match (map.get("prefixItems"), map.get("items")) {
            (Some(Value::Array(prefix)), rest) => (Some(prefix), rest),
            (_, Some(Value::Array(prefix))) => (Some(prefix), map.get("additionalItems")),
            (_, items) => (None, items),
        };
        let mut constraints = Constraints::default();
        push_count(&mut constraints, map, "minItems", "min_length");
        push_count(&mut constraints, map, "maxItems", "max_length");
        let Some(prefix) = prefix else {
            let items = match rest {
                Some(schema) => self.ty(schema, &item_hint, None, depth + 1)?,
                None => Ty::Any,
            };
            return Ok(Ty::List(Box::new(items), constraints));
        };
        let mut members = Vec::with_capacity(prefix.len() + 1);
        for (index, schema) in prefix.iter().enumerate() {
            members.push(self.ty(
                schema,
                &format!("{item_hint}_{}", index + 1),
                None,
                depth + 1,
            )?);
        }
        let max_items = map.get("maxItems").and_then(Value::as_u64);
        let closed = rest == Some(&Value::Bool(false))
            || max_items
                .is_some_and(|max| usize::try_from(max).is_ok_and(|max| max <= prefix.len()));
        if closed && !members.is_empty() {
            return Ok(Ty::Tuple(members));
        }
        // `tuple[A, B, *tuple[C, ...]]` is not something pydantic can build, so an open
        // tuple becomes a list of any of its item types.
        self.comments
            .push("The schema describes a tuple with optional extra items; typed as a list.");
        members.push(match rest {
            Some(schema @ Value::Object(_)) => self.ty(schema, &item_hint, None, depth + 1)?,
            _ => Ty::Any,
        });
        Ok(Ty::List(Box::new(Ty::union(members)), constraints))
    }

    fn enum_ty(&mut self, values: &[Value]) -> Result<Ty, ApigenError> {
        self.spend(values.len())?;
        let mut literals = Vec::new();
        let mut others = Vec::new();
        let mut inexpressible = Vec::new();
        for value in values {
            match value {
                Value::Null => others.push(Ty::None),
                Value::Bool(b) => literals.push(Lit(if *b { "True" } else { "False" }.to_owned())),
                Value::String(s) => literals.push(Lit(py_str(s))),
                Value::Number(n) => match py_int(n) {
                    Some(int) => literals.push(Lit(int)),
                    None => {
                        others.push(Ty::Float(Constraints::default()));
                        inexpressible.push(value);
                    }
                },
                Value::Array(_) => {
                    others.push(Ty::List(Box::new(Ty::Any), Constraints::default()));
                    inexpressible.push(value);
                }
                Value::Object(_) => {
                    others.push(Ty::Dict(Box::new(Ty::Any), Constraints::default()));
                    inexpressible.push(value);
                }
            }
        }
        if !inexpressible.is_empty() {
            let listed: Vec<String> = inexpressible.iter().map(|v| v.to_string()).collect();
            self.notes.push(format!("one of: {}", listed.join(", ")));
        }
        let mut members = Vec::new();
        if !literals.is_empty() {
            members.push(Ty::Literal(literals));
        }
        members.extend(others);
        Ok(Ty::union(members))
    }

    fn string_constraints(&mut self, map: &Map<String, Value>) -> Constraints {
        let mut constraints = Constraints::default();
        push_count(&mut constraints, map, "minLength", "min_length");
        push_count(&mut constraints, map, "maxLength", "max_length");
        if let Some(pattern) = map.get("pattern").and_then(Value::as_str) {
            if pattern_is_portable(pattern) {
                constraints.0.push(("pattern", py_str(pattern)));
            } else {
                self.notes.push(format!("pattern: {pattern}"));
            }
        }
        if let Some(format) = map.get("format").and_then(Value::as_str) {
            self.notes.push(format!("format: {format}"));
        }
        constraints
    }

    fn ref_ty(&mut self, reference: &str, depth: usize) -> Result<Ty, ApigenError> {
        let pointer = self.pointer(reference)?;
        if let Some((ty, notes)) = self.types_by_pointer.get(&pointer) {
            let (ty, notes) = (ty.clone(), notes.clone());
            self.spend(ty.size())?;
            self.notes.extend(notes);
            return Ok(ty);
        }
        if let Some(&id) = self.classes_by_pointer.get(&pointer) {
            return Ok(Ty::Class(id));
        }
        if self.resolving.contains(&pointer) {
            // A type defined through itself without an object in between (a JSON value
            // type, say) has no finite Python annotation.
            self.comments
                .push("Recursive references in this schema are typed as Any.");
            return Ok(Ty::Any);
        }
        let target = self.resolve(&pointer, reference)?;
        let notes_before = self.notes.len();
        self.resolving.push(pointer.clone());
        let hint = last_segment(&pointer);
        let ty = self.ty(target, &hint, Some(&pointer), depth + 1);
        self.resolving.pop();
        let ty = ty?;
        let notes = self.notes[notes_before..].to_vec();
        self.types_by_pointer.insert(pointer, (ty.clone(), notes));
        Ok(ty)
    }

    /// The JSON pointer a local `$ref` names (`#/$defs/A` → `/$defs/A`).
    fn pointer(&self, reference: &str) -> Result<String, ApigenError> {
        match reference.strip_prefix('#') {
            Some(fragment) if fragment.is_empty() || fragment.starts_with('/') => {
                percent_decode(fragment).ok_or_else(|| self.unresolvable(reference))
            }
            _ => Err(self.unresolvable(reference)),
        }
    }

    fn resolve(&self, pointer: &str, reference: &str) -> Result<&'a Value, ApigenError> {
        self.root
            .pointer(pointer)
            .ok_or_else(|| self.unresolvable(reference))
    }

    fn unresolvable(&self, reference: &str) -> ApigenError {
        ApigenError::UnresolvableRef {
            tool: self.shared.tool.to_owned(),
            role: self.role,
            reference: reference.to_owned(),
        }
    }

    /// `schema` with its `allOf` parts (and theirs, and `$ref` targets) merged in.
    fn merge_all_of(
        &mut self,
        schema: &Map<String, Value>,
        depth: usize,
    ) -> Result<Map<String, Value>, ApigenError> {
        let mut merged = Map::new();
        let mut own = schema.clone();
        let parts = own.remove("allOf");
        merge_into(&mut merged, &own);
        for part in parts.iter().filter_map(Value::as_array).flatten() {
            let flat = self.flatten(part, depth + 1)?;
            merge_into(&mut merged, &flat);
        }
        Ok(merged)
    }

    /// `schema` as one object: a `$ref` replaced by its target, `allOf` merged.
    fn flatten(&mut self, schema: &Value, depth: usize) -> Result<Map<String, Value>, ApigenError> {
        self.spend(1)?;
        self.check_depth(depth)?;
        let Value::Object(map) = schema else {
            return Ok(Map::new());
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let pointer = self.pointer(reference)?;
            if self.resolving.contains(&pointer) {
                return Ok(Map::new());
            }
            let target = self.resolve(&pointer, reference)?;
            self.resolving.push(pointer);
            let flat = self.flatten(target, depth + 1);
            self.resolving.pop();
            return flat;
        }
        if map.contains_key("allOf") {
            return self.merge_all_of(map, depth);
        }
        Ok(map.clone())
    }
}

fn field_def(
    name: &str,
    property: &Value,
    ty: Ty,
    required: bool,
    notes: Notes,
    comments: Vec<&'static str>,
) -> FieldDef {
    let text = |key: &str| property.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut description = text("description");
    let mut notes_seen: Vec<&String> = Vec::new();
    for note in &notes {
        if !notes_seen.contains(&note) {
            notes_seen.push(note);
        }
    }
    if !notes_seen.is_empty() {
        let joined: Vec<&str> = notes_seen.iter().map(|n| n.as_str()).collect();
        let joined = joined.join("; ");
        description = Some(match description {
            Some(d) if !d.trim().is_empty() => format!("{} ({joined})", d.trim_end()),
            _ => joined,
        });
    }
    let mut comments_seen = Vec::new();
    for comment in comments {
        if !comments_seen.contains(&comment) {
            comments_seen.push(comment);
        }
    }
    FieldDef {
        schema_name: name.to_owned(),
        py_name: String::new(),
        ty,
        required,
        default: if required {
            None
        } else {
            property.get("default").and_then(py_value)
        },
        title: text("title").filter(|t| *t != default_title(name)),
        description,
        examples: property
            .get("examples")
            .filter(|e| e.as_array().is_some_and(|a| !a.is_empty()))
            .and_then(py_value),
        comments: comments_seen,
    }
}

fn number_constraints(map: &Map<String, Value>) -> Constraints {
    let mut constraints = Constraints::default();
    let number = |key: &str| map.get(key).and_then(|v| v.as_number()).map(py_number);
    let exclusive_flag = |key: &str| map.get(key) == Some(&Value::Bool(true));
    if let Some(min) = number("minimum") {
        let key = if exclusive_flag("exclusiveMinimum") {
            "gt"
        } else {
            "ge"
        };
        constraints.0.push((key, min));
    }
    if let Some(min) = number("exclusiveMinimum") {
        constraints.0.push(("gt", min));
    }
    if let Some(max) = number("maximum") {
        let key = if exclusive_flag("exclusiveMaximum") {
            "lt"
        } else {
            "le"
        };
        constraints.0.push((key, max));
    }
    if let Some(max) = number("exclusiveMaximum") {
        constraints.0.push(("lt", max));
    }
    let step = map.get("multipleOf").and_then(Value::as_number);
    if let Some(step) = step.filter(|n| n.as_f64().is_some_and(|f| f > 0.0)) {
        constraints.0.push(("multiple_of", py_number(step)));
    }

    constraints
}

fn push_count(
    constraints: &mut Constraints,
    map: &Map<String, Value>,
    key: &str,
    argument: &'static str,
) {
    if let Some(count) = map.get(key).and_then(Value::as_u64) {
        constraints.0.push((argument, count.to_string()));
    }
}
