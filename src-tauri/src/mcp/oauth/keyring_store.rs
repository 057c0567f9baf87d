//! MCP servers' sign-ins in the OS keyring (feature `keyring`), with the 0600 files of
//! [`FileTokenStore`] as the fallback where no keyring answers. The store of the app and of
//! the command line alike, so a sign-in made in one is used by the other.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::store::{FileTokenStore, Saved, TokenStore};
use crate::error::{Error, Result};
use crate::secrets::{Kept, forget, keep, read};

/// MCP servers' sign-ins in the keyring, one entry per data directory and server URL, with
/// the 0600 files as the fallback where no keyring answers (and for sign-ins a build without
/// the keyring kept there).
#[derive(Debug)]
pub struct KeyringTokenStore {
    home: PathBuf,
    files: FileTokenStore,
    /// The keyring did not answer once: the files only from then on, so that the servers
    /// tab does not wait on a D-Bus timeout for each server it lists.
    silent: AtomicBool,
}

impl KeyringTokenStore {
    /// The store of data directory `home`.
    pub fn in_home(home: &Path) -> Self {
        KeyringTokenStore {
            home: home.to_path_buf(),
            files: FileTokenStore::in_home(home),
            silent: AtomicBool::new(false),
        }
    }

    /// What [`super::keep_tokens_with`] takes.
    pub fn make(home: &Path) -> Arc<dyn TokenStore> {
        Arc::new(Self::in_home(home))
    }

    fn account(&self, url: &str) -> String {
        format!("mcp-sign-in:{}:{url}", self.home.display())
    }
}

impl TokenStore for KeyringTokenStore {
    fn load(&self, url: &str) -> Result<Option<Saved>> {
        if self.silent.load(Ordering::Relaxed) {
            return self.files.load(url);
        }
        match read(&self.account(url)) {
            // Text that does not parse is a sign-in lost (signing in again replaces it);
            // it is never quoted, as it holds tokens.
            Ok(Some(text)) => Ok(serde_json::from_str::<Saved>(&text)
                .ok()
                .filter(|s| s.url == url)),
            Ok(None) => self.files.load(url),
            Err(e) => {
                tracing::info!("the keyring did not answer ({e}); looking for a sign-in file");
                self.silent.store(true, Ordering::Relaxed);
                self.files.load(url)
            }
        }
    }

    fn save(&self, saved: &Saved) -> Result<()> {
        let text = serde_json::to_string(saved)
            .map_err(|e| Error::mcp(format!("cannot keep a sign-in: {e}")))?;
        if self.silent.load(Ordering::Relaxed) {
            return crate::fsutil::write_private(&self.files.path(&saved.url), text.as_bytes());
        }
        let kept = keep(
            &self.account(&saved.url),
            &self.files.path(&saved.url),
            &text,
            "an MCP server's sign-in",
        )?;
        if kept == Kept::File {
            self.silent.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    fn remove(&self, url: &str) -> Result<()> {
        if let Err(e) = forget(&self.account(url)) {
            tracing::warn!("the sign-in stays in the keyring: {e}");
        }
        self.files.remove(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::transport::auth::StoredCredentials;

    fn saved(url: &str, secret: &str) -> Saved {
        Saved {
            url: url.to_owned(),
            redirect_uri: "http://127.0.0.1:1/callback".into(),
            client_secret: Some(secret.to_owned()),
            credentials: StoredCredentials::new("client".into(), None, vec![], None),
        }
    }

    /// scripts/test.sh runs this again with GNOME Keyring's Secret Service on a private
    /// session bus (`IPYBOX_TEST_KEYRING`): then the sign-in must be in the keyring and in
    /// no file; without one it is in the 0600 file.
    #[test]
    fn a_sign_in_is_kept_in_the_keyring_with_no_copy_in_a_file_and_forgotten_on_sign_out() {
        let home = tempfile::tempdir().expect("in the test");
        let store = KeyringTokenStore::in_home(home.path());
        let url = "https://docs.example/mcp";
        let file = store.files.path(url);
        store.save(&saved(url, "s3cret")).expect("kept");
        let in_keyring = read(&store.account(url)).ok().flatten();
        if std::env::var_os("IPYBOX_TEST_KEYRING").is_some() {
            let text = in_keyring.as_deref().expect("the keyring answered");
            assert!(
                text.contains("s3cret"),
                "the whole sign-in is in the keyring"
            );
            assert!(
                !file.exists(),
                "no copy in a file when the keyring keeps it"
            );
        } else if in_keyring.is_none() {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&file)
                .expect("kept in a file without a keyring")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "the file is the user's alone");
        }
        let back = store.load(url).expect("read").expect("kept");
        assert_eq!(back.client_secret.as_deref(), Some("s3cret"));
        assert!(
            store
                .load("https://other.example/mcp")
                .expect("read")
                .is_none(),
            "another server gets nothing"
        );
        // A sign-in a build without the keyring kept in a file is found too.
        let cli = FileTokenStore::in_home(home.path());
        cli.save(&saved("https://cli.example/mcp", "t"))
            .expect("in the test");
        assert!(
            store
                .load("https://cli.example/mcp")
                .expect("read")
                .is_some()
        );
        store.remove(url).expect("forgotten");
        assert!(store.load(url).expect("read").is_none(), "signed out");
        assert!(
            read(&store.account(url)).ok().flatten().is_none(),
            "nothing left in the keyring"
        );
        assert!(!file.exists(), "nothing left in a file");
        store
            .remove("https://cli.example/mcp")
            .expect("in the test");
    }
}
