//! Whether a schema's `pattern` (ECMA-262) can be enforced by pydantic's regex engine.

/// Can pydantic's default regex engine (Rust's `regex`) compile this ECMA-262 pattern?
///
/// A conservative check: lookaround, backreferences, nested or empty character classes,
/// class set operators, quantifiers without an operand and malformed braces are refused,
/// so that a pattern the engine would reject never stops the module from importing. A
/// refused pattern is shown in the field's description instead.
pub(super) fn pattern_is_portable(pattern: &str) -> bool {
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
