//! `ipybox export`: what a person at a terminal expects of the files it writes and of a
//! notebook it cannot read. (The page in a browser and the PDF's pixels are checked in
//! `tests/e2e/export.test.mjs`, which has a browser and a display.)

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ipybox_tests::{ipybox_bin, workspace};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/export")
        .join(name)
}

fn export(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(ipybox_bin())
        .arg("export")
        .args(args)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn html_goes_beside_the_notebook_and_replaces_a_file_only_when_forced() {
    let ws = workspace();
    let nb = ws.path().join("plot.ipynb");
    std::fs::copy(fixture("plot.ipynb"), &nb).unwrap();
    let out = export(&[nb.as_os_str(), "--to".as_ref(), "html".as_ref()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let page = std::fs::read_to_string(ws.path().join("plot.html")).unwrap();
    assert!(
        page.contains("<img class=\"output-image\" alt=\"image\" src=\"data:image/png;base64,"),
        "the plot is embedded in the page"
    );

    std::fs::write(ws.path().join("plot.html"), "the reader's own notes").unwrap();
    let again = export(&[nb.as_os_str(), "--to".as_ref(), "html".as_ref()]);
    assert_eq!(
        again.status.code(),
        Some(1),
        "an existing file stops the export"
    );
    assert!(
        stderr(&again).contains("plot.html exists: pass --force to replace it"),
        "{}",
        stderr(&again)
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("plot.html")).unwrap(),
        "the reader's own notes",
        "nothing is overwritten unasked"
    );

    let forced = export(&[
        nb.as_os_str(),
        "--to".as_ref(),
        "html".as_ref(),
        "--force".as_ref(),
    ]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert!(
        std::fs::read_to_string(ws.path().join("plot.html"))
            .unwrap()
            .starts_with("<!DOCTYPE html>"),
        "--force replaces it"
    );
    assert_eq!(
        files_in(ws.path()),
        ["plot.html", "plot.ipynb"],
        "no staging file is left behind"
    );
}

#[test]
fn a_notebook_that_cannot_be_read_is_named_and_nothing_is_written() {
    let ws = workspace();
    let missing = ws.path().join("gone.ipynb");
    let out = export(&[missing.as_os_str(), "--to".as_ref(), "html".as_ref()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("cannot read the notebook") && stderr(&out).contains("gone.ipynb"),
        "{}",
        stderr(&out)
    );

    let broken = ws.path().join("broken.ipynb");
    std::fs::write(&broken, "{\"cells\": [").unwrap();
    let out = export(&[broken.as_os_str(), "--to".as_ref(), "py".as_ref()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("broken.ipynb cannot be exported: this is not a notebook file"),
        "{}",
        stderr(&out)
    );

    let itself = ws.path().join("self.ipynb");
    std::fs::copy(fixture("plot.ipynb"), &itself).unwrap();
    let out = export(&[
        itself.as_os_str(),
        "--to".as_ref(),
        "py".as_ref(),
        "-o".as_ref(),
        itself.as_os_str(),
        "--force".as_ref(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the notebook is never the output"
    );
    assert!(
        stderr(&out).contains("is the notebook itself"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        files_in(ws.path()),
        ["broken.ipynb", "self.ipynb"],
        "nothing was written"
    );
}

#[test]
fn a_script_goes_to_stdout_with_a_dash() {
    let out = export(&[
        fixture("plot.ipynb").as_os_str(),
        "--to".as_ref(),
        "py".as_ref(),
        "-o".as_ref(),
        "-".as_ref(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let script = String::from_utf8(out.stdout).unwrap();
    assert!(
        script.starts_with("#!/usr/bin/env python\n# coding: utf-8\n\n# # Sales\n"),
        "{script}"
    );
    assert!(
        script.contains("# In[1]:\n\n\nimport matplotlib.pyplot as plt\n"),
        "{script}"
    );
}

/// `magics.py` is what `jupyter nbconvert --to python` (nbconvert 7.17.2, IPython's
/// `TransformerManager`) writes for `magics.ipynb`: line and cell magics, shell lines and
/// their assignments, help — but for the raw cell, which nbconvert leaves as code and ipybox
/// writes as a comment (the app never runs a raw cell).
#[test]
fn a_script_is_what_nbconvert_writes() {
    let out = export(&[
        fixture("magics.ipynb").as_os_str(),
        "--to".as_ref(),
        "py".as_ref(),
        "-o".as_ref(),
        "-".as_ref(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        std::fs::read_to_string(fixture("magics.py")).unwrap(),
        "byte for byte as nbconvert, the raw cell aside"
    );
}

/// Markdown and raw cells are text a person reads, never code: whatever line end or control
/// character their text holds, the script a real Python runs prints only what the code cell
/// prints.
#[test]
fn markdown_and_raw_text_never_run_as_code() {
    let ws = workspace();
    let ends = [
        "\r", "\r\n", "\n", "\u{c}", "\u{b}", "\u{85}", "\u{2028}", "\u{2029}", "\u{1c}", "\u{0}",
    ];
    let mut cells = Vec::new();
    for end in ends {
        let text = format!("# title{end}print('PWNED')");
        cells.push(serde_json::json!({"cell_type": "markdown", "metadata": {}, "source": text}));
        cells.push(serde_json::json!({"cell_type": "raw", "metadata": {}, "source": text}));
        cells.push(serde_json::json!({
            "cell_type": "raw",
            "metadata": {"raw_mimetype": "text/x-python"},
            "source": [format!("{end}print('PWNED'){end}")],
        }));
    }
    cells.push(serde_json::json!({
        "cell_type": "code", "metadata": {}, "execution_count": 1, "outputs": [],
        "source": "print('the code ran')",
    }));
    let nb = ws.path().join("untrusted.ipynb");
    let doc =
        serde_json::json!({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells});
    std::fs::write(&nb, doc.to_string()).unwrap();
    let script = ws.path().join("untrusted.py");
    let out = export(&[
        nb.as_os_str(),
        "--to".as_ref(),
        "py".as_ref(),
        "-o".as_ref(),
        script.as_os_str(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ran = Command::new("python3").arg(&script).output().unwrap();
    assert!(
        ran.status.success(),
        "the script runs: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout),
        "the code ran\n",
        "only the code cell ran:\n{}",
        std::fs::read_to_string(&script).unwrap()
    );
}
