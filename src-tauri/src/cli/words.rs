//! What the command line says: errors in words, escaped for a terminal, and exit codes.

use std::process::ExitCode;

use ipybox::Error;

/// An error and its causes in one line. Engine errors already end with their cause's words,
/// so a cause whose words are already there is not repeated.
pub(crate) fn in_words(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    let mut last = text.clone();
    for cause in e.chain().skip(1) {
        let words = cause.to_string();
        if !last.ends_with(&words) {
            text.push_str(": ");
            text.push_str(&words);
        }
        last = words;
    }
    text
}

/// A person's yes or no.
pub(crate) fn answer(yes: bool) -> ipybox::Decision {
    if yes {
        ipybox::Decision::Accept
    } else {
        ipybox::Decision::Reject
    }
}

pub(crate) fn report(e: &Error) -> ExitCode {
    match e {
        Error::CodeExecution { error, .. } => {
            if error.traceback.is_empty() {
                eprintln!(
                    "{}",
                    for_terminal(&format!("{}: {}", error.name, error.value))
                );
            } else {
                eprintln!("{}", for_terminal(&error.traceback));
            }
            ExitCode::from(1)
        }
        Error::Timeout { .. } => {
            eprintln!("ipybox: {}", for_terminal(&e.to_string()));
            ExitCode::from(2)
        }
        Error::KernelDied { .. } => {
            eprintln!("ipybox: {}", for_terminal(&e.to_string()));
            ExitCode::from(3)
        }
        other => {
            eprintln!("ipybox: {}", for_terminal(&other.to_string()));
            ExitCode::from(4)
        }
    }
}

/// Text that may carry what kernel code or a server wrote (a traceback, a server's stderr in
/// an error), as the terminal may show it: colours kept, other controls dropped or escaped.
pub(crate) fn for_terminal(text: &str) -> String {
    let mut filter = ipybox::text::TerminalFilter::new();
    let mut out = filter.push(text);
    out.push_str(&filter.finish());
    out
}
