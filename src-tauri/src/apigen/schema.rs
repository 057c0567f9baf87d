//! JSON Schema → a small model of Python classes and types.
//!
//! Covers the parts of [JSON Schema 2020-12](https://json-schema.org/draft/2020-12/json-schema-core)
//! and draft-07 that MCP servers emit for `inputSchema` and `outputSchema`. Nothing here
//! produces text: names are decided, values are turned into Python literals, and
//! [`super::render`] lays the result out.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::mem;

use serde_json::{Map, Value};

use super::literal::{py_int, py_number, py_value};
use super::names::{
    MODULE_NAMES, NameSet, class_name_base, default_title, field_name_base, is_safe_field_name,
    item_name,
};
use super::{ApigenError, SchemaRole, ToolSpec};

/// Nesting beyond this is refused: real schemas stay far below it, and the generated
/// annotations must stay within what Python's parser accepts.
const MAX_DEPTH: usize = 64;

/// Upper bound on the work for one tool (schema nodes visited plus nodes copied from
/// `$ref`s), so that a hostile schema cannot make generation slow or the output huge.
const MAX_NODES: usize = 100_000;

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
const ANNOTATION_KEYWORDS: [&str; 7] = [
    "description",
    "title",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "nullable",
];

/// The classes of one tool module: `Params`, an optional `Result`, and every nested or
/// referenced object, in the order they were first met.
#[derive(Debug)]
pub(crate) struct Module {
    pub classes: Vec<Class>,
    pub result: Option<usize>,
}

#[derive(Debug)]
pub(crate) struct Class {
    pub name: String,
    pub doc: Option<String>,
    pub fields: Vec<FieldDef>,
    pub extra: Extra,
    /// Fixed explanations rendered as comments at the top of the class body.
    pub comments: Vec<&'static str>,
}

/// pydantic's `extra` setting for a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extra {
    /// `additionalProperties` absent, `true` or a schema: unknown keys are kept.
    Allow,
    /// `additionalProperties: false`.
    Forbid,
}

#[derive(Debug)]
pub(crate) struct FieldDef {
    /// The property name in the schema, used as the alias when it differs from `py_name`.
    pub schema_name: String,
    pub py_name: String,
    pub ty: Ty,
    pub required: bool,
    /// Python literal of the schema's `default`.
    pub default: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    /// Python literal of the schema's `examples` list.
    pub examples: Option<String>,
    pub comments: Vec<&'static str>,
}

/// A Python type annotation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Ty {
    Any,
    None,
    Bool,
    Str(Constraints),
    Int(Constraints),
    Float(Constraints),
    Literal(Vec<Lit>),
    List(Box<Ty>, Constraints),
    Tuple(Vec<Ty>),
    Dict(Box<Ty>, Constraints),
    Class(usize),
    Union(Vec<Ty>),
}

/// A value allowed in `typing.Literal`, already rendered as Python source.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Lit(pub String);

/// `Field` keyword arguments constraining a type (`ge=1`, `pattern="…"`), values rendered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Constraints(pub Vec<(&'static str, String)>);

impl Constraints {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Ty {
    /// `a | b | …` with nested unions flattened, duplicates and `Any` absorbed, all
    /// `Literal`s merged into one, and `None` last.
    pub(crate) fn union(members: Vec<Ty>) -> Ty {
        let mut flat = Vec::new();
        let mut literals: Vec<Lit> = Vec::new();
        // Sets keep de-duplication linear: a hostile schema may list thousands of branches.
        let mut seen_types = HashSet::new();
        let mut seen_literals = HashSet::new();
        let mut literal_at = None;
        let mut none = false;
        let mut stack: Vec<Ty> = members.into_iter().rev().collect();
        while let Some(member) = stack.pop() {
            match member {
                Ty::Any => return Ty::Any,
                Ty::None => none = true,
                Ty::Union(inner) => stack.extend(inner.into_iter().rev()),
                Ty::Literal(values) => {
                    literal_at.get_or_insert(flat.len());
                    for value in values {
                        if seen_literals.insert(value.clone()) {
                            literals.push(value);
                        }
                    }
                }
                other => {
                    if seen_types.insert(other.clone()) {
                        flat.push(other);
                    }
                }
            }
        }
        if let Some(at) = literal_at {
            flat.insert(at, Ty::Literal(literals));
        }
        if none {
            flat.push(Ty::None);
        }
        match flat.len() {
            0 => Ty::Any,
            1 => flat.pop().unwrap_or(Ty::Any),
            _ => Ty::Union(flat),
        }
    }

    pub(crate) fn admits_none(&self) -> bool {
        match self {
            Ty::Any | Ty::None => true,
            Ty::Union(members) => members.contains(&Ty::None),
            _ => false,
        }
    }

    fn size(&self) -> usize {
        1 + match self {
            Ty::List(inner, _) | Ty::Dict(inner, _) => inner.size(),
            Ty::Tuple(members) | Ty::Union(members) => members.iter().map(Ty::size).sum(),
            Ty::Literal(values) => values.len(),
            _ => 0,
        }
    }
}

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

/// State shared by the input and output schema of one tool: they end up in one module.
struct Shared<'t> {
    tool: &'t str,
    classes: Vec<Class>,
    class_names: NameSet,
    spent: usize,
}

/// Text added to a field's description: what the schema says that the Python type does
/// not enforce.
type Notes = Vec<String>;

/// One schema document (input or output) and what has been built from it.
struct Document<'s, 't, 'a> {
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
    fn new(shared: &'s mut Shared<'t>, role: SchemaRole, root: &'a Value) -> Self {
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
    fn root_class(mut self, name: &str, fallback_doc: Option<&str>) -> Result<usize, ApigenError> {
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
                Value::String(s) => literals.push(Lit(super::literal::py_str(s))),
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
                constraints
                    .0
                    .push(("pattern", super::literal::py_str(pattern)));
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

/// Adds the keywords of `part` to `merged`: properties and `required` are combined,
/// `additionalProperties: false` wins, and otherwise the first value of a keyword stays.
fn merge_into(merged: &mut Map<String, Value>, part: &Map<String, Value>) {
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

fn union_branches(map: &Map<String, Value>) -> &[Value] {
    map.get("anyOf")
        .or_else(|| map.get("oneOf"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Does a union branch say what it is (as opposed to only adding constraints)?
fn is_typed(branch: &Value) -> bool {
    match branch {
        Value::Bool(_) => true,
        Value::Object(map) => has_type_keywords(map),
        _ => false,
    }
}

fn has_type_keywords(map: &Map<String, Value>) -> bool {
    TYPE_KEYWORDS.iter().any(|k| map.contains_key(*k))
}

fn has_properties(map: &Map<String, Value>) -> bool {
    map.get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty())
}

/// The class name source for a union branch: its title, or the value of a `const`
/// discriminator appended to the position's name, or the position's name.
fn branch_name(branch: &Value, hint: &str, index: usize) -> String {
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
fn names_something(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .find(|word| !word.is_empty())
        .is_some_and(|word| word.starts_with(|c: char| c.is_ascii_alphabetic()))
}

fn last_segment(pointer: &str) -> String {
    let segment = pointer.rsplit('/').next().unwrap_or_default();
    let segment = segment.replace("~1", "/").replace("~0", "~");
    if segment.is_empty() {
        "Model".to_owned()
    } else {
        segment
    }
}

fn percent_decode(text: &str) -> Option<String> {
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

fn describe_json(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(_) => "a number".to_owned(),
        Value::String(_) => "a string".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// Can pydantic's default regex engine (Rust's `regex`) compile this ECMA-262 pattern?
///
/// A conservative check: lookaround, backreferences, nested or empty character classes,
/// class set operators, quantifiers without an operand and malformed braces are refused,
/// so that a pattern the engine would reject never stops the module from importing. A
/// refused pattern is shown in the field's description instead.
fn pattern_is_portable(pattern: &str) -> bool {
    /// What the previous token allows next.
    #[derive(PartialEq)]
    enum Last {
        /// Start, `(` or `|`: no quantifier may follow.
        Nothing,
        /// An atom: a quantifier may follow.
        Atom,
        /// A quantifier: only a lazy `?` may follow.
        Quantifier,
        /// A lazy quantifier: no quantifier may follow.
        Lazy,
    }
    if pattern.len() > 1000 {
        return false;
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut depth = 0usize;
    let mut last = Last::Nothing;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let Some(length) = escape_length(&chars[i + 1..]) else {
                    return false;
                };
                i += 1 + length;
                last = Last::Atom;
                continue;
            }
            '[' => {
                let Some(end) = class_end(&chars, i) else {
                    return false;
                };
                i = end + 1;
                last = Last::Atom;
                continue;
            }
            '(' => {
                depth += 1;
                last = Last::Nothing;
                if chars.get(i + 1) == Some(&'?') {
                    let group = &chars[i + 2..];
                    match group.first() {
                        Some(':') => i += 3,
                        Some('<') => {
                            let name_end = group.iter().position(|&c| c == '>');
                            let Some(name_end) = name_end else {
                                return false;
                            };
                            let name = &group[1..name_end];
                            let valid = name.first().is_some_and(char::is_ascii_alphabetic)
                                && name.iter().all(|c| c.is_ascii_alphanumeric() || *c == '_');
                            if !valid {
                                return false;
                            }
                            i += 3 + name_end;
                        }
                        _ => return false,
                    }
                    continue;
                }
            }
            ')' => {
                if depth == 0 || last == Last::Nothing {
                    return false;
                }
                depth -= 1;
                last = Last::Atom;
            }
            '|' => last = Last::Nothing,
            '?' if last == Last::Quantifier => last = Last::Lazy,
            '*' | '+' | '?' => {
                if last != Last::Atom {
                    return false;
                }
                last = Last::Quantifier;
            }
            '{' => {
                let Some((end, min, max)) = counted_repetition(&chars, i) else {
                    return false;
                };
                if last != Last::Atom
                    || max.is_some_and(|max| max < min)
                    || min > 1000
                    || max > Some(1000)
                {
                    return false;
                }
                i = end + 1;
                last = Last::Quantifier;
                continue;
            }
            '}' | ']' => return false,
            _ => last = Last::Atom,
        }
        i += 1;
    }
    depth == 0
}

/// Length of the escape after a backslash, if both engines read it the same way: class
/// escapes, control-character escapes, hex and Unicode escapes, `\p{…}`, escaped
/// punctuation.
fn escape_length(rest: &[char]) -> Option<usize> {
    let hex = |from: usize, count: usize| {
        rest.get(from..from + count)
            .is_some_and(|h| h.iter().all(char::is_ascii_hexdigit))
    };
    match rest.first()? {
        'd' | 'D' | 'w' | 'W' | 's' | 'S' | 'b' | 'B' | 'n' | 'r' | 't' | 'f' | 'v' => Some(1),
        'x' if hex(1, 2) => Some(3),
        'u' if hex(1, 4) => Some(5),
        'p' | 'P' if rest.get(1) == Some(&'{') => {
            let close = rest.iter().position(|&c| c == '}')?;
            rest[2..close]
                .iter()
                .all(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '=')
                .then_some(close + 1)
        }
        c if c.is_ascii_punctuation() && !matches!(c, '<' | '>') => Some(1),
        _ => None,
    }
}

/// Index of the `]` closing the class opened at `start`, if it is a class both engines
/// read the same way.
fn class_end(chars: &[char], start: usize) -> Option<usize> {
    let mut i = start + 1;
    if chars.get(i) == Some(&'^') {
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        return None;
    }
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            ']' => return Some(i),
            '[' => return None,
            c @ ('&' | '-' | '~') if chars.get(i + 1) == Some(&c) => return None,
            _ => i += 1,
        }
    }
    None
}

/// `{n}`, `{n,}` or `{n,m}` starting at `start`: its closing index, `n` and `m`.
fn counted_repetition(chars: &[char], start: usize) -> Option<(usize, u64, Option<u64>)> {
    let end = start + chars[start..].iter().position(|&c| c == '}')?;
    let body: String = chars[start + 1..end].iter().collect();
    let (min, max) = match body.split_once(',') {
        Some((min, "")) => (min.parse().ok()?, None),
        Some((min, max)) => (min.parse().ok()?, Some(max.parse().ok()?)),
        None => {
            let n = body.parse().ok()?;
            (n, Some(n))
        }
    };
    Some((end, min, max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn unions_are_flattened_and_none_goes_last() {
        let str_ty = Ty::Str(Constraints::default());
        let union = Ty::union(vec![
            Ty::None,
            Ty::Literal(vec![Lit("1".to_owned())]),
            Ty::Union(vec![str_ty.clone(), Ty::Literal(vec![Lit("2".to_owned())])]),
            str_ty.clone(),
        ]);
        assert_eq!(
            union,
            Ty::Union(vec![
                Ty::Literal(vec![Lit("1".to_owned()), Lit("2".to_owned())]),
                str_ty,
                Ty::None
            ]),
            "nested unions flatten, literals merge, duplicates go, None is last"
        );
        assert_eq!(Ty::union(vec![Ty::Bool, Ty::Any]), Ty::Any, "Any absorbs");
        assert_eq!(
            Ty::union(vec![]),
            Ty::Any,
            "an empty union accepts anything"
        );
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

    #[test]
    fn portable_patterns_are_recognised() {
        for ok in [
            r"^[a-zA-Z0-9-_]+$",
            r"\d{3}-\d{4}",
            r"^(?:a|b)*?$",
            r"(?<year>\d{4})",
            r"^\p{L}+$",
            r"[\]]",
            "^$",
            r"a{2,}",
        ] {
            assert!(pattern_is_portable(ok), "{ok} compiles in both engines");
        }
        for bad in [
            r"(?=a)", r"(a)\1", "(", ")", "[", "[]", "[^]", "[[a]]", "[a&&b]", "*a", "a**",
            "a{2,1}", "{x}", "a{1001}", "}", r"\", "(?i)a", "()",
        ] {
            assert!(!pattern_is_portable(bad), "{bad} is refused");
        }
    }
}
