//! Learning from blocks in the window: a cell the sandbox blocked offers "Allow writing
//! /tmp/…"; choosing it lands here. The change is added to the policy the kernel runs under,
//! checked to allow what was blocked, shown as a difference in a native dialog (a decision
//! that weakens the sandbox is never a click in the web view), then saved as the workspace's
//! policy, accepted as the person saw it, and put in force: the kernel restarts under it.

use std::path::Path;

use tauri::{AppHandle, Runtime, State};

use super::confirm::Question;
use super::dto::{Choice, PolicySource};
use super::dto::{DesktopError, SandboxState};
use super::policy::{read, save};
use super::policy_commands::apply;
use super::session::Desktop;
use crate::audit::WorkspaceState;
use crate::error::{Error, Result};
use crate::sandbox::access::Access;
use crate::sandbox::policy::{Review, WORKSPACE_POLICY};
use crate::sandbox::{block, shipped_profiles};

/// The policy text a change is made to: the shipped profile the kernel runs under, else the
/// workspace's own (the default while it has none).
fn base_text(workspace: &Path, choice: &Choice) -> Result<String> {
    if let (true, PolicySource::Profile { name }) = (choice.sandbox, &choice.policy)
        && let Some(profile) = shipped_profiles().into_iter().find(|p| p.name == name)
    {
        return Ok(profile.policy.to_json());
    }
    Ok(read(workspace, &PolicySource::Workspace)?.text)
}

/// `base` with `entry` allowed for `access`, checked to allow `path`.
pub fn changed_text(
    workspace: &Path,
    base: &str,
    access: Access,
    entry: &str,
    path: &str,
) -> Result<String> {
    let entry = entry.trim();
    if entry.is_empty() {
        return Err(Error::config(match access {
            Access::Connect => "say which domain to allow",
            _ => "say which folder to allow",
        }));
    }
    let policy = crate::sandbox::policy::parse(base, "in force")?;
    let changed = block::allow(policy, access, entry);
    let mut text = serde_json::to_string_pretty(&changed)
        .map_err(|e| Error::config("the changed policy").because(e))?;
    text.push('\n');
    // The offer came from the cell's own error, and the field is editable: a place no grant
    // may open is refused here whatever was typed. The Sandbox tab still lets a person write
    // such an entry, flagged.
    if access != Access::Connect
        && let Some(danger) = crate::sandbox::access::way_out_text(&text, workspace, access, entry)?
    {
        return Err(Error::config(format!(
            "{} Change the policy in the Sandbox tab if you mean it",
            danger.refusal()
        )));
    }
    let verdicts = match access {
        Access::Connect => vec![crate::sandbox::refusals::check_proxy_text(
            &text, workspace, path,
        )?],
        _ => crate::sandbox::access::check_text(&text, workspace, path)?,
    };
    // Still a policy srt runs: it refuses `*` or `*.com` in the allow list.
    if access == Access::Connect
        && let Some(p) = super::policy::check_text(&text, None)
            .iter()
            .find(|p| p.severity == crate::sandbox::Severity::Error)
    {
        return Err(Error::config(format!("allowing {entry}: {}", p.message)));
    }
    if let Some(v) = verdicts.iter().find(|v| v.access == access && !v.allowed) {
        return Err(Error::config(format!(
            "allowing {entry} would not allow {path}: {} ({}). Change the policy in the Sandbox tab instead",
            v.rule.as_deref().unwrap_or("no rule"),
            v.reason
        )));
    }
    Ok(text)
}

/// What the person is shown: the change against what they last accepted (or the policy in
/// force), unchanged lines left out.
fn shown_diff(home: &Path, workspace: &Path, base: &str, new: &str) -> String {
    let old = match crate::sandbox::policy::review(home, workspace) {
        Ok(Review::Changed {
            accepted: Some(old),
            ..
        }) => old,
        _ => base.to_owned(),
    };
    changed_lines(&old, new)
}

/// The lines of `new` that differ from `old`, both laid out alike first: a file written in
/// another layout (one-space indents, one line) would otherwise show every line as changed
/// and bury the one entry that is.
fn changed_lines(old: &str, new: &str) -> String {
    let laid_out = |text: &str| match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => serde_json::to_string_pretty(&v).map_or_else(|_| text.to_owned(), |t| t + "\n"),
        Err(_) => text.to_owned(),
    };
    crate::sandbox::policy::diff(&laid_out(old), &laid_out(new))
        .lines()
        .filter(|l| !l.starts_with("  "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Allow what a cell was blocked doing: `entry` (the folder, as the person edited it) for
/// `access`, checked to cover the blocked `path`; asked natively, saved, put in force.
pub async fn allow<R: Runtime>(
    desktop: &Desktop,
    app: &AppHandle<R>,
    access: Access,
    entry: &str,
    path: &str,
) -> std::result::Result<SandboxState, DesktopError> {
    let workspace = desktop.workspace()?;
    let state = WorkspaceState::of(&workspace)?;
    let home = crate::home::ipybox_home()?;
    let choice = Choice::load(state.dir());
    let base = base_text(&workspace, &choice)?;
    let text = changed_text(&workspace, &base, access, entry, path)?;
    let entry = entry.trim();
    let (verb, what) = match access {
        Access::Write => ("writing", "create, change and delete files in"),
        Access::Read => ("reading", "read what is in"),
        Access::Connect => (
            "connecting to",
            "send and receive anything (your data included) through the sandbox's proxy to",
        ),
    };
    let file = workspace.join(WORKSPACE_POLICY);
    let question = Question {
        title: format!("Allow {verb} {}?", super::confirm::plain(entry)),
        message: format!(
            "Code in the sandbox of {} will be able to {what} {}, including code an agent runs here.\n\nThe policy {} gets this change (- before, + after), and the kernel restarts under it: its variables are lost.",
            super::confirm::plain(&workspace.display().to_string()),
            super::confirm::plain(entry),
            super::confirm::plain(&file.display().to_string()),
        ),
        detail: shown_diff(&home, &workspace, &base, &text),
        warnings: Vec::new(),
        yes: match access {
            Access::Connect => "Allow connecting".into(),
            _ => format!("Allow {verb}"),
        },
        no: "Keep it blocked".into(),
    };
    if !super::confirm::confirm(app, question).await {
        return Err(Error::config("Not changed: you kept it blocked").into());
    }
    save(&workspace, &text)?;
    // What was shown is what is accepted.
    crate::sandbox::policy::accept(&home, &workspace, &text)?;
    let choice = Choice {
        sandbox: true,
        policy: PolicySource::Workspace,
    };
    apply(desktop, app, choice).await
}

/// "Allow writing /tmp/…" under a blocked cell: `access` is `read`, `write` or `connect`
/// (a domain the sandbox's proxy refused).
#[tauri::command]
pub async fn allow_blocked<R: Runtime>(
    app: AppHandle<R>,
    desktop: State<'_, Desktop>,
    access: String,
    entry: String,
    path: String,
) -> std::result::Result<SandboxState, DesktopError> {
    let access = match access.as_str() {
        "write" => Access::Write,
        "read" => Access::Read,
        "connect" => Access::Connect,
        other => {
            return Err(
                Error::config(format!("cannot allow {other:?}: read, write or connect")).into(),
            );
        }
    };
    allow(&desktop, &app, access, &entry, &path).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_change_is_one_entry_and_must_allow_what_was_blocked() {
        let ws = tempfile::tempdir().expect("tempdir");
        let ws = std::fs::canonicalize(ws.path()).expect("canonical");
        let out = tempfile::tempdir().expect("tempdir");
        let out = std::fs::canonicalize(out.path()).expect("canonical");
        let base = crate::sandbox::policy::DEFAULT_KERNEL_POLICY;
        let file = out.join("report.csv").display().to_string();
        let text = changed_text(&ws, base, Access::Write, &out.display().to_string(), &file)
            .expect("a change");
        let mut expected: serde_json::Value = serde_json::from_str(base).expect("json");
        expected["filesystem"]["allowWrite"]
            .as_array_mut()
            .expect("a list")
            .push(out.display().to_string().into());
        let got: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert_eq!(
            got, expected,
            "the policy gains that one entry, nothing else"
        );
        let diff = crate::sandbox::policy::diff(base, &text);
        let added = diff.lines().filter(|l| l.starts_with("+ ")).count();
        let removed = diff.lines().filter(|l| l.starts_with("- ")).count();
        assert_eq!(
            (added, removed),
            (2, 1),
            "the shown change is the new entry and the comma before it:\n{diff}"
        );

        let elsewhere = ws.join("sub").display().to_string();
        let refused = changed_text(&ws, base, Access::Write, &elsewhere, &file);
        assert!(
            refused.is_err_and(|e| e.to_string().contains("would not allow")),
            "an edited entry that does not cover the blocked path is refused"
        );
        assert!(changed_text(&ws, base, Access::Write, "  ", &file).is_err());
    }

    /// The offer's field is editable, and the path came from the cell: whatever was typed,
    /// a place no grant may open is refused, saying why.
    #[test]
    fn an_entry_that_opens_a_way_out_is_refused_however_it_was_typed() {
        let ws = tempfile::tempdir().expect("tempdir");
        let ws = std::fs::canonicalize(ws.path()).expect("canonical");
        let base = crate::sandbox::policy::DEFAULT_KERNEL_POLICY;
        let home = dirs::home_dir().expect("a home");
        let data = crate::home::ipybox_home().expect("ipybox's data directory");
        let autostart = home.join(".config/autostart");
        let desktop_file = autostart.join("chart-export.desktop").display().to_string();
        for (access, entry, path) in [
            (
                Access::Write,
                autostart.display().to_string(),
                desktop_file.clone(),
            ),
            (
                Access::Write,
                "~/.config/autostart".into(),
                desktop_file.clone(),
            ),
            (Access::Write, "~/.config".into(), desktop_file.clone()),
            (Access::Write, "~/.config/**".into(), desktop_file.clone()),
            (
                Access::Write,
                "~".into(),
                home.join(".bashrc").display().to_string(),
            ),
            (
                Access::Write,
                data.join("venv/lib").display().to_string(),
                data.join("venv/lib/python3.12/site-packages/x.pth")
                    .display()
                    .to_string(),
            ),
            (
                Access::Read,
                "~/.ssh".into(),
                home.join(".ssh/id_ed25519").display().to_string(),
            ),
        ] {
            let refused = changed_text(&ws, base, access, &entry, &path);
            assert!(
                refused.as_ref().is_err_and(|e| e
                    .to_string()
                    .contains("ipybox does not offer to open this place")),
                "{access:?} {entry}: {refused:?}"
            );
        }
    }

    #[test]
    fn the_shown_change_is_the_entry_whatever_the_file_s_layout() {
        let ws = tempfile::tempdir().expect("tempdir");
        let ws = std::fs::canonicalize(ws.path()).expect("canonical");
        let compact = r#"{"filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": []}, "network": {"allowedDomains": [], "deniedDomains": []}}"#;
        let text = changed_text(&ws, compact, Access::Write, "/srv/out", "/srv/out/a.csv")
            .expect("a change");
        let shown = changed_lines(compact, &text);
        let lines: Vec<String> = shown
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(
            lines,
            ["- \".\"", "+ \".\",", "+ \"/srv/out\""],
            "only the entry and the comma before it, not the whole file laid out anew"
        );
    }

    #[test]
    fn a_refused_domain_is_allowed_by_its_exact_entry_and_nothing_broader() {
        let ws = tempfile::tempdir().expect("tempdir");
        let ws = std::fs::canonicalize(ws.path()).expect("canonical");
        let base = r#"{"filesystem": {"allowWrite": ["."]}, "network": {"allowedDomains": [], "deniedDomains": ["evil.example"]}}"#;
        let text = changed_text(
            &ws,
            base,
            Access::Connect,
            "localhost:8000",
            "localhost:8000",
        )
        .expect("a change");
        let got: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert_eq!(
            got["network"]["allowedDomains"],
            serde_json::json!(["localhost:8000"]),
            "exactly that entry"
        );
        let other_port = changed_text(
            &ws,
            base,
            Access::Connect,
            "localhost:9000",
            "localhost:8000",
        );
        assert!(
            other_port.is_err_and(|e| e.to_string().contains("would not allow")),
            "an edited entry that does not let the refused request through is refused"
        );
        let wide = changed_text(&ws, base, Access::Connect, "*", "localhost:8000");
        assert!(
            wide.is_err(),
            "srt refuses `*`, so the change is refused here"
        );
        let denied = changed_text(&ws, base, Access::Connect, "evil.example", "evil.example");
        assert!(
            denied.is_err_and(|e| e.to_string().contains("deniedDomains")),
            "a denied domain stays denied: the allow list cannot help"
        );
    }
}
