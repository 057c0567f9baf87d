//! Notebook trust, as JupyterLab has it: the HTML and SVG outputs of a notebook this
//! computer did not produce are shown as inert text until the person trusts it. A notebook
//! the app saved with only outputs it produced (or the person trusted) is signed: an
//! HMAC-SHA256 of its text under a key kept in ipybox's data directory. The signatures live
//! there too, never in the file, so a notebook cannot vouch for itself and kernel code
//! (which can write the workspace, not the data directory when sandboxed) cannot forge one.

use std::io::Write;
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::error::{Error, Result};

/// Signatures kept; older ones are dropped when the file holds twice as many.
const KEPT: usize = 5000;

/// The signatures of trusted notebooks, in `<data dir>/trust/`.
#[derive(Debug, Clone)]
pub struct TrustStore {
    dir: PathBuf,
    kept: usize,
}

impl TrustStore {
    /// The store in ipybox's data directory `home`.
    pub fn at(home: &Path) -> TrustStore {
        TrustStore {
            dir: home.join("trust"),
            kept: KEPT,
        }
    }

    fn key(&self) -> Result<Vec<u8>> {
        let path = self.dir.join("key");
        match std::fs::read(&path) {
            Ok(key) if !key.is_empty() => Ok(key),
            Ok(_) | Err(_) => {
                crate::fsutil::create_private_dir(&self.dir)?;
                let key = crate::auth::new_token().into_bytes();
                crate::fsutil::write_private(&path, &key)?;
                Ok(key)
            }
        }
    }

    fn signature(&self, text: &str) -> Result<String> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key()?)
            .map_err(|e| Error::config(format!("the notebook trust key: {e}")))?;
        mac.update(text.as_bytes());
        Ok(mac
            .finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect())
    }

    fn signatures_path(&self) -> PathBuf {
        self.dir.join("signatures")
    }

    /// Whether a notebook with exactly `text` was saved here or trusted by the person.
    pub fn is_trusted(&self, text: &str) -> Result<bool> {
        let Ok(kept) = std::fs::read_to_string(self.signatures_path()) else {
            return Ok(false);
        };
        let signature = self.signature(text)?;
        Ok(kept.lines().any(|l| l == signature))
    }

    /// Sign `text`: a notebook with it is trusted from now on.
    pub fn trust(&self, text: &str) -> Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let signature = self.signature(text)?;
        let path = self.signatures_path();
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        if kept.lines().any(|l| l == signature) {
            return Ok(());
        }
        let lines = kept.lines().count();
        if lines >= 2 * self.kept {
            let mut newest: Vec<&str> = kept.lines().skip(lines - self.kept + 1).collect();
            newest.push(&signature);
            let mut text = newest.join("\n");
            text.push('\n');
            return crate::fsutil::write_private(&path, text.as_bytes());
        }
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .and_then(|mut f| f.write_all(format!("{signature}\n").as_bytes()))
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notebook_is_trusted_only_as_signed() {
        let home = tempfile::tempdir().expect("tempdir");
        let store = TrustStore::at(home.path());
        let text = r#"{"cells": [], "nbformat": 4}"#;
        assert!(
            !store.is_trusted(text).expect("checked"),
            "nothing is trusted at first"
        );
        store.trust(text).expect("signed");
        assert!(store.is_trusted(text).expect("checked"));
        assert!(
            !store.is_trusted(&text.replace("4", "5")).expect("checked"),
            "a changed notebook is not"
        );
        // Another key (another computer, a new data directory): nothing carries over.
        let other = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(other.path().join("trust")).expect("dir");
        std::fs::copy(
            home.path().join("trust/signatures"),
            other.path().join("trust/signatures"),
        )
        .expect("copied");
        assert!(
            !TrustStore::at(other.path())
                .is_trusted(text)
                .expect("checked")
        );
        use std::os::unix::fs::PermissionsExt;
        for file in ["key", "signatures"] {
            let mode = std::fs::metadata(home.path().join("trust").join(file))
                .expect("kept")
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "{file} is private");
        }
    }

    #[test]
    fn old_signatures_are_dropped_past_the_limit() {
        let home = tempfile::tempdir().expect("tempdir");
        let store = TrustStore {
            kept: 50,
            ..TrustStore::at(home.path())
        };
        for i in 0..2 * store.kept + 1 {
            store.trust(&i.to_string()).expect("signed");
        }
        let lines = std::fs::read_to_string(home.path().join("trust/signatures"))
            .expect("kept")
            .lines()
            .count();
        assert!(lines <= store.kept + 1, "{lines}");
        assert!(
            store
                .is_trusted(&(2 * store.kept).to_string())
                .expect("checked")
        );
        assert!(!store.is_trusted("0").expect("checked"));
    }
}
