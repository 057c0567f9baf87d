//! A server's question asked on the terminal (`ipybox exec --approval ask`): who asks and
//! what, then each field in turn with its default shown; a bad value is named and asked
//! again. Everything the server sent is escaped: it cannot move the cursor, hide text or
//! pose as ipybox.

use std::sync::Arc;
use std::time::Duration;

use ipybox::mcp_client::{Answer, Elicitor, Field, FieldKind, Form, TextFormat};
use ipybox::text::{escape, escape_lines};
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::{Map, Value};

use super::terminal::{FRESH_LINE, Terminal};

/// Answers servers' questions on the terminal; each line waits up to `timeout`.
pub(crate) struct TerminalElicitor {
    pub(crate) terminal: Arc<Terminal>,
    pub(crate) timeout: Duration,
}

impl Elicitor for TerminalElicitor {
    fn elicit(&self, server: &str, request: ElicitRequestParams) -> Answer {
        let terminal = self.terminal.clone();
        let timeout = self.timeout;
        let server = server.to_owned();
        Box::pin(async move { ask(&terminal, timeout, &server, request).await })
    }

    fn offered(&self) -> bool {
        self.terminal.lines.is_some()
    }
}

async fn ask(
    terminal: &Terminal,
    timeout: Duration,
    server: &str,
    request: ElicitRequestParams,
) -> ElicitResult {
    let ElicitRequestParams::FormElicitationParams {
        message,
        requested_schema,
        ..
    } = request
    else {
        return ElicitResult::new(ElicitationAction::Decline);
    };
    let form = match serde_json::to_value(&requested_schema)
        .map_err(|e| e.to_string())
        .and_then(|s| Form::from_schema(&s))
    {
        Ok(form) => form,
        Err(_) => return ElicitResult::new(ElicitationAction::Decline),
    };
    let Some(lines) = &terminal.lines else {
        return ElicitResult::new(ElicitationAction::Decline);
    };
    let mut lines = lines.lock().await;
    terminal.drop_typed_input();
    while lines.try_recv().is_ok() {}
    let mut read = async |prompt: &str| -> Option<String> {
        terminal.show(prompt);
        match tokio::time::timeout(timeout, lines.recv()).await {
            Ok(line) => line,
            Err(_) => {
                terminal.show(&format!(
                    "\nno answer within {:.0} s: cancelled\n",
                    timeout.as_secs_f64()
                ));
                None
            }
        }
    };
    let said = escape_lines(&message).replace('\n', "\n  | ");
    let prompt = format!(
        "{FRESH_LINE}The MCP server \"{}\" asks (its own words):\n  | {said}\nAnswer it? [a]nswer, [d]ecline, [c]ancel: ",
        escape(server)
    );
    let action = loop {
        let Some(line) = read(&prompt).await else {
            return ElicitResult::new(ElicitationAction::Cancel);
        };
        match line.trim().to_ascii_lowercase().as_str() {
            "a" | "answer" | "y" | "yes" => break ElicitationAction::Accept,
            "d" | "decline" | "n" | "no" => break ElicitationAction::Decline,
            "c" | "cancel" => break ElicitationAction::Cancel,
            _ => terminal.show("Type a, d or c.\n"),
        }
    };
    if action != ElicitationAction::Accept {
        return ElicitResult::new(action);
    }
    let mut answer = Map::new();
    for field in &form.fields {
        loop {
            let typed = {
                let _hidden = field.secret.then(|| Unechoed::on(terminal));
                let typed = read(&field_prompt(field)).await;
                if field.secret {
                    terminal.show("\n");
                }
                typed
            };
            let Some(typed) = typed else {
                return ElicitResult::new(ElicitationAction::Cancel);
            };
            let typed = typed.trim();
            if typed.is_empty() {
                if field.required && field.default.is_none() {
                    terminal.show(&format!("  {}: it is required\n", field.label()));
                    continue;
                }
                break;
            }
            match field.parse(&typed_value(field, typed)) {
                Ok(value) => {
                    answer.insert(field.name.clone(), value);
                    break;
                }
                Err(why) => terminal.show(&format!("  {}: {why}\n", field.label())),
            }
        }
    }
    match form.check(&answer) {
        Ok(checked) => {
            ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(checked))
        }
        Err(problem) => {
            terminal.show(&format!("  {problem}: declined\n"));
            ElicitResult::new(ElicitationAction::Decline)
        }
    }
}

/// `  Age (a whole number from 0 to 150, required) [30]: `, the server's words escaped.
fn field_prompt(field: &Field) -> String {
    let what = match &field.kind {
        FieldKind::Text { format, .. } => match format {
            Some(TextFormat::Email) => "an email address".to_owned(),
            Some(TextFormat::Uri) => "a full address, https://…".to_owned(),
            Some(TextFormat::Date) => "a date, YYYY-MM-DD".to_owned(),
            Some(TextFormat::DateTime) => "a date and time, YYYY-MM-DDTHH:MM:SSZ".to_owned(),
            None if field.secret => "secret, not shown as you type".to_owned(),
            None => "text".to_owned(),
        },
        FieldKind::Number {
            integer,
            minimum,
            maximum,
        } => {
            let kind = if *integer {
                "a whole number"
            } else {
                "a number"
            };
            match (minimum, maximum) {
                (Some(lo), Some(hi)) => format!("{kind} from {lo} to {hi}"),
                (Some(lo), None) => format!("{kind}, at least {lo}"),
                (None, Some(hi)) => format!("{kind}, at most {hi}"),
                (None, None) => kind.to_owned(),
            }
        }
        FieldKind::Boolean => "y or n".to_owned(),
        FieldKind::Choice { options } | FieldKind::Choices { options, .. } => {
            let many = matches!(field.kind, FieldKind::Choices { .. });
            let listed: Vec<String> = options
                .iter()
                .enumerate()
                .map(|(i, o)| match &o.title {
                    Some(t) if t != &o.value => {
                        format!("{} {} ({})", i + 1, escape(&o.value), escape(t))
                    }
                    _ => format!("{} {}", i + 1, escape(&o.value)),
                })
                .collect();
            format!(
                "{}: {}",
                if many { "some of, by commas" } else { "one of" },
                listed.join(", ")
            )
        }
    };
    let required = if field.required { ", required" } else { "" };
    let default = match (&field.default, field.secret) {
        (Some(_), true) => " [a default is set]".to_owned(),
        (Some(Value::String(s)), false) => format!(" [{}]", escape(s)),
        (Some(Value::Bool(b)), false) => format!(" [{}]", if *b { "y" } else { "n" }),
        (Some(v), false) => format!(" [{}]", escape(&v.to_string())),
        (None, _) => String::new(),
    };
    let about = field
        .description
        .as_deref()
        .map(|d| format!("\n    {}", escape(d)))
        .unwrap_or_default();
    format!("{about}\n  {} ({what}{required}){default}: ", field.label())
}

/// What was typed, as the field takes it: an option by its number, several by commas.
fn typed_value(field: &Field, typed: &str) -> Value {
    let pick = |t: &str, options: &[ipybox::mcp_client::Choice]| -> Value {
        let by_number = t
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| options.get(i))
            .map(|o| o.value.clone());
        Value::String(by_number.unwrap_or_else(|| t.to_owned()))
    };
    match &field.kind {
        FieldKind::Choice { options } => pick(typed, options),
        FieldKind::Choices { options, .. } => Value::Array(
            typed
                .split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(|t| pick(t, options))
                .collect(),
        ),
        _ => Value::String(typed.to_owned()),
    }
}

/// The terminal does not echo what is typed while this lives (a secret's value).
struct Unechoed {
    fd: std::os::fd::RawFd,
    was: libc::termios,
}

impl Unechoed {
    fn on(terminal: &Terminal) -> Option<Unechoed> {
        use std::os::fd::AsRawFd;
        let fd = terminal.tty.as_ref()?.as_raw_fd();
        // SAFETY: tcgetattr/tcsetattr only read and set the terminal's modes; `fd` is open
        // for as long as the terminal lives, which outlives this guard.
        unsafe {
            let mut was: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(fd, &mut was) != 0 {
                return None;
            }
            let mut quiet = was;
            quiet.c_lflag &= !libc::ECHO;
            libc::tcsetattr(fd, libc::TCSANOW, &quiet);
            Some(Unechoed { fd, was })
        }
    }
}

impl Drop for Unechoed {
    fn drop(&mut self) {
        // SAFETY: as in `on`: the modes the terminal had before are set back.
        unsafe {
            libc::tcsetattr(self.fd, libc::TCSANOW, &self.was);
        }
    }
}
