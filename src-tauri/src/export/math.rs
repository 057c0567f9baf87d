//! TeX math (`$…$` and `$$…$$` in Markdown, `text/latex` outputs) as [MathML Core], which
//! a browser lays out with no script and no font to fetch. The conversion is
//! pulldown-latex's: a pull parser with no recursion, so no formula can overflow the stack.
//! A formula it cannot parse — or one too long or too deeply nested to convert in
//! reasonable time — stays readable as its TeX source, shown as code. The MathML still goes
//! through the page's sanitizer like any other markup from a notebook.
//!
//! [MathML Core]: https://www.w3.org/TR/mathml-core/

use pulldown_latex::config::DisplayMode;
use pulldown_latex::{Parser, RenderConfig, Storage};

use super::html_escape;

/// Longer formulas stay TeX source. Notebook formulas are rarely a few KiB; the converter's
/// time and output grow with the input (five times its size as MathML).
const MAX_SOURCE_BYTES: usize = 16 * 1024;

/// Deeper formulas stay TeX source: the converter's time grows with the square of the depth
/// of its groups (10,000 nested `\frac{` take seconds), and nothing a person writes comes
/// near this.
const MAX_DEPTH: usize = 64;

/// How a formula sits in its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Display {
    /// Within a line (`$…$`).
    Inline,
    /// On a line of its own (`$$…$$`), as `<math display="block">`.
    Block,
}

/// `tex` as a `<math>` element, or as its escaped source in a `code` element when it cannot
/// be converted. The result is not sanitized yet.
pub fn to_html(tex: &str, display: Display) -> String {
    to_mathml(tex, display).unwrap_or_else(|| source(tex, display))
}

/// A `text/latex` output: `$$…$$`, `\[…\]`, `$…$` or `\(…\)` as the app reads it (anything
/// else, such as an `equation` environment, as a displayed formula).
pub fn latex_output(text: &str) -> String {
    let text = text.trim();
    let strip = |open: &str, close: &str| {
        text.strip_prefix(open)
            .and_then(|t| t.strip_suffix(close))
            .filter(|_| text.len() >= open.len() + close.len())
    };
    let (tex, display) = if let Some(tex) = strip("$$", "$$").or_else(|| strip("\\[", "\\]")) {
        (tex, Display::Block)
    } else if let Some(tex) = strip("$", "$").or_else(|| strip("\\(", "\\)")) {
        (tex, Display::Inline)
    } else {
        (text, Display::Block)
    };
    to_html(tex, display)
}

fn to_mathml(tex: &str, display: Display) -> Option<String> {
    if tex.len() > MAX_SOURCE_BYTES || depth(tex) > MAX_DEPTH {
        return None;
    }
    let storage = Storage::new();
    // All or nothing: half a formula with an error box in it reads worse than its source.
    let events = Parser::new(tex, &storage)
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    let config = RenderConfig {
        display_mode: match display {
            Display::Inline => DisplayMode::Inline,
            Display::Block => DisplayMode::Block,
        },
        ..RenderConfig::default()
    };
    let mut mathml = String::with_capacity(tex.len() * 6);
    pulldown_latex::push_mathml(
        &mut mathml,
        events.into_iter().map(Ok::<_, std::fmt::Error>),
        config,
    )
    .ok()?;
    Some(escape_stray_angles(&mathml))
}

/// The elements pulldown-latex writes (it never writes `semantics` or `annotation` here: no
/// annotation is asked for). Any other `<` in its output is text.
const CONVERTER_ELEMENTS: &[&str] = &[
    "math",
    "merror",
    "mfrac",
    "mi",
    "mn",
    "mo",
    "mover",
    "mroot",
    "mrow",
    "mspace",
    "msqrt",
    "msub",
    "msubsup",
    "msup",
    "mtable",
    "mtd",
    "mtext",
    "mtr",
    "munder",
    "munderover",
];

/// The converter writes some text unescaped — an operator `<` as `<mo><</mo>`, the name in
/// `\operatorname{…}` as it was typed — so a formula could smuggle markup into the page
/// (`\operatorname{<img …>}`). Every `<` that does not open or close one of the converter's
/// own elements is escaped here, before the sanitizer sees it.
fn escape_stray_angles(mathml: &str) -> String {
    let mut out = String::with_capacity(mathml.len() + 16);
    let mut rest = mathml;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let name = after.strip_prefix('/').unwrap_or(after);
        let len = name
            .bytes()
            .take_while(|b| b.is_ascii_lowercase() || *b == b'-')
            .count();
        let ends = matches!(name.as_bytes().get(len), Some(b' ' | b'>' | b'/'));
        if ends && CONVERTER_ELEMENTS.contains(&&name[..len]) {
            out.push('<');
        } else {
            out.push_str("&lt;");
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The deepest nesting of groups (`{…}`, `[…]`, `\left…\right`, `\begin…\end`), counted
/// without parsing: an escaped brace (`\{`) opens nothing, an unmatched closer closes
/// nothing.
fn depth(tex: &str) -> usize {
    let bytes = tex.as_bytes();
    let (mut depth, mut deepest, mut i) = (0usize, 0usize, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => {
                let name: &[u8] = {
                    let rest = &bytes[i + 1..];
                    let len = rest.iter().take_while(|b| b.is_ascii_alphabetic()).count();
                    &rest[..len.max(1).min(rest.len())]
                };
                match name {
                    b"left" | b"begin" => depth += 1,
                    b"right" | b"end" => depth = depth.saturating_sub(1),
                    _ => {}
                }
                i += 1 + name.len();
                deepest = deepest.max(depth);
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        deepest = deepest.max(depth);
        i += 1;
    }
    deepest
}

fn source(tex: &str, display: Display) -> String {
    match display {
        Display::Inline => format!("<code class=\"math-source\">${}$</code>", html_escape(tex)),
        // A `code`, not a `pre`: displayed math sits inside a Markdown paragraph.
        Display::Block => format!(
            "<code class=\"math-source math-block\">$${}$$</code>",
            html_escape(tex)
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn what_notebooks_write_becomes_mathml() {
        for (tex, must_hold) in [
            (r"\frac{a}{b}", "<mfrac>"),
            (r"\sqrt{x^2+1}", "<msqrt>"),
            (r"\sqrt[3]{y}", "<mroot>"),
            (
                r"\sum_{i=1}^{n} i",
                "<munderover><mo movablelimits=\"false\">∑</mo>",
            ),
            (
                r"\int_0^\infty e^{-x^2}\,dx",
                "<msubsup><mo movablelimits=\"false\">∫</mo>",
            ),
            (r"\alpha + \Omega", "<mi>α</mi>"),
            (r"\mathbf{x}", "<mi>𝐱</mi>"),
            (r"\mathbb{R}^n", "<mi>ℝ</mi>"),
            (
                r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
                "<mtr><mtd><mn>1</mn></mtd>",
            ),
            (
                r"\begin{aligned} f(x) &= x^2 \\ g &= 1 \end{aligned}",
                "<mtable class=\"menv-alignlike menv-align\">",
            ),
            (
                r"\begin{cases} 1 & x > 0 \\ 0 & \text{else} \end{cases}",
                "<mtext>else</mtext>",
            ),
            (r"\text{if } x", "<mtext>if&nbsp;</mtext>"),
        ] {
            let html = to_html(tex, Display::Block);
            assert!(html.starts_with("<math"), "{tex} is MathML: {html}");
            assert!(html.contains(must_hold), "{tex} → {html}");
        }
        assert!(
            to_html("x", Display::Block).starts_with("<math display=\"block\">"),
            "displayed math is a block"
        );
    }

    #[test]
    fn what_cannot_be_converted_stays_readable_source() {
        assert_eq!(
            to_html(r"\frac{a", Display::Inline),
            "<code class=\"math-source\">$\\frac{a$</code>",
            "an unclosed group"
        );
        assert_eq!(
            to_html(r"\href{javascript:alert(1)}{x<y}", Display::Block),
            "<code class=\"math-source math-block\">$$\\href{javascript:alert(1)}{x&lt;y}$$</code>",
            "a command the converter does not know, escaped"
        );
    }

    #[test]
    fn a_formula_built_to_exhaust_the_converter_is_shown_as_source_at_once() {
        for (what, tex) in [
            (
                "10,000 nested fractions",
                format!("{}x{}", r"\frac{".repeat(10_000), "}{y}".repeat(10_000)),
            ),
            (
                "5,000 nested roots",
                format!("{}x{}", r"\sqrt[".repeat(5_000), "]{y}".repeat(5_000)),
            ),
            (
                "3,000 nested delimiters",
                format!("{}x{}", r"\left(".repeat(3_000), r"\right)".repeat(3_000)),
            ),
            ("a formula of 1 MB", "x + ".repeat(256 * 1024)),
        ] {
            let started = Instant::now();
            let html = to_html(&tex, Display::Block);
            assert!(
                started.elapsed() < Duration::from_secs(1),
                "{what} took {:?}",
                started.elapsed()
            );
            assert!(
                html.starts_with("<code class=\"math-source math-block\">"),
                "{what}"
            );
        }
        let deep_enough = format!("{}x{}", "x^{".repeat(MAX_DEPTH), "}".repeat(MAX_DEPTH));
        assert!(
            to_html(&deep_enough, Display::Inline).starts_with("<math"),
            "{MAX_DEPTH} levels still convert"
        );
    }

    #[test]
    fn text_latex_outputs_keep_their_delimiters_meaning() {
        assert!(latex_output("$$x$$").starts_with("<math display=\"block\">"));
        assert!(latex_output(" \\[x\\] ").starts_with("<math display=\"block\">"));
        assert!(latex_output("$x$").starts_with("<math display=\"inline\">"));
        assert!(latex_output("\\(x\\)").starts_with("<math display=\"inline\">"));
        assert_eq!(
            latex_output(r"\begin{equation} E = mc^2 \end{equation}"),
            to_html(r"\begin{equation} E = mc^2 \end{equation}", Display::Block),
            "an environment is displayed"
        );
    }

    #[test]
    fn text_the_converter_leaves_unescaped_cannot_become_markup() {
        let html = to_html(
            r"\operatorname{<img src=x onerror=alert(1)>} < x",
            Display::Inline,
        );
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;img src=x onerror=alert(1)>"), "{html}");
        assert!(html.contains("<mo>&lt;</mo>"), "{html}");
    }
}
