//! A notebook as one self-contained HTML page that reads like the app: prompts in a gutter,
//! highlighted code, rendered Markdown, math as MathML, outputs chosen by the app's MIME
//! order. Nothing in it runs or loads: untrusted HTML and Markdown are sanitized, images are
//! `data:` URIs, SVG is shown as an image (where nothing in it runs), terminal text is
//! escaped, and a Content-Security-Policy allows no script, no connection and no resource
//! but `data:` images and the page's own stylesheet (by its hash — not even inline styles).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use base64::Engine as _;
use sha2::{Digest as _, Sha256};

use super::notebook::{Cell, MimeBundle, Notebook, Output, bundle_text};
use super::{ansi, base64_payload, highlight, html_escape, markdown, math, sanitize, svg_uri};

/// MIME types shown, richest first — the app's order: both are tested against
/// `tests/fixtures/render-lists/lists.json`.
const MIME_PRIORITY: &[&str] = &[
    "text/html",
    "image/svg+xml",
    "image/png",
    "image/jpeg",
    "image/gif",
    "text/markdown",
    "text/latex",
    "application/json",
    "text/plain",
];

const STYLE: &str = include_str!("export.css");

/// The page of `notebook`, titled `title` (the notebook's name).
pub fn to_html(notebook: &Notebook, title: &str) -> String {
    let mut body = String::new();
    for cell in &notebook.cells {
        render_cell(&mut body, cell);
    }
    let style = format!("{STYLE}{}", rgb_classes(&body));
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(style.as_bytes()));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'sha256-{hash}'; img-src data:; media-src data:; base-uri 'none'; form-action 'none'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"ipybox {version}\">\n\
         <title>{title}</title>\n<style>{style}</style>\n</head>\n<body>\n<main class=\"notebook\">\n{body}</main>\n</body>\n</html>\n",
        version = env!("CARGO_PKG_VERSION"),
        title = html_escape(title),
    )
}

fn render_cell(out: &mut String, cell: &Cell) {
    match cell {
        Cell::Code {
            source,
            execution_count,
            outputs,
        } => {
            let prompt = execution_count.map_or(" ".to_owned(), |n| n.to_string());
            let _ = write!(
                out,
                "<section class=\"cell code-cell\">\n<div class=\"cell-input\"><div class=\"prompt\">[{prompt}]:</div><pre class=\"source\"><code>{}</code></pre></div>\n",
                highlight::python(&source.0)
            );
            if !outputs.is_empty() {
                out.push_str("<div class=\"outputs\">\n");
                for output in outputs {
                    render_output(out, output);
                }
                out.push_str("</div>\n");
            }
            out.push_str("</section>\n");
        }
        Cell::Markdown {
            source,
            attachments,
        } => {
            let _ = writeln!(
                out,
                "<section class=\"cell markdown-cell\"><div class=\"cell-input\"><div class=\"prompt\"></div><div class=\"markdown\">{}</div></div></section>",
                markdown::to_html(&source.0, attachments)
            );
        }
        Cell::Raw { source, .. } => {
            let _ = writeln!(
                out,
                "<section class=\"cell raw-cell\"><div class=\"cell-input\"><div class=\"prompt\"></div><pre class=\"source raw\">{}</pre></div></section>",
                html_escape(&source.0)
            );
        }
        Cell::Unknown => {}
    }
}

fn render_output(out: &mut String, output: &Output) {
    let (kind, prompt, body) = match output {
        Output::Stream { name, text } => {
            let kind = if name == "stderr" {
                "stream stderr"
            } else {
                "stream"
            };
            (
                kind,
                String::new(),
                format!("<pre>{}</pre>", ansi::to_html(&text.0)),
            )
        }
        Output::DisplayData { data } => ("display", String::new(), render_bundle(data)),
        Output::ExecuteResult {
            data,
            execution_count,
        } => (
            "result",
            execution_count.map_or(String::new(), |n| format!("[{n}]:")),
            render_bundle(data),
        ),
        Output::Error {
            ename,
            evalue,
            traceback,
        } => {
            let text = if traceback.is_empty() {
                format!("{ename}: {evalue}")
            } else {
                traceback.join("\n")
            };
            (
                "error",
                String::new(),
                format!("<pre>{}</pre>", ansi::to_html(&text)),
            )
        }
        Output::Unknown => (
            "unsupported",
            String::new(),
            "<p class=\"note\">(an output of a type this export does not know)</p>".to_owned(),
        ),
    };
    let _ = writeln!(
        out,
        "<div class=\"output {kind}\"><div class=\"prompt out\">{prompt}</div><div class=\"output-body\">{body}</div></div>"
    );
}

/// The richest entry of a bundle that can be shown safely.
fn render_bundle(data: &MimeBundle) -> String {
    for mime in MIME_PRIORITY {
        let Some(value) = data.get(*mime) else {
            continue;
        };
        let text = bundle_text(value);
        let shown = match (*mime, text) {
            ("text/html", Some(t)) => Some(format!(
                "<div class=\"user-content\">{}</div>",
                sanitize::clean(&t)
            )),
            ("image/svg+xml", Some(t)) => Some(format!(
                "<img class=\"output-image\" alt=\"SVG image\" src=\"{}\">",
                svg_uri(&t)
            )),
            ("image/png" | "image/jpeg" | "image/gif", Some(t)) => base64_payload(&t).map(|b64| {
                format!(
                    "<img class=\"output-image\" alt=\"image\" src=\"data:{mime};base64,{b64}\">"
                )
            }),
            ("text/markdown", Some(t)) => Some(format!(
                "<div class=\"user-content markdown\">{}</div>",
                markdown::to_html(&t, &Default::default())
            )),
            ("text/latex", Some(t)) => Some(format!(
                "<div class=\"math-display\">{}</div>",
                sanitize::clean(&math::latex_output(&t))
            )),
            ("application/json", _) => serde_json::to_string_pretty(value)
                .ok()
                .map(|j| format!("<pre class=\"json\">{}</pre>", html_escape(&j))),
            ("text/plain", Some(t)) => Some(format!("<pre>{}</pre>", ansi::to_html(&t))),
            _ => None,
        };
        if let Some(shown) = shown {
            return shown;
        }
    }
    let kinds: Vec<&str> = data.keys().map(String::as_str).collect();
    format!(
        "<p class=\"note\">(an output this export cannot show: {})</p>",
        html_escape(&kinds.join(", "))
    )
}

/// A rule for each 256- or 24-bit terminal colour the page uses (the policy allows no
/// inline styles, so these are classes). Only ANSI spans, which this module writes, carry
/// such a class: the sanitizer lets no other class through.
fn rgb_classes(body: &str) -> String {
    let mut seen = BTreeSet::new();
    for (at, _) in body.match_indices("ansi-rgb-") {
        let rest = &body[at + 9..];
        let (Some(kind), Some(hex)) = (rest.get(..2), rest.get(3..9)) else {
            continue;
        };
        if (kind == "fg" || kind == "bg") && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            seen.insert((kind.to_owned(), hex.to_owned()));
        }
    }
    let mut css = String::new();
    for (kind, hex) in seen {
        let property = if kind == "fg" {
            "color"
        } else {
            "background-color"
        };
        let _ = writeln!(css, ".ansi-rgb-{kind}-{hex}{{{property}:#{hex}}}");
    }
    css
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
    fn the_page_allows_no_script_and_no_fetch() {
        let page = to_html(&notebook(""), "<x>.ipynb");
        let csp = page
            .split("Content-Security-Policy\" content=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("a CSP meta tag");
        assert!(csp.starts_with("default-src 'none';"), "{csp}");
        assert!(
            !csp.contains("unsafe") && !csp.contains("script-src"),
            "{csp}"
        );
        assert!(
            page.contains("<title>&lt;x&gt;.ipynb</title>"),
            "the title is escaped"
        );
        let head = page.split("<style>").next().unwrap_or("");
        assert!(
            head.contains("Content-Security-Policy"),
            "the policy comes before anything it governs"
        );
    }

    #[test]
    fn the_stylesheet_hash_matches_what_the_page_holds() {
        let page = to_html(
            &notebook(
                r#"{"cell_type": "code", "source": "", "execution_count": 1, "outputs": [
            {"output_type": "stream", "name": "stdout", "text": "\u001b[38;5;196mred"}]}"#,
            ),
            "t",
        );
        let style = page
            .split("<style>")
            .nth(1)
            .and_then(|s| s.split("</style>").next())
            .expect("style");
        let hash =
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(style.as_bytes()));
        assert!(
            page.contains(&format!("'sha256-{hash}'")),
            "the browser would refuse the stylesheet otherwise"
        );
        assert!(
            style.contains(".ansi-rgb-fg-ff0000{color:#ff0000}"),
            "a 256-colour becomes a class: {style}"
        );
        assert!(page.contains("class=\"ansi-rgb-fg-ff0000\">red"), "{page}");
    }

    #[test]
    fn an_attackers_outputs_render_inert() {
        let page = to_html(
            &notebook(
                r#"{"cell_type": "code", "source": "x", "execution_count": 1, "outputs": [
                    {"output_type": "display_data", "data": {"text/html": "<b onclick=\"alert(1)\">hi</b><script>alert(2)</script><img src=\"https://evil.example/p.png\">", "text/plain": "x"}},
                    {"output_type": "display_data", "data": {"image/svg+xml": "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(3)</script></svg>"}},
                    {"output_type": "display_data", "data": {"image/png": "AAAA\" onerror=\"alert(4)"}},
                    {"output_type": "stream", "name": "stdout", "text": "</pre><script>alert(5)</script>"},
                    {"output_type": "error", "ename": "E", "evalue": "v", "traceback": ["<img src=x onerror=alert(6)>"]},
                    {"output_type": "execute_result", "execution_count": 1, "data": {"text/markdown": "[x](javascript:alert(7)) <iframe src=https://evil.example>"}}
                ]}"#,
            ),
            "t",
        );
        // Escaped text (`&lt;img … onerror`) is harmless; markup is not.
        for bad in [
            "<script",
            "onclick",
            "<img src=x",
            "evil.example",
            "javascript:",
            "<iframe",
            "<svg",
        ] {
            assert!(!page.contains(bad), "{bad} in the page:\n{page}");
        }
        assert!(page.contains("<b>hi</b>"), "harmless markup stays");
        assert!(
            page.contains("src=\"data:image/svg+xml;base64,"),
            "SVG is an image, where nothing runs"
        );
        assert!(
            page.contains("&lt;/pre&gt;&lt;script&gt;"),
            "stream text is text"
        );
    }

    #[test]
    fn latex_outputs_are_mathml_and_a_broken_one_is_its_source() {
        let page = to_html(
            &notebook(
                r#"{"cell_type": "code", "source": "x", "execution_count": 1, "outputs": [
                    {"output_type": "execute_result", "execution_count": 1, "data": {"text/latex": "$$\\frac{1}{2}$$", "text/plain": "1/2"}},
                    {"output_type": "display_data", "data": {"text/latex": "$\\frac{1}{<script>$", "text/plain": "x"}}
                ]}"#,
            ),
            "t",
        );
        assert!(
            page.contains("<div class=\"math-display\"><math display=\"block\"><mfrac>"),
            "{page}"
        );
        assert!(
            page.contains("<code class=\"math-source\">$\\frac{1}{&lt;script&gt;$</code>"),
            "{page}"
        );
    }

    #[test]
    fn the_mime_order_is_the_shared_lists() {
        let lists = crate::export::shared_render_lists();
        let order: Vec<&str> = lists["mime_order"]
            .as_array()
            .expect("mime_order")
            .iter()
            .filter_map(serde_json::Value::as_str)
            .collect();
        assert_eq!(
            MIME_PRIORITY, order,
            "the page picks an output's entry as the app does"
        );
    }

    #[test]
    fn outputs_follow_the_apps_mime_order() {
        let page = to_html(
            &notebook(
                r#"{"cell_type": "code", "source": "df", "execution_count": 2, "outputs": [
                    {"output_type": "execute_result", "execution_count": 2, "data": {"text/plain": "plain", "text/html": "<table><tr><td>rich</td></tr></table>"}},
                    {"output_type": "display_data", "data": {"text/plain": "fig", "image/png": "iVBORw0KGgo=\n"}}
                ]}"#,
            ),
            "t",
        );
        assert!(
            page.contains("<td>rich</td>") && !page.contains("plain"),
            "HTML before text"
        );
        assert!(
            page.contains("src=\"data:image/png;base64,iVBORw0KGgo=\""),
            "PNG embedded"
        );
        assert!(
            page.contains("<div class=\"prompt out\">[2]:</div>"),
            "the result's prompt"
        );
    }
}
