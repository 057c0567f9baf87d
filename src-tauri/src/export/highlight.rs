//! Python source as highlighted HTML: a small lexer (keywords, built-ins, strings with
//! their prefixes, numbers, comments, decorators, definitions' names) whose classes take
//! the app's editor colours. Every piece of source reaches the page escaped.

use super::html_escape;

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "match", "case", "nonlocal", "not", "or", "pass", "raise", "return",
    "try", "while", "with", "yield",
];

const BUILTINS: &[&str] = &[
    "abs",
    "all",
    "any",
    "bool",
    "bytes",
    "dict",
    "dir",
    "enumerate",
    "filter",
    "float",
    "format",
    "getattr",
    "hasattr",
    "int",
    "isinstance",
    "iter",
    "len",
    "list",
    "map",
    "max",
    "min",
    "next",
    "object",
    "open",
    "print",
    "range",
    "repr",
    "reversed",
    "round",
    "self",
    "set",
    "setattr",
    "sorted",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "zip",
];

/// `source` as HTML with `<span class="tok-…">` around each token that has a colour.
pub fn python(source: &str) -> String {
    let mut out = String::with_capacity(source.len() * 2);
    let chars: Vec<char> = source.chars().collect();
    let mut i = 0;
    let mut after_def = false;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let class = if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            Some("tok-comment")
        } else if let Some(end) = string_at(&chars, i) {
            i = end;
            Some("tok-string")
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '.' || chars[i] == '_')
            {
                i += 1;
            }
            Some("tok-number")
        } else if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let class = if after_def {
                Some("tok-def")
            } else if KEYWORDS.contains(&word.as_str()) {
                Some("tok-keyword")
            } else if BUILTINS.contains(&word.as_str()) {
                Some("tok-builtin")
            } else {
                None
            };
            after_def = word == "def" || word == "class";
            class
        } else if c == '@'
            && (start == 0
                || chars[start - 1] == '\n'
                || chars[..start]
                    .iter()
                    .rev()
                    .take_while(|c| **c != '\n')
                    .all(|c| c.is_whitespace()))
        {
            i += 1;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                i += 1;
            }
            Some("tok-meta")
        } else if c == '%' || c == '!' {
            // IPython's magics and shell lines, at the start of a line.
            let line_start = chars[..start]
                .iter()
                .rev()
                .take_while(|c| **c != '\n')
                .all(|c| c.is_whitespace());
            i += 1;
            if line_start {
                while i < chars.len() && chars[i] != '\n' && !chars[i].is_whitespace() {
                    i += 1;
                }
                Some("tok-meta")
            } else {
                Some("tok-operator")
            }
        } else if "+-*/=<>&|^~".contains(c) {
            i += 1;
            Some("tok-operator")
        } else {
            i += 1;
            None
        };
        let text: String = chars[start..i].iter().collect();
        match class {
            Some(class) => {
                out.push_str("<span class=\"");
                out.push_str(class);
                out.push_str("\">");
                out.push_str(&html_escape(&text));
                out.push_str("</span>");
            }
            None => out.push_str(&html_escape(&text)),
        }
    }
    out
}

/// The end of a string literal starting at `i` (with an `r`, `b`, `f`, `u` prefix), if one does.
fn string_at(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    while j < chars.len()
        && j - i < 2
        && matches!(chars[j].to_ascii_lowercase(), 'r' | 'b' | 'f' | 'u')
    {
        j += 1;
    }
    let quote = *chars.get(j).filter(|q| **q == '"' || **q == '\'')?;
    if j > i && i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    let raw = chars[i..j].iter().any(|c| c.eq_ignore_ascii_case(&'r'));
    let triple = chars.get(j + 1) == Some(&quote) && chars.get(j + 2) == Some(&quote);
    let mut k = j + if triple { 3 } else { 1 };
    while k < chars.len() {
        let c = chars[k];
        if c == '\\' && !raw {
            k += 2;
            continue;
        }
        if c == '\\' && raw {
            k += 2;
            continue;
        }
        if triple {
            if c == quote && chars.get(k + 1) == Some(&quote) && chars.get(k + 2) == Some(&quote) {
                return Some(k + 3);
            }
        } else if c == quote {
            return Some(k + 1);
        } else if c == '\n' {
            return Some(k);
        }
        k += 1;
    }
    Some(chars.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_take_classes_and_text_stays_escaped() {
        let html = python("def f(x):\n    return \"<b>\" + x  # </pre><script>\n");
        assert!(
            html.contains(
                "<span class=\"tok-keyword\">def</span> <span class=\"tok-def\">f</span>"
            ),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"tok-string\">&quot;&lt;b&gt;&quot;</span>"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"tok-comment\"># &lt;/pre&gt;&lt;script&gt;</span>"),
            "{html}"
        );
        assert!(
            !html.contains("<script"),
            "no markup from the source: {html}"
        );
    }

    #[test]
    fn strings_with_prefixes_and_triple_quotes() {
        let html = python("s = f'''a\n'b'\n''' + rb\"\\d\"\nname_b'x'");
        assert!(
            html.contains(
                "<span class=\"tok-string\">f&#39;&#39;&#39;a\n&#39;b&#39;\n&#39;&#39;&#39;</span>"
            ),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"tok-string\">rb&quot;\\d&quot;</span>"),
            "{html}"
        );
    }
}
