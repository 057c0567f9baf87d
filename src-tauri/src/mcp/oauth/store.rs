//! Where a sign-in's tokens are kept: behind [`TokenStore`], by default a file of its own,
//! 0600, in `oauth/` of ipybox's data directory ([`FileTokenStore`]). Never the workspace,
//! the registry file or anything else kernel code can read. With the `keyring` feature the
//! app and the command line keep them in the OS keyring instead (`keyring_store.rs`), these
//! files the fallback.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// What a sign-in to one server (by its URL) leaves behind: the client ipybox signed in as,
/// and the tokens. Secrets: never logged, never shown (its `Debug` hides them).
#[derive(Clone, Serialize, Deserialize)]
pub struct Saved {
    /// The server's URL, as registered (resolved): tokens go to this server only.
    pub url: String,
    /// The redirect URI the client was registered with (a refresh names the same client).
    pub redirect_uri: String,
    /// A secret the person gave with a pre-registered client ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The client ID and the tokens, as rmcp keeps them.
    pub credentials: StoredCredentials,
}

impl std::fmt::Debug for Saved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Saved")
            .field("url", &self.url)
            .field("client_id", &self.credentials.client_id)
            .finish_non_exhaustive()
    }
}

/// Keeps the tokens of each signed-in server, by URL.
pub trait TokenStore: Send + Sync + std::fmt::Debug {
    /// The sign-in kept for `url`, if any.
    fn load(&self, url: &str) -> Result<Option<Saved>>;
    /// Keep `saved` for its URL, replacing what was kept.
    fn save(&self, saved: &Saved) -> Result<()>;
    /// Forget the sign-in kept for `url` (nothing kept is not an error).
    fn remove(&self, url: &str) -> Result<()>;
}

/// One file per server in a directory of ipybox's data directory, each written 0600 from
/// the first byte ([`crate::fsutil::write_private`]), named by a hash of the URL.
#[derive(Debug, Clone)]
pub struct FileTokenStore {
    dir: PathBuf,
}

impl FileTokenStore {
    /// The store in `oauth/` of ipybox's data directory `home`.
    pub fn in_home(home: &Path) -> Self {
        FileTokenStore {
            dir: home.join("oauth"),
        }
    }

    /// The file that keeps `url`'s sign-in.
    pub fn path(&self, url: &str) -> PathBuf {
        let hash = Sha256::digest(url.as_bytes());
        let name: String = hash[..12].iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{name}.json"))
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self, url: &str) -> Result<Option<Saved>> {
        let path = self.path(url);
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        };
        // A file that does not parse is a sign-in lost, not a failure: signing in again
        // replaces it. Its text is never quoted (it holds tokens).
        let saved: Option<Saved> = serde_json::from_slice(&text).ok();
        Ok(saved.filter(|s| s.url == url))
    }

    fn save(&self, saved: &Saved) -> Result<()> {
        let text = serde_json::to_vec_pretty(saved)
            .map_err(|e| Error::mcp(format!("cannot write a sign-in: {e}")))?;
        crate::fsutil::write_private(&self.path(&saved.url), &text)
    }

    fn remove(&self, url: &str) -> Result<()> {
        let path = self.path(url);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::io(format!("removing {}", path.display()), e))
            }
            _ => Ok(()),
        }
    }
}

/// rmcp's view of one server's sign-in: read from memory (a call costs no file read), each
/// change written through to the [`TokenStore`].
#[derive(Clone)]
pub(crate) struct Credentials {
    url: String,
    redirect_uri: String,
    client_secret: Option<String>,
    current: Arc<RwLock<Option<StoredCredentials>>>,
    store: Arc<dyn TokenStore>,
}

impl Credentials {
    pub(crate) fn new(
        url: &str,
        redirect_uri: &str,
        client_secret: Option<String>,
        current: Option<StoredCredentials>,
        store: Arc<dyn TokenStore>,
    ) -> Self {
        Credentials {
            url: url.to_owned(),
            redirect_uri: redirect_uri.to_owned(),
            client_secret,
            current: Arc::new(RwLock::new(current)),
            store,
        }
    }

    /// The credentials as they are now.
    pub(crate) fn current(&self) -> Option<StoredCredentials> {
        self.current.read().ok().and_then(|c| c.clone())
    }
}

fn store_error(e: Error) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for Credentials {
    async fn load(&self) -> std::result::Result<Option<StoredCredentials>, AuthError> {
        Ok(self.current())
    }

    async fn save(&self, credentials: StoredCredentials) -> std::result::Result<(), AuthError> {
        if credentials.token_response.is_some() {
            self.store
                .save(&Saved {
                    url: self.url.clone(),
                    redirect_uri: self.redirect_uri.clone(),
                    client_secret: self.client_secret.clone(),
                    credentials: credentials.clone(),
                })
                .map_err(store_error)?;
        } else {
            self.store.remove(&self.url).map_err(store_error)?;
        }
        if let Ok(mut current) = self.current.write() {
            *current = Some(credentials);
        }
        Ok(())
    }

    async fn clear(&self) -> std::result::Result<(), AuthError> {
        self.store.remove(&self.url).map_err(store_error)?;
        if let Ok(mut current) = self.current.write() {
            *current = None;
        }
        Ok(())
    }

    async fn on_refresh_token_rejected(
        &self,
        _credentials: &StoredCredentials,
    ) -> std::result::Result<(), AuthError> {
        // The server refused the refresh token: the sign-in is over, and what is kept would
        // only be refused again.
        self.clear().await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn saved(url: &str) -> Saved {
        Saved {
            url: url.to_owned(),
            redirect_uri: "http://127.0.0.1:1/callback".into(),
            client_secret: None,
            credentials: StoredCredentials::new("client".into(), None, vec![], None),
        }
    }

    #[test]
    fn a_sign_in_is_kept_private_and_for_its_url_only() {
        let home = tempfile::tempdir().unwrap();
        let store = FileTokenStore::in_home(home.path());
        store.save(&saved("https://a.example/mcp")).unwrap();
        let path = store.path("https://a.example/mcp");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the token file is the user's alone");
        assert!(
            store.load("https://a.example/mcp").unwrap().is_some(),
            "kept for its URL"
        );
        assert!(
            store.load("https://b.example/mcp").unwrap().is_none(),
            "another server gets nothing"
        );
        store.remove("https://a.example/mcp").unwrap();
        assert!(store.load("https://a.example/mcp").unwrap().is_none());
        store
            .remove("https://a.example/mcp")
            .expect("forgetting twice is fine");
    }

    #[test]
    fn the_debug_form_shows_no_secret() {
        let mut s = saved("https://a.example/mcp");
        s.client_secret = Some("s3cret".into());
        assert!(!format!("{s:?}").contains("s3cret"));
    }
}
