//! How a policy names a path, below the checks that use it: a path as the kernel's `open()`
//! and srt see it (`.`/`..` folded, links followed), as a policy spells it (`~/…`), and one
//! segment of a glob against one of a path.

use std::path::{Path, PathBuf};

/// One path segment against one glob segment (`*`, `?`, `[…]`).
pub(super) fn segment_match(p: &[u8], n: &[u8]) -> bool {
    match p.split_first() {
        None => n.is_empty(),
        Some((b'*', rest)) => (0..=n.len()).any(|i| segment_match(rest, &n[i..])),
        Some((b'?', rest)) => !n.is_empty() && segment_match(rest, &n[1..]),
        Some((b'[', rest)) => {
            let Some(end) = rest.iter().position(|&c| c == b']') else {
                return n.first() == Some(&b'[') && segment_match(rest, &n[1..]);
            };
            let (class, after) = (&rest[..end], &rest[end + 1..]);
            let (negate, class) = match class.split_first() {
                Some((b'!' | b'^', c)) => (true, c),
                _ => (false, class),
            };
            let Some(&c) = n.first() else { return false };
            let mut hit = false;
            let mut i = 0;
            while i < class.len() {
                if i + 2 < class.len() && class[i + 1] == b'-' {
                    hit |= class[i] <= c && c <= class[i + 2];
                    i += 3;
                } else {
                    hit |= class[i] == c;
                    i += 1;
                }
            }
            hit != negate && segment_match(after, &n[1..])
        }
        Some((&c, rest)) => n.first() == Some(&c) && segment_match(rest, &n[1..]),
    }
}

/// `path` as a policy spells it: `~/…` inside the home.
pub(super) fn spell(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => path.display().to_string(),
    }
}

/// `path` with `.`/`..` folded and the links of its longest existing part followed, as the
/// kernel's `open()` and srt's `realpath` see it.
pub fn resolve(path: &Path) -> PathBuf {
    let clean = crate::fsutil::lexically_normal(path);
    let mut existing = clean.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return clean,
        }
    }
}
