//! No gateway or kernel process outlives ipybox: not after `stop()`, not after the host
//! process is killed.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Stdio};
use std::time::Duration;

use ipybox_tests::{alive, builder, ipybox_bin, spawn_host, started, tree, wait_for, workspace};

#[tokio::test]
async fn stop_leaves_no_process_behind() {
    let ws = workspace();
    let e = started(ws.path()).await;
    e.execute("import time; time.sleep(0.1)", None)
        .await
        .unwrap();
    let gw = e.gateway_pid().await.unwrap() as i32;
    // Gateway, active kernel, spare kernel.
    assert!(
        wait_for(Duration::from_secs(30), || tree(gw).len() >= 3),
        "gateway and two kernels run: {:?}",
        tree(gw)
    );
    let pids = tree(gw);
    e.stop().await.unwrap();
    let left: Vec<i32> = pids.into_iter().filter(|&p| alive(p)).collect();
    assert!(left.is_empty(), "processes left after stop(): {left:?}");
}

fn kill_host_and_check(mut child: std::process::Child, gateway: i32) {
    assert!(
        wait_for(Duration::from_secs(30), || tree(gateway).len() >= 2),
        "kernel started: {:?}",
        tree(gateway)
    );
    let pids = tree(gateway);
    // SAFETY: killing the child we spawned.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    child.wait().unwrap();
    let gone = wait_for(Duration::from_secs(10), || pids.iter().all(|&p| !alive(p)));
    let left: Vec<i32> = pids.iter().copied().filter(|&p| alive(p)).collect();
    assert!(gone, "processes left after the host was killed: {left:?}");
}

#[test]
fn killing_a_library_host_leaves_no_process_behind() {
    let ws = workspace();
    let (child, gateway) = spawn_host(env!("CARGO_BIN_EXE_ipybox-test-host"), ws.path(), false);
    kill_host_and_check(child, gateway);
}

#[test]
fn killing_the_cli_leaves_no_process_behind() {
    let ws = workspace();
    let child = Command::new(ipybox_bin())
        .args(["exec", "--workspace"])
        .arg(ws.path())
        .arg("import time; print('up', flush=True); time.sleep(600)")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let host = child.id() as i32;
    // The gateway is the CLI's only child.
    let mut gateway = 0;
    assert!(
        wait_for(Duration::from_secs(60), || {
            gateway = tree(host).into_iter().find(|&p| p != host).unwrap_or(0);
            gateway != 0 && tree(gateway).len() >= 2
        }),
        "the CLI started a gateway and a kernel"
    );
    kill_host_and_check(child, gateway);
}

#[tokio::test]
async fn dropping_the_executor_stops_everything() {
    let ws = workspace();
    let e = started(ws.path()).await;
    let gw = e.gateway_pid().await.unwrap() as i32;
    assert!(wait_for(Duration::from_secs(30), || tree(gw).len() >= 2));
    let pids = tree(gw);
    drop(e);
    // The session stops on the runtime, in the background: wait without blocking it.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !pids.iter().all(|&p| !alive(p)) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let gone = pids.iter().all(|&p| !alive(p));
    assert!(
        gone,
        "processes left after drop: {:?}",
        pids.iter().filter(|&&p| alive(p)).collect::<Vec<_>>()
    );
}

/// The session's actor never waits on a start: while the gateway takes seconds to come up
/// (here a wrapper that sleeps first, as provisioning Python or a sandbox would),
/// `interrupt()` and `stop()` are answered at once, the start hears it was stopped, and
/// what the start made is shut down once made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_and_interrupt_are_answered_at_once_during_a_slow_first_start() {
    let ws = workspace();
    let pid_file = ws.path().join("gateway.pid");
    // The gateway comes up long after any answer, even on a busy machine.
    let wrapper = format!("echo $$ > {}; sleep 30; exec \"$@\"", pid_file.display());
    let e = builder(ws.path())
        .gateway_wrapper(vec!["sh".into(), "-c".into(), wrapper.into(), "sh".into()])
        .build();
    let started_at = std::time::Instant::now();
    let start = tokio::spawn(e.start_now());
    assert!(
        wait_for(Duration::from_secs(10), || pid_file.exists()),
        "the gateway's wrapper runs"
    );

    let asked = std::time::Instant::now();
    e.interrupt().await.expect("interrupt is answered");
    let interrupted_in = asked.elapsed();
    let asked = std::time::Instant::now();
    e.stop().await.expect("stop is answered");
    let stopped_in = asked.elapsed();
    let start = start.await.unwrap();
    assert!(
        started_at.elapsed() < Duration::from_secs(10),
        "all of it before the gateway could come up (after 30 s): {:?}",
        started_at.elapsed()
    );
    assert!(
        interrupted_in < Duration::from_secs(10) && stopped_in < Duration::from_secs(10),
        "answered at once, not after the start: interrupt {interrupted_in:?}, stop {stopped_in:?}"
    );
    let err = start.expect_err("the start was stopped");
    assert!(err.to_string().contains("stopped"), "{err}");
    assert!(!e.is_running().await);

    // What the start made is shut down once made: the gateway does not outlive it.
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_for(Duration::from_secs(90), || !alive(pid)),
        "the gateway the stopped start made is gone"
    );
    // And the executor starts again.
    let again = builder(ws.path()).build();
    again.start().await.expect("a new start works");
    again.stop().await.unwrap();
}
