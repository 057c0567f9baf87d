//! The Sandbox tab: which policy a workspace's kernel runs under, the editor's reading,
//! checking and saving of the workspace's own policy (`sandbox-config.json` at its root),
//! Apply (a new session under the new policy, once srt has accepted it), and a watch on the
//! policy file so an edit made elsewhere shows up in the editor.
//!
//! Whether the workspace is sandboxed and under which policy is the app's choice, kept in
//! ipybox's data directory for the workspace (`desktop.json`), never in the workspace:
//! kernel code can write the workspace, and must not choose the next session's sandbox. The
//! workspace's policy file itself is read-only inside the sandbox
//! ([`prepare_session`](crate::sandbox::prepare_session)). A `--sandbox` or
//! `--sandbox-config` given on the command line wins for that run.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tauri::{AppHandle, Emitter, Runtime};

use super::confirm::Question;
use super::dto::{
    Choice, PolicyDocument, PolicyFileChanged, PolicySource, ProfileInfo, SandboxState,
};
use crate::audit::WorkspaceState;
use crate::error::{Error, Result};
use crate::sandbox::{PolicyProblem, SandboxOptions, SandboxPolicy, Severity, shipped_profiles};

use crate::sandbox::policy::{Review, WORKSPACE_POLICY};

impl Choice {
    fn path(state_dir: &Path) -> PathBuf {
        state_dir.join("desktop.json")
    }

    /// As kept in `state_dir`; the defaults (no sandbox) when nothing or something
    /// unreadable is.
    pub fn load(state_dir: &Path) -> Choice {
        std::fs::read(Self::path(state_dir))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Keep it in `state`'s directory, atomically, readable by this user only.
    pub fn save(&self, state: &WorkspaceState) -> Result<()> {
        state.create()?;
        let text = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::config("the workspace's sandbox choice").because(e))?;
        crate::fsutil::write_private(&Self::path(state.dir()), &text)
    }

    /// How to sandbox the kernel on `workspace`, or `None` when the choice is no sandbox.
    /// A shipped profile is written to the workspace's directory in ipybox's data directory
    /// for srt to read; the workspace's policy file is created (as the default policy) when
    /// it is missing.
    pub fn options(
        &self,
        workspace: &Path,
        state: &WorkspaceState,
    ) -> Result<Option<SandboxOptions>> {
        if !self.sandbox {
            return Ok(None);
        }
        let policy = match &self.policy {
            PolicySource::Workspace => Some(
                crate::sandbox::policy::workspace_policy(&crate::home::ipybox_home()?, workspace)?
                    .0,
            ),
            PolicySource::Profile { name } => {
                let profile = shipped_profiles()
                    .into_iter()
                    .find(|p| p.name == name)
                    .ok_or_else(|| {
                        Error::config(format!("ipybox ships no sandbox profile named {name:?}"))
                    })?;
                let dir = state.dir().join("profiles");
                crate::fsutil::create_private_dir(&dir)?;
                let file = dir.join(format!("{}.json", profile.name));
                crate::fsutil::write_private(&file, profile.policy.to_json().as_bytes())?;
                Some(file)
            }
        };
        Ok(Some(SandboxOptions { policy, srt: None }))
    }
}

/// The sandbox options for a session on `workspace`: the command line's when it gave any,
/// else the workspace's choice. A choice that cannot be followed (an unknown profile) runs
/// under ipybox's default policy, never unsandboxed.
pub fn sandbox_for(
    launch: Option<&SandboxOptions>,
    workspace: &Path,
    state: Option<&WorkspaceState>,
) -> Option<SandboxOptions> {
    if let Some(launch) = launch {
        return Some(launch.clone());
    }
    let state = state?;
    let choice = Choice::load(state.dir());
    choice.options(workspace, state).unwrap_or_else(|e| {
        tracing::error!("{e}; the kernel runs under ipybox's default policy");
        Some(SandboxOptions::default())
    })
}

/// The sandbox for agents' kernels on `workspace`, whose notebook kernel runs under
/// `notebook` (`None`: not sandboxed): the notebook's when it has one; else, when the
/// sandbox works on this computer (srt and the tools it needs are installed), the
/// workspace's policy — an agent's code is sandboxed by default even where the person runs
/// their own cells unsandboxed. `None` only when the sandbox cannot run here (the window and
/// the "Serve agents?" question then say plainly what the agents' code can do).
pub fn agents_sandbox(
    notebook: Option<&SandboxOptions>,
    workspace: &Path,
    state: Option<&WorkspaceState>,
) -> Option<SandboxOptions> {
    if let Some(notebook) = notebook {
        return Some(notebook.clone());
    }
    let home = crate::home::ipybox_home().ok()?;
    let works =
        crate::sandbox::locate_srt(None, &home).and_then(|srt| crate::sandbox::check_tools(&srt));
    if let Err(e) = works {
        tracing::info!("agents' kernels are not sandboxed: {e}");
        return None;
    }
    let choice = Choice {
        sandbox: true,
        policy: state
            .map(|s| Choice::load(s.dir()).policy)
            .unwrap_or_default(),
    };
    Some(match state.map(|s| choice.options(workspace, s)) {
        Some(Ok(Some(options))) => options,
        Some(Err(e)) => {
            tracing::warn!("{e}; agents' kernels run under ipybox's default policy");
            SandboxOptions::default()
        }
        _ => SandboxOptions::default(),
    })
}

/// A policy's words for the status bar: the workspace's file, a shipped profile, the
/// default, or a file named on the command line.
pub fn policy_label(options: &SandboxOptions, workspace: &Path, state: Option<&Path>) -> String {
    match &options.policy {
        None => "kernel (ipybox's default)".to_owned(),
        Some(p) if p == &workspace.join(WORKSPACE_POLICY) => WORKSPACE_POLICY.to_owned(),
        Some(p) if state.is_some_and(|s| p.starts_with(s.join("profiles"))) => p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        Some(p) => p.display().to_string(),
    }
}

/// Every problem of a policy's text: one for text that is not a policy at all (field
/// `""`), else [`SandboxPolicy::validate`]'s, and, for the policy of `workspace`, the
/// entries that open a place no grant may open (a way out of the sandbox, a secret).
pub fn check_text(text: &str, workspace: Option<&Path>) -> Vec<PolicyProblem> {
    match SandboxPolicy::from_json(text) {
        Ok(policy) => {
            let mut problems = policy.validate();
            if let Some(workspace) = workspace {
                problems.extend(ways_out(text, workspace));
            }
            problems
        }
        Err(e) => vec![PolicyProblem {
            field: String::new(),
            message: e.to_string(),
            severity: Severity::Error,
        }],
    }
}

/// The entries of `text` that open a place no grant may open, for the policy of `workspace`;
/// none when that cannot be told (no home directory).
fn ways_out(text: &str, workspace: &Path) -> Vec<PolicyProblem> {
    crate::sandbox::access::ways_out_text(text, workspace).unwrap_or_else(|e| {
        tracing::debug!(error = %e, "the policy's ways out could not be checked");
        Vec::new()
    })
}

/// A policy as the editor opens it.
pub fn read(workspace: &Path, source: &PolicySource) -> Result<PolicyDocument> {
    let (text, path, exists, read_only) = match source {
        PolicySource::Workspace => {
            let file = workspace.join(WORKSPACE_POLICY);
            // None too for the empty placeholder a running sandbox keeps at the name.
            match crate::sandbox::policy::read_workspace_policy(workspace)? {
                Some(text) => (text, Some(file), true, false),
                None => (
                    crate::sandbox::policy::DEFAULT_KERNEL_POLICY.to_owned(),
                    Some(file),
                    false,
                    false,
                ),
            }
        }
        PolicySource::Profile { name } => {
            let profile = shipped_profiles()
                .into_iter()
                .find(|p| p.name == name)
                .ok_or_else(|| Error::config(format!("ipybox ships no profile named {name:?}")))?;
            (profile.policy.to_json(), None, true, true)
        }
    };
    Ok(PolicyDocument {
        source: source.clone(),
        problems: check_text(&text, Some(workspace)),
        text,
        path: path.map(|p| p.display().to_string()),
        exists,
        read_only,
    })
}

/// Save `text` as the workspace's policy, atomically. A policy with errors is not saved
/// (the file keeps what it had); warnings do not stop it.
pub fn save(workspace: &Path, text: &str) -> Result<PolicyDocument> {
    let problems = check_text(text, Some(workspace));
    if let Some(p) = problems.iter().find(|p| p.severity == Severity::Error) {
        let at = if p.field.is_empty() {
            String::new()
        } else {
            format!(" ({})", p.field)
        };
        return Err(Error::config(format!(
            "the policy was not saved: {}{at}",
            p.message
        )));
    }
    let file = workspace.join(WORKSPACE_POLICY);
    crate::fsutil::save_atomic(&file, text.as_bytes())?;
    read(workspace, &PolicySource::Workspace)
}

/// What the tab shows about the sandbox of the session on `workspace`.
pub fn state_of(
    workspace: &Path,
    launch: Option<&SandboxOptions>,
    running: Option<&SandboxOptions>,
    remote: Option<String>,
) -> Result<SandboxState> {
    let state = WorkspaceState::of(workspace)?;
    Ok(SandboxState {
        workspace_policy: workspace.join(WORKSPACE_POLICY).display().to_string(),
        workspace_policy_exists: crate::sandbox::policy::read_workspace_policy(workspace)
            .is_ok_and(|t| t.is_some()),
        profiles: shipped_profiles()
            .into_iter()
            .map(|p| ProfileInfo {
                name: p.name.to_owned(),
                purpose: p.purpose.to_owned(),
            })
            .collect(),
        choice: Choice::load(state.dir()),
        running: running.map(|o| policy_label(o, workspace, Some(state.dir()))),
        command_line: launch.map(|o| policy_label(o, workspace, None)),
        remote,
    })
}

/// The workspace's policy as it is now, when `options` run under it and a person has not
/// accepted it (never, or not since it changed).
pub fn to_review(options: &SandboxOptions, workspace: &Path) -> Option<Review> {
    if options.policy.as_deref() != Some(workspace.join(WORKSPACE_POLICY).as_path()) {
        return None;
    }
    let home = crate::home::ipybox_home().ok()?;
    match crate::sandbox::policy::review(&home, workspace) {
        Ok(Review::Accepted(_)) => None,
        Ok(review) => Some(review),
        // A link or an unreadable file: the sandbox refuses it with the reason when it starts.
        Err(_) => None,
    }
}

/// Show the person the workspace's policy (what changed since they last accepted it) in a
/// native dialog; accepted, it is recorded as theirs. Declined, an error saying so.
pub async fn ask_to_accept<R: Runtime>(
    app: &AppHandle<R>,
    workspace: &Path,
    review: Review,
) -> Result<()> {
    let Review::Changed { accepted, current } = review else {
        return Ok(());
    };
    let file = workspace.join(WORKSPACE_POLICY);
    let (what, shown) = match &accepted {
        Some(old) => (
            "changed since you last accepted it (- before, + now; unchanged lines left out)",
            crate::sandbox::policy::diff(old, &current)
                .lines()
                .filter(|l| !l.starts_with("  "))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        None => (
            "has not been accepted on this computer yet",
            current.clone(),
        ),
    };
    let question = Question {
        title: "Use this sandbox policy?".into(),
        message: format!(
            "The sandbox policy {} {what}. It decides what code in the sandbox may read, write and reach; anyone who could write the workspace could have written it.{}",
            super::confirm::plain(&file.display().to_string()),
            dangers_named(&current, workspace),
        ),
        detail: shown,
        warnings: Vec::new(),
        yes: "Use this policy".into(),
        no: "Don't use it".into(),
    };
    if !super::confirm::confirm(app, question).await {
        return Err(Error::sandbox(format!(
            "the sandbox policy {} was not accepted, so no kernel runs under it. Choose another policy in the Sandbox tab, or Apply to review it again",
            file.display()
        )));
    }
    let home = crate::home::ipybox_home()?;
    // What was shown is what is accepted: a file changed meanwhile stays unaccepted.
    crate::sandbox::policy::accept(&home, workspace, &current)
}

/// The entries of the policy `text` that open a place no grant may open, for the native
/// question that puts it in force: empty when there are none.
fn dangers_named(text: &str, workspace: &Path) -> String {
    let dangers = ways_out(text, workspace);
    if dangers.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = dangers
        .iter()
        .map(|d| format!("• {}", super::confirm::plain(&d.message)))
        .collect();
    format!(
        "\n\nDangerous: it opens places ipybox never offers to open:\n{}",
        lines.join("\n")
    )
}

/// The watch on the open workspace's policy file.
#[derive(Default)]
pub struct PolicyWatch(Mutex<Option<(PathBuf, notify::RecommendedWatcher)>>);

impl std::fmt::Debug for PolicyWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PolicyWatch")
    }
}

/// Changes of a file come in bursts (an editor's write, rename, chmod): one event per this.
const SETTLE: Duration = Duration::from_millis(60);

impl PolicyWatch {
    /// Watch `workspace`'s policy file: each change (written, created, removed) reaches the
    /// window as a `policy-file` event with the file's text. Watching another workspace
    /// ends the watch on the last one.
    pub fn watch<R: Runtime>(&self, app: &AppHandle<R>, workspace: &Path) -> Result<()> {
        let mut slot = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.as_ref().is_some_and(|(w, _)| w == workspace) {
            return Ok(());
        }
        *slot = None;
        let file = workspace.join(WORKSPACE_POLICY);
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let name = std::ffi::OsString::from(WORKSPACE_POLICY);
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if let Ok(event) = event
                    && !matches!(event.kind, notify::EventKind::Access(_))
                    && event
                        .paths
                        .iter()
                        .any(|p| p.file_name() == Some(name.as_os_str()))
                {
                    let _ = tx.send(());
                }
            })
            .map_err(|e| Error::config("cannot watch the sandbox policy").because(e))?;
        watcher
            .watch(workspace, RecursiveMode::NonRecursive)
            .map_err(|e| {
                Error::config(format!("cannot watch {}", workspace.display())).because(e)
            })?;
        let app = app.clone();
        std::thread::Builder::new()
            .name("ipybox-policy-watch".into())
            .spawn(move || {
                // Ends when the watcher (and with it the sender) is dropped.
                while rx.recv().is_ok() {
                    std::thread::sleep(SETTLE);
                    while rx.try_recv().is_ok() {}
                    let text = std::fs::read_to_string(&file).ok();
                    let _ = app.emit(
                        "policy-file",
                        PolicyFileChanged {
                            path: file.display().to_string(),
                            text,
                        },
                    );
                }
            })
            .map_err(|e| Error::io("starting the policy watch", e))?;
        *slot = Some((workspace.to_path_buf(), watcher));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_lives_in_the_data_dir_and_private() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().expect("tempdir");
        let ws = tempfile::tempdir().expect("tempdir");
        let state = WorkspaceState::new(home.path(), ws.path());
        assert_eq!(
            Choice::load(state.dir()),
            Choice::default(),
            "no sandbox until chosen"
        );
        let choice = Choice {
            sandbox: true,
            policy: PolicySource::Profile {
                name: "kernel-allow-pypi".into(),
            },
        };
        choice.save(&state).expect("saved");
        assert_eq!(Choice::load(state.dir()), choice, "read back as saved");
        let mode = std::fs::metadata(state.dir().join("desktop.json"))
            .expect("written")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "readable by this user only");
        assert!(
            !ws.path().join("desktop.json").exists(),
            "nothing of the choice is in the workspace"
        );
        let options = sandbox_for(None, ws.path(), Some(&state)).expect("sandboxed");
        let file = options.policy.expect("a profile file");
        assert!(
            file.starts_with(state.dir()),
            "the profile is handed to srt from the data dir"
        );
        assert_eq!(
            policy_label(
                &SandboxOptions {
                    policy: Some(file),
                    srt: None
                },
                ws.path(),
                Some(state.dir())
            ),
            "kernel-allow-pypi"
        );
    }

    #[test]
    fn the_command_line_wins_and_an_unknown_profile_is_still_sandboxed() {
        let home = tempfile::tempdir().expect("tempdir");
        let ws = tempfile::tempdir().expect("tempdir");
        let state = WorkspaceState::new(home.path(), ws.path());
        let cli = SandboxOptions {
            policy: Some("/etc/x.json".into()),
            srt: None,
        };
        assert_eq!(sandbox_for(Some(&cli), ws.path(), Some(&state)), Some(cli));
        Choice {
            sandbox: true,
            policy: PolicySource::Profile {
                name: "nope".into(),
            },
        }
        .save(&state)
        .expect("saved");
        assert_eq!(
            sandbox_for(None, ws.path(), Some(&state)),
            Some(SandboxOptions::default()),
            "a choice that cannot be followed falls back to the default policy, not to no sandbox"
        );
    }

    /// A rule that opens a place no grant may open is flagged against its field, named in
    /// the native question that puts the policy in force, and still saved as typed.
    #[test]
    fn a_way_out_is_flagged_named_and_still_saved() {
        let ws = tempfile::tempdir().expect("tempdir");
        let ws = std::fs::canonicalize(ws.path()).expect("canonical");
        let text = r#"{"filesystem": {"denyRead": ["~/.ssh"], "allowRead": ["~/.ssh"], "allowWrite": [".", "~/.config/autostart"], "denyWrite": []}, "network": {"allowedDomains": [], "deniedDomains": []}}"#;
        let dangers: Vec<String> = check_text(text, Some(&ws))
            .into_iter()
            .filter(|p| p.severity == Severity::Danger)
            .map(|p| p.field)
            .collect();
        assert_eq!(
            dangers,
            ["filesystem.allowWrite[1]", "filesystem.allowRead[0]"],
            "the entries that open autostart and the SSH keys"
        );
        assert!(
            check_text(text, None)
                .iter()
                .all(|p| p.severity != Severity::Danger),
            "without a workspace nothing can be told"
        );
        let named = dangers_named(text, &ws);
        assert!(
            named.starts_with("\n\nDangerous: ")
                && named.contains("Writing ~/.config/autostart: code written there (~/.config/autostart) would run outside the sandbox later")
                && named.contains("Reading ~/.ssh: the sandbox hides ~/.ssh as secret"),
            "{named}"
        );
        assert_eq!(
            dangers_named(crate::sandbox::policy::DEFAULT_KERNEL_POLICY, &ws),
            "",
            "the default opens nothing"
        );
        let doc = save(&ws, text).expect("a person may still mean it");
        assert_eq!(doc.text, text, "saved as typed");
    }

    #[test]
    fn saving_refuses_errors_and_keeps_the_file() {
        let ws = tempfile::tempdir().expect("tempdir");
        let file = ws.path().join(WORKSPACE_POLICY);
        std::fs::write(&file, "{}").expect("written");
        let err = save(
            ws.path(),
            r#"{"network": {"allowedDomains": ["https://x.org"]}}"#,
        )
        .expect_err("a URL is not a domain");
        assert!(
            err.to_string().contains("network.allowedDomains[0]"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            "{}",
            "nothing lost"
        );
        let err = save(ws.path(), "{ not json").expect_err("not JSON");
        assert!(err.to_string().contains("line 1"), "{err}");
        let doc = save(ws.path(), crate::sandbox::policy::DEFAULT_KERNEL_POLICY).expect("saved");
        assert!(doc.exists && !doc.read_only && doc.problems.is_empty());
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            crate::sandbox::policy::DEFAULT_KERNEL_POLICY,
            "saved byte for byte"
        );
    }

    #[test]
    fn a_sandbox_under_the_workspace_policy_always_has_the_file() {
        let home = tempfile::tempdir().expect("tempdir");
        let ws = tempfile::tempdir().expect("tempdir");
        let state = WorkspaceState::new(home.path(), ws.path());
        let choice = Choice {
            sandbox: true,
            policy: PolicySource::Workspace,
        };
        let options = choice
            .options(ws.path(), &state)
            .expect("options")
            .expect("sandboxed");
        let file = ws.path().join(WORKSPACE_POLICY);
        assert_eq!(
            options.policy.as_deref(),
            Some(file.as_path()),
            "the file is handed to the session, which makes it read-only inside the sandbox: kernel code cannot create one for the next session"
        );
        assert_eq!(
            std::fs::read_to_string(&file).expect("created"),
            crate::sandbox::policy::DEFAULT_KERNEL_POLICY
        );
    }

    #[test]
    fn the_window_sees_these_shapes() {
        let ws = tempfile::tempdir().expect("tempdir");
        let doc = read(ws.path(), &PolicySource::Workspace).expect("read");
        let json = serde_json::to_value(&doc).expect("json");
        assert_eq!(
            json.as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>()),
            Some(
                ["source", "text", "path", "exists", "readOnly", "problems"]
                    .map(String::from)
                    .to_vec()
            ),
            "ui/src/ipc.ts PolicyDocument"
        );
        assert_eq!(json["source"], serde_json::json!({"kind": "workspace"}));
        let problems = serde_json::to_value(check_text("[]", None)).expect("json");
        assert_eq!(problems[0]["field"], "");
        assert_eq!(problems[0]["severity"], "error");
        let choice: Choice = serde_json::from_value(
            serde_json::json!({"sandbox": true, "policy": {"kind": "profile", "name": "kernel"}}),
        )
        .expect("the window's Apply argument");
        assert_eq!(
            choice.policy,
            PolicySource::Profile {
                name: "kernel".into()
            }
        );
        let state = SandboxState {
            workspace_policy: "/w/sandbox-config.json".into(),
            workspace_policy_exists: true,
            profiles: vec![ProfileInfo {
                name: "kernel".into(),
                purpose: "p".into(),
            }],
            choice,
            running: Some("kernel".into()),
            command_line: None,
            remote: None,
        };
        assert_eq!(
            serde_json::to_value(&state).expect("json"),
            serde_json::json!({
                "workspacePolicy": "/w/sandbox-config.json",
                "workspacePolicyExists": true,
                "profiles": [{"name": "kernel", "purpose": "p"}],
                "choice": {"sandbox": true, "policy": {"kind": "profile", "name": "kernel"}},
                "running": "kernel",
                "commandLine": null,
                "remote": null,
            }),
            "ui/src/ipc.ts SandboxState"
        );
    }

    #[test]
    fn a_missing_workspace_policy_opens_as_the_default() {
        let ws = tempfile::tempdir().expect("tempdir");
        let doc = read(ws.path(), &PolicySource::Workspace).expect("read");
        assert!(!doc.exists && !doc.read_only);
        let doc = read(
            ws.path(),
            &PolicySource::Profile {
                name: "kernel".into(),
            },
        )
        .expect("read");
        assert!(doc.read_only, "shipped profiles are read-only");
    }
}
