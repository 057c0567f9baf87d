//! A sandbox policy as a form edits it: the srt settings that matter, typed, with every
//! problem reported against the field it belongs to, and the profiles ipybox ships.
//!
//! Spec: srt's settings file (`filesystem.denyRead`/`allowRead`/`allowWrite`/`denyWrite`,
//! `network.allowedDomains`/`deniedDomains`, …). Keys this type does not know are kept as
//! they are, so a policy read and written back loses nothing.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// An srt settings file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SandboxPolicy {
    /// What code may read and write.
    #[serde(default)]
    pub filesystem: FilesystemPolicy,
    /// What code may reach.
    #[serde(default)]
    pub network: NetworkPolicy,
    /// srt's other settings, kept as they are.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `filesystem`: paths are absolute, `~/…`, or relative to the workspace; globs (`**/.env`)
/// are expanded when the sandbox starts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FilesystemPolicy {
    /// Hidden from code.
    #[serde(default)]
    pub deny_read: Vec<String>,
    /// Readable again inside a hidden place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_read: Vec<String>,
    /// Writable (everything else is read-only).
    #[serde(default)]
    pub allow_write: Vec<String>,
    /// Read-only again inside a writable place.
    #[serde(default)]
    pub deny_write: Vec<String>,
    /// Other keys, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `network`: code reaches the internet only through srt's proxy, for these domains.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicy {
    /// Reachable domains (`example.org`, `*.example.org`, `example.org:443`).
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    /// Never reachable, even when an allowed pattern matches.
    #[serde(default)]
    pub denied_domains: Vec<String>,
    /// Unix sockets code may connect to (macOS only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_unix_sockets: Vec<String>,
    /// Lift the block on Unix sockets entirely (D-Bus, Docker, X11 become reachable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_all_unix_sockets: Option<bool>,
    /// Let code listen on local ports (macOS only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_local_binding: Option<bool>,
    /// Other keys, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// How serious a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The policy cannot be used as it is.
    Error,
    /// It works, but weakens the sandbox.
    Warning,
    /// It works, and opens a place no grant should: where code written runs outside the
    /// sandbox later, a secret, the home, ipybox's own data ([`super::danger`]). Saved only
    /// as a person typed it, never offered.
    Danger,
}

/// One problem of a policy, against its field (`network.allowedDomains[1]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PolicyProblem {
    /// Where: the field's path in the file.
    pub field: String,
    /// What is wrong, in words.
    pub message: String,
    /// Error or warning.
    pub severity: Severity,
}

/// A profile ipybox ships (`sandbox-profiles/`).
#[derive(Debug, Clone, PartialEq)]
pub struct ShippedProfile {
    /// File name without `.json`.
    pub name: &'static str,
    /// What it is for.
    pub purpose: &'static str,
    /// The policy.
    pub policy: SandboxPolicy,
}

const SHIPPED: [(&str, &str, &str); 6] = [
    (
        "kernel",
        "the default for kernels (My files, no secrets): reads your files but not secrets, agents' data, browser profiles, histories, keyrings or mail; no network; writes only in the workspace",
        include_str!("../../sandbox-profiles/kernel.json"),
    ),
    (
        "kernel-workspace-only",
        "Workspace only: reads only the workspace, the Python environment and the system, nothing else of your home; no network; writes only in the workspace (recommended for agents)",
        include_str!("../../sandbox-profiles/kernel-workspace-only.json"),
    ),
    (
        "kernel-allow-pypi",
        "the default plus pypi.org and files.pythonhosted.org",
        include_str!("../../sandbox-profiles/kernel-allow-pypi.json"),
    ),
    (
        "kernel-read-only",
        "a kernel that may not change the workspace",
        include_str!("../../sandbox-profiles/kernel-read-only.json"),
    ),
    (
        "mcp-server",
        "the default for an MCP server run under srt, npm-ready",
        include_str!("../../sandbox-profiles/mcp-server.json"),
    ),
    (
        "mcp-offline",
        "an MCP server that is already installed: no network, no writes",
        include_str!("../../sandbox-profiles/mcp-offline.json"),
    ),
];

/// The profiles ipybox ships.
pub fn shipped_profiles() -> Vec<ShippedProfile> {
    SHIPPED
        .iter()
        .filter_map(|(name, purpose, text)| {
            Some(ShippedProfile {
                name,
                purpose,
                policy: SandboxPolicy::from_json(text).ok()?,
            })
        })
        .collect()
}

impl SandboxPolicy {
    /// Parse a settings file's text; a malformed one is an error with line and column.
    pub fn from_json(text: &str) -> Result<SandboxPolicy> {
        serde_json::from_str(text).map_err(|e| {
            Error::sandbox(format!(
                "the sandbox policy is not valid: {e} (line {}, column {})",
                e.line(),
                e.column()
            ))
        })
    }

    /// Read a settings file.
    pub fn load(path: &Path) -> Result<SandboxPolicy> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        Self::from_json(&text)
    }

    /// The file's text, pretty-printed.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The problems of the policy's own fields: errors (the policy cannot work) and the
    /// warnings of options meant for special cases. [`validate`](Self::validate) adds the
    /// grants that matter.
    pub(crate) fn field_problems(&self) -> Vec<PolicyProblem> {
        let mut out = Vec::new();
        let fs = &self.filesystem;
        for (key, list) in [
            ("denyRead", &fs.deny_read),
            ("allowRead", &fs.allow_read),
            ("allowWrite", &fs.allow_write),
            ("denyWrite", &fs.deny_write),
        ] {
            for (i, path) in list.iter().enumerate() {
                if let Some(message) = path_problem(path) {
                    out.push(problem(
                        format!("filesystem.{key}[{i}]"),
                        message,
                        Severity::Error,
                    ));
                }
            }
        }
        let net = &self.network;
        for (key, list) in [
            ("allowedDomains", &net.allowed_domains),
            ("deniedDomains", &net.denied_domains),
        ] {
            for (i, domain) in list.iter().enumerate() {
                if let Some(message) = domain_problem(domain, key == "allowedDomains") {
                    out.push(problem(
                        format!("network.{key}[{i}]"),
                        message,
                        Severity::Error,
                    ));
                }
            }
        }
        if self.other.get("enableWeakerNestedSandbox") == Some(&Value::Bool(true)) {
            out.push(problem(
                "enableWeakerNestedSandbox".into(),
                "the sandbox sees the host's processes (/proc): meant for containers only".into(),
                Severity::Warning,
            ));
        }
        if fs.other.get("allowGitConfig") == Some(&Value::Bool(true)) {
            out.push(problem(
                "filesystem.allowGitConfig".into(),
                "code can change .git/config, which your own git obeys outside the sandbox (core.fsmonitor, core.sshCommand run programs)".into(),
                Severity::Warning,
            ));
        }
        out
    }
}

fn problem(field: String, message: String, severity: Severity) -> PolicyProblem {
    PolicyProblem {
        field,
        message,
        severity,
    }
}

fn path_problem(path: &str) -> Option<String> {
    if path.trim().is_empty() {
        return Some("the path is empty".into());
    }
    if path.contains('\0') {
        return Some("the path contains a NUL character".into());
    }
    if path.trim() != path {
        return Some("the path starts or ends with spaces".into());
    }
    if path.starts_with('~') && path != "~" && !path.starts_with("~/") {
        return Some(format!(
            "{path:?}: `~` means your home only as `~` or `~/…` (another user's home is not supported)"
        ));
    }
    None
}

/// `allowed`: an `allowedDomains` entry, where srt refuses the broadest patterns (a lone
/// `*` in `deniedDomains` denies everything, which is fine).
fn domain_problem(domain: &str, allowed: bool) -> Option<String> {
    if domain.is_empty() {
        return Some("the domain is empty".into());
    }
    if domain.contains("://") {
        return Some(format!(
            "{domain:?} is a URL; give the domain alone (example.org)"
        ));
    }
    if domain.contains('/') {
        return Some(format!(
            "{domain:?} has a path; give the domain alone (example.org)"
        ));
    }
    let (host, port) = match domain.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (domain, None),
    };
    if let Some(port) = port
        && !port.parse::<u16>().is_ok_and(|p| p > 0)
    {
        return Some(format!("{domain:?}: {port:?} is not a port (1–65535)"));
    }
    if host == "*" && !allowed {
        return None;
    }
    // srt refuses these ("overly broad"): a policy with one would not start.
    if host == "*" {
        return Some(format!(
            "{domain:?} would allow every domain, which the sandbox refuses; list the domains code needs"
        ));
    }
    let wildcard = host.starts_with("*.");
    let host = host.strip_prefix("*.").unwrap_or(host);
    if wildcard && allowed && !host.contains('.') {
        return Some(format!(
            "{domain:?} would allow a whole top-level domain, which the sandbox refuses; name the site (*.example.{host})"
        ));
    }
    let valid_label = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    if host.len() > 253 || !host.split('.').all(valid_label) {
        return Some(format!(
            "{domain:?} is not a domain name (letters, digits, hyphens and dots, as in example.org)"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_profiles_are_valid_and_round_trip() {
        let profiles = shipped_profiles();
        assert_eq!(
            profiles.len(),
            SHIPPED.len(),
            "every shipped profile parses"
        );
        for p in profiles {
            let errors: Vec<_> = p
                .policy
                .validate()
                .into_iter()
                .filter(|x| x.severity == Severity::Error)
                .collect();
            assert!(errors.is_empty(), "{}: {errors:?}", p.name);
            let again = SandboxPolicy::from_json(&p.policy.to_json()).expect("round trip");
            assert_eq!(again, p.policy, "{} reads back the same", p.name);
        }
    }

    #[test]
    fn problems_name_their_field() {
        let p = SandboxPolicy::from_json(
            r#"{"filesystem": {"denyRead": [""], "allowWrite": ["~"], "denyWrite": ["~bob/x"]},
                "network": {"allowedDomains": ["pypi.org", "https://x.org", "a..b", "x.org:99999", "*.github.com", "*", "*.com"],
                            "deniedDomains": ["*"],
                            "allowAllUnixSockets": true},
                "mandatoryDenySearchDepth": 3}"#,
        )
        .expect("parses");
        let problems: Vec<(String, Severity)> = p
            .validate()
            .into_iter()
            .map(|x| (x.field, x.severity))
            .collect();
        assert_eq!(
            problems,
            [
                ("filesystem.denyRead[0]".to_owned(), Severity::Error),
                ("filesystem.denyWrite[0]".to_owned(), Severity::Error),
                ("network.allowedDomains[1]".to_owned(), Severity::Error),
                ("network.allowedDomains[2]".to_owned(), Severity::Error),
                ("network.allowedDomains[3]".to_owned(), Severity::Error),
                ("network.allowedDomains[5]".to_owned(), Severity::Error),
                ("network.allowedDomains[6]".to_owned(), Severity::Error),
                // The grants that matter (`grants`), after the errors.
                ("filesystem.allowWrite[0]".to_owned(), Severity::Warning),
                ("filesystem.denyRead".to_owned(), Severity::Warning),
                ("network.allowedDomains[4]".to_owned(), Severity::Warning),
                ("network.allowedDomains[5]".to_owned(), Severity::Warning),
                ("network.allowedDomains[6]".to_owned(), Severity::Warning),
                ("network.allowAllUnixSockets".to_owned(), Severity::Warning),
            ]
        );
        assert_eq!(
            p.other.get("mandatoryDenySearchDepth"),
            Some(&Value::from(3)),
            "unknown keys are kept"
        );
    }
}
