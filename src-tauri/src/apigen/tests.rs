//! Golden files for real and synthetic tool schemas, and checks by a real Python with
//! pydantic v2 that every generated module imports cleanly, contains nothing beyond the
//! template, and sends arguments under their schema names.
//!
//! Fixtures live in `tests/fixtures/apigen/` at the workspace root:
//! `corpus/<server>.json` (`tools/list` of the reference servers), `synthetic/*.json`
//! (edge cases), `hostile/*.json` (schemas trying to inject code) and `golden/`.
//! `UPDATE_GOLDEN=1 cargo test apigen` rewrites the golden files.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde_json::{Value, json};

use super::literal::{DocPart, needs_escape, push_docstring, py_str};
use super::names::{MODULE_NAMES, NameSet, class_name_base, field_name_base};
use super::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/apigen")
}

/// The servers of one fixture folder: `(file stem, tools)`, sorted by name.
fn servers(folder: &str) -> Vec<(String, Vec<ToolSpec>)> {
    let dir = fixtures().join(folder);
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "{} holds fixtures", dir.display());
    paths
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(&path).expect("fixture is readable");
            let tools: Vec<ToolSpec> = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{} is a tools array: {e}", path.display()));
            let stem = path
                .file_stem()
                .expect("file name")
                .to_string_lossy()
                .into_owned();
            (stem, tools)
        })
        .collect()
}

/// The corpus and synthetic servers, whose output is pinned by golden files.
fn golden_servers() -> Vec<(String, Vec<ToolSpec>)> {
    let mut all = servers("corpus");
    all.extend(servers("synthetic"));
    all
}

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("ipybox-apigen-{label}-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).expect("creating a temp dir");
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[test]
fn golden_files_match() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let golden = fixtures().join("golden");
    let mut mismatches = Vec::new();
    for (server, tools) in golden_servers() {
        let dir = golden.join(&server);
        if update {
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).expect("creating the golden dir");
        }
        let modules = module_names(&tools);
        let mut files = vec![(
            "__init__".to_owned(),
            render_package_init(&server, &tools, &modules),
        )];
        for (tool, module) in tools.iter().zip(&modules) {
            let source = render_tool_module(&server, tool)
                .unwrap_or_else(|e| panic!("{server}/{module} renders: {e}"));
            files.push((module.clone(), source));
        }
        for (module, source) in files {
            let path = dir.join(format!("{module}.py"));
            if update {
                fs::write(&path, &source).expect("writing a golden file");
            } else if fs::read_to_string(&path).ok().as_deref() != Some(source.as_str()) {
                mismatches.push(path.display().to_string());
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "generated source differs from the golden files (run with UPDATE_GOLDEN=1 and review the diff): {mismatches:#?}"
    );
}

#[test]
fn generation_is_deterministic() {
    for (server, tools) in golden_servers() {
        for tool in &tools {
            let first = render_tool_module(&server, tool).expect("renders");
            let reparsed: ToolSpec =
                serde_json::from_str(&serde_json::to_string(tool).expect("serializes"))
                    .expect("parses");
            assert_eq!(
                first,
                render_tool_module(&server, &reparsed).expect("renders"),
                "same input, same bytes"
            );
        }
    }
}

#[test]
fn corpus_uses_expected_names() {
    let memory = servers("corpus")
        .into_iter()
        .find(|(s, _)| s == "memory")
        .expect("memory corpus");
    let relations = memory
        .1
        .iter()
        .find(|t| t.name == "create_relations")
        .expect("create_relations");
    let source = render_tool_module("memory", relations).expect("renders");
    assert!(
        source.contains("from_: str = Field(\n        ...,\n        alias=\"from\","),
        "`from` becomes `from_` with an alias so it is sent as `from`:\n{source}"
    );
    assert!(
        source.contains("model_config = ConfigDict(populate_by_name=True"),
        "aliases can be set by name"
    );

    let everything = servers("corpus")
        .into_iter()
        .find(|(s, _)| s == "everything")
        .expect("everything corpus");
    let modules = module_names(&everything.1);
    assert!(
        modules.contains(&"get_tiny_image".to_owned()),
        "hyphens become underscores: {modules:?}"
    );
}

#[test]
fn hostile_errors_name_the_tool() {
    let (_, tools) = servers("hostile")
        .into_iter()
        .find(|(s, _)| s == "errors")
        .expect("errors fixture");
    for tool in &tools {
        let error =
            render_tool_module("hostile", tool).expect_err("this schema cannot be generated");
        let message = error.to_string();
        assert!(
            message.contains(&format!("{:?}", tool.name)),
            "{message} names {:?}",
            tool.name
        );
        assert!(
            !message.contains('\n'),
            "the message escapes the tool name: {message}"
        );
    }
}

#[test]
fn hostile_schemas_render_only_escaped_text() {
    let (_, tools) = servers("hostile")
        .into_iter()
        .find(|(s, _)| s == "injection")
        .expect("injection fixture");
    for tool in &tools {
        let source = render_tool_module("evil\"\"\"server\n#", tool)
            .expect("hostile but valid schemas render");
        for (number, line) in source.lines().enumerate() {
            assert!(
                !line.chars().any(needs_escape),
                "line {number} has no raw control or invisible characters: {line:?}"
            );
        }
        assert!(
            !source.contains("import os\n"),
            "no injected statement in:\n{source}"
        );
        let second_line = source.lines().nth(1).unwrap_or_default();
        assert!(
            second_line.is_empty(),
            "line 2 is blank, so no encoding declaration can sit there"
        );
    }
}

/// Renders fixtures into `<dir>/mcptools/<package>/` with a recording `_runtime.py`, and
/// returns the manifest the Python check reads.
fn write_package(
    dir: &Path,
    package: &str,
    server: &str,
    tools: &[ToolSpec],
    expect_run: bool,
) -> Vec<Value> {
    let root = dir.join("mcptools");
    let package_dir = root.join(package);
    fs::create_dir_all(&package_dir).expect("creating the package dir");
    fs::write(root.join("__init__.py"), "").expect("writing mcptools/__init__.py");
    fs::copy(fixtures().join("stub_runtime.py"), root.join("_runtime.py"))
        .expect("copying the runtime stub");
    let modules = module_names(tools);
    fs::write(
        package_dir.join("__init__.py"),
        render_package_init(server, tools, &modules),
    )
    .expect("writing __init__.py");
    let mut manifest = Vec::new();
    for (tool, module) in tools.iter().zip(&modules) {
        let Ok(source) = render_tool_module(server, tool) else {
            continue;
        };
        fs::write(package_dir.join(format!("{module}.py")), source).expect("writing a module");
        manifest.push(json!({
            "package": package,
            "server": server,
            "module": module,
            "tool": tool.name,
            "input_schema": tool.input_schema,
            "output_schema": tool.output_schema,
            "run": expect_run,
        }));
    }
    manifest
}

/// The Python of ipybox's own environment (the pydantic the kernels use); provisioned on
/// first use. Generated code is always checked by a real Python: no silent skip.
fn python() -> Option<Command> {
    let env = crate::pyenv::resolve(None, crate::pyenv::Progress::Quiet)
        .expect("ipybox's Python environment (run `ipybox setup`)");
    let mut command = Command::new(env.python());
    command
        .args(["-B", "-W", "error"])
        .env("PYTHONDONTWRITEBYTECODE", "1");
    Some(command)
}

fn run_python(mut command: Command, script: &str, args: &[&Path], stdin: &str) -> String {
    let mut child = command
        .arg(fixtures().join(script))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting python3");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("writing to python3");
    let output = child.wait_with_output().expect("python3 finishes");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{script} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn python_imports_and_runs_every_module() {
    let Some(python) = python() else { return };
    let dir = TempDir::new("modules");
    let mut manifest = Vec::new();
    for (server, tools) in golden_servers() {
        manifest.extend(write_package(&dir.0, &server, &server, &tools, true));
    }
    for (name, tools) in servers("hostile") {
        let package = format!("hostile_{name}");
        manifest.extend(write_package(
            &dir.0,
            &package,
            "evil\"\"\"server\n#\u{2028}",
            &tools,
            false,
        ));
    }
    let manifest_path = dir.0.join("manifest.json");
    fs::write(
        &manifest_path,
        serde_json::to_string(&manifest).expect("manifest serializes"),
    )
    .expect("writing the manifest");
    let stdout = run_python(python, "check_generated.py", &[&dir.0, &manifest_path], "");
    assert!(
        stdout.contains(&format!("checked {} modules", manifest.len())),
        "every module was checked: {stdout}"
    );
}

/// A small deterministic generator (xorshift), so the property tests need no crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or_default()
    }

    /// A string mixing the characters that matter for escaping with arbitrary code points.
    fn string(&mut self) -> String {
        const SPECIAL: &[char] = &[
            '"',
            '"',
            '"',
            '\'',
            '\\',
            '\n',
            '\r',
            '\t',
            '\0',
            '\u{7f}',
            '\u{85}',
            '\u{a0}',
            '\u{2028}',
            '\u{2029}',
            '\u{202e}',
            '\u{200b}',
            '\u{feff}',
            '\u{ffff}',
            '\u{10ffff}',
            '\u{e000}',
            '#',
            '{',
            '}',
            '(',
            ')',
            'N',
            'x',
            'u',
            'é',
            '日',
            '🦀',
            ' ',
            '-',
            '_',
            '1',
        ];
        let length = self.below(24);
        (0..length)
            .map(|_| {
                if self.below(3) == 0 {
                    char::from_u32(u32::try_from(self.next() % 0x11_0000).unwrap_or(0))
                        .unwrap_or('?')
                } else {
                    SPECIAL[self.below(SPECIAL.len())]
                }
            })
            .collect()
    }
}

#[test]
fn escaped_literals_and_docstrings_round_trip_through_python() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut cases = Vec::new();
    for _ in 0..3000 {
        let text = rng.string();
        let literal = py_str(&text);
        let mut doc = String::new();
        push_docstring(&mut doc, "", &[DocPart::lines(&text)]);
        let mut doc_line = String::new();
        push_docstring(&mut doc_line, "", &[DocPart::line(&text)]);
        for source in [&literal, &doc, &doc_line] {
            assert!(
                !source.chars().any(|c| c != '\n' && needs_escape(c)),
                "{source:?} has no raw control characters but line breaks"
            );
        }
        assert!(
            !literal.contains('\n'),
            "a literal stays on one line: {literal:?}"
        );
        assert!(
            !doc_line.contains('\n'),
            "a single-line part stays on one line: {doc_line:?}"
        );
        cases.push(json!({"text": text, "literal": literal, "docstrings": [doc, doc_line]}));
    }
    let Some(python) = python() else { return };
    let stdout = run_python(
        python,
        "check_literals.py",
        &[],
        &Value::Array(cases).to_string(),
    );
    assert!(
        stdout.contains("3000 literals"),
        "python checked every case: {stdout}"
    );
}

#[test]
fn sanitized_names_are_python_identifiers() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut names = Vec::new();
    let keywords = [
        "from",
        "class",
        "type",
        "match",
        "_",
        "model_config",
        "json",
        "None",
        "__init__",
        "_runtime",
    ];
    let mut inputs: Vec<String> = keywords.iter().map(|k| (*k).to_owned()).collect();
    inputs.extend((0..2000).map(|_| rng.string()));
    for input in &inputs {
        let field = field_name_base(input);
        let class = NameSet::new(&MODULE_NAMES).claim_class(&class_name_base(input));
        let module = module_names(&[ToolSpec {
            name: input.clone(),
            description: None,
            input_schema: json!({}),
            output_schema: None,
        }])
        .remove(0);
        for name in [&field, &class, &module] {
            assert!(
                is_valid_identifier(name),
                "{name:?} (from {input:?}) is an identifier"
            );
        }
        assert!(
            !module.starts_with('_'),
            "module {module:?} is not private, `__init__` or `_runtime`"
        );
        names.push(json!({"field": field, "class": class, "module": module}));
    }
    let Some(python) = python() else { return };
    let stdout = run_python(
        python,
        "check_names.py",
        &[],
        &Value::Array(names).to_string(),
    );
    assert!(
        stdout.contains("2010 names"),
        "python checked every name: {stdout}"
    );
}

#[test]
#[allow(clippy::print_stderr)]
fn rendering_takes_well_under_a_millisecond_per_tool() {
    let tools: Vec<(String, ToolSpec)> = golden_servers()
        .into_iter()
        .flat_map(|(server, tools)| tools.into_iter().map(move |t| (server.clone(), t)))
        .collect();
    let rounds = 50;
    let start = Instant::now();
    for _ in 0..rounds {
        for (server, tool) in &tools {
            std::hint::black_box(render_tool_module(server, tool).expect("renders"));
        }
    }
    let per_tool = start.elapsed().as_secs_f64() * 1e6 / (rounds * tools.len()) as f64;
    eprintln!(
        "apigen: {per_tool:.1} µs per tool ({} tools, {rounds} rounds)",
        tools.len()
    );
    assert!(
        per_tool < 1000.0,
        "rendering one tool takes {per_tool:.1} µs, over the 1 ms budget"
    );
}

/// The interface a person reads of each module (server panel, `list_tools`): pinned by
/// golden files, and every line of it is a line of the module, so it never shows what the
/// module does not do.
#[test]
fn interfaces_match_their_golden_files_and_their_modules() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let golden = fixtures().join("golden-interface");
    let mut mismatches = Vec::new();
    for (server, tools) in golden_servers() {
        let dir = golden.join(&server);
        if update {
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).expect("creating the golden dir");
        }
        let modules = module_names(&tools);
        for (tool, module) in tools.iter().zip(&modules) {
            let interface = render_tool_interface(tool)
                .unwrap_or_else(|e| panic!("{server}/{module} renders: {e}"));
            let source = render_tool_module(&server, tool).expect("renders");
            for line in interface.lines().filter(|l| l.trim() != "...") {
                assert!(
                    source.lines().any(|s| s == line),
                    "{server}/{module}: the interface line {line:?} is in the module"
                );
            }
            assert!(
                !interface.lines().any(|l| l.starts_with("from ")
                    || l.starts_with("import ")
                    || l.contains("model_config = ")),
                "{server}/{module}: no imports or configuration in the interface"
            );
            let path = dir.join(format!("{module}.py"));
            if update {
                fs::write(&path, &interface).expect("writing a golden file");
            } else if fs::read_to_string(&path).ok().as_deref() != Some(interface.as_str()) {
                mismatches.push(path.display().to_string());
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "interfaces differ from the golden files (run with UPDATE_GOLDEN=1 and review the diff): {mismatches:#?}"
    );
}
