//! HTML from a notebook (outputs, Markdown) made inert for a page that leaves ipybox, with
//! ammonia's allow-list: no script in any form (elements, event handlers, `javascript:`,
//! SVG markup), MathML only as MathML Core's presentation elements and attributes (so
//! formulas show, and nothing in them links, fetches or carries HTML in an annotation), no
//! `style` (neither elements nor attributes, so no CSS fetches or
//! covers anything), no frames, forms or embedded objects, no ids that could clobber the
//! page; images only as `data:` URIs, so nothing loads from anywhere; links keep `http`,
//! `https` and `mailto` addresses (a reader's click opens them in a new context, as in
//! JupyterLab's export) and open nothing else. The page's Content-Security-Policy says the
//! same a second time.

use std::borrow::Cow;
use std::sync::LazyLock;

/// The media types a `data:` URI in a `src` may hold: images only, since the page keeps no
/// audio or video element. An entry `kind/*` would take any subtype. The app's list and this
/// one are both tested against `tests/fixtures/render-lists/lists.json`.
const DATA_MEDIA_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/jpg",
    "image/gif",
    "image/webp",
    "image/bmp",
    "image/svg+xml",
    "image/avif",
];

/// Whether `value` is a `data:` URI of one of [`DATA_MEDIA_TYPES`].
fn is_data_media(value: &str) -> bool {
    let lower = value.trim_start().to_ascii_lowercase();
    let Some(rest) = lower.strip_prefix("data:") else {
        return false;
    };
    // The type ends where its parameters or the data begin; without either it is no URI.
    let Some(end) = rest.find([';', ',']) else {
        return false;
    };
    let mime = &rest[..end];
    DATA_MEDIA_TYPES
        .iter()
        .any(|allowed| match allowed.strip_suffix("*") {
            Some(kind) => mime.strip_prefix(kind).is_some_and(|subtype| {
                !subtype.is_empty()
                    && subtype
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b".+-".contains(&b))
            }),
            None => mime == *allowed,
        })
}

/// [MathML Core]'s presentation elements, each with the presentational attributes it may
/// carry; every element also takes `dir`, `displaystyle`, `scriptlevel`, `mathvariant` and
/// `mathsize`. Left out on purpose: `semantics` and `maction` (their content stays, unwrapped),
/// `annotation` and `annotation-xml` (removed with their content: an annotation can carry
/// HTML), MathML 3's `href`, `xlink:href` and `mglyph` (links and fetched glyphs), and
/// `style`, `id`, `tabindex`, `mathcolor` and `mathbackground` (no element may fetch, be found
/// by the page, take focus or hide text behind a colour).
///
/// [MathML Core]: https://www.w3.org/TR/mathml-core/#mathml-elements-and-attributes
const MATHML: &[(&str, &[&str])] = &[
    ("math", &["display"]),
    ("merror", &[]),
    ("mfrac", &["linethickness"]),
    ("mi", &[]),
    ("mmultiscripts", &[]),
    ("mn", &[]),
    (
        "mo",
        &[
            "form",
            "fence",
            "separator",
            "lspace",
            "rspace",
            "stretchy",
            "symmetric",
            "maxsize",
            "minsize",
            "largeop",
            "movablelimits",
        ],
    ),
    ("mover", &["accent"]),
    (
        "mpadded",
        &["width", "height", "depth", "lspace", "voffset"],
    ),
    ("mphantom", &[]),
    ("mprescripts", &[]),
    ("mroot", &[]),
    ("mrow", &[]),
    ("ms", &[]),
    ("mspace", &["width", "height", "depth"]),
    ("msqrt", &[]),
    ("mstyle", &[]),
    ("msub", &[]),
    ("msubsup", &[]),
    ("msup", &[]),
    ("mtable", &[]),
    ("mtd", &["columnspan", "rowspan"]),
    ("mtext", &[]),
    ("mtr", &[]),
    ("munder", &["accentunder"]),
    ("munderover", &["accent", "accentunder"]),
];

const MATHML_GLOBAL: &[&str] = &[
    "dir",
    "displaystyle",
    "scriptlevel",
    "mathvariant",
    "mathsize",
];

/// The converter's classes for environments (`aligned`, `cases`, matrices, rules), negated
/// operators (`\not`) and small operators, which the page's stylesheet lays out; no other
/// class reaches a MathML element.
const MATH_CLASSES: &[(&str, &[&str])] = &[
    (
        "mtable",
        &[
            "menv-alignlike",
            "menv-align",
            "menv-arraylike",
            "menv-cases",
            "menv-cells-left",
            "menv-cells-right",
            "menv-multline",
            "menv-with-eqn",
        ],
    ),
    ("mtr", &["menv-hline", "menv-hdashline"]),
    ("mrow", &["mop-negated"]),
    ("mo", &["small"]),
    ("mi", &["small"]),
    (
        "mtd",
        &[
            "menv-nonumber",
            "menv-border-only",
            "menv-left-solid",
            "menv-left-dashed",
            "menv-right-solid",
            "menv-right-dashed",
        ],
    ),
];

static CLEANER: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let mut b = ammonia::Builder::default();
    b.url_schemes(["http", "https", "mailto", "data"].into_iter().collect())
        .url_relative(ammonia::UrlRelative::Deny)
        .add_clean_content_tags(["annotation", "annotation-xml"])
        .add_allowed_classes("code", ["math-source", "math-block"])
        .attribute_filter(|element, attribute, value| {
            let is_data = value
                .trim_start()
                .get(..5)
                .is_some_and(|s| s.eq_ignore_ascii_case("data:"));
            match (element, attribute) {
                // An image is shown only from the notebook itself.
                ("img", "src") => is_data_media(value).then_some(Cow::Borrowed(value)),
                // A data: link would open a document of the attacker's making.
                (_, "href") if is_data => None,
                _ if is_data => None,
                _ => Some(Cow::Borrowed(value)),
            }
        });
    for (element, attributes) in MATHML {
        b.add_tags([element])
            .add_tag_attributes(element, attributes.iter().chain(MATHML_GLOBAL));
    }
    for (element, classes) in MATH_CLASSES {
        b.add_allowed_classes(element, classes.iter());
    }
    b
});

/// `html` with everything that could run, load or escape its box removed.
pub fn clean(html: &str) -> String {
    CLEANER.clean(html).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attackers_markup_is_inert() {
        for (attack, must_not) in [
            ("<script>alert(1)</script>", "alert"),
            ("<img src=x onerror=alert(1)>", "onerror"),
            ("<a href=\"javascript:alert(1)\">x</a>", "javascript"),
            ("<a href=\"JaVaScRiPt&#58;alert(1)\">x</a>", "alert"),
            ("<svg><script>alert(1)</script></svg>", "alert"),
            ("<svg onload=alert(1)><circle r=4/></svg>", "onload"),
            (
                "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
                "onerror",
            ),
            (
                "<img src=\"https://evil.example/track.png\">",
                "evil.example",
            ),
            (
                "<img srcset=\"https://evil.example/a.png 2x\">",
                "evil.example",
            ),
            (
                "<div style=\"background:url(https://evil.example/x)\">x</div>",
                "evil.example",
            ),
            (
                "<style>@import 'https://evil.example/x.css';</style>",
                "evil.example",
            ),
            (
                "<link rel=stylesheet href=https://evil.example/x.css>",
                "evil.example",
            ),
            (
                "<iframe src=\"https://evil.example\"></iframe>",
                "evil.example",
            ),
            (
                "<object data=\"https://evil.example/x.swf\"></object>",
                "evil.example",
            ),
            (
                "<form action=\"https://evil.example\"><input name=a></form>",
                "evil.example",
            ),
            (
                "<meta http-equiv=refresh content=\"0;url=https://evil.example\">",
                "evil.example",
            ),
            (
                "<a href=\"data:text/html,<script>alert(1)</script>\">x</a>",
                "alert",
            ),
            ("<div id=\"ipybox-root\" name=\"x\">x</div>", "ipybox-root"),
            ("<base href=\"https://evil.example/\">", "evil.example"),
            (
                "<video poster=\"https://evil.example/p.png\"></video>",
                "evil.example",
            ),
            ("<div style=\"position:fixed;inset:0\">cover</div>", "fixed"),
        ] {
            let cleaned = clean(attack);
            assert!(
                !cleaned.to_lowercase().contains(must_not),
                "{attack} → {cleaned}"
            );
            for word in [
                "<script", "onerror", "onload", "<style", "<iframe", "<svg", "style=",
            ] {
                assert!(!cleaned.contains(word), "{attack} → {cleaned}");
            }
        }
    }

    #[test]
    fn an_attackers_mathml_is_inert() {
        let mut kept = Vec::new();
        for (what, attack, must_not) in [
            (
                "script in a text integration point",
                "<math><mtext><script>alert(1)</script></mtext></math>",
                "<script",
            ),
            (
                "HTML in an annotation",
                "<math><semantics><mi>x</mi><annotation-xml encoding=\"text/html\"><img src=x onerror=alert(1)></annotation-xml></semantics></math>",
                "onerror",
            ),
            (
                "a link on a token (MathML 3, Firefox follows it)",
                "<math><mi href=\"javascript:alert(1)\">x</mi></math>",
                "javascript",
            ),
            (
                "an XLink",
                "<math><mi xlink:href=\"https://evil.example/\">x</mi></math>",
                "evil.example",
            ),
            (
                "an action element",
                "<math><maction actiontype=\"statusline\"><mi>x</mi><mtext>msg</mtext></maction></math>",
                "maction",
            ),
            (
                "a style that fetches",
                "<math><mi style=\"background:url(https://evil.example/x)\">x</mi></math>",
                "evil.example",
            ),
            (
                "an id that clobbers the page",
                "<math><mi id=\"ipybox-root\">x</mi></math>",
                "ipybox-root",
            ),
            (
                "a class of the page's own",
                "<math><mtable class=\"notebook\"><mtr><mtd>x</mtd></mtr></mtable></math>",
                "notebook",
            ),
            (
                "focus taken on load",
                "<math><mi tabindex=\"1\" autofocus>x</mi></math>",
                "tabindex",
            ),
            (
                "an event handler",
                "<math><mi onclick=\"alert(1)\" onmouseover=\"alert(2)\">x</mi></math>",
                "alert",
            ),
            (
                "a glyph from elsewhere (MathML 3)",
                "<math><mglyph src=\"https://evil.example/g.png\"></mglyph></math>",
                "evil.example",
            ),
            (
                "a colour over the text",
                "<math><mrow mathbackground=\"#fff\" mathcolor=\"#fff\"><mi>x</mi></mrow></math>",
                "#fff",
            ),
        ] {
            let cleaned = clean(attack);
            if cleaned.to_lowercase().contains(must_not) {
                kept.push(format!("{what}: {attack} → {cleaned}"));
            }
        }
        assert!(kept.is_empty(), "{}", kept.join("\n"));
    }

    #[test]
    fn mathml_a_reader_needs_stays() {
        let math = "<math display=\"block\"><mtable class=\"menv-alignlike menv-align\"><mtr><mtd><mfrac linethickness=\"0em\"><mrow><mi mathvariant=\"normal\">Γ</mi></mrow><mn>2</mn></mfrac></mtd><mtd><mo stretchy=\"false\">(</mo><mspace width=\"0.1667em\"></mspace><mtext>if</mtext><mrow class=\"mop-negated\"><mo class=\"small\">∼</mo></mrow></mtd></mtr></mtable></math>";
        assert_eq!(clean(math), math, "nothing of it is lost");
    }

    #[test]
    fn data_media_are_the_shared_lists_export_entry() {
        let lists = crate::export::shared_render_lists();
        let export: Vec<&str> = lists["data_media"]["export"]
            .as_array()
            .expect("data_media.export")
            .iter()
            .filter_map(serde_json::Value::as_str)
            .collect();
        assert_eq!(
            DATA_MEDIA_TYPES, export,
            "the export's data: media types are the ones the shared file lists for it"
        );
        let app = lists["data_media"]["app"]
            .as_array()
            .expect("data_media.app");
        for mime in &export {
            assert!(
                app.iter().any(|a| a == mime),
                "{mime}: the page shows nothing the app would refuse"
            );
        }
        assert!(is_data_media("data:image/svg+xml;base64,PHN2Zz4="));
        assert!(is_data_media(" DATA:image/PNG,x"), "as browsers read it");
        for refused in [
            "data:audio/wav;base64,UklGRg==",
            "data:video/mp4;base64,AAAA",
            "data:image/png",
            "data:image/pngx;base64,AAAA",
            "data:text/html,<script>",
        ] {
            assert!(!is_data_media(refused), "{refused}");
        }
    }

    #[test]
    fn tables_images_and_links_a_reader_needs_stay() {
        let png = "data:image/png;base64,iVBORw0KGgo=";
        let cleaned = clean(&format!(
            "<table><tr><th>a</th><td colspan=\"2\">1</td></tr></table><img src=\"{png}\" alt=\"plot\"><a href=\"https://example.org/\">site</a>"
        ));
        assert!(
            cleaned.contains("<th>a</th><td colspan=\"2\">1</td>"),
            "{cleaned}"
        );
        assert!(cleaned.contains(&format!("src=\"{png}\"")), "{cleaned}");
        assert!(
            cleaned.contains("href=\"https://example.org/\""),
            "{cleaned}"
        );
        assert!(cleaned.contains("rel=\"noopener noreferrer\""), "{cleaned}");
    }
}
