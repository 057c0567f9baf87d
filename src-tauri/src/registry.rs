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

/// One tool of a registered server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSummary {
    /// The tool's name on the server.
    pub tool: String,
    /// Its module: `from mcptools.<server>.<module> import Params, run`.
    pub module: String,
    /// What the server says it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
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
    pub fn pin_srt_policy(
        &self,
        name: &str,
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
        if settings.contains("${") {
            return Err(Error::config(format!(
                "the sandbox policy of \"{name}\" ({settings}) cannot contain ${{…}} placeholders: ipybox reads it once, at registration"
            )));
        }
        let source = workspace.join(settings);
        let user_home = dirs::home_dir()
            .ok_or_else(|| Error::config("cannot find the home directory for `~` paths"))?;
        let policy = crate::sandbox::policy::load(Some(&source))?;
        let rendered = crate::sandbox::policy::render(
            policy,
            workspace,
            &user_home,
            crate::sandbox::policy::Additions::default(),
        )?;
        check_server_name(name)?;
        let dir = self.dir().join("srt");
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        let pinned = dir.join(format!("{name}.json"));
        let text = serde_json::to_string_pretty(&rendered).unwrap_or_default();
        let tmp = dir.join(format!(".{name}.json.{}", std::process::id()));
        std::fs::write(&tmp, text)
            .map_err(|e| Error::io(format!("writing {}", tmp.display()), e))?;
        std::fs::rename(&tmp, &pinned)
            .map_err(|e| Error::io(format!("writing {}", pinned.display()), e))?;
        let pinned = pinned.to_string_lossy().into_owned();
        let mut out = params.clone();
        let mut replaced = false;
        for i in 0..out.args.len() {
            if replaced {
                break;
            }
            let a = &out.args[i];
            if (a == "--settings" || a == "-s") && i + 1 < out.args.len() {
                out.args[i + 1] = pinned.clone();
                replaced = true;
            } else if a.starts_with("--settings=") {
                out.args[i] = format!("--settings={pinned}");
                replaced = true;
            }
        }
        Ok(out)
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
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        let tmp = dir.join(format!(".servers.json.{}", std::process::id()));
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::config(e.to_string()))?;
        std::fs::write(&tmp, text)
            .map_err(|e| Error::io(format!("writing {}", tmp.display()), e))?;
        std::fs::rename(&tmp, &self.path)
            .map_err(|e| Error::io(format!("writing {}", self.path.display()), e))
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
        assert!(r.insert("class", p).is_err(), "keywords are refused");
    }
}
