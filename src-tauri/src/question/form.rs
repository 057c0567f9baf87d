//! The form a server's question asks a person to fill in: its requested schema as fields a
//! window or a terminal can show, the check of an answer against that schema before it goes
//! back, and what of an answer may be recorded (never a secret's value).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation>
//! ("Supported schema types": strings with formats, numbers, booleans, single- and
//! multi-select enums, titled or not; `required`; `default`s, SEP-1034).
//!
//! Everything in a schema is the server's text: names, titles, descriptions and choices are
//! untrusted and escaped wherever a person reads them.

use serde::Serialize;
use serde_json::{Map, Value};

mod format;

pub use format::TextFormat;

/// The form of one question.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "QuestionForm"))]
pub struct Form {
    /// Its fields, in the order the server listed them.
    pub fields: Vec<Field>,
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "QuestionField"))]
pub struct Field {
    /// The property's name: the key of its value in the answer.
    pub name: String,
    /// What the server calls it (untrusted).
    pub title: Option<String>,
    /// What the server says of it (untrusted).
    pub description: Option<String>,
    /// An answer must give it (or have a default for it).
    pub required: bool,
    /// Its value is never recorded nor shown back: a password, a token, a key.
    pub secret: bool,
    /// The value the server proposes, already checked against the field (a default that
    /// does not fit is dropped).
    pub default: Option<Value>,
    /// What kind of value it takes.
    #[serde(flatten)]
    pub kind: Kind,
}

/// What kind of value a field takes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "QuestionFieldKind"))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// A string, of a format when one is given.
    Text {
        /// `email`, `uri`, `date` or `date-time`.
        format: Option<TextFormat>,
        /// Fewest characters.
        min_length: Option<u64>,
        /// Most characters.
        max_length: Option<u64>,
    },
    /// A number (a whole one when `integer`).
    Number {
        /// Only whole numbers.
        integer: bool,
        /// Smallest allowed.
        minimum: Option<f64>,
        /// Largest allowed.
        maximum: Option<f64>,
    },
    /// Yes or no.
    Boolean,
    /// One of the options.
    Choice {
        /// The options.
        options: Vec<Choice>,
    },
    /// Some of the options.
    Choices {
        /// The options.
        options: Vec<Choice>,
        /// Fewest to pick.
        min_items: Option<u64>,
        /// Most to pick.
        max_items: Option<u64>,
    },
}

/// One option of a choice.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "QuestionChoice"))]
pub struct Choice {
    /// The value the answer carries.
    pub value: String,
    /// What the server calls it (untrusted), when it differs from the value.
    pub title: Option<String>,
}

/// Why an answer does not fit its form, in words (the field's title escaped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{label}: {message}")]
pub struct Problem {
    /// The field's name (untrusted).
    pub field: String,
    /// The field as a person knows it: its title or name, escaped.
    pub label: String,
    /// What is wrong.
    pub message: String,
}

/// Words in a field's name or title that say its value is a secret.
const SECRET_WORDS: [&str; 9] = [
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "api_key",
    "apikey",
    "private_key",
    "credential",
];

impl Form {
    /// The form for a requested schema (`{"type": "object", "properties": {…}, "required":
    /// […]}`); an error in words for a schema that is not one.
    pub fn from_schema(schema: &Value) -> Result<Form, String> {
        let properties = match schema.get("properties") {
            Some(Value::Object(p)) => p,
            None => return Ok(Form { fields: Vec::new() }),
            Some(_) => return Err("its `properties` is not an object".into()),
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let fields = properties
            .iter()
            .map(|(name, property)| {
                Field::from_schema(name, property, required.contains(&name.as_str()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Form { fields })
    }

    /// `answer` checked against the form: every value of the right kind and within its
    /// bounds, defaults given for what it leaves out, nothing the form does not ask for.
    /// Numbers and booleans may come as the text a person typed (`"42"`, `"yes"`); an empty
    /// text is a field left out.
    pub fn check(&self, answer: &Map<String, Value>) -> Result<Map<String, Value>, Problem> {
        if let Some(name) = answer
            .keys()
            .find(|k| !self.fields.iter().any(|f| &f.name == *k))
        {
            return Err(Problem {
                field: name.clone(),
                label: crate::display::escape(name).into_owned(),
                message: "the form has no such field".into(),
            });
        }
        let mut checked = Map::new();
        for field in &self.fields {
            let given = answer.get(&field.name).filter(|v| !is_blank(v));
            match (given, &field.default) {
                (Some(value), _) => {
                    let value = field.parse(value).map_err(|m| field.problem(m))?;
                    checked.insert(field.name.clone(), value);
                }
                (None, Some(default)) => {
                    checked.insert(field.name.clone(), default.clone());
                }
                (None, None) if field.required => {
                    return Err(field.problem("it is required".into()));
                }
                (None, None) => {}
            }
        }
        Ok(checked)
    }

    /// What of a checked answer may be recorded: the values of fields that are not secret,
    /// and the names of those whose values were left out.
    pub fn recordable(&self, answer: &Map<String, Value>) -> (Map<String, Value>, Vec<String>) {
        let mut kept = Map::new();
        let mut withheld = Vec::new();
        for (name, value) in answer {
            let secret = self
                .fields
                .iter()
                .find(|f| &f.name == name)
                .is_none_or(|f| f.secret);
            if secret {
                withheld.push(name.clone());
            } else {
                kept.insert(name.clone(), value.clone());
            }
        }
        (kept, withheld)
    }
}

impl Field {
    fn from_schema(name: &str, property: &Value, required: bool) -> Result<Field, String> {
        let text = |key: &str| property.get(key).and_then(Value::as_str).map(str::to_owned);
        let uint = |key: &str| property.get(key).and_then(Value::as_u64);
        let num = |key: &str| property.get(key).and_then(Value::as_f64);
        let bad = |what: &str| format!("the field {} {what}", crate::display::escape(name));
        let kind = match property.get("type").and_then(Value::as_str) {
            Some("string") => match choices(property) {
                Some(options) => Kind::Choice { options },
                None => Kind::Text {
                    format: match property.get("format").and_then(Value::as_str) {
                        None | Some("password") => None,
                        Some("email") => Some(TextFormat::Email),
                        Some("uri") => Some(TextFormat::Uri),
                        Some("date") => Some(TextFormat::Date),
                        Some("date-time") => Some(TextFormat::DateTime),
                        Some(other) => {
                            return Err(bad(&format!(
                                "asks for the format {}, which ipybox does not know",
                                crate::display::escape(other)
                            )));
                        }
                    },
                    min_length: uint("minLength"),
                    max_length: uint("maxLength"),
                },
            },
            Some(t @ ("number" | "integer")) => Kind::Number {
                integer: t == "integer",
                minimum: num("minimum"),
                maximum: num("maximum"),
            },
            Some("boolean") => Kind::Boolean,
            Some("array") => {
                let options = property
                    .get("items")
                    .and_then(choices)
                    .ok_or_else(|| bad("is a list of something other than options"))?;
                Kind::Choices {
                    options,
                    min_items: uint("minItems"),
                    max_items: uint("maxItems"),
                }
            }
            _ => return Err(bad("has a type a form cannot ask for")),
        };
        let title = text("title");
        let secret = property.get("format").and_then(Value::as_str) == Some("password")
            || property.get("writeOnly").and_then(Value::as_bool) == Some(true)
            || looks_secret(name)
            || title.as_deref().is_some_and(looks_secret);
        let mut field = Field {
            name: name.to_owned(),
            title,
            description: text("description"),
            required,
            secret,
            default: None,
            kind,
        };
        // A default that does not fit its own field is not offered.
        field.default = property.get("default").and_then(|d| field.parse(d).ok());
        Ok(field)
    }

    /// The field as a person knows it: its title, else its name; escaped.
    pub fn label(&self) -> String {
        crate::display::escape(self.title.as_deref().unwrap_or(&self.name)).into_owned()
    }

    fn problem(&self, message: String) -> Problem {
        Problem {
            field: self.name.clone(),
            label: self.label(),
            message,
        }
    }

    /// `value` as this field takes it, or what is wrong with it.
    pub fn parse(&self, value: &Value) -> Result<Value, String> {
        match &self.kind {
            Kind::Text {
                format,
                min_length,
                max_length,
            } => {
                let Value::String(s) = value else {
                    return Err("it must be text".into());
                };
                let n = s.chars().count() as u64;
                if let Some(min) = min_length
                    && n < *min
                {
                    return Err(format!("it must be at least {min} characters long"));
                }
                if let Some(max) = max_length
                    && n > *max
                {
                    return Err(format!("it must be at most {max} characters long"));
                }
                if let Some(format) = format {
                    format.check(s)?;
                }
                Ok(Value::String(s.clone()))
            }
            Kind::Number {
                integer,
                minimum,
                maximum,
            } => {
                let n = match value {
                    Value::Number(n) => n.as_f64(),
                    Value::String(s) => s.trim().parse::<f64>().ok().filter(|n| n.is_finite()),
                    _ => None,
                };
                let Some(n) = n else {
                    return Err("it must be a number".into());
                };
                if *integer && n.fract() != 0.0 {
                    return Err("it must be a whole number".into());
                }
                if let Some(min) = minimum
                    && n < *min
                {
                    return Err(format!("it must be at least {min}"));
                }
                if let Some(max) = maximum
                    && n > *max
                {
                    return Err(format!("it must be at most {max}"));
                }
                if *integer && n.abs() < 9.0e15 {
                    Ok(Value::from(n as i64))
                } else {
                    serde_json::Number::from_f64(n)
                        .map(Value::Number)
                        .ok_or_else(|| "it must be a number".into())
                }
            }
            Kind::Boolean => match value {
                Value::Bool(b) => Ok(Value::Bool(*b)),
                Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                    "true" | "yes" | "y" => Ok(Value::Bool(true)),
                    "false" | "no" | "n" => Ok(Value::Bool(false)),
                    _ => Err("it must be yes or no".into()),
                },
                _ => Err("it must be yes or no".into()),
            },
            Kind::Choice { options } => match value {
                Value::String(s) if options.iter().any(|o| &o.value == s) => Ok(value.clone()),
                _ => Err(format!("it must be one of {}", list(options))),
            },
            Kind::Choices {
                options,
                min_items,
                max_items,
            } => {
                let picked: Vec<&str> = match value {
                    Value::Array(items) => items
                        .iter()
                        .map(|i| i.as_str().ok_or("each pick must be one of the options"))
                        .collect::<Result<_, _>>()?,
                    _ => return Err(format!("it must be a list of {}", list(options))),
                };
                if let Some(wrong) = picked
                    .iter()
                    .find(|p| !options.iter().any(|o| o.value == **p))
                {
                    return Err(format!(
                        "{} is not one of {}",
                        crate::display::escape(wrong),
                        list(options)
                    ));
                }
                let n = picked.len() as u64;
                if let Some(min) = min_items
                    && n < *min
                {
                    return Err(format!("pick at least {min}"));
                }
                if let Some(max) = max_items
                    && n > *max
                {
                    return Err(format!("pick at most {max}"));
                }
                Ok(value.clone())
            }
        }
    }
}

/// The options of an enum schema: `enum` (with the legacy `enumNames`), or titled `oneOf` /
/// `anyOf` of `{const, title}`.
fn choices(schema: &Value) -> Option<Vec<Choice>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        return values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                Some(Choice {
                    value: v.as_str()?.to_owned(),
                    title: names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                })
            })
            .collect();
    }
    let titled = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    titled
        .iter()
        .map(|o| {
            Some(Choice {
                value: o.get("const")?.as_str()?.to_owned(),
                title: o.get("title").and_then(Value::as_str).map(str::to_owned),
            })
        })
        .collect()
}

fn list(options: &[Choice]) -> String {
    options
        .iter()
        .map(|o| crate::display::escape(&o.value).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

fn is_blank(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

fn looks_secret(name: &str) -> bool {
    let name: String = name
        .chars()
        .map(|c| match c {
            '-' | ' ' | '.' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    SECRET_WORDS.iter().any(|w| name.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> Form {
        Form::from_schema(&json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Your name", "default": "Ada", "maxLength": 20},
                "email": {"type": "string", "format": "email"},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "ratio": {"type": "number", "minimum": 0.5},
                "subscribe": {"type": "boolean", "default": true},
                "color": {"type": "string", "oneOf": [
                    {"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]},
                "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]},
                         "maxItems": 2},
                "born": {"type": "string", "format": "date"},
                "at": {"type": "string", "format": "date-time"},
                "home": {"type": "string", "format": "uri"},
                "api_token": {"type": "string"},
                "pin": {"type": "string", "title": "Account password"},
                "hidden": {"type": "string", "writeOnly": true},
            },
            "required": ["email", "age"],
        }))
        .expect("a form")
    }

    fn answer(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_schema_becomes_fields_in_the_servers_order() {
        let f = form();
        let names: Vec<&str> = f.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "name",
                "email",
                "age",
                "ratio",
                "subscribe",
                "color",
                "size",
                "tags",
                "born",
                "at",
                "home",
                "api_token",
                "pin",
                "hidden"
            ],
            "the order the server listed"
        );
        let by = |n: &str| f.fields.iter().find(|x| x.name == n).expect("field");
        assert_eq!(by("name").default, Some(json!("Ada")));
        assert!(by("email").required && !by("name").required);
        assert_eq!(
            by("color").kind,
            Kind::Choice {
                options: vec![
                    Choice {
                        value: "r".into(),
                        title: Some("Red".into())
                    },
                    Choice {
                        value: "g".into(),
                        title: Some("Green".into())
                    },
                ]
            },
            "a titled enum keeps its titles"
        );
        assert!(
            matches!(&by("size").kind, Kind::Choice { options } if options[1].title.as_deref() == Some("Medium")),
            "legacy enumNames are titles"
        );
        assert!(matches!(
            by("tags").kind,
            Kind::Choices {
                max_items: Some(2),
                ..
            }
        ));
        assert!(matches!(
            by("age").kind,
            Kind::Number {
                integer: true,
                minimum: Some(0.0),
                maximum: Some(150.0)
            }
        ));
        let secret: Vec<&str> = f
            .fields
            .iter()
            .filter(|x| x.secret)
            .map(|x| x.name.as_str())
            .collect();
        assert_eq!(
            secret,
            ["api_token", "pin", "hidden"],
            "secret by name, by title, by writeOnly; nothing else"
        );
    }

    #[test]
    fn an_answer_is_checked_and_its_defaults_filled_in() {
        let f = form();
        let checked = f
            .check(&answer(
                json!({"email": "a@b.org", "age": "42", "subscribe": "no", "ratio": ""}),
            ))
            .expect("a good answer");
        assert_eq!(
            Value::Object(checked),
            json!({"name": "Ada", "email": "a@b.org", "age": 42, "subscribe": false}),
            "typed text becomes numbers and booleans; an empty field is left out; defaults fill in"
        );
        let problem = |v: Value| f.check(&answer(v)).expect_err("a bad answer").to_string();
        let base = json!({"email": "a@b.org", "age": 1});
        let with = |k: &str, v: Value| {
            let mut b = base.clone();
            b[k] = v;
            b
        };
        assert_eq!(problem(json!({"age": 1})), "email: it is required");
        assert_eq!(
            problem(with("email", json!("not an address"))),
            "email: it must be an email address, like name@example.com"
        );
        assert_eq!(
            problem(with("age", json!("151"))),
            "age: it must be at most 150"
        );
        assert_eq!(
            problem(with("age", json!(2.5))),
            "age: it must be a whole number"
        );
        assert_eq!(
            problem(with("age", json!("old"))),
            "age: it must be a number"
        );
        assert_eq!(
            problem(with("ratio", json!(0.1))),
            "ratio: it must be at least 0.5"
        );
        assert_eq!(
            problem(with("color", json!("blue"))),
            "color: it must be one of r, g"
        );
        assert_eq!(
            problem(with("tags", json!(["a", "b", "c"]))),
            "tags: pick at most 2"
        );
        assert_eq!(
            problem(with("tags", json!(["z"]))),
            "tags: z is not one of a, b, c"
        );
        assert_eq!(
            problem(with("born", json!("2026-02-30"))),
            "born: it must be a date, like 2026-01-31"
        );
        assert!(
            problem(with("at", json!("2026-01-31 09:30")))
                .starts_with("at: it must be a date and time")
        );
        assert!(
            problem(with("home", json!("example.com")))
                .starts_with("home: it must be a full address")
        );
        assert_eq!(
            problem(with("name", json!("x".repeat(21)))),
            "Your name: it must be at most 20 characters long",
            "a field is named by its title"
        );
        assert_eq!(
            problem(with("extra\u{202e}", json!(1))),
            "extra\\u202e: the form has no such field",
            "a field the form does not ask for is refused, its name escaped"
        );
        for good in [
            with("at", json!("2026-01-31T09:30:00Z")),
            with("at", json!("2026-01-31T09:30:00.25+05:30")),
            with("born", json!("2024-02-29")),
            with("home", json!("https://example.com/a?b")),
            with("tags", json!(["a", "c"])),
            with("color", json!("g")),
        ] {
            assert!(f.check(&answer(good.clone())).is_ok(), "{good} fits");
        }
    }

    #[test]
    fn a_secrets_value_is_never_recordable() {
        let f = form();
        let checked = f
            .check(&answer(
                json!({"email": "a@b.org", "age": 3, "api_token": "tok-123",
                                   "pin": "hunter2", "hidden": "x"}),
            ))
            .expect("a good answer");
        let (kept, withheld) = f.recordable(&checked);
        assert_eq!(withheld, ["api_token", "pin", "hidden"]);
        let text = Value::Object(kept).to_string();
        for secret in ["tok-123", "hunter2", "\"x\""] {
            assert!(!text.contains(secret), "{secret} is not recorded: {text}");
        }
        assert!(text.contains("a@b.org"), "other values are: {text}");
    }

    #[test]
    fn a_schema_a_form_cannot_show_is_refused_in_words() {
        let err = Form::from_schema(&json!({"type": "object", "properties": {
            "x\u{1b}[2J": {"type": "object"}}}))
        .expect_err("not a form");
        assert_eq!(
            err,
            "the field x\\u001b[2J has a type a form cannot ask for"
        );
        let bad_default = Form::from_schema(&json!({"type": "object", "properties": {
            "n": {"type": "integer", "maximum": 3, "default": 9}}}))
        .expect("a form");
        assert_eq!(
            bad_default.fields[0].default, None,
            "a default outside the bounds is not offered"
        );
    }
}
