//! File → Export: a notebook of the workspace as a self-contained HTML page, a PDF or a
//! Python script, written where the person chooses in the native save dialog (which asks
//! before replacing a file). The page is made off the async threads; the PDF is printed
//! by an offscreen web view on GTK's main thread (`pdf`), so the window stays responsive.

use std::path::{Path, PathBuf};

use tauri::{AppHandle, Runtime, State};
use tauri_plugin_dialog::DialogExt;

use super::dto::{DesktopError, ExportFormat};
use super::session::Desktop;
use crate::error::Error;
use crate::export::{Notebook, to_html, to_python};
use crate::workspace::files;

impl ExportFormat {
    fn extension(self) -> &'static str {
        match self {
            ExportFormat::Html => "html",
            ExportFormat::Pdf => "pdf",
            ExportFormat::Py => "py",
        }
    }

    fn filter(self) -> &'static str {
        match self {
            ExportFormat::Html => "Web page",
            ExportFormat::Pdf => "PDF document",
            ExportFormat::Py => "Python script",
        }
    }
}

/// Export the notebook `path` (saved first by the window) as `format` where the person
/// chooses; the path written, `None` when the dialog was cancelled.
#[tauri::command]
pub async fn export_notebook<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, Desktop>,
    path: String,
    format: ExportFormat,
) -> Result<Option<String>, DesktopError> {
    let ws = state.workspace()?;
    let notebook = files::notebook_in(&ws, Path::new(&path))?;
    let name = notebook
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let suggested = Path::new(&name).with_extension(format.extension());
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_title(format!("Export “{name}” as {}", format.filter()))
        .set_directory(&ws)
        .set_file_name(suggested.to_string_lossy())
        .add_filter(format.filter(), &[format.extension()])
        .save_file(move |chosen| {
            let _ = tx.send(chosen.and_then(|p| p.into_path().ok()));
        });
    let Some(out) = rx.await.ok().flatten() else {
        return Ok(None);
    };
    let page = {
        let notebook = notebook.clone();
        let name = name.clone();
        tauri::async_runtime::spawn_blocking(move || render(&notebook, &name, format))
            .await
            .map_err(|e| Error::config("exporting the notebook").because(e))??
    };
    match page {
        Rendered::File(bytes) => crate::fsutil::save_atomic(&out, &bytes)?,
        Rendered::Print(html) => print_pdf(&app, html, &out).await?,
    }
    Ok(Some(out.display().to_string()))
}

enum Rendered {
    File(Vec<u8>),
    Print(String),
}

fn render(notebook: &Path, name: &str, format: ExportFormat) -> Result<Rendered, Error> {
    let text =
        std::fs::read_to_string(notebook).map_err(|e| Error::io(format!("reading {name}"), e))?;
    // A file that is not a notebook is a file problem to the window (`IoError`), not a
    // setting to fix.
    let parsed = Notebook::parse(&text).map_err(|e| {
        Error::io(
            format!("{name} cannot be exported"),
            std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        )
    })?;
    Ok(match format {
        ExportFormat::Html => Rendered::File(to_html(&parsed, name).into_bytes()),
        ExportFormat::Py => Rendered::File(to_python(&parsed).into_bytes()),
        ExportFormat::Pdf => Rendered::Print(to_html(&parsed, name)),
    })
}

/// Prints on GTK's main thread into a file beside `out`, moved there once whole.
#[cfg(target_os = "linux")]
async fn print_pdf<R: Runtime>(app: &AppHandle<R>, html: String, out: &Path) -> Result<(), Error> {
    let staged: PathBuf = out.with_file_name(format!(
        ".{}.{}.part",
        out.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    let (tx, rx) = tokio::sync::oneshot::channel();
    let target = staged.clone();
    app.run_on_main_thread(move || {
        super::pdf::print(&html, &target, move |result| {
            let _ = tx.send(result);
        });
    })
    .map_err(|e| Error::config("printing the PDF").because(e))?;
    let printed = rx
        .await
        .map_err(|e| Error::config("printing the PDF").because(e))?;
    if let Err(e) = printed {
        let _ = std::fs::remove_file(&staged);
        return Err(Error::io(
            "the PDF was not printed",
            std::io::Error::other(e),
        ));
    }
    std::fs::rename(&staged, out).map_err(|e| {
        let _ = std::fs::remove_file(&staged);
        Error::io(format!("writing {}", out.display()), e)
    })
}

#[cfg(not(target_os = "linux"))]
async fn print_pdf<R: Runtime>(_: &AppHandle<R>, _: String, _: &Path) -> Result<(), Error> {
    Err(Error::config(
        "PDF export is printed with WebKitGTK, on Linux only so far",
    ))
}
