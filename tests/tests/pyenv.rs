//! Provisioning the managed Python environment: two ipybox processes starting at once build
//! it once, and the result runs kernels.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Stdio};

use ipybox_tests::{ipybox_bin, workspace};

#[test]
fn concurrent_setups_build_the_environment_once() {
    let home = workspace();
    // Without uv on PATH, ipybox uses `python -m venv` + pip; the suite's own environment
    // covers the uv path wherever uv is installed.
    let path: Vec<_> = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .filter(|d| !d.join("uv").exists())
        .collect();
    let path = std::env::join_paths(path).unwrap();
    let spawn = || {
        Command::new(ipybox_bin())
            .arg("setup")
            .env_remove("IPYBOX_PYTHON")
            .env("IPYBOX_HOME", home.path())
            .env("PATH", &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let err = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        a.status.success() && b.status.success(),
        "both succeed:\n{}\n{}",
        err(&a),
        err(&b)
    );
    let creations = [&a, &b]
        .iter()
        .filter(|o| err(o).contains("creating the Python environment"))
        .count();
    assert_eq!(
        creations,
        1,
        "exactly one process builds the environment:\n{}\n---\n{}",
        err(&a),
        err(&b)
    );
    let python = home.path().join("venv/bin/python");
    let out = Command::new(&python)
        .args([
            "-c",
            "import kernel_gateway, ipykernel, pydantic, matplotlib; print(pydantic.VERSION[0])",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "2",
        "pydantic v2 and the kernel stack are installed"
    );
    // A third run is a no-op.
    let t = std::time::Instant::now();
    let c = spawn().wait_with_output().unwrap();
    assert!(c.status.success());
    assert!(
        !err(&c).contains("creating"),
        "an existing environment is reused"
    );
    assert!(
        t.elapsed().as_secs_f64() < 2.0,
        "the ready check is fast: {:?}",
        t.elapsed()
    );
}
