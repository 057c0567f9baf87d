//! Writing into a directory that untrusted code can also change.
//!
//! Kernel code can write the workspace, so it can swap `images/` or `mcptools/` for a link
//! to any place the user can write. ipybox writes there on the host; [`Dir`] makes sure it
//! writes only into the directory it meant: the directory is opened once and every later
//! operation goes through its descriptor (`/proc/self/fd/N/<name>`), files are created with
//! `O_EXCL` (never through a link) and replaced by renaming (a link is replaced, not followed).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// A directory given as a trusted base (absolute, links resolved when the session started)
/// and components below it that kernel code may have replaced: each is opened without
/// following links, every time, and created when missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Anchored {
    base: PathBuf,
    below: Vec<std::ffi::OsString>,
}

impl Anchored {
    /// `path` anchored at `trusted` when it lies inside it (compared by components, without
    /// resolving links in the part below), else at `path` itself with its links resolved
    /// now (a place outside the workspace, the user's own).
    pub(crate) fn new(path: &Path, trusted: &Path) -> Anchored {
        match path.strip_prefix(trusted) {
            Ok(rest) => Anchored {
                base: trusted.to_path_buf(),
                below: rest.iter().map(|c| c.to_owned()).collect(),
            },
            Err(_) => Anchored {
                base: resolve_existing_links(path),
                below: Vec::new(),
            },
        }
    }

    /// The directory's path (for messages and results).
    pub(crate) fn path(&self) -> PathBuf {
        self.below.iter().fold(self.base.clone(), |p, c| p.join(c))
    }

    /// Open the directory, creating missing components; a component that is a link (or
    /// not a directory) is an error naming it.
    pub(crate) fn open(&self) -> io::Result<Dir> {
        let mut dir = Dir::open_exact(&self.base)?;
        for component in &self.below {
            let name = component.to_string_lossy();
            match std::fs::create_dir(dir.join(&name)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
            dir = Dir::open_nofollow(&dir.join(&name)).map_err(|e| {
                io::Error::other(format!(
                    "{} is a link or not a directory ({e}); ipybox does not write through links in the workspace",
                    self.path().display()
                ))
            })?;
        }
        Ok(dir)
    }
}

/// `path` with the symbolic links of its existing part resolved.
fn resolve_existing_links(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return rest.iter().rev().fold(real, |p, c| p.join(c));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Addressing a directory through its descriptor by path needs Linux's `/proc/self/fd`.
fn linux_only() -> io::Result<()> {
    if cfg!(target_os = "linux") {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "writing safely into the workspace needs Linux's /proc/self/fd; this system is not supported yet",
        ))
    }
}

/// An opened directory, addressed through its descriptor.
#[derive(Debug)]
pub(crate) struct Dir {
    handle: File,
}

impl Dir {
    /// Open `path`, refusing a link at its last component (`ENOTDIR` or `ELOOP`).
    pub(crate) fn open_nofollow(path: &Path) -> io::Result<Dir> {
        linux_only()?;
        let handle = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(path)?;
        Ok(Dir { handle })
    }

    /// Open `path`, which must resolve to exactly `path` (absolute, links already resolved):
    /// the error names where it leads instead.
    pub(crate) fn open_exact(path: &Path) -> io::Result<Dir> {
        linux_only()?;
        let handle = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(path)?;
        let dir = Dir { handle };
        let real = std::fs::read_link(dir.join(""))?;
        if real != path {
            return Err(io::Error::other(format!(
                "{} now leads to {}",
                path.display(),
                real.display()
            )));
        }
        Ok(dir)
    }

    /// `name` inside this directory, as a path through its descriptor.
    pub(crate) fn join(&self, name: &str) -> PathBuf {
        let base = PathBuf::from(format!("/proc/self/fd/{}", self.handle.as_raw_fd()));
        if name.is_empty() {
            base
        } else {
            base.join(name)
        }
    }

    /// Create `name`, which must not exist yet (so never through a link).
    pub(crate) fn create_file(&self, name: &str, contents: &[u8]) -> io::Result<()> {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.join(name))?
            .write_all(contents)
    }

    /// Replace `name` with `contents`: a new file renamed over it.
    pub(crate) fn replace_file(&self, name: &str, contents: &[u8]) -> io::Result<()> {
        let tmp = format!(".{name}.tmp-{}", uuid::Uuid::new_v4().simple());
        self.create_file(&tmp, contents)?;
        std::fs::rename(self.join(&tmp), self.join(name)).inspect_err(|_| {
            let _ = std::fs::remove_file(self.join(&tmp));
        })
    }

    /// Remove the entry `name` if there is one: a directory with its contents, a file or a
    /// link (itself, not what it points to).
    pub(crate) fn remove(&self, name: &str) -> io::Result<()> {
        let path = self.join(name);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
            Ok(_) => std::fs::remove_file(&path),
            Err(_) => Ok(()),
        }
    }

    /// Is `name` a regular file (not a link)?
    pub(crate) fn is_file(&self, name: &str) -> bool {
        std::fs::symlink_metadata(self.join(name)).is_ok_and(|m| m.is_file())
    }
}

/// Write `contents` to `path` atomically, readable and writable by the user only from the
/// first byte: a new file (`O_EXCL`, mode 0600, never through a link) in the same directory,
/// flushed, then renamed over `path`. The directory is created (0700) when missing. Every
/// file in ipybox's data directory is written this way.
pub(crate) fn write_private(path: &Path, contents: &[u8]) -> crate::error::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        create_private_dir(dir)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
    let write = || -> io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        crate::error::Error::io(format!("writing {}", path.display()), e)
    })
}

/// Make what ipybox keeps in `home` (its data directory) private, for installs made before
/// its files were written 0600: the directory and every directory below it 0700, every
/// regular file 0600. Links are left alone (never followed); the kernels' Python
/// environment, the sandbox runtime (programs, not data) and the sessions' scratch
/// directories are not walked (their directories are made private, which covers them).
pub fn make_private(home: &Path) {
    use std::os::unix::fs::PermissionsExt;
    const PROGRAMS: [&str; 5] = ["venv", "srt", "mplconfig", "sessions", "empty"];
    fn walk(dir: &Path, depth: usize) {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if depth == 0 && PROGRAMS.iter().any(|p| entry.file_name() == *p) {
                let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700));
                continue;
            }
            if kind.is_dir() {
                if depth < 6 {
                    walk(&path, depth + 1);
                }
            } else if kind.is_file()
                && let Ok(meta) = entry.metadata()
                && meta.permissions().mode() & 0o077 != 0
            {
                let mode = meta.permissions().mode() & 0o700;
                let _ =
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode | 0o600));
            }
        }
    }
    if std::fs::symlink_metadata(home).is_ok_and(|m| m.is_dir()) {
        walk(home, 0);
    }
}

/// Create `dir` (and its parents), the last one readable and writable by the user only.
pub(crate) fn create_private_dir(dir: &Path) -> crate::error::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| crate::error::Error::io(format!("creating {}", dir.display()), e))
}

/// Write `contents` to `path` atomically: a new file beside it, flushed to disk, renamed
/// over it (keeping its permissions), and the folder flushed. Killing the process at any
/// point leaves either the old notebook or the new one, never a torn file.
#[cfg(any(test, feature = "desktop"))]
pub(crate) fn save_atomic(path: &Path, contents: &[u8]) -> crate::error::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| crate::error::Error::config(format!("cannot save to {}", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.ipybox-{}.tmp",
        name.to_string_lossy(),
        uuid::Uuid::new_v4().simple()
    ));
    let mode = std::fs::metadata(path)
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o7777)
        .unwrap_or(0o644);
    let write = || -> std::io::Result<()> {
        // create_new: never through a link planted at the temporary name.
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        File::open(dir)?.sync_all()
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        crate::error::Error::io(format!("saving {}", path.display()), e)
    })
}

/// `path` with `.` and `..` folded away without asking the file system (`/a/b/../c` is
/// `/a/c`, whatever links `b` is).
pub fn lexically_normal(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod private_tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p)
            .expect("there")
            .permissions()
            .mode()
            & 0o777
    }

    #[test]
    fn private_files_are_private_from_the_first_byte_and_never_written_through_a_link() {
        let home = tempfile::tempdir().expect("tempdir");
        let file = home.path().join("a/b/secret.json");
        write_private(&file, b"one").expect("written");
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&home.path().join("a")), 0o700);
        assert_eq!(mode(&home.path().join("a/b")), 0o700);
        write_private(&file, b"two").expect("replaced");
        assert_eq!(std::fs::read(&file).expect("read"), b"two");
        assert_eq!(mode(&file), 0o600);
        let target = home.path().join("elsewhere");
        std::fs::write(&target, b"kept").expect("write");
        let link = home.path().join("a/b/link.json");
        std::os::unix::fs::symlink(&target, &link).expect("link");
        write_private(&link, b"new").expect("replaces the link");
        assert_eq!(
            std::fs::read(&target).expect("read"),
            b"kept",
            "not written through"
        );
        assert_eq!(
            std::fs::read_dir(home.path().join("a/b"))
                .expect("list")
                .count(),
            2,
            "no temporary file is left behind"
        );
    }

    #[test]
    fn an_older_install_is_made_private() {
        let home = tempfile::tempdir().expect("tempdir");
        let ws = home.path().join("workspaces/proj-1");
        std::fs::create_dir_all(&ws).expect("dirs");
        std::fs::write(ws.join("servers.json"), b"{}").expect("write");
        std::fs::create_dir_all(home.path().join("venv/bin")).expect("venv");
        std::fs::write(home.path().join("venv/bin/python"), b"").expect("write");
        for p in [home.path(), &home.path().join("workspaces"), &ws] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        std::fs::set_permissions(
            ws.join("servers.json"),
            std::fs::Permissions::from_mode(0o644),
        )
        .expect("chmod");
        let python = mode(&home.path().join("venv/bin/python"));
        make_private(home.path());
        assert_eq!(mode(home.path()), 0o700);
        assert_eq!(mode(&ws), 0o700);
        assert_eq!(mode(&ws.join("servers.json")), 0o600);
        assert_eq!(
            mode(&home.path().join("venv")),
            0o700,
            "programs: their folder only"
        );
        assert_eq!(
            mode(&home.path().join("venv/bin/python")),
            python,
            "and nothing inside"
        );
    }

    #[test]
    fn saving_replaces_the_file_whole_and_keeps_its_mode() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("n.ipynb");
        std::fs::write(&path, "old").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        save_atomic(&path, b"new").expect("saved");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new");
        assert_eq!(
            mode(&path) & 0o777,
            0o600,
            "a private notebook stays private"
        );
        let leftovers = std::fs::read_dir(dir.path()).expect("list").count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
    }
}
