//! Places a grant must never open on a hint: where code written would run outside the
//! sandbox later, what the sandbox hides as secret, the home itself, ipybox's own data and
//! the Python the kernels run.
//!
//! Under a blocked cell ipybox offers a change of the policy ([`super::block`]) from the path
//! in the cell's own error, and the kernel chooses that path: a cell can raise an `OSError`
//! naming `~/.config/autostart/x.desktop` and print "click Allow writing below". The policy
//! agrees the sandbox blocks such a place (that is what makes it worth naming), so the check
//! that the block is real cannot stop the offer. [`way_out`] decides, in this one place,
//! which grants ipybox never offers, and the Sandbox tab flags the same grants in a policy
//! ([`in_policy`]). An entry opens everything under it, so a folder that holds such a place
//! is one too, and so is anything inside one.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::grants::{SECRET_PLACES, STARTUP_PLACES};
use super::paths::{resolve, segment_match, spell};
use super::policy::DEFAULT_KERNEL_POLICY;
use super::profile::{PolicyProblem, Severity};
use crate::events::Access;

/// What makes a place one no grant may open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The user's home: an entry for it, or for a folder above it, opens all of it.
    Home,
    /// ipybox's own data: other sessions' tokens, the MCP registry, approval rules, the
    /// audit log, the Python environment it manages.
    Ipybox,
    /// A Python environment or installation the gateway and kernels run: code written there
    /// runs in every later kernel, and in what the host runs with that Python.
    Interpreter,
    /// What the sandbox hides as secret (the hidden list ipybox ships).
    Secret,
    /// Code written there runs outside the sandbox later: at login, in a terminal, when a
    /// program starts or is installed.
    RunsLater,
}

impl Kind {
    /// Does a grant of `access` there matter? Reading what runs later gives nothing away;
    /// reading a secret, ipybox's data or the whole home does.
    fn matters_for(self, access: Access) -> bool {
        match access {
            Access::Write => true,
            Access::Read => matches!(self, Kind::Home | Kind::Ipybox | Kind::Secret),
            Access::Connect => false,
        }
    }

    /// The order places are named in when a grant of `access` opens several: what matters
    /// most for it first (`~/.config` is named for autostart when written, for the cloud
    /// credentials in it when read).
    fn rank(self, access: Access) -> u8 {
        match (self, access) {
            (Kind::Home, _) => 0,
            (Kind::Ipybox, _) => 1,
            (Kind::Interpreter, _) => 2,
            (Kind::RunsLater, Access::Write) => 3,
            (Kind::Secret, Access::Write) => 4,
            (Kind::Secret, _) => 3,
            (Kind::RunsLater, _) => 4,
        }
    }
}

/// In the home, besides [`STARTUP_PLACES`]: what runs code later. Shells and terminals,
/// desktop sessions and services, folders of programs on `PATH`, Python's user
/// site-packages and start-up files, installers' and git's configuration, editors.
const RUNS_LATER: [&str; 67] = [
    "bin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".kshrc",
    ".mkshrc",
    ".xsession",
    ".config/zsh",
    ".oh-my-zsh",
    ".config/nushell",
    ".tmux.conf",
    ".config/tmux",
    ".config/autostart-scripts",
    ".config/plasma-workspace",
    ".kde/Autostart",
    ".kde4/Autostart",
    ".config/lxsession",
    ".config/openbox",
    ".config/i3",
    ".config/sway",
    ".config/hypr",
    ".local/share/systemd",
    ".local/share/applications",
    ".local/share/dbus-1",
    ".config/mimeapps.list",
    ".cargo",
    ".rustup",
    ".nvm",
    ".volta",
    ".bun",
    ".deno",
    "go/bin",
    ".npm-global",
    ".local/share/pnpm",
    ".pyenv",
    ".local/lib",
    "Library/Python",
    ".pythonrc",
    ".pythonrc.py",
    ".pythonstartup",
    ".config/pip",
    ".pip",
    ".pydistutils.cfg",
    ".config/uv",
    ".local/share/uv",
    ".condarc",
    ".conda",
    ".jupyter",
    ".local/share/jupyter",
    ".gitconfig",
    ".config/git",
    ".vimrc",
    ".vim",
    ".config/nvim",
    ".emacs",
    ".emacs.d",
    ".config/Code",
    ".vscode",
    ".config/direnv",
    ".config/kitty",
    ".config/alacritty",
    ".config/wezterm",
    ".wezterm.lua",
    ".config/starship.toml",
    ".local/share/gnome-shell",
    ".local/share/nautilus",
    ".local/share/nautilus-python",
];

/// Outside the home: what the system runs and its programs, services and scheduled jobs;
/// the kernel's own settings (`/proc`, `/sys`); the user's runtime folders, where the systemd
/// user manager and D-Bus read units and sockets.
const SYSTEM: [&str; 19] = [
    "/proc",
    "/sys",
    "/run/user",
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/boot",
    "/opt/homebrew",
    "/nix",
    "/snap",
    "/var/spool/cron",
    "/Library",
    "/System",
    "/Applications",
];

/// One place, absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Place {
    path: PathBuf,
    kind: Kind,
}

/// The places of one computer and session that no grant may open, made ready once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    /// The user's home, as given and with its links followed.
    home: Vec<PathBuf>,
    places: Vec<Place>,
    /// Names hidden wherever they are (`.env`, `.env.*`).
    names: Vec<String>,
}

impl Places {
    /// The places for the user's `home`, with the session's `own` (ipybox's data directories,
    /// the Pythons it runs, the folders on the host's `PATH`).
    pub fn new(home: &Path, own: &[(PathBuf, Kind)]) -> Places {
        let hidden: Value = serde_json::from_str(DEFAULT_KERNEL_POLICY).unwrap_or(Value::Null);
        let hidden: Vec<&str> = hidden["filesystem"]["denyRead"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let in_home = |rest: &str| home.join(rest.strip_prefix("~/").unwrap_or(rest));
        let mut listed: Vec<(PathBuf, Kind)> = own.to_vec();
        listed.extend(
            hidden
                .iter()
                .copied()
                .chain(SECRET_PLACES.iter().map(|(p, _)| *p))
                .filter(|p| p.starts_with("~/"))
                .map(|p| (in_home(p), Kind::Secret)),
        );
        listed.extend(
            STARTUP_PLACES
                .iter()
                .copied()
                .chain(RUNS_LATER)
                .map(|p| (in_home(p), Kind::RunsLater)),
        );
        listed.extend(SYSTEM.iter().map(|p| (PathBuf::from(p), Kind::RunsLater)));
        let mut places = Vec::new();
        for (path, kind) in listed {
            if !path.is_absolute() {
                continue;
            }
            // As given and as srt would resolve an entry for it: a link in the home
            // (`~/.config` → a dotfiles folder) must not hide the place behind it.
            for path in [resolve(&path), path] {
                let place = Place { path, kind };
                if !places.contains(&place) {
                    places.push(place);
                }
            }
        }
        let names = hidden
            .iter()
            .filter(|p| !p.starts_with('~') && !p.starts_with('/'))
            .filter_map(|p| p.rsplit('/').next())
            .map(str::to_owned)
            .collect();
        let mut homes = vec![home.to_path_buf()];
        let real = resolve(home);
        if real != home {
            homes.push(real);
        }
        Places {
            home: homes,
            places,
            names,
        }
    }

    /// The user's home.
    fn home(&self) -> &Path {
        &self.home[0]
    }
}

/// A place a grant would open, and why that matters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Danger {
    /// What kind of place.
    pub kind: Kind,
    /// The place, as a policy spells it (`~/…` in the home).
    pub place: String,
}

impl Danger {
    /// Why no grant may open it, in words, naming the place.
    pub fn why(&self) -> String {
        let place = &self.place;
        match self.kind {
            Kind::Home => format!(
                "it would open your whole home folder ({place}), with what runs when you log in and your secrets"
            ),
            Kind::Ipybox => format!(
                "it holds ipybox's own data ({place}): other sessions' tokens, approval rules, the audit log, the kernels' Python"
            ),
            Kind::Interpreter => format!(
                "code written there ({place}) would run in every later kernel, and outside the sandbox: it is the Python the kernels run"
            ),
            Kind::Secret => format!(
                "the sandbox hides {place} as secret: keys, credentials, histories, and what configures the programs that use them"
            ),
            Kind::RunsLater => format!(
                "code written there ({place}) would run outside the sandbox later: when you log in, open a terminal or start a program"
            ),
        }
    }

    /// What a block says instead of an offer.
    pub fn refusal(&self) -> String {
        format!("ipybox does not offer to open this place: {}.", self.why())
    }
}

/// Would allowing `access` to `granted` (an absolute path: the folder or file an entry
/// names, which it opens with everything under it) open a place no grant may open? The one
/// answer for blocks, their offers, and the Sandbox tab.
pub fn way_out(access: Access, granted: &Path, places: &Places) -> Option<Danger> {
    let real = resolve(granted);
    let forms = [granted, real.as_path()];
    let spelled = |p: &Path| spell(p, places.home());
    if access != Access::Connect
        && let Some(home) = places
            .home
            .iter()
            .find(|h| forms.iter().any(|f| h.starts_with(f)))
    {
        return Some(Danger {
            kind: Kind::Home,
            place: spelled(home),
        });
    }
    if let Some(place) = places
        .places
        .iter()
        .filter(|p| {
            p.kind.matters_for(access)
                && forms
                    .iter()
                    .any(|f| p.path.starts_with(f) || f.starts_with(&p.path))
        })
        .min_by_key(|p| p.kind.rank(access))
    {
        return Some(Danger {
            kind: place.kind,
            place: spelled(&place.path),
        });
    }
    // A file hidden by name wherever it is (`.env`): the grant names it, or lies in it.
    let named = forms.iter().find_map(|f| {
        f.components().find_map(|c| {
            let c = c.as_os_str().to_string_lossy();
            places
                .names
                .iter()
                .find(|n| segment_match(n.as_bytes(), c.as_bytes()))
                .map(|_| c.into_owned())
        })
    });
    if Kind::Secret.matters_for(access)
        && let Some(name) = named
    {
        return Some(Danger {
            kind: Kind::Secret,
            place: format!("every {name}"),
        });
    }
    None
}

/// The entries of `policy` (a settings file's JSON) that would open a place no grant may
/// open, each a [`Severity::Danger`] against its field. `absolute` turns an entry into the
/// path it names (`~`, relative to the workspace, links followed).
pub fn in_policy(
    policy: &Value,
    places: &Places,
    absolute: impl Fn(&str) -> PathBuf,
) -> Vec<PolicyProblem> {
    let fs = &policy["filesystem"];
    let danger = |field: String, message: String| PolicyProblem {
        field,
        message,
        severity: Severity::Danger,
    };
    if fs["disabled"] == Value::Bool(true) {
        let everything = way_out(Access::Write, Path::new("/"), places);
        return everything
            .map(|d| {
                danger(
                    "filesystem.disabled".into(),
                    format!("File restrictions are off: {}.", d.why()),
                )
            })
            .into_iter()
            .collect();
    }
    let mut out = Vec::new();
    for (key, access, verb) in [
        ("allowWrite", Access::Write, "Writing"),
        ("allowRead", Access::Read, "Reading"),
    ] {
        for (i, entry) in fs[key].as_array().into_iter().flatten().enumerate() {
            let Some(entry) = entry.as_str() else {
                continue;
            };
            if let Some(d) = in_entry(access, entry, places, &absolute) {
                out.push(danger(
                    format!("filesystem.{key}[{i}]"),
                    format!("{verb} {entry}: {}.", d.why()),
                ));
            }
        }
    }
    out
}

/// The place an entry for `access` (as a policy spells it: `~/…`, relative, a glob) would
/// open, when no grant may open it.
pub fn in_entry(
    access: Access,
    entry: &str,
    places: &Places,
    absolute: impl Fn(&str) -> PathBuf,
) -> Option<Danger> {
    way_out(access, &absolute(&unglobbed(entry)), places)
}

/// The folder a glob entry opens at most: the part before its first wildcard (srt on Linux
/// drops a trailing `/**` of a write entry; it expands other globs at start-up).
fn unglobbed(entry: &str) -> String {
    let mut e = entry.trim();
    while let Some(rest) = e.strip_suffix("/**") {
        e = rest;
    }
    let parts: Vec<&str> = e
        .split('/')
        .take_while(|p| !p.contains(['*', '?', '[']))
        .collect();
    match parts.join("/") {
        p if p.is_empty() && entry.trim().starts_with('/') => "/".to_owned(),
        p => p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Computer {
        _dir: tempfile::TempDir,
        root: PathBuf,
        places: Places,
    }

    /// A home with a few places, ipybox's data directory, a kernel environment elsewhere,
    /// and a folder on PATH.
    fn computer() -> Computer {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        for d in [
            "home/.ssh",
            "home/.config/autostart",
            "home/data",
            "home/dotfiles/systemd",
            "data/ipybox/venv/lib/python3.12/site-packages",
            "envs/k/lib/python3.12/site-packages",
            "tools/bin",
            "srv/out",
        ] {
            std::fs::create_dir_all(root.join(d)).expect("mkdir");
        }
        // ~/.config/systemd is a link into a dotfiles folder.
        std::os::unix::fs::symlink(
            root.join("home/dotfiles/systemd"),
            root.join("home/.config/systemd"),
        )
        .expect("link");
        let places = Places::new(
            &root.join("home"),
            &[
                (root.join("data/ipybox"), Kind::Ipybox),
                (root.join("data/ipybox/venv"), Kind::Interpreter),
                (root.join("envs/k"), Kind::Interpreter),
                (root.join("tools/bin"), Kind::RunsLater),
            ],
        );
        Computer {
            _dir: dir,
            root,
            places,
        }
    }

    #[test]
    fn every_place_that_runs_code_later_or_holds_secrets_is_a_way_out() {
        let c = computer();
        let r = |p: &str| c.root.join(p);
        use Access::{Read, Write};
        use Kind::*;
        let table: Vec<(Access, PathBuf, Option<Kind>)> = vec![
            // The findings: autostart, the kernels' site-packages, ~/.ssh.
            (Write, r("home/.config/autostart"), Some(RunsLater)),
            (
                Write,
                r("data/ipybox/venv/lib/python3.12/site-packages"),
                Some(Ipybox),
            ),
            (
                Write,
                r("envs/k/lib/python3.12/site-packages"),
                Some(Interpreter),
            ),
            (Read, r("home/.ssh"), Some(Secret)),
            (Read, r("home/.ssh/id_ed25519"), Some(Secret)),
            (Write, r("home/.ssh/authorized_keys"), Some(RunsLater)),
            (Write, r("home/.ssh/config"), Some(Secret)),
            (Read, r("home/.config"), Some(Secret)),
            // The home, and every folder above it.
            (Write, r("home"), Some(Home)),
            (Read, r("home"), Some(Home)),
            (Write, c.root.clone(), Some(Home)),
            (Write, PathBuf::from("/"), Some(Home)),
            // A folder that holds such a place, or lies in one.
            (Write, r("home/.config"), Some(RunsLater)),
            (Write, r("home/.config/autostart/sub"), Some(RunsLater)),
            (Write, r("home/.local"), Some(RunsLater)),
            (Write, r("home/.local/share"), Some(RunsLater)),
            (
                Write,
                r("home/.local/lib/python3.12/site-packages"),
                Some(RunsLater),
            ),
            (Write, r("home/.local/bin"), Some(RunsLater)),
            (Write, r("home/bin"), Some(RunsLater)),
            (Write, r("home/.bashrc"), Some(RunsLater)),
            (Write, r("home/.zshrc"), Some(RunsLater)),
            (Write, r("home/.profile"), Some(RunsLater)),
            (Write, r("home/.bash_profile"), Some(RunsLater)),
            (Write, r("home/.config/fish/conf.d"), Some(RunsLater)),
            (Write, r("home/.config/systemd/user"), Some(RunsLater)),
            (Write, r("home/.local/share/systemd/user"), Some(RunsLater)),
            (Write, r("home/.config/environment.d"), Some(RunsLater)),
            (Write, r("home/.local/share/applications"), Some(RunsLater)),
            (Write, r("home/.config/git"), Some(RunsLater)),
            (Write, r("home/.gitconfig"), Some(RunsLater)),
            (Write, r("home/.pythonrc.py"), Some(RunsLater)),
            (Write, r("home/.gnupg"), Some(Secret)),
            (
                Write,
                r("home/.ipython/profile_default/startup"),
                Some(Secret),
            ),
            (Write, r("home/.aws"), Some(Secret)),
            // Through a link: ~/dotfiles/systemd is what ~/.config/systemd opens.
            (Write, r("home/dotfiles"), Some(RunsLater)),
            (Write, r("home/dotfiles/systemd/x.service"), Some(RunsLater)),
            // ipybox's own data, and what lies above it.
            (
                Read,
                r("data/ipybox/workspaces/w/audit.jsonl"),
                Some(Ipybox),
            ),
            (Write, r("data"), Some(Ipybox)),
            // A folder on the host's PATH; the system's own.
            (Write, r("tools/bin"), Some(RunsLater)),
            (
                Write,
                PathBuf::from("/usr/local/lib/python3.12"),
                Some(RunsLater),
            ),
            (Write, PathBuf::from("/etc/cron.d"), Some(RunsLater)),
            (
                Write,
                PathBuf::from("/var/spool/cron/crontabs"),
                Some(RunsLater),
            ),
            // A file hidden by name, wherever it is.
            (Read, r("srv/out/.env"), Some(Secret)),
            (Read, r("srv/out/.env.local"), Some(Secret)),
            // Nothing of the kind: offered as before.
            (Write, r("srv/out"), None),
            (Write, r("srv/out/new/deeper"), None),
            (Write, r("home/data"), None),
            (Write, r("home/data/report.csv"), None),
            (Read, r("home/data"), None),
            (Write, PathBuf::from("/tmp/ipybox-out"), None),
            (Write, PathBuf::from("/var/tmp"), None),
            (Write, PathBuf::from("/media/usb/out"), None),
            (Read, r("srv/out/.envrc"), None),
            // Reading what runs later gives nothing away; the kernels' Python is readable.
            (Read, r("home/.config/autostart"), None),
            (Read, r("home/.bashrc"), None),
            (Read, r("envs/k/lib/python3.12/site-packages"), None),
            (Read, PathBuf::from("/usr/share/dict"), None),
        ];
        for (access, path, kind) in table {
            assert_eq!(
                way_out(access, &path, &c.places).map(|d| d.kind),
                kind,
                "{access:?} {}",
                path.display()
            );
        }
        assert_eq!(
            way_out(Access::Connect, Path::new("/"), &c.places),
            None,
            "domains are not places"
        );
    }

    #[test]
    fn the_words_name_the_place_as_a_policy_spells_it() {
        let c = computer();
        let d = way_out(
            Access::Write,
            &c.root.join("home/.config/autostart/x.desktop"),
            &c.places,
        )
        .expect("a way out");
        assert_eq!(d.place, "~/.config/autostart");
        assert_eq!(
            d.refusal(),
            "ipybox does not offer to open this place: code written there (~/.config/autostart) would run outside the sandbox later: when you log in, open a terminal or start a program."
        );
        let d = way_out(Access::Write, &c.root.join("home"), &c.places).expect("the home");
        assert_eq!(d.place, "~");
    }

    #[test]
    fn a_policy_s_entries_that_open_a_way_out_are_flagged_against_their_field() {
        let c = computer();
        let ws = c.root.join("srv");
        let home = c.root.join("home");
        let absolute = |e: &str| {
            let p = if e == "~" {
                home.clone()
            } else if let Some(rest) = e.strip_prefix("~/") {
                home.join(rest)
            } else {
                ws.join(e)
            };
            resolve(&p)
        };
        let policy = serde_json::json!({"filesystem": {
            "denyRead": ["~/.ssh"],
            "allowRead": ["~/data", "~/.ssh/config"],
            "allowWrite": [".", "out", "~/.config/**", "~/*/autostart", "/tmp/x"],
        }});
        let got: Vec<(String, Severity)> = in_policy(&policy, &c.places, absolute)
            .into_iter()
            .map(|p| (p.field, p.severity))
            .collect();
        assert_eq!(
            got,
            [
                ("filesystem.allowWrite[2]".to_owned(), Severity::Danger),
                ("filesystem.allowWrite[3]".to_owned(), Severity::Danger),
                ("filesystem.allowRead[1]".to_owned(), Severity::Danger),
            ],
            "a glob is as wide as the folder before its first wildcard"
        );
        let off = serde_json::json!({"filesystem": {"disabled": true}});
        let got = in_policy(&off, &c.places, |e: &str| PathBuf::from(e));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].field, "filesystem.disabled");
    }

    #[test]
    fn a_glob_opens_the_folder_before_its_first_wildcard() {
        assert_eq!(unglobbed("~/.config/**"), "~/.config");
        assert_eq!(unglobbed("~/*/autostart"), "~");
        assert_eq!(unglobbed("/**"), "/");
        assert_eq!(unglobbed("**/.env"), "");
        assert_eq!(unglobbed("out"), "out");
    }
}
