//! Saved code actions: code that worked, kept as a tool of its own in
//! `gentools/<category>/<name>/`, its interface (`api.py`: pydantic models and a typed `run()`
//! with a docstring) apart from its implementation (`impl.py`), so that reading the interface
//! is enough to use it.
//!
//! The workspace is untrusted: kernel code may have put links anywhere in `gentools/`. Every
//! directory is opened without following a link, files are created new and swapped in by
//! renaming, and reading an interface back never follows a link either, so neither a save
//! nor a listing reaches outside `gentools/`.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::literal::{DocPart, push_docstring, py_value, tidy_description};
use super::names::is_valid_identifier;
use crate::error::{Error, Result};
use crate::fsutil::Dir;

/// The package saved code actions live in.
pub const GENTOOLS: &str = "gentools";

/// The largest `api.py` a listing reads.
const MAX_INTERFACE: u64 = 64 * 1024;

/// A code action to save as a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeAction {
    /// The tool's name: `gentools.<category>.<name>`.
    pub name: String,
    /// The group it belongs to.
    pub category: String,
    /// What it does: the first line a summary, then details (becomes `run()`'s docstring).
    pub description: String,
    /// Its parameters, in order.
    #[serde(default)]
    pub parameters: Vec<Parameter>,
    /// What it returns.
    #[serde(default)]
    pub returns: Option<Returns>,
    /// Python source of pydantic models (or other definitions) the annotations use; goes
    /// into `api.py` before `run()`.
    #[serde(default)]
    pub models: Option<String>,
    /// The body of the implementation: Python statements that see the parameters as local
    /// variables and `return` the result.
    pub code: String,
}

/// One parameter of a code action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parameter {
    /// A Python identifier.
    pub name: String,
    /// A Python annotation: `str`, `list[int]`, `dict[str, float] | None`, a model's name.
    #[serde(rename = "type", default = "any_type")]
    pub ty: String,
    /// What it is, for the docstring.
    #[serde(default)]
    pub description: Option<String>,
    /// Its default value (JSON); without one the parameter is required.
    #[serde(default, deserialize_with = "present")]
    pub default: Option<Value>,
}

/// What a code action returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Returns {
    /// A Python annotation.
    #[serde(rename = "type", default = "any_type")]
    pub ty: String,
    /// What it is, for the docstring.
    #[serde(default)]
    pub description: Option<String>,
}

fn any_type() -> String {
    "object".to_owned()
}

/// `"default": null` means "defaults to None", not "no default".
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Where a saved code action went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// `gentools.<category>.<name>`.
    pub module: String,
    /// Its directory.
    pub dir: PathBuf,
    /// The interface as written.
    pub api: String,
}

impl CodeAction {
    /// `gentools.<category>.<name>`.
    pub fn module(&self) -> String {
        format!("{GENTOOLS}.{}.{}", self.category, self.name)
    }

    /// Check everything that can be checked without Python, each fault in words.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: String| Err(Error::config(format!("the code action {what}")));
        for (what, name) in [("name", &self.name), ("category", &self.category)] {
            if !is_valid_identifier(name) || name.starts_with('_') {
                return bad(format!(
                    "{what} {name:?} is not a Python identifier that may name a module (letters, digits and _, not starting with a digit or _, not a keyword)"
                ));
            }
        }
        if tidy_description(&self.description).is_none() {
            return bad("needs a description (it becomes run()'s docstring)".into());
        }
        if self.code.trim().is_empty() {
            return bad("has no code".into());
        }
        let mut seen = std::collections::HashSet::new();
        let mut defaults = false;
        for p in &self.parameters {
            if !is_valid_identifier(&p.name) || p.name.starts_with("__") {
                return bad(format!("parameter {:?} is not a Python identifier", p.name));
            }
            if p.name == "implementation" {
                return bad("parameter may not be called \"implementation\"".into());
            }
            if !seen.insert(&p.name) {
                return bad(format!("names the parameter {:?} twice", p.name));
            }
            check_annotation(&p.ty).map_err(|why| {
                Error::config(format!("the type of parameter {:?} {why}", p.name))
            })?;
            match &p.default {
                Some(v) => {
                    defaults = true;
                    if py_value(v).is_none() {
                        return bad(format!(
                            "parameter {:?} has a default nested too deeply to write",
                            p.name
                        ));
                    }
                }
                None if defaults => {
                    return bad(format!(
                        "parameter {:?} has no default but comes after one that has (Python needs those with defaults last)",
                        p.name
                    ));
                }
                None => {}
            }
        }
        if let Some(r) = &self.returns {
            check_annotation(&r.ty)
                .map_err(|why| Error::config(format!("the return type {why}")))?;
        }
        Ok(())
    }

    /// `api.py`: the interface.
    pub fn render_api(&self) -> String {
        let description = tidy_description(&self.description).unwrap_or_default();
        let summary = description.lines().next().unwrap_or_default().to_owned();
        let mut out = String::new();
        push_docstring(
            &mut out,
            "",
            &[
                DocPart::line(&summary),
                DocPart::lines("\n\nSaved code action "),
                DocPart::line(&self.module()),
                DocPart::lines(": its interface. The implementation is in impl.py."),
            ],
        );
        out.push_str("\n\nfrom __future__ import annotations\n\n");
        out.push_str("from typing import Any, Literal, Optional  # noqa: F401\n\n");
        out.push_str("from pydantic import BaseModel, Field  # noqa: F401\n");
        if let Some(models) = self
            .models
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
        {
            out.push_str("\n\n");
            out.push_str(models);
            out.push('\n');
        }
        out.push_str("\n\ndef run(");
        out.push_str(&self.signature());
        out.push_str(") -> ");
        out.push_str(&self.return_type());
        out.push_str(":\n    ");
        let mut doc = String::from(&description);
        let described: Vec<(&str, String)> = self
            .parameters
            .iter()
            .filter_map(|p| {
                let text = p.description.as_deref().and_then(tidy_description)?;
                Some((p.name.as_str(), text))
            })
            .collect();
        if !described.is_empty() {
            doc.push_str("\n\nArgs:");
            for (name, text) in &described {
                doc.push_str(&format!(
                    "\n    {name}: {}",
                    text.replace('\n', "\n        ")
                ));
            }
        }
        if let Some(text) = self
            .returns
            .as_ref()
            .and_then(|r| r.description.as_deref())
            .and_then(tidy_description)
        {
            doc.push_str("\n\nReturns:\n    ");
            doc.push_str(&text.replace('\n', "\n    "));
        }
        push_docstring(&mut out, "    ", &[DocPart::lines(&doc)]);
        out.push_str("\n    from .impl import implementation\n\n    return implementation(");
        out.push_str(
            &self
                .parameters
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        );
        out.push_str(")\n");
        out
    }

    /// `impl.py`: the code, as the body of `implementation()`.
    pub fn render_impl(&self) -> String {
        let mut out = String::new();
        push_docstring(
            &mut out,
            "",
            &[
                DocPart::line("Implementation of the saved code action "),
                DocPart::line(&self.module()),
                DocPart::line(" (its interface is api.py)."),
            ],
        );
        out.push_str("\n\nfrom __future__ import annotations\n\n");
        out.push_str(
            "from .api import *  # noqa: F401,F403 (the models the interface defines)\n\n\n",
        );
        out.push_str("def implementation(");
        out.push_str(&self.signature_without_defaults());
        out.push_str(") -> ");
        out.push_str(&self.return_type());
        out.push_str(":\n");
        let code = self.code.replace("\r\n", "\n");
        let code = dedent(&code);
        for line in code.trim_end().lines() {
            if line.trim().is_empty() {
                out.push('\n');
            } else {
                out.push_str("    ");
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    fn return_type(&self) -> String {
        self.returns
            .as_ref()
            .map_or_else(any_type, |r| r.ty.trim().to_owned())
    }

    fn signature(&self) -> String {
        self.parameters
            .iter()
            .map(|p| match &p.default {
                Some(v) => format!(
                    "{}: {} = {}",
                    p.name,
                    p.ty.trim(),
                    py_value(v).unwrap_or_else(|| "None".into())
                ),
                None => format!("{}: {}", p.name, p.ty.trim()),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn signature_without_defaults(&self) -> String {
        self.parameters
            .iter()
            .map(|p| format!("{}: {}", p.name, p.ty.trim()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Remove the indentation every non-blank line shares.
fn dedent(text: &str) -> String {
    let common = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    text.lines()
        .map(|l| {
            if l.len() >= common {
                &l[common..]
            } else {
                l.trim_start()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// An annotation goes into a signature as it is: one line of names, brackets, commas,
/// dots, `|` and quoted literals, with balanced brackets.
fn check_annotation(ty: &str) -> std::result::Result<(), String> {
    let ty = ty.trim();
    if ty.is_empty() {
        return Err("is empty".into());
    }
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for c in ty.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), '\n' | '\\') => return Err(format!("{ty:?} is not one line")),
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[') => depth += 1,
            (None, ']') => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("{ty:?} has an unmatched ]"));
                }
            }
            (None, c) if c.is_ascii_alphanumeric() || "_., |-".contains(c) => {}
            (None, c) => {
                return Err(format!(
                    "{ty:?} is not a type annotation (it has {c:?}; use names, [], commas, dots, | and quoted literals)"
                ));
            }
        }
    }
    if quote.is_some() || depth != 0 {
        return Err(format!("{ty:?} has an unclosed quote or bracket"));
    }
    Ok(())
}

/// Python that imports a saved code action afresh (the new version, not a cached one),
/// leaving nothing behind in the kernel's namespace. The code is the body of a function, so
/// its own imports run only when the tool is called: each module they name must be found
/// now (imports under a `try` that catches the failure are the code's own business).
pub fn import_check(category: &str, name: &str) -> String {
    format!(
        r#"def __ipybox_import_check():
    import importlib, sys
    def forget():
        for key in [k for k in sys.modules if k in ("gentools", "gentools.{category}") or k == "gentools.{category}.{name}" or k.startswith("gentools.{category}.{name}.")]:
            del sys.modules[key]
    importlib.invalidate_caches()
    forget()
    try:
        __ipybox_check_imports()
    except BaseException:
        # ipybox puts the earlier files back: the next import must read them, not this
        # version's modules.
        forget()
        raise
def __ipybox_check_imports():
    import ast, importlib, importlib.util
    importlib.import_module("gentools.{category}.{name}.api")
    impl = importlib.import_module("gentools.{category}.{name}.impl")
    with open(impl.__file__, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    caught = {{"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}}
    def catches(handler):
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        return handler.type is None or any(isinstance(k, ast.Name) and k.id in caught for k in kinds)
    guarded = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))) and any(catches(h) for h in node.handlers):
            guarded.update(id(n) for part in node.body for n in ast.walk(part))
    missing = {{}}
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        else:
            continue
        for module in modules:
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                missing[module] = None
    if missing:
        raise ModuleNotFoundError(
            "the code imports " + ", ".join(missing) + ", which the kernel cannot find: "
            "install the package (install_package), register the MCP server (register_mcp_server) "
            "or correct the name"
        )
try:
    __ipybox_import_check()
finally:
    del __ipybox_import_check, __ipybox_check_imports
"#
    )
}

fn io(what: &Path, e: std::io::Error) -> Error {
    Error::io(format!("writing {}", what.display()), e)
}

/// Open `parent/name` as a directory, creating it when missing, never through a link.
fn open_or_create(parent: &Dir, parent_path: &Path, name: &str) -> Result<Dir> {
    let path = parent_path.join(name);
    match std::fs::create_dir(parent.join(name)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(&path, e)),
    }
    Dir::open_nofollow(&parent.join(name)).map_err(|e| {
        Error::config(format!(
            "{} is not a directory ipybox may write in ({e}); remove it or the link there",
            path.display()
        ))
    })
}

/// `__init__.py` in `dir` when it has none.
fn ensure_init(dir: &Dir, path: &Path, doc: &str) -> Result<()> {
    if dir.is_file("__init__.py") {
        return Ok(());
    }
    dir.remove("__init__.py").map_err(|e| io(path, e))?;
    dir.create_file("__init__.py", format!("\"\"\"{doc}\"\"\"\n").as_bytes())
        .map_err(|e| io(path, e))
}

/// A code action written, with what it replaced kept until [`Written::keep`] or
/// [`Written::undo`].
#[derive(Debug)]
pub struct Written {
    category: Dir,
    name: String,
    backup: Option<String>,
    /// What was saved.
    pub saved: Saved,
}

impl Written {
    /// Keep the new version; the old one goes.
    pub fn keep(self) {
        if let Some(backup) = &self.backup {
            let _ = self.category.remove(backup);
        }
    }

    /// Remove the new version and put the old one (if any) back.
    pub fn undo(self) {
        let _ = self.category.remove(&self.name);
        if let Some(backup) = &self.backup {
            let _ = std::fs::rename(self.category.join(backup), self.category.join(&self.name));
        }
    }
}

/// Write `action` (validated first) as `<workspace>/gentools/<category>/<name>/`,
/// replacing an earlier version, which is kept aside until the new one is kept or undone.
pub fn write(workspace: &Path, action: &CodeAction) -> Result<Written> {
    action.validate()?;
    let root = Dir::open_nofollow(workspace)
        .map_err(|e| Error::config(format!("the workspace {}: {e}", workspace.display())))?;
    let gentools_path = workspace.join(GENTOOLS);
    let gentools = open_or_create(&root, workspace, GENTOOLS)?;
    ensure_init(
        &gentools,
        &gentools_path,
        "Saved code actions: each a tool of its own.",
    )?;
    let category_path = gentools_path.join(&action.category);
    let category = open_or_create(&gentools, &gentools_path, &action.category)?;
    ensure_init(
        &category,
        &category_path,
        "Saved code actions of one category.",
    )?;

    let tag = uuid::Uuid::new_v4().simple().to_string();
    let staging = format!(".{}.tmp-{tag}", action.name);
    let dir_path = category_path.join(&action.name);
    std::fs::create_dir(category.join(&staging)).map_err(|e| io(&dir_path, e))?;
    let api = action.render_api();
    let written = (|| {
        let stage = Dir::open_nofollow(&category.join(&staging)).map_err(|e| io(&dir_path, e))?;
        for (file, text) in [
            ("__init__.py", format!("\"\"\"{}\"\"\"\n", action.module())),
            ("api.py", api.clone()),
            ("impl.py", action.render_impl()),
        ] {
            stage
                .create_file(file, text.as_bytes())
                .map_err(|e| io(&dir_path.join(file), e))?;
        }
        Ok::<(), Error>(())
    })();
    if let Err(e) = written {
        let _ = category.remove(&staging);
        return Err(e);
    }
    let backup = match std::fs::symlink_metadata(category.join(&action.name)) {
        Ok(_) => {
            let name = format!(".{}.old-{tag}", action.name);
            std::fs::rename(category.join(&action.name), category.join(&name))
                .map_err(|e| io(&dir_path, e))?;
            Some(name)
        }
        Err(_) => None,
    };
    if let Err(e) = std::fs::rename(category.join(&staging), category.join(&action.name)) {
        let _ = category.remove(&staging);
        if let Some(b) = &backup {
            let _ = std::fs::rename(category.join(b), category.join(&action.name));
        }
        return Err(io(&dir_path, e));
    }
    Ok(Written {
        category,
        name: action.name.clone(),
        backup,
        saved: Saved {
            module: action.module(),
            dir: dir_path,
            api,
        },
    })
}

/// The saved code actions of `workspace`: each `gentools.<category>.<name>` with its
/// `api.py`, sorted; `only`: one category. Links, odd names and files too large are skipped.
pub fn interfaces(workspace: &Path, only: Option<&str>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Ok(root) = Dir::open_nofollow(workspace) else {
        return out;
    };
    let Ok(gentools) = Dir::open_nofollow(&root.join(GENTOOLS)) else {
        return out;
    };
    for category in identifiers_in(&gentools) {
        if only.is_some_and(|o| o != category) {
            continue;
        }
        let Ok(cat) = Dir::open_nofollow(&gentools.join(&category)) else {
            continue;
        };
        for name in identifiers_in(&cat) {
            let Ok(tool) = Dir::open_nofollow(&cat.join(&name)) else {
                continue;
            };
            if let Some(api) = read_regular(&tool, "api.py", MAX_INTERFACE) {
                out.push((format!("{GENTOOLS}.{category}.{name}"), api));
            }
        }
    }
    out.sort();
    out
}

fn identifiers_in(dir: &Dir) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir.join("")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| is_valid_identifier(n) && !n.starts_with('_'))
        .collect();
    names.sort();
    names
}

/// `name` in `dir`, if it is a regular file (not a link) of at most `max` bytes.
pub(crate) fn read_regular(dir: &Dir, name: &str, max: u64) -> Option<String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(dir.join(name))
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > max {
        return None;
    }
    let mut text = String::new();
    file.take(max).read_to_string(&mut text).ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn action() -> CodeAction {
        serde_json::from_value(json!({
            "name": "top_words",
            "category": "text",
            "description": "The most frequent words of a text.\n\nCase is ignored.",
            "parameters": [
                {"name": "text", "type": "str", "description": "The text."},
                {"name": "n", "type": "int", "description": "How many.", "default": 3},
            ],
            "returns": {"type": "list[WordCount]", "description": "Words, most frequent first."},
            "models": "class WordCount(BaseModel):\n    word: str\n    count: int",
            "code": "from collections import Counter\ncounts = Counter(text.lower().split())\nreturn [WordCount(word=w, count=c) for w, c in counts.most_common(n)]",
        }))
        .expect("parses")
    }

    #[test]
    fn renders_an_interface_apart_from_its_implementation() {
        let a = action();
        a.validate().expect("valid");
        let api = a.render_api();
        assert!(api.contains("class WordCount(BaseModel):"), "{api}");
        assert!(
            api.contains("def run(text: str, n: int = 3) -> list[WordCount]:"),
            "{api}"
        );
        assert!(
            api.contains("    Args:\n        text: The text.\n        n: How many."),
            "{api}"
        );
        assert!(
            api.contains("    return implementation(text, n)\n"),
            "{api}"
        );
        let imp = a.render_impl();
        assert!(
            imp.contains("def implementation(text: str, n: int) -> list[WordCount]:\n    from collections import Counter\n"),
            "{imp}"
        );
    }

    #[test]
    fn refuses_bad_names_types_and_orders() {
        let cases: Vec<(serde_json::Value, &str)> = vec![
            (json!({"name": "../x"}), "not a Python identifier"),
            (json!({"name": "class"}), "not a Python identifier"),
            (json!({"category": "a/b"}), "not a Python identifier"),
            (json!({"category": "_private"}), "not a Python identifier"),
            (json!({"description": "  "}), "needs a description"),
            (json!({"code": ""}), "has no code"),
            (
                json!({"parameters": [{"name": "x y", "type": "str"}]}),
                "not a Python identifier",
            ),
            (
                json!({"parameters": [{"name": "x", "type": "str = 1; import os"}]}),
                "not a type annotation",
            ),
            (
                json!({"parameters": [{"name": "x", "type": "list[str"}]}),
                "unclosed",
            ),
            (
                json!({"parameters": [{"name": "a", "type": "int", "default": 1}, {"name": "b", "type": "int"}]}),
                "comes after one",
            ),
            (
                json!({"parameters": [{"name": "a", "type": "int"}, {"name": "a", "type": "int"}]}),
                "twice",
            ),
        ];
        for (patch, expected) in cases {
            let mut value = serde_json::to_value(action()).expect("serializes");
            for (k, v) in patch.as_object().expect("object") {
                value[k] = v.clone();
            }
            let a: CodeAction = serde_json::from_value(value).expect("parses");
            let err = a.validate().expect_err(expected).to_string();
            assert!(err.contains(expected), "{patch}: {err}");
        }
    }

    #[test]
    fn writes_only_inside_gentools_and_never_through_a_link() {
        let ws = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(ws.path().join("gentools")).expect("mkdir");
        std::os::unix::fs::symlink(outside.path(), ws.path().join("gentools/text")).expect("link");
        let err = write(ws.path(), &action()).expect_err("a link as the category");
        assert!(
            err.to_string()
                .contains("not a directory ipybox may write in"),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(outside.path()).expect("read").count(), 0);

        std::fs::remove_file(ws.path().join("gentools/text")).expect("unlink");
        let first = write(ws.path(), &action()).expect("written");
        first.keep();
        let dir = ws.path().join("gentools/text/top_words");
        assert!(dir.join("api.py").is_file() && dir.join("impl.py").is_file());
        assert!(ws.path().join("gentools/__init__.py").is_file());

        // A second version, undone: the first comes back.
        let mut v2 = action();
        v2.description = "Version two.".into();
        let second = write(ws.path(), &v2).expect("written");
        assert!(
            std::fs::read_to_string(dir.join("api.py"))
                .expect("read")
                .contains("Version two.")
        );
        second.undo();
        let api = std::fs::read_to_string(dir.join("api.py")).expect("read");
        assert!(api.contains("The most frequent words"), "{api}");
        let stray: Vec<_> = std::fs::read_dir(ws.path().join("gentools/text"))
            .expect("read")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(stray.len(), 2, "only __init__.py and top_words: {stray:?}");

        // Listing: the interface, but not a link planted as api.py.
        let secret = outside.path().join("secret");
        std::fs::write(&secret, "TOKEN").expect("write");
        std::fs::create_dir_all(ws.path().join("gentools/text/leak")).expect("mkdir");
        std::os::unix::fs::symlink(&secret, ws.path().join("gentools/text/leak/api.py"))
            .expect("link");
        let listed = interfaces(ws.path(), None);
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0].0, "gentools.text.top_words");
        assert!(!listed.iter().any(|(_, s)| s.contains("TOKEN")));
        assert!(interfaces(ws.path(), Some("other")).is_empty());
    }
}
