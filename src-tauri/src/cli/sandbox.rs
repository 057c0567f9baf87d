//! `ipybox sandbox accept`: a workspace's policy shown and accepted at the terminal.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::terminal::FRESH_LINE;
use anyhow::{Context, bail};

/// `ipybox sandbox accept`: the policy (or what changed in it) on the terminal, then the
/// person's answer.
pub(crate) fn accept_policy(workspace: Option<PathBuf>, yes: bool) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    let workspace = match workspace {
        Some(ws) => ws,
        None => std::env::current_dir()?,
    };
    let workspace = std::fs::canonicalize(&workspace)
        .with_context(|| format!("the workspace {}", workspace.display()))?;
    let home = ipybox::setup::ipybox_home()?;
    let file = workspace.join(ipybox::WORKSPACE_POLICY);
    let (accepted, current) = match ipybox::review_workspace_policy(&home, &workspace)? {
        ipybox::PolicyReview::Accepted(_) => {
            println!("{} is accepted as it is; nothing to do.", file.display());
            return Ok(ExitCode::SUCCESS);
        }
        ipybox::PolicyReview::Changed { accepted, current } => (accepted, current),
    };
    let shown = match &accepted {
        Some(old) => format!(
            "{} changed since it was last accepted (- before, + now):\n\n{}",
            file.display(),
            ipybox::policy_diff(old, &current)
        ),
        None => format!(
            "{} has not been accepted on this machine:\n\n{}",
            file.display(),
            serde_json::from_str::<serde_json::Value>(&current)
                .ok()
                .and_then(|v| serde_json::to_string_pretty(&v).ok())
                .unwrap_or_else(|| current.clone())
        ),
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", ipybox::text::escape_lines(&shown))?;
    // The places no grant may open, as the Sandbox tab flags them; then the grants that
    // matter, as it warns of them.
    let dangers = ipybox::policy_ways_out(&current, &workspace).unwrap_or_default();
    for d in &dangers {
        writeln!(
            out,
            "danger: {} [{}]",
            ipybox::text::escape(&d.message),
            ipybox::text::escape(&d.field)
        )?;
    }
    let warnings = ipybox::SandboxPolicy::from_json(&current)
        .map(|p| p.validate())
        .unwrap_or_default();
    for w in warnings
        .iter()
        .filter(|w| w.severity == ipybox::Severity::Warning)
    {
        writeln!(
            out,
            "warning: {} [{}]",
            ipybox::text::escape(&w.message),
            ipybox::text::escape(&w.field)
        )?;
    }
    if !yes {
        if !std::io::stdin().is_terminal() {
            bail!("not accepted: answer on a terminal, or pass --yes to accept it as printed");
        }
        write!(
            out,
            "{}Sandboxed code on this workspace will run under this policy. Accept it? [y/N] ",
            FRESH_LINE
        )?;
        out.flush()?;
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            println!("Not accepted.");
            return Ok(ExitCode::from(1));
        }
    }
    // What was shown is what is accepted: a file changed meanwhile is not.
    ipybox::accept_workspace_policy(&home, &workspace, &current)?;
    println!("Accepted.");
    Ok(ExitCode::SUCCESS)
}
