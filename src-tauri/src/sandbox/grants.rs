//! The grants of a policy that matter, each with what it lets code do: writing the home or
//! a file that runs when you log in or open a terminal, reading a secrets folder, a wildcard
//! domain, the Docker socket or every Unix socket, file restrictions off. Other settings
//! explain themselves where they are edited; warning about everything would hide these.
//!
//! [`SandboxPolicy::validate`](super::SandboxPolicy::validate) reports them as warnings, so
//! the command line (`ipybox sandbox check`, `ipybox sandbox accept`) and the Sandbox tab say
//! the same.

use super::profile::{FilesystemPolicy, PolicyProblem, SandboxPolicy, Severity};

/// Files and folders whose programs or settings run when you log in or open a terminal.
pub const STARTUP_PLACES: [&str; 20] = [
    "~/.bashrc",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.profile",
    "~/.zshrc",
    "~/.zprofile",
    "~/.zshenv",
    "~/.zlogin",
    "~/.xprofile",
    "~/.xinitrc",
    "~/.xsessionrc",
    "~/.pam_environment",
    "~/.config/autostart",
    "~/.config/systemd",
    "~/.config/environment.d",
    "~/.config/fish",
    "~/.local/bin",
    "~/.ssh/authorized_keys",
    "~/Library/LaunchAgents",
];

/// Folders of secrets, and what is in them.
pub const SECRET_PLACES: [(&str, &str); 14] = [
    ("~/.ssh", "SSH keys"),
    ("~/.gnupg", "GPG keys"),
    ("~/.aws", "AWS credentials"),
    ("~/.azure", "Azure credentials"),
    ("~/.config/gcloud", "Google Cloud credentials"),
    ("~/.kube", "Kubernetes credentials"),
    ("~/.docker", "Docker registry logins"),
    ("~/.netrc", "saved passwords"),
    ("~/.git-credentials", "git passwords"),
    ("~/.config/gh", "GitHub tokens"),
    ("~/.password-store", "passwords"),
    ("~/.local/share/keyrings", "the keyring"),
    ("~/.claude", "an agent’s credentials and conversations"),
    ("~/.codex", "an agent’s credentials and conversations"),
];

/// `~/x/` and `./x` as `~/x` and `x`; `~/` as `~`.
fn norm(path: &str) -> &str {
    let mut p = path.trim();
    while p.len() > 1 && p.ends_with('/') {
        p = &p[..p.len() - 1];
    }
    match p.strip_prefix("./") {
        Some(rest) if !rest.is_empty() => rest,
        _ => p,
    }
}

/// Does the entry `entry` cover `path` (the same place, or a folder it lies in)? Globs
/// cover nothing here.
fn covers(entry: &str, path: &str) -> bool {
    let e = norm(entry);
    if e.contains('*') {
        return false;
    }
    if e == "/" {
        return path.starts_with('/') || path.starts_with('~');
    }
    // Every home lies in /home (Linux) or /Users (macOS).
    if (e == "/home" || e == "/Users") && path.starts_with('~') {
        return true;
    }
    path == e || path.strip_prefix(e).is_some_and(|r| r.starts_with('/'))
}

/// Is the secret `path` readable under `fs`?
fn readable(fs: &FilesystemPolicy, path: &str) -> bool {
    if !fs.deny_read.iter().any(|d| covers(d, path)) {
        return true;
    }
    // Readable again: the folder itself, a folder around it, or something inside it.
    fs.allow_read
        .iter()
        .any(|a| covers(a, path) || covers(path, norm(a)))
}

fn warning(field: String, message: String) -> PolicyProblem {
    PolicyProblem {
        field,
        message,
        severity: Severity::Warning,
    }
}

impl SandboxPolicy {
    /// Every problem, each against its field: errors (the policy cannot work) and warnings
    /// (it weakens the sandbox: the grants that matter, each saying what it lets code do).
    /// Empty when the policy is good.
    pub fn validate(&self) -> Vec<PolicyProblem> {
        let mut out = self.field_problems();
        out.extend(grant_warnings(self));
        out
    }
}

/// The grants in `policy` that matter, each a warning against its field saying what it lets
/// code do.
pub fn grant_warnings(policy: &SandboxPolicy) -> Vec<PolicyProblem> {
    let mut out = Vec::new();
    let fs = &policy.filesystem;
    if fs.other.get("disabled").and_then(|v| v.as_bool()) == Some(true) {
        out.push(warning(
            "filesystem.disabled".into(),
            "File restrictions are off: code may change what runs when you log in (~/.bashrc, ~/.config/autostart) and read every secret you have (SSH keys, cloud credentials, passwords).".into(),
        ));
    } else {
        for (i, entry) in fs.allow_write.iter().enumerate() {
            let field = format!("filesystem.allowWrite[{i}]");
            let e = norm(entry);
            if matches!(e, "/" | "~" | "/home" | "/Users") {
                out.push(warning(field, format!("Writing {entry}: code may change any file of yours, including what runs when you log in or open a terminal — a way out of the sandbox.")));
                continue;
            }
            let startup: Vec<&str> = STARTUP_PLACES
                .iter()
                .copied()
                .filter(|s| covers(entry, s) || covers(s, e))
                .collect();
            if !startup.is_empty() {
                out.push(warning(
                    field,
                    format!(
                        "Writing {entry}: code may change {}, which run{} outside the sandbox when you log in or open a terminal — a way out of the sandbox.",
                        startup.join(", "),
                        if startup.len() == 1 { "s" } else { "" }
                    ),
                ));
            }
        }
        let secrets: Vec<&(&str, &str)> = SECRET_PLACES
            .iter()
            .filter(|(p, _)| readable(fs, p))
            .collect();
        if !secrets.is_empty() {
            let again = fs.allow_read.iter().position(|a| {
                secrets
                    .iter()
                    .any(|(p, _)| covers(a, p) || covers(p, norm(a)))
            });
            let named: Vec<String> = secrets
                .iter()
                .map(|(p, what)| format!("{p} ({what})"))
                .collect();
            out.push(warning(
                again.map_or_else(
                    || "filesystem.denyRead".to_owned(),
                    |i| format!("filesystem.allowRead[{i}]"),
                ),
                format!(
                    "Reading secrets: code may read {}, and send them wherever it can reach, an agent’s conversation included.",
                    named.join(", ")
                ),
            ));
        }
    }
    let net = &policy.network;
    for (i, d) in net.allowed_domains.iter().enumerate() {
        if d.starts_with('*') {
            let reach = if d == "*" {
                "on the internet".to_owned()
            } else {
                format!("under {}", d.trim_start_matches("*."))
            };
            out.push(warning(
                format!("network.allowedDomains[{i}]"),
                format!("Reaching {d}: code may reach every server {reach}, including ones other people run there — data can leave through any of them."),
            ));
        }
    }
    if net.allow_all_unix_sockets == Some(true) {
        out.push(warning(
            "network.allowAllUnixSockets".into(),
            "Every Unix socket: code may use the Docker socket (and run anything as root through it), D-Bus and your desktop (X11) — a way out of the sandbox.".into(),
        ));
    }
    for (i, s) in net.allow_unix_sockets.iter().enumerate() {
        let e = norm(s);
        if e.ends_with("docker.sock") || matches!(e, "/var/run" | "/run" | "/var") {
            out.push(warning(
                format!("network.allowUnixSockets[{i}]"),
                format!("The Docker socket ({s}): code may control Docker, and through it run anything as root on this computer."),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warned(json: &str) -> Vec<(String, String)> {
        let policy = SandboxPolicy::from_json(json).expect("a policy");
        grant_warnings(&policy)
            .into_iter()
            .map(|p| (p.field, p.message))
            .collect()
    }

    #[test]
    fn the_default_policy_grants_nothing_that_matters() {
        let default = SandboxPolicy::from_json(super::super::policy::DEFAULT_KERNEL_POLICY)
            .expect("the default parses");
        assert_eq!(grant_warnings(&default), Vec::new());
    }

    #[test]
    fn each_grant_that_matters_says_what_it_lets_code_do() {
        let got = warned(
            r#"{"filesystem": {"denyRead": ["~/.ssh", "~/.aws"], "allowRead": ["~/.ssh/config", "~/.aws"],
                "allowWrite": [".", "~/.config", "~/"], "denyWrite": []},
               "network": {"allowedDomains": ["pypi.org", "*.github.com"], "deniedDomains": [],
                "allowUnixSockets": ["/var/run/docker.sock"]}}"#,
        );
        let fields: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "filesystem.allowWrite[1]",
                "filesystem.allowWrite[2]",
                "filesystem.allowRead[0]",
                "network.allowedDomains[1]",
                "network.allowUnixSockets[0]",
            ]
        );
        assert!(
            got[0].1.contains("~/.config/autostart") && got[0].1.contains("a way out"),
            "{}",
            got[0].1
        );
        assert!(got[1].1.starts_with("Writing ~/: code may change any file"));
        assert!(
            got[2].1.contains("~/.ssh (SSH keys)")
                && got[2].1.contains("~/.aws (AWS credentials)")
                && got[2].1.contains("~/.gnupg (GPG keys)"),
            "secrets not hidden, or made readable again: {}",
            got[2].1
        );
        assert!(got[3].1.contains("every server under github.com"));
        assert!(got[4].1.contains("run anything as root"));
        let off = warned(
            r#"{"filesystem": {"disabled": true}, "network": {"allowAllUnixSockets": true}}"#,
        );
        let fields: Vec<&str> = off.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            ["filesystem.disabled", "network.allowAllUnixSockets"]
        );
    }
}

#[cfg(test)]
mod shared_cases {
    use super::*;

    /// The cases the Sandbox tab's copy is tested with too (`ui/tests/unit/policyChanges.test.ts`).
    #[test]
    fn the_shared_cases_are_worded_as_the_tab_words_them() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/grant-warnings/cases.json"
        );
        let golden: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("the shared cases"))
                .expect("json");
        let cases = golden["cases"].as_array().expect("cases");
        assert!(cases.len() >= 9, "has its cases");
        for c in cases {
            let policy: SandboxPolicy =
                serde_json::from_value(c["policy"].clone()).expect("a policy");
            let got: Vec<serde_json::Value> = grant_warnings(&policy)
                .into_iter()
                .map(|w| serde_json::json!({"field": w.field, "message": w.message}))
                .collect();
            assert_eq!(
                serde_json::Value::Array(got),
                c["warnings"],
                "{}",
                c["name"]
            );
        }
    }
}
