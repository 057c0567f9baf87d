//! `ipybox audit`: the workspace's audit log, as a person reads it.

use std::io::Write;
use std::process::ExitCode;

use super::args::*;

pub(crate) fn audit(args: AuditArgs) -> anyhow::Result<ExitCode> {
    use ipybox::WorkspaceState;
    let workspace = match args.workspace {
        Some(ws) => ws,
        None => std::env::current_dir()?,
    };
    let log = WorkspaceState::of(&workspace)?.audit_log();
    let (mut entries, skipped) = log.read()?;
    if let Some(n) = args.last {
        entries.drain(..entries.len().saturating_sub(n));
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        for entry in &entries {
            // The same JSON, with what could act on a terminal written as `\uXXXX`.
            let line = serde_json::to_string(entry)?;
            writeln!(out, "{}", ipybox::text::escape(&line))?;
        }
    } else if entries.is_empty() {
        eprintln!(
            "No tool calls recorded for {} yet (the log: {}).",
            workspace.display(),
            log.path().display()
        );
    } else {
        // The questions servers asked during these calls, in time order among them.
        let since = entries
            .first()
            .map_or(0, |e| e.time.saturating_sub(e.duration_ms));
        let mut lines: Vec<(u64, String)> = entries
            .iter()
            .map(|e| (e.time, ipybox::describe_audit_entry(e)))
            .collect();
        for question in log.read_elicitations()?.iter().filter(|q| q.time >= since) {
            lines.push((question.time, ipybox::describe_elicitation(question)));
        }
        lines.sort_by_key(|(time, _)| *time);
        for (_, line) in &lines {
            writeln!(out, "{line}")?;
        }
    }
    if skipped > 0 {
        eprintln!(
            "ipybox: {skipped} line(s) of {} are not entries and were skipped",
            log.path().display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
