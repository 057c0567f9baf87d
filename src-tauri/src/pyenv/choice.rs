//! Which Python each notebook's kernel runs, kept in ipybox's data directory (beside the
//! workspace's rules and audit log), never in the notebook or the workspace: a notebook file
//! must not choose the interpreter that runs it, and kernel code must not change the choice.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::kernel::PythonChoice;
use crate::error::{Error, Result};

/// The choices of one workspace's notebooks, in one JSON file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonChoices {
    file: PathBuf,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Saved {
    /// By the notebook's absolute path.
    notebooks: BTreeMap<String, PythonChoice>,
}

impl PythonChoices {
    /// The choices kept in `file`.
    pub fn at(file: impl Into<PathBuf>) -> PythonChoices {
        PythonChoices { file: file.into() }
    }

    /// `notebook`'s choice: the managed environment when none was made (or the file cannot
    /// be read, which is logged).
    pub fn get(&self, notebook: &Path) -> PythonChoice {
        match self.load() {
            Ok(saved) => saved
                .notebooks
                .get(&key(notebook))
                .cloned()
                .unwrap_or_default(),
            Err(e) => {
                tracing::warn!("{e}; the notebook runs ipybox's own Python");
                PythonChoice::Managed
            }
        }
    }

    /// Keep `choice` for `notebook` (the managed environment is kept as no choice).
    pub fn set(&self, notebook: &Path, choice: &PythonChoice) -> Result<()> {
        let mut saved = self.load().unwrap_or_default();
        match choice {
            PythonChoice::Managed => saved.notebooks.remove(&key(notebook)),
            other => saved.notebooks.insert(key(notebook), other.clone()),
        };
        if let Some(dir) = self.file.parent() {
            crate::fsutil::create_private_dir(dir)?;
        }
        let json = serde_json::to_vec_pretty(&saved)
            .map_err(|e| Error::config("the notebooks' Python choices").because(e))?;
        crate::fsutil::write_private(&self.file, &json)
    }

    /// `from`'s choice goes with it to `to` (renamed), or is copied there (`keep`: saved as,
    /// duplicated). Nothing to do when `from` has none.
    pub fn carry(&self, from: &Path, to: &Path, keep: bool) -> Result<()> {
        let choice = self.get(from);
        if choice == PythonChoice::Managed {
            return Ok(());
        }
        self.set(to, &choice)?;
        if !keep {
            self.set(from, &PythonChoice::Managed)?;
        }
        Ok(())
    }

    fn load(&self) -> Result<Saved> {
        match std::fs::read(&self.file) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::config(format!("{} cannot be read", self.file.display())).because(e)
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Saved::default()),
            Err(e) => Err(Error::io(format!("reading {}", self.file.display()), e)),
        }
    }
}

fn key(notebook: &Path) -> String {
    notebook.display().to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_choice_is_kept_per_notebook() {
        let dir = tempfile::tempdir().unwrap();
        let store = PythonChoices::at(dir.path().join("ws/python.json"));
        let (a, b) = (Path::new("/ws/a.ipynb"), Path::new("/ws/b.ipynb"));
        assert_eq!(store.get(a), PythonChoice::Managed, "no choice: managed");
        store.set(a, &PythonChoice::Project).unwrap();
        let custom = PythonChoice::Custom {
            path: "/opt/py/bin/python".into(),
        };
        store.set(b, &custom).unwrap();
        let again = PythonChoices::at(dir.path().join("ws/python.json"));
        assert_eq!(again.get(a), PythonChoice::Project, "kept across reads");
        assert_eq!(again.get(b), custom);
        again.set(a, &PythonChoice::Managed).unwrap();
        assert_eq!(again.get(a), PythonChoice::Managed, "back to managed");
        assert_eq!(again.get(b), custom, "the other notebook keeps its own");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("ws/python.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "private to the user");
    }

    #[test]
    fn a_choice_goes_with_a_renamed_notebook_and_is_copied_to_a_saved_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = PythonChoices::at(dir.path().join("python.json"));
        let (a, b, c) = (
            Path::new("/ws/a.ipynb"),
            Path::new("/ws/b.ipynb"),
            Path::new("/ws/c.ipynb"),
        );
        store.set(a, &PythonChoice::Project).unwrap();
        store.carry(a, b, false).unwrap();
        assert_eq!(
            store.get(b),
            PythonChoice::Project,
            "renamed: the choice goes along"
        );
        assert_eq!(
            store.get(a),
            PythonChoice::Managed,
            "and the old name keeps none"
        );
        store.carry(b, c, true).unwrap();
        assert_eq!(store.get(c), PythonChoice::Project, "saved as: copied");
        assert_eq!(store.get(b), PythonChoice::Project, "and kept");
    }

    #[test]
    fn an_unreadable_file_means_managed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("python.json");
        std::fs::write(&file, "{not json").unwrap();
        let store = PythonChoices::at(&file);
        assert_eq!(store.get(Path::new("/ws/a.ipynb")), PythonChoice::Managed);
    }
}
