//! Sandbox policies: srt settings files, made absolute for one session.
//!
//! A policy is an srt settings file (`filesystem`, `network` and srt's other keys). ipybox
//! reads the default from `sandbox-profiles/kernel.json` (built in) or a user's file, then
//! writes the copy it hands to srt with every path absolute: `~/x` becomes the home
//! directory's `x`, a relative path is relative to the workspace (so `**/.env` hides `.env`
//! files at any depth of the workspace). It always adds the directories ipybox itself must
//! write (the session's state directory) and always keeps a `network` section, because a
//! policy without one would give the sandbox the host's network.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// ipybox's default kernel policy.
pub const DEFAULT_KERNEL_POLICY: &str = include_str!("../../sandbox-profiles/kernel.json");

/// The workspace's own policy, at its root: what the desktop app's Sandbox tab edits and
/// `--sandbox-config workspace` runs under.
pub const WORKSPACE_POLICY: &str = "sandbox-config.json";

/// The workspace's own policy file, and whether it was created now, as ipybox's default
/// policy, because the workspace had none.
///
/// A sandbox under the workspace's policy always has the file, which
/// [`prepare_session`](super::prepare_session) makes read-only inside: without one, kernel
/// code could create it and choose the next session's policy. `workspace` must be the
/// canonical path the session runs in, or the file would not be recognised as the
/// workspace's and stay writable.
pub fn workspace_policy(workspace: &Path) -> Result<(PathBuf, bool)> {
    let file = workspace.join(WORKSPACE_POLICY);
    if std::fs::symlink_metadata(&file).is_ok() {
        return Ok((file, false));
    }
    // Written whole under another name, then linked into place: another ipybox starting on
    // the workspace never reads half a policy, and a file that appeared meanwhile is kept.
    let tmp = workspace.join(format!(
        ".{WORKSPACE_POLICY}.ipybox-{}.tmp",
        uuid::Uuid::new_v4().simple()
    ));
    let created = (|| -> std::io::Result<bool> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(DEFAULT_KERNEL_POLICY.as_bytes())?;
        f.sync_all()?;
        match std::fs::hard_link(&tmp, &file) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    let created = created.map_err(|e| Error::io(format!("creating {}", file.display()), e))?;
    Ok((file, created))
}

const PATH_LISTS: [&str; 4] = ["denyRead", "allowRead", "allowWrite", "denyWrite"];
const REQUIRED_PATH_LISTS: [&str; 3] = ["denyRead", "allowWrite", "denyWrite"];
const REQUIRED_DOMAIN_LISTS: [&str; 2] = ["allowedDomains", "deniedDomains"];

/// Read the policy at `path`, or the default.
pub fn load(path: Option<&Path>) -> Result<Value> {
    let (text, origin) = match path {
        Some(p) => (
            std::fs::read_to_string(p).map_err(|e| {
                Error::sandbox(format!(
                    "cannot read the sandbox policy {}: {e}",
                    p.display()
                ))
            })?,
            p.display().to_string(),
        ),
        None => (
            DEFAULT_KERNEL_POLICY.to_owned(),
            "the built-in kernel policy".to_owned(),
        ),
    };
    serde_json::from_str(&text).map_err(|e| {
        Error::sandbox(format!(
            "the sandbox policy {origin} is not valid JSON: {e} (line {}, column {})",
            e.line(),
            e.column()
        ))
    })
}

fn absolute(entry: &str, workspace: &Path, home: &Path) -> String {
    let path = if entry == "~" {
        home.to_path_buf()
    } else if let Some(rest) = entry.strip_prefix("~/") {
        home.join(rest)
    } else if Path::new(entry).is_absolute() {
        PathBuf::from(entry)
    } else {
        let rest = entry.strip_prefix("./").unwrap_or(entry);
        if rest.is_empty() || rest == "." {
            workspace.to_path_buf()
        } else {
            workspace.join(rest)
        }
    };
    path.to_string_lossy().into_owned()
}

fn section<'a>(root: &'a mut Map<String, Value>, name: &str) -> Result<&'a mut Map<String, Value>> {
    root.entry(name)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| Error::sandbox(format!("the sandbox policy's \"{name}\" must be an object")))
}

fn string_list<'a>(
    sec: &'a mut Map<String, Value>,
    sec_name: &str,
    key: &str,
    required: bool,
) -> Result<Option<&'a mut Vec<Value>>> {
    if required {
        sec.entry(key).or_insert_with(|| Value::Array(Vec::new()));
    }
    let Some(value) = sec.get_mut(key) else {
        return Ok(None);
    };
    let list = value.as_array_mut().ok_or_else(|| {
        Error::sandbox(format!(
            "the sandbox policy's \"{sec_name}.{key}\" must be a list of strings"
        ))
    })?;
    if list.iter().any(|v| !v.is_string()) {
        return Err(Error::sandbox(format!(
            "the sandbox policy's \"{sec_name}.{key}\" must be a list of strings"
        )));
    }
    Ok(Some(list))
}

/// Paths ipybox adds to any policy, for its own needs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Additions<'a> {
    /// Appended to `allowWrite` (the session's state directory).
    pub allow_write: &'a [PathBuf],
    /// Appended to `denyWrite` (what configures the gateway and the next kernels).
    pub deny_write: &'a [PathBuf],
    /// Appended to `denyRead` (other sessions' state, the MCP registry).
    pub deny_read: &'a [PathBuf],
    /// Appended to `allowRead` (this session's state directory inside a denied one).
    pub allow_read: &'a [PathBuf],
}

/// The policy as handed to srt: paths absolute, ipybox's `additions` appended, required
/// lists present.
pub fn render(
    policy: Value,
    workspace: &Path,
    home: &Path,
    additions: Additions<'_>,
) -> Result<Value> {
    let Value::Object(mut root) = policy else {
        return Err(Error::sandbox(
            "the sandbox policy must be a JSON object with \"filesystem\" and \"network\" sections",
        ));
    };
    {
        let fs = section(&mut root, "filesystem")?;
        if fs.get("disabled").and_then(Value::as_bool) == Some(true) {
            tracing::warn!("the sandbox policy disables file-system restrictions");
        }
        for key in PATH_LISTS {
            let extra = match key {
                "allowWrite" => additions.allow_write,
                "denyWrite" => additions.deny_write,
                "denyRead" => additions.deny_read,
                _ => additions.allow_read,
            };
            let required = REQUIRED_PATH_LISTS.contains(&key) || !extra.is_empty();
            if let Some(list) = string_list(fs, "filesystem", key, required)? {
                for v in list.iter_mut() {
                    if let Some(s) = v.as_str() {
                        *v = Value::String(absolute(s, workspace, home));
                    }
                }
                for dir in extra {
                    let dir = Value::String(dir.to_string_lossy().into_owned());
                    if !list.contains(&dir) {
                        list.push(dir);
                    }
                }
            }
        }
    }
    {
        let net = section(&mut root, "network")?;
        for key in REQUIRED_DOMAIN_LISTS {
            string_list(net, "network", key, true)?;
        }
        if net.get("allowAllUnixSockets").and_then(Value::as_bool) == Some(true) {
            tracing::warn!(
                "the sandbox policy allows all Unix sockets: kernel code can reach host services such as D-Bus or Docker"
            );
        }
    }
    if root
        .get("enableWeakerNestedSandbox")
        .and_then(Value::as_bool)
        == Some(true)
    {
        tracing::warn!("the sandbox policy enables srt's weaker nested sandbox");
    }
    Ok(Value::Object(root))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_workspace_policy_is_written_once_and_never_through_a_link() {
        let ws = tempfile::tempdir().expect("tempdir");
        let (file, created) = workspace_policy(ws.path()).expect("created");
        assert!(created, "a workspace without one gets the default");
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            DEFAULT_KERNEL_POLICY
        );
        std::fs::write(&file, "{}").expect("edited");
        assert_eq!(
            workspace_policy(ws.path()).expect("kept"),
            (file.clone(), false)
        );
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            "{}",
            "the workspace's own is kept"
        );
        let elsewhere = tempfile::tempdir().expect("tempdir");
        let other = tempfile::tempdir().expect("tempdir");
        let target = elsewhere.path().join("planted.json");
        std::os::unix::fs::symlink(&target, other.path().join(WORKSPACE_POLICY)).expect("link");
        let (_, created) = workspace_policy(other.path()).expect("answered");
        assert!(
            !created && !target.exists(),
            "a link planted at the name is not written through"
        );
        assert_eq!(
            std::fs::read_dir(other.path()).expect("list").count(),
            1,
            "no temporary file is left behind"
        );
    }

    fn render_default() -> Value {
        render(
            load(None).expect("default policy parses"),
            Path::new("/work/ws"),
            Path::new("/home/u"),
            Additions {
                allow_write: &[PathBuf::from("/data/sessions/s1")],
                deny_write: &[PathBuf::from("/data/sessions/s1/config")],
                deny_read: &[PathBuf::from("/data/sessions")],
                allow_read: &[PathBuf::from("/data/sessions/s1")],
            },
        )
        .expect("default policy renders")
    }

    #[test]
    fn default_policy_is_absolute_and_writes_only_workspace_and_state() {
        let p = render_default();
        let write: Vec<&str> = p["filesystem"]["allowWrite"]
            .as_array()
            .expect("list")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(write, ["/work/ws", "/data/sessions/s1"]);
        let deny: Vec<&str> = p["filesystem"]["denyRead"]
            .as_array()
            .expect("list")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for expected in [
            "/work/ws/.env",
            "/work/ws/**/.env",
            "/home/u/.ssh",
            "/home/u/.aws",
        ] {
            assert!(deny.contains(&expected), "{expected} in {deny:?}");
        }
        assert!(deny.iter().all(|d| d.starts_with('/')), "{deny:?}");
        assert_eq!(p["network"]["allowedDomains"], json!([]));
        assert_eq!(
            p["filesystem"]["denyWrite"],
            json!(["/data/sessions/s1/config"])
        );
        assert!(deny.contains(&"/data/sessions"), "{deny:?}");
        assert_eq!(p["filesystem"]["allowRead"], json!(["/data/sessions/s1"]));
    }

    #[test]
    fn a_policy_without_network_section_still_isolates_the_network() {
        let p = render(
            json!({"filesystem": {"allowWrite": ["out", "~"]}}),
            Path::new("/ws"),
            Path::new("/home/u"),
            Additions::default(),
        )
        .expect("renders");
        assert_eq!(
            p["network"],
            json!({"allowedDomains": [], "deniedDomains": []})
        );
        assert_eq!(p["filesystem"]["allowWrite"], json!(["/ws/out", "/home/u"]));
        assert_eq!(p["filesystem"]["denyRead"], json!([]));
    }

    #[test]
    fn every_shipped_profile_loads_and_renders() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sandbox-profiles");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).expect("sandbox-profiles/") {
            let path = entry.expect("entry").path();
            let policy = load(Some(&path)).expect("a shipped profile parses");
            let p = render(
                policy,
                Path::new("/ws"),
                Path::new("/h"),
                Additions::default(),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                p["network"]["allowedDomains"].is_array(),
                "{}",
                path.display()
            );
            seen += 1;
        }
        assert!(seen >= 4, "kernel default, MCP default and examples");
    }

    #[test]
    fn malformed_policies_are_reported() {
        for bad in [
            json!([]),
            json!({"filesystem": []}),
            json!({"filesystem": {"denyRead": ".env"}}),
            json!({"network": {"allowedDomains": [1]}}),
        ] {
            let err = render(
                bad.clone(),
                Path::new("/ws"),
                Path::new("/h"),
                Additions::default(),
            )
            .expect_err("must be rejected");
            assert!(err.to_string().contains("sandbox policy"), "{bad}: {err}");
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("p.json");
        std::fs::write(&file, "{ \"filesystem\": ").expect("write");
        let err = load(Some(&file)).expect_err("invalid JSON");
        assert!(err.to_string().contains("not valid JSON"), "{err}");
        let err = load(Some(&dir.path().join("missing.json"))).expect_err("missing");
        assert!(err.to_string().contains("cannot read"), "{err}");
    }
}
