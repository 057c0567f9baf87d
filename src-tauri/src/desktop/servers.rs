//! The MCP server panel's commands: each a few lines over the engine's registry. Server
//! parameters arrive as JSON and are checked by the engine, so a form's mistake comes back
//! as `InvalidConfig` in words rather than as a Tauri argument error. A server that asks
//! for an OAuth sign-in comes back as `SignInRequired`; signing in opens the system
//! browser, waits for the loopback redirect (or the person's Cancel), then registers.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use tauri::State;

use super::dto::{DesktopError, ServerList, ServerProfile, SignInState};
use super::session::Desktop;
use crate::error::Error;
use crate::executor::{Placeholder, Registration};
use crate::mcp::ServerParams;
use crate::mcp::oauth::{self, Authorizations, SignInOptions, SystemBrowser};
use crate::registry::ToolSummary;

type Reply<T> = Result<T, DesktopError>;

/// The sign-ins waiting for the browser, by server name: Cancel aborts one.
#[derive(Debug, Default)]
pub struct SignIns(Mutex<HashMap<String, tokio::task::AbortHandle>>);

#[tauri::command]
pub fn mcp_servers(state: State<'_, Desktop>) -> Reply<ServerList> {
    let servers = state.executor()?.servers()?;
    let workspace = state.workspace()?;
    let auth = Authorizations::for_home()?;
    // A server with its own `Authorization` header, or no URL, does not sign in.
    let sign_ins: BTreeMap<String, SignInState> = servers
        .iter()
        .filter(|s| s.params.url.is_some())
        .filter(|s| {
            !s.params
                .headers
                .keys()
                .any(|h| h.eq_ignore_ascii_case("authorization"))
        })
        .filter_map(|s| {
            let url = crate::registry::registered_url(&workspace, &s.name).ok()?;
            Some((s.name.clone(), auth.status(&url).ok()?.into()))
        })
        .collect();
    Ok(ServerList {
        sign_ins,
        servers,
        profiles: crate::sandbox::profile::shipped_profiles()
            .into_iter()
            .filter(|p| p.name.starts_with("mcp-"))
            .map(|p| ServerProfile {
                name: p.name,
                purpose: p.purpose,
            })
            .collect(),
    })
}

/// "Test connection": the tools `params` offers, nothing registered or written.
#[tauri::command]
pub async fn preview_mcp_server(
    state: State<'_, Desktop>,
    params: serde_json::Value,
) -> Reply<Vec<ToolSummary>> {
    let params = ServerParams::from_json(&params)?;
    Ok(state.executor()?.preview_mcp_server(&params).await?)
}

/// Register `name` (generating `mcptools/<name>/`), replacing a server of that name.
#[tauri::command]
pub async fn register_mcp_server(
    state: State<'_, Desktop>,
    name: String,
    params: serde_json::Value,
) -> Reply<Registration> {
    let params = ServerParams::from_json(&params)?;
    Ok(state
        .executor()?
        .update_mcp_server(&name, Some(&params))
        .await?)
}

/// The servers ipybox installs itself (the panel's catalog).
#[tauri::command]
pub fn mcp_catalog() -> Vec<crate::catalog::Entry> {
    crate::catalog::ENTRIES.to_vec()
}

/// Install (or update) `package` from `source` into ipybox's data directory — wheels only,
/// no package scripts, so nothing of it runs yet — and give the parameters that run it in
/// the sandbox with `args` after its command: the form shows them before anything is saved
/// or started.
#[tauri::command]
pub async fn install_mcp_package(
    source: crate::catalog::Source,
    package: String,
    args: Option<Vec<String>>,
) -> Reply<serde_json::Value> {
    let home = crate::home::ipybox_home()?;
    let args = args.unwrap_or_default();
    let installed = tauri::async_runtime::spawn_blocking(move || {
        crate::catalog::install(&home, source, &package, &args)
    })
    .await
    .map_err(|e| Error::config(format!("the install stopped: {e}")))??;
    Ok(serde_json::json!({
        "params": crate::catalog::params(&installed, true),
        "version": installed.version,
        "dir": installed.dir.display().to_string(),
    }))
}

/// Generate `name` again from what the server offers now; what changed.
#[tauri::command]
pub async fn regenerate_mcp_server(state: State<'_, Desktop>, name: String) -> Reply<Registration> {
    Ok(state.executor()?.update_mcp_server(&name, None).await?)
}

/// Forget `name` and remove `mcptools/<name>/`; `false` when it was not registered.
#[tauri::command]
pub async fn unregister_mcp_server(state: State<'_, Desktop>, name: String) -> Reply<bool> {
    Ok(state.executor()?.unregister_mcp_server(&name).await?)
}

/// Sign in to `name` — the server `params` describes (the add-server form's), else the one
/// registered — and register it: the system browser opens on the authorization server's
/// page and this waits for its redirect to a loopback listener (at most
/// [`oauth::SIGN_IN_TIMEOUT`], or until [`cancel_mcp_sign_in`]). A server that answers
/// without a sign-in is registered at once.
#[tauri::command]
pub async fn sign_in_mcp_server(
    state: State<'_, Desktop>,
    sign_ins: State<'_, SignIns>,
    name: String,
    params: Option<serde_json::Value>,
) -> Reply<Registration> {
    let executor = state.executor()?;
    let params = match params {
        Some(p) => ServerParams::from_json(&p)?,
        None => executor
            .servers()?
            .into_iter()
            .find(|s| s.name == name)
            .map(|s| s.params)
            .ok_or_else(|| Error::config(format!("no MCP server \"{name}\" is registered here")))?,
    };
    if let Err(e) = executor.preview_mcp_server(&params).await {
        let Some(needed) = oauth::sign_in_needed(&e) else {
            return Err(e.into());
        };
        sign_in(&sign_ins, &name, needed).await?;
    }
    // A session that held the old sign-in connects again with the new one.
    executor.reconnect_mcp_server(&name).await;
    Ok(executor.update_mcp_server(&name, Some(&params)).await?)
}

/// Sign in as `needed` asks, through the system browser; the task is `name`'s until it
/// ends, so Cancel can abort it (the loopback listener closes with it).
async fn sign_in(
    sign_ins: &SignIns,
    name: &str,
    needed: &oauth::SignInNeeded,
) -> Result<(), DesktopError> {
    let auth = Authorizations::for_home()?;
    let url = needed.url.clone();
    let scopes = match (&needed.scope, &needed.challenge) {
        (Some(_), Some(challenge)) => {
            oauth::step_up_scopes(&auth.granted_scopes(&url), challenge, &url)
        }
        _ => Vec::new(),
    };
    let options = SignInOptions {
        challenge: needed.challenge.clone(),
        scopes,
        ..SignInOptions::default()
    };
    let task = tokio::spawn(async move {
        auth.sign_in(&url, &options, &SystemBrowser, oauth::SIGN_IN_TIMEOUT)
            .await
    });
    if let Ok(mut waiting) = sign_ins.0.lock()
        && let Some(earlier) = waiting.insert(name.to_owned(), task.abort_handle())
    {
        earlier.abort();
    }
    let ended = task.await;
    if let Ok(mut waiting) = sign_ins.0.lock() {
        waiting.remove(name);
    }
    match ended {
        Ok(signed_in) => signed_in.map(|_| ()).map_err(Into::into),
        Err(_) => Err(Error::Cancelled {
            reason: "the sign-in was cancelled".into(),
            output: Box::default(),
        }
        .into()),
    }
}

/// Stop waiting for `name`'s sign-in in the browser; `false` when none was waiting.
#[tauri::command]
pub fn cancel_mcp_sign_in(sign_ins: State<'_, SignIns>, name: String) -> bool {
    let handle = sign_ins.0.lock().ok().and_then(|mut w| w.remove(&name));
    handle.map(|h| h.abort()).is_some()
}

/// Sign out of `name`: its tokens leave the keyring (or file) and memory, its session
/// closes, and the authorization server revokes them where it offers that. `true` when it
/// did.
#[tauri::command]
pub async fn sign_out_mcp_server(state: State<'_, Desktop>, name: String) -> Reply<bool> {
    let url = crate::registry::registered_url(&state.workspace()?, &name)?;
    let revoked = Authorizations::for_home()?
        .sign_out_and_revoke(&url)
        .await?;
    state.executor()?.reconnect_mcp_server(&name).await;
    Ok(revoked)
}

/// Where each `${NAME}` of a form would get its value (never the value).
#[tauri::command]
pub fn mcp_placeholders(state: State<'_, Desktop>, names: Vec<String>) -> Reply<Vec<Placeholder>> {
    Ok(state.executor()?.placeholders(&names)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::RegisteredServer;

    /// The shapes `ui/src/ipc.ts` reads, pinned.
    #[test]
    fn server_lists_keep_the_shape_the_window_reads() {
        let params = ServerParams::from_json(&serde_json::json!({
            "command": "srt", "args": ["--settings", "/p.json", "uvx", "x"], "env": {"K": "${K}"}
        }))
        .expect("valid");
        let list = ServerList {
            servers: vec![RegisteredServer {
                name: "fx".into(),
                params,
                policy: Some("ipybox:mcp-server".into()),
                tools: vec![ToolSummary {
                    tool: "echo-it".into(),
                    module: "echo_it".into(),
                    description: None,
                    interface: Some("class Params(BaseModel):\n    ...".into()),
                }],
            }],
            profiles: vec![ServerProfile {
                name: "mcp-server",
                purpose: "p",
            }],
            sign_ins: BTreeMap::from([(
                "fx".to_owned(),
                SignInState {
                    signed_in: true,
                    user: Some("ada@example.org".into()),
                    expires_at: Some(1_800_000_000_000),
                    refreshable: true,
                },
            )]),
        };
        assert_eq!(
            serde_json::to_value(list).expect("json"),
            serde_json::json!({
                "servers": [{
                    "name": "fx",
                    "params": {"command": "srt", "args": ["--settings", "/p.json", "uvx", "x"], "env": {"K": "${K}"}},
                    "policy": "ipybox:mcp-server",
                    "tools": [{"tool": "echo-it", "module": "echo_it", "interface": "class Params(BaseModel):\n    ..."}]
                }],
                "profiles": [{"name": "mcp-server", "purpose": "p"}],
                "signIns": {"fx": {"signedIn": true, "user": "ada@example.org", "expiresAt": 1_800_000_000_000u64, "refreshable": true}}
            })
        );
        let changes = crate::registry::ToolChanges::between(
            &[ToolSummary {
                tool: "add".into(),
                module: "add".into(),
                description: None,
                interface: Some("class Params(BaseModel):\n    a: int".into()),
            }],
            &[ToolSummary {
                tool: "add".into(),
                module: "add".into(),
                description: None,
                interface: Some("class Params(BaseModel):\n    a: float".into()),
            }],
        );
        assert_eq!(
            serde_json::to_value(changes).expect("json"),
            serde_json::json!({
                "added": [], "removed": [],
                "changed": [{"module": "add", "before": "class Params(BaseModel):\n    a: int", "after": "class Params(BaseModel):\n    a: float"}]
            }),
            "a changed tool comes with its interface before and after"
        );
        let placeholder = Placeholder {
            name: "TOKEN".into(),
            source: Some(crate::mcp::params::VariableSource::DotEnv),
        };
        assert_eq!(
            serde_json::to_value(placeholder).expect("json"),
            serde_json::json!({"name": "TOKEN", "source": "dot_env"})
        );
    }
}
