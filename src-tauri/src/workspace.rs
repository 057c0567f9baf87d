//! What the desktop app opens: a workspace folder and a notebook in it, the recently used
//! workspaces, and notebooks saved so that a crash mid-save never loses one.
//!
//! Notebooks are data the person asked for, read and written where they point; nothing here
//! imports or executes anything from the workspace.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

pub mod files;

/// The notebook a folder opens when it has none.
pub const DEFAULT_NOTEBOOK: &str = "Untitled.ipynb";

/// How many recent workspaces are remembered.
const RECENT_MAX: usize = 10;

/// A workspace and the notebook shown in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The folder kernels run in (absolute, links resolved).
    pub workspace: PathBuf,
    /// The notebook (absolute); it may not exist yet.
    pub notebook: PathBuf,
}

impl Target {
    /// What `ipybox open PATH` opens: a `.ipynb` file in its folder, or a folder with its
    /// most recently changed notebook (or `Untitled.ipynb`, made on first save).
    pub fn resolve(path: &Path) -> Result<Target> {
        let is_notebook = path.extension().is_some_and(|e| e == "ipynb");
        if is_notebook && !path.is_dir() {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let workspace = canonical(dir)?;
            let name = path.file_name().ok_or_else(|| {
                Error::config(format!("{} is not a notebook file", path.display()))
            })?;
            return Ok(Target {
                notebook: workspace.join(name),
                workspace,
            });
        }
        let workspace = canonical(path)?;
        if !workspace.is_dir() {
            return Err(Error::config(format!(
                "{} is neither a folder nor a .ipynb notebook",
                path.display()
            )));
        }
        let notebook = list_notebooks(&workspace)
            .into_iter()
            .max_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
            .unwrap_or_else(|| workspace.join(DEFAULT_NOTEBOOK));
        Ok(Target {
            workspace,
            notebook,
        })
    }

    /// The window title: `ipybox — NAME`.
    pub fn title(&self) -> String {
        format!("ipybox — {}", display_name(&self.notebook))
    }
}

/// The name a person knows a path by (its last component).
pub fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn canonical(path: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(path).map_err(|e| Error::io(format!("opening {}", path.display()), e))
}

/// The `.ipynb` files directly in `workspace` (not hidden ones, not checkpoints), by name.
pub fn list_notebooks(workspace: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(workspace) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.')
                && name.ends_with(".ipynb")
                && e.file_type().is_ok_and(|t| t.is_file())
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// Read a notebook file; `None` when it does not exist yet.
pub fn read_notebook(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
    }
}

/// The recently opened workspaces, newest first, kept in ipybox's data directory.
#[derive(Debug, Clone)]
pub struct Recent {
    file: PathBuf,
}

impl Recent {
    /// The list kept in `home` (ipybox's data directory).
    pub fn new(home: &Path) -> Recent {
        Recent {
            file: home.join("recent-workspaces.json"),
        }
    }

    /// The workspaces, newest first (ones that no longer exist are left out).
    pub fn list(&self) -> Vec<PathBuf> {
        let Ok(text) = std::fs::read_to_string(&self.file) else {
            return Vec::new();
        };
        serde_json::from_str::<Vec<PathBuf>>(&text)
            .unwrap_or_default()
            .into_iter()
            .filter(|p| p.is_dir())
            .collect()
    }

    /// Put `workspace` first.
    pub fn push(&self, workspace: &Path) -> Result<()> {
        let mut list = self.list();
        list.retain(|p| p != workspace);
        list.insert(0, workspace.to_path_buf());
        list.truncate(RECENT_MAX);
        let text = serde_json::to_vec_pretty(&list).unwrap_or_default();
        crate::fsutil::write_private(&self.file, &text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_opens_its_newest_notebook_or_an_untitled_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = std::fs::canonicalize(dir.path()).expect("canonical");
        let empty = Target::resolve(&ws).expect("a folder");
        assert_eq!(empty.notebook, ws.join(DEFAULT_NOTEBOOK));
        assert_eq!(empty.title(), "ipybox — Untitled.ipynb");
        std::fs::write(ws.join("old.ipynb"), "{}").expect("write");
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(ws.join("new.ipynb"), "{}").expect("write");
        std::fs::write(ws.join(".hidden.ipynb"), "{}").expect("write");
        assert_eq!(
            Target::resolve(&ws).expect("a folder").notebook,
            ws.join("new.ipynb"),
            "the most recently changed notebook"
        );
        assert_eq!(list_notebooks(&ws).len(), 2, "hidden files are not listed");
        let file = Target::resolve(&ws.join("later.ipynb")).expect("a new notebook");
        assert_eq!(file.workspace, ws, "a notebook's workspace is its folder");
        assert!(
            Target::resolve(&ws.join("missing-dir")).is_err(),
            "a missing folder is an error, not an empty workspace"
        );
    }

    #[test]
    fn recent_workspaces_are_newest_first_without_duplicates() {
        let home = tempfile::tempdir().expect("tempdir");
        let a = tempfile::tempdir().expect("tempdir");
        let b = tempfile::tempdir().expect("tempdir");
        let recent = Recent::new(home.path());
        recent.push(a.path()).expect("push");
        recent.push(b.path()).expect("push");
        recent.push(a.path()).expect("push");
        assert_eq!(
            recent.list(),
            vec![a.path().to_path_buf(), b.path().to_path_buf()]
        );
    }
}
