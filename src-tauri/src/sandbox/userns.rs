//! Why this computer cannot give a kernel a sandbox, in words a person can pass to whoever
//! runs the machine. srt's bubblewrap builds the sandbox from unprivileged user namespaces;
//! a kernel setting, a distribution's hardening or a container can forbid them.

use std::path::Path;

/// What forbids user namespaces here and what an administrator can change, read from the
/// kernel's settings under `proc` (`/proc`); None when none of them forbids them.
pub fn forbidden_by(proc: &Path) -> Option<String> {
    let read = |name: &str| {
        std::fs::read_to_string(proc.join("sys").join(name))
            .ok()
            .map(|v| v.trim().to_owned())
    };
    if read("user/max_user_namespaces").as_deref() == Some("0") {
        return Some(
            "This computer allows no user namespaces (the kernel setting user.max_user_namespaces is 0), and the sandbox is built on them. An administrator can allow them with `sudo sysctl -w user.max_user_namespaces=15000` (and a file in /etc/sysctl.d/ to keep it).".to_owned(),
        );
    }
    if read("kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return Some(
            "This computer lets only administrators create user namespaces (the kernel setting kernel.unprivileged_userns_clone is 0), and the sandbox is built on them. An administrator can allow them with `sudo sysctl -w kernel.unprivileged_userns_clone=1` (and a file in /etc/sysctl.d/ to keep it).".to_owned(),
        );
    }
    if read("kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
        return Some(
            "AppArmor lets only programs with a profile for it create user namespaces (kernel.apparmor_restrict_unprivileged_userns is 1, as on Ubuntu 23.10 and later), and bubblewrap has none here. An administrator can install bubblewrap's profile (`sudo apt install apparmor-profiles`, then `sudo ln -s /usr/share/apparmor/extra-profiles/bwrap-userns-restrict /etc/apparmor.d/` and `sudo systemctl reload apparmor`).".to_owned(),
        );
    }
    None
}

/// Whether bubblewrap can make a user namespace here: the sandbox's first step, tried on its
/// own (a few milliseconds). `Err` holds what bubblewrap said.
pub fn probe(bwrap: &Path) -> Result<(), String> {
    let out = crate::process::host_command(bwrap)
        .args(["--unshare-user", "--ro-bind", "/", "/", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("{} could not be started: {e}", bwrap.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

/// Why the sandbox cannot start here, when bubblewrap cannot make a user namespace: the
/// kernel setting that forbids it and what to change, else what bubblewrap said (a
/// container's seccomp filter, say). None when bubblewrap can.
pub fn why_no_sandbox() -> Option<String> {
    let bwrap = super::install::which("bwrap")?;
    let said = probe(&bwrap).err()?;
    Some(forbidden_by(Path::new("/proc")).unwrap_or_else(|| {
        format!(
            "bubblewrap cannot create the user namespace the sandbox is built on ({}). Inside a container, it must be started with user namespaces allowed (Docker: `--security-opt seccomp=unconfined` or a profile that allows `clone` with CLONE_NEWUSER); elsewhere an administrator can check the kernel's user-namespace settings.",
            crate::display::escape(&said)
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc_with(settings: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, value) in settings {
            let path = dir.path().join("sys").join(name);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
            std::fs::write(path, format!("{value}\n")).expect("setting");
        }
        dir
    }

    #[test]
    fn each_kernel_setting_that_forbids_user_namespaces_is_named_with_its_fix() {
        for (setting, value, named) in [
            (
                "user/max_user_namespaces",
                "0",
                "user.max_user_namespaces=15000",
            ),
            (
                "kernel/unprivileged_userns_clone",
                "0",
                "kernel.unprivileged_userns_clone=1",
            ),
            (
                "kernel/apparmor_restrict_unprivileged_userns",
                "1",
                "bwrap-userns-restrict",
            ),
        ] {
            let proc = proc_with(&[(setting, value)]);
            let why = forbidden_by(proc.path()).expect("forbidden");
            assert!(why.contains(named), "{setting}: {why}");
        }
        let fine = proc_with(&[
            ("user/max_user_namespaces", "96367"),
            ("kernel/unprivileged_userns_clone", "1"),
            ("kernel/apparmor_restrict_unprivileged_userns", "0"),
        ]);
        assert_eq!(forbidden_by(fine.path()), None);
        assert_eq!(forbidden_by(Path::new("/nonexistent")), None);
    }

    #[test]
    fn bubblewrap_makes_a_user_namespace_on_this_machine() {
        // The test machine runs the sandbox's tests: its bubblewrap must work, and the
        // probe must say so (and nothing on why it would not).
        let Some(bwrap) = super::super::install::which("bwrap") else {
            panic!("bubblewrap is installed where the tests run");
        };
        assert_eq!(probe(&bwrap), Ok(()));
        assert_eq!(why_no_sandbox(), None);
        assert!(probe(Path::new("/nonexistent/bwrap")).is_err());
    }
}
