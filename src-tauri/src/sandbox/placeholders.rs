//! Write guards for paths that do not exist yet in the workspace.
//!
//! srt keeps sandboxed code from creating a write-protected path (`.env`, `.bashrc`,
//! `.mcp.json`, `.vscode/`, `.git/hooks`, …) by binding an empty, read-only placeholder over
//! it, which it creates on the host and removes when it exits. Two srt sandboxes on one
//! workspace (a reset's fresh sandbox beside the old one, two sessions) then share the
//! placeholder, and the first to exit removes it from under the other, whose guard silently
//! stops working. So ipybox makes those placeholders itself before any srt starts: srt then
//! finds existing paths, binds them read-only and leaves them alone. ipybox removes them when
//! the last of its sandboxes on the workspace stops, if they are still empty.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// What srt 0.0.78 write-protects in its working directory (the workspace): files, then
/// directories.
pub(super) const GUARDED_FILES: [&str; 10] = [
    ".env",
    ".gitconfig",
    ".gitmodules",
    ".bashrc",
    ".bash_profile",
    ".zshrc",
    ".zprofile",
    ".profile",
    ".ripgreprc",
    ".mcp.json",
];
pub(super) const GUARDED_DIRS: [&str; 4] =
    [".vscode", ".idea", ".claude/commands", ".claude/agents"];

/// One sandbox's hold on the workspace's placeholders; dropping it (after the sandbox's
/// processes are gone) releases them.
#[derive(Debug)]
pub struct Guard {
    dir: PathBuf,
    holder: PathBuf,
    workspace: PathBuf,
}

/// Create the placeholders for `workspace` (the guarded names, and `extra` paths inside it
/// that the policy write-protects), recording what was created in `dir` (this workspace's
/// directory in ipybox's data directory), and register a holder.
pub fn hold(dir: &Path, workspace: &Path, extra: &[PathBuf]) -> Result<Guard> {
    crate::fsutil::create_private_dir(&dir.join("sandboxes"))?;
    let _lock = lock(dir)?;
    let mut created = read_created(dir);
    let mut make = |path: PathBuf, is_dir: bool| -> Result<()> {
        // Only absent paths below the workspace, never through a link.
        if !path.starts_with(workspace) || std::fs::symlink_metadata(&path).is_ok() {
            return Ok(());
        }
        let mut missing = Vec::new();
        let mut p = path.as_path();
        while p != workspace && std::fs::symlink_metadata(p).is_err() {
            missing.push(p.to_path_buf());
            p = match p.parent() {
                Some(parent) => parent,
                None => break,
            };
        }
        if std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_dir()) {
            return Ok(()); // under a file: cannot be created at all
        }
        for (i, component) in missing.iter().rev().enumerate() {
            let leaf = i + 1 == missing.len();
            let made = if leaf && !is_dir {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(component)
                    .map(drop)
            } else {
                std::fs::create_dir(component)
            };
            made.map_err(|e| Error::io(format!("creating {}", component.display()), e))?;
            created.push(component.clone());
        }
        Ok(())
    };
    for name in GUARDED_FILES {
        make(workspace.join(name), false)?;
    }
    for name in GUARDED_DIRS {
        make(workspace.join(name), true)?;
    }
    if workspace.join(".git").is_dir() {
        make(workspace.join(".git/hooks"), true)?;
    }
    for path in extra {
        if !path.to_string_lossy().contains(['*', '?', '[']) {
            make(path.clone(), false)?;
        }
    }
    write_created(dir, &created)?;
    let holder = dir.join("sandboxes").join(format!(
        "{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::write(&holder, b"")
        .map_err(|e| Error::io(format!("writing {}", holder.display()), e))?;
    Ok(Guard {
        dir: dir.to_path_buf(),
        holder,
        workspace: workspace.to_path_buf(),
    })
}

impl Drop for Guard {
    fn drop(&mut self) {
        let Ok(_lock) = lock(&self.dir) else { return };
        let _ = std::fs::remove_file(&self.holder);
        // Holders of processes that are gone (killed) do not count.
        let live = std::fs::read_dir(self.dir.join("sandboxes"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let alive = name
                    .split('-')
                    .next()
                    .and_then(|p| p.parse::<u32>().ok())
                    .is_some_and(crate::process::pid_exists);
                if !alive {
                    let _ = std::fs::remove_file(e.path());
                }
                alive
            })
            .count();
        if live > 0 {
            return;
        }
        // Deepest first, and only what is still an untouched placeholder.
        let mut created = read_created(&self.dir);
        created.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        for path in &created {
            if !path.starts_with(&self.workspace) {
                continue;
            }
            match std::fs::symlink_metadata(path) {
                Ok(m) if m.is_file() && m.len() == 0 => {
                    let _ = std::fs::remove_file(path);
                }
                Ok(m) if m.is_dir() => {
                    let _ = std::fs::remove_dir(path); // fails unless empty
                }
                _ => {}
            }
        }
        let _ = write_created(&self.dir, &[]);
    }
}

fn lock(dir: &Path) -> Result<std::fs::File> {
    let path = dir.join("sandbox.lock");
    let file = std::fs::File::create(&path)
        .map_err(|e| Error::io(format!("creating {}", path.display()), e))?;
    file.lock()
        .map_err(|e| Error::io(format!("locking {}", path.display()), e))?;
    Ok(file)
}

fn read_created(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_to_string(dir.join("placeholders.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

fn write_created(dir: &Path, created: &[PathBuf]) -> Result<()> {
    let path = dir.join("placeholders.json");
    let mut unique: Vec<&PathBuf> = created.iter().collect();
    unique.sort();
    unique.dedup();
    crate::fsutil::write_private(
        &path,
        serde_json::to_string(&unique)
            .unwrap_or_default()
            .as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_live_while_held_and_leave_what_the_user_made() {
        let data = tempfile::tempdir().expect("tempdir");
        let ws = tempfile::tempdir().expect("tempdir");
        let ws = std::fs::canonicalize(ws.path()).expect("canonical");
        std::fs::write(ws.join(".bashrc"), "mine").expect("write");
        let a = hold(data.path(), &ws, &[ws.join("locked.txt")]).expect("hold");
        let b = hold(data.path(), &ws, &[]).expect("hold twice");
        for p in [
            ".env",
            ".mcp.json",
            ".vscode",
            ".claude/commands",
            "locked.txt",
        ] {
            assert!(ws.join(p).exists(), "{p} is guarded while a sandbox runs");
        }
        drop(a);
        assert!(ws.join(".env").exists(), "another sandbox still holds them");
        std::fs::write(ws.join(".gitconfig"), "[user]").expect("the user writes one");
        drop(b);
        for p in [".env", ".mcp.json", ".vscode", ".claude", "locked.txt"] {
            assert!(!ws.join(p).exists(), "{p} is removed with the last sandbox");
        }
        assert_eq!(
            std::fs::read_to_string(ws.join(".bashrc")).expect("kept"),
            "mine"
        );
        assert!(
            ws.join(".gitconfig").exists(),
            "a file with content is kept"
        );
    }
}
