//! Every data directory of the person's ipybox is hidden from sandboxed code, not only the
//! session's own: with `IPYBOX_HOME` set, the default one (`$XDG_DATA_HOME/ipybox`); with the
//! default, each `IPYBOX_HOME` ipybox has used, recorded in the user's state directory
//! (`$XDG_STATE_HOME/ipybox/homes`), which is hidden too. Real srt, through the CLI, in data
//! and state directories of the test's own.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use ipybox_tests::{ipybox_bin, workspace};

/// The person's directories, in a temporary root: the default data directory `default`
/// (under `XDG_DATA_HOME`), two others `a` and `b` (each an `IPYBOX_HOME`), the state
/// directory, and a file no policy hides.
struct Person {
    root: tempfile::TempDir,
    ws: tempfile::TempDir,
    python: PathBuf,
    srt: PathBuf,
}

impl Person {
    fn new() -> Person {
        let root = workspace();
        for (dir, secret) in [("xdg/ipybox", "default"), ("a", "a"), ("b", "b")] {
            let trust = root.path().join(dir).join("trust");
            std::fs::create_dir_all(&trust).unwrap();
            std::fs::write(trust.join("key"), format!("trust key of {secret}")).unwrap();
        }
        std::fs::write(root.path().join("open.txt"), "anyone may read this").unwrap();
        // The kernels' environment and srt are the test machine's, outside these homes.
        let real_home = ipybox::setup::ipybox_home().unwrap();
        let command = ipybox::setup::locate_srt(None, &real_home)
            .expect("srt is installed for the tests")
            .command();
        // IPYBOX_SRT names one program; srt may be a Node.js and its cli.js.
        let srt = root.path().join("srt");
        let quoted: Vec<String> = command
            .iter()
            .map(|a| format!("'{}'", a.to_string_lossy().replace('\'', r"'\''")))
            .collect();
        std::fs::write(
            &srt,
            format!("#!/bin/sh\nexec {} \"$@\"\n", quoted.join(" ")),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&srt, std::fs::Permissions::from_mode(0o755)).unwrap();
        Person {
            root,
            ws: workspace(),
            python: ipybox_tests::python(),
            srt,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    /// `ipybox exec [--sandbox] code` with `IPYBOX_HOME=home` (`None`: the default), under
    /// the policy file `policy` (`None`: the default policy).
    fn exec(&self, home: Option<&str>, sandbox: bool, policy: Option<&Path>, code: &str) -> String {
        let mut cmd = Command::new(ipybox_bin());
        cmd.arg("exec");
        if sandbox {
            cmd.arg("--sandbox");
        }
        if let Some(policy) = policy {
            cmd.arg("--sandbox-config").arg(policy);
        }
        cmd.arg(code)
            .current_dir(self.ws.path())
            .env("XDG_DATA_HOME", self.path("xdg"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("IPYBOX_PYTHON", &self.python)
            .env("IPYBOX_SRT", &self.srt)
            .env_remove("IPYBOX_HOME");
        if let Some(home) = home {
            cmd.env("IPYBOX_HOME", self.path(home));
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// What sandboxed code sees of each of `places` (name → path below the root): `READ`,
    /// `EMPTY` (an empty file or directory: what srt puts over a hidden one) or `BLOCKED`.
    fn probe(
        &self,
        home: Option<&str>,
        policy: Option<&Path>,
        places: &[(&str, &str)],
    ) -> BTreeMap<String, String> {
        let list: Vec<String> = places
            .iter()
            .map(|(name, rel)| format!("({name:?}, {:?})", self.path(rel).display().to_string()))
            .collect();
        // Then it tries to add a home of its choosing to the record.
        let code = format!(
            r#"import os
for name, p in [{}]:
    try:
        got = os.listdir(p) if os.path.isdir(p) else open(p).read()
        print(name, "READ" if got else "EMPTY")
    except OSError as e:
        print(name, "BLOCKED", type(e).__name__)
try:
    os.makedirs({state:?}, exist_ok=True)
    with open(os.path.join({state:?}, "homes"), "a") as f:
        f.write("/planted\n")
except OSError:
    pass
"#,
            list.join(", "),
            state = self.path("state/ipybox").display().to_string(),
        );
        let stdout = self.exec(home, true, policy, &code);
        stdout
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }
}

fn assert_hidden(seen: &BTreeMap<String, String>, name: &str, why: &str) {
    let got = seen.get(name).map_or("missing", String::as_str);
    assert!(
        got.starts_with("EMPTY") || got.starts_with("BLOCKED"),
        "{name} must be hidden ({why}), got {got}: {seen:?}"
    );
}

#[test]
fn sandboxed_code_sees_none_of_the_persons_data_directories() {
    let person = Person::new();
    // `b` was used once, unsandboxed: from then on it is one of the person's.
    assert_eq!(person.exec(Some("b"), false, None, "print(1)").trim(), "1");

    // With IPYBOX_HOME=a: the default data directory, and `b`, are hidden.
    let places = [
        ("default", "xdg/ipybox"),
        ("default-key", "xdg/ipybox/trust/key"),
        ("a-key", "a/trust/key"),
        ("b", "b"),
        ("b-key", "b/trust/key"),
        ("record", "state/ipybox/homes"),
        ("open", "open.txt"),
    ];
    let seen = person.probe(Some("a"), None, &places);
    assert_eq!(
        seen.get("open").map(String::as_str),
        Some("READ"),
        "what no policy hides stays readable: {seen:?}"
    );
    assert_hidden(&seen, "a-key", "the session's own data directory");
    assert_hidden(
        &seen,
        "default",
        "the default data directory, with IPYBOX_HOME set",
    );
    assert_hidden(
        &seen,
        "default-key",
        "the default data directory's trust key",
    );
    assert_hidden(&seen, "b", "another IPYBOX_HOME ipybox has used");
    assert_hidden(&seen, "b-key", "another IPYBOX_HOME's trust key");
    assert_hidden(&seen, "record", "the record of the data directories");

    // With the default: every IPYBOX_HOME ipybox has used (`a` just now, `b` before) —
    // under the default policy, and under one that lets kernels write all these folders.
    let policy = person.path("write-everything.json");
    let everything = serde_json::json!({
        "filesystem": {"denyRead": [], "allowWrite": [".", person.path("").display().to_string()], "denyWrite": []},
        "network": {"allowedDomains": [], "deniedDomains": []},
    });
    std::fs::write(&policy, everything.to_string()).unwrap();
    for policy in [None, Some(policy.as_path())] {
        let seen = person.probe(None, policy, &places);
        assert_eq!(
            seen.get("open").map(String::as_str),
            Some("READ"),
            "{policy:?}: {seen:?}"
        );
        assert_hidden(&seen, "default-key", "the session's own data directory");
        for name in ["a-key", "b", "b-key"] {
            assert_hidden(&seen, name, "an IPYBOX_HOME ipybox has used");
        }
        assert_hidden(&seen, "record", "the record of the data directories");
    }

    // The record, the host's own: every data directory used, private.
    let record = person.path("state/ipybox/homes");
    let text = std::fs::read_to_string(&record).unwrap();
    for home in ["b", "a", "xdg/ipybox"] {
        assert!(
            text.lines().any(|l| Path::new(l) == person.path(home)),
            "{home} is recorded: {text}"
        );
    }
    assert!(
        !text.contains("/planted"),
        "sandboxed code cannot write the record: {text}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(
        (mode(&person.path("state/ipybox")), mode(&record)),
        (0o700, 0o600)
    );
}
