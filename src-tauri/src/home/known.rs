//! The record of every data directory ipybox has used, so that a sandbox hides them all.
//!
//! `homes` in ipybox's directory of the user's state directory (`$XDG_STATE_HOME/ipybox`,
//! else `~/.local/state/ipybox`): one absolute path a line, appended (under a lock) the first
//! time a process uses a data directory, the directory 0700 and the file 0600. Only the host
//! writes it: sandboxes hide the directory, as they hide every data directory in it.

use std::fs::OpenOptions;
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The file of the record, in its directory.
const FILE: &str = "homes";

/// Past this many lines, recording a home also drops the recorded ones that no longer exist
/// (tests and scripts use many short-lived `IPYBOX_HOME`s).
const COMPACT_AFTER: usize = 256;

/// The data directories ipybox has used, as recorded in `dir/homes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownHomes {
    dir: PathBuf,
}

impl KnownHomes {
    /// The user's record: in `$XDG_STATE_HOME/ipybox`, else `~/.local/state/ipybox`.
    pub fn of_user() -> Option<KnownHomes> {
        let state = std::env::var_os("XDG_STATE_HOME")
            .map(PathBuf::from)
            .filter(|d| d.is_absolute())
            .or_else(|| dirs::home_dir().map(|h| h.join(".local/state")))?;
        Some(KnownHomes::in_dir(state.join("ipybox")))
    }

    /// The record kept in `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> KnownHomes {
        KnownHomes { dir: dir.into() }
    }

    /// The directory the record is kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Add `home` (made absolute) to the record, unless it is there. The directory is made
    /// 0700 and the file 0600 (also when an older one was not), the file is never opened
    /// through a link, and processes recording at once take turns (a lock on the file).
    pub fn record(&self, home: &Path) -> io::Result<()> {
        let home = std::path::absolute(home)?;
        if home.as_os_str().as_bytes().contains(&b'\n') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a path with a line break cannot be recorded",
            ));
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)?;
        make_private(&self.dir, 0o700)?;
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(self.dir.join(FILE))?;
        file.lock()?;
        make_private(&self.dir.join(FILE), 0o600)?;
        let mut text = Vec::new();
        file.read_to_end(&mut text)?;
        let recorded = parse(&text);
        if recorded.contains(&home) {
            return Ok(());
        }
        let mut keep = recorded;
        let mut out = Vec::new();
        if keep.len() >= COMPACT_AFTER {
            keep.retain(|h| h.exists());
            file.set_len(0)?;
        } else {
            keep.clear();
            // A record cut short (no final line break) keeps its last line apart.
            if !text.is_empty() && !text.ends_with(b"\n") {
                out.push(b'\n');
            }
        }
        for h in keep.iter().chain([&home]) {
            out.extend_from_slice(h.as_os_str().as_bytes());
            out.push(b'\n');
        }
        // Appended in one write: a reader without the lock sees whole lines.
        file.write_all(&out)?;
        file.sync_data()
    }

    /// The recorded data directories, in the order they were first used, each once; lines
    /// that are not an absolute path are skipped.
    pub fn list(&self) -> Vec<PathBuf> {
        let read = || -> io::Result<Vec<u8>> {
            let mut file = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(self.dir.join(FILE))?;
            file.lock_shared()?;
            let mut text = Vec::new();
            file.read_to_end(&mut text)?;
            Ok(text)
        };
        read().map(|text| parse(&text)).unwrap_or_default()
    }

    /// What a sandbox hides besides the data directory of its session: `default` (the data
    /// directory without `IPYBOX_HOME`), every recorded one, and this record's directory —
    /// those that exist, links resolved, each once.
    pub fn hidden(&self, default: Option<&Path>) -> Vec<PathBuf> {
        let mut hidden = Vec::new();
        let candidates = default
            .map(Path::to_path_buf)
            .into_iter()
            .chain(self.list())
            .chain([self.dir.clone()]);
        for dir in candidates {
            if let Ok(real) = std::fs::canonicalize(&dir)
                && real.is_dir()
                && !hidden.contains(&real)
            {
                hidden.push(real);
            }
        }
        hidden
    }
}

/// The absolute paths of `text`, one a line, each once.
fn parse(text: &[u8]) -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = Vec::new();
    for line in text.split(|b| *b == b'\n') {
        if !line.starts_with(b"/") || line.contains(&0) {
            continue;
        }
        let home = PathBuf::from(std::ffi::OsStr::from_bytes(line));
        if !homes.contains(&home) {
            homes.push(home);
        }
    }
    homes
}

/// Take group and others' access to `path` away, when they have any.
fn make_private(path: &Path, mode: u32) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// What every sandbox hides besides its session's data directory: the user's other data
/// directories and the record of them ([`KnownHomes::hidden`]).
pub fn hidden_homes() -> Vec<PathBuf> {
    let default = super::default_home();
    match KnownHomes::of_user() {
        Some(known) => known.hidden(default.as_deref()),
        None => default
            .and_then(|d| std::fs::canonicalize(d).ok())
            .filter(|d| d.is_dir())
            .into_iter()
            .collect(),
    }
}

/// Record `home` among the user's [`KnownHomes`], once per process. A failure is logged: it
/// leaves this data directory visible to the sandboxes of others, and stops nothing.
pub(super) fn remember(home: &Path) {
    static RECORDED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut recorded = crate::sync::lock(&RECORDED);
    if recorded.iter().any(|h| h == home) {
        return;
    }
    recorded.push(home.to_path_buf());
    let Some(known) = KnownHomes::of_user() else {
        return;
    };
    if let Err(e) = known.record(home) {
        tracing::warn!(
            error = %e,
            record = %known.dir().join(FILE).display(),
            home = %home.display(),
            "cannot record ipybox's data directory: sandboxes of other data directories will not hide it"
        );
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path)
            .expect("exists")
            .permissions()
            .mode()
            & 0o777
    }

    #[test]
    fn each_home_is_recorded_once_privately_and_read_back_in_order() {
        let root = tempfile::tempdir().expect("a temporary directory");
        let known = KnownHomes::in_dir(root.path().join("state/ipybox"));
        let (a, b) = (root.path().join("a"), root.path().join("b"));
        for home in [&a, &b, &a, &b] {
            known.record(home).expect("recorded");
        }
        assert_eq!(
            known.list(),
            [a.clone(), b.clone()],
            "each home once, in order"
        );
        let file = known.dir().join("homes");
        assert_eq!(
            std::fs::read_to_string(&file).expect("the record"),
            format!("{}\n{}\n", a.display(), b.display()),
            "one line each: a home seen again is not appended"
        );
        assert_eq!(
            mode(known.dir()),
            0o700,
            "the record's directory is the user's only"
        );
        assert_eq!(mode(&file), 0o600, "the record is the user's only");

        // A record left readable by others (an older ipybox, a copy) is made private.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        std::fs::set_permissions(known.dir(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        known.record(&root.path().join("c")).expect("recorded");
        assert_eq!((mode(known.dir()), mode(&file)), (0o700, 0o600));

        // Lines that are not an absolute path are skipped; duplicates read once.
        let mut text = std::fs::read(&file).expect("the record");
        text.extend_from_slice(b"relative/home\n\n   \n\0\n/x/y\0z\n");
        text.extend_from_slice(a.as_os_str().as_bytes());
        text.extend_from_slice(b"\n/other/home\n/other/home/\n\xff/not-absolute\n");
        std::fs::write(&file, text).expect("garbage written");
        assert_eq!(
            known.list(),
            [
                a.clone(),
                b.clone(),
                root.path().join("c"),
                PathBuf::from("/other/home")
            ],
            "garbage skipped, each home once"
        );
    }

    #[test]
    fn odd_paths_are_recorded_as_they_are_or_not_at_all() {
        use std::ffi::OsStr;
        let root = tempfile::tempdir().expect("a temporary directory");
        let known = KnownHomes::in_dir(root.path().join("state"));
        // Not UTF-8: recorded byte for byte.
        let odd = root.path().join(OsStr::from_bytes(b"caf\xe9"));
        known.record(&odd).expect("recorded");
        assert_eq!(known.list(), std::slice::from_ref(&odd));
        // A newline cannot be a line of its own: refused, the record unchanged.
        let split = root.path().join("a\n/etc");
        assert!(
            known.record(&split).is_err(),
            "a path with a newline is refused"
        );
        assert_eq!(known.list(), std::slice::from_ref(&odd));
        // A relative IPYBOX_HOME is recorded as the absolute path it names.
        known.record(Path::new("rel/home")).expect("recorded");
        let cwd = std::env::current_dir().expect("a working directory");
        assert_eq!(known.list(), [odd, cwd.join("rel/home")]);
    }

    #[test]
    fn a_long_record_drops_the_homes_that_are_gone() {
        let root = tempfile::tempdir().expect("a temporary directory");
        let known = KnownHomes::in_dir(root.path().join("state"));
        let kept = root.path().join("kept");
        std::fs::create_dir_all(&kept).expect("a directory");
        known.record(&kept).expect("recorded");
        for i in 1..COMPACT_AFTER {
            known
                .record(&root.path().join(format!("gone-{i}")))
                .expect("recorded");
        }
        assert_eq!(
            known.list().len(),
            COMPACT_AFTER,
            "short of the limit, all are kept"
        );
        let new = root.path().join("new");
        known.record(&new).expect("recorded");
        assert_eq!(
            known.list(),
            [kept, new],
            "the homes that exist, and the new one"
        );
    }

    #[test]
    fn the_record_is_never_written_through_a_link() {
        let root = tempfile::tempdir().expect("a temporary directory");
        let known = KnownHomes::in_dir(root.path().join("state"));
        std::fs::create_dir_all(known.dir()).expect("a directory");
        let target = root.path().join("elsewhere");
        std::fs::write(&target, "").expect("a file");
        std::os::unix::fs::symlink(&target, known.dir().join("homes")).expect("a link");
        assert!(
            known.record(&root.path().join("a")).is_err(),
            "a link is not followed"
        );
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "");
    }

    #[test]
    fn what_sandboxes_hide_is_every_home_that_exists_and_the_record() {
        let root = tempfile::tempdir().expect("a temporary directory");
        let known = KnownHomes::in_dir(root.path().join("state/ipybox"));
        let (a, b, gone, default) = (
            root.path().join("a"),
            root.path().join("b"),
            root.path().join("gone"),
            root.path().join("default"),
        );
        for dir in [&a, &b, &default] {
            std::fs::create_dir_all(dir).expect("a directory");
        }
        let link = root.path().join("link-to-a");
        std::os::unix::fs::symlink(&a, &link).expect("a link");
        for home in [&a, &gone, &link, &b, &default] {
            known.record(home).expect("recorded");
        }
        let real = |p: &Path| std::fs::canonicalize(p).expect("exists");
        assert_eq!(
            known.hidden(Some(&default)),
            [real(&default), real(&a), real(&b), real(known.dir())],
            "the default, the recorded that exist (links resolved, once), the record"
        );
    }
}
