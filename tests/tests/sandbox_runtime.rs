//! `ipybox setup --sandbox` needs no npm and no Node.js on the machine: it brings its own
//! from the npm registry (pinned, checked) and installs srt with them; that srt sandboxes.
//! Run with a `PATH` that has neither `node` nor `npm`, as on a fresh Debian 12 with the
//! packages installed.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

use ipybox_tests::{ipybox_bin, workspace};

/// A folder of links to the tools srt needs (bubblewrap, socat, ripgrep, a shell) and
/// nothing else: no node, no npm.
fn bare_path(dir: &Path) -> std::path::PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["bwrap", "socat", "rg", "which", "bash", "sh", "env", "cat"] {
        let real = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{tool} is installed"));
        std::os::unix::fs::symlink(real, bin.join(tool)).unwrap();
    }
    bin
}

#[test]
fn setup_brings_its_own_node_and_npm_and_the_srt_it_installs_sandboxes() {
    let dir = workspace();
    let bin = bare_path(dir.path());
    let srt_dir = dir.path().join("srt");
    let out = Command::new(ipybox_bin())
        .args(["setup", "--sandbox", "--srt-dir"])
        .arg(&srt_dir)
        .env("PATH", &bin)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    assert!(said.contains("Sandbox runtime ready: srt 0.0."), "{said}");
    let node = srt_dir.join("runtime/node/bin/node");
    assert!(node.is_file(), "its own Node.js: {said}");
    assert!(
        !srt_dir.join("runtime/node/include").exists(),
        "no C headers kept: nothing here builds addons"
    );

    // The srt it installed runs on that Node.js and hides what its settings hide.
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        r#"{"filesystem": {"denyRead": ["/etc/hostname"], "allowWrite": [], "denyWrite": []}, "network": {"allowedDomains": [], "deniedDomains": []}}"#,
    )
    .unwrap();
    let out = Command::new(&node)
        .arg(srt_dir.join("node_modules/.bin/srt"))
        .arg("--settings")
        .arg(&settings)
        .args(["-c", "echo inside; cat /etc/hostname"])
        .env("PATH", &bin)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("inside"), "{stdout}{stderr}");
    assert!(
        stderr.contains("Permission denied") && !out.status.success(),
        "the hidden file stays hidden: {stdout}{stderr}"
    );

    // Again: nothing to do, nothing fetched (a second run takes no network).
    let again = Command::new(ipybox_bin())
        .args(["setup", "--sandbox", "--srt-dir"])
        .arg(&srt_dir)
        .env("PATH", &bin)
        .env("npm_config_registry", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

#[test]
fn a_registry_that_serves_other_bytes_is_refused() {
    // A registry that answers every request with the same small tarball: its SHA-512 is not
    // the pinned one, and nothing of it is unpacked.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming().take(4) {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = b"not the package";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(body);
        }
    });
    let dir = workspace();
    let bin = bare_path(dir.path());
    let srt_dir = dir.path().join("srt");
    let out = Command::new(ipybox_bin())
        .args(["setup", "--sandbox", "--srt-dir"])
        .arg(&srt_dir)
        .env("PATH", &bin)
        .env("npm_config_registry", format!("http://127.0.0.1:{port}"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("its SHA-512 differs"), "{stderr}");
    assert!(
        !srt_dir.join("runtime/node").exists(),
        "nothing was unpacked"
    );
}
