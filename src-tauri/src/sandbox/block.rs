//! Learning from blocks: when a cell fails because the sandbox refused a file operation,
//! what was blocked, by which rule, and the narrowest change of the policy that would allow
//! it.
//!
//! The kernel is untrusted, so nothing it prints is read. A hook in the kernel (ipybox's
//! kernel init) reports the failing exception's structured `errno` and `filename` over the
//! channel ipybox owns; that report is only a hint. The [`Checker`] for the policy the
//! session runs under decides whether the sandbox blocks that path at all: a kernel that
//! lies about a path can at most make ipybox offer a change that the policy check agrees is
//! a block, and a person still confirms the change natively.
//!
//! On Linux srt refuses a write outside `allowWrite` with `EROFS` (a read-only bind
//! mount), and hides a folder under an empty one, where a read fails with `ENOENT`.

use std::path::{Path, PathBuf};

#[cfg(any(test, feature = "desktop"))]
use serde_json::Value;

use super::access::{Access, Checker};
use super::danger::way_out;
use super::paths::{resolve, spell};
use crate::channel::{BlockReport, FileOp};

/// `EPERM`, `ENOENT`, `EACCES`, `EROFS` (the same numbers on Linux and macOS but `EROFS`,
/// which is 30 on both).
const EPERM: i32 = 1;
const ENOENT: i32 = 2;
const EACCES: i32 = 13;
const EROFS: i32 = 30;

pub use crate::events::SandboxBlock as Block;

/// The block `report` describes, when the policy agrees it is one; `None` when the
/// sandbox allows what the report says failed (the failure was the file system's own).
pub fn assess(report: &BlockReport, checker: &Checker) -> Option<Block> {
    let given = Path::new(&report.path);
    if !given.is_absolute() {
        return None;
    }
    let path = resolve(given);
    let access = match (report.errno, report.op) {
        (EROFS, _) => Access::Write,
        (ENOENT, _) => Access::Read,
        (EACCES | EPERM, Some(FileOp::Write)) => Access::Write,
        (EACCES | EPERM, Some(FileOp::Read)) => Access::Read,
        (EACCES | EPERM, _) if !checker.read(&path).allowed => Access::Read,
        (EACCES | EPERM, _) => Access::Write,
        _ => return None,
    };
    let verdict = match access {
        Access::Write => checker.write(&path),
        _ => checker.read(&path),
    };
    if verdict.allowed {
        return None;
    }
    let suggestion = match verdict.rule.as_deref() {
        // A write no allowWrite entry covers: the folder it goes into.
        None => Some(narrowest_folder(&path)),
        // A place the policy hides by name (`**/.env`): srt hides every match whatever
        // else the policy says, so only editing that entry helps.
        Some(rule) if rule.starts_with("filesystem.denyRead: ") && rule.contains('*') => None,
        // A folder the policy hides: an entry inside it makes it readable (or writable)
        // again.
        Some(rule) if rule.starts_with("filesystem.denyRead: ") => {
            Some(if access == Access::Read && path.is_file() {
                path.clone()
            } else {
                narrowest_folder(&path)
            })
        }
        Some(_) => None,
    };
    // The path is the kernel's to choose: a place no grant may open is never offered, however
    // real the block.
    let danger = suggestion
        .as_deref()
        .and_then(|s| way_out(access, s, checker.places()));
    let suggestion = suggestion.filter(|_| danger.is_none());
    Some(Block {
        access,
        path: path.display().to_string(),
        rule: verdict.rule,
        reason: verdict.reason,
        suggestion: suggestion.map(|p| spell(&p, checker.home())),
        refusal: danger.map(|d| d.refusal()),
    })
}

/// The narrowest folder that covers `path`: the folder itself when it is one, else the
/// folder it lies in.
pub fn narrowest_folder(path: &Path) -> PathBuf {
    if path.is_dir() {
        return path.to_path_buf();
    }
    path.parent().unwrap_or(path).to_path_buf()
}

#[cfg(any(test, feature = "desktop"))]
/// `policy` with `entry` added to `filesystem.allowWrite` (for a write),
/// `filesystem.allowRead` (for a read) or `network.allowedDomains` (for a connection),
/// unless it is there already.
pub fn allow(mut policy: Value, access: Access, entry: &str) -> Value {
    let (section, key) = match access {
        Access::Write => ("filesystem", "allowWrite"),
        Access::Read => ("filesystem", "allowRead"),
        Access::Connect => ("network", "allowedDomains"),
    };
    if !policy.is_object() {
        policy = Value::Object(Default::default());
    }
    let fs = policy
        .as_object_mut()
        .map(|o| {
            o.entry(section)
                .or_insert_with(|| Value::Object(Default::default()))
        })
        .filter(|f| f.is_object());
    let Some(Value::Object(fs)) = fs else {
        return policy;
    };
    let list = fs.entry(key).or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    if let Value::Array(items) = list
        && !items.iter().any(|v| v.as_str() == Some(entry))
    {
        items.push(Value::String(entry.to_owned()));
    }
    policy
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::SessionPaths;
    use serde_json::json;

    struct Place {
        _dir: tempfile::TempDir,
        root: PathBuf,
    }

    fn place() -> Place {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        for d in ["home/.ssh", "home/private", "home/data", "ws", "out"] {
            std::fs::create_dir_all(root.join(d)).expect("mkdir");
        }
        std::fs::write(root.join("home/.ssh/id_rsa"), "key").expect("write");
        std::fs::write(root.join("home/private/notes.txt"), "notes").expect("write");
        std::fs::write(root.join("ws/.env"), "A=1").expect("write");
        Place { _dir: dir, root }
    }

    fn checker(p: &Place, policy: Value) -> Checker {
        Checker::new(
            policy,
            &p.root.join("ws"),
            &p.root.join("home"),
            &SessionPaths::default(),
        )
        .expect("checker")
    }

    fn policy() -> Value {
        json!({
            "filesystem": {
                "denyRead": ["~/.ssh", "~/private", "**/.env"],
                "allowWrite": ["."],
                "denyWrite": ["./locked"]
            },
            "network": {"allowedDomains": [], "deniedDomains": []}
        })
    }

    /// The policy ipybox ships for kernels.
    fn default_policy() -> Value {
        crate::sandbox::policy::parse(crate::sandbox::policy::DEFAULT_KERNEL_POLICY, "default")
            .expect("the default parses")
    }

    fn report(errno: i32, path: &Path) -> BlockReport {
        BlockReport {
            errno,
            path: path.display().to_string(),
            op: None,
        }
    }

    #[test]
    fn a_write_outside_allow_write_suggests_the_folder_it_goes_into() {
        let p = place();
        let c = checker(&p, policy());
        let file = p.root.join("out/report.csv");
        let block = assess(&report(EROFS, &file), &c).expect("a block");
        assert_eq!(block.access, Access::Write, "EROFS is a refused write");
        assert_eq!(block.path, file.display().to_string());
        assert_eq!(block.rule, None, "no rule: nothing allows writing there");
        assert_eq!(
            block.suggestion.as_deref(),
            Some(p.root.join("out").display().to_string().as_str()),
            "the narrowest folder that covers the file"
        );
        let changed = allow(
            policy(),
            Access::Write,
            block.suggestion.as_deref().expect("a suggestion"),
        );
        assert!(
            checker(&p, changed).write(&file).allowed,
            "the suggested change allows exactly that write"
        );
    }

    #[test]
    fn a_write_the_sandbox_allows_is_not_a_block() {
        let p = place();
        let c = checker(&p, policy());
        assert_eq!(
            assess(&report(EROFS, &p.root.join("ws/x.csv")), &c),
            None,
            "the workspace is writable: a read-only error there is the file system's own"
        );
        assert_eq!(
            assess(&report(ENOENT, &p.root.join("out/missing.csv")), &c),
            None,
            "a missing file in a readable place is just missing"
        );
        assert_eq!(
            assess(&report(EROFS, Path::new("relative/x")), &c),
            None,
            "only absolute paths are taken from the kernel"
        );
        assert_eq!(
            assess(&report(5, &p.root.join("out/x")), &c),
            None,
            "EIO is not the sandbox"
        );
    }

    #[test]
    fn a_read_of_a_hidden_place_suggests_it_inside_the_hidden_folder() {
        let p = place();
        let c = checker(&p, policy());
        let key = p.root.join("home/private/notes.txt");
        let block = assess(&report(ENOENT, &key), &c).expect("a block");
        assert_eq!(block.access, Access::Read);
        assert_eq!(
            block.rule.as_deref(),
            Some("filesystem.denyRead: ~/private")
        );
        assert_eq!(
            block.suggestion.as_deref(),
            Some("~/private/notes.txt"),
            "an existing file: the file itself, spelled from the home"
        );
        assert_eq!(block.refusal, None, "a place of the person's own");
        let missing = p.root.join("home/private/2024/x");
        let block = assess(&report(ENOENT, &missing), &c).expect("a block");
        assert_eq!(block.suggestion.as_deref(), Some("~/private/2024"));
        let env = p.root.join("ws/.env");
        let block = assess(&report(EACCES, &env), &c).expect("a block");
        assert_eq!(
            block.access,
            Access::Read,
            "EACCES on a hidden path is a read"
        );
        assert_eq!(
            block.suggestion, None,
            "a file hidden by a glob: no entry unhides it, the rule is shown instead"
        );
        let changed = allow(policy(), Access::Read, "~/private/notes.txt");
        assert!(
            checker(&p, changed).read(&key).allowed,
            "the suggested entry makes the hidden file readable again"
        );
    }

    #[test]
    fn nothing_is_suggested_where_an_entry_cannot_help() {
        let p = place();
        let c = checker(&p, policy());
        let locked = p.root.join("ws/locked/a");
        let block = assess(&report(EROFS, &locked), &c).expect("a block");
        assert_eq!(
            block.rule.as_deref(),
            Some("filesystem.denyWrite: ./locked")
        );
        assert_eq!(
            block.suggestion, None,
            "denyWrite wins over allowWrite: the rule is shown, no entry offered"
        );
        let hook = p.root.join("ws/.git/hooks/pre-commit");
        let block = assess(&report(EROFS, &hook), &c).expect("a block");
        assert_eq!(
            block.suggestion, None,
            "srt's own protection is never offered away"
        );
    }

    /// The red team's findings (#45): a cell raises a crafted `OSError` naming a place whose
    /// code runs outside the sandbox later, or a secret; the policy agrees the sandbox blocks
    /// it, and the block is shown, but nothing is offered.
    #[test]
    fn a_crafted_error_naming_autostart_offers_nothing() {
        let p = place();
        let c = checker(&p, default_policy());
        for file in [
            p.root.join("home/.config/autostart/chart-export.desktop"),
            p.root.join("home/.config/systemd/user/evil.service"),
            p.root.join("home/.bashrc"),
            p.root.join("home/.local/bin/ls"),
        ] {
            let block = assess(&report(EROFS, &file), &c).expect("still shown as a block");
            assert_eq!(block.access, Access::Write);
            assert_eq!(
                block.suggestion,
                None,
                "no offer to write where code runs at the next login: {}",
                file.display()
            );
            let refusal = block
                .refusal
                .expect("the block says why nothing is offered");
            assert!(
                refusal.starts_with("ipybox does not offer to open this place: "),
                "{refusal}"
            );
        }
        let block = assess(
            &report(
                EROFS,
                &p.root.join("home/.config/autostart/chart-export.desktop"),
            ),
            &c,
        )
        .expect("a block");
        assert!(
            block.refusal.as_deref().is_some_and(
                |r| r.contains("(~/.config/autostart) would run outside the sandbox later")
            ),
            "the place is named as a policy spells it: {:?}",
            block.refusal
        );
    }

    #[test]
    fn a_crafted_error_naming_the_kernels_site_packages_offers_nothing() {
        let p = place();
        // ipybox's managed environment, in its data directory, that the kernels run.
        let data = p.root.join("data");
        let venv = data.join("venv");
        let site = venv.join("lib/python3.12/site-packages");
        std::fs::create_dir_all(venv.join("bin")).expect("mkdir");
        std::fs::create_dir_all(&site).expect("mkdir");
        std::fs::write(venv.join("pyvenv.cfg"), "version_info = 3.12.1\n").expect("write");
        std::fs::write(venv.join("bin/python"), "").expect("write");
        let state = data.join("sessions/s1");
        std::fs::create_dir_all(&state).expect("mkdir");
        let paths = SessionPaths::new(
            &crate::sandbox::SandboxOptions::default(),
            &data,
            &p.root.join("ws"),
            &state,
            &venv.join("bin/python"),
        );
        let c = Checker::new(
            default_policy(),
            &p.root.join("ws"),
            &p.root.join("home"),
            &paths,
        )
        .expect("checker");
        for file in [site.join("usercustomize.py"), site.join("evil.pth")] {
            let block = assess(&report(EROFS, &file), &c).expect("still shown as a block");
            assert_eq!(
                block.suggestion,
                None,
                "no offer to write the kernels' own Python: {}",
                file.display()
            );
            assert!(block.refusal.is_some(), "and the block says why");
        }
        // An installation the kernels' Python links to, outside ipybox's data directory.
        let install = p.root.join("py");
        std::fs::create_dir_all(install.join("bin")).expect("mkdir");
        std::fs::create_dir_all(install.join("lib/python3.12/site-packages")).expect("mkdir");
        std::fs::write(install.join("lib/python3.12/os.py"), "").expect("write");
        std::fs::write(install.join("bin/python3.12"), "").expect("write");
        let paths = SessionPaths::new(
            &crate::sandbox::SandboxOptions::default(),
            &data,
            &p.root.join("ws"),
            &state,
            &install.join("bin/python3.12"),
        );
        let c = Checker::new(
            default_policy(),
            &p.root.join("ws"),
            &p.root.join("home"),
            &paths,
        )
        .expect("checker");
        let file = install.join("lib/python3.12/site-packages/sitecustomize.py");
        let block = assess(&report(EROFS, &file), &c).expect("still shown as a block");
        assert_eq!(
            block.suggestion, None,
            "no offer to write the installation the kernels run"
        );
        assert!(
            block
                .refusal
                .as_deref()
                .is_some_and(|r| r.contains("the Python the kernels run")),
            "{:?}",
            block.refusal
        );
    }

    #[test]
    fn a_crafted_error_naming_a_secret_offers_nothing() {
        let p = place();
        let c = checker(&p, default_policy());
        for file in [
            p.root.join("home/.ssh/id_rsa"),
            p.root.join("home/.ssh/missing/x"),
            p.root.join("home/.ssh"),
            p.root.join("home/.aws/credentials"),
        ] {
            let block = assess(&report(ENOENT, &file), &c).expect("still shown as a block");
            assert_eq!(block.access, Access::Read);
            assert_eq!(
                block.suggestion,
                None,
                "no offer to read what the sandbox hides as secret: {}",
                file.display()
            );
            assert!(
                block
                    .refusal
                    .as_deref()
                    .is_some_and(|r| r.contains("as secret")),
                "{:?}",
                block.refusal
            );
            let block = assess(&report(EROFS, &file), &c).expect("still shown as a block");
            assert_eq!(
                block.suggestion,
                None,
                "nor to write there: {}",
                file.display()
            );
        }
    }

    /// Ways a kernel might spell a place to slip past the rule: `..`, doubled slashes, a
    /// link it planted in the workspace, a folder that does not exist yet, a name hidden
    /// wherever it is, the home's files themselves. None is offered.
    #[test]
    fn crafted_spellings_of_a_way_out_are_never_offered() {
        let p = place();
        std::fs::create_dir_all(p.root.join("home/.config")).expect("mkdir");
        std::os::unix::fs::symlink(p.root.join("home/.config"), p.root.join("ws/cfg"))
            .expect("a link the kernel planted in its workspace");
        let c = checker(&p, default_policy());
        let home = p.root.join("home").display().to_string();
        let ws = p.root.join("ws").display().to_string();
        for (errno, path) in [
            (EROFS, format!("{home}/data/../.config/autostart/x.desktop")),
            (EROFS, format!("{home}//.config///autostart/x.desktop")),
            (EROFS, format!("/../..{home}/.bashrc")),
            (EROFS, format!("{ws}/cfg/autostart/x.desktop")),
            (
                EROFS,
                format!("{ws}/cfg/systemd/user/default.target.wants/x.service"),
            ),
            (EROFS, format!("{home}/.local/share/applications/x.desktop")),
            (
                EROFS,
                format!("{home}/.local/lib/python3.12/site-packages/x.pth"),
            ),
            (EROFS, format!("{home}/.profile")),
            (EROFS, format!("{home}/.config/fish/config.fish")),
            (EROFS, format!("{home}/.config/git/hooks/pre-commit")),
            (EROFS, "/usr/lib/python3/dist-packages/x.pth".to_owned()),
            (EROFS, "/etc/cron.d/x".to_owned()),
            (EROFS, "/x.txt".to_owned()),
            (ENOENT, format!("{home}/.ssh/../.ssh/id_rsa")),
            (ENOENT, format!("{home}/.gnupg/private-keys-v1.d/x.key")),
            (ENOENT, format!("{ws}/sub/.env")),
        ] {
            let block = assess(&report(errno, Path::new(&path)), &c);
            assert!(
                block.as_ref().is_some_and(|b| b.suggestion.is_none()),
                "{path}: {block:?}"
            );
        }
        // A place of the person's own, spelled oddly, is still offered.
        let block =
            assess(&report(EROFS, &p.root.join("out/./new/../r.csv")), &c).expect("a block");
        assert_eq!(
            block.suggestion.as_deref(),
            Some(p.root.join("out").display().to_string().as_str())
        );
    }

    #[test]
    fn the_narrowest_folder_is_the_folder_itself_or_the_one_a_file_goes_into() {
        let p = place();
        assert_eq!(narrowest_folder(&p.root.join("out")), p.root.join("out"));
        assert_eq!(
            narrowest_folder(&p.root.join("out/new.csv")),
            p.root.join("out")
        );
        assert_eq!(narrowest_folder(Path::new("/")), PathBuf::from("/"));
    }

    #[test]
    fn allowing_adds_one_entry_once_and_keeps_the_rest() {
        let changed = allow(policy(), Access::Write, "/tmp");
        assert_eq!(changed["filesystem"]["allowWrite"], json!([".", "/tmp"]));
        assert_eq!(
            changed["filesystem"]["denyRead"],
            policy()["filesystem"]["denyRead"]
        );
        assert_eq!(
            allow(changed.clone(), Access::Write, "/tmp"),
            changed,
            "no duplicate"
        );
        let read = allow(json!({}), Access::Read, "~/data");
        assert_eq!(read, json!({"filesystem": {"allowRead": ["~/data"]}}));
        let reach = allow(changed.clone(), Access::Connect, "localhost:8000");
        assert_eq!(
            reach["network"]["allowedDomains"],
            json!(["localhost:8000"]),
            "a domain goes to the network's allow list"
        );
        assert_eq!(reach["filesystem"], changed["filesystem"]);
    }
}
