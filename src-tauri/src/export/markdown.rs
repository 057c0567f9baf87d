//! Markdown cells and outputs as HTML: CommonMark with GitHub's tables, strikethrough and
//! task lists, `$…$` / `$$…$$` math as MathML (see `math`), images pasted into a cell (`attachment:name`) as `data:` URIs, and
//! the result sanitized like any other HTML from a notebook.

use std::collections::BTreeMap;

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag};

use super::math::{self, Display};
use super::notebook::{MimeBundle, bundle_text};
use super::sanitize;

/// `source` as sanitized HTML; `attachments` are the cell's pasted images.
pub fn to_html(source: &str, attachments: &BTreeMap<String, MimeBundle>) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_MATH;
    let events = Parser::new_ext(source, options).map(|event| match event {
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let dest_url = match dest_url.strip_prefix("attachment:") {
                Some(name) => CowStr::from(attachment_uri(attachments, name).unwrap_or_default()),
                None => dest_url,
            };
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            })
        }
        Event::InlineMath(tex) => Event::InlineHtml(math::to_html(&tex, Display::Inline).into()),
        Event::DisplayMath(tex) => Event::InlineHtml(math::to_html(&tex, Display::Block).into()),
        other => other,
    });
    let mut html = String::with_capacity(source.len() * 2);
    pulldown_cmark::html::push_html(&mut html, events);
    sanitize::clean(&html)
}

/// A pasted image as a `data:` URI.
fn attachment_uri(attachments: &BTreeMap<String, MimeBundle>, name: &str) -> Option<String> {
    let bundle = attachments.get(name)?;
    bundle.iter().find_map(|(mime, value)| {
        let text = bundle_text(value)?;
        if mime == "image/svg+xml" {
            return Some(super::svg_uri(&text));
        }
        let data = super::base64_payload(&text)?;
        mime.starts_with("image/")
            .then(|| format!("data:{mime};base64,{data}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_renders_with_math_as_mathml() {
        let html = to_html(
            "# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nEnergy $E = mc^2$ and\n\n$$\\int_0^1 x\\,dx < 1$$",
            &BTreeMap::new(),
        );
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        assert!(html.contains("<td>1</td>"), "{html}");
        assert!(
            html.contains("Energy <math display=\"inline\"><mi>E</mi><mo>=</mo>"),
            "inline math: {html}"
        );
        assert!(
            html.contains("<math display=\"block\"><msubsup>"),
            "displayed math: {html}"
        );
        assert!(
            html.contains("<mo>&lt;</mo>"),
            "the operator is text: {html}"
        );
    }

    #[test]
    fn an_attackers_tex_is_inert() {
        let mut kept = Vec::new();
        for (tex, must_not) in [
            (r"$\href{javascript:alert(1)}{x}$", "<a"),
            (
                r"$\style{background:url(https://evil.example/x)}{x}$",
                "style=",
            ),
            (r"$\class{notebook}{x}$", "class=\"notebook"),
            (r"$\url{https://evil.example}$", "href"),
            (r"$\htmlId{ipybox-root}{x}$", "id="),
            (r"$\text{<script>alert(1)</script>}$", "<script"),
            (r"$$\color{red}{x}$$", "style="),
            (r"$\operatorname{<img src=x onerror=alert(1)>}$", "<img"),
        ] {
            let html = to_html(tex, &BTreeMap::new());
            if html.contains(must_not) {
                kept.push(format!("{tex} → {html}"));
            }
        }
        assert!(kept.is_empty(), "{}", kept.join("\n"));
    }

    #[test]
    fn attachments_embed_and_remote_images_do_not_load() {
        let mut attachments = BTreeMap::new();
        attachments.insert(
            "p.png".to_owned(),
            MimeBundle::from([("image/png".to_owned(), serde_json::json!("iVBORw0KGgo=\n"))]),
        );
        let html = to_html(
            "![p](attachment:p.png) ![t](https://evil.example/t.png) <img src=x onerror=alert(1)> [l](javascript:alert(1))",
            &attachments,
        );
        assert!(
            html.contains("src=\"data:image/png;base64,iVBORw0KGgo=\""),
            "{html}"
        );
        assert!(
            !html.contains("evil.example")
                && !html.contains("onerror")
                && !html.contains("javascript"),
            "{html}"
        );
    }
}
