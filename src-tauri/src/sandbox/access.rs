//! "Would this be allowed?": whether sandboxed code may read or write a path, or reach a
//! URL, and by which rule, answered from the policy exactly as srt receives it.
//!
//! The answer is computed from the settings [`policy::render`] writes for srt (paths
//! absolute, ipybox's own [`SessionPaths`] added), with srt 0.0.78's Linux rules
//! (srt's `linux-sandbox-utils.ts`, `sandbox-manager.ts`):
//!
//! - **read**: everything is readable except what `denyRead` hides; an `allowRead` (or
//!   `allowWrite`, which srt binds again) entry inside a hidden folder makes it readable
//!   again. The deepest entry that covers the path decides; a file hidden by name is only
//!   readable again through an entry naming that very file.
//! - **write**: only inside `allowWrite`; `denyWrite`, srt's own protected names in the
//!   workspace (`.bashrc`, `.git/hooks`, …) and hidden places are never written.
//! - **URL**: loopback and private addresses never leave the sandbox's own network; other
//!   hosts go through srt's proxy, which refuses `deniedDomains` first, then lets through
//!   `allowedDomains` (`*.example.org`: its subdomains, not itself; `host:port`: that port).
//!
//! Paths are resolved as the kernel would: relative to the workspace, `~` the home, and
//! links followed (srt resolves its entries the same way). Globs (`**/.env`) match as srt's
//! expansion at start-up would.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::SessionPaths;
use super::danger::Places;
pub use super::paths::resolve;
use super::paths::segment_match;
use super::placeholders::{GUARDED_DIRS, GUARDED_FILES};
use super::policy;
use crate::error::{Error, Result};

pub use crate::events::Access;

/// The answer to one question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Verdict {
    /// What was asked about.
    pub access: Access,
    /// The path (absolute, links followed) or URL asked about.
    pub target: String,
    /// Allowed or not.
    pub allowed: bool,
    /// The rule that decides (`filesystem.denyRead: ~/.ssh`), or `None` when no rule
    /// applies and the sandbox's default decides.
    pub rule: Option<String>,
    /// Why, in words.
    pub reason: String,
}

/// One entry of a path list, as srt receives it and as the policy spells it.
#[derive(Debug, Clone)]
struct PathRule {
    /// Absolute, links resolved (for a glob, those of the part before the first wildcard).
    path: PathBuf,
    glob: bool,
    /// `filesystem.denyRead: ~/.ssh`, or what ipybox added it for.
    origin: String,
}

/// A policy made ready to answer questions; built once, asked many times.
#[derive(Debug, Clone)]
pub struct Checker {
    workspace: PathBuf,
    home: PathBuf,
    deny_read: Vec<PathRule>,
    allow_read: Vec<PathRule>,
    allow_write: Vec<PathRule>,
    deny_write: Vec<PathRule>,
    allowed_domains: Vec<String>,
    denied_domains: Vec<String>,
    disabled: bool,
    allow_git_config: bool,
    settings: Value,
    /// What no grant may open ([`danger`](super::danger)).
    places: Places,
}

const ADDED: [(&str, &str); 4] = [
    ("denyRead", "ipybox hides its data directory"),
    ("allowRead", "ipybox keeps readable what kernels need there"),
    (
        "allowWrite",
        "ipybox lets kernels write the session's own state",
    ),
    (
        "denyWrite",
        "ipybox keeps read-only what configures the next sessions",
    ),
];

impl Checker {
    /// The checker for `policy` (a settings file's JSON) on `workspace` (canonical), the
    /// user's home `home`, with ipybox's `paths` added as a session adds them.
    pub fn new(
        policy: Value,
        workspace: &Path,
        home: &Path,
        paths: &SessionPaths,
    ) -> Result<Checker> {
        let written = policy.clone();
        let settings = policy::render(policy, workspace, home, paths.additions())?;
        let fs = &settings["filesystem"];
        let list = |key: &str| -> Vec<PathRule> {
            let own = written["filesystem"][key]
                .as_array()
                .map_or(0, std::vec::Vec::len);
            let added = ADDED.iter().find(|(k, _)| *k == key).map_or("", |a| a.1);
            strings(&fs[key])
                .iter()
                .enumerate()
                // srt on Linux drops a trailing `/**` of a write entry, then skips any entry
                // that is still a glob.
                .filter_map(|(i, rendered)| {
                    if !key.ends_with("Write") {
                        return Some((i, rendered.clone()));
                    }
                    let stripped = rendered.strip_suffix("/**").unwrap_or(rendered);
                    (!has_glob(stripped)).then(|| (i, stripped.to_owned()))
                })
                .map(|(i, rendered)| {
                    let origin = match written["filesystem"][key][i].as_str() {
                        Some(spelled) if i < own => format!("filesystem.{key}: {spelled}"),
                        _ => format!("{added} ({rendered})"),
                    };
                    let glob = has_glob(&rendered);
                    PathRule {
                        path: if glob {
                            PathBuf::from(&rendered)
                        } else {
                            resolve(Path::new(&rendered))
                        },
                        glob,
                        origin,
                    }
                })
                .collect()
        };
        Ok(Checker {
            workspace: workspace.to_path_buf(),
            home: home.to_path_buf(),
            deny_read: list("denyRead"),
            allow_read: list("allowRead"),
            allow_write: list("allowWrite"),
            deny_write: list("denyWrite"),
            allowed_domains: strings(&settings["network"]["allowedDomains"]),
            denied_domains: strings(&settings["network"]["deniedDomains"]),
            disabled: fs["disabled"] == Value::Bool(true),
            allow_git_config: fs["allowGitConfig"] == Value::Bool(true),
            settings,
            places: Places::new(home, &own_places(paths, workspace)),
        })
    }

    /// The user's home, for `~` paths.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The settings as srt receives them.
    pub fn settings(&self) -> &Value {
        &self.settings
    }

    /// Answer for `query`: a URL (`scheme://…`) gets one verdict, a path two (read, write).
    pub fn check(&self, query: &str) -> Vec<Verdict> {
        if query.contains("://") {
            return vec![self.url(query)];
        }
        let path = self.absolute(query);
        vec![self.read(&path), self.write(&path)]
    }

    /// What no grant may open, on this computer and in this session ([`danger::way_out`]).
    ///
    /// [`danger::way_out`]: super::danger::way_out
    pub fn places(&self) -> &Places {
        &self.places
    }

    /// The entries of `policy` (a settings file's JSON, as written) that open a place no
    /// grant may open, each against its field.
    pub fn ways_out(&self, policy: &Value) -> Vec<super::PolicyProblem> {
        super::danger::in_policy(policy, &self.places, |e| self.absolute(e))
    }

    /// The place no grant may open that an entry `entry` for `access` would open.
    pub fn way_out(&self, access: Access, entry: &str) -> Option<super::danger::Danger> {
        super::danger::in_entry(access, entry, &self.places, |e| self.absolute(e))
    }

    /// `query` as the kernel opens it: `~` the home, relative to the workspace, links
    /// followed.
    fn absolute(&self, query: &str) -> PathBuf {
        let p = if query == "~" {
            self.home.clone()
        } else if let Some(rest) = query.strip_prefix("~/") {
            self.home.join(rest)
        } else {
            self.workspace.join(query)
        };
        resolve(&p)
    }

    /// May sandboxed code read `path` (absolute, resolved)?
    pub fn read(&self, path: &Path) -> Verdict {
        let target = path.display().to_string();
        let verdict = |allowed, rule: Option<&str>, reason: String| Verdict {
            access: Access::Read,
            target: target.clone(),
            allowed,
            rule: rule.map(str::to_owned),
            reason,
        };
        if self.disabled {
            return verdict(
                true,
                Some("filesystem.disabled"),
                "file restrictions are off".into(),
            );
        }
        let Some((deny, deny_depth, exact_deny)) = deepest(&self.deny_read, path) else {
            return verdict(true, None, "no rule hides it".into());
        };
        // srt binds again what allowRead and allowWrite name inside a hidden folder; a file
        // hidden by its own name only when an entry names that very file.
        let lift = self
            .allow_read
            .iter()
            .chain(&self.allow_write)
            .filter(|r| !r.glob && r.path.starts_with(&deny.path) && path.starts_with(&r.path))
            .filter(|r| !exact_deny || r.path == deny.path)
            .max_by_key(|r| r.path.components().count());
        match lift {
            Some(again) if again.path.components().count() >= deny_depth => verdict(
                true,
                Some(&again.origin),
                format!("readable again inside {}", deny.path.display()),
            ),
            _ => verdict(
                false,
                Some(&deny.origin),
                "hidden: code sees an empty folder or file in its place".into(),
            ),
        }
    }

    /// May sandboxed code create or change `path` (absolute, resolved)?
    pub fn write(&self, path: &Path) -> Verdict {
        let target = path.display().to_string();
        let verdict = |allowed, rule: Option<String>, reason: &str| Verdict {
            access: Access::Write,
            target: target.clone(),
            allowed,
            rule,
            reason: reason.to_owned(),
        };
        if self.disabled {
            return verdict(
                true,
                Some("filesystem.disabled".into()),
                "file restrictions are off",
            );
        }
        let read = self.read(path);
        if !read.allowed {
            return verdict(
                false,
                read.rule,
                "hidden: what code writes there never reaches the real file",
            );
        }
        if let Some((rule, _, _)) = deepest(&self.deny_write, path) {
            return verdict(false, Some(rule.origin.clone()), "read-only");
        }
        if let Some(name) = self.guarded(path) {
            return verdict(
                false,
                Some(format!("srt's own protection: {name}")),
                "srt never lets sandboxed code change what shells, git and editors run or read as configuration",
            );
        }
        if let Some(own) = self.srt_writable(path) {
            return verdict(
                true,
                Some(format!("srt's own default: {own}")),
                "writable: srt always lets sandboxed code write there",
            );
        }
        match deepest(&self.allow_write, path) {
            Some((rule, _, _)) => verdict(true, Some(rule.origin.clone()), "writable"),
            None => verdict(false, None, "read-only: no allowWrite entry covers it"),
        }
    }

    /// What srt lets code write whatever the policy says (`SANDBOX_OWN_WRITE_PATHS`, and
    /// the home's `.npm/_logs` and `.claude/debug` unless hidden) that `path` lies in.
    fn srt_writable(&self, path: &Path) -> Option<String> {
        let own = [
            "/dev/stdout",
            "/dev/stderr",
            "/dev/null",
            "/dev/tty",
            "/tmp/claude",
        ]
        .map(PathBuf::from);
        let home = [".npm/_logs", ".claude/debug"].map(|d| self.home.join(d));
        own.iter()
            .chain(home.iter().filter(|d| self.read(d).allowed))
            .find(|d| path.starts_with(d))
            .map(|d| d.display().to_string())
    }

    /// The name srt protects from writes in the workspace that `path` is or lies in.
    fn guarded(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(&self.workspace).ok()?;
        let mut names: Vec<&str> = GUARDED_FILES
            .iter()
            .chain(&GUARDED_DIRS)
            .copied()
            .filter(|n| *n != ".env")
            .collect();
        names.push(".git/hooks");
        if !self.allow_git_config {
            names.push(".git/config");
        }
        names
            .into_iter()
            .find(|n| rel.starts_with(n))
            .map(str::to_owned)
    }

    /// May sandboxed code reach `url`?
    pub fn url(&self, url: &str) -> Verdict {
        let verdict = |allowed, rule: Option<String>, reason: String| Verdict {
            access: Access::Connect,
            target: url.to_owned(),
            allowed,
            rule,
            reason,
        };
        let Some((host, port)) = host_and_port(url) else {
            return verdict(
                false,
                None,
                "not a URL ipybox understands (scheme://host[:port]/…)".into(),
            );
        };
        if is_local(&host) {
            return verdict(
                false,
                None,
                format!(
                    "{host} is a local or private address: the sandbox has a network of its own, where nothing of this computer or its network is reachable"
                ),
            );
        }
        self.proxy(&host, port).target_of(url)
    }

    /// Does srt's proxy let a request for `host:port` through? The proxy's own rules only:
    /// what a client sends it (a local address included, when the code routes it there).
    pub fn proxy(&self, host: &str, port: u16) -> Verdict {
        let host = host.to_ascii_lowercase();
        let verdict = |allowed, rule: Option<String>, reason: String| Verdict {
            access: Access::Connect,
            target: format!("{host}:{port}"),
            allowed,
            rule,
            reason,
        };
        let matches = |entry: &String| domain_matches(&host, port, entry);
        if let Some(entry) = self.denied_domains.iter().find(|e| matches(e)) {
            return verdict(
                false,
                Some(format!("network.deniedDomains: {entry}")),
                "never reachable".into(),
            );
        }
        match self.allowed_domains.iter().find(|e| matches(e)) {
            Some(entry) => verdict(
                true,
                Some(format!("network.allowedDomains: {entry}")),
                "reachable through the sandbox's proxy".into(),
            ),
            None => verdict(
                false,
                None,
                format!("{host} is not on the allow list (network.allowedDomains)"),
            ),
        }
    }
}

impl Verdict {
    /// The same verdict, about `target`.
    fn target_of(self, target: &str) -> Verdict {
        Verdict {
            target: target.to_owned(),
            ..self
        }
    }
}

/// The session's own places no grant may open, but those in the workspace: it is writable by
/// design, and what in it configures later kernels (a `.venv` they run) is kept read-only by
/// ipybox's `denyWrite`; a folder of it on the host's `PATH` is the person's own doing. Else
/// the workspace's own `"."` would be flagged for what it holds.
fn own_places(paths: &SessionPaths, workspace: &Path) -> Vec<(PathBuf, super::danger::Kind)> {
    paths
        .ways_out
        .iter()
        .filter(|(p, _)| !resolve(p).starts_with(workspace))
        .cloned()
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// The deepest rule covering `path`, the depth it covers at, and whether it names `path`
/// itself as a file (a hidden file, not a folder above it).
fn deepest<'a>(rules: &'a [PathRule], path: &Path) -> Option<(&'a PathRule, usize, bool)> {
    rules
        .iter()
        .filter_map(|r| {
            let covered = if r.glob {
                glob_covers(&r.path, path)?
            } else if path.starts_with(&r.path) {
                r.path.clone()
            } else {
                return None;
            };
            let exact = covered == path && !path.is_dir();
            Some((r, covered.components().count(), exact))
        })
        .max_by_key(|(_, depth, _)| *depth)
}

/// The path `pattern` matches that `path` is or lies in.
fn glob_covers(pattern: &Path, path: &Path) -> Option<PathBuf> {
    let parts: Vec<String> = pattern
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let mut prefix = PathBuf::new();
    for c in path.components() {
        prefix.push(c);
        let names: Vec<String> = prefix
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if glob_match(&parts, &names) {
            return Some(prefix);
        }
    }
    None
}

/// Path segments against glob segments: `**` any number of segments, `*` and `?` within
/// one, `[…]` a character class.
fn glob_match(pattern: &[String], names: &[String]) -> bool {
    match pattern.split_first() {
        None => names.is_empty(),
        Some((p, rest)) if p == "**" => {
            (0..=names.len()).any(|skip| glob_match(rest, &names[skip..]))
        }
        Some((p, rest)) => match names.split_first() {
            Some((n, names)) => {
                segment_match(p.as_bytes(), n.as_bytes()) && glob_match(rest, names)
            }
            None => false,
        },
    }
}

/// The host (lower case, IPv6 without brackets) and port of `url`.
fn host_and_port(url: &str) -> Option<(String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let default = match scheme.to_ascii_lowercase().as_str() {
        "http" | "ws" => 80,
        "https" | "wss" => 443,
        "ftp" => 21,
        _ => return None,
    };
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok().filter(|p| *p > 0)?,
        None => default,
    };
    (!host.is_empty()).then(|| (host.to_ascii_lowercase(), port))
}

/// Addresses srt's `NO_PROXY` sends direct, where the sandbox's network has only itself.
fn is_local(host: &str) -> bool {
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => {
            ip.is_loopback() || ip.is_private() || ip.is_link_local() || ip.is_unspecified()
        }
        Ok(std::net::IpAddr::V6(ip)) => ip.is_loopback() || ip.is_unspecified(),
        Err(_) => false,
    }
}

/// srt's `matchesDomainPatternWithPort`.
fn domain_matches(host: &str, port: u16, entry: &str) -> bool {
    let (pattern, entry_port) = match entry.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') && p.parse::<u16>().is_ok() => (h, p.parse().ok()),
        _ => (entry, None),
    };
    if entry_port.is_some_and(|p: u16| p != port) {
        return false;
    }
    let pattern = pattern.to_ascii_lowercase();
    if pattern == "*" {
        return true;
    }
    match pattern.strip_prefix("*.") {
        Some(base) => {
            host.parse::<std::net::IpAddr>().is_err() && host.ends_with(&format!(".{base}"))
        }
        None => host == pattern,
    }
}

/// The checker for `policy` (read from `file`, if from one) as a session on `workspace`
/// would run it: ipybox's data directory `home`, the kernels' Python environment (the
/// managed one, or `$IPYBOX_PYTHON`), the user's home `user_home`.
pub fn for_session(
    policy: Value,
    file: Option<&Path>,
    home: &Path,
    workspace: &Path,
    user_home: &Path,
) -> Result<Checker> {
    let python = std::env::var_os("IPYBOX_PYTHON")
        .filter(|p| !p.is_empty())
        .map_or_else(|| home.join("venv/bin/python"), PathBuf::from);
    let options = super::SandboxOptions {
        policy: file.map(Path::to_path_buf),
        srt: None,
    };
    // A session's own state directory is made when it starts; any one answers alike.
    let state = home.join("sessions").join("SESSION");
    let paths = SessionPaths::new(&options, home, workspace, &state, &python);
    Checker::new(policy, workspace, user_home, &paths)
}

/// The verdicts for `query` under the policy `text` (the editor's, unsaved) on
/// `workspace`: the Sandbox tab's "Would this be allowed?".
#[cfg(feature = "desktop")]
pub fn check_text(text: &str, workspace: &Path, query: &str) -> Result<Vec<Verdict>> {
    Ok(editing(text, workspace)?.check(query.trim()))
}

/// The entries of the policy `text` (the editor's, unsaved; a workspace's, to accept) that
/// open a place no grant may open, in a session on `workspace`: flagged in the Sandbox tab,
/// named in the question that puts the policy in force (native, or `ipybox sandbox accept`).
pub fn ways_out_text(text: &str, workspace: &Path) -> Result<Vec<super::PolicyProblem>> {
    let checker = editing(text, workspace)?;
    let written = policy::parse(text, "being edited")?;
    Ok(checker.ways_out(&written))
}

/// The place no grant may open that allowing `entry` for `access` under the policy `text`
/// would open: a block's offer, as the person edited it, is refused then.
#[cfg(feature = "desktop")]
pub fn way_out_text(
    text: &str,
    workspace: &Path,
    access: Access,
    entry: &str,
) -> Result<Option<super::danger::Danger>> {
    Ok(editing(text, workspace)?.way_out(access, entry))
}

/// The checker for the policy `text` as the workspace's own, in a session on `workspace`.
fn editing(text: &str, workspace: &Path) -> Result<Checker> {
    let home = crate::home::ipybox_home()?;
    let user_home = dirs::home_dir()
        .ok_or_else(|| Error::sandbox("cannot find the home directory for `~` paths"))?;
    let policy = policy::parse(text, "being edited")?;
    let file = workspace.join(policy::WORKSPACE_POLICY);
    for_session(policy, Some(&file), &home, workspace, &user_home)
}

/// `ipybox sandbox check`: the verdicts for `queries` under `policy_file` (`None`: ipybox's
/// default; `workspace`: the workspace's own `sandbox-config.json`) on `workspace`, one
/// line each, for a terminal. Untrusted text (paths, policy entries) is escaped.
pub fn report(policy_file: Option<&Path>, workspace: &Path, queries: &[String]) -> Result<String> {
    let home = crate::home::ipybox_home()?;
    let user_home = dirs::home_dir()
        .ok_or_else(|| Error::sandbox("cannot find the home directory for `~` paths"))?;
    let workspace = std::fs::canonicalize(workspace)
        .map_err(|e| Error::io(format!("opening the workspace {}", workspace.display()), e))?;
    let (policy, file) = match policy_file {
        Some(p) if p == Path::new("workspace") => {
            let text = policy::read_workspace_policy(&workspace)?;
            let file = workspace.join(policy::WORKSPACE_POLICY);
            match text {
                Some(t) => (policy::parse(&t, &file.display().to_string())?, Some(file)),
                None => (policy::load(None)?, None),
            }
        }
        Some(p) => (policy::load(Some(p))?, Some(p.to_path_buf())),
        None => (policy::load(None)?, None),
    };
    let warnings = super::SandboxPolicy::from_json(&policy.to_string())
        .map(|p| p.validate())
        .unwrap_or_default();
    let written = policy.clone();
    let checker = for_session(policy, file.as_deref(), &home, &workspace, &user_home)?;
    let esc = |s: &str| crate::display::escape(s).into_owned();
    let mut out = format!(
        "policy: {}; workspace: {}\n",
        file.map_or_else(
            || "ipybox's default".to_owned(),
            |f| esc(&f.display().to_string())
        ),
        esc(&workspace.display().to_string())
    );
    for query in queries {
        for v in checker.check(query) {
            let what = match v.access {
                Access::Read => "read ",
                Access::Write => "write",
                Access::Connect => "reach",
            };
            out.push_str(&format!(
                "{what} {} {}: {}{}\n",
                if v.allowed { "ALLOWED" } else { "BLOCKED" },
                esc(&v.target),
                esc(&v.reason),
                v.rule
                    .map(|r| format!(" [{}]", esc(&r)))
                    .unwrap_or_default()
            ));
        }
    }
    // The places no grant may open, as the Sandbox tab flags them, then the grants that
    // matter, as it warns of them.
    for d in checker.ways_out(&written) {
        out.push_str(&format!(
            "danger: {} [{}]\n",
            esc(&d.message),
            esc(&d.field)
        ));
    }
    for w in warnings
        .iter()
        .filter(|w| w.severity == super::Severity::Warning)
    {
        out.push_str(&format!(
            "warning: {} [{}]\n",
            esc(&w.message),
            esc(&w.field)
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn checker(policy: Value, ws: &Path, home: &Path) -> Checker {
        Checker::new(policy, ws, home, &SessionPaths::default()).expect("renders")
    }

    #[test]
    fn the_deepest_rule_decides_and_a_hidden_file_stays_hidden() {
        let ws = Path::new("/nonexistent-ws");
        let home = Path::new("/nonexistent-home");
        let c = checker(
            json!({"filesystem": {"denyRead": ["~", "**/.env", "~/pub/secret"], "allowRead": [".", "~/pub"], "allowWrite": ["."]}}),
            ws,
            home,
        );
        let read = |p: &str| c.read(Path::new(p)).allowed;
        assert!(!read("/nonexistent-home/notes.txt"), "the home is hidden");
        assert!(read("/nonexistent-home/pub/a.txt"), "readable again");
        assert!(
            !read("/nonexistent-home/pub/secret/x"),
            "hidden deeper inside"
        );
        assert!(read("/nonexistent-ws/data.csv"));
        assert!(!read("/nonexistent-ws/.env"), "a glob hides at the top");
        assert!(!read("/nonexistent-ws/a/b/.env"), "and at any depth");
        assert!(read("/etc/hostname"), "the system stays readable");
        let v = c.read(Path::new("/nonexistent-home/notes.txt"));
        assert_eq!(v.rule.as_deref(), Some("filesystem.denyRead: ~"));
        let write = |p: &str| c.write(Path::new(p));
        assert!(write("/nonexistent-ws/out.csv").allowed);
        assert_eq!(
            write("/nonexistent-ws/.bashrc").rule.as_deref(),
            Some("srt's own protection: .bashrc")
        );
        assert!(!write("/nonexistent-ws/.git/hooks/pre-commit").allowed);
        assert!(!write("/tmp/x").allowed, "outside allowWrite");
        assert!(
            !write("/nonexistent-ws/.env").allowed,
            "hidden is not written"
        );
    }

    /// The kernels may run the workspace's own `.venv`, and the person may have a folder of
    /// it on `PATH`: the workspace's `"."` is not flagged for them (ipybox keeps the `.venv`
    /// read-only), while the same places outside the workspace are.
    #[test]
    fn the_workspace_is_not_flagged_for_what_it_holds() {
        let root = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(root.path()).expect("canonical");
        let (ws, home, data) = (root.join("ws"), root.join("home"), root.join("data"));
        for d in [ws.join(".venv/bin"), home.clone(), data.join("s")] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(ws.join(".venv/pyvenv.cfg"), "").expect("write");
        let paths = SessionPaths::new(
            &super::super::SandboxOptions::default(),
            &data,
            &ws,
            &data.join("s"),
            Path::new("/usr/bin/python3"),
        )
        .with_kernel_python(&ws.join(".venv/bin/python"));
        let mut paths = paths;
        paths.ways_out.push((
            ws.join("node_modules/.bin"),
            super::super::danger::Kind::RunsLater,
        ));
        let policy = json!({"filesystem": {"allowWrite": ["."], "denyRead": []}});
        let c = Checker::new(policy.clone(), &ws, &home, &paths).expect("renders");
        assert_eq!(c.ways_out(&policy), Vec::new(), "the workspace as usual");
        assert!(
            !c.write(&ws.join(".venv/lib/x.pth")).allowed,
            "its .venv stays read-only all the same"
        );
        let wide = json!({"filesystem": {"allowWrite": ["..", "~/.config"], "denyRead": []}});
        let fields: Vec<String> = c.ways_out(&wide).into_iter().map(|p| p.field).collect();
        assert_eq!(
            fields,
            ["filesystem.allowWrite[0]", "filesystem.allowWrite[1]"],
            "a folder above the workspace holds ipybox's data here; ~/.config holds autostart"
        );
    }

    #[test]
    fn urls_follow_the_proxy_rules() {
        let c = checker(
            json!({"network": {"allowedDomains": ["pypi.org", "*.github.com", "example.org:8443"], "deniedDomains": ["evil.github.com"]}}),
            Path::new("/ws"),
            Path::new("/h"),
        );
        let ok = |u: &str| c.url(u).allowed;
        assert!(ok("https://pypi.org/simple/"));
        assert!(!ok("https://files.pythonhosted.org/"));
        assert!(ok("https://api.github.com/x"), "a subdomain");
        assert!(!ok("https://github.com/"), "*.github.com is not github.com");
        assert!(!ok("https://evil.github.com/"), "denied first");
        assert!(ok("http://example.org:8443/"));
        assert!(!ok("https://example.org/"), "another port");
        assert!(!ok("http://localhost:8888/"), "the sandbox's own loopback");
        assert!(!ok("http://192.168.1.1/"));
        assert!(!ok("nonsense://x"));
        assert_eq!(
            c.url("https://evil.github.com").rule.as_deref(),
            Some("network.deniedDomains: evil.github.com")
        );
    }

    #[test]
    fn globs_match_like_srt_expands_them() {
        let m = |p: &str, n: &str| {
            glob_covers(Path::new(p), Path::new(n)).map(|p| p.display().to_string())
        };
        assert_eq!(m("/w/**/.env", "/w/.env").as_deref(), Some("/w/.env"));
        assert_eq!(
            m("/w/**/.env.*", "/w/a/.env.local").as_deref(),
            Some("/w/a/.env.local")
        );
        assert_eq!(m("/w/*.key", "/w/a.key/inner").as_deref(), Some("/w/a.key"));
        assert_eq!(m("/w/data[0-9]", "/w/data7").as_deref(), Some("/w/data7"));
        assert_eq!(m("/w/**/.env", "/w/.envrc"), None);
    }
}
