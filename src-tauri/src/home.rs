//! ipybox's data directory, the directory it keeps for each workspace there, and the record
//! of every data directory ipybox has used.
//!
//! Everything ipybox keeps about a workspace (its MCP registry, approval rules, audit log,
//! write guards) lives here, never in the workspace: kernel code can write the workspace,
//! and the host never reads configuration from a place kernel code can write.
//!
//! A person may use several data directories (the default one, and each `IPYBOX_HOME` they
//! set). A sandbox hides them all, not only the one its session uses, so ipybox records each
//! one it uses ([`known`]) in the user's state directory, which sandboxes hide too.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

mod known;

#[cfg(test)]
pub(crate) use known::KnownHomes;
pub use known::hidden_homes;

/// ipybox's data directory: `$IPYBOX_HOME`, else `<XDG data dir>/ipybox`. Recorded among
/// the person's data directories ([`known`]) the first time a process uses it.
pub fn ipybox_home() -> Result<PathBuf> {
    let home = match std::env::var_os("IPYBOX_HOME").filter(|h| !h.is_empty()) {
        Some(home) => PathBuf::from(home),
        None => default_home()
            .ok_or_else(|| Error::python_env("cannot find a data directory: set IPYBOX_HOME"))?,
    };
    known::remember(&home);
    Ok(home)
}

/// The data directory when `IPYBOX_HOME` is not set: `<XDG data dir>/ipybox`.
pub fn default_home() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("ipybox"))
}

/// Where ipybox's sockets live: `$XDG_RUNTIME_DIR/ipybox` (the user's own, emptied at
/// logout), else `run/` in ipybox's data directory `home`.
pub fn runtime_dir(home: &Path) -> PathBuf {
    std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty() && Path::new(d).is_absolute())
        .map(|d| PathBuf::from(d).join("ipybox"))
        .unwrap_or_else(|| home.join("run"))
}

/// The hash that names `workspace` (a canonical path) in [`workspace_dir`] and in socket
/// names.
pub fn workspace_hash(workspace: &Path) -> String {
    let hash = workspace
        .to_string_lossy()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    format!("{hash:016x}")
}

/// The directory kept for `workspace` (a canonical path) under `home`:
/// `workspaces/NAME-HASH`, NAME a readable part of the folder's name and HASH (FNV-1a) of
/// its whole path.
pub fn workspace_dir(home: &Path, workspace: &Path) -> PathBuf {
    let hash = workspace_hash(workspace);
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(32)
        .collect();
    home.join("workspaces").join(format!("{name}-{hash}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_dir_is_stable_and_named_after_the_folder() {
        let home = Path::new("/data/ipybox");
        let dir = workspace_dir(home, Path::new("/home/u/my project!"));
        assert_eq!(dir, workspace_dir(home, Path::new("/home/u/my project!")));
        let name = dir
            .file_name()
            .expect("a file name")
            .to_string_lossy()
            .into_owned();
        assert!(name.starts_with("myproject-"), "{name}");
        assert_eq!(name.len(), "myproject-".len() + 16);
        assert_ne!(dir, workspace_dir(home, Path::new("/home/v/my project!")));
        assert!(dir.starts_with(home.join("workspaces")));
    }
}
