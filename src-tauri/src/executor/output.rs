//! What an execution shows, as a notebook renders it: Jupyter's output kinds, in the order the
//! kernel sent them ([IOPub messages](https://jupyter-client.readthedocs.io/en/stable/messaging.html#messages-on-the-iopub-pub-sub-channel)).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

pub use crate::kernel::messages::StreamName;
use crate::kernel::messages::{Content, DisplayData};
use crate::kernel::output::strip_ansi;

/// MIME type → data: text (`text/plain`, `text/html`, `text/markdown`, `image/svg+xml`, …),
/// base64 for binary types (`image/png`, `image/jpeg`), JSON for `application/json`.
pub type MimeBundle = BTreeMap<String, Value>;

/// One output of an execution. Serialized with a `type` tag (`stream`, `display_data`, …)
/// for a UI.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Output {
    /// Text printed on stdout or stderr.
    Stream {
        /// Which stream.
        name: StreamName,
        /// The text (a part of a line, or many lines).
        text: String,
    },
    /// `display(...)`: a MIME bundle. One with a `display_id` can be updated later.
    DisplayData {
        /// The representations.
        data: MimeBundle,
        /// Per-MIME metadata (image sizes, …).
        metadata: Value,
        /// Set by `display(..., display_id=True)`.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(test, ts(optional))]
        display_id: Option<String>,
    },
    /// The value of the cell's last expression.
    ExecuteResult {
        /// The counter of the execution.
        execution_count: Option<i64>,
        /// The representations.
        data: MimeBundle,
        /// Per-MIME metadata.
        metadata: Value,
    },
    /// Replace the contents of every output shown with this `display_id`.
    UpdateDisplayData {
        /// Which display.
        display_id: String,
        /// The new representations.
        data: MimeBundle,
        /// Per-MIME metadata.
        metadata: Value,
    },
    /// Clear the cell's outputs; with `wait`, only when the next output arrives (no flicker).
    ClearOutput {
        /// Wait for the next output.
        wait: bool,
    },
    /// The exception the code raised.
    Error {
        /// Exception class name.
        ename: String,
        /// Exception value.
        evalue: String,
        /// Traceback lines as the kernel sent them, ANSI colours included.
        traceback: Vec<String>,
    },
}

/// Image types a terminal does not print (ipybox saves them and lists the files).
const IMAGE_TYPES: [&str; 3] = ["image/png", "image/jpeg", "image/svg+xml"];

impl Output {
    /// The output of a kernel message, if it is one.
    pub(crate) fn from_content(content: &Content) -> Option<Output> {
        let bundle = |d: &DisplayData| (d.data.clone(), d.metadata.clone());
        Some(match content {
            Content::Stream(s) => Output::Stream {
                name: s.name,
                text: s.text.clone(),
            },
            Content::DisplayData(d) => {
                let (data, metadata) = bundle(d);
                Output::DisplayData {
                    data,
                    metadata,
                    display_id: d.display_id().map(str::to_owned),
                }
            }
            Content::ExecuteResult(d) => {
                let (data, metadata) = bundle(d);
                Output::ExecuteResult {
                    execution_count: d.execution_count,
                    data,
                    metadata,
                }
            }
            Content::UpdateDisplayData(d) => {
                let (data, metadata) = bundle(d);
                Output::UpdateDisplayData {
                    display_id: d.display_id()?.to_owned(),
                    data,
                    metadata,
                }
            }
            Content::ClearOutput(c) => Output::ClearOutput { wait: c.wait },
            Content::Error(e) => Output::Error {
                ename: e.ename.clone(),
                evalue: e.evalue.clone(),
                traceback: e.traceback.clone(),
            },
            _ => return None,
        })
    }

    /// What a terminal prints for it: stream text, the `text/plain` of a display or result
    /// that has no image (an image is saved as a file instead, not described as
    /// `<Figure size 640x480 with 1 Axes>`), nothing for the rest. Errors are reported
    /// with the result.
    pub fn terminal_text(&self) -> Option<String> {
        let plain = |data: &MimeBundle| {
            if IMAGE_TYPES.iter().any(|m| data.contains_key(*m)) {
                return None;
            }
            let mut text = match data.get("text/plain")? {
                Value::String(s) => s.clone(),
                Value::Array(lines) => lines.iter().filter_map(Value::as_str).collect(),
                _ => return None,
            };
            if !text.ends_with('\n') {
                text.push('\n');
            }
            Some(text)
        };
        match self {
            Output::Stream { text, .. } => Some(text.clone()),
            Output::DisplayData { data, .. } | Output::ExecuteResult { data, .. } => plain(data),
            Output::UpdateDisplayData { .. } | Output::ClearOutput { .. } => None,
            Output::Error { traceback, .. } => Some(
                traceback
                    .iter()
                    .map(|l| strip_ansi(l))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn display(json: &str) -> Output {
        let d: DisplayData = serde_json::from_str(json).expect("valid");
        Output::from_content(&Content::DisplayData(d)).expect("an output")
    }

    #[test]
    fn bundles_keep_every_mime_type_and_images_print_no_text() {
        let plot = display(
            r#"{"data": {"image/png": "iVBOR", "text/plain": "<Figure size 640x480 with 1 Axes>"}, "metadata": {"image/png": {"width": 640}}}"#,
        );
        assert_eq!(plot.terminal_text(), None, "a plot prints no <Figure …>");
        let json = serde_json::to_value(&plot).expect("serializes");
        assert_eq!(json["type"], "display_data");
        assert_eq!(json["metadata"]["image/png"]["width"], 640);
        let table = display(
            r#"{"data": {"text/html": "<table></table>", "text/plain": "   a\n0  1"}, "transient": {"display_id": "d1"}}"#,
        );
        assert_eq!(table.terminal_text().as_deref(), Some("   a\n0  1\n"));
        match table {
            Output::DisplayData {
                data, display_id, ..
            } => {
                assert!(data.contains_key("text/html"));
                assert_eq!(display_id.as_deref(), Some("d1"));
            }
            other => panic!("{other:?}"),
        }
    }
}
