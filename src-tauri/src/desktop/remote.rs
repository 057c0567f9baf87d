//! Where a workspace's kernel runs: on this computer (ipybox's own gateway, sandboxed or
//! not), or on a Jupyter Server / Enterprise Gateway someone else runs. The choice is the
//! app's, kept beside the sandbox choice in ipybox's data directory (never in the
//! workspace, which kernel code can write). The server's token and headers are secrets:
//! they go to the OS keyring, or, where no keyring answers, to a file in the same private
//! directory readable by this user only (`secrets.rs`). `--gateway-url` on the command
//! line wins for that run.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::dto::{RemoteChoice, RemoteRequest, SecretPlace};
use crate::audit::WorkspaceState;
use crate::error::{Error, Result};
use crate::executor::RemoteGateway;
use crate::secrets;

/// The token and headers, kept together.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Secret {
    token: Option<String>,
    #[serde(default)]
    headers: Vec<String>,
}

const CHOICE_FILE: &str = "remote.json";
const SECRET_FILE: &str = "gateway-secret.json";

/// The workspace's account in the keyring: named by its whole state directory, so the same
/// workspace under two ipybox data directories keeps two secrets.
fn keyring_account(state: &WorkspaceState) -> String {
    format!("gateway-token:{}", state.dir().display())
}

impl RemoteChoice {
    fn path(state_dir: &Path) -> PathBuf {
        state_dir.join(CHOICE_FILE)
    }

    /// The workspace's server, if its kernels run on one; unreadable counts as none.
    pub fn load(state_dir: &Path) -> Option<RemoteChoice> {
        std::fs::read(Self::path(state_dir))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
    }

    /// The server with its token and headers, read from where they are kept. A secret that
    /// cannot be read (a locked keyring, a file gone) is an error, never a server asked
    /// without its token.
    pub fn gateway(&self, state: &WorkspaceState) -> Result<RemoteGateway> {
        let secret = read_secret(state, self.secret)?;
        Ok(RemoteGateway {
            url: self.url.clone(),
            token: secret.token,
            headers: secret.headers,
        })
    }
}

/// The server `request` names, with the token and headers kept for the same URL where it
/// sends none; checked as the engine checks them.
pub fn gateway_for(request: &RemoteRequest, state: &WorkspaceState) -> Result<RemoteGateway> {
    let url = request.url.trim().to_owned();
    if url.is_empty() {
        return Err(Error::config(
            "enter the server's URL (http:// or https://)",
        ));
    }
    let kept = RemoteChoice::load(state.dir())
        .filter(|c| c.url == url)
        .map(|c| read_secret(state, c.secret))
        .transpose()?
        .unwrap_or_default();
    let token = match &request.token {
        Some(t) if t.trim().is_empty() => None,
        Some(t) => Some(t.trim().to_owned()),
        None => kept.token,
    };
    let headers = match &request.headers {
        Some(h) => h
            .iter()
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty())
            .collect(),
        None => kept.headers,
    };
    let gateway = RemoteGateway {
        url,
        token,
        headers,
    };
    // The same checks the executor makes when it starts: the URL and every header.
    crate::kernel::api::Endpoint::remote(&gateway.url, None, &gateway.headers)?;
    Ok(gateway)
}

/// Keep `gateway` as where `state`'s workspace runs its kernels (`None`: on this computer),
/// its secret in the keyring where one answers, else in a private file. Returns what was
/// kept.
pub fn save(
    state: &WorkspaceState,
    gateway: Option<&RemoteGateway>,
) -> Result<Option<RemoteChoice>> {
    state.create()?;
    let old = RemoteChoice::load(state.dir());
    let Some(gateway) = gateway else {
        if let Some(old) = old {
            forget_secret(state, old.secret);
        }
        secrets::remove_file(&RemoteChoice::path(state.dir()))?;
        return Ok(None);
    };
    let secret = Secret {
        token: gateway.token.clone(),
        headers: gateway.headers.clone(),
    };
    let place = if secret == Secret::default() {
        SecretPlace::None
    } else {
        keep_secret(state, &secret)?
    };
    if let Some(old) = old
        && old.secret != place
    {
        forget_secret(state, old.secret);
    }
    let choice = RemoteChoice {
        url: gateway.url.clone(),
        has_token: gateway.token.is_some(),
        header_names: gateway
            .headers
            .iter()
            .filter_map(|h| h.split_once(':').map(|(n, _)| n.trim().to_owned()))
            .collect(),
        secret: place,
    };
    let text = serde_json::to_vec_pretty(&choice)
        .map_err(|e| Error::config("the workspace's server").because(e))?;
    crate::fsutil::write_private(&RemoteChoice::path(state.dir()), &text)?;
    Ok(Some(choice))
}

fn keep_secret(state: &WorkspaceState, secret: &Secret) -> Result<SecretPlace> {
    let text = serde_json::to_string(secret)
        .map_err(|e| Error::config("the server's token").because(e))?;
    let file = state.dir().join(SECRET_FILE);
    match secrets::keep(&keyring_account(state), &file, &text, "the server's token")? {
        secrets::Kept::Keyring => Ok(SecretPlace::Keyring),
        secrets::Kept::File => Ok(SecretPlace::File),
    }
}

fn read_secret(state: &WorkspaceState, place: SecretPlace) -> Result<Secret> {
    let text = match place {
        SecretPlace::None => return Ok(Secret::default()),
        SecretPlace::Keyring => secrets::read(&keyring_account(state))
            .and_then(|text| text.ok_or(keyring::Error::NoEntry))
            .map_err(|e| {
                Error::config(format!(
                    "the server's token could not be read from the keyring ({e}); unlock the keyring, or enter the token again in Settings"
                ))
            })?,
        SecretPlace::File => {
            let path = state.dir().join(SECRET_FILE);
            std::fs::read_to_string(&path).map_err(|e| {
                Error::config(format!(
                    "the server's token could not be read from {} ({e}); enter it again in Settings",
                    path.display()
                ))
            })?
        }
    };
    serde_json::from_str(&text).map_err(|e| {
        Error::config("the kept token of the server is damaged; enter it again in Settings")
            .because(e)
    })
}

fn forget_secret(state: &WorkspaceState, place: SecretPlace) {
    match place {
        SecretPlace::None => {}
        SecretPlace::Keyring => {
            if let Err(e) = secrets::forget(&keyring_account(state)) {
                tracing::warn!("the old token stays in the keyring: {e}");
            }
        }
        SecretPlace::File => {
            if let Err(e) = secrets::remove_file(&state.dir().join(SECRET_FILE)) {
                tracing::warn!("{e}");
            }
        }
    }
}

/// The server for a session on the workspace of `state`: the command line's when it gave
/// one, else the workspace's choice. An error when the choice cannot be followed.
pub fn remote_for(
    launch: Option<&RemoteGateway>,
    state: Option<&WorkspaceState>,
) -> Result<Option<RemoteGateway>> {
    if let Some(launch) = launch {
        return Ok(Some(launch.clone()));
    }
    let Some(state) = state else { return Ok(None) };
    RemoteChoice::load(state.dir())
        .map(|c| c.gateway(state))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> (tempfile::TempDir, WorkspaceState) {
        let home = tempfile::tempdir().expect("in the test");
        let state = WorkspaceState::new(home.path(), Path::new("/some/workspace"));
        (home, state)
    }

    #[test]
    fn a_server_is_kept_with_its_secret_out_of_the_choice_file() {
        let (_home, state) = state();
        let gateway = RemoteGateway {
            url: "https://jupyter.example.org/base".into(),
            token: Some("s3cret-token".into()),
            headers: vec!["X-Auth: s3cret-header".into()],
        };
        let kept = save(&state, Some(&gateway))
            .expect("in the test")
            .expect("in the test");
        // scripts/test.sh runs these tests again with a real Secret Service on a private bus.
        if std::env::var_os("IPYBOX_TEST_KEYRING").is_some() {
            assert_eq!(kept.secret, SecretPlace::Keyring, "the keyring answered");
            assert!(!state.dir().join(SECRET_FILE).exists(), "no copy in a file");
        }
        assert_eq!(kept.header_names, vec!["X-Auth"]);
        assert!(kept.has_token);
        let choice = std::fs::read_to_string(state.dir().join(CHOICE_FILE)).expect("in the test");
        assert!(!choice.contains("s3cret"), "{choice}");
        use std::os::unix::fs::PermissionsExt;
        for file in [CHOICE_FILE, SECRET_FILE] {
            let path = state.dir().join(file);
            if path.exists() {
                let mode = std::fs::metadata(&path)
                    .expect("in the test")
                    .permissions()
                    .mode()
                    & 0o777;
                assert_eq!(mode, 0o600, "{file}");
            }
        }
        let back = remote_for(None, Some(&state))
            .expect("in the test")
            .expect("in the test");
        assert_eq!(back, gateway);
        // Back on this computer: the secret goes too.
        assert_eq!(save(&state, None).expect("in the test"), None);
        assert!(!state.dir().join(SECRET_FILE).exists());
        assert_eq!(remote_for(None, Some(&state)).expect("in the test"), None);
    }

    #[test]
    fn an_empty_token_field_keeps_the_token_kept_for_the_same_url_only() {
        let (_home, state) = state();
        let gateway = RemoteGateway {
            url: "http://10.0.0.5:8888".into(),
            token: Some("abc".into()),
            headers: vec![],
        };
        save(&state, Some(&gateway)).expect("in the test");
        let same = gateway_for(
            &RemoteRequest {
                url: "http://10.0.0.5:8888".into(),
                token: None,
                headers: None,
            },
            &state,
        )
        .expect("in the test");
        assert_eq!(same.token.as_deref(), Some("abc"));
        let other = gateway_for(
            &RemoteRequest {
                url: "http://10.0.0.6:8888".into(),
                token: None,
                headers: None,
            },
            &state,
        )
        .expect("in the test");
        assert_eq!(other.token, None, "a token never follows to another server");
        let cleared = gateway_for(
            &RemoteRequest {
                url: "http://10.0.0.5:8888".into(),
                token: Some(String::new()),
                headers: Some(vec![]),
            },
            &state,
        )
        .expect("in the test");
        assert_eq!(cleared.token, None);
        // Nothing left behind in a developer's keyring.
        save(&state, None).expect("in the test");
    }

    #[test]
    fn bad_urls_and_headers_are_refused_in_words() {
        let (_home, state) = state();
        let ask = |url: &str, headers: Vec<&str>| {
            gateway_for(
                &RemoteRequest {
                    url: url.into(),
                    token: None,
                    headers: Some(headers.into_iter().map(String::from).collect()),
                },
                &state,
            )
            .expect_err("refused")
            .to_string()
        };
        assert!(ask("", vec![]).contains("enter the server's URL"));
        assert!(ask("ftp://x", vec![]).contains("ftp://"));
        assert!(ask("http://x", vec!["no colon"]).contains("Name: value"));
    }

    #[test]
    fn a_secret_that_cannot_be_read_is_an_error_not_a_server_without_its_token() {
        let (_home, state) = state();
        let gateway = RemoteGateway {
            url: "http://h:1".into(),
            token: Some("t".into()),
            headers: vec![],
        };
        let kept = save(&state, Some(&gateway))
            .expect("in the test")
            .expect("in the test");
        match kept.secret {
            SecretPlace::File => {
                std::fs::remove_file(state.dir().join(SECRET_FILE)).expect("in the test")
            }
            SecretPlace::Keyring => forget_secret(&state, SecretPlace::Keyring),
            SecretPlace::None => unreachable!("a token is kept"),
        }
        let err = remote_for(None, Some(&state))
            .expect_err("refused")
            .to_string();
        assert!(
            err.contains("enter it again") || err.contains("enter the token again"),
            "{err}"
        );
    }
}
