//! PDF printed by WebKitGTK, the engine of the app's own window: the exported page (see
//! `export`) loaded into an offscreen web view with scripts off and printed to a file
//! with no dialog (`webkit_print_operation_print` to GTK's "Print to File" printer). No
//! LaTeX, no browser: what prints is what the app would render. GTK needs a display; on a
//! machine without one the command line says so (`xvfb-run` gives it one).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use gtk::prelude::*;
use webkit2gtk::{LoadEvent, PrintOperationExt, SettingsExt, WebViewExt};

/// How long a page may take to load and print before the export gives up.
const PRINT_TIMEOUT: Duration = Duration::from_secs(120);

/// Why a PDF was not printed.
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    /// GTK could not start: no display to connect to.
    #[error(
        "printing a PDF needs a display (it is printed by the app's web engine, WebKitGTK); run under `xvfb-run ipybox export …`, or export HTML and print that from a browser"
    )]
    NoDisplay,
    /// WebKit's print operation failed.
    #[error("printing the PDF failed: {0}")]
    Print(String),
    /// The page did not load and print in time.
    #[error("printing the PDF took longer than {} s", PRINT_TIMEOUT.as_secs())]
    Timeout,
}

/// Prints `html` to `out` from the command line: starts GTK on this thread, runs its main
/// loop until the PDF is written, and returns.
pub fn print_standalone(html: &str, out: &Path) -> Result<(), PdfError> {
    gtk::init().map_err(|_| PdfError::NoDisplay)?;
    tracing::debug!("export: GTK started");
    let outcome: Rc<RefCell<Option<Result<(), PdfError>>>> = Rc::new(RefCell::new(None));
    let slot = outcome.clone();
    print(html, out, move |result| {
        *slot.borrow_mut() = Some(result);
        gtk::main_quit();
    });
    gtk::main();
    outcome.take().unwrap_or(Err(PdfError::Timeout))
}

/// Prints `html` to `out`, then calls `done` once. Must run on GTK's main thread (in the app,
/// through `run_on_main_thread`); the page is laid out for A4 with 12 mm margins.
pub fn print(html: &str, out: &Path, done: impl FnOnce(Result<(), PdfError>) + 'static) {
    let done = Rc::new(RefCell::new(Some(done)));
    let window = gtk::OffscreenWindow::new();
    let view = webkit2gtk::WebView::new();
    if let Some(settings) = WebViewExt::settings(&view) {
        // The page holds no script, and its policy allows none: a third lock.
        settings.set_enable_javascript(false);
    }
    window.set_default_size(1000, 1400);
    window.add(&view);
    window.show_all();
    let finish = {
        let done = done.clone();
        let window = window.clone();
        move |result: Result<(), PdfError>| {
            if let Some(done) = done.borrow_mut().take() {
                done(result);
            }
            window.close();
        }
    };
    let finish = Rc::new(finish);
    let uri = file_uri(out);
    let on_timeout = finish.clone();
    let timer = gtk::glib::timeout_add_local_once(PRINT_TIMEOUT, move || {
        on_timeout(Err(PdfError::Timeout))
    });
    let timer = Rc::new(RefCell::new(Some(timer)));
    view.connect_load_changed(move |view, event| {
        if event != LoadEvent::Finished {
            return;
        }
        tracing::debug!("export: the page is loaded, printing");
        let settings = gtk::PrintSettings::new();
        // The name GTK's file backend gives its printer, in the language it runs in.
        settings.set_printer(&gtk::glib::dgettext(Some("gtk30"), "Print to File"));
        settings.set(gtk::PRINT_SETTINGS_OUTPUT_FILE_FORMAT, Some("pdf"));
        settings.set(gtk::PRINT_SETTINGS_OUTPUT_URI, Some(&uri));
        let page = gtk::PageSetup::new();
        page.set_paper_size(&gtk::PaperSize::new(Some(gtk::PAPER_NAME_A4)));
        for set in [
            gtk::PageSetup::set_top_margin,
            gtk::PageSetup::set_bottom_margin,
            gtk::PageSetup::set_left_margin,
            gtk::PageSetup::set_right_margin,
        ] {
            set(&page, 12.0, gtk::Unit::Mm);
        }
        let operation = webkit2gtk::PrintOperation::new(view);
        operation.set_print_settings(&settings);
        operation.set_page_setup(&page);
        let failed = Rc::new(RefCell::new(None::<String>));
        let seen = failed.clone();
        operation.connect_failed(move |_, error| {
            *seen.borrow_mut() = Some(error.to_string());
        });
        let finish = finish.clone();
        let timer = timer.clone();
        operation.connect_finished(move |_| {
            if let Some(timer) = timer.borrow_mut().take() {
                timer.remove();
            }
            tracing::debug!("export: printed");
            finish(match failed.borrow_mut().take() {
                Some(error) => Err(PdfError::Print(error)),
                None => Ok(()),
            });
        });
        operation.print();
    });
    view.load_html(html, None);
}

/// A `file://` URI for an absolute path, each byte outside the unreserved set escaped.
fn file_uri(path: &Path) -> String {
    let path: PathBuf = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut uri = String::from("file://");
    for byte in path.as_os_str().as_encoded_bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(*byte as char);
            }
            b => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_paths_become_escaped_file_uris() {
        assert_eq!(
            file_uri(Path::new("/tmp/a b/ü#?.pdf")),
            "file:///tmp/a%20b/%C3%BC%23%3F.pdf"
        );
    }
}
