//! The person at the terminal: the one reader of `/dev/tty` for a whole run, and the fresh
//! line every question starts on.

use std::io::Write;
use std::time::Duration;

/// Asks the person at the terminal. One thread reads `/dev/tty` for the whole run and hands
/// lines over, so that a question nobody answered in time leaves no reader behind to take
/// the answer to the next one. Code piped on stdin still works; without a terminal every
/// call is rejected.
pub(crate) struct Terminal {
    pub(crate) lines: Option<tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<String>>>,
    /// The terminal itself: questions are written to it (the terminal that answers them,
    /// wherever stderr goes), and what was typed before a question is dropped from it.
    pub(crate) tty: Option<std::fs::File>,
}

/// Where every question starts: attributes reset, the cursor shown, a line of its own.
/// Kernel output keeps only its colours on the way to the terminal ([`ipybox::text::TerminalFilter`]),
/// but it may leave them set, or the cursor mid-line after text that looks like a question.
pub(crate) const FRESH_LINE: &str = "\x1b[0m\x1b[?25h\r\n";

impl Terminal {
    pub(crate) fn open() -> Terminal {
        use std::io::BufRead;
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty");
        let Ok(tty) = opened else {
            return Terminal {
                lines: None,
                tty: None,
            };
        };
        let flush = tty.try_clone().ok();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(tty).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Terminal {
            lines: Some(tokio::sync::Mutex::new(rx)),
            tty: flush,
        }
    }

    /// Show `text` on the terminal (on stderr when it cannot be written).
    pub(crate) fn show(&self, text: &str) {
        let written = self.tty.as_ref().is_some_and(|mut tty| {
            tty.write_all(text.as_bytes())
                .and_then(|()| tty.flush())
                .is_ok()
        });
        if !written {
            eprint!("{text}");
        }
    }

    /// Drop input typed but not yet entered: keys pressed before a question appeared are not
    /// its answer.
    pub(crate) fn drop_typed_input(&self) {
        if let Some(tty) = &self.tty {
            use std::os::fd::AsRawFd;
            // SAFETY: tcflush only discards the terminal's pending input; the descriptor is
            // open for as long as `tty` lives.
            unsafe {
                libc::tcflush(tty.as_raw_fd(), libc::TCIFLUSH);
            }
        }
    }

    /// Show `prompt` and read a line (for the code's `input()`); `None` without a terminal.
    pub(crate) async fn read_line(&self, prompt: &str) -> Option<String> {
        let lines = self.lines.as_ref()?;
        let mut lines = lines.lock().await;
        while lines.try_recv().is_ok() {}
        eprint!("{prompt}");
        lines.recv().await
    }

    /// Ask whether to run a tool call; `false` when rejected, unanswered within `timeout`,
    /// or when there is no terminal. Everything in the question that kernel code or a server
    /// chose is escaped ([`ipybox::text::escape`]): it cannot move the cursor, hide text or
    /// reorder it.
    pub(crate) async fn ask(&self, request: &ipybox::ApprovalRequest, timeout: Duration) -> bool {
        use ipybox::text::{escape, escape_lines};
        let call = format!(
            "{}.{}",
            escape(request.server_name()),
            escape(request.tool_name())
        );
        // Indented JSON: a value's own newlines are `\n` in it, and a shell command is one
        // value, `{"command": …}`.
        let args = serde_json::to_string_pretty(request.tool_args()).unwrap_or_default();
        let question = format!(
            "Approve tool call {call} ?\n  server: {}\n  arguments: {}",
            escape(request.server()),
            escape_lines(&args).replace('\n', "\n  ")
        );
        let Some(lines) = &self.lines else {
            eprintln!(
                "\n{question}\n(no terminal to ask on: rejected; use --approval auto, reject or `rules FILE`)"
            );
            return false;
        };
        let mut lines = lines.lock().await;
        // Whatever was typed before this question is not its answer.
        self.drop_typed_input();
        while lines.try_recv().is_ok() {}
        let _ = std::io::stderr().flush();
        self.show(&format!(
            "{FRESH_LINE}{question}\nApprove {call}? [y/N] (rejected after {:.0} s) ",
            timeout.as_secs_f64()
        ));
        match tokio::time::timeout(timeout, lines.recv()).await {
            Ok(Some(line)) => matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"),
            Ok(None) => false,
            Err(_) => {
                self.show(&format!(
                    "\nno answer within {:.0} s: rejected\n",
                    timeout.as_secs_f64()
                ));
                false
            }
        }
    }
}
