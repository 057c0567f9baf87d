//! Which of the last audited calls a rule being written in the approval panel would have
//! matched: the panel shows them beside the rule, so a person sees what it allows before
//! saving it.

use tauri::State;

use super::dto::DesktopError;
use super::session::Desktop;
use crate::error::Error;
use crate::tools::Rule;
use crate::tools::rules::{Scope, rule_would_match};

/// How many of the last audited calls a rule is tried on.
const LAST: usize = 100;

/// The calls of the last 100 in the audit log that `rule` would have matched, as indices
/// into those 100 (oldest first). A rule without a scope is taken as the app takes it: for
/// notebooks.
#[tauri::command]
pub async fn rule_matches(
    state: State<'_, Desktop>,
    rule: Rule,
) -> Result<Vec<usize>, DesktopError> {
    let log = state.audit_log()?;
    let (entries, _) = tauri::async_runtime::spawn_blocking(move || log.read())
        .await
        .map_err(|e| Error::config("reading the audit log").because(e))??;
    let last = &entries[entries.len().saturating_sub(LAST)..];
    Ok(rule_would_match(&rule, last, Scope::Notebook))
}
