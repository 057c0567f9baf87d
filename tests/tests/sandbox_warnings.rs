//! The grants that matter, warned of on the command line as the Sandbox tab warns of them:
//! `ipybox sandbox check` and `ipybox sandbox accept` name each with what it lets code do,
//! and flag an entry that opens a way out of the sandbox.

#![allow(clippy::unwrap_used)]

use std::process::Command;

use ipybox_tests::{ipybox_bin, workspace};

const POLICY: &str = r#"{
  "filesystem": {"denyRead": ["~/.ssh"], "allowWrite": [".", "~/.config"], "denyWrite": []},
  "network": {"allowedDomains": ["pypi.org", "*.example.org"], "deniedDomains": []}
}"#;

fn warnings(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_command_line_warns_of_the_grants_that_matter() {
    let ws = workspace();
    let file = ws.path().join("sandbox-config.json");
    std::fs::write(&file, POLICY).unwrap();

    let checked = Command::new(ipybox_bin())
        .args(["sandbox", "check", "--policy"])
        .arg(&file)
        .arg("--workspace")
        .arg(ws.path())
        .arg("https://pypi.org")
        .output()
        .unwrap();
    assert!(checked.status.success(), "{checked:?}");
    let got = warnings(&checked.stdout);
    assert_eq!(got.len(), 3, "{got:#?}");
    assert!(
        got[0].starts_with("warning: Writing ~/.config: code may change ~/.config/autostart")
            && got[0].ends_with("[filesystem.allowWrite[1]]"),
        "{}",
        got[0]
    );
    assert!(
        got[1].starts_with("warning: Reading secrets: code may read ~/.gnupg (GPG keys)"),
        "secrets the policy leaves readable: {}",
        got[1]
    );
    assert!(
        got[2].starts_with(
            "warning: Reaching *.example.org: code may reach every server under example.org"
        ),
        "{}",
        got[2]
    );

    // Beside the warnings, the entry that opens a way out of the sandbox (#45).
    let dangers = |stdout: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(stdout)
            .lines()
            .filter(|l| l.starts_with("danger: "))
            .map(str::to_owned)
            .collect()
    };
    let flagged = dangers(&checked.stdout);
    assert_eq!(flagged.len(), 1, "{flagged:#?}");
    assert!(
        flagged[0].starts_with("danger: Writing ~/.config: code written there (~/.config/")
            && flagged[0].ends_with("[filesystem.allowWrite[1]]"),
        "{}",
        flagged[0]
    );

    let accepted = Command::new(ipybox_bin())
        .args(["sandbox", "accept", "--yes", "--workspace"])
        .arg(ws.path())
        .output()
        .unwrap();
    assert!(accepted.status.success(), "{accepted:?}");
    assert_eq!(
        warnings(&accepted.stdout),
        got,
        "accepting the policy warns the same way"
    );
    assert_eq!(
        dangers(&accepted.stdout),
        flagged,
        "and names the way out the same way"
    );
}
