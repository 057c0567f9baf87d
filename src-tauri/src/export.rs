//! Export: a notebook file as something a person without ipybox can read — one
//! self-contained, inert HTML page (`html`), which the desktop app also prints to PDF — or
//! as a Python script (`python`), as nbconvert makes them.

mod ansi;
mod highlight;
mod html;
mod markdown;
mod math;
mod notebook;
mod python;
mod sanitize;

use base64::Engine as _;

pub use html::to_html;
pub use notebook::{Notebook, NotebookError};
pub use python::to_python;

/// Text for HTML element content and attribute values.
pub(crate) fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An image's base64 as nbformat stores it (lines), checked to be nothing but base64, so it
/// can stand inside an attribute; `None` when it is not.
fn base64_payload(text: &str) -> Option<String> {
    let data: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let valid = !data.is_empty()
        && data
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    valid.then_some(data)
}

/// An SVG document as a `data:` URI for an `<img>`, where its scripts never run and it
/// loads nothing.
fn svg_uri(svg: &str) -> String {
    format!(
        "data:image/svg+xml;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(svg)
    )
}

/// The lists the app and the export each keep (the MIME order, the `data:` media types), from
/// the fixture both are tested against.
#[cfg(test)]
fn shared_render_lists() -> serde_json::Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/render-lists/lists.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("the shared lists")).expect("json")
}
