//! The Sandbox tab's commands: what it shows, the editor's reading, checking and saving of
//! the workspace's policy, Apply (a new session under the new choice, once srt has accepted
//! it) and the watch on the policy file. What they keep and read is in `policy.rs`.

use std::time::Duration;

use tauri::{AppHandle, Runtime, State};

use super::confirm::Question;
use super::dto::{Choice, DesktopError, KernelStatus, PolicyDocument, PolicySource, SandboxState};
use super::policy::{
    PolicyWatch, ask_to_accept, check_text, policy_label, read, save, state_of, to_review,
};
use super::session::Desktop;
use crate::audit::WorkspaceState;
use crate::error::Error;
use crate::sandbox::PolicyProblem;

/// Put `choice` in force: srt must accept its policy first (else the error, in srt's words,
/// and the running kernel stays); then it is kept and the session restarts under it.
pub async fn apply<R: Runtime>(
    desktop: &Desktop,
    app: &AppHandle<R>,
    choice: Choice,
) -> std::result::Result<SandboxState, DesktopError> {
    let workspace = desktop.workspace()?;
    if let Some(launch) = desktop.launch_sandbox() {
        return Err(Error::config(format!(
            "this run's sandbox was set on the command line ({}); start ipybox without --sandbox or --sandbox-config to choose it here",
            policy_label(&launch, &workspace, None)
        ))
        .into());
    }
    if let Some(server) = desktop.session_remote()? {
        return Err(Error::config(format!(
            "the kernel runs on {server}, where ipybox's sandbox does not apply; choose \"This computer\" in Settings first"
        ))
        .into());
    }
    let state = WorkspaceState::of(&workspace)?;
    let running = desktop.session_sandbox()?;
    if !choice.sandbox && running.is_some() {
        let question = Question {
            title: "Turn the sandbox off?".into(),
            message: format!(
                "The kernel of {} restarts outside the sandbox.\n\nCode in this notebook, and code an agent runs here, will then run with your own rights: it can read every file you can (.env files, ~/.ssh, browser profiles), change or delete them, start programs, and reach the network.",
                workspace.display()
            ),
            detail: String::new(),
            warnings: Vec::new(),
            yes: "Turn the sandbox off".into(),
            no: "Keep the sandbox".into(),
        };
        if !super::confirm::confirm(app, question).await {
            return Err(Error::config("Not applied: you kept the sandbox on").into());
        }
    }
    let options = choice.options(&workspace, &state)?;
    if let Some(review) = options.as_ref().and_then(|o| to_review(o, &workspace)) {
        ask_to_accept(app, &workspace, review).await?;
    }
    if let Some(options) = options {
        let home = crate::home::ipybox_home()?;
        let scratch = state.dir().to_path_buf();
        let ws = workspace.clone();
        tokio::task::spawn_blocking(move || {
            crate::sandbox::check::check_with_srt(&options, &home, &ws, &scratch)
        })
        .await
        .map_err(|e| Error::sandbox("trying the policy with srt").because(e))??;
    }
    let previous = Choice::load(state.dir());
    choice.save(&state)?;
    desktop.restart(app).await?;
    if let Some(why) = start_failure(desktop).await
        && previous != choice
    {
        // srt ran the policy, but the kernel cannot live under it (its Python hidden, say):
        // back to the previous choice rather than no kernel.
        previous.save(&state)?;
        desktop.restart(app).await?;
        return Err(Error::kernel_start(format!(
            "the kernel could not start under this policy, so it was started again as before (its variables are lost): {why}"
        ))
        .into());
    }
    Ok(state_of(
        &workspace,
        None,
        desktop.session_sandbox()?.as_ref(),
        desktop.session_remote()?,
    )?)
}

/// How long Apply waits for the new kernel before it calls the policy good.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// Wait for the session's kernel to start; why it could not, if it could not.
pub(super) async fn start_failure(desktop: &Desktop) -> Option<String> {
    let deadline = std::time::Instant::now() + START_TIMEOUT;
    while std::time::Instant::now() < deadline {
        match desktop.state() {
            Ok(s) if s.kernel == KernelStatus::Starting => {}
            Ok(s) => return s.startup_error.map(|e| e.message),
            Err(e) => return Some(e.message),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

type Reply<T> = std::result::Result<T, DesktopError>;

/// What the Sandbox tab shows: the choice, the profiles, what the kernel runs under.
#[tauri::command]
pub fn sandbox_state(desktop: State<'_, Desktop>) -> Reply<SandboxState> {
    Ok(state_of(
        &desktop.workspace()?,
        desktop.launch_sandbox().as_ref(),
        desktop.session_sandbox()?.as_ref(),
        desktop.session_remote()?,
    )?)
}

/// Open a policy: the workspace's (the default profile's text while it has none) or a
/// shipped profile (read-only).
#[tauri::command]
pub fn read_policy(desktop: State<'_, Desktop>, source: PolicySource) -> Reply<PolicyDocument> {
    Ok(read(&desktop.workspace()?, &source)?)
}

/// Every problem of a policy's text, each against its field: errors, the grants that
/// matter, and the entries that open a place no grant may open.
#[tauri::command]
pub fn check_policy(desktop: State<'_, Desktop>, text: String) -> Vec<PolicyProblem> {
    check_text(&text, desktop.workspace().ok().as_deref())
}

/// Would code be allowed to read or write a path, or reach a URL, under the policy `text`
/// (as edited, unsaved)? Answered by the engine's checker, with the rule that decides.
#[tauri::command]
pub fn check_sandbox_access(
    desktop: State<'_, Desktop>,
    text: String,
    query: String,
) -> Reply<Vec<crate::sandbox::access::Verdict>> {
    Ok(crate::sandbox::access::check_text(
        &text,
        &desktop.workspace()?,
        &query,
    )?)
}

/// Save `text` as the workspace's `sandbox-config.json`, atomically; refused with errors.
#[tauri::command]
pub fn save_policy(desktop: State<'_, Desktop>, text: String) -> Reply<PolicyDocument> {
    Ok(save(&desktop.workspace()?, &text)?)
}

/// Sandbox the workspace's kernel (or not) under a policy: srt tries it first; the kernel
/// then restarts under it, its state lost.
#[tauri::command]
pub async fn apply_sandbox<R: Runtime>(
    app: AppHandle<R>,
    desktop: State<'_, Desktop>,
    choice: Choice,
) -> Reply<SandboxState> {
    apply(&desktop, &app, choice).await
}

/// Follow the workspace's policy file (`policy-file` events).
#[tauri::command]
pub fn watch_policy<R: Runtime>(
    app: AppHandle<R>,
    desktop: State<'_, Desktop>,
    watch: State<'_, PolicyWatch>,
) -> Reply<()> {
    Ok(watch.watch(&app, &desktop.workspace()?)?)
}
