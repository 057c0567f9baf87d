//! A notebook as a Python script, laid out as nbconvert's `--to script` lays it out: the
//! cells in order, each code cell under `# In[n]:`, Markdown as `# ` comments, raw cells
//! meant for Python as comments too (nbconvert leaves them as code), and IPython's syntax
//! (`%magic`, `%%cell_magic`, `!shell`, `x = !cmd`, `obj?`) rewritten into the
//! `get_ipython()` calls IPython itself makes of it (`IPython.core.inputtransformer2`), so
//! the script runs under `ipython script.py`.

use super::notebook::{Cell, Notebook};

/// The script of `notebook`.
pub fn to_python(notebook: &Notebook) -> String {
    let mut out = String::from("#!/usr/bin/env python\n# coding: utf-8\n");
    for cell in &notebook.cells {
        match cell {
            Cell::Code {
                source,
                execution_count,
                ..
            } => {
                let count = execution_count.map_or(" ".to_owned(), |n| n.to_string());
                out.push_str(&format!("\n# In[{count}]:\n\n\n"));
                out.push_str(&transform_cell(&source.0));
                out.push_str("\n\n");
            }
            Cell::Markdown { source, .. } => {
                out.push('\n');
                push_comment(&mut out, &source.0);
            }
            Cell::Raw { source, metadata } => {
                // nbconvert keeps raw cells meant for any format or for Python, as code. Here
                // they are comments: the app shows a raw cell as text and never runs it, so
                // the script does not either.
                let mime = metadata
                    .get("raw_mimetype")
                    .and_then(|m| m.as_str())
                    .unwrap_or("");
                if mime.is_empty() || mime.eq_ignore_ascii_case("text/x-python") {
                    out.push('\n');
                    push_comment(&mut out, &source.0);
                }
            }
            Cell::Unknown => {}
        }
    }
    out
}

/// `text` (a notebook's, untrusted) as `# ` comment lines: one per line as Python or an
/// editor sees one ([`lines`]), each escaped as a person reads untrusted text
/// ([`crate::display::escape_lines`]), so that no character ends a comment early and lets
/// the rest of its line run, stops the script (NUL), or hides what a line says.
fn push_comment(out: &mut String, text: &str) {
    for line in lines(text) {
        out.push_str("# ");
        out.push_str(&crate::display::escape_lines(line));
        out.push('\n');
    }
}

/// The lines of `text`, split at every line end of Python's tokenizer (`\r\n`, `\r`, `\n`)
/// and of `str.splitlines` (`\v`, `\f`, `\x1c`–`\x1e`, NEL, U+2028, U+2029), which editors
/// may show as one; as `str.splitlines`, no empty line follows the last end.
fn lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(is_line_end) {
        out.push(&rest[..at]);
        let end = if rest[at..].starts_with("\r\n") {
            2
        } else {
            rest[at..].chars().next().map_or(1, char::len_utf8)
        };
        rest = &rest[at + end..];
    }
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

fn is_line_end(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{b}'
            | '\u{c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// A cell's code with IPython's syntax as the calls IPython makes of it.
fn transform_cell(source: &str) -> String {
    let source = source.trim_end_matches('\n');
    if let Some(rest) = source.strip_prefix("%%") {
        let (first, body) = rest.split_once('\n').unwrap_or((rest, ""));
        let (name, args) = first.split_once(' ').unwrap_or((first, ""));
        let body = if body.is_empty() {
            String::new()
        } else {
            format!("{body}\n")
        };
        return format!(
            "get_ipython().run_cell_magic({}, {}, {})",
            py_repr(name),
            py_repr(args.trim()),
            py_repr(&body)
        );
    }
    let mut out = String::with_capacity(source.len());
    let mut continued = false;
    for line in source.split('\n') {
        // A line that continues a statement (after a backslash) is not a new command.
        out.push_str(&if continued {
            line.to_owned()
        } else {
            transform_line(line)
        });
        out.push('\n');
        continued = line.ends_with('\\');
    }
    out.pop();
    out
}

/// One line: `%magic args`, `!cmd`, `x = !cmd`, `x = %magic`, `obj?`, `?obj`, or code.
fn transform_line(line: &str) -> String {
    let body = line.trim_start();
    let indent = &line[..line.len() - body.len()];
    if let Some(rest) = body.strip_prefix("!!") {
        return format!("{indent}get_ipython().getoutput({})", py_repr(rest));
    }
    if let Some(rest) = body.strip_prefix('!') {
        return format!("{indent}get_ipython().system({})", py_repr(rest));
    }
    if let Some(rest) = body.strip_prefix('%')
        && !rest.starts_with('%')
    {
        return format!("{indent}{}", line_magic(rest));
    }
    // `name = !cmd`, `a, b = %magic`: an assignment whose value is IPython syntax.
    if let Some((target, value)) = body.split_once('=')
        && is_assign_target(target)
        && !value.starts_with('=')
    {
        let value = value.trim_start();
        if let Some(cmd) = value.strip_prefix('!') {
            return format!(
                "{indent}{} = get_ipython().getoutput({})",
                target.trim_end(),
                py_repr(cmd)
            );
        }
        if let Some(magic) = value.strip_prefix('%') {
            return format!("{indent}{} = {}", target.trim_end(), line_magic(magic));
        }
    }
    // `obj?` / `obj??` / `?obj`: help, outside strings and comments only.
    let help = body
        .strip_prefix("??")
        .or_else(|| body.strip_prefix('?'))
        .or_else(|| body.strip_suffix("??").or_else(|| body.strip_suffix('?')));
    if let Some(name) = help
        && !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '*')
    {
        let magic = if body.contains("??") {
            "pinfo2"
        } else {
            "pinfo"
        };
        return format!(
            "{indent}get_ipython().run_line_magic({}, {})",
            py_repr(magic),
            py_repr(name)
        );
    }
    line.to_owned()
}

fn line_magic(rest: &str) -> String {
    let (name, args) = rest.split_once(' ').unwrap_or((rest, ""));
    format!(
        "get_ipython().run_line_magic({}, {})",
        py_repr(name),
        py_repr(args)
    )
}

/// `x`, `a, b`, `self.x` — what may stand left of `= !cmd` (IPython's own test is alike).
fn is_assign_target(target: &str) -> bool {
    let t = target.trim();
    !t.is_empty()
        && t.chars().all(|c| {
            c.is_alphanumeric() || matches!(c, '_' | '.' | ',' | ' ' | '(' | ')' | '[' | ']' | '*')
        })
        && !t.ends_with(['!', '<', '>'])
}

/// Python's `repr()` of a string: single quotes unless the text holds one and no double
/// quote, backslash escapes for what cannot stand in a literal.
fn py_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if is_invisible(c) => {
                if (c as u32) <= 0xffff {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Characters Python's `repr` escapes (not printable): C1 controls, line and paragraph
/// separators, bidi and zero-width formatting.
fn is_invisible(c: char) -> bool {
    matches!(c as u32, 0x80..=0x9f | 0xad | 0x2028 | 0x2029 | 0x200b..=0x200f | 0x202a..=0x202e | 0x2060..=0x2069 | 0xfeff)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notebook(cells: &str) -> Notebook {
        Notebook::parse(&format!(
            r#"{{"nbformat": 4, "metadata": {{}}, "cells": [{cells}]}}"#
        ))
        .expect("a notebook")
    }

    #[test]
    fn cells_in_order_with_markdown_as_comments() {
        let nb = notebook(
            r##"{"cell_type": "markdown", "source": "# Title\n\nSome *text*"},
                {"cell_type": "code", "source": "x = 1\nprint(x)", "execution_count": 3, "outputs": []},
                {"cell_type": "code", "source": "y = 2", "execution_count": null, "outputs": []}"##,
        );
        assert_eq!(
            to_python(&nb),
            "#!/usr/bin/env python\n# coding: utf-8\n\n# # Title\n# \n# Some *text*\n\n# In[3]:\n\n\nx = 1\nprint(x)\n\n\n# In[ ]:\n\n\ny = 2\n\n",
            "nbconvert's layout: a prompt comment per code cell, Markdown commented out"
        );
    }

    #[test]
    fn magics_become_the_calls_ipython_makes() {
        for (line, expected) in [
            (
                "%matplotlib inline",
                "get_ipython().run_line_magic('matplotlib', 'inline')",
            ),
            (
                "!pip install pandas",
                "get_ipython().system('pip install pandas')",
            ),
            ("files = !ls -1", "files = get_ipython().getoutput('ls -1')"),
            (
                "t = %time f()",
                "t = get_ipython().run_line_magic('time', 'f()')",
            ),
            (
                "    %cd /tmp",
                "    get_ipython().run_line_magic('cd', '/tmp')",
            ),
            (
                "np.array?",
                "get_ipython().run_line_magic('pinfo', 'np.array')",
            ),
            ("x = a != b", "x = a != b"),
            ("print('why?')", "print('why?')"),
            ("!echo \"it's\"", "get_ipython().system('echo \"it\\'s\"')"),
        ] {
            assert_eq!(transform_line(line), expected, "{line}");
        }
        assert_eq!(
            transform_cell("%%bash -e\necho 'hi'\nls"),
            "get_ipython().run_cell_magic('bash', '-e', \"echo 'hi'\\nls\\n\")",
            "a cell magic takes the body as one string"
        );
    }

    #[test]
    fn lines_end_where_python_or_an_editor_ends_them() {
        assert_eq!(
            lines("a\r\nb\rc\nd\u{b}e\u{c}f\u{1c}g\u{1d}h\u{1e}i\u{85}j\u{2028}k\u{2029}l"),
            ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"],
            "every line end of Python's tokenizer and of str.splitlines splits"
        );
        assert_eq!(
            lines("a\n\nb\n"),
            ["a", "", "b"],
            "no empty line after the last end"
        );
        assert_eq!(lines("\r\r\n"), ["", ""], "\\r\\n is one end");
        assert!(lines("").is_empty());
    }

    #[test]
    fn markdown_and_raw_text_stay_comments_whatever_they_hold() {
        for end in [
            "\r", "\r\n", "\n", "\u{c}", "\u{b}", "\u{85}", "\u{2028}", "\u{2029}",
        ] {
            let text = format!("# title{end}print('PWNED')");
            let nb = notebook(&format!(
                r#"{{"cell_type": "markdown", "source": {md}}},
                   {{"cell_type": "raw", "source": {md}, "metadata": {{}}}},
                   {{"cell_type": "raw", "source": {md}, "metadata": {{"raw_mimetype": "text/x-python"}}}}"#,
                md = serde_json::Value::String(text.clone())
            ));
            let script = to_python(&nb);
            let body = script
                .strip_prefix("#!/usr/bin/env python\n# coding: utf-8\n")
                .expect("the header");
            // As Python reads the script: every line is blank or a comment.
            for line in body.split("\r\n").flat_map(|l| l.split(['\r', '\n'])) {
                assert!(
                    line.is_empty() || line.starts_with('#'),
                    "{text:?} left code in the script: {line:?}\n{script:?}"
                );
            }
            assert!(
                !body.contains(['\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}']),
                "no line end is left inside a comment, where an editor shows it as one: {script:?}"
            );
        }
        let nb = notebook(r#"{"cell_type": "markdown", "source": "a\u0000b\u001b[2Jc\u202ed\te"}"#);
        assert_eq!(
            to_python(&nb),
            "#!/usr/bin/env python\n# coding: utf-8\n\n# a\\u0000b\\u001b[2Jc\\u202ed\te\n",
            "what a person could not see (NUL, escapes, bidi) is written as \\uXXXX; tabs stay"
        );
    }

    #[test]
    fn a_string_literal_cannot_end_early_or_hide_characters() {
        assert_eq!(py_repr("a'b\"c\\\n"), "'a\\'b\"c\\\\\\n'");
        assert_eq!(py_repr("\u{202e}x\u{7}"), "'\\u202ex\\x07'");
    }
}
