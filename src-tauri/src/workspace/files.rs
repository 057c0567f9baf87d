//! A workspace's notebook files as the window manages them: rename, save as, duplicate.
//! Every path is checked to be a `.ipynb` file directly in the workspace (the side panel
//! lists only those), and nothing is ever written over: a name that is taken is refused in
//! words, so a slip never loses a notebook.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// `path` when it names a notebook file directly in `workspace` (absolute, links of the
/// workspace itself resolved): a visible `.ipynb` name without separators or control
/// characters. Whether the file exists is not checked.
pub fn notebook_in(workspace: &Path, path: &Path) -> Result<PathBuf> {
    let shown = crate::display::escape(&path.display().to_string()).into_owned();
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| Error::config(format!("{shown} is not a notebook file name")))?;
    check_name(name)?;
    let parent = match path.parent() {
        Some(p) if p.is_absolute() => p,
        _ => {
            return Err(Error::config(format!(
                "{shown} is not a full path to a notebook"
            )));
        }
    };
    let parent = std::fs::canonicalize(parent)
        .map_err(|e| Error::io(format!("opening the folder of {shown}"), e))?;
    if parent != workspace {
        return Err(Error::config(format!(
            "{shown} is not in the workspace {}; notebooks are renamed, copied and saved only inside it",
            crate::display::escape(&workspace.display().to_string())
        )));
    }
    Ok(workspace.join(name))
}

/// A notebook's file name as a person may give it: `analysis.ipynb`.
fn check_name(name: &str) -> Result<()> {
    let shown = crate::display::escape(name);
    let stem = name.strip_suffix(".ipynb").unwrap_or("");
    if stem.trim().is_empty() {
        return Err(Error::config(format!(
            "“{shown}” is not a notebook name: give a name ending in .ipynb, such as analysis.ipynb"
        )));
    }
    if name.starts_with('.') {
        return Err(Error::config(format!(
            "“{shown}” would be a hidden file; give a name that does not start with a dot"
        )));
    }
    // Control, bidi and invisible characters (what the escaper would show as `\uXXXX`).
    if name.contains(['/', '\\']) || shown != name {
        return Err(Error::config(format!(
            "“{shown}” has a slash or characters that do not show as themselves; give a plain file name"
        )));
    }
    if name.len() > 255 {
        return Err(Error::config("that name is too long for a file name"));
    }
    Ok(())
}

fn taken(path: &Path) -> Error {
    Error::config(format!(
        "{} already exists; choose another name",
        crate::display::escape(&super::display_name(path))
    ))
}

/// Give the notebook at `from` the name `to` (both checked by [`notebook_in`]); refused when
/// `to` exists. A notebook that was never saved has no file: nothing moves.
pub fn rename(from: &Path, to: &Path) -> Result<()> {
    if from == to {
        return Ok(());
    }
    if std::fs::symlink_metadata(from).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return if std::fs::symlink_metadata(to).is_ok() {
            Err(taken(to))
        } else {
            Ok(())
        };
    }
    // A hard link is made only if the name is free (rename would replace a file there);
    // then the old name goes.
    std::fs::hard_link(from, to).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => taken(to),
        _ => Error::io(
            format!("renaming {} to {}", from.display(), to.display()),
            e,
        ),
    })?;
    std::fs::remove_file(from).map_err(|e| {
        let _ = std::fs::remove_file(to);
        Error::io(format!("renaming {}", from.display()), e)
    })
}

/// Write `contents` as a new file at `path`: complete (a temporary file beside it, flushed,
/// then linked in) and only if the name is free.
pub fn create(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.ipybox-{}.tmp",
        super::display_name(path),
        uuid::Uuid::new_v4().simple()
    ));
    let write = || -> std::io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::hard_link(&tmp, path)?;
        File::open(dir)?.sync_all()
    };
    let result = write();
    let _ = std::fs::remove_file(&tmp);
    result.map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => taken(path),
        _ => Error::io(format!("saving {}", path.display()), e),
    })
}

/// A free name for a copy of `path`, as JupyterLab names them: `name-Copy1.ipynb`,
/// `name-Copy2.ipynb`, …
pub fn copy_name(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = super::display_name(path);
    let stem = name.strip_suffix(".ipynb").unwrap_or(&name);
    (1..)
        .map(|n| dir.join(format!("{stem}-Copy{n}.ipynb")))
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .unwrap_or_else(|| dir.join(format!("{stem}-Copy.ipynb")))
}

/// Copy the notebook at `from` to a new file named by [`copy_name`]; its path.
pub fn duplicate(from: &Path) -> Result<PathBuf> {
    let contents = super::read_notebook(from)?.ok_or_else(|| {
        Error::config(format!(
            "{} has not been saved yet, so there is nothing to duplicate",
            crate::display::escape(&super::display_name(from))
        ))
    })?;
    // Another copy may take the name meanwhile: try the next one.
    for _ in 0..8 {
        let to = copy_name(from);
        match create(&to, contents.as_bytes()) {
            Ok(()) => return Ok(to),
            Err(Error::Config { .. }) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(Error::config("no free name for the copy was found"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = std::fs::canonicalize(dir.path()).expect("canonical");
        (dir, ws)
    }

    #[test]
    fn only_visible_notebook_names_directly_in_the_workspace_pass() {
        let (_d, ws) = ws();
        std::fs::create_dir(ws.join("sub")).expect("mkdir");
        assert_eq!(
            notebook_in(&ws, &ws.join("a b.ipynb")).expect("plain"),
            ws.join("a b.ipynb")
        );
        assert!(
            notebook_in(&ws, &ws.join("sub/../x.ipynb")).is_ok(),
            "the folder is resolved before it is compared"
        );
        let outside = tempfile::tempdir().expect("tempdir");
        for bad in [
            outside.path().join("x.ipynb"),
            ws.join("sub/x.ipynb"),
            ws.join("x.txt"),
            ws.join(".ipynb"),
            ws.join(".hidden.ipynb"),
            ws.join("a\u{202e}b.ipynb"),
            PathBuf::from("x.ipynb"),
            ws.join("missing/x.ipynb"),
        ] {
            let err = notebook_in(&ws, &bad).expect_err(&bad.display().to_string());
            assert!(
                !err.to_string().contains('\u{202e}'),
                "names are shown escaped: {err}"
            );
        }
        // A link in the workspace to a folder outside does not lead out.
        std::os::unix::fs::symlink(outside.path(), ws.join("out")).expect("symlink");
        assert!(notebook_in(&ws, &ws.join("out/x.ipynb")).is_err());
    }

    #[test]
    fn rename_and_create_never_write_over_a_notebook() {
        let (_d, ws) = ws();
        let (a, b) = (ws.join("a.ipynb"), ws.join("b.ipynb"));
        std::fs::write(&a, "A").expect("write");
        std::fs::write(&b, "B").expect("write");
        let err = rename(&a, &b).expect_err("b is taken");
        assert!(err.to_string().contains("already exists"), "{err}");
        assert_eq!(std::fs::read_to_string(&b).expect("read"), "B", "b is kept");
        assert_eq!(std::fs::read_to_string(&a).expect("read"), "A", "a is kept");
        let c = ws.join("c.ipynb");
        rename(&a, &c).expect("renamed");
        assert!(!a.exists() && std::fs::read_to_string(&c).expect("read") == "A");
        rename(&ws.join("never-saved.ipynb"), &ws.join("d.ipynb")).expect("nothing to move");

        assert!(create(&b, b"new").is_err(), "Save As does not replace b");
        assert_eq!(std::fs::read_to_string(&b).expect("read"), "B");
        create(&ws.join("e.ipynb"), b"E").expect("created");
        assert_eq!(
            std::fs::read_to_string(ws.join("e.ipynb")).expect("read"),
            "E"
        );

        assert_eq!(duplicate(&c).expect("copied"), ws.join("c-Copy1.ipynb"));
        assert_eq!(duplicate(&c).expect("copied"), ws.join("c-Copy2.ipynb"));
        assert_eq!(
            std::fs::read_to_string(ws.join("c-Copy2.ipynb")).expect("read"),
            "A"
        );
        assert!(duplicate(&ws.join("never-saved.ipynb")).is_err());
        let names: Vec<String> = std::fs::read_dir(&ws)
            .expect("list")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(names.is_empty(), "no temporary files are left: {names:?}");
    }
}
