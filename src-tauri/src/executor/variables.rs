//! The kernel's variables and a data grid over its data frames, as a notebook's Variables
//! tab shows them: asked of `ipybox_variables` (`src-tauri/python/ipybox_variables.py`, which
//! every kernel imports when it starts) with a silent request that evaluates one expression
//! ([`KernelSession::evaluate`]): nothing shows in the notebook, the execution count does
//! not change. Sorting and filtering happen in the kernel, so a page of a frame of ten
//! million rows costs what a page of a small one does.
//!
//! Everything in the answers is text from kernel code: untrusted.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::CodeExecutor;
use crate::error::{Error, Result};
use crate::kernel::session::KernelSession;

/// How long the variables list waits for the kernel. The kernel lists within a time budget
/// of its own (a quarter of a second, then names and types only).
const VARIABLES_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a page of a frame waits: the first page of a new sort of millions of rows sorts
/// them all.
const PAGE_TIMEOUT: Duration = Duration::from_secs(60);

/// The module every ipybox kernel imports at start (see `executor::host`).
pub(super) const MODULE: &str = "ipybox_variables";

/// The Python source of [`MODULE`].
pub(super) const SOURCE: &str = include_str!("../../python/ipybox_variables.py");

/// The user's variables, by name (case-insensitive order).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct KernelVariables {
    /// The variables listed.
    pub variables: Vec<Variable>,
    /// How many more there are, past the list's limit.
    #[serde(default)]
    pub more: u64,
}

/// One variable of the kernel's user namespace. Names of IPython's own (`In`, `Out`, `_1`),
/// modules, and the generated tool API are not listed. Code of the user's own classes is
/// never called to describe a value (no `__repr__`, `__len__`, `__sizeof__`): such a value
/// shows its type only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Variable {
    /// The name.
    pub name: String,
    /// The type's name (`int`, `DataFrame`).
    #[serde(rename = "type")]
    pub type_name: String,
    /// The type's module, unless it is a builtin (`pandas.core.frame`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub module: Option<String>,
    /// Shape of an array, frame or series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub shape: Option<Vec<u64>>,
    /// Length of a string, bytes or container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub length: Option<u64>,
    /// Bytes held, where cheap to know (shallow for Python containers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub size: Option<u64>,
    /// A one-line, truncated repr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub repr: Option<String>,
    /// A frame the data grid opens: `pandas` or `polars`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub frame: Option<String>,
}

/// A page of a frame to ask for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FrameQuery {
    /// The frame's variable name.
    pub name: String,
    /// First row of the page (of the sorted, filtered rows).
    #[serde(default)]
    pub offset: u64,
    /// Rows in the page (at most 1000).
    #[serde(default = "default_limit")]
    pub limit: u64,
    /// Sort keys, most significant first.
    #[serde(default)]
    pub sort: Vec<SortKey>,
    /// Filters, all of which a row passes.
    #[serde(default)]
    pub filters: Vec<Filter>,
    /// Count each column's nulls (reads every row once; kept for later pages).
    #[serde(default)]
    pub nulls: bool,
}

fn default_limit() -> u64 {
    100
}

/// A sort key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SortKey {
    /// The column's position.
    pub column: usize,
    /// Ascending (missing values last either way).
    pub ascending: bool,
}

/// A filter on one column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Filter {
    /// The column's position.
    pub column: usize,
    /// What to compare.
    pub op: FilterOp,
    /// The value to compare with, as typed (converted to the column's type in the kernel).
    #[serde(default)]
    pub value: String,
}

/// How a [`Filter`] compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum FilterOp {
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// The text contains the value (no pattern).
    Contains,
    /// The text starts with the value.
    Startswith,
    /// The text ends with the value.
    Endswith,
    /// Missing.
    Null,
    /// Not missing.
    Notnull,
}

/// A page of a frame, sorted and filtered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FramePage {
    /// The frame's variable name.
    pub name: String,
    /// `pandas` or `polars`.
    pub kind: String,
    /// Rows of the frame.
    pub total_rows: u64,
    /// Rows that pass the filters.
    pub rows: u64,
    /// The page's first row among those.
    pub offset: u64,
    /// The columns.
    pub columns: Vec<FrameColumn>,
    /// The page's row labels.
    pub index: Vec<Option<String>>,
    /// The page's cells, row by row, as text; `None` is a missing value.
    pub cells: Vec<Vec<Option<String>>>,
    /// The pandas (or polars) expression for this sort and filter.
    pub code: String,
}

/// A column of a [`FramePage`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct FrameColumn {
    /// The label, as text.
    pub name: String,
    /// The dtype (`int64`, `str`, `datetime64[ns]`).
    #[serde(rename = "type")]
    pub type_name: String,
    /// Missing values in the whole frame; `None` until asked for ([`FrameQuery::nulls`]).
    pub nulls: Option<u64>,
}

/// What `ipybox_variables.page` answers.
#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum PageAnswer {
    Ok(FramePage),
    Error(String),
}

impl CodeExecutor {
    /// The kernel's user variables: what a notebook's Variables tab lists after each cell.
    /// One silent request that the notebook never shows; answered while a cell runs when
    /// the kernel has subshells.
    pub async fn kernel_variables(&self) -> Result<KernelVariables> {
        let kernel = self.active_kernel().await?;
        let text = kernel
            .evaluate(&format!("{}.listing()", module_expr()), VARIABLES_TIMEOUT)
            .await?;
        parse(&text)
    }

    /// A page of the data frame in variable `query.name`, sorted and filtered in the kernel.
    /// A name that is no frame, or a filter value that is not of its column's type, is an
    /// [`Error::Config`] saying so.
    pub async fn frame_page(&self, query: &FrameQuery) -> Result<FramePage> {
        let kernel = self.active_kernel().await?;
        page(&kernel, query).await
    }
}

async fn page(kernel: &KernelSession, query: &FrameQuery) -> Result<FramePage> {
    let request = serde_json::to_string(query).unwrap_or_default();
    // A JSON string is a Python string literal: the request reaches the kernel as data.
    let literal = serde_json::to_string(&request).unwrap_or_default();
    let text = kernel
        .evaluate(&format!("{}.page({literal})", module_expr()), PAGE_TIMEOUT)
        .await?;
    match parse::<PageAnswer>(&text)? {
        PageAnswer::Ok(page) => Ok(page),
        PageAnswer::Error(message) => Err(Error::config(message)),
    }
}

/// The expression for [`MODULE`], whatever names the user's code has taken.
fn module_expr() -> String {
    format!("__import__('sys').modules[{MODULE:?}]")
}

fn parse<T: for<'a> Deserialize<'a>>(text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| {
        Error::gateway(format!(
            "the kernel's answer about its variables was malformed ({e}); was `{MODULE}` replaced?"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variable_reaches_the_ui_with_what_is_known_of_it() {
        let listed: KernelVariables = serde_json::from_str(
            r#"{"variables": [{"name": "h", "type": "Hostile", "module": "__main__", "repr": "<__main__.Hostile object>"}], "more": 0}"#,
        )
        .expect("the shape ipybox_variables.listing answers");
        assert_eq!(
            serde_json::to_value(&listed).expect("serializes"),
            serde_json::json!({"variables": [{"name": "h", "type": "Hostile", "module": "__main__",
                "repr": "<__main__.Hostile object>"}], "more": 0}),
            "the shape ui/src/ipc.ts reads: nothing unknown is sent as null"
        );
    }

    #[test]
    fn the_ui_sees_type_and_camel_case() {
        let page: FramePage = serde_json::from_value(serde_json::json!({
            "name": "df", "kind": "pandas", "totalRows": 3, "rows": 1, "offset": 0,
            "columns": [{"name": "a", "type": "int64", "nulls": null}],
            "index": ["2"], "cells": [[null]], "code": "df[df['a'] > 1]"
        }))
        .expect("the shape ipybox_variables.page answers");
        assert_eq!(page.columns[0].type_name, "int64");
        assert_eq!(
            serde_json::to_value(FrameQuery {
                name: "df".into(),
                offset: 0,
                limit: 100,
                sort: vec![],
                filters: vec![Filter {
                    column: 0,
                    op: FilterOp::Notnull,
                    value: String::new()
                }],
                nulls: true,
            })
            .expect("serializes"),
            serde_json::json!({"name": "df", "offset": 0, "limit": 100, "sort": [],
                "filters": [{"column": 0, "op": "notnull", "value": ""}], "nulls": true}),
            "the request ipybox_variables.page reads"
        );
    }
}
