//! Completion and help from a real kernel, as a notebook's Tab and Shift+Tab ask for them:
//! the kernel's matches with Jedi's types, positions in code points, help with signature and
//! docstring, generated tool modules completing their `Params` fields, and answers while a
//! cell runs (ipykernel 7 answers on a subshell of its own).

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use ipybox::{CodeExecutor, ServerParams};
use ipybox_tests::{running_cell, started, workspace};

#[tokio::test]
async fn tab_gets_the_kernels_matches_with_types_and_shift_tab_its_help() {
    let ws = workspace();
    let e = started(ws.path()).await;
    e.execute("import os\nrows_of_data = [1, 2]", None)
        .await
        .unwrap();

    let code = "os.pa";
    let c = e.complete(code, code.chars().count()).await.unwrap();
    assert_eq!((c.start, c.end), (3, 5), "the matches replace `pa`: {c:?}");
    let path = c.items.iter().find(|i| i.text == "path");
    assert!(path.is_some(), "os.pa offers path: {c:?}");
    assert_eq!(
        path.unwrap().kind.as_deref(),
        Some("module"),
        "Jedi's type comes along: {c:?}"
    );
    let pardir = c.items.iter().find(|i| i.text == "pardir").unwrap();
    assert_eq!(pardir.kind.as_deref(), Some("instance"), "{c:?}");

    // A name the kernel holds, after text with characters outside the BMP and accents:
    // Jupyter counts code points, not bytes nor UTF-16 units.
    let code = "s = '😀é'; rows_of";
    let cursor = code.chars().count();
    let c = complete_until(&e, code, cursor, |c| {
        c.items.iter().any(|i| i.text == "rows_of_data")
    })
    .await;
    assert_eq!(
        (c.start, c.end),
        (cursor - "rows_of".len(), cursor),
        "positions in code points: {c:?}"
    );
    assert!(
        c.items.iter().any(|i| i.text == "rows_of_data"),
        "the kernel's own variables complete: {c:?}"
    );

    let code = "os.path.join(";
    let help = e.inspect(code, code.chars().count(), 0).await.unwrap();
    assert!(help.found, "{help:?}");
    assert!(
        help.text.contains("Signature:") && help.text.contains("join("),
        "signature and docstring: {help:?}"
    );
    e.execute(
        "def doubled(x):\n    \"\"\"Twice x.\"\"\"\n    return x * 2",
        None,
    )
    .await
    .unwrap();
    let code = "doubled(";
    let brief = e.inspect(code, code.chars().count(), 0).await.unwrap();
    let more = e.inspect(code, code.chars().count(), 1).await.unwrap();
    assert!(
        brief.text.contains("Twice x.") && !brief.text.contains("Source:"),
        "detail level 0: signature and docstring: {brief:?}"
    );
    assert!(
        more.text.contains("Source:") && more.text.contains(" x * "),
        "detail level 1 adds the source: {more:?}"
    );
    let nothing = e.inspect("no_such_name_here", 5, 0).await.unwrap();
    assert!(!nothing.found, "an unknown name has no help: {nothing:?}");
}

/// The kernel's completions, asked again (as a person presses Tab again) while `wanted` does
/// not hold: on a busy machine IPython may answer before Jedi has looked at everything.
/// The last answer, whatever it holds.
async fn complete_until(
    e: &CodeExecutor,
    code: &str,
    cursor: usize,
    wanted: impl Fn(&ipybox::Completions) -> bool,
) -> ipybox::Completions {
    let mut c = e.complete(code, cursor).await.unwrap();
    for _ in 0..10 {
        if wanted(&c) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        c = e.complete(code, cursor).await.unwrap();
    }
    c
}

/// The signature beside a completion, as Tab lists it.
async fn signature_of(e: &CodeExecutor, code: &str, name: &str) -> Option<String> {
    let c = e.complete(code, code.chars().count()).await.unwrap();
    c.items
        .into_iter()
        .find(|i| i.text == name)
        .unwrap_or_else(|| panic!("{code} offers {name}"))
        .signature
}

#[tokio::test]
async fn signatures_of_installed_functions_are_kept_and_the_users_own_are_asked_anew() {
    let ws = workspace();
    let e = started(ws.path()).await;
    // IPython stops giving types and signatures when its budget (400 ms) runs out: on a
    // loaded machine, before the names asked for here. This test is about which signature
    // comes, not how soon.
    e.execute(
        "import json\nget_ipython().Completer.jedi_compute_type_timeout = 10_000",
        None,
    )
    .await
    .unwrap();
    // An installed module's function: inferred once, then the kernel keeps it.
    let first = signature_of(&e, "json.lo", "loads").await;
    assert!(
        first.as_deref().is_some_and(|s| s.starts_with("(s")),
        "json.loads' signature: {first:?}"
    );
    assert_eq!(
        signature_of(&e, "json.lo", "loads").await,
        first,
        "the same signature the second time"
    );

    // The user's own function, redefined: the new signature, not a kept one.
    e.execute(
        "def scaled(a, b=2):
    return a * b",
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        signature_of(&e, "scal", "scaled").await.as_deref(),
        Some("(a, b=2)")
    );
    e.execute(
        "def scaled(x):
    return x",
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        signature_of(&e, "scal", "scaled").await.as_deref(),
        Some("(x)"),
        "a redefined function shows its new signature"
    );

    // A module of the workspace (the user's, kernel-writable) is asked anew after an edit.
    std::fs::write(
        ws.path().join("helpers.py"),
        "def tidy(a):
    return a
",
    )
    .unwrap();
    e.execute("import helpers", None).await.unwrap();
    assert_eq!(
        signature_of(&e, "helpers.ti", "tidy").await.as_deref(),
        Some("(a)")
    );
    std::fs::write(
        ws.path().join("helpers.py"),
        "def tidy(a, keep=None):
    return a
",
    )
    .unwrap();
    e.execute("import importlib; importlib.reload(helpers)", None)
        .await
        .unwrap();
    assert_eq!(
        signature_of(&e, "helpers.ti", "tidy").await.as_deref(),
        Some("(a, keep=None)"),
        "a reloaded workspace module shows its new signature"
    );
}

#[tokio::test]
async fn help_is_answered_while_a_cell_runs() {
    let ws = workspace();
    let e = started(ws.path()).await;
    e.execute("import os", None).await.unwrap();
    // Warm Jedi up first, so the figure below is about waiting, not about parsing `os`.
    e.complete("os.pa", 5).await.unwrap();

    // A cell that runs far longer than any answer takes, even on a busy machine.
    let s = running_cell(
        &e,
        "import time\nprint('busy', flush=True)\ntime.sleep(60)\nprint('done')",
    )
    .await;
    let t = Instant::now();
    let c = e.complete("os.pa", 5).await.unwrap();
    let completed = t.elapsed();
    let help = e.inspect("os.getcwd", 9, 0).await.unwrap();
    let helped = t.elapsed();
    assert!(c.items.iter().any(|i| i.text == "path"), "{c:?}");
    assert!(help.found, "{help:?}");
    assert!(
        helped < Duration::from_secs(20),
        "completion ({completed:?}) and help ({helped:?}) do not wait for the running cell (60 s)"
    );
    drop(s);
    e.interrupt().await.unwrap();
}

#[tokio::test]
async fn generated_tool_modules_complete_their_params_fields() {
    let ws = workspace();
    let e = CodeExecutor::builder().working_dir(ws.path()).build();
    let params = ServerParams::from_json(&serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
    }))
    .unwrap();
    e.register_mcp_server("fx", &params).await.unwrap();
    e.start().await.unwrap();
    e.execute("from mcptools.fx.echo import Params, run", None)
        .await
        .unwrap();
    let code = "run(Params(te";
    let c = e.complete(code, code.chars().count()).await.unwrap();
    assert!(
        c.items.iter().any(|i| i.text == "text="),
        "the tool's argument is offered as a keyword: {c:?}"
    );
    let code = "run(Params(";
    let help = e.inspect(code, code.chars().count(), 0).await.unwrap();
    assert!(
        help.text.contains("text"),
        "help on Params shows its fields: {help:?}"
    );
}

#[tokio::test]
async fn asking_a_stopped_executor_says_so() {
    let ws = workspace();
    let e = CodeExecutor::builder().working_dir(ws.path()).build();
    let err = e.complete("os.pa", 5).await.unwrap_err();
    assert_eq!(err.code(), ipybox::ErrorCode::NotRunning, "{err}");
}
