//! Secrets ipybox keeps for the person — a remote gateway's token and headers, MCP servers'
//! sign-ins — in the OS keyring (Secret Service over D-Bus on Linux, the Keychain on macOS,
//! the Credential Manager on Windows), or, where no keyring answers, in a file of ipybox's
//! data directory readable by this user only (0600 from the first byte). Never in the
//! workspace, and never in a log line: what is logged is the keyring's error, not the secret.
//! Feature `keyring` (on in the default build, the app and its command line alike); a build
//! without it keeps the files only.

use std::path::Path;

use crate::error::{Error, Result};

/// The keyring service every ipybox secret is kept under.
const SERVICE: &str = "ipybox";

/// Where a secret went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kept {
    /// The OS keyring.
    Keyring,
    /// The private file.
    File,
}

/// The keyring's entry for `account` under ipybox's service.
pub(crate) fn entry(account: &str) -> std::result::Result<keyring::Entry, keyring::Error> {
    keyring::Entry::new(SERVICE, account)
}

/// Keep `text` as `account`'s secret in the keyring, and then no copy in `file`; where no
/// keyring answers, in `file` (0600). `what` names the secret in the log line that says so.
pub(crate) fn keep(account: &str, file: &Path, text: &str, what: &str) -> Result<Kept> {
    match entry(account).and_then(|entry| entry.set_password(text)) {
        Ok(()) => {
            remove_file(file)?;
            Ok(Kept::Keyring)
        }
        Err(e) => {
            tracing::info!("no keyring to keep {what} in ({e}); keeping it in a private file");
            crate::fsutil::write_private(file, text.as_bytes())?;
            Ok(Kept::File)
        }
    }
}

/// `account`'s secret in the keyring; `None` when it keeps none.
pub(crate) fn read(account: &str) -> std::result::Result<Option<String>, keyring::Error> {
    match entry(account).and_then(|entry| entry.get_password()) {
        Ok(text) => Ok(Some(text)),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Take `account`'s secret out of the keyring (none kept is fine).
pub(crate) fn forget(account: &str) -> std::result::Result<(), keyring::Error> {
    match entry(account).and_then(|entry| entry.delete_credential()) {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Remove `path`; gone already is fine.
pub(crate) fn remove_file(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(format!("removing {}", path.display()), e)),
    }
}
