//! A kernel that dies fails the running execution with `KernelDied`; the next one works.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use ipybox::{Error, ErrorCode};
use ipybox_tests::{started, workspace};

#[tokio::test]
async fn os_exit_and_segfault_give_kernel_died_and_the_next_call_works() {
    let ws = workspace();
    let e = started(ws.path()).await;
    e.execute("x = 1", None).await.unwrap();
    let t = Instant::now();
    let err = e
        .execute(
            "import os\nprint('bye', flush=True)\nos._exit(1)",
            Some(Duration::from_secs(60)),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::KernelDied, "got {err:?}");
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "death is noticed promptly, not at the timeout (60 s): {:?}",
        t.elapsed()
    );
    assert!(
        err.to_string().contains("kernel died"),
        "a clear message: {err}"
    );
    let r = e.execute("print('alive')", None).await.unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("alive"),
        "the next execution runs on a new kernel"
    );
    let err = e.execute("x", None).await.unwrap_err();
    assert!(
        matches!(err, Error::CodeExecution { .. }),
        "the new kernel has fresh state"
    );

    let err = e
        .execute(
            "import ctypes\nctypes.string_at(0)",
            Some(Duration::from_secs(60)),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        ErrorCode::KernelDied,
        "a segfault kills the kernel: {err:?}"
    );
    let r = e.execute("print(2)", None).await.unwrap();
    assert_eq!(r.text.as_deref(), Some("2"));
    e.stop().await.unwrap();
}
