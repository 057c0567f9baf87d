//! Terminal text (streams, tracebacks) as HTML, as the app shows it: `\r` overwrites its
//! line, SGR colours and styles become spans (the 16 colours as the app's classes, 256 and
//! 24-bit colours as `ansi-rgb-` classes the page defines), every other escape sequence is dropped and all text is escaped.

use super::html_escape;

#[derive(Debug, Clone, Default, PartialEq)]
struct Style {
    fg: Option<Colour>,
    bg: Option<Colour>,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Colour {
    Named(u8),
    Rgb(u8, u8, u8),
}

/// `text` with carriage returns applied, as HTML spans.
pub fn to_html(text: &str) -> String {
    let text = overwrite_lines(text);
    let mut out = String::with_capacity(text.len() + 64);
    let mut style = Style::default();
    let mut open = false;
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let Some(at) = rest.find('\u{1b}') else {
            push_text(&mut out, rest);
            break;
        };
        push_text(&mut out, &rest[..at]);
        let (consumed, params) = escape_sequence(&rest[at..]);
        rest = &rest[at + consumed..];
        if let Some(params) = params {
            apply_sgr(&mut style, &params);
            if open {
                out.push_str("</span>");
                open = false;
            }
            if style != Style::default() {
                out.push_str(&open_span(&style));
                open = true;
            }
        }
    }
    if open {
        out.push_str("</span>");
    }
    out
}

fn push_text(out: &mut String, text: &str) {
    // Other controls (a bell, a backspace left over) are not shown.
    let clean: String = text
        .chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect();
    out.push_str(&html_escape(&clean));
}

/// Each line as a terminal leaves it: what follows the last `\r` (but a `\r\n` ends a line).
fn overwrite_lines(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    if !text.contains('\r') {
        return text;
    }
    text.split('\n')
        .map(|line| {
            let line = line.trim_end_matches('\r');
            line.rsplit('\r').next().unwrap_or(line)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The length of the escape sequence at the start of `s`, and its parameters when it is SGR.
fn escape_sequence(s: &str) -> (usize, Option<Vec<u32>>) {
    let bytes = s.as_bytes();
    match bytes.get(1) {
        Some(b'[') => {
            let mut end = 2;
            while end < bytes.len() && !(0x40..=0x7e).contains(&bytes[end]) {
                end += 1;
            }
            if end >= bytes.len() {
                return (bytes.len(), None);
            }
            let params = (bytes[end] == b'm').then(|| {
                s[2..end]
                    .split([';', ':'])
                    .map(|p| p.parse().unwrap_or(0))
                    .collect()
            });
            (end + 1, params)
        }
        Some(b']') => {
            // OSC (a title, a hyperlink): up to BEL or ST.
            let end = s
                .find('\u{7}')
                .map(|e| e + 1)
                .or_else(|| s.find("\u{1b}\\").map(|e| e + 2))
                .unwrap_or(s.len());
            (end, None)
        }
        Some(_) => (2.min(s.len()), None),
        None => (1, None),
    }
}

fn apply_sgr(style: &mut Style, params: &[u32]) {
    let params = if params.is_empty() { &[0][..] } else { params };
    let mut i = 0;
    while i < params.len() {
        match params[i] {
            0 => *style = Style::default(),
            1 => style.bold = true,
            2 => style.dim = true,
            3 => style.italic = true,
            4 => style.underline = true,
            22 => {
                style.bold = false;
                style.dim = false;
            }
            23 => style.italic = false,
            24 => style.underline = false,
            n @ 30..=37 => style.fg = Some(Colour::Named((n - 30) as u8)),
            n @ 90..=97 => style.fg = Some(Colour::Named((n - 90 + 8) as u8)),
            39 => style.fg = None,
            n @ 40..=47 => style.bg = Some(Colour::Named((n - 40) as u8)),
            n @ 100..=107 => style.bg = Some(Colour::Named((n - 100 + 8) as u8)),
            49 => style.bg = None,
            n @ (38 | 48) => {
                let colour = match params.get(i + 1) {
                    Some(5) => {
                        let c = params.get(i + 2).copied().unwrap_or(0).min(255) as u8;
                        i += 2;
                        Some(xterm_256(c))
                    }
                    Some(2) => {
                        let ch = |k: usize| params.get(i + k).copied().unwrap_or(0).min(255) as u8;
                        let c = Colour::Rgb(ch(2), ch(3), ch(4));
                        i += 4;
                        Some(c)
                    }
                    _ => None,
                };
                if n == 38 {
                    style.fg = colour;
                } else {
                    style.bg = colour;
                }
            }
            _ => {}
        }
        i += 1;
    }
}

fn xterm_256(n: u8) -> Colour {
    match n {
        0..=15 => Colour::Named(n),
        16..=231 => {
            let v = n - 16;
            let level = |x: u8| if x == 0 { 0 } else { 55 + x * 40 };
            Colour::Rgb(level(v / 36), level((v / 6) % 6), level(v % 6))
        }
        _ => {
            let g = 8 + (n - 232) * 10;
            Colour::Rgb(g, g, g)
        }
    }
}

fn open_span(style: &Style) -> String {
    let mut classes = Vec::new();
    for (colour, kind) in [(style.fg, "fg"), (style.bg, "bg")] {
        match colour {
            Some(Colour::Named(n)) => classes.push(format!("ansi-{kind}-{n}")),
            // The page allows no inline style: the page's stylesheet gets a rule per colour.
            Some(Colour::Rgb(r, g, b)) => {
                classes.push(format!("ansi-rgb-{kind}-{r:02x}{g:02x}{b:02x}"))
            }
            None => {}
        }
    }
    for (on, class) in [
        (style.bold, "ansi-bold"),
        (style.dim, "ansi-dim"),
        (style.italic, "ansi-italic"),
        (style.underline, "ansi-underline"),
    ] {
        if on {
            classes.push(class.to_owned());
        }
    }
    format!("<span class=\"{}\">", classes.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_become_spans_and_text_is_escaped() {
        assert_eq!(
            to_html("\u{1b}[0;31mError\u{1b}[0m <b>"),
            "<span class=\"ansi-fg-1\">Error</span> &lt;b&gt;"
        );
        assert_eq!(
            to_html("\u{1b}[38;5;196mx\u{1b}[1;38;2;1;2;3my"),
            "<span class=\"ansi-rgb-fg-ff0000\">x</span><span class=\"ansi-rgb-fg-010203 ansi-bold\">y</span>"
        );
    }

    #[test]
    fn carriage_returns_overwrite_and_other_sequences_go() {
        assert_eq!(
            to_html("10%\r50%\r100%\ndone\r\n"),
            "100%\ndone\n",
            "a progress line shows its last state"
        );
        assert_eq!(
            to_html("a\u{1b}[2Kb\u{1b}]0;title\u{7}c\u{7}"),
            "abc",
            "erases, titles and bells are not text"
        );
    }
}
