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
/// policy, because the workspace had none (or only the empty placeholder a running sandbox
/// keeps at its name). A policy ipybox writes itself is accepted as it is written (see
/// [`review`]).
///
/// Every sandbox keeps the file read-only inside, present or absent
/// ([`prepare_session`](super::prepare_session)): otherwise kernel code could write it and
/// choose the next session's policy. `workspace` must be the canonical path the session
/// runs in, or the file would not be recognised as the workspace's.
pub fn workspace_policy(home: &Path, workspace: &Path) -> Result<(PathBuf, bool)> {
    let file = workspace.join(WORKSPACE_POLICY);
    match read_workspace_policy(workspace)? {
        Some(_) => return Ok((file, false)),
        None if std::fs::symlink_metadata(&file).is_ok() => {
            // The placeholder of a running sandbox: replaced (the sandbox keeps its own
            // read-only view of the empty file).
            let tmp = file.with_file_name(format!(
                ".{WORKSPACE_POLICY}.ipybox-{}.tmp",
                uuid::Uuid::new_v4().simple()
            ));
            let written = write_new(&tmp, DEFAULT_KERNEL_POLICY.as_bytes())
                .and_then(|()| std::fs::rename(&tmp, &file));
            let _ = std::fs::remove_file(&tmp);
            written.map_err(|e| Error::io(format!("creating {}", file.display()), e))?;
        }
        None => {
            // Written whole under another name, then linked into place: another ipybox
            // starting on the workspace never reads half a policy, and a file that appeared
            // meanwhile is kept.
            let tmp = workspace.join(format!(
                ".{WORKSPACE_POLICY}.ipybox-{}.tmp",
                uuid::Uuid::new_v4().simple()
            ));
            let linked = write_new(&tmp, DEFAULT_KERNEL_POLICY.as_bytes())
                .and_then(|()| std::fs::hard_link(&tmp, &file));
            let _ = std::fs::remove_file(&tmp);
            match linked {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Ok((file, false));
                }
                Err(e) => return Err(Error::io(format!("creating {}", file.display()), e)),
            }
        }
    }
    accept(home, workspace, DEFAULT_KERNEL_POLICY)?;
    Ok((file, true))
}

fn write_new(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(contents)?;
    f.sync_all()
}

/// The workspace's policy file as it is now: `None` when there is none (or only an empty
/// placeholder). A link is refused: the policy is the file at that name in the workspace,
/// never one elsewhere that a link planted by kernel code points to.
pub fn read_workspace_policy(workspace: &Path) -> Result<Option<String>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = workspace.join(WORKSPACE_POLICY);
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&file);
    let mut f = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(Error::sandbox(format!(
                "{} is a link: ipybox does not follow a link for the workspace's sandbox policy (replace it with the file itself)",
                file.display()
            )));
        }
        Err(e) => return Err(Error::io(format!("reading {}", file.display()), e)),
    };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Err(Error::sandbox(format!(
            "{} is not a regular file",
            file.display()
        )));
    }
    let mut text = String::new();
    f.read_to_string(&mut text)
        .map_err(|e| Error::io(format!("reading {}", file.display()), e))?;
    Ok((!text.is_empty()).then_some(text))
}

/// The workspace's policy against the one a person last accepted on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Review {
    /// The file is the policy last accepted (its text).
    Accepted(String),
    /// The file is not what was last accepted: never accepted (`accepted` is `None`), or
    /// changed since. A session does not run under it until a person accepts it again.
    Changed {
        /// The text last accepted, if any.
        accepted: Option<String>,
        /// The file's text now.
        current: String,
    },
}

/// Where ipybox keeps the text of the workspace policy last accepted: its directory for the
/// workspace in the data directory, out of kernel code's reach.
fn accepted_path(home: &Path, workspace: &Path) -> PathBuf {
    crate::home::workspace_dir(home, workspace).join("accepted-policy.json")
}

/// Compare the workspace's policy file with the one last accepted. A workspace without a
/// file is an error here: [`workspace_policy`] creates it first.
pub fn review(home: &Path, workspace: &Path) -> Result<Review> {
    let current = read_workspace_policy(workspace)?.ok_or_else(|| {
        Error::sandbox(format!(
            "the workspace has no sandbox policy {}",
            workspace.join(WORKSPACE_POLICY).display()
        ))
    })?;
    let accepted = std::fs::read_to_string(accepted_path(home, workspace)).ok();
    Ok(if accepted.as_deref() == Some(current.as_str()) {
        Review::Accepted(current)
    } else {
        Review::Changed { accepted, current }
    })
}

/// Record `text` as the workspace policy a person accepted (they saw or saved it).
pub fn accept(home: &Path, workspace: &Path, text: &str) -> Result<()> {
    crate::fsutil::write_private(&accepted_path(home, workspace), text.as_bytes())
}

/// The text of the workspace's policy when it is the one last accepted, else an error that
/// names the file and how to accept it.
pub fn accepted_text(home: &Path, workspace: &Path) -> Result<String> {
    match review(home, workspace)? {
        Review::Accepted(text) => Ok(text),
        Review::Changed { accepted, .. } => {
            let file = workspace.join(WORKSPACE_POLICY);
            let what = if accepted.is_some() {
                "changed since it was last accepted on this machine"
            } else {
                "has not been accepted on this machine yet"
            };
            Err(Error::sandbox(format!(
                "the sandbox policy {} {what}, and a policy nobody looked at could let code out of the sandbox. Review it with `ipybox sandbox accept --workspace {}` (or in the app's Sandbox tab), then run again",
                file.display(),
                workspace.display()
            )))
        }
    }
}

/// A line-by-line difference of two policies for a person to read: `- ` lines only in
/// `old`, `+ ` lines only in `new`, `  ` lines in both (longest common subsequence; policies
/// are a few hundred lines at most). Untrusted text: the caller escapes it for display.
pub fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = String::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push_str("  ");
            out.push_str(a[i]);
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push_str("- ");
            out.push_str(a[i]);
            i += 1;
        } else {
            out.push_str("+ ");
            out.push_str(b[j]);
            j += 1;
        }
        out.push('\n');
    }
    out
}

/// Read the policy `text` (from `origin`, for messages).
pub fn parse(text: &str, origin: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        Error::sandbox(format!(
            "the sandbox policy {origin} is not valid JSON: {e} (line {}, column {})",
            e.line(),
            e.column()
        ))
    })
}

const PATH_LISTS: [&str; 4] = ["denyRead", "allowRead", "allowWrite", "denyWrite"];
const REQUIRED_PATH_LISTS: [&str; 3] = ["denyRead", "allowWrite", "denyWrite"];
const REQUIRED_DOMAIN_LISTS: [&str; 2] = ["allowedDomains", "deniedDomains"];

/// Read the policy at `path`, or the default.
pub fn load(path: Option<&Path>) -> Result<Value> {
    match path {
        Some(p) => parse(
            &std::fs::read_to_string(p).map_err(|e| {
                Error::sandbox(format!(
                    "cannot read the sandbox policy {}: {e}",
                    p.display()
                ))
            })?,
            &p.display().to_string(),
        ),
        None => parse(DEFAULT_KERNEL_POLICY, "the built-in kernel policy"),
    }
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
        // What the person hid by name stays hidden: ipybox makes its own folders readable
        // again inside what it or a wider entry hides (the data directory, the home), never
        // one the policy names itself (a kernel that then cannot start is undone).
        let hidden_by_name: Vec<String> = fs
            .get("denyRead")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(|s| absolute(s, workspace, home))
                    .collect()
            })
            .unwrap_or_default();
        let allow_read: Vec<PathBuf> = additions
            .allow_read
            .iter()
            .filter(|dir| {
                let dir = dir.to_string_lossy();
                !hidden_by_name
                    .iter()
                    .any(|h| h.trim_end_matches('/') == dir.trim_end_matches('/'))
            })
            .cloned()
            .collect();
        for key in PATH_LISTS {
            let extra = match key {
                "allowWrite" => additions.allow_write,
                "denyWrite" => additions.deny_write,
                "denyRead" => additions.deny_read,
                _ => &allow_read,
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
        let home = tempfile::tempdir().expect("tempdir");
        let ws = tempfile::tempdir().expect("tempdir");
        let (file, created) = workspace_policy(home.path(), ws.path()).expect("created");
        assert!(created, "a workspace without one gets the default");
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            DEFAULT_KERNEL_POLICY
        );
        assert_eq!(
            review(home.path(), ws.path()).expect("reviewed"),
            Review::Accepted(DEFAULT_KERNEL_POLICY.to_owned()),
            "what ipybox wrote itself is accepted"
        );
        std::fs::write(&file, "{}").expect("edited");
        assert_eq!(
            workspace_policy(home.path(), ws.path()).expect("kept"),
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
        let err = workspace_policy(home.path(), other.path()).expect_err("a link");
        assert!(err.to_string().contains("is a link"), "{err}");
        assert!(
            !target.exists(),
            "a link planted at the name is not written through"
        );
        assert_eq!(
            std::fs::read_dir(other.path()).expect("list").count(),
            1,
            "no temporary file is left behind"
        );
    }

    #[test]
    fn a_policy_changed_since_it_was_accepted_is_not_used_until_accepted_again() {
        let home = tempfile::tempdir().expect("tempdir");
        let ws = tempfile::tempdir().expect("tempdir");
        let file = ws.path().join(WORKSPACE_POLICY);
        // An empty file is the placeholder a running sandbox keeps: no policy yet.
        std::fs::write(&file, "").expect("placeholder");
        assert_eq!(read_workspace_policy(ws.path()).expect("read"), None);
        let (_, created) = workspace_policy(home.path(), ws.path()).expect("written");
        assert!(created, "the placeholder is replaced by the default");
        // Planted (a cloned project, an unsandboxed kernel): never accepted.
        std::fs::write(&file, r#"{"filesystem": {"allowWrite": ["/"]}}"#).expect("planted");
        let Review::Changed { accepted, current } =
            review(home.path(), ws.path()).expect("reviewed")
        else {
            panic!("a planted policy passed as accepted");
        };
        assert_eq!(accepted.as_deref(), Some(DEFAULT_KERNEL_POLICY));
        let err = accepted_text(home.path(), ws.path()).expect_err("not accepted");
        assert!(
            err.to_string()
                .contains("changed since it was last accepted")
                && err.to_string().contains("ipybox sandbox accept"),
            "{err}"
        );
        accept(home.path(), ws.path(), &current).expect("accepted");
        assert_eq!(
            accepted_text(home.path(), ws.path()).expect("accepted"),
            current
        );
        // Another workspace's acceptance is its own.
        let other = tempfile::tempdir().expect("tempdir");
        std::fs::write(other.path().join(WORKSPACE_POLICY), &current).expect("same text");
        assert!(matches!(
            review(home.path(), other.path()).expect("reviewed"),
            Review::Changed { accepted: None, .. }
        ));
    }

    #[test]
    fn a_diff_marks_removed_and_added_lines() {
        let old = "{\n  \"a\": 1,\n  \"b\": 2\n}";
        let new = "{\n  \"a\": 1,\n  \"b\": 3,\n  \"c\": 4\n}";
        assert_eq!(
            diff(old, new),
            "  {\n    \"a\": 1,\n-   \"b\": 2\n+   \"b\": 3,\n+   \"c\": 4\n  }\n"
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
    fn a_folder_the_policy_hides_by_name_is_not_made_readable_again() {
        let policy = serde_json::json!({
            "filesystem": { "denyRead": ["~", "/data/venv"], "allowWrite": ["."], "denyWrite": [] },
            "network": { "allowedDomains": [], "deniedDomains": [] },
        });
        let allow = [
            PathBuf::from("/data/venv"),
            PathBuf::from("/data/sessions/s1"),
        ];
        let p = render(
            policy,
            Path::new("/work/ws"),
            Path::new("/home/u"),
            Additions {
                allow_read: &allow,
                ..Additions::default()
            },
        )
        .expect("renders");
        assert_eq!(
            p["filesystem"]["allowRead"],
            serde_json::json!(["/data/sessions/s1"]),
            "the environment the policy hides itself stays hidden; the state inside a wider entry is readable"
        );
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
