//! Conditions on a call's arguments, and the comparisons they make: globs over names,
//! JSON values compared as Python compares them, paths compared lexically.

use serde_json::Value;

use super::format::ArgMatcher;

impl ArgMatcher {
    pub(super) fn matches(&self, arg: Option<&Value>) -> bool {
        if self.absent == Some(true) {
            return arg.is_none();
        }
        let Some(arg) = arg else { return false };
        self.equals.as_ref().is_none_or(|v| json_eq(v, arg))
            && self
                .one_of
                .as_ref()
                .is_none_or(|vs| vs.iter().any(|v| json_eq(v, arg)))
            && self
                .glob
                .as_ref()
                .is_none_or(|g| arg.as_str().is_some_and(|s| glob_match(g, s)))
            && self
                .under
                .as_ref()
                .is_none_or(|p| arg.as_str().is_some_and(|s| is_under(p, s)))
    }
}

/// Does the rule key `key` (a name, or a JSON Pointer) name the top-level argument `name`
/// or something inside it?
pub(super) fn names_top_level(key: &str, name: &str) -> bool {
    match key.strip_prefix('/') {
        None => key == name,
        Some(pointer) => {
            let first = pointer.split('/').next().unwrap_or("");
            first.replace("~1", "/").replace("~0", "~") == name
        }
    }
}

pub(super) fn lookup<'a>(args: &'a Value, key: &str) -> Option<&'a Value> {
    if key.starts_with('/') {
        args.pointer(key)
    } else {
        args.get(key)
    }
}

/// JSON equality, except that numbers compare by value, as Python's `1 == 1.0` does.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            x.as_f64() == y.as_f64()
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Does `text` match `pattern`, where `*` matches any run of characters and `?` one?
pub(super) fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // Where to resume after the last `*`: its pattern index + 1, and the text it took so far.
    let mut resume: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                pi += 1;
                resume = Some((pi, ti));
            }
            Some(&c) if c == '?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match resume {
                Some((sp, st)) => {
                    pi = sp;
                    ti = st + 1;
                    resume = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The components of an absolute POSIX path after resolving `.`, `..` and empty components
/// without touching the filesystem; `None` for a relative path.
fn normalize(path: &str) -> Option<Vec<&str>> {
    let rest = path.strip_prefix('/')?;
    let mut parts = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    Some(parts)
}

/// Is `path` the directory `prefix` or below it, compared component by component (so
/// `/p-evil` is not under `/p`)?
fn is_under(prefix: &str, path: &str) -> bool {
    match (normalize(prefix), normalize(path)) {
        (Some(prefix), Some(path)) => path.starts_with(&prefix),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::format::Rules;
    use super::super::testing::{ACCEPT, REJECT, decide, rules};
    use super::*;

    #[test]
    fn globs() {
        for (pattern, text, expected) in [
            ("*", "", true),
            ("*", "anything/at all", true),
            ("get_*", "get_issue", true),
            ("get_*", "get_", true),
            ("get_*", "list_issues", false),
            ("get_*", "xget_issue", false),
            ("*_issue", "create_issue", true),
            ("*_issue", "create_issues", false),
            ("?", "a", true),
            ("?", "", false),
            ("?", "ab", false),
            ("a?c", "abc", true),
            ("a?c", "äbc", false),
            ("ä?c", "äbc", true),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("a*b*c", "abcbc", true),
            ("**x", "yyx", true),
            ("", "", true),
            ("", "a", false),
            ("exact", "exact", true),
            ("exact", "Exact", false),
        ] {
            assert_eq!(
                glob_match(pattern, text),
                expected,
                "glob {pattern:?} on {text:?}"
            );
        }
        let r = rules(json!([{"server": "git*", "tool": "get_?", "decision": "allow"}]));
        assert_eq!(decide(&r, "github", "get_x", json!({})), (ACCEPT, Some(0)));
        assert_eq!(decide(&r, "gitlab", "get_y", json!({})), (ACCEPT, Some(0)));
        assert_eq!(decide(&r, "github", "get_xy", json!({})), (REJECT, None));
        assert_eq!(decide(&r, "fs", "get_x", json!({})), (REJECT, None));
    }

    #[test]
    fn equals_and_one_of() {
        let r = rules(json!([
            {"server": "s", "tool": "eq", "args": {"repo": {"equals": "acme/site"}}, "decision": "allow"},
            {"server": "s", "tool": "num", "args": {"n": {"equals": 1}}, "decision": "allow"},
            {"server": "s", "tool": "obj", "args": {"o": {"equals": {"a": 1, "b": [1, "x"]}}}, "decision": "allow"},
            {"server": "s", "tool": "null", "args": {"x": {"equals": null}}, "decision": "allow"},
            {"server": "s", "tool": "one", "args": {"level": {"one_of": ["low", 2, null]}}, "decision": "allow"},
        ]));
        let cases = [
            ("eq", json!({"repo": "acme/site"}), ACCEPT),
            ("eq", json!({"repo": "acme/site2"}), REJECT),
            ("eq", json!({"repo": ["acme/site"]}), REJECT),
            ("num", json!({"n": 1}), ACCEPT),
            ("num", json!({"n": 1.0}), ACCEPT),
            ("num", json!({"n": "1"}), REJECT),
            ("num", json!({"n": 1.5}), REJECT),
            ("obj", json!({"o": {"b": [1.0, "x"], "a": 1}}), ACCEPT),
            ("obj", json!({"o": {"a": 1, "b": [1, "x"], "c": 0}}), REJECT),
            ("obj", json!({"o": {"a": 1, "b": ["x", 1]}}), REJECT),
            ("null", json!({"x": null}), ACCEPT),
            ("null", json!({}), REJECT),
            ("one", json!({"level": "low"}), ACCEPT),
            ("one", json!({"level": 2}), ACCEPT),
            ("one", json!({"level": null}), ACCEPT),
            ("one", json!({"level": "high"}), REJECT),
        ];
        for (tool, args, expected) in cases {
            assert_eq!(
                r.decide("s", tool, &args).decision,
                expected,
                "{tool} with {args}"
            );
        }
    }

    #[test]
    fn glob_matcher_needs_a_string() {
        let r = rules(json!([
            {"server": "s", "tool": "t", "args": {"q": {"glob": "repo:acme/*"}}, "decision": "allow"},
        ]));
        for (args, expected) in [
            (json!({"q": "repo:acme/site"}), ACCEPT),
            (json!({"q": "repo:acme/a/b"}), ACCEPT),
            (json!({"q": "repo:evil/acme/x"}), REJECT),
            (json!({"q": 5}), REJECT),
            (json!({"q": ["repo:acme/site"]}), REJECT),
        ] {
            assert_eq!(r.decide("s", "t", &args).decision, expected, "{args}");
        }
    }

    #[test]
    fn under_is_lexical_and_component_wise() {
        let r = rules(json!([
            {"server": "fs", "tool": "read", "args": {"path": {"under": "/p"}}, "decision": "allow"},
            {"server": "fs", "tool": "deep", "args": {"path": {"under": "/home/me/project/"}}, "decision": "allow"},
        ]));
        for (tool, path, expected) in [
            ("read", json!("/p"), ACCEPT),
            ("read", json!("/p/"), ACCEPT),
            ("read", json!("/p/x/y.txt"), ACCEPT),
            ("read", json!("/p/./x"), ACCEPT),
            ("read", json!("/./p/x"), ACCEPT),
            ("read", json!("/p/x/."), ACCEPT),
            ("read", json!("//p//x"), ACCEPT),
            ("read", json!("/p/a/../b"), ACCEPT),
            ("read", json!("/p/.."), REJECT),
            ("read", json!("/p/../etc/passwd"), REJECT),
            ("read", json!("/p/x/../../etc"), REJECT),
            ("read", json!("/../p/x"), ACCEPT),
            ("read", json!("/p2"), REJECT),
            ("read", json!("/p-evil/x"), REJECT),
            ("read", json!("/"), REJECT),
            ("read", json!("p/x"), REJECT),
            ("read", json!("./p/x"), REJECT),
            ("read", json!("~/p"), REJECT),
            ("read", json!(""), REJECT),
            ("read", json!(["/p/x"]), REJECT),
            ("read", json!(7), REJECT),
            ("read", Value::Null, REJECT),
            ("deep", json!("/home/me/project"), ACCEPT),
            ("deep", json!("/home/me/project/src/main.rs"), ACCEPT),
            ("deep", json!("/home/me/project-evil/x"), REJECT),
            ("deep", json!("/home/me/projec"), REJECT),
            ("deep", json!("/home/me"), REJECT),
        ] {
            assert_eq!(
                r.decide("fs", tool, &json!({ "path": path })).decision,
                expected,
                "{tool} {path}"
            );
        }
        let root = rules(json!([
            {"server": "fs", "tool": "*", "args": {"path": {"under": "/"}}, "decision": "allow"},
        ]));
        assert_eq!(
            decide(&root, "fs", "x", json!({"path": "/etc/passwd"})),
            (ACCEPT, Some(0))
        );
        assert_eq!(
            decide(&root, "fs", "x", json!({"path": "etc"})),
            (REJECT, None),
            "relative paths never match, not even under /"
        );
    }

    #[test]
    fn missing_arguments_and_pointers() {
        let r = rules(json!([
            {"server": "s", "tool": "t", "args": {
                "repo": {"equals": "acme/site"},
                "/options/path": {"under": "/p"},
            }, "decision": "allow"},
        ]));
        let ok = json!({"repo": "acme/site", "options": {"path": "/p/x"}});
        assert_eq!(
            decide(&r, "s", "t", ok),
            (ACCEPT, Some(0)),
            "all conditions hold"
        );
        for args in [
            json!({"repo": "acme/site"}),
            json!({"options": {"path": "/p/x"}}),
            json!({"repo": "acme/site", "options": {"path": "/q"}}),
            json!({"repo": "acme/site", "options": "/p/x"}),
            json!({"repo": "acme/site", "/options/path": "/p/x"}),
            json!({}),
            Value::Null,
            json!(["acme/site"]),
        ] {
            assert_eq!(
                decide(&r, "s", "t", args.clone()),
                (REJECT, None),
                "a missing or failing argument does not match: {args}"
            );
        }
        let escaped = rules(json!([
            {"server": "s", "tool": "t", "args": {"/a~1b/~0c": {"equals": 1}}, "decision": "allow"},
        ]));
        assert_eq!(
            decide(&escaped, "s", "t", json!({"a/b": {"~c": 1}})),
            (ACCEPT, Some(0)),
            "JSON Pointer escapes"
        );
        let indexed = rules(json!([
            {"server": "s", "tool": "t", "args": {"/paths/0": {"under": "/p"}}, "decision": "allow"},
        ]));
        assert_eq!(
            decide(&indexed, "s", "t", json!({"paths": ["/p/a", "/etc"]})),
            (ACCEPT, Some(0)),
            "a pointer may index a list (and checks only that element)"
        );
    }

    #[test]
    fn absent_arguments_and_exact_argument_lists() {
        let r = rules(json!([
            {"server": "s", "tool": "t", "args": {"force": {"absent": true}, "path": {"absent": false}}, "decision": "allow"},
        ]));
        assert_eq!(decide(&r, "s", "t", json!({"path": 1})), (ACCEPT, Some(0)));
        assert_eq!(
            decide(&r, "s", "t", json!({"path": 1, "force": false})),
            (REJECT, None),
            "a given argument is not absent, whatever its value"
        );
        assert_eq!(
            decide(&r, "s", "t", json!({})),
            (REJECT, None),
            "absent: false needs the argument"
        );

        let exact = rules(json!([
            {"server": "s", "tool": "t", "exact_args": true,
             "args": {"repo": {"equals": "site"}, "/opts/depth": {"equals": 1}}, "decision": "allow"},
        ]));
        assert_eq!(
            decide(
                &exact,
                "s",
                "t",
                json!({"repo": "site", "opts": {"depth": 1}})
            ),
            (ACCEPT, Some(0))
        );
        let outcome = exact.decide(
            "s",
            "t",
            &json!({"repo": "site", "opts": {"depth": 1}, "delete": true}),
        );
        assert_eq!(
            (outcome.decision, outcome.rule),
            (REJECT, None),
            "another argument"
        );
        assert!(
            outcome.message.contains("\"delete\""),
            "{}",
            outcome.message
        );

        let bad = Rules::from_json(
            r#"{"version": 1, "rules": [{"server": "s", "tool": "t", "args": {"x": {"absent": true, "equals": 1}}, "decision": "allow"}]}"#,
        )
        .expect_err("absent with a value condition");
        assert!(
            bad.to_string().contains("absent: true cannot be combined"),
            "{bad}"
        );
        let again = Rules::from_json(&exact.to_json()).expect("own output parses");
        assert_eq!(again, exact, "exact_args round-trips");
    }
}
