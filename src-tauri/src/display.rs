//! Untrusted text as a person reads it.
//!
//! Tool and server names, arguments, results, shell commands, kernel output and policy text
//! come from kernel code, notebooks or MCP servers. Shown as they are, a control character,
//! an escape sequence, a line separator or a bidi override can make what a person reads
//! differ from what runs: a prompt hidden by concealed text, an argument moved by a cursor
//! sequence, `…/\u{202e}txt.stroper` shown as `…/reports.txt`. So every place a person reads
//! such text (the terminal's prompt, the native dialog, `ipybox audit`, and the UI's panel
//! by the same rules) shows it through [`escape`]: characters that are not plainly visible
//! as themselves are written as `\uXXXX`. `tests/fixtures/untrusted-text/cases.json` pins the
//! rules for every implementation. On a terminal, kernel output goes through
//! [`TerminalFilter`], which keeps its colours and nothing else of the terminal's controls.
//!
//! See `docs/security.md`, "Text a person reads is the text that runs".

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` on one line, every character a person could not see as itself written as `\uXXXX`:
/// C0 and C1 controls (newline and tab too), DEL, U+2028/U+2029, bidi controls, zero-width
/// and other invisible format characters, blank letters, private-use characters and
/// noncharacters. Lookalike letters, combining marks, emoji and spaces are left alone. For
/// names, titles and one-line values.
pub fn escape(text: &str) -> Cow<'_, str> {
    escape_keeping(text, |_| false)
}

/// [`escape`], keeping newlines and tabs: for text shown on several lines (JSON shown
/// indented, a shell command). `\r` is escaped: it could rewrite the line it ends.
pub fn escape_lines(text: &str) -> Cow<'_, str> {
    escape_keeping(text, |c| c == '\n' || c == '\t')
}

fn escape_keeping(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(|c| hidden(c) && !keep(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hidden(c) && !keep(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `\uXXXX`, lowercase; above U+FFFF the UTF-16 surrogate pair, as JSON writes it, so that
/// the escaped text of a JSON document is a JSON document of the same value.
fn push_escaped(out: &mut String, c: char) {
    let mut units = [0u16; 2];
    for unit in c.encode_utf16(&mut units) {
        let _ = write!(out, "\\u{unit:04x}");
    }
}

/// Whether `c` is not plainly visible as itself: it controls the terminal or the layout
/// (controls, line separators, bidi), shows as nothing (format characters, blank letters) or
/// as whatever a font makes of it (private use, noncharacters).
pub(crate) fn hidden(c: char) -> bool {
    let n = c as u32;
    matches!(n,
        // C0 controls, DEL, C1 controls (U+009B is CSI, U+009D OSC, U+0085 NEL)
        0x00..=0x1f | 0x7f..=0x9f
        // soft hyphen, combining grapheme joiner
        | 0xad | 0x34f
        // Arabic number signs and end of ayah, Syriac abbreviation mark, Arabic letter mark
        | 0x600..=0x605 | 0x6dd | 0x70f | 0x61c | 0x890 | 0x891 | 0x8e2
        // Hangul fillers, Khmer inherent vowels, Mongolian selectors and vowel separator
        | 0x115f | 0x1160 | 0x17b4 | 0x17b5 | 0x180b..=0x180f | 0x3164 | 0xffa0
        // zero-width space and joiners, LRM, RLM
        | 0x200b..=0x200f
        // line and paragraph separators, bidi embeddings and overrides
        | 0x2028..=0x202e
        // word joiner, invisible operators, bidi isolates, deprecated format characters
        | 0x2060..=0x206f
        // private use
        | 0xe000..=0xf8ff | 0xf0000..=0x10ffff
        // noncharacters in the BMP, zero-width no-break space (BOM), interlinear annotation
        | 0xfdd0..=0xfdef | 0xfeff | 0xfff9..=0xfffb
        // Kaithi and Egyptian format characters, shorthand format controls, musical
        // formatting, tags and the rest of plane 14 (supplementary variation selectors)
        | 0x110bd | 0x110cd | 0x13430..=0x1343f | 0x1bca0..=0x1bca3 | 0x1d173..=0x1d17a
        | 0xe0000..=0xe0fff
    ) || n & 0xfffe == 0xfffe
}

/// Kernel output on its way to a terminal: it keeps its text, newlines, tabs, `\r` (progress
/// bars redraw their line with it) and its colours (SGR sequences with colour, bold, dim,
/// italic, underline, inverse, strike-through and reset), and loses every other escape
/// sequence (cursor movement, erasing, hiding the cursor, titles, the clipboard, links, device
/// strings); other control characters and everything [`escape`] escapes are written as
/// `\uXXXX`. Neither concealed nor blinking text, nor any state but colours, survives it, and
/// the prompts that follow start with a reset on a fresh line.
///
/// Output arrives in chunks, and a sequence may be cut between two: the filter keeps what it
/// has seen of one until the next chunk. Give it every chunk written to one terminal, in
/// order, and [`finish`](Self::finish) at the end.
#[derive(Debug, Default)]
pub struct TerminalFilter {
    state: State,
    /// A colour or attribute is set since the last reset.
    styled: bool,
}

#[derive(Debug, Default)]
enum State {
    #[default]
    Text,
    /// After ESC.
    Escape,
    /// After ESC and intermediate bytes (`ESC ( B`): until the final byte.
    EscapeIntermediate,
    /// In a control sequence (`ESC [`): its parameters and intermediates so far.
    Control(String),
    /// In a control sequence too long to be a colour: until its final byte.
    ControlIgnored,
    /// In a string (OSC, DCS, SOS, PM, APC): until BEL or ST.
    Str,
    /// After ESC in a string: `\` ends it (ST), anything else ends it and starts anew.
    StrEscape,
}

/// A colour sequence is short; anything longer is dropped whole.
const CONTROL_MAX: usize = 64;

impl TerminalFilter {
    /// A filter for one terminal.
    pub fn new() -> Self {
        Self::default()
    }

    /// The part of `chunk` (after the chunks before it) that may reach the terminal.
    pub fn push(&mut self, chunk: &str) -> String {
        let mut out = String::with_capacity(chunk.len());
        for c in chunk.chars() {
            self.feed(c, &mut out);
        }
        out
    }

    /// The end of the output: a sequence left unfinished is dropped, and colours still set
    /// are reset, so that what ipybox writes next is plain.
    pub fn finish(&mut self) -> String {
        self.state = State::Text;
        if std::mem::take(&mut self.styled) {
            RESET.to_owned()
        } else {
            String::new()
        }
    }

    fn feed(&mut self, c: char, out: &mut String) {
        const ESC: char = '\u{1b}';
        match std::mem::take(&mut self.state) {
            State::Text => match c {
                ESC => self.state = State::Escape,
                '\n' | '\t' | '\r' => out.push(c),
                c if hidden(c) => push_escaped(out, c),
                c => out.push(c),
            },
            State::Escape => match c {
                '[' => self.state = State::Control(String::new()),
                ']' | 'P' | 'X' | '^' | '_' => self.state = State::Str,
                ESC => self.state = State::Escape,
                ' '..='/' => self.state = State::EscapeIntermediate,
                // A two-character sequence (ESC 7, ESC c, ESC M, …): dropped.
                '0'..='~' => {}
                // Not a sequence after all: the ESC goes, the character is text.
                c => self.feed(c, out),
            },
            State::EscapeIntermediate => match c {
                ' '..='/' => self.state = State::EscapeIntermediate,
                '0'..='~' => {}
                ESC => self.state = State::Escape,
                c => self.feed(c, out),
            },
            State::Control(mut params) => match c {
                '0'..='?' | ' '..='/' if params.len() < CONTROL_MAX => {
                    params.push(c);
                    self.state = State::Control(params);
                }
                '0'..='?' | ' '..='/' => self.state = State::ControlIgnored,
                'm' if colours_only(&params) => {
                    out.push_str("\u{1b}[");
                    out.push_str(&params);
                    out.push('m');
                    self.styled = !resets(&params);
                }
                // Any other final byte: a cursor move, an erase, a mode; dropped.
                '@'..='~' => {}
                ESC => self.state = State::Escape,
                // A control or other character inside a sequence cuts it short.
                c => self.feed(c, out),
            },
            State::ControlIgnored => match c {
                '@'..='~' => {}
                ESC => self.state = State::Escape,
                ' '..='?' => self.state = State::ControlIgnored,
                c => self.feed(c, out),
            },
            State::Str => match c {
                // BEL or ST (8-bit) ends it; CAN and SUB cancel it.
                '\u{7}' | '\u{9c}' | '\u{18}' | '\u{1a}' => {}
                ESC => self.state = State::StrEscape,
                _ => self.state = State::Str,
            },
            State::StrEscape => match c {
                '\\' => {}
                c => {
                    self.state = State::Escape;
                    self.feed(c, out);
                }
            },
        }
    }
}

/// What resets every attribute.
const RESET: &str = "\u{1b}[0m";

/// Whether the SGR parameters `params` (between `ESC [` and `m`) only reset or set colours,
/// bold, dim, italic, underline, inverse, strike-through or overline, or undo one of these.
/// Conceal (8), blink (5, 6), fonts (10–20) and anything unknown are refused.
fn colours_only(params: &str) -> bool {
    if !params
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b';' || b == b':')
    {
        return false;
    }
    let number = |p: &str| -> Option<u32> {
        if p.is_empty() {
            Some(0)
        } else if p.len() <= 3 {
            p.parse().ok()
        } else {
            None
        }
    };
    let mut parts = params.split(';');
    while let Some(part) = parts.next() {
        if let Some((first, rest)) = part.split_once(':') {
            // Sub-parameters: an underline style (4:3) or a colour (38:2::r:g:b).
            let ok = matches!(number(first), Some(4 | 38 | 48 | 58))
                && rest.split(':').all(|p| number(p).is_some_and(|n| n <= 255));
            if !ok {
                return false;
            }
            continue;
        }
        match number(part) {
            Some(0..=4 | 7 | 9 | 21..=24 | 27..=29 | 30..=37 | 39 | 40..=47 | 49) => {}
            Some(53 | 55 | 59 | 90..=97 | 100..=107) => {}
            Some(38 | 48 | 58) => {
                let count = match parts.next().and_then(number) {
                    Some(5) => 1,
                    Some(2) => 3,
                    _ => return false,
                };
                for _ in 0..count {
                    if parts.next().and_then(number).is_none_or(|n| n > 255) {
                        return false;
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// Whether SGR `params` end with every attribute reset (`ESC [ m`, `ESC [ 0 m`).
fn resets(params: &str) -> bool {
    params.is_empty()
        || params
            .rsplit(';')
            .next()
            .is_some_and(|p| p.parse::<u32>() == Ok(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Cases {
        cases: Vec<Case>,
    }

    #[derive(serde::Deserialize)]
    struct Case {
        name: String,
        input: String,
        line: String,
        lines: String,
    }

    /// The rules every implementation shares (the UI's panel reads the same file).
    #[test]
    fn the_shared_cases_escape_as_written() {
        let cases: Cases = serde_json::from_str(include_str!(
            "../../tests/fixtures/untrusted-text/cases.json"
        ))
        .expect("the cases are JSON");
        assert!(cases.cases.len() >= 20, "the file has its cases");
        for case in &cases.cases {
            assert_eq!(escape(&case.input), case.line, "one line: {}", case.name);
            assert_eq!(
                escape_lines(&case.input),
                case.lines,
                "several lines: {}",
                case.name
            );
        }
    }

    #[test]
    fn escaped_json_is_json_of_the_same_value() {
        let value = serde_json::json!({
            "path": "/home/me/\u{202e}txt.stroper",
            "sep": "a\u{2028}b\u{85}c",
            "tag": "x\u{e0041}",
            "ctl": "\u{1b}[2J\u{9b}1A",
        });
        let pretty = serde_json::to_string_pretty(&value).expect("json");
        let shown = escape_lines(&pretty);
        assert!(
            shown.chars().all(|c| !hidden(c) || c == '\n'),
            "nothing hidden is left: {shown}"
        );
        let back: serde_json::Value = serde_json::from_str(&shown).expect("still JSON");
        assert_eq!(back, value, "the same value");
    }

    #[test]
    fn unchanged_text_is_not_copied() {
        assert!(matches!(escape("plain"), Cow::Borrowed("plain")));
        assert!(matches!(escape_lines("a\nb"), Cow::Borrowed("a\nb")));
    }

    /// Every way to cut `input` in two gives the same output as the whole.
    fn filtered_in_pieces(input: &str) -> String {
        let whole = {
            let mut f = TerminalFilter::new();
            let mut out = f.push(input);
            out.push_str(&f.finish());
            out
        };
        let bounds: Vec<usize> = (0..=input.len())
            .filter(|&i| input.is_char_boundary(i))
            .collect();
        for &cut in &bounds {
            let mut f = TerminalFilter::new();
            let mut out = f.push(&input[..cut]);
            out.push_str(&f.push(&input[cut..]));
            out.push_str(&f.finish());
            assert_eq!(out, whole, "cut at byte {cut} of {input:?}");
        }
        // And one character at a time.
        let mut f = TerminalFilter::new();
        let mut out: String = input.chars().map(|c| f.push(&c.to_string())).collect();
        out.push_str(&f.finish());
        assert_eq!(out, whole, "a character at a time: {input:?}");
        whole
    }

    #[test]
    fn the_terminal_keeps_colours() {
        let coloured = "\u{1b}[1;31mError\u{1b}[0m: \u{1b}[38;5;28;01mok\u{1b}[39;49m \u{1b}[38;2;10;20;30mrgb\u{1b}[m\n";
        assert_eq!(
            filtered_in_pieces(coloured),
            coloured,
            "colours and text pass as they are"
        );
        assert_eq!(
            filtered_in_pieces("\u{1b}[4:3mcurly\u{1b}[2;3;7;9mx\u{1b}[0m"),
            "\u{1b}[4:3mcurly\u{1b}[2;3;7;9mx\u{1b}[0m"
        );
        assert_eq!(
            filtered_in_pieces("10%\r50%\r100%\tdone\n"),
            "10%\r50%\r100%\tdone\n",
            "progress bars redraw their line"
        );
    }

    #[test]
    fn the_terminal_loses_every_other_control() {
        let cases = [
            // The attack: a fake prompt, then concealed text and a hidden cursor.
            (
                "Approve? [y/N] \u{1b}[8m\u{1b}[?25l",
                "Approve? [y/N] ",
                "conceal and hide-cursor dropped",
            ),
            (
                "\u{1b}[1;8mx",
                "x",
                "a colour sequence with conceal is dropped whole",
            ),
            ("\u{1b}[5mx\u{1b}[6m", "x", "blink dropped"),
            ("\u{1b}[11mx", "x", "alternative fonts dropped"),
            ("\u{1b}[38;5;300mx", "x", "a colour out of range"),
            ("\u{1b}[38;5mx", "x", "a colour without its number"),
            (
                "a\u{1b}[2J\u{1b}[H\u{1b}[1A\u{1b}[2K\u{1b}[10;20r\u{1b}[4hb",
                "ab",
                "erase, cursor moves, scroll region, insert mode",
            ),
            ("\u{1b}]0;title\u{7}t", "t", "a title (OSC ending in BEL)"),
            (
                "\u{1b}]52;c;ZXZpbA==\u{1b}\\t",
                "t",
                "the clipboard (OSC 52 ending in ST)",
            ),
            (
                "\u{1b}]8;;https://evil\u{1b}\\link\u{1b}]8;;\u{1b}\\",
                "link",
                "hyperlinks",
            ),
            (
                "\u{1b}Pq#0;2;0;0;0\u{1b}\\\u{1b}_apc\u{1b}\\\u{1b}^pm\u{1b}\\\u{1b}Xsos\u{1b}\\x",
                "x",
                "DCS, APC, PM, SOS",
            ),
            (
                "\u{1b}(0lqk\u{1b}(B\u{1b}c\u{1b}7\u{1b}8\u{1b}M",
                "lqk",
                "charsets, reset, cursor save and restore, reverse index",
            ),
            (
                "\u{9b}2J\u{9d}0;t\u{7}",
                "\\u009b2J\\u009d0;t\\u0007",
                "8-bit C1 controls are shown, not obeyed",
            ),
            (
                "a\u{8}\u{8}b\u{7f}\u{0}\u{b}\u{c}",
                "a\\u0008\\u0008b\\u007f\\u0000\\u000b\\u000c",
                "backspace, DEL, NUL, VT, FF",
            ),
            (
                "x\u{202e}txt\u{2028}y",
                "x\\u202etxt\\u2028y",
                "bidi and separators as everywhere",
            ),
            (
                "\u{1b}[31m\u{1b}]0;unterminated",
                "\u{1b}[31m\u{1b}[0m",
                "an unfinished string is dropped at the end, and colours reset",
            ),
            (
                "\u{1b}[3\n1mx",
                "\n1mx",
                "a control character cuts a sequence short",
            ),
            (
                "\u{1b}]0;t\u{1b}[2Jx",
                "x",
                "ESC in a string ends it and starts a sequence",
            ),
            ("\u{1b}\u{1b}[8mx", "x", "ESC ESC"),
            ("\u{1b}é", "é", "ESC before a non-ASCII character goes"),
        ];
        for (input, expected, why) in cases {
            assert_eq!(filtered_in_pieces(input), expected, "{why}");
        }
        let long = format!("\u{1b}[{}mx", "1;".repeat(100));
        assert_eq!(
            filtered_in_pieces(&long),
            "x",
            "a sequence too long is dropped"
        );
    }

    #[test]
    fn colours_left_on_are_reset_at_the_end() {
        let mut f = TerminalFilter::new();
        assert_eq!(f.push("\u{1b}[31mred"), "\u{1b}[31mred");
        assert_eq!(f.finish(), "\u{1b}[0m");
        let mut f = TerminalFilter::new();
        f.push("\u{1b}[31mred\u{1b}[0m");
        assert_eq!(f.finish(), "", "already reset");
    }
}
