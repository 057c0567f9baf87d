//! What the shipped policies hide, and the "would this be allowed?" checker, against real
//! srt: the default hides agents' data, browser profiles, histories, keyrings, mail and
//! ipybox's data directory (a read from a cell fails); "Workspace only" reads the workspace
//! and the Python environment and nothing else of the home; and the checker's answers equal
//! what srt does with the very settings the checker read.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use ipybox::{CodeExecutor, SandboxChecker, SandboxOptions, SessionPaths};
use ipybox_tests::{ipybox_bin, workspace};

/// Places of the default policy's hidden list, one per kind, each made in a home of the
/// test's own with a file in it.
const HIDDEN: [&str; 22] = [
    ".claude/.credentials.json",
    ".claude.json",
    ".codex/auth.json",
    ".gemini/settings.json",
    ".cursor/mcp.json",
    ".mozilla/firefox/p.default/logins.json",
    ".config/google-chrome/Default/Cookies",
    ".config/chromium/Default/Login Data",
    ".var/app/org.mozilla.firefox/data.txt",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".local/share/fish/fish_history",
    ".ipython/profile_default/history.sqlite",
    ".local/share/keyrings/login.keyring",
    ".password-store/bank.gpg",
    ".thunderbird/p.default/prefs.js",
    ".local/share/evolution/mail/inbox",
    ".ssh/id_ed25519",
    ".aws/credentials",
    ".netrc",
    ".config/gh/hosts.yml",
];

#[test]
fn the_default_policy_hides_each_listed_place() {
    let home = workspace();
    let ws = workspace();
    for (i, rel) in HIDDEN.iter().enumerate() {
        let p = home.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format!("secret-{i}")).unwrap();
    }
    std::fs::write(home.path().join("notes.txt"), "my notes").unwrap();
    let data = ipybox::setup::ipybox_home().unwrap();
    let list: Vec<String> = HIDDEN.iter().map(|r| format!("{r:?}")).collect();
    let code = format!(
        r#"import os
for rel in [{}] + ["notes.txt"]:
    try:
        text = open(os.path.join(os.path.expanduser("~"), rel)).read()
        print(rel, "READ" if text else "EMPTY")
    except OSError as e:
        print(rel, "BLOCKED", type(e).__name__)
for rel in ["settings.json", "workspaces", "venv/pyvenv.cfg"]:
    try:
        p = os.path.join({data:?}, rel)
        print("data:" + rel, "READ" if (os.listdir(p) if os.path.isdir(p) else open(p).read()) else "EMPTY")
    except OSError as e:
        print("data:" + rel, "BLOCKED", type(e).__name__)
"#,
        list.join(", "),
        data = data.display().to_string(),
    );
    // The CLI in a home of the test's own (HOME), with ipybox's real data directory.
    let out = Command::new(ipybox_bin())
        .args(["exec", "--sandbox", &code])
        .current_dir(ws.path())
        .env("HOME", home.path())
        .env("IPYBOX_HOME", &data)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: BTreeMap<&str, &str> = stdout.lines().filter_map(|l| l.split_once(' ')).collect();
    for rel in HIDDEN {
        let got = seen.get(rel).copied().unwrap_or("missing");
        assert!(
            !got.starts_with("READ"),
            "~/{rel} must be hidden from sandboxed code, got {got}\n{stdout}"
        );
    }
    assert_eq!(
        seen.get("notes.txt").copied(),
        Some("READ"),
        "the person's own files stay readable under My files, no secrets\n{stdout}"
    );
    for hidden in ["data:settings.json", "data:workspaces"] {
        let got = seen.get(hidden).copied().unwrap_or("missing");
        assert!(
            !got.starts_with("READ"),
            "ipybox's data directory is hidden ({hidden}): {got}\n{stdout}"
        );
    }
    assert_eq!(
        seen.get("data:venv/pyvenv.cfg").copied(),
        Some("READ"),
        "the kernels' environment inside it stays readable\n{stdout}"
    );
}

#[tokio::test]
async fn workspace_only_reads_the_workspace_and_the_environment_and_nothing_else_of_home() {
    let ws = workspace();
    std::fs::write(ws.path().join("data.csv"), "a,b\n1,2\n").unwrap();
    let python = ipybox_tests::python();
    let user_home = std::env::var_os("HOME").map(PathBuf::from).unwrap();
    // A file of the person's in their real home, removed again whatever happens.
    let mine = tempfile::Builder::new()
        .prefix(".ipybox-workspace-only-probe-")
        .tempfile_in(&user_home)
        .unwrap();
    std::fs::write(mine.path(), "private").unwrap();
    let profile = ipybox::shipped_profiles()
        .into_iter()
        .find(|p| p.name == "kernel-workspace-only")
        .expect("the Workspace only preset ships");
    let policy_dir = workspace();
    let policy = policy_dir.path().join("workspace-only.json");
    std::fs::write(&policy, profile.policy.to_json()).unwrap();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .sandbox(true)
        .sandbox_config(&policy)
        .build();
    e.start()
        .await
        .expect("the kernel starts under Workspace only");
    let code = format!(
        r#"import os, sys
def probe(name, f):
    try:
        print(name, "READ" if f() else "EMPTY")
    except OSError as e:
        print(name, "BLOCKED", type(e).__name__)
probe("workspace", lambda: open("data.csv").read())
probe("env", lambda: open(os.path.join(sys.prefix, "pyvenv.cfg")).read())
probe("stdlib", lambda: open(os.__file__).read())
probe("system", lambda: open("/etc/passwd").read())
probe("mine", lambda: open({mine:?}).read())
print("home_listing", *sorted(os.listdir(os.path.expanduser("~"))))
"#,
        mine = mine.path().display().to_string()
    );
    let out = e.execute(&code, None).await;
    e.stop().await.unwrap();
    let out = out.unwrap().text.unwrap_or_default();
    let seen: BTreeMap<&str, &str> = out.lines().filter_map(|l| l.split_once(' ')).collect();
    for readable in ["workspace", "env", "stdlib", "system"] {
        assert_eq!(
            seen.get(readable).copied(),
            Some("READ"),
            "{readable}\n{out}"
        );
    }
    assert!(
        seen.get("mine").is_some_and(|s| !s.starts_with("READ")),
        "a file of the home outside the workspace and the environment is hidden\n{out}"
    );
    // Only the folders on the way to what stays readable show in the home.
    let on_the_way: Vec<String> = [
        python.clone(),
        std::fs::canonicalize(&python).unwrap(),
        ipybox::setup::ipybox_home().unwrap(),
    ]
    .iter()
    .filter_map(|p| p.strip_prefix(&user_home).ok()?.iter().next())
    .map(|c| c.to_string_lossy().into_owned())
    .collect();
    let listing = seen.get("home_listing").copied().unwrap_or_default();
    let mine_name = mine
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        !listing.split_whitespace().any(|n| n == mine_name),
        "the person's file does not even show in the home\n{out}"
    );
    for name in listing.split_whitespace() {
        assert!(
            on_the_way.iter().any(|n| n == name),
            "~/{name} shows in the home: only the way to the environment may\n{out}"
        );
    }
}

/// One question for the checker and for srt.
struct Probe {
    query: String,
    read: bool,
    write: bool,
}

/// Run `script` with sh under srt with `settings`, in `ws`.
fn under_srt(settings: &serde_json::Value, ws: &Path, dir: &Path, script: &str) -> String {
    let data = ipybox::setup::ipybox_home().unwrap();
    let srt = ipybox::setup::locate_srt(None, &data).expect("srt (ipybox setup --sandbox)");
    let file = dir.join("srt-settings.json");
    std::fs::write(&file, serde_json::to_string_pretty(settings).unwrap()).unwrap();
    let script_file = dir.join("probe.sh");
    std::fs::write(&script_file, script).unwrap();
    let mut command = srt.command();
    let program = command.remove(0);
    let out = Command::new(program)
        .args(command)
        .arg("--settings")
        .arg(&file)
        .arg("sh")
        .arg(&script_file)
        .current_dir(ws)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "srt ran the probe: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_checker_answers_what_srt_does() {
    let root_dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(root_dir.path()).unwrap();
    let (ws, home, data, elsewhere) = (
        root.join("ws"),
        root.join("home"),
        root.join("data"),
        root.join("elsewhere"),
    );
    let state = data.join("sessions/s1");
    for d in [&ws, &home, &state, &elsewhere] {
        std::fs::create_dir_all(d).unwrap();
    }
    let files = [
        "ws/data.txt",
        "ws/.env",
        "ws/sub/deep/.env",
        "ws/sub/a.key",
        "ws/secret-dir/s.txt",
        "ws/locked/f.txt",
        "ws/x.lock",
        "ws/.bashrc",
        "ws/.git/hooks/pre-commit",
        "ws/.git/config",
        "ws/sandbox-config.json",
        "home/notes.txt",
        "home/pub/p.txt",
        "home/pub/hidden.txt",
        "home/out/o.txt",
        "elsewhere/e.txt",
        "data/registry.json",
        "data/sessions/s1/token",
    ];
    for (i, f) in files.iter().enumerate() {
        let p = root.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format!("content-{i}")).unwrap();
    }
    std::os::unix::fs::symlink(home.join("notes.txt"), ws.join("link-notes")).unwrap();
    std::os::unix::fs::symlink(home.join("pub"), ws.join("link-pub")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, ws.join("link-out")).unwrap();
    let policy = serde_json::json!({
        "filesystem": {
            "denyRead": ["~", "**/.env", "**/*.key", "secret-dir", "~/pub/hidden.txt"],
            "allowRead": [".", "~/pub"],
            "allowWrite": [".", "~/out"],
            "denyWrite": ["locked", "*.lock"]
        },
        "network": {
            "allowedDomains": ["allowed.example.com", "*.wild.example.com", "port.example.com:8080", "93.184.215.14"],
            "deniedDomains": ["bad.wild.example.com"]
        }
    });
    let python = ipybox_tests::python();
    let options = SandboxOptions {
        policy: Some(ws.join("sandbox-config.json")),
        srt: None,
    };
    let paths = SessionPaths::new(&options, &data, &ws, &state, &python);
    let checker = SandboxChecker::new(policy, &ws, &home, &paths).unwrap();

    let p = |query: &str, read: bool, write: bool| Probe {
        query: query.to_owned(),
        read,
        write,
    };
    let r = |f: &str| root.join(f).display().to_string();
    let probes = vec![
        p("data.txt", true, true),
        p("new.txt", false, true),
        p(".env", true, true),
        p("sub/deep/.env", true, false),
        p("sub/a.key", true, false),
        p("secret-dir/s.txt", true, false),
        p("locked/f.txt", true, true),
        p("x.lock", true, true),
        p(".bashrc", true, true),
        p(".git/hooks/pre-commit", true, true),
        p(".git/config", true, true),
        p("sandbox-config.json", true, true),
        p("~/notes.txt", true, true),
        p("~/pub/p.txt", true, true),
        p("~/pub/hidden.txt", true, false),
        p("~/out/o.txt", true, true),
        p("~/new-in-home.txt", false, true),
        p(&r("elsewhere/e.txt"), true, true),
        p("link-notes", true, true),
        p("link-pub/p.txt", true, false),
        p("link-out/new.txt", false, true),
        p(&r("data/registry.json"), true, true),
        p(&r("data/sessions/s1/token"), true, true),
        p(
            &python
                .parent()
                .unwrap()
                .join("../pyvenv.cfg")
                .display()
                .to_string(),
            true,
            false,
        ),
        p("/etc/passwd", true, false),
    ];
    let urls = [
        "http://allowed.example.com/",
        "https://allowed.example.com/",
        "http://other.example.com/",
        "https://other.example.com/",
        "http://a.wild.example.com/",
        "http://wild.example.com/",
        "http://bad.wild.example.com/",
        "http://port.example.com:8080/",
        "http://port.example.com/",
        "http://93.184.215.14/",
        "http://localhost:9/",
        "http://192.168.0.1/",
    ];

    // The questions, in the checker's words.
    let mut expected: BTreeMap<String, bool> = BTreeMap::new();
    let mut script = String::from("exec 2>/dev/null\n");
    let mut writes: Vec<(String, PathBuf)> = Vec::new();
    let mut write_lines = String::new();
    for (i, probe) in probes.iter().enumerate() {
        let verdicts = checker.check(&probe.query);
        let (read, write) = (&verdicts[0], &verdicts[1]);
        let target = PathBuf::from(&read.target);
        // The kernel's view: the path as asked, from the workspace.
        let asked = if let Some(rest) = probe.query.strip_prefix("~/") {
            home.join(rest)
        } else {
            ws.join(&probe.query)
        };
        if probe.read {
            // A hidden file reads as empty (or is missing): its size tells.
            let size = std::fs::metadata(&target).unwrap().len();
            assert!(size > 0, "{}", target.display());
            expected.insert(format!("read {}", probe.query), read.allowed);
            script.push_str(&format!(
                "[ \"$(wc -c < '{}')\" -eq {size} ] && echo 'read {}=1' || echo 'read {}=0'\n",
                asked.display(),
                probe.query,
                probe.query
            ));
        }
        if probe.write {
            expected.insert(format!("write {}", probe.query), write.allowed);
            let marker = format!("marker-{i}");
            // After every read: a write to a hidden place lands in the sandbox's empty
            // stand-in, where a later read would find it.
            write_lines.push_str(&format!("echo {marker} >> '{}'\n", asked.display()));
            writes.push((marker, target));
        }
    }
    script.push_str(&write_lines);
    for url in urls {
        let verdict = &checker.check(url)[0];
        expected.insert(format!("reach {url}"), verdict.allowed);
        script.push_str(&format!(
            "code=$(curl -s -m 5 -o /dev/null -w '%{{http_code}}%{{http_connect}}' '{url}'); case $code in *403*|000000) echo 'reach {url}=0';; *) echo 'reach {url}=1';; esac\n"
        ));
    }
    let out = under_srt(checker.settings(), &ws, &root, &script);
    let mut actual: BTreeMap<String, bool> = out
        .lines()
        .filter_map(|l| l.rsplit_once('='))
        .map(|(k, v)| (k.to_owned(), v == "1"))
        .collect();
    for ((marker, target), probe) in writes.iter().zip(probes.iter().filter(|p| p.write)) {
        let reached = std::fs::read_to_string(target).is_ok_and(|t| t.contains(marker.as_str()));
        actual.insert(format!("write {}", probe.query), reached);
    }
    assert!(
        expected.len() >= 30,
        "at least 30 questions ({})",
        expected.len()
    );
    let differ: Vec<String> = expected
        .iter()
        .filter(|(k, v)| actual.get(*k) != Some(v))
        .map(|(k, v)| format!("{k}: checker says {v}, srt did {:?}", actual.get(k)))
        .collect();
    assert!(
        differ.is_empty(),
        "the checker must answer what srt does:\n{}\n\nsrt's output:\n{out}",
        differ.join("\n")
    );
    // Both answers occur: a checker that always said one thing would fail above.
    assert!(expected.values().any(|v| *v) && expected.values().any(|v| !*v));
}
