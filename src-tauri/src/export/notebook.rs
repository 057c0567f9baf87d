//! A notebook file as export reads it: the cells, their sources, attachments and outputs
//! ([nbformat 4](https://nbformat.readthedocs.io/en/latest/format_description.html)). Only
//! what an export shows is typed; anything else in the file is ignored, and an output or a
//! cell of a type this reader does not know is kept as [`Output::Unknown`] / skipped rather
//! than failing the whole file.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// A notebook that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum NotebookError {
    /// The text is not JSON, or not shaped like a notebook.
    #[error("this is not a notebook file (nbformat 4 JSON): {0}")]
    Malformed(#[source] serde_json::Error),
    /// A notebook of a format version export does not read.
    #[error(
        "this notebook is nbformat {0}; export reads nbformat 4 (open and save it in Jupyter to convert it)"
    )]
    Version(u64),
}

/// Text that nbformat stores either as one string or as a list of lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MultilineText(pub String);

impl<'de> Deserialize<'de> for MultilineText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            One(String),
            Lines(Vec<String>),
        }
        Ok(MultilineText(match Repr::deserialize(d)? {
            Repr::One(s) => s,
            Repr::Lines(lines) => lines.concat(),
        }))
    }
}

/// A MIME bundle: each value is text (one string or lines) or, for JSON types, any JSON.
pub type MimeBundle = BTreeMap<String, Value>;

/// The text of a bundle entry: a string, or lines joined; `None` for other JSON.
pub fn bundle_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str())
            .collect::<Option<Vec<_>>>()
            .map(|parts| parts.concat()),
        _ => None,
    }
}

/// One notebook.
#[derive(Debug, Clone, Deserialize)]
pub struct Notebook {
    /// The major format version (4).
    pub nbformat: u64,
    /// The cells, in order.
    #[serde(default)]
    pub cells: Vec<Cell>,
    /// The notebook's metadata (its language, for the script's header).
    #[serde(default)]
    pub metadata: Value,
}

impl Notebook {
    /// Reads a notebook file's text.
    pub fn parse(text: &str) -> Result<Self, NotebookError> {
        let notebook: Notebook = serde_json::from_str(text).map_err(NotebookError::Malformed)?;
        if notebook.nbformat != 4 {
            return Err(NotebookError::Version(notebook.nbformat));
        }
        Ok(notebook)
    }
}

/// One cell.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "cell_type", rename_all = "lowercase")]
pub enum Cell {
    /// Code and what running it showed.
    Code {
        source: MultilineText,
        #[serde(default)]
        execution_count: Option<u64>,
        #[serde(default)]
        outputs: Vec<Output>,
    },
    /// Markdown, with the images pasted into it.
    Markdown {
        source: MultilineText,
        #[serde(default)]
        attachments: BTreeMap<String, MimeBundle>,
    },
    /// Text passed through unchanged (`raw_mimetype` in its metadata says for what).
    Raw {
        source: MultilineText,
        #[serde(default)]
        metadata: Value,
    },
    /// A cell type nbformat 4 does not define.
    #[serde(other)]
    Unknown,
}

/// One output of a code cell.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "output_type", rename_all = "snake_case")]
pub enum Output {
    /// Text on stdout or stderr.
    Stream { name: String, text: MultilineText },
    /// A rich display (`display()`, a plot).
    DisplayData {
        #[serde(default)]
        data: MimeBundle,
    },
    /// The value of the cell's last expression.
    ExecuteResult {
        #[serde(default)]
        data: MimeBundle,
        #[serde(default)]
        execution_count: Option<u64>,
    },
    /// An exception and its traceback (ANSI colours included).
    Error {
        #[serde(default)]
        ename: String,
        #[serde(default)]
        evalue: String,
        #[serde(default)]
        traceback: Vec<String>,
    },
    /// An output type nbformat 4 does not define.
    #[serde(other)]
    Unknown,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_as_one_string_or_lines_read_the_same() {
        let nb = Notebook::parse(
            r##"{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
                {"cell_type": "code", "source": ["a = 1\n", "b = 2"], "metadata": {}, "outputs": [], "execution_count": null},
                {"cell_type": "markdown", "source": "# T", "metadata": {}},
                {"cell_type": "widget", "source": ""}
            ]}"##,
        )
        .expect("a notebook");
        assert!(
            matches!(&nb.cells[0], Cell::Code { source, .. } if source.0 == "a = 1\nb = 2"),
            "lines are joined as written"
        );
        assert!(
            matches!(&nb.cells[2], Cell::Unknown),
            "an unknown cell type is skipped, not fatal"
        );
    }

    #[test]
    fn not_a_notebook_says_so() {
        let err = Notebook::parse("{\"cells\": 3}").expect_err("not a notebook");
        assert!(err.to_string().contains("not a notebook file"), "{err}");
        let err = Notebook::parse(r#"{"nbformat": 3, "cells": []}"#).expect_err("old format");
        assert!(err.to_string().contains("nbformat 3"), "{err}");
    }
}
