//! Shell commands in cells (`!cmd`, `x = !cmd`, `%%bash`) are approved like tool calls: the
//! request names `ipybox.shell` and the command after `{var}` expansion; a rejected command
//! raises in the cell and runs nothing.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use ipybox::Error;
use ipybox_tests::{run_with, started, workspace};

#[tokio::test]
async fn shell_commands_run_only_when_approved() {
    let ws = workspace();
    let e = started(ws.path()).await;
    let marker = ws.path().join("marker");
    let code = format!(
        "target = {:?}\n!touch {{target}}",
        marker.display().to_string()
    );
    let (r, seen) = run_with(&e, &code, Some(Duration::from_secs(60)), |_| Some(false)).await;
    match r {
        Err(Error::CodeExecution { error, .. }) => {
            assert_eq!(error.name, "ShellCommandRejected", "{error}");
        }
        other => panic!("a rejected command raises: {other:?}"),
    }
    assert!(!marker.exists(), "the rejected command did not run");
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0].starts_with("ipybox.shell(")
            && seen[0].contains(&format!("touch {}", marker.display())),
        "the request shows the expanded command: {seen:?}"
    );

    let (r, _) = run_with(&e, &code, Some(Duration::from_secs(60)), |_| Some(true)).await;
    r.unwrap();
    assert!(marker.exists(), "the approved command ran");

    let (r, seen) = run_with(
        &e,
        "lines = !echo hello\nprint(lines)",
        Some(Duration::from_secs(60)),
        |_| Some(true),
    )
    .await;
    assert_eq!(r.unwrap().text.as_deref(), Some("['hello']"));
    assert!(seen[0].contains("echo hello"), "{seen:?}");

    let bash_marker = ws.path().join("bash-marker");
    let code = format!("%%bash\ntouch {}", bash_marker.display());
    let (r, seen) = run_with(&e, &code, Some(Duration::from_secs(60)), |_| Some(false)).await;
    assert!(r.is_err(), "a rejected %%bash cell raises");
    assert!(!bash_marker.exists(), "and runs nothing");
    assert!(seen[0].contains("touch"), "{seen:?}");
    e.stop().await.unwrap();
}
