//! Export benchmark: a 50-cell notebook with 10 plots (640 × 480 matplotlib PNGs), 10
//! pandas-like tables, Markdown with inline and displayed math, and printed text, exported to HTML in-process and to PDF by
//! `ipybox export --to pdf` (a whole run of the command: GTK, the WebKit web process, the
//! layout and the print).
//!
//! `cargo bench -p ipybox-tests --bench export [-- --quick]`. The PDF figure needs the
//! desktop build of `target/debug/ipybox` (`cargo build -p ipybox`) and a display
//! (`xvfb-run -a cargo bench …`); without them it is left out, and says so. Prints
//! median/min/max and writes JSON to `target/bench/export.json`.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::path::Path;
use std::time::Instant;

use base64::Engine as _;
use ipybox_tests::{ipybox_bin, workspace};
use serde_json::{Value, json};

fn stats(name: &str, mut xs: Vec<f64>, json: &mut Vec<String>) {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let median = xs[xs.len() / 2];
    let (min, max) = (xs[0], xs[xs.len() - 1]);
    println!(
        "{name:<44} ms  median {median:>9.2}  min {min:>9.2}  max {max:>9.2}  n {}",
        xs.len()
    );
    json.push(format!(
        "  \"{name}\": {{\"unit\": \"ms\", \"median\": {median}, \"min\": {min}, \"max\": {max}, \"n\": {}}}",
        xs.len()
    ));
}

/// 50 cells: every fifth a plot, every fifth a table, Markdown between, text elsewhere.
fn notebook() -> Value {
    let png =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/export/figure.png"))
            .unwrap();
    let png = base64::engine::general_purpose::STANDARD.encode(png);
    let table = {
        let mut t = String::from(
            "<table class=\"dataframe\"><thead><tr><th></th><th>a</th><th>b</th><th>c</th></tr></thead><tbody>",
        );
        for r in 0..20 {
            t.push_str(&format!(
                "<tr><th>{r}</th><td>{}</td><td>{:.3}</td><td>x{r}</td></tr>",
                r * 7,
                r as f64 / 3.0
            ));
        }
        t + "</tbody></table>"
    };
    let cells: Vec<Value> = (0..50)
        .map(|i| match i % 5 {
            0 => json!({"cell_type": "code", "execution_count": i, "metadata": {}, "source": format!("fig, ax = plt.subplots()\nax.plot(data[{i}])"),
                "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"image/png": png, "text/plain": "<Figure>"}}]}),
            1 => json!({"cell_type": "code", "execution_count": i, "metadata": {}, "source": "df.head(20)",
                "outputs": [{"output_type": "execute_result", "execution_count": i, "metadata": {}, "data": {"text/html": table, "text/plain": "df"}}]}),
            2 => json!({"cell_type": "markdown", "metadata": {}, "source": format!("## Step {i}\n\nWe compute $\\sigma^2$ and **compare** it with [the paper](https://example.org):\n\n$$\\hat\\sigma^2 = \\frac{{1}}{{n-1}} \\sum_{{i=1}}^{{n}} (x_i - \\bar{{x}})^2$$\n\n- one\n- two")}),
            _ => json!({"cell_type": "code", "execution_count": i, "metadata": {}, "source": format!("for k in range(20):\n    print(f'row {{k}}: {{k * {i}}}')  # comment"),
                "outputs": [{"output_type": "stream", "name": "stdout", "text": (0..20).map(|k| format!("row {k}: {}\n", k * i)).collect::<String>()}]}),
        })
        .collect();
    json!({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let ws = workspace();
    let nb_path = ws.path().join("bench.ipynb");
    let text = serde_json::to_string_pretty(&notebook()).unwrap();
    std::fs::write(&nb_path, &text).unwrap();
    println!("notebook: 50 cells, 10 plots, {} KiB", text.len() / 1024);
    let mut json = Vec::new();

    let runs = if quick { 5 } else { 20 };
    let mut html = Vec::new();
    let mut size = 0;
    for _ in 0..runs {
        let t = Instant::now();
        // As the command and the app do it: read the file, parse, render.
        let text = std::fs::read_to_string(&nb_path).unwrap();
        let nb = ipybox::Notebook::parse(&text).unwrap();
        let page = ipybox::export_html(&nb, "bench.ipynb");
        html.push(t.elapsed().as_secs_f64() * 1000.0);
        size = page.len();
    }
    println!("page: {} KiB", size / 1024);
    stats("html (read, parse, render; in-process)", html, &mut json);

    let bin = ipybox_bin();
    if std::env::var_os("DISPLAY").is_none() {
        println!("pdf: left out (no display; run under xvfb-run -a)");
    } else {
        let mut pdf = Vec::new();
        for run in 0..if quick { 2 } else { 5 } {
            let out = ws.path().join(format!("bench-{run}.pdf"));
            let t = Instant::now();
            let status = std::process::Command::new(&bin)
                .args(["export", "--to", "pdf", "-o"])
                .arg(&out)
                .arg(&nb_path)
                .output()
                .unwrap();
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            if !status.status.success() {
                println!(
                    "pdf: left out ({})",
                    String::from_utf8_lossy(&status.stderr).trim()
                );
                break;
            }
            pdf.push(ms);
            if run == 0 {
                println!("pdf: {} KiB", std::fs::metadata(&out).unwrap().len() / 1024);
            }
        }
        if !pdf.is_empty() {
            stats(
                "pdf (ipybox export --to pdf, whole command)",
                pdf,
                &mut json,
            );
        }
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("export.json"),
        format!("{{\n{}\n}}\n", json.join(",\n")),
    )
    .unwrap();
}
