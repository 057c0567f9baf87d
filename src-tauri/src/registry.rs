//! The MCP servers registered for a workspace.
//!
//! The tool server runs only servers found here, by name: kernel code names a server, it
//! never supplies a command line or URL. The file lives in ipybox's data directory, outside
//! the workspace, and a running executor keeps its own copy in memory, so a kernel that
//! rewrites the file cannot change what the current session runs. Parameters are stored
//! with their `${VAR}` placeholders unresolved: secrets stay out of the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::apigen::check_server_name;
use crate::error::{Error, Result};
use crate::mcp::ServerParams;

/// The URL the HTTP MCP server `name` registered for `workspace` is reached at, its
/// `${VAR}`s filled in as registering fills them (the environment and the workspace's
/// `.env`): the URL a sign-in to it is for.
pub fn registered_url(workspace: &Path, name: &str) -> Result<String> {
    let home = crate::home::ipybox_home()?;
    let registry = Registry::load(&home, workspace)?;
    let params = registry.servers.get(name).ok_or_else(|| {
        Error::config(format!(
            "no MCP server \"{}\" is registered in {}",
            crate::display::escape(name),
            registry.workspace.display()
        ))
    })?;
    let vars = crate::mcp::params::Variables::load(Some(&registry.workspace))?;
    params.resolve(&vars)?.url.ok_or_else(|| {
        Error::config(format!(
            "\"{}\" is not an HTTP MCP server: only those sign in",
            crate::display::escape(name)
        ))
    })
}

/// One tool of a registered server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ToolSummary {
    /// The tool's name on the server.
    pub tool: String,
    /// Its module: `from mcptools.<server>.<module> import Params, run`.
    pub module: String,
    /// What the server says it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub description: Option<String>,
    /// Its generated `Params`/`Result` classes and `run` signature, for a person to read
    /// (absent in registries written before ipybox kept it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub interface: Option<String>,
}

/// How `srt --settings` names a profile ipybox ships instead of a file: `ipybox:mcp-server`.
pub const SHIPPED_PROFILE: &str = "ipybox:";

/// The shipped profile `name` (`mcp-server`, `mcp-offline`, …) as srt settings.
fn shipped_policy(name: &str) -> Result<serde_json::Value> {
    let profiles = crate::sandbox::profile::shipped_profiles();
    let profile = profiles.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = profiles.iter().map(|p| p.name).collect();
        Error::config(format!(
            "ipybox ships no sandbox profile \"{name}\" (it ships {})",
            names.join(", ")
        ))
    })?;
    serde_json::to_value(&profile.policy)
        .map_err(|e| Error::config("the shipped sandbox profile").because(e))
}

/// The sandbox policy a stdio server under `srt --settings P …` names: P as given.
pub fn srt_policy(params: &ServerParams) -> Option<String> {
    let command = params.command.as_deref()?;
    if crate::mcp::client::program_name(command) != "srt" {
        return None;
    }
    crate::mcp::client::srt_settings(&params.args).map(str::to_owned)
}

/// `params` with srt's `--settings` argument replaced by `path`.
fn with_srt_settings(params: &ServerParams, path: &str) -> ServerParams {
    let mut out = params.clone();
    for i in 0..out.args.len() {
        let a = &out.args[i];
        if (a == "--settings" || a == "-s") && i + 1 < out.args.len() {
            out.args[i + 1] = path.to_owned();
            break;
        } else if a.starts_with("--settings=") {
            out.args[i] = format!("--settings={path}");
            break;
        }
    }
    out
}

/// The policy file a connection test wrote; removed when dropped.
#[derive(Debug)]
pub struct PreviewPolicy(Option<PathBuf>);

impl Drop for PreviewPolicy {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// What regenerating a server changed, tool by tool (module names).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ToolChanges {
    /// Tools the server offers now and did not before.
    pub added: Vec<String>,
    /// Tools it no longer offers.
    pub removed: Vec<String>,
    /// Tools whose interface (`Params`, `Result`, `run`'s docstring) changed, with both
    /// interfaces: the old one is gone from the registry once it is regenerated, and a
    /// person deciding whether their cells still work needs to see it beside the new one.
    pub changed: Vec<ChangedTool>,
}

/// A tool whose interface changed: its module and the interface before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ChangedTool {
    /// Its module: `mcptools.<server>.<module>`.
    pub module: String,
    /// The interface it had (absent in registries written before ipybox kept it).
    pub before: Option<String>,
    /// The interface it has now.
    pub after: Option<String>,
}

impl ToolChanges {
    /// Compare the tools of two generations by module. A tool whose interface was not kept
    /// before (an older registry) counts as changed only when its description changed.
    pub fn between(before: &[ToolSummary], after: &[ToolSummary]) -> ToolChanges {
        let old: BTreeMap<&str, &ToolSummary> =
            before.iter().map(|t| (t.module.as_str(), t)).collect();
        let new: BTreeMap<&str, &ToolSummary> =
            after.iter().map(|t| (t.module.as_str(), t)).collect();
        let mut changes = ToolChanges::default();
        for (module, now) in &new {
            match old.get(module) {
                None => changes.added.push((*module).to_owned()),
                Some(was) => {
                    let differs = match (&was.interface, &now.interface) {
                        (Some(a), Some(b)) => a != b,
                        _ => was.description != now.description,
                    };
                    if differs {
                        changes.changed.push(ChangedTool {
                            module: (*module).to_owned(),
                            before: was.interface.clone(),
                            after: now.interface.clone(),
                        });
                    }
                }
            }
        }
        changes.removed = old
            .keys()
            .filter(|m| !new.contains_key(*m))
            .map(|m| (*m).to_owned())
            .collect();
        changes
    }
}

/// Registered servers of one workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registry {
    /// The workspace these servers belong to.
    pub workspace: PathBuf,
    /// Server name → connection parameters.
    pub servers: BTreeMap<String, ServerParams>,
    /// Server name → its tools, as generated when it was registered.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, Vec<ToolSummary>>,
    /// Server name → the sandbox policy it was registered with, as given (`ipybox:mcp-server`
    /// or a file), for a server run under srt: its parameters hold the pinned copy.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub policies: BTreeMap<String, String>,
    #[serde(skip)]
    path: PathBuf,
}

impl Registry {
    /// The registry file of `workspace` under ipybox's data directory `home`.
    pub fn path_for(home: &Path, workspace: &Path) -> PathBuf {
        crate::home::workspace_dir(home, workspace).join("servers.json")
    }

    /// Load the registry of `workspace` (canonicalized), empty when none exists yet.
    pub fn load(home: &Path, workspace: &Path) -> Result<Registry> {
        let workspace = std::fs::canonicalize(workspace).map_err(|e| {
            Error::config(format!(
                "the workspace {} is not usable: {e}",
                workspace.display()
            ))
        })?;
        let path = Self::path_for(home, &workspace);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let mut r: Registry = serde_json::from_str(&text).map_err(|e| {
                    Error::config(format!(
                        "the server registry {} is damaged: {e}",
                        path.display()
                    ))
                })?;
                r.path = path;
                r.workspace = workspace;
                Ok(r)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Registry {
                workspace,
                servers: BTreeMap::new(),
                tools: BTreeMap::new(),
                policies: BTreeMap::new(),
                path,
            }),
            Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
        }
    }

    /// Where ipybox keeps this workspace's files (outside the workspace).
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(&self.path)
    }

    /// The parameters to store for a server: a stdio server run under `srt --settings FILE`
    /// gets its policy read now and pinned. FILE may lie in the workspace, which kernel code
    /// can rewrite, and the server starts in a neutral directory: so the policy is rendered
    /// with its relative paths resolved against `workspace` (as srt did when servers started
    /// there) and `~` expanded, written to this workspace's directory in ipybox's data
    /// directory, and the argument replaced by that copy. Registering again re-reads it.
    /// FILE `ipybox:<profile>` names a profile ipybox ships (`ipybox:mcp-server`), never a
    /// file.
    pub fn pin_srt_policy(
        &self,
        name: &str,
        params: &ServerParams,
        workspace: &Path,
    ) -> Result<ServerParams> {
        check_server_name(name)?;
        self.write_srt_policy(name, &format!("{name}.json"), params, workspace)
    }

    /// [`pin_srt_policy`](Self::pin_srt_policy) for a connection test: the policy is written
    /// under a name of its own, which the returned guard removes when dropped.
    pub fn preview_srt_policy(
        &self,
        params: &ServerParams,
        workspace: &Path,
    ) -> Result<(ServerParams, PreviewPolicy)> {
        let file = format!(".preview-{}.json", uuid::Uuid::new_v4().simple());
        let out = self.write_srt_policy("preview", &file, params, workspace)?;
        let written = (out != *params).then(|| self.dir().join("srt").join(&file));
        Ok((out, PreviewPolicy(written)))
    }

    fn write_srt_policy(
        &self,
        name: &str,
        file: &str,
        params: &ServerParams,
        workspace: &Path,
    ) -> Result<ServerParams> {
        let command = params.command.as_deref().unwrap_or_default();
        if crate::mcp::client::program_name(command) != "srt" {
            return Ok(params.clone());
        }
        let Some(settings) = crate::mcp::client::srt_settings(&params.args) else {
            return Ok(params.clone());
        };
        if self.is_pinned(settings) {
            // The copy made at registration, out of kernel code's reach: kept as it is.
            return Ok(params.clone());
        }
        if settings.contains("${") {
            return Err(Error::config(format!(
                "the sandbox policy of \"{name}\" ({settings}) cannot contain ${{…}} placeholders: ipybox reads it once, at registration"
            )));
        }
        let policy = match settings.strip_prefix(SHIPPED_PROFILE) {
            Some(profile) => shipped_policy(profile)?,
            None => crate::sandbox::policy::load(Some(&workspace.join(settings)))?,
        };
        let user_home = dirs::home_dir()
            .ok_or_else(|| Error::config("cannot find the home directory for `~` paths"))?;
        let rendered = crate::sandbox::policy::render(
            policy,
            workspace,
            &user_home,
            crate::sandbox::policy::Additions::default(),
        )?;
        let dir = self.dir().join("srt");
        crate::fsutil::create_private_dir(&dir)?;
        let pinned = dir.join(file);
        let text = serde_json::to_string_pretty(&rendered).unwrap_or_default();
        crate::fsutil::write_private(&pinned, text.as_bytes())?;
        Ok(with_srt_settings(params, &pinned.to_string_lossy()))
    }

    /// The parameters to register `name` with again: as stored. A server under a shipped
    /// profile gets the profile as ipybox ships it now; one under a policy file keeps the
    /// copy made when it was registered — the file lay in the workspace, where kernel code
    /// may have rewritten it since. Registering with the file again (`ipybox register`, the
    /// servers tab's form) reads it anew, as the person asked.
    pub fn params_to_regenerate(&self, name: &str) -> Option<ServerParams> {
        let params = self.servers.get(name)?;
        Some(match self.policies.get(name) {
            Some(policy) if policy.starts_with(SHIPPED_PROFILE) => {
                with_srt_settings(params, policy)
            }
            _ => params.clone(),
        })
    }

    /// Whether `settings` is a policy copy this registry made (in its own directory).
    pub fn is_pinned(&self, settings: &str) -> bool {
        Path::new(settings).starts_with(self.dir().join("srt"))
    }

    /// Add or replace `name` and save.
    pub fn insert(&mut self, name: &str, params: ServerParams) -> Result<()> {
        check_server_name(name)?;
        self.servers.insert(name.to_owned(), params);
        self.save()
    }

    /// Record the tools `name` was generated with, and save.
    pub fn set_tools(&mut self, name: &str, tools: Vec<ToolSummary>) -> Result<()> {
        self.tools.insert(name.to_owned(), tools);
        self.save()
    }

    /// Remove `name` and save; `false` when it was not registered.
    pub fn remove(&mut self, name: &str) -> Result<bool> {
        self.tools.remove(name);
        self.policies.remove(name);
        let had = self.servers.remove(name).is_some();
        if had {
            self.save()?;
        }
        Ok(had)
    }

    fn save(&self) -> Result<()> {
        let dir = self
            .path
            .parent()
            .ok_or_else(|| Error::config("registry path has no parent"))?;
        crate::fsutil::create_private_dir(dir)?;
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::config(e.to_string()))?;
        crate::fsutil::write_private(&self.path, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_keeps_placeholders() {
        let home = tempfile::tempdir().expect("tempdir");
        let ws = tempfile::tempdir().expect("tempdir");
        let mut r = Registry::load(home.path(), ws.path()).expect("empty registry");
        assert!(r.servers.is_empty());
        let p = ServerParams::from_json(
            &serde_json::json!({"url": "http://x/mcp", "headers": {"A": "${TOKEN}"}}),
        )
        .expect("valid");
        r.insert("github", p.clone()).expect("saved");
        let again = Registry::load(home.path(), ws.path()).expect("loads");
        assert_eq!(
            again.servers.get("github"),
            Some(&p),
            "placeholders are stored unresolved"
        );
        assert!(
            again.path.starts_with(home.path()),
            "the registry lives in the data dir, not the workspace"
        );
        // It may hold literal keys: readable by this user only, in directories only they
        // can enter.
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).expect("there").permissions().mode() & 0o777;
        assert_eq!(mode(&again.path), 0o600, "servers.json");
        assert_eq!(mode(again.dir()), 0o700, "the workspace's directory");
        assert!(r.insert("not-valid", p.clone()).is_err());
        let policy = ws.path().join("policy.json");
        std::fs::write(
            &policy,
            r#"{"filesystem": {"denyRead": [".env"], "allowWrite": ["out"]}}"#,
        )
        .expect("write");
        let srt = ServerParams::from_json(&serde_json::json!({
            "command": "srt", "args": ["--settings", "policy.json", "npx", "-y", "x"]
        }))
        .expect("valid");
        let pinned = r.pin_srt_policy("fs", &srt, ws.path()).expect("pinned");
        assert!(
            pinned.args[1].starts_with(&home.path().to_string_lossy().into_owned()),
            "{pinned:?}"
        );
        std::fs::write(&policy, "{}").expect("rewrite");
        let copy: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&pinned.args[1]).expect("copy"))
                .expect("json");
        assert_eq!(
            copy["filesystem"]["allowWrite"][0],
            ws.path().join("out").to_string_lossy().into_owned(),
            "relative paths are resolved against the workspace, and the copy does not follow the file"
        );
        // Regenerated, a server keeps the copy: the file was rewritten ("{}") since.
        r.servers.insert("fs".into(), pinned.clone());
        r.policies.insert("fs".into(), "policy.json".into());
        let again = r.params_to_regenerate("fs").expect("registered");
        assert_eq!(
            again, pinned,
            "regenerating uses the copy, not the workspace's file"
        );
        assert_eq!(
            r.pin_srt_policy("fs", &again, ws.path()).expect("kept"),
            pinned,
            "and pinning the copy leaves it as it is"
        );
        let copy_now: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&pinned.args[1]).expect("copy"))
                .expect("json");
        assert_eq!(copy_now, copy, "the rewritten file never reached the copy");
        assert!(r.insert("class", p).is_err(), "keywords are refused");
    }

    fn tool(module: &str, interface: Option<&str>, description: Option<&str>) -> ToolSummary {
        ToolSummary {
            tool: module.to_owned(),
            module: module.to_owned(),
            description: description.map(str::to_owned),
            interface: interface.map(str::to_owned),
        }
    }

    #[test]
    fn changes_compare_interfaces_by_module() {
        let before = [
            tool("kept", Some("def run(params: Params) -> str"), None),
            tool("widened", Some("class Params: a: int"), None),
            tool("gone", Some("x"), None),
            tool("old_registry", None, Some("same words")),
        ];
        let after = [
            tool("kept", Some("def run(params: Params) -> str"), None),
            tool("widened", Some("class Params: a: int | str"), None),
            tool("old_registry", Some("new"), Some("same words")),
            tool("new_tool", Some("y"), None),
        ];
        assert_eq!(
            ToolChanges::between(&before, &after),
            ToolChanges {
                added: vec!["new_tool".into()],
                removed: vec!["gone".into()],
                changed: vec![ChangedTool {
                    module: "widened".into(),
                    before: Some("class Params: a: int".into()),
                    after: Some("class Params: a: int | str".into()),
                }],
            },
            "a tool without a stored interface changes only with its description"
        );
        assert_eq!(
            ToolChanges::between(&[], &after).added.len(),
            4,
            "a new server's tools are all added"
        );
    }

    #[test]
    fn a_shipped_profile_is_named_not_read_from_the_workspace() {
        let home = tempfile::tempdir().expect("tempdir");
        let ws = tempfile::tempdir().expect("tempdir");
        let r = Registry::load(home.path(), ws.path()).expect("empty registry");
        // A file of that name in the workspace (kernel code can write one) is never read.
        std::fs::write(ws.path().join("ipybox:mcp-server"), "{}").expect("write");
        let srt = ServerParams::from_json(&serde_json::json!({
            "command": "srt", "args": ["--settings", "ipybox:mcp-server", "npx", "-y", "x"]
        }))
        .expect("valid");
        let pinned = r.pin_srt_policy("fs", &srt, ws.path()).expect("pinned");
        let copy: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&pinned.args[1]).expect("copy"))
                .expect("json");
        assert_eq!(
            copy["network"]["allowedDomains"][0], "registry.npmjs.org",
            "the shipped mcp-server profile"
        );
        assert_eq!(&pinned.args[2..], ["npx", "-y", "x"], "the command is kept");
        let unknown = ServerParams::from_json(&serde_json::json!({
            "command": "srt", "args": ["--settings", "ipybox:nope", "x"]
        }))
        .expect("valid");
        let err = r
            .pin_srt_policy("fs", &unknown, ws.path())
            .expect_err("unknown");
        assert!(
            err.to_string().contains("mcp-offline"),
            "names what exists: {err}"
        );
        let (preview, guard) = r.preview_srt_policy(&srt, ws.path()).expect("preview");
        let written = std::path::PathBuf::from(&preview.args[1]);
        assert!(written.is_file(), "a test connection gets its own copy");
        drop(guard);
        assert!(!written.exists(), "and it is removed after the test");

        let mut r = r;
        r.servers.insert("fs".into(), pinned);
        r.policies.insert("fs".into(), "ipybox:mcp-server".into());
        assert_eq!(
            r.params_to_regenerate("fs").expect("registered").args[..3],
            ["--settings", "ipybox:mcp-server", "npx"],
            "regenerating reads the policy as it was given, not the pinned copy"
        );
    }
}
