//! No gateway or kernel process outlives ipybox: not after `stop()`, not after the host
//! process is killed.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Stdio};
use std::time::Duration;

use ipybox_tests::{alive, ipybox_bin, spawn_host, started, tree, wait_for, workspace};

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
