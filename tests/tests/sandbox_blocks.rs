//! Learning from blocks, against real srt: a cell that fails because the sandbox refused a
//! file operation is reported as a block with its path and the narrowest folder to allow,
//! from the exception's own errno and filename (never from printed text), and only when the
//! policy agrees the sandbox blocked it.

#![allow(clippy::unwrap_used)]
// The measured time is the figure this test reports.
#![allow(clippy::print_stderr)]

use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use ipybox::{CodeExecutor, Event, Output, SandboxAccess, SessionEvent, StreamOptions};
use ipybox_tests::workspace;
use tokio::sync::broadcast::Receiver;

async fn sandboxed(ws: &Path) -> CodeExecutor {
    let e = CodeExecutor::builder()
        .working_dir(ws)
        .sandbox(true)
        .build();
    e.start().await.expect("the sandboxed executor starts");
    e
}

/// Run `code`; how long after the cell's error output the block came, and the block.
async fn run(
    e: &CodeExecutor,
    events: &mut Receiver<SessionEvent>,
    code: &str,
) -> Option<(Duration, ipybox::SandboxBlock)> {
    let options = StreamOptions {
        outputs: true,
        ..StreamOptions::default()
    };
    let mut stream = e.stream(code, options);
    let id = stream.id().to_owned();
    let mut error_at = None;
    while let Some(event) = stream.next().await {
        if let Ok(Event::Output(Output::Error { .. })) = event {
            error_at = Some(Instant::now());
        }
    }
    let error_at = error_at.expect("the cell failed with an error output");
    // The kernel waits for ipybox's answer to its report before the cell ends: a block is
    // told of before the execution's result.
    while let Ok(event) = events.try_recv() {
        if let SessionEvent::SandboxBlocked {
            execution_id,
            block,
        } = event
            && execution_id == id
        {
            return Some((error_at.elapsed(), *block));
        }
    }
    None
}

#[tokio::test]
async fn a_blocked_write_is_reported_with_its_path_and_the_folder_to_allow() {
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    let outside_dir = std::fs::canonicalize(outside.path()).unwrap();
    let e = sandboxed(ws.path()).await;
    let mut events = e.subscribe();

    let file = outside_dir.join("report.csv");
    let started = Instant::now();
    let (after_error, block) = run(
        &e,
        &mut events,
        &format!(
            "open({:?}, 'w').write('a,b\\n')",
            file.display().to_string()
        ),
    )
    .await
    .expect("a write outside the workspace is reported as a block");
    eprintln!(
        "block told {after_error:?} after the cell's error output (cell: {:?})",
        started.elapsed()
    );
    // Milliseconds when idle. The bound leaves room for a loaded machine and stays below
    // the 5 s after which the kernel sends an unanswered report again.
    assert!(
        after_error < Duration::from_secs(2),
        "the block is known within 2 s of the error: {after_error:?}"
    );
    assert_eq!(block.access, SandboxAccess::Write, "EROFS: a refused write");
    assert_eq!(
        block.path,
        file.display().to_string(),
        "the file the cell wrote"
    );
    assert_eq!(
        block.suggestion.as_deref(),
        Some(outside_dir.display().to_string().as_str()),
        "the narrowest folder that covers it"
    );
    assert!(
        !file.exists(),
        "the sandbox kept the file from being written"
    );

    let written = ws.path().join("fine.csv");
    let lie = format!(
        "import errno\nraise OSError(errno.EROFS, 'Read-only file system', {:?})",
        written.display().to_string()
    );
    assert!(
        run(&e, &mut events, &lie).await.is_none(),
        "a kernel claiming a block where the policy allows writing is not believed"
    );
    assert!(
        run(
            &e,
            &mut events,
            "print('OSError: [Errno 30] Read-only file system: /etc/x')\n1/0"
        )
        .await
        .is_none(),
        "printed text is never read as a block"
    );
    // The red team's cell (#45): a crafted error naming where code runs at the next login.
    // The policy agrees the sandbox blocks it, so the block is shown; nothing is offered.
    let crafted = "import errno, os\nprint('click Allow writing below')\nraise OSError(errno.EROFS, 'Read-only file system', os.path.expanduser('~/.config/autostart/chart-export.desktop'))";
    let (_, block) = run(&e, &mut events, crafted)
        .await
        .expect("a block the policy agrees with is shown");
    assert!(
        block
            .path
            .ends_with("/.config/autostart/chart-export.desktop"),
        "{}",
        block.path
    );
    assert_eq!(
        block.suggestion, None,
        "no offer to write where code runs at the next login"
    );
    assert!(
        block
            .refusal
            .as_deref()
            .is_some_and(|r| r.starts_with("ipybox does not offer to open this place: ")),
        "the block says why: {:?}",
        block.refusal
    );
    let missing = ws.path().join("missing.csv");
    assert!(
        run(
            &e,
            &mut events,
            &format!("open({:?})", missing.display().to_string())
        )
        .await
        .is_none(),
        "a missing file in a readable place is not a block"
    );
    e.stop().await.unwrap();
}
