//! MCP servers ipybox installs itself: `ipybox register NAME --install SERVER` puts a
//! catalog server's package (PyPI, npm) in ipybox's data directory, registers it run in the
//! sandbox, and kernel code calls it. Real registries, real servers, real srt.

#![allow(clippy::unwrap_used)]

use std::process::Command;

use ipybox_tests::{ipybox_bin, workspace};

fn ipybox(args: &[&str], ws: &std::path::Path) -> (bool, String) {
    let out = Command::new(ipybox_bin())
        .args(args)
        .current_dir(ws)
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn a_python_and_an_npm_server_from_the_catalog_answer_kernel_code_from_the_sandbox() {
    let ws = workspace();
    for (name, spec) in [("clock", "time"), ("everything", "everything")] {
        let (ok, said) = ipybox(&["register", name, "--install", spec], ws.path());
        assert!(ok, "{said}");
        assert!(
            said.contains("Runs: srt --settings ipybox:mcp-server /"),
            "run in the sandbox, by an absolute program: {said}"
        );
    }
    let (ok, said) = ipybox(
        &[
            "exec",
            "--approval",
            "auto",
            "from mcptools.clock.get_current_time import Params, run\nprint(run(Params(timezone='UTC')).timezone)\nfrom mcptools.everything.echo import Params as P, run as r\nprint(r(P(message='from the catalog')))",
        ],
        ws.path(),
    );
    assert!(ok, "{said}");
    assert!(said.contains("UTC"), "{said}");
    assert!(said.contains("Echo: from the catalog"), "{said}");
}

#[test]
fn what_is_not_a_package_is_refused_in_words_and_nothing_is_registered() {
    let ws = workspace();
    for (spec, says) in [
        ("pip:requests", "neither a server of the catalog"),
        ("npm:../../x", "not a npm package name"),
        ("pypi:x==1; rm -rf ~", "not a PyPI package name"),
    ] {
        let (ok, said) = ipybox(&["register", "x", "--install", spec], ws.path());
        assert!(!ok, "{spec}: {said}");
        assert!(said.contains(says), "{spec}: {said}");
    }
    assert!(!ws.path().join("mcptools/x").exists());
}
