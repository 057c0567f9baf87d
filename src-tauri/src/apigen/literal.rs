//! Python literals built from untrusted text and JSON values.
//!
//! Everything a server sends (descriptions, names, enum values, defaults, patterns) reaches
//! the generated source only through these functions, so that it stays data: a string can
//! never end early, start a new line of code, or hide characters a reviewer cannot see.
//! See the [Python lexical analysis](https://docs.python.org/3/reference/lexical_analysis.html#string-and-bytes-literals)
//! for the escape sequences used.

use std::fmt::Write as _;

use serde_json::{Number, Value};

/// JSON values nested deeper than this are not rendered (Python's parser stops at 200
/// nested brackets, and nothing real comes close).
const MAX_LITERAL_DEPTH: usize = 64;

/// A double-quoted Python string literal that evaluates to exactly `text`.
pub(crate) fn py_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    push_py_str(&mut out, text);
    out
}

/// Appends the literal of [`py_str`] to `out`.
pub(crate) fn push_py_str(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => push_escape(out, c),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// One piece of a docstring: template text or server text, either allowed to span lines
/// (descriptions) or kept on one line (names).
#[derive(Debug, Clone, Copy)]
pub(crate) struct DocPart<'a> {
    pub text: &'a str,
    pub multiline: bool,
}

impl<'a> DocPart<'a> {
    pub(crate) fn lines(text: &'a str) -> Self {
        Self {
            text,
            multiline: true,
        }
    }

    pub(crate) fn line(text: &'a str) -> Self {
        Self {
            text,
            multiline: false,
        }
    }
}

/// Appends a `"""…"""` docstring whose value is the concatenated `parts`, with every line
/// after the first indented by `indent`.
///
/// Backslashes are doubled, and a quote is escaped when it comes first or when another
/// quote or the closing delimiter follows it, so no run of three quotes can occur. Raw newlines are kept only
/// inside multi-line parts; every other control or invisible character is escaped. A
/// multi-line docstring closes on its own line, as black formats it.
pub(crate) fn push_docstring(out: &mut String, indent: &str, parts: &[DocPart<'_>]) {
    let chars: Vec<(char, bool)> = parts
        .iter()
        .flat_map(|p| p.text.chars().map(move |c| (c, p.multiline)))
        .collect();
    let multiline = chars.iter().any(|&(c, m)| m && c == '\n');
    out.push_str("\"\"\"");
    for (i, &(c, raw_newline)) in chars.iter().enumerate() {
        let next = chars.get(i + 1).map(|&(c, _)| c);
        match c {
            '\\' => out.push_str("\\\\"),
            '"' if i == 0 || next.is_none_or(|n| n == '"') => out.push_str("\\\""),
            '"' => out.push('"'),
            '\n' if raw_newline => {
                out.push('\n');
                if next.is_some_and(|n| n != '\n') {
                    out.push_str(indent);
                }
            }
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => push_escape(out, c),
            c => out.push(c),
        }
    }
    if multiline {
        out.push('\n');
        out.push_str(indent);
    }
    out.push_str("\"\"\"");
}

/// Text of a description made ready for a docstring: trimmed, Windows line ends folded,
/// trailing blanks removed from each line. `None` when nothing is left.
pub(crate) fn tidy_description(text: &str) -> Option<String> {
    let text = text.replace("\r\n", "\n");
    let lines: Vec<&str> = text.trim().lines().map(str::trim_end).collect();
    let tidy = lines.join("\n");
    (!tidy.is_empty()).then_some(tidy)
}

/// The Python literal for a JSON value (`None`, `True`, numbers, escaped strings, lists,
/// dicts), or `None` when it nests too deeply to be worth rendering.
pub(crate) fn py_value(value: &Value) -> Option<String> {
    let mut out = String::new();
    push_value(&mut out, value, 0).then_some(out)
}

fn push_value(out: &mut String, value: &Value, depth: usize) -> bool {
    if depth > MAX_LITERAL_DEPTH {
        return false;
    }
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&py_number(n)),
        Value::String(s) => push_py_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if !push_value(out, item, depth + 1) {
                    return false;
                }
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                push_py_str(out, key);
                out.push_str(": ");
                if !push_value(out, item, depth + 1) {
                    return false;
                }
            }
            out.push('}');
        }
    }
    true
}

/// A Python number literal. Integers keep every digit (Python ints are unbounded); floats
/// use Rust's shortest round-trip form, which Python reads back to the same value.
pub(crate) fn py_number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    match n.as_f64() {
        Some(f) if f.is_finite() => format!("{f:?}"),
        // serde_json never yields these, but a hand-built `Number` could.
        Some(f) if f.is_nan() => "float(\"nan\")".to_owned(),
        Some(f) if f > 0.0 => "float(\"inf\")".to_owned(),
        Some(_) => "float(\"-inf\")".to_owned(),
        None => "None".to_owned(),
    }
}

/// The integer a JSON number holds exactly, as Python source, if it is one.
pub(crate) fn py_int(n: &Number) -> Option<String> {
    n.as_i64()
        .map(|i| i.to_string())
        .or_else(|| n.as_u64().map(|u| u.to_string()))
}

fn push_escape(out: &mut String, c: char) {
    let code = u32::from(c);
    // Writing to a String cannot fail.
    let _ = if code <= 0xff {
        write!(out, "\\x{code:02x}")
    } else if code <= 0xffff {
        write!(out, "\\u{code:04x}")
    } else {
        write!(out, "\\U{code:08x}")
    };
}

/// Characters that must not appear raw in generated source: control characters (C0, DEL,
/// C1), line and paragraph separators, and the invisible format, space, bidi-override,
/// private-use and noncharacter code points a reader could not see or that tools might
/// treat as line breaks.
pub(crate) fn needs_escape(c: char) -> bool {
    if c.is_control() {
        return true;
    }
    let code = u32::from(c);
    if code & 0xfffe == 0xfffe {
        return true;
    }
    matches!(
        code,
        0x00a0
            | 0x00ad
            | 0x034f
            | 0x0600..=0x0605
            | 0x061c
            | 0x06dd
            | 0x070f
            | 0x0890..=0x0891
            | 0x08e2
            | 0x115f..=0x1160
            | 0x1680
            | 0x17b4..=0x17b5
            | 0x180b..=0x180f
            | 0x2000..=0x200f
            | 0x2028..=0x202f
            | 0x205f..=0x206f
            | 0x3000
            | 0x3164
            | 0xe000..=0xf8ff
            | 0xfdd0..=0xfdef
            | 0xfeff
            | 0xffa0
            | 0xfff0..=0xfffb
            | 0x110bd
            | 0x110cd
            | 0x13430..=0x1343f
            | 0x1bca0..=0x1bca3
            | 0x1d173..=0x1d17a
            | 0xe0000..=0xe0fff
            | 0xf0000..=0x10ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn string_literals_escape_everything_that_could_end_them() {
        assert_eq!(py_str(r#"a"b\c"#), r#""a\"b\\c""#, "quote and backslash");
        assert_eq!(
            py_str("x\ny\rz\0"),
            r#""x\ny\rz\x00""#,
            "line breaks and NUL"
        );
        assert_eq!(
            py_str("\u{2028}\u{202e}\u{feff}"),
            r#""\u2028\u202e\ufeff""#,
            "separators, bidi overrides and BOM are escaped"
        );
        assert_eq!(
            py_str("café ✓ 日本 🦀"),
            "\"café ✓ 日本 🦀\"",
            "printable Unicode stays"
        );
        assert_eq!(
            py_str("\u{10fffe}"),
            r#""\U0010fffe""#,
            "non-BMP escapes use \\U"
        );
    }

    #[test]
    fn docstrings_cannot_be_closed_by_their_content() {
        let mut out = String::new();
        push_docstring(&mut out, "", &[DocPart::lines(r#"a """ import os ""#)]);
        assert_eq!(
            out, r#""""a \"\"" import os \"""""#,
            "no three quotes in a row"
        );
        assert!(!out[3..out.len() - 3].contains("\"\"\""));

        let mut out = String::new();
        push_docstring(&mut out, "    ", &[DocPart::lines("one\ntwo\n\nthree")]);
        assert_eq!(
            out, "\"\"\"one\n    two\n\n    three\n    \"\"\"",
            "continuation lines are indented, blank lines stay empty"
        );

        let mut out = String::new();
        push_docstring(&mut out, "", &[DocPart::line("a\nb\\")]);
        assert_eq!(out, r#""""a\nb\\""""#, "single-line parts escape newlines");
    }

    #[test]
    fn json_values_become_python_literals() {
        let value = json!({"a": [1, -2, 1.5, 1e300, true, null, "q\"\n"], "": {}});
        assert_eq!(
            py_value(&value).as_deref(),
            Some(r#"{"a": [1, -2, 1.5, 1e300, True, None, "q\"\n"], "": {}}"#),
        );
        assert_eq!(
            py_value(&json!(18446744073709551615u64)).as_deref(),
            Some("18446744073709551615")
        );
        assert_eq!(
            py_value(&json!(1.0)).as_deref(),
            Some("1.0"),
            "floats stay floats"
        );

        let mut deep = json!(1);
        for _ in 0..100 {
            deep = json!([deep]);
        }
        assert_eq!(
            py_value(&deep),
            None,
            "absurd nesting is refused, not rendered"
        );
    }

    #[test]
    fn descriptions_are_tidied_for_docstrings() {
        assert_eq!(
            tidy_description("  a  \r\nb\t\n\n"),
            Some("a\nb".to_owned())
        );
        assert_eq!(tidy_description(" \n "), None);
    }
}
