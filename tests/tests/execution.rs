//! Executing code: state, streaming, errors, timeouts, reset, environment, working
//! directory, ordering — against a real Kernel Gateway and IPython kernel.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use ipybox::{Error, ErrorCode, Event, Output, StreamName, StreamOptions};
use ipybox_tests::{builder, started, workspace};

#[tokio::test]
async fn state_persists_and_reset_clears_it() {
    let ws = workspace();
    let e = started(ws.path()).await;
    e.execute("x = 41\nimport json", None).await.unwrap();
    let r = e
        .execute("print(x + 1, json.dumps([1]))", None)
        .await
        .unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("42 [1]"),
        "variables and imports persist across executions"
    );
    e.reset().await.unwrap();
    let err = e.execute("x", None).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::CodeExecutionError);
    let r = e.execute("print('json' in dir())", None).await.unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("False"),
        "imports are gone after reset"
    );
    let r = e.execute("print(sorted(k for k in globals() if not k.startswith('_') and k not in ('In', 'Out', 'exit', 'quit', 'get_ipython', 'open')))", None).await.unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("[]"),
        "a fresh kernel has no user names, not even ipybox's init helpers"
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn outputs_arrive_in_order_with_their_stream_and_count() {
    let ws = workspace();
    let e = started(ws.path()).await;
    let code = "import sys, time\nfor i in range(5):\n    print('line', i, flush=True)\n    time.sleep(0.05)\nprint('err', file=sys.stderr)\n7";
    let mut s = e.stream(
        code,
        StreamOptions {
            timeout: None,
            outputs: true,
            input: false,
            ..Default::default()
        },
    );
    let mut shown = String::new();
    let mut n = 0;
    let mut started = None;
    let mut result = None;
    while let Some(ev) = s.next().await {
        match ev.unwrap() {
            Event::Started { execution_count } => {
                assert_eq!(n, 0, "the count comes before any output");
                started = execution_count;
            }
            Event::Output(output) => {
                assert!(result.is_none(), "the result comes last");
                if let Output::Stream { name, text } = &output {
                    let expected = if text.contains("err") {
                        StreamName::Stderr
                    } else {
                        StreamName::Stdout
                    };
                    assert_eq!(*name, expected, "{text:?}");
                }
                if let Output::ExecuteResult {
                    execution_count, ..
                } = &output
                {
                    assert_eq!(*execution_count, started, "the result has the cell's count");
                }
                shown.push_str(&output.terminal_text().unwrap_or_default());
                n += 1;
            }
            Event::Result(r) => result = Some(r),
            _ => {}
        }
    }
    let result = result.expect("a result event");
    assert!(
        started.is_some_and(|c| c >= 1),
        "an execution count: {started:?}"
    );
    assert!(n >= 3, "output streams as it is produced, got {n} outputs");
    assert_eq!(
        shown, "line 0\nline 1\nline 2\nline 3\nline 4\nerr\n7\n",
        "outputs in print order"
    );
    assert_eq!(
        result.text.as_deref(),
        Some(shown.trim()),
        "final text equals what was shown"
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn large_outputs_arrive_whole() {
    let ws = workspace();
    let e = started(ws.path()).await;
    let r = e
        .execute("for i in range(100000): print(i)", None)
        .await
        .unwrap();
    let text = r.text.unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 100_000, "all 100,000 lines arrive");
    assert_eq!((lines[0], lines[99_999]), ("0", "99999"));
    // Past Jupyter Server's default IOPub rate limit (1 MB/s): nothing may be dropped.
    let r = e
        .execute("s = 'x' * 99\nfor i in range(60000): print(s)", None)
        .await
        .unwrap();
    assert_eq!(
        r.text.unwrap().len(),
        60_000 * 100 - 1,
        "6 MB of output arrive whole"
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn an_exception_is_a_code_execution_error_with_traceback() {
    let ws = workspace();
    let e = started(ws.path()).await;
    let err = e
        .execute("print('before')\ndef f():\n    return 1 / 0\nf()", None)
        .await
        .unwrap_err();
    match &err {
        Error::CodeExecution { error, output } => {
            assert_eq!(error.name, "ZeroDivisionError");
            assert_eq!(error.value, "division by zero");
            assert!(
                error.traceback.contains("return 1 / 0"),
                "traceback shows the failing line: {}",
                error.traceback
            );
            assert!(
                !error.traceback.contains('\u{1b}'),
                "text traceback has no ANSI escapes"
            );
            assert!(
                error.raw_traceback.iter().any(|l| l.contains('\u{1b}')),
                "raw traceback keeps colours for the UI"
            );
            assert_eq!(
                output.text.as_deref(),
                Some("before"),
                "output before the error is kept"
            );
        }
        other => panic!("expected CodeExecution, got {other:?}"),
    }
    let r = e.execute("print('still here')", None).await.unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("still here"),
        "the kernel survives an exception"
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn a_timeout_interrupts_and_keeps_state() {
    let ws = workspace();
    let e = started(ws.path()).await;
    e.execute("x = 'kept'", None).await.unwrap();
    let t = Instant::now();
    // The cell runs far longer than the timeout and the interrupt take, even on a busy
    // machine; the timeout leaves the kernel time to print first.
    let err = e
        .execute(
            "import time\nprint('started', flush=True)\ntime.sleep(60)",
            Some(Duration::from_secs(5)),
        )
        .await
        .unwrap_err();
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "the timeout fires promptly, not after the cell (60 s): {:?}",
        t.elapsed()
    );
    match &err {
        Error::Timeout {
            kernel_restarted,
            output,
            ..
        } => {
            assert!(!kernel_restarted, "an interruptible cell keeps its kernel");
            assert_eq!(
                output.text.as_deref(),
                Some("started"),
                "output before the timeout is kept"
            );
        }
        other => panic!("expected Timeout, got {other:?}"),
    }
    let r = e.execute("print(x)", None).await.unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("kept"),
        "state survives the interrupt"
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn a_kernel_that_ignores_the_interrupt_is_replaced() {
    let ws = workspace();
    let e = builder(ws.path())
        .interrupt_grace(Duration::from_secs(1))
        .build();
    e.start().await.unwrap();
    let code = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(60)";
    let err = e
        .execute(code, Some(Duration::from_millis(500)))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Timeout {
                kernel_restarted: true,
                ..
            }
        ),
        "got {err:?}"
    );
    let r = e
        .execute("print('fresh')", Some(Duration::from_secs(30)))
        .await
        .unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("fresh"),
        "the next execution runs on a fresh kernel"
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn kernel_env_reaches_the_kernel_and_ipybox_env_does_not() {
    let ws = workspace();
    let e = builder(ws.path())
        .kernel_env([("IPYBOX_TEST_VAR", "hello"), ("OTHER", "x=y")])
        .build();
    e.start().await.unwrap();
    let r = e
        .execute(
            "import os; print(os.environ.get('IPYBOX_TEST_VAR'), os.environ.get('OTHER'))",
            None,
        )
        .await
        .unwrap();
    assert_eq!(r.text.as_deref(), Some("hello x=y"));
    // cargo sets CARGO_MANIFEST_DIR in this test process's environment.
    assert!(std::env::var("CARGO_MANIFEST_DIR").is_ok());
    let r = e.execute("import os; print('CARGO_MANIFEST_DIR' in os.environ, sorted(k for k in os.environ if k.startswith('CARGO')))", None).await.unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("False []"),
        "the kernel does not inherit ipybox's environment"
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn the_kernel_runs_in_the_working_directory() {
    let ws = workspace();
    std::fs::create_dir(ws.path().join("pkg")).unwrap();
    std::fs::write(ws.path().join("pkg/__init__.py"), "VALUE = 7\n").unwrap();
    let e = started(ws.path()).await;
    let r = e
        .execute("import os; print(os.getcwd())", None)
        .await
        .unwrap();
    let expected = std::fs::canonicalize(ws.path()).unwrap();
    assert_eq!(r.text.as_deref(), Some(expected.to_str().unwrap()));
    let r = e
        .execute("os.chdir('/'); import pkg; print(pkg.VALUE)", None)
        .await
        .unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("7"),
        "packages in the working directory stay importable after chdir"
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn concurrent_executions_queue_in_call_order() {
    let ws = workspace();
    let e = started(ws.path()).await;
    let slow =
        "import time\nfor i in range(4):\n    print('a', i, flush=True)\n    time.sleep(0.05)";
    let fast = "for i in range(4): print('b', i)";
    let s1 = e.stream(
        slow,
        StreamOptions {
            timeout: None,
            ..Default::default()
        },
    );
    let s2 = e.stream(
        fast,
        StreamOptions {
            timeout: None,
            ..Default::default()
        },
    );
    let (r1, r2) = tokio::join!(s1.collect::<Vec<_>>(), s2.collect::<Vec<_>>());
    let text = |v: Vec<ipybox::Result<Event>>| match v.into_iter().last().unwrap().unwrap() {
        Event::Result(r) => r.text.unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(text(r1), "a 0\na 1\na 2\na 3", "no interleaving");
    assert_eq!(text(r2), "b 0\nb 1\nb 2\nb 3", "no interleaving");
    // Ten at once, each depending on the previous one's state: call order is run order.
    e.execute("seq = []", None).await.unwrap();
    let streams: Vec<_> = (0..10)
        .map(|i| e.stream(&format!("seq.append({i})"), StreamOptions::default()))
        .collect();
    for s in streams {
        s.collect::<Vec<_>>().await;
    }
    let r = e.execute("print(seq)", None).await.unwrap();
    assert_eq!(r.text.as_deref(), Some("[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]"));
    e.stop().await.unwrap();
}

#[tokio::test]
async fn dropping_a_stream_interrupts_its_execution() {
    let ws = workspace();
    let e = started(ws.path()).await;
    let mut s = e.stream(
        "import time\nprint('go', flush=True)\ntime.sleep(60)",
        StreamOptions {
            timeout: None,
            outputs: true,
            input: false,
            ..Default::default()
        },
    );
    assert!(matches!(
        s.next().await.unwrap().unwrap(),
        Event::Started { .. }
    ));
    let first = s.next().await.unwrap().unwrap();
    assert_eq!(
        first,
        Event::Output(Output::Stream {
            name: StreamName::Stdout,
            text: "go\n".into()
        })
    );
    drop(s);
    let t = Instant::now();
    let r = e
        .execute("print('next')", Some(Duration::from_secs(10)))
        .await
        .unwrap();
    assert_eq!(r.text.as_deref(), Some("next"));
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "the dropped execution (60 s) was interrupted, not awaited: {:?}",
        t.elapsed()
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn not_started_and_input_give_clear_errors() {
    let ws = workspace();
    let e = builder(ws.path()).build();
    let err = e.execute("1", None).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotRunning);
    e.start().await.unwrap();
    let err = e.execute("input('name? ')", None).await.unwrap_err();
    assert!(
        err.to_string().contains("StdinNotImplementedError"),
        "input() raises instead of hanging: {err}"
    );
    e.stop().await.unwrap();
    let err = e.execute("1", None).await.unwrap_err();
    assert_eq!(
        err.code(),
        ErrorCode::NotRunning,
        "stopped executors refuse work"
    );
    e.start().await.unwrap();
    assert_eq!(
        e.execute("1+1", None).await.unwrap().text.as_deref(),
        Some("2"),
        "restartable after stop"
    );
    e.stop().await.unwrap();
}
