//! Commands of the approval panel and the agents' tabs: which of the last audited calls a
//! rule being written would have matched (shown beside the rule, so a person sees what it
//! allows before saving it), and ending an agent's session when its tab is closed.

use tauri::State;

use super::dto::DesktopError;
use super::session::Desktop;
use crate::audit::AuditEntry;
use crate::error::Error;
use crate::tools::Rule;
use crate::tools::rules::{Scope, rule_would_match};

/// How many of the last audited calls a rule is tried on.
const LAST: usize = 100;

/// The calls of the last 100 in the audit log that `rule` would have matched, oldest
/// first, as the log keeps them (the panel names each: when, which tool with what, who
/// asked, how it was decided then). A rule without a scope is taken as the app takes it:
/// for notebooks.
#[tauri::command]
pub async fn rule_matches(
    state: State<'_, Desktop>,
    rule: Rule,
) -> Result<Vec<AuditEntry>, DesktopError> {
    let log = state.audit_log()?;
    let (mut entries, _) = tauri::async_runtime::spawn_blocking(move || log.read())
        .await
        .map_err(|e| Error::config("reading the audit log").because(e))??;
    let last = entries.split_off(entries.len().saturating_sub(LAST));
    let matched = rule_would_match(&rule, &last, Scope::Notebook);
    Ok(last
        .into_iter()
        .enumerate()
        .filter(|(i, _)| matched.contains(i))
        .map(|(_, e)| e)
        .collect())
}

/// End an agent's session and its kernel (the window's tab close button; the window asks
/// the person first). `session` is the session's number as the `agent` events give it;
/// `false` when no such session runs.
#[tauri::command]
pub async fn end_agent_session(
    state: State<'_, Desktop>,
    session: String,
) -> Result<bool, DesktopError> {
    let serial: u64 = session.trim().parse().map_err(|_| {
        Error::config(format!(
            "\"{}\" is not an agent session's number",
            crate::display::escape(&session)
        ))
    })?;
    state.end_agent_session(serial).await
}
