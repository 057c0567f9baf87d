//! The window's commands: each a few lines over the engine. Shapes in `dto`, mirrored by
//! `ui/src/ipc.ts`.

use std::path::{Path, PathBuf};

use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, Runtime, State};
use tauri_plugin_dialog::DialogExt;

use super::dto::{AppSettings, AppState, DesktopError, ExecEvent, McpEndpointState, SavedTool};
use super::frames::{FRAME, Framed, in_frames};
use super::session::Desktop;
use super::settings::Settings;
use super::trust::TrustStore;
use crate::apigen::codeaction::CodeAction;
use crate::audit::AuditEntry;
use crate::error::Error;
use crate::events::DecidedBy;
use crate::executor::{
    Completions, Event, FramePage, FrameQuery, Inspection, KernelVariables, StreamOptions,
};
use crate::tools::rules::{Rule, RuleDecision};
use crate::tools::{ApprovalRequest, Decision, Rules};
use crate::workspace::{self, Target, files};

type Reply<T> = Result<T, DesktopError>;

#[tauri::command]
pub fn app_state(state: State<'_, Desktop>) -> Reply<AppState> {
    state.mark_loaded();
    state.state()
}

/// Queue `code`, which comes from `origin` ("cell 3 of analysis.ipynb": approval dialogs and
/// the audit log name it); its events arrive on `on_event`. Returns the execution's id at
/// once.
#[tauri::command]
pub fn execute<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
    code: String,
    origin: Option<String>,
    on_event: Channel<ExecEvent>,
) -> Reply<String> {
    let options = StreamOptions {
        timeout: None,
        outputs: true,
        input: true,
        save_images: false,
        origin,
    };
    let mut stream = state.executor()?.stream(&code, options);
    let id = stream.id().to_owned();
    if let Some(cancel) = stream.cancel_handle() {
        state.track(id.clone(), cancel);
    }
    let mut framed = in_frames(stream, FRAME);
    let execution = id.clone();
    tauri::async_runtime::spawn(async move {
        let desktop = app.state::<Desktop>();
        while let Some(item) = framed.recv().await {
            let event = match item {
                Ok(Framed::Outputs(outputs)) => {
                    super::trust::vouched().produced(&outputs);
                    ExecEvent::Outputs { outputs }
                }
                Ok(Framed::Event(Event::Started { execution_count })) => {
                    ExecEvent::Started { execution_count }
                }
                Ok(Framed::Event(Event::Input(request))) => ExecEvent::Input {
                    prompt: request.prompt().to_owned(),
                    password: request.password(),
                    id: desktop.hold_input(request),
                },
                Ok(Framed::Event(Event::Result(_))) => ExecEvent::Finished,
                // Approval requests go to the session's rules and dialog, not to the stream.
                Ok(Framed::Event(_)) => continue,
                Err(e) => ExecEvent::Failed { error: e.into() },
            };
            if on_event.send(event).is_err() {
                // The window is gone: stop the code rather than run it for nobody.
                desktop.cancel(&execution);
            }
        }
        desktop.untrack(&execution);
    });
    Ok(id)
}

#[tauri::command]
pub fn cancel_execution(state: State<'_, Desktop>, id: String) -> bool {
    state.cancel(&id)
}

#[tauri::command]
pub fn reply_input(state: State<'_, Desktop>, id: u64, value: String) -> bool {
    state.reply_input(id, value)
}

/// Answer an MCP server's question (its form in the window): `accept` with the form's
/// values, `decline` or `cancel`. Only the notebook window answers (Tauri gives its invoke
/// key to the window's main frame only); an answer that does not fit the form, or for a
/// question that no longer waits, is refused in words.
#[tauri::command]
pub fn answer_elicitation(
    webview: tauri::Webview,
    state: State<'_, Desktop>,
    id: u64,
    action: rmcp::model::ElicitationAction,
    values: Option<serde_json::Map<String, serde_json::Value>>,
) -> Reply<()> {
    let refused = |message: String| DesktopError {
        code: crate::error::ErrorCode::InvalidAnswer,
        message,
    };
    if webview.label() != "main" {
        return Err(refused(
            "only the notebook window answers a server's question".into(),
        ));
    }
    state
        .executor()?
        .answer_elicitation(id, action, values)
        .map_err(|e| refused(e.to_string()))
}

/// The questions MCP servers asked that still wait for an answer: a window that was not
/// listening when they were asked (reloaded, or opened later) shows their forms.
#[tauri::command]
pub fn waiting_questions(state: State<'_, Desktop>) -> Reply<Vec<crate::question::Question>> {
    Ok(state.executor()?.waiting_questions())
}

#[tauri::command]
pub async fn interrupt(state: State<'_, Desktop>) -> Reply<()> {
    Ok(state.executor()?.interrupt().await?)
}

/// A fresh kernel in the same session (its MCP servers, rules and settings stay).
#[tauri::command]
pub async fn restart_kernel(state: State<'_, Desktop>) -> Reply<()> {
    Ok(state.executor()?.reset().await?)
}

/// The app's settings, as saved and in force.
#[tauri::command]
pub fn app_settings(state: State<'_, Desktop>) -> AppSettings {
    state.app_settings()
}

/// Save the approval timeout (1 s to a day) in ipybox's data directory and apply it at once:
/// the running session's next tool call waits that long.
#[tauri::command]
pub fn set_app_settings(
    state: State<'_, Desktop>,
    approval_timeout_secs: u64,
) -> Reply<AppSettings> {
    state.set_settings(Settings {
        approval_timeout_secs,
    })
}

/// Only notebooks are read and written through the window: a page that went wrong cannot
/// turn these commands into a general file API.
fn notebook_path(path: &str) -> Reply<PathBuf> {
    let path = PathBuf::from(path);
    if !path.is_absolute() || path.extension().is_none_or(|e| e != "ipynb") {
        return Err(
            Error::config(format!("{} is not a .ipynb notebook path", path.display())).into(),
        );
    }
    Ok(path)
}

/// Save a notebook; `trusted`: every output in it was produced here or the person trusted
/// the notebook, so it opens trusted next time (see [`super::trust`]).
#[tauri::command]
pub fn save_notebook(path: String, content: String, trusted: Option<bool>) -> Reply<()> {
    crate::fsutil::save_atomic(&notebook_path(&path)?, content.as_bytes())?;
    TrustStore::at(&crate::home::ipybox_home()?).sign_saved(
        &content,
        trusted == Some(true),
        super::trust::vouched(),
    )?;
    Ok(())
}

/// Whether a notebook read as `content` is trusted: saved here with outputs produced here, or
/// trusted by the person. The text is the one the window shows, not the file read again
/// (which kernel code may have changed since).
#[tauri::command]
pub fn notebook_trusted(content: String) -> Reply<bool> {
    let trusted = TrustStore::at(&crate::home::ipybox_home()?).is_trusted(&content)?;
    if trusted {
        super::trust::vouched().read_trusted(&content);
    }
    Ok(trusted)
}

/// The person trusts the notebook at `path` (as read: `content`), asked in a native dialog:
/// its HTML and SVG outputs are then rendered (sanitized and contained, as live outputs).
/// Whether it is trusted now.
#[tauri::command]
pub async fn trust_notebook<R: Runtime>(
    app: AppHandle<R>,
    path: String,
    content: String,
) -> Reply<bool> {
    let file = notebook_path(&path)?;
    let question = super::confirm::Question {
        title: "Trust this notebook?".into(),
        message: format!(
            "{} was not saved on this computer with these outputs, so its HTML and SVG outputs are shown as text.\n\nTrust it only if you know where it comes from. Its outputs are then drawn as pictures and tables; scripts in them still never run, and they stay inside their cells.",
            crate::display::escape(&file.display().to_string())
        ),
        detail: String::new(),
        warnings: Vec::new(),
        yes: "Trust notebook".into(),
        no: "Cancel".into(),
    };
    if !super::confirm::confirm(&app, question).await {
        return Ok(false);
    }
    TrustStore::at(&crate::home::ipybox_home()?).trust(&content)?;
    super::trust::vouched().read_trusted(&content);
    Ok(true)
}

#[tauri::command]
pub fn read_notebook(path: String) -> Reply<String> {
    let path = notebook_path(&path)?;
    workspace::read_notebook(&path)?
        .ok_or_else(|| Error::config(format!("{} does not exist", path.display())).into())
}

#[tauri::command]
pub fn list_notebooks(state: State<'_, Desktop>) -> Reply<Vec<String>> {
    Ok(workspace::list_notebooks(&state.workspace()?)
        .iter()
        .map(|p| p.display().to_string())
        .collect())
}

/// Open a folder or notebook: the kernel restarts when the workspace changes.
#[tauri::command]
pub async fn open_workspace<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
    path: String,
) -> Reply<AppState> {
    let target = Target::resolve(Path::new(&path))?;
    state.open(&app, target).await
}

/// Another notebook of the same workspace (same kernel).
#[tauri::command]
pub async fn open_notebook<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
    path: String,
) -> Reply<AppState> {
    let target = Target::resolve(&notebook_path(&path)?)?;
    state.open(&app, target).await
}

/// The native folder picker, then [`open_workspace`]; `None` when cancelled.
#[tauri::command]
pub async fn choose_workspace<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
) -> Reply<Option<AppState>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut picker = app.dialog().file().set_title("Open a workspace folder");
    if let Ok(current) = state.workspace() {
        picker = picker.set_directory(current);
    }
    picker.pick_folder(move |folder| {
        let _ = tx.send(folder.and_then(|f| f.into_path().ok()));
    });
    let Some(folder) = rx.await.ok().flatten() else {
        return Ok(None);
    };
    let target = Target::resolve(&folder)?;
    Ok(Some(state.open(&app, target).await?))
}

/// The kernel's completions of `code` at `cursor` (code points): Tab in a cell.
#[tauri::command]
pub async fn complete(
    state: State<'_, Desktop>,
    code: String,
    cursor: usize,
) -> Reply<Completions> {
    Ok(state.executor()?.complete(&code, cursor).await?)
}

/// The kernel's help on the name at `cursor` of `code`: Shift+Tab in a cell.
#[tauri::command]
pub async fn inspect(
    state: State<'_, Desktop>,
    code: String,
    cursor: usize,
    detail: u8,
) -> Reply<Inspection> {
    Ok(state.executor()?.inspect(&code, cursor, detail).await?)
}

/// The kernel's user variables: the Variables tab, after each cell.
#[tauri::command]
pub async fn kernel_variables(state: State<'_, Desktop>) -> Reply<KernelVariables> {
    Ok(state.executor()?.kernel_variables().await?)
}

/// A page of a data frame, sorted and filtered in the kernel: the data grid.
#[tauri::command]
pub async fn frame_page(state: State<'_, Desktop>, query: FrameQuery) -> Reply<FramePage> {
    Ok(state.executor()?.frame_page(&query).await?)
}

/// Rename the workspace's notebook `from` to `to` (never over another file). The open
/// notebook keeps its kernel under its new name.
#[tauri::command]
pub async fn rename_notebook<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
    from: String,
    to: String,
) -> Reply<AppState> {
    let ws = state.workspace()?;
    let (from, to) = (
        files::notebook_in(&ws, Path::new(&from))?,
        files::notebook_in(&ws, Path::new(&to))?,
    );
    files::rename(&from, &to)?;
    super::python_commands::carry(&state, &from, &to, false);
    if state.state()?.notebook_path == from.display().to_string() {
        return state
            .open(
                &app,
                Target {
                    workspace: ws,
                    notebook: to,
                },
            )
            .await;
    }
    state.state()
}

/// Save the open notebook (`content`) as a new file `path` of the workspace and go on in
/// it with the same kernel; `trusted` as for [`save_notebook`].
#[tauri::command]
pub async fn save_notebook_as<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
    path: String,
    content: String,
    trusted: Option<bool>,
) -> Reply<AppState> {
    let ws = state.workspace()?;
    let path = files::notebook_in(&ws, Path::new(&path))?;
    files::create(&path, content.as_bytes())?;
    TrustStore::at(&crate::home::ipybox_home()?).sign_saved(
        &content,
        trusted == Some(true),
        super::trust::vouched(),
    )?;
    super::python_commands::carry(
        &state,
        Path::new(&state.state()?.notebook_path),
        &path,
        true,
    );
    state
        .open(
            &app,
            Target {
                workspace: ws,
                notebook: path,
            },
        )
        .await
}

/// Copy a notebook of the workspace to `NAME-Copy1.ipynb` (the next free name); its path.
#[tauri::command]
pub fn duplicate_notebook(state: State<'_, Desktop>, path: String) -> Reply<String> {
    let path = files::notebook_in(&state.workspace()?, Path::new(&path))?;
    let copy = files::duplicate(&path)?;
    super::python_commands::carry(&state, &path, &copy, true);
    Ok(copy.display().to_string())
}

/// Move a notebook of the workspace to the trash (the freedesktop.org trash, through GIO,
/// where the file manager can restore it).
#[tauri::command]
pub fn trash_notebook(state: State<'_, Desktop>, path: String) -> Reply<()> {
    let path = files::notebook_in(&state.workspace()?, Path::new(&path))?;
    super::trash::trash(&path)?;
    Ok(())
}

#[tauri::command]
pub async fn install_package(state: State<'_, Desktop>, spec: String) -> Reply<String> {
    Ok(state.executor()?.install_package(&spec).await?)
}

#[tauri::command]
pub fn set_title<R: Runtime>(app: AppHandle<R>, title: String) -> Reply<()> {
    if let Some(window) = app.get_webview_window("main") {
        window
            .set_title(&title)
            .map_err(|e| Error::config("cannot set the window title").because(e))?;
    }
    Ok(())
}

/// The app's own MCP endpoint for agents.
#[tauri::command]
pub async fn mcp_endpoint(state: State<'_, Desktop>) -> Reply<McpEndpointState> {
    state.endpoint().await
}

/// Serve agents over MCP on this workspace (or stop); `new_token` replaces the token.
#[tauri::command]
pub async fn set_mcp_endpoint<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
    enabled: bool,
    new_token: Option<bool>,
) -> Reply<McpEndpointState> {
    state
        .set_endpoint(&app, enabled, new_token.unwrap_or(false))
        .await
}

/// The interface (`api.py`) a code action would have, checked first: what "Save cell as
/// tool" shows before saving.
#[tauri::command]
pub fn preview_code_action(action: CodeAction) -> Reply<String> {
    action.validate()?;
    Ok(action.render_api())
}

/// Save a cell as a tool (`gentools/<category>/<name>/`), imported in the kernel first.
#[tauri::command]
pub async fn save_code_action(state: State<'_, Desktop>, action: CodeAction) -> Reply<SavedTool> {
    let saved = state.executor()?.save_code_action(&action).await?;
    Ok(SavedTool {
        module: saved.module,
        api: saved.api,
    })
}

/// The workspace's saved code actions with their interfaces.
#[tauri::command]
pub fn code_actions(state: State<'_, Desktop>) -> Reply<Vec<SavedTool>> {
    Ok(state
        .executor()?
        .code_actions(None)?
        .into_iter()
        .map(|(module, api)| SavedTool { module, api })
        .collect())
}

/// The tool calls waiting for a decision, oldest first.
#[tauri::command]
pub fn approvals_pending(state: State<'_, Desktop>) -> Reply<Vec<ApprovalRequest>> {
    Ok(state.executor()?.pending_approvals())
}

/// The person decides one request in the panel; `false` when it no longer waits.
#[tauri::command]
pub fn decide_approval(state: State<'_, Desktop>, id: u64, decision: Decision) -> Reply<bool> {
    Ok(state.executor()?.decide(id, decision))
}

/// The person decides the pending requests `ids` (the ones the panel showed) at once: a
/// request queued after the panel was drawn is never decided with them. Approving asks again
/// in a native dialog that names the calls. How many were decided.
#[tauri::command]
pub async fn decide_all_pending<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
    decision: Decision,
    ids: Vec<u64>,
) -> Reply<usize> {
    let executor = state.executor()?;
    let chosen: Vec<ApprovalRequest> = executor
        .pending_approvals()
        .into_iter()
        .filter(|r| ids.contains(&r.id()))
        .collect();
    if chosen.is_empty() {
        return Ok(0);
    }
    if decision == Decision::Accept && !super::confirm::confirm(&app, batch_question(&chosen)).await
    {
        return Ok(0);
    }
    Ok(chosen
        .iter()
        .filter(|r| executor.decide_as(r.id(), decision, DecidedBy::Batch))
        .count())
}

/// "Approve these N calls?", naming each (tool and who asks).
fn batch_question(calls: &[ApprovalRequest]) -> super::confirm::Question {
    let list: Vec<String> = calls
        .iter()
        .map(|r| {
            format!(
                "• {}.{} — {}",
                r.server_name(),
                r.tool_name(),
                r.origin().unwrap_or("code in this notebook")
            )
        })
        .collect();
    let n = calls.len();
    super::confirm::Question {
        title: format!("Approve {n} tool call{}?", if n == 1 { "" } else { "s" }),
        message: "Each of these calls runs as soon as you approve, with the arguments shown in the Approvals panel:".into(),
        detail: list.join("\n"),
        warnings: Vec::new(),
        yes: format!("Approve {n}"),
        no: "Cancel".into(),
    }
}

/// The workspace's approval rules, in the file format.
#[tauri::command]
pub fn approval_rules(state: State<'_, Desktop>) -> Reply<serde_json::Value> {
    Ok(serde_json::from_str(&state.rules()?.to_json())
        .map_err(|e| Error::config("the approval rules").because(e))?)
}

/// Replace the workspace's approval rules (checked first; a bad rule is named and nothing
/// changes). Rules that let more calls run without asking are saved only once the person
/// confirms them in a native dialog that lists them: a click in the window alone never
/// weakens the approvals. Whether they were saved.
#[tauri::command]
pub async fn set_approval_rules<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
    rules: serde_json::Value,
) -> Reply<bool> {
    let rules = Rules::from_json(&rules.to_string())?;
    let current = state.rules()?;
    let widened: Vec<String> = rules
        .widened_from(&current)
        .iter()
        .map(|r| format!("• {}", r.in_words(current.default_scope())))
        .collect();
    if !widened.is_empty() {
        let n = widened.len();
        let question = super::confirm::Question {
            title: "Save rules that allow more?".into(),
            message: format!(
                "{} calls run without asking you, which the current rules did not:",
                if n == 1 {
                    "This rule lets"
                } else {
                    "These rules let"
                }
            ),
            detail: widened.join("\n"),
            warnings: Vec::new(),
            yes: "Save rules".into(),
            no: "Cancel".into(),
        };
        if !super::confirm::confirm(&app, question).await {
            return Ok(false);
        }
    }
    state.set_rules(rules)?;
    Ok(true)
}

/// Put `rule` before the others (the first rule that matches decides); with `decide_id`,
/// that pending request is decided by it at once. An allow rule is added only once the
/// person confirms it in a native dialog that says what it lets run. Whether it was added.
#[tauri::command]
pub async fn add_approval_rule<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
    rule: Rule,
    decide_id: Option<u64>,
) -> Reply<bool> {
    let decision = match rule.decision {
        RuleDecision::Allow => Decision::Accept,
        RuleDecision::Reject => Decision::Reject,
    };
    let pending = match decide_id {
        Some(_) => state.executor()?.pending_approvals(),
        None => Vec::new(),
    };
    let from = decide_id.and_then(|id| pending.iter().find(|r| r.id() == id));
    let rule = match from {
        Some(request) => rule.scoped_to_caller(request),
        None => rule,
    };
    // Checked before the person is asked: a rule that cannot be saved is not confirmed.
    Rules::new(vec![rule.clone()])?;
    if decision == Decision::Accept {
        let waiting = from.is_some();
        let question = super::confirm::Question {
            title: "Always allow?".into(),
            message: format!(
                "This rule lets calls run without asking you, until you remove it in the Approvals panel. It is saved with this workspace's approval rules{}.",
                if waiting {
                    ", and it allows the waiting call too"
                } else {
                    ""
                }
            ),
            detail: rule.in_words(state.rules()?.default_scope()),
            warnings: Vec::new(),
            yes: "Always allow".into(),
            no: "Cancel".into(),
        };
        if !super::confirm::confirm(&app, question).await {
            return Ok(false);
        }
    }
    let text = state.add_rule_first(rule)?;
    // The request the rule was made from is decided by it, naming it (the audit log and
    // the cell's list say which rule decided).
    if let Some(request) = decide_id.and_then(|id| pending.into_iter().find(|r| r.id() == id)) {
        let reason =
            (decision == Decision::Reject).then(|| "rejected by a rule you made".to_owned());
        request.decide_by_rule(decision, text, reason);
    }
    Ok(true)
}

/// The session grants in force ("Allow for this session" in the approval dialog): `[{id,
/// server, tool, scope: "notebook"|"agent", session, granted_at}]`, oldest first. The
/// window hears of changes as `approval-grants` events with the same list.
#[tauri::command]
pub fn approval_grants(state: State<'_, Desktop>) -> Reply<Vec<crate::tools::grants::Grant>> {
    Ok(state.grants()?.list())
}

/// Take back the grant `id`: calls it covered ask again. `false` when it is gone already.
#[tauri::command]
pub fn revoke_grant(state: State<'_, Desktop>, id: u64) -> Reply<bool> {
    Ok(state.grants()?.revoke(id))
}

/// Every entry of the workspace's audit log, oldest first.
#[tauri::command]
pub async fn audit_log(state: State<'_, Desktop>) -> Reply<Vec<AuditEntry>> {
    let log = state.audit_log()?;
    let (entries, _) = tauri::async_runtime::spawn_blocking(move || log.read())
        .await
        .map_err(|e| Error::config("reading the audit log").because(e))??;
    Ok(entries)
}

/// Copy the audit log where the person chooses; the path written, `None` when cancelled.
#[tauri::command]
pub async fn export_audit_log<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
) -> Reply<Option<String>> {
    let log = state.audit_log()?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_title("Export the audit log")
        .set_file_name("ipybox-audit.jsonl")
        .add_filter("JSON Lines", &["jsonl"])
        .save_file(move |path| {
            let _ = tx.send(path.and_then(|p| p.into_path().ok()));
        });
    let Some(path) = rx.await.ok().flatten() else {
        return Ok(None);
    };
    let bytes = match std::fs::read(log.path()) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io("reading the audit log", e).into()),
    };
    crate::fsutil::save_atomic(&path, &bytes)?;
    Ok(Some(path.display().to_string()))
}
