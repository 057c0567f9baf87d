//! The window's commands: each a few lines over the engine. Shapes in `dto`, mirrored by
//! `ui/src/ipc.ts`.

use std::path::{Path, PathBuf};

use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, Runtime, State};
use tauri_plugin_dialog::DialogExt;

use super::approval;
use super::dto::{AppState, DesktopError, ExecEvent};
use super::session::Desktop;
use crate::executor::frames::{FRAME, Framed, in_frames};
use crate::workspace::{self, Target};
use crate::{Error, Event, StreamOptions};

type Reply<T> = Result<T, DesktopError>;

#[tauri::command]
pub fn app_state(state: State<'_, Desktop>) -> Reply<AppState> {
    state.state()
}

/// Queue `code`; its events arrive on `on_event`. Returns the execution's id at once.
#[tauri::command]
pub fn execute<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
    code: String,
    on_event: Channel<ExecEvent>,
) -> Reply<String> {
    let options = StreamOptions {
        timeout: None,
        outputs: true,
        input: true,
        save_images: false,
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
                Ok(Framed::Outputs(outputs)) => ExecEvent::Outputs { outputs },
                Ok(Framed::Event(Event::Started { execution_count })) => {
                    ExecEvent::Started { execution_count }
                }
                Ok(Framed::Event(Event::Input(request))) => ExecEvent::Input {
                    prompt: request.prompt().to_owned(),
                    password: request.password(),
                    id: desktop.hold_input(request),
                },
                Ok(Framed::Event(Event::ApprovalRequest(request))) => {
                    approval::ask(&app, request);
                    continue;
                }
                Ok(Framed::Event(Event::Result(_))) => ExecEvent::Finished,
                Ok(Framed::Event(Event::Output(_))) => continue,
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

#[tauri::command]
pub async fn interrupt(state: State<'_, Desktop>) -> Reply<()> {
    Ok(state.executor()?.interrupt().await?)
}

#[tauri::command]
pub async fn restart_kernel(state: State<'_, Desktop>) -> Reply<()> {
    Ok(state.executor()?.reset().await?)
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

#[tauri::command]
pub fn save_notebook(path: String, content: String) -> Reply<()> {
    Ok(workspace::save_atomic(
        &notebook_path(&path)?,
        content.as_bytes(),
    )?)
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
