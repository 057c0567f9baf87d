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

use crate::error::{Error, Result};
use crate::mcp::ServerParams;

/// Registered servers of one workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registry {
    /// The workspace these servers belong to.
    pub workspace: PathBuf,
    /// Server name → connection parameters.
    pub servers: BTreeMap<String, ServerParams>,
    #[serde(skip)]
    path: PathBuf,
}

impl Registry {
    /// The registry file of `workspace` under ipybox's data directory `home`.
    pub fn path_for(home: &Path, workspace: &Path) -> PathBuf {
        let key = workspace.to_string_lossy();
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in key.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        let base = workspace
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let base: String = base
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .take(32)
            .collect();
        home.join("workspaces")
            .join(format!("{base}-{h:016x}"))
            .join("servers.json")
    }

    /// Load the registry of `workspace` (canonicalized), empty when none exists yet.
    pub fn load(home: &Path, workspace: &Path) -> Result<Registry> {
        let workspace = std::fs::canonicalize(workspace).map_err(|e| {
            Error::Config(format!(
                "the workspace {} is not usable: {e}",
                workspace.display()
            ))
        })?;
        let path = Self::path_for(home, &workspace);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let mut r: Registry = serde_json::from_str(&text).map_err(|e| {
                    Error::Config(format!(
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
                path,
            }),
            Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
        }
    }

    /// Parameters of `name`.
    pub fn get(&self, name: &str) -> Option<&ServerParams> {
        self.servers.get(name)
    }

    /// Add or replace `name` and save.
    pub fn insert(&mut self, name: &str, params: ServerParams) -> Result<()> {
        check_server_name(name)?;
        self.servers.insert(name.to_owned(), params);
        self.save()
    }

    /// Remove `name` and save; `false` when it was not registered.
    pub fn remove(&mut self, name: &str) -> Result<bool> {
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
            .ok_or_else(|| Error::Config("registry path has no parent".into()))?;
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        let tmp = dir.join(format!(".servers.json.{}", std::process::id()));
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Config(e.to_string()))?;
        std::fs::write(&tmp, text)
            .map_err(|e| Error::io(format!("writing {}", tmp.display()), e))?;
        std::fs::rename(&tmp, &self.path)
            .map_err(|e| Error::io(format!("writing {}", self.path.display()), e))
    }
}

/// A server name becomes a Python package name (`mcptools.<name>`): it must be a valid,
/// non-keyword identifier.
pub fn check_server_name(name: &str) -> Result<()> {
    if crate::apigen::is_valid_identifier(name) && !name.starts_with('_') {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "{name:?} cannot be a server name: it becomes the Python package mcptools.{name}, so it must be a valid identifier (letters, digits, underscores; not starting with a digit or underscore; not a Python keyword)"
        )))
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
            again.get("github"),
            Some(&p),
            "placeholders are stored unresolved"
        );
        assert!(
            again.path.starts_with(home.path()),
            "the registry lives in the data dir, not the workspace"
        );
        assert!(r.insert("not-valid", p.clone()).is_err());
        assert!(r.insert("class", p).is_err(), "keywords are refused");
    }
}
