//! Python names for modules, classes and fields, made from names a server chose.
//!
//! Every name that reaches generated code is ASCII `[A-Za-z_][A-Za-z0-9_]*`, is no
//! [keyword or soft keyword](https://docs.python.org/3/reference/lexical_analysis.html#keywords),
//! and cannot shadow what the generated module or pydantic's `BaseModel` rely on.
//! Collisions get deterministic numeric suffixes in the order names are asked for.

use std::collections::HashSet;

use super::ToolSpec;

const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Soft keywords up to Python 3.12 (`type` statements).
const SOFT_KEYWORDS: [&str; 4] = ["_", "case", "match", "type"];

/// Public attributes of pydantic v2's `BaseModel` outside the `model_` namespace (the v1
/// compatibility API); a field with one of these names shadows it and pydantic warns.
const BASE_MODEL_ATTRIBUTES: [&str; 13] = [
    "construct",
    "copy",
    "dict",
    "fields",
    "from_orm",
    "json",
    "parse_file",
    "parse_obj",
    "parse_raw",
    "schema",
    "schema_json",
    "update_forward_refs",
    "validate",
];

/// Names that generated annotations and class bodies refer to. A field with one of these
/// names would shadow it while pydantic evaluates the class's annotations.
const ANNOTATION_NAMES: [&str; 14] = [
    "Annotated",
    "Any",
    "BaseModel",
    "ConfigDict",
    "Field",
    "Literal",
    "bool",
    "bytes",
    "dict",
    "float",
    "int",
    "list",
    "str",
    "tuple",
];

/// Module-level names of a generated tool module; no model class may take them.
pub(crate) const MODULE_NAMES: [&str; 19] = [
    "Params",
    "Result",
    "Annotated",
    "Any",
    "BaseModel",
    "ConfigDict",
    "Field",
    "Literal",
    "TOOL_NAME",
    "SERVER_NAME",
    "annotations",
    "call_tool",
    "call_tool_blocks",
    "run",
    "run_blocks",
    "tuple",
    "None",
    "True",
    "False",
];

/// Is `name` a valid Python identifier (ASCII letters, digits and underscores, not starting
/// with a digit) that is neither a keyword nor a soft keyword?
///
/// See [identifiers and keywords](https://docs.python.org/3/reference/lexical_analysis.html#identifiers).
pub fn is_valid_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&name)
        && !SOFT_KEYWORDS.contains(&name)
}

/// Python module names for a server's tools, one per tool and in the same order.
///
/// Like upstream ipybox, a name is the tool name lowercased with every character outside
/// `[a-z0-9_]` replaced by `_` (`get-tiny-image` → `get_tiny_image`). Leading underscores
/// are dropped, so no tool can become `__init__`, `_runtime` or a private module; a leading
/// digit gets a `tool_` prefix, a keyword a trailing `_`, and a name with nothing left is
/// `tool`. Duplicates are suffixed `_2`, `_3`, … in listing order.
pub fn module_names(tools: &[ToolSpec]) -> Vec<String> {
    let mut taken = NameSet::new(&[]);
    tools
        .iter()
        .map(|tool| taken.claim(&module_name_base(&tool.name)))
        .collect()
}

fn module_name_base(tool_name: &str) -> String {
    let mapped: String = tool_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let name = mapped.trim_start_matches('_');
    if name.is_empty() {
        "tool".to_owned()
    } else if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("tool_{name}")
    } else if is_valid_identifier(name) {
        name.to_owned()
    } else {
        format!("{name}_")
    }
}

/// The Python name for a property, before de-duplication within its class: the property
/// name itself when that is safe, else a sanitized form (`from` → `from_`, `type-name` →
/// `type_name`, `model_config` → `field_model_config`, `_id` → `id`, `1st` → `field_1st`).
pub(crate) fn field_name_base(property: &str) -> String {
    if is_safe_field_name(property) {
        return property.to_owned();
    }
    let mut name = String::with_capacity(property.len());
    for c in property.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if !(c == '_' && name.ends_with('_')) {
            name.push(c);
        }
    }
    let name = name.trim_matches('_');
    let name = if name.is_empty() {
        "field".to_owned()
    } else if name.starts_with(|c: char| c.is_ascii_digit()) || name.starts_with("model_") {
        format!("field_{name}")
    } else {
        name.to_owned()
    };
    if is_safe_field_name(&name) {
        name
    } else {
        format!("{name}_")
    }
}

/// Can `name` be a pydantic field as it is? Leading underscores make pydantic treat it as
/// private, `model_` is pydantic's namespace, and the rest would shadow something.
pub(crate) fn is_safe_field_name(name: &str) -> bool {
    is_valid_identifier(name)
        && !name.starts_with('_')
        && !name.starts_with("model_")
        && !BASE_MODEL_ATTRIBUTES.contains(&name)
        && !ANNOTATION_NAMES.contains(&name)
}

/// A PascalCase class name from a `$defs` key, title or property name: words split at
/// every character outside `[A-Za-z0-9]`, each capitalized (`time_result` → `TimeResult`,
/// `Repo Path` → `RepoPath`). A leading digit or an empty result gets a `Model` prefix.
pub(crate) fn class_name_base(source: &str) -> String {
    let mut name = String::with_capacity(source.len());
    for word in source.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            name.push(first.to_ascii_uppercase());
            name.extend(chars);
        }
    }
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert_str(0, "Model");
    }
    name
}

/// The name for one item of an array property: `entities` → `entity`, `edits` → `edit`,
/// otherwise `<name>_item` (`content` → `content_item`).
pub(crate) fn item_name(property: &str) -> String {
    let lower = property.to_ascii_lowercase();
    if lower.len() > 3 && lower.ends_with("ies") {
        format!("{}y", &property[..property.len() - 3])
    } else if lower.len() > 1
        && lower.ends_with('s')
        && !lower.ends_with("ss")
        && !lower.ends_with("us")
        && !lower.ends_with("is")
    {
        property[..property.len() - 1].to_owned()
    } else {
        format!("{property}_item")
    }
}

/// The title pydantic derives for a field it documents (`repo_path` → `Repo Path`), after
/// Python's `str.title()`; a schema title equal to it adds nothing.
pub(crate) fn default_title(name: &str) -> String {
    let mut title = String::with_capacity(name.len());
    let mut previous_cased = false;
    for c in name.chars() {
        if c.is_alphabetic() {
            if previous_cased {
                title.extend(c.to_lowercase());
            } else {
                title.extend(c.to_uppercase());
            }
            previous_cased = true;
        } else {
            title.push(if c == '_' { ' ' } else { c });
            previous_cased = false;
        }
    }
    title.trim().to_owned()
}

/// Names already taken in one namespace, handing out free ones deterministically.
#[derive(Debug, Default)]
pub(crate) struct NameSet {
    taken: HashSet<String>,
}

impl NameSet {
    pub(crate) fn new(reserved: &[&str]) -> Self {
        Self {
            taken: reserved.iter().map(|&name| name.to_owned()).collect(),
        }
    }

    /// Takes `base`, or the first free `base_2`, `base_3`, … (`from_2` when `base` already
    /// ends with `_`).
    pub(crate) fn claim(&mut self, base: &str) -> String {
        let separator = if base.ends_with('_') { "" } else { "_" };
        self.claim_with(base, |n| format!("{base}{separator}{n}"))
    }

    /// Takes `base`, or the first free `base2`, `base3`, … (class names).
    pub(crate) fn claim_class(&mut self, base: &str) -> String {
        self.claim_with(base, |n| format!("{base}{n}"))
    }

    fn claim_with(&mut self, base: &str, numbered: impl Fn(usize) -> String) -> String {
        let name = if self.taken.contains(base) {
            (2..)
                .map(numbered)
                .find(|candidate| !self.taken.contains(candidate))
                .unwrap_or_default()
        } else {
            base.to_owned()
        };
        self.taken.insert(name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.to_owned(),
            description: None,
            input_schema: json!({"type": "object"}),
            output_schema: None,
        }
    }

    #[test]
    fn identifiers_follow_python_rules() {
        for valid in ["a", "_a", "A1_b", "from_", "typed", "__init__"] {
            assert!(is_valid_identifier(valid), "{valid} is an identifier");
        }
        for invalid in [
            "", "1a", "a-b", "from", "class", "None", "type", "match", "case", "_", "é", "a b",
        ] {
            assert!(!is_valid_identifier(invalid), "{invalid:?} is not usable");
        }
    }

    #[test]
    fn module_names_are_sanitized_like_upstream_and_unique() {
        let tools: Vec<ToolSpec> = [
            "get-tiny-image",
            "import",
            "1st.tool",
            "",
            "!!!",
            "../../etc/passwd",
            "__init__",
            "_runtime",
            "Echo",
            "echo",
            "echo_2",
            "type",
        ]
        .into_iter()
        .map(tool)
        .collect();
        assert_eq!(
            module_names(&tools),
            [
                "get_tiny_image",
                "import_",
                "tool_1st_tool",
                "tool",
                "tool_2",
                "etc_passwd",
                "init__",
                "runtime",
                "echo",
                "echo_2",
                "echo_2_2",
                "type_",
            ],
        );
    }

    #[test]
    fn field_names_avoid_keywords_and_pydantic() {
        let cases = [
            ("path", "path"),
            ("camelCase", "camelCase"),
            ("from", "from_"),
            ("class", "class_"),
            ("type", "type_"),
            ("type-name", "type_name"),
            ("model_config", "field_model_config"),
            ("model_dump", "field_model_dump"),
            ("json", "json_"),
            ("schema", "schema_"),
            ("str", "str_"),
            ("tuple", "tuple_"),
            ("_id", "id"),
            ("__import__('os').system('x')", "import_os_system_x"),
            ("1st", "field_1st"),
            ("", "field"),
            ("***", "field"),
            ("_", "field"),
            ("über", "ber"),
        ];
        for (property, expected) in cases {
            let name = field_name_base(property);
            assert_eq!(name, expected, "field name for {property:?}");
            assert!(is_safe_field_name(&name), "{name} is safe");
        }
    }

    #[test]
    fn class_names_are_pascal_case() {
        let cases = [
            ("time_result", "TimeResult"),
            ("TimeResult", "TimeResult"),
            ("Repo Path", "RepoPath"),
            ("x): pass\nimport os\nclass Y(", "XPassImportOsClassY"),
            ("2d", "Model2d"),
            ("—", "Model"),
        ];
        for (source, expected) in cases {
            assert_eq!(
                class_name_base(source),
                expected,
                "class name for {source:?}"
            );
        }
    }

    #[test]
    fn array_items_are_named_in_the_singular() {
        let cases = [
            ("entities", "entity"),
            ("edits", "edit"),
            ("status", "status_item"),
            ("content", "content_item"),
            ("s", "s_item"),
        ];
        for (property, expected) in cases {
            assert_eq!(item_name(property), expected, "item name for {property:?}");
        }
    }

    #[test]
    fn default_titles_match_pydantic() {
        let cases = [
            ("repo_path", "Repo Path"),
            ("max_length", "Max Length"),
            ("camelCase", "Camelcase"),
        ];
        for (name, expected) in cases {
            assert_eq!(default_title(name), expected, "str.title() of {name:?}");
        }
    }

    #[test]
    fn name_sets_suffix_collisions_in_order() {
        let mut names = NameSet::new(&["Params"]);
        let claimed = [
            names.claim_class("Params"),
            names.claim_class("Params"),
            names.claim("from_"),
            names.claim("from_"),
            names.claim("a"),
            names.claim("a"),
        ];
        assert_eq!(
            claimed,
            ["Params2", "Params3", "from_", "from_2", "a", "a_2"],
            "reserved and taken names get the next free suffix"
        );
    }
}
