//! Completion and help from the kernel, as a notebook's Tab and Shift+Tab ask for them: the
//! kernel's `complete_request` (with Jedi's types and signatures when IPython gives them)
//! and `inspect_request`. A kernel with subshells (ipykernel 7) answers them while a cell
//! runs; an older one answers after it.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use super::CodeExecutor;
use super::actor::Command;
use crate::error::{Error, Result};
use crate::kernel::messages::CompleteReply;
use crate::kernel::session::KernelSession;

/// How long a completion or help request waits for the kernel.
const HELP_TIMEOUT: Duration = Duration::from_secs(3);

/// The kernel's completions at a cursor; positions count Unicode code points, as Jupyter
/// does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Completions {
    /// Start of the text a completion replaces.
    pub start: usize,
    /// End of the text a completion replaces.
    pub end: usize,
    /// The completions, in the kernel's order.
    pub items: Vec<Completion>,
}

/// One completion. All of it is text from the kernel: untrusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Completion {
    /// What replaces `start..end`.
    pub text: String,
    /// Jedi's kind (`function`, `class`, `module`, `instance`, `keyword`, `path`, …), when
    /// the kernel says.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub kind: Option<String>,
    /// The signature of a callable, when the kernel says.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub signature: Option<String>,
}

/// What the kernel says about the name at a cursor.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Inspection {
    /// Whether the kernel found something.
    pub found: bool,
    /// Signature, docstring (and at detail level 1 the source) as plain text with ANSI
    /// colour escapes: untrusted.
    pub text: String,
}

/// An entry of IPython's `_jupyter_types_experimental`.
#[derive(Debug, Deserialize)]
struct Typed {
    start: usize,
    end: usize,
    text: String,
    #[serde(default)]
    r#type: Option<String>,
    #[serde(default)]
    signature: Option<String>,
}

impl CodeExecutor {
    /// The kernel's completions of `code` at `cursor` (code points): what Tab offers in a
    /// notebook. Generated tool modules complete like any module (`run(Params(` offers the
    /// fields). Answered while a cell runs when the kernel has subshells.
    pub async fn complete(&self, code: &str, cursor: usize) -> Result<Completions> {
        let kernel = self.active_kernel().await?;
        let reply = kernel.complete(code, cursor, HELP_TIMEOUT).await?;
        if reply.status != crate::kernel::messages::ReplyStatus::Ok {
            return Err(Error::gateway("the kernel could not complete this code"));
        }
        Ok(completions(reply))
    }

    /// The kernel's help on the name at `cursor` (code points) of `code`: signature and
    /// docstring; with `detail_level` 1, more (the source where there is one). What
    /// Shift+Tab shows in a notebook.
    pub async fn inspect(&self, code: &str, cursor: usize, detail_level: u8) -> Result<Inspection> {
        let kernel = self.active_kernel().await?;
        let reply = kernel
            .inspect(code, cursor, detail_level.min(1), HELP_TIMEOUT)
            .await?;
        let text = match reply.data.get("text/plain") {
            Some(serde_json::Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        Ok(Inspection {
            found: reply.found && !text.is_empty(),
            text,
        })
    }

    /// The active kernel, asked of the actor without queueing behind executions.
    pub(super) async fn active_kernel(&self) -> Result<KernelSession> {
        let (tx, rx) = oneshot::channel();
        self.send(Command::Kernel(tx))?;
        rx.await
            .map_err(|_| Error::NotRunning)?
            .ok_or(Error::NotRunning)
    }
}

/// A `complete_reply` as [`Completions`]: Jedi's typed entries when IPython gives them for the
/// same range as its matches, else the bare matches.
fn completions(reply: CompleteReply) -> Completions {
    let typed = reply
        .metadata
        .get("_jupyter_types_experimental")
        .cloned()
        .and_then(|t| serde_json::from_value::<Vec<Typed>>(t).ok())
        .filter(|t| {
            t.iter()
                .all(|t| t.start == reply.cursor_start && t.end == reply.cursor_end)
        });
    let items = match typed {
        Some(typed) => typed
            .into_iter()
            .map(|t| Completion {
                text: t.text,
                kind: t.r#type.filter(|k| !k.is_empty() && k != "<unknown>"),
                signature: t.signature.filter(|s| !s.is_empty()),
            })
            .collect(),
        None => reply
            .matches
            .into_iter()
            .map(|text| Completion {
                text,
                kind: None,
                signature: None,
            })
            .collect(),
    };
    Completions {
        start: reply.cursor_start,
        end: reply.cursor_end,
        items,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(json: serde_json::Value) -> CompleteReply {
        serde_json::from_value(json).expect("a complete_reply")
    }

    #[test]
    fn jedis_types_come_along_and_the_ui_sees_camel_case() {
        let c = completions(reply(serde_json::json!({
            "status": "ok", "matches": ["DataFrame", "date_range"], "cursor_start": 3, "cursor_end": 5,
            "metadata": {"_jupyter_types_experimental": [
                {"start": 3, "end": 5, "text": "DataFrame", "type": "class", "signature": "(data=None)"},
                {"start": 3, "end": 5, "text": "date_range", "type": "<unknown>", "signature": ""}
            ]}
        })));
        assert_eq!(
            serde_json::to_value(&c).expect("serializes"),
            serde_json::json!({"start": 3, "end": 5, "items": [
                {"text": "DataFrame", "kind": "class", "signature": "(data=None)"},
                {"text": "date_range"}
            ]}),
            "the shape ui/src/ipc.ts reads"
        );
    }

    #[test]
    fn bare_matches_without_types_or_with_types_for_another_range() {
        let c = completions(reply(serde_json::json!({
            "status": "ok", "matches": ["path"], "cursor_start": 3, "cursor_end": 5,
            "metadata": {"_jupyter_types_experimental": [
                {"start": 0, "end": 5, "text": "os.path", "type": "module"}
            ]}
        })));
        assert_eq!(c.items.len(), 1);
        assert_eq!(
            (c.items[0].text.as_str(), c.items[0].kind.as_deref()),
            ("path", None),
            "types for another range are not trusted to match: {c:?}"
        );
    }
}
