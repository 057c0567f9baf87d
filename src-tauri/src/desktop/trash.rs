//! Deleting a notebook moves it to the trash, where the file manager can restore it: on
//! Linux GIO's `g_file_trash`, the freedesktop.org Trash specification as GNOME implements
//! it (`~/.local/share/Trash`, or `.Trash-$UID` at the top of another file system), already
//! linked through GTK.

use std::path::Path;

use crate::error::{Error, Result};

/// Move `path` to the trash.
#[cfg(target_os = "linux")]
pub fn trash(path: &Path) -> Result<()> {
    use gtk::gio;
    use gtk::gio::prelude::FileExt;
    if std::fs::symlink_metadata(path).is_err() {
        return Err(Error::config(format!(
            "{} does not exist (it was never saved, or it is gone already)",
            crate::display::escape(&crate::workspace::display_name(path))
        )));
    }
    gio::File::for_path(path)
        .trash(gio::Cancellable::NONE)
        .map_err(|e| {
            Error::config(format!(
                "{} could not be moved to the trash; it is still there",
                crate::display::escape(&crate::workspace::display_name(path))
            ))
            .because(e)
        })
}

/// Move `path` to the trash.
#[cfg(not(target_os = "linux"))]
pub fn trash(path: &Path) -> Result<()> {
    Err(Error::config(format!(
        "moving {} to the trash is not available on this system yet; it is still there",
        path.display()
    )))
}
