//! A kernel that runs a project's own `.venv` (`kernel_python`): the gateway stays in
//! ipybox's environment, the kernel imports what only the project's environment holds, and
//! sandboxed it may read that environment but not change it.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use ipybox_tests::{builder, output_of as run, workspace};

/// `ws/.venv` made with uv, with ipykernel and a module no other environment has.
fn project_venv(ws: &Path) -> PathBuf {
    let venv = ws.join(".venv");
    let run = |cmd: &mut Command| {
        let out = cmd.output().expect("uv runs");
        assert!(
            out.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(Command::new("uv").args(["venv", "-q"]).arg(&venv));
    let python = venv.join("bin/python");
    run(Command::new("uv")
        .args(["pip", "install", "-q", "--python"])
        .arg(&python)
        .arg("ipykernel"));
    let site = std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .find(|p| p.is_dir())
        .expect("site-packages");
    std::fs::create_dir_all(site.join("only_in_project")).unwrap();
    std::fs::write(
        site.join("only_in_project/__init__.py"),
        "MARK = 'project-env-' + 'ok'\n",
    )
    .unwrap();
    python
}

const IMPORT: &str = "import sys, only_in_project\nprint(only_in_project.MARK, sys.prefix)";

#[tokio::test]
async fn a_kernel_on_a_project_venv_imports_what_only_it_has() {
    let ws = workspace();
    let python = project_venv(ws.path());
    let e = builder(ws.path())
        .kernel_python(&python)
        .spare_kernel(false)
        .build();
    e.start()
        .await
        .expect("the kernel starts on the project's .venv");
    let out = run(&e, IMPORT).await;
    assert!(
        out.contains("project-env-ok"),
        "the project's module imports: {out}"
    );
    assert!(
        out.contains(&ws.path().join(".venv").display().to_string()),
        "the kernel runs the project's interpreter: {out}"
    );
    e.stop().await.unwrap();

    // The same workspace without the choice: ipybox's own environment, without the module.
    let e = builder(ws.path()).spare_kernel(false).build();
    e.start().await.unwrap();
    let err = e.execute(IMPORT, None).await.err().map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|m| m.contains("No module named 'only_in_project'")),
        "ipybox's environment does not have it: {err:?}"
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn sandboxed_the_project_venv_is_read_only() {
    let ws = workspace();
    let python = project_venv(ws.path());
    let e = builder(ws.path())
        .kernel_python(&python)
        .spare_kernel(false)
        .sandbox(true)
        .build();
    e.start()
        .await
        .expect("the sandboxed kernel starts on the project's .venv");
    let out = run(&e, IMPORT).await;
    assert!(
        out.contains("project-env-ok"),
        "the project's module imports in the sandbox: {out}"
    );
    let venv = ws.path().join(".venv");
    let out = run(
        &e,
        &format!(
            "import only_in_project, os\ntry:\n    open(os.path.join(os.path.dirname(only_in_project.__file__), 'planted.py'), 'w').write('x')\n    print('WROTE')\nexcept OSError as e:\n    print('REFUSED', e.errno)\ntry:\n    os.replace({bin:?} + '/python', {bin:?} + '/python.old')\n    print('MOVED')\nexcept OSError as e:\n    print('REFUSED', e.errno)\nopen('workspace-file.txt', 'w').write('ok')\nprint('WORKSPACE OK')",
            bin = venv.join("bin").display().to_string(),
        ),
    )
    .await;
    assert!(
        !out.contains("WROTE") && !out.contains("MOVED"),
        "kernel code cannot change the environment it runs: {out}"
    );
    assert_eq!(
        out.matches("REFUSED").count(),
        2,
        "both writes refused: {out}"
    );
    assert!(
        out.contains("WORKSPACE OK"),
        "the rest of the workspace stays writable: {out}"
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn ipykernel_is_installed_where_it_lacks_and_a_pyproject_makes_a_venv() {
    use ipybox::setup::{create_project_env, inspect_python, install_ipykernel, project_python};
    let ws = workspace();
    let venv = ws.path().join("bare");
    let out = Command::new("uv")
        .args(["venv", "-q"])
        .arg(&venv)
        .output()
        .unwrap();
    assert!(out.status.success());
    let python = venv.join("bin/python");
    let before = inspect_python(&python, ws.path()).unwrap();
    assert!(!before.ipykernel, "a bare venv has no ipykernel");
    install_ipykernel(&python)
        .await
        .expect("ipykernel installs");
    assert!(
        inspect_python(&python, ws.path()).unwrap().ipykernel,
        "ipykernel is there now"
    );

    std::fs::write(
        ws.path().join("pyproject.toml"),
        "[project]\nname = \"analysis\"\nversion = \"0.1.0\"\nrequires-python = \">=3.10\"\ndependencies = []\n",
    )
    .unwrap();
    let log = create_project_env(ws.path())
        .await
        .expect("uv sync makes the .venv");
    let made = inspect_python(&project_python(ws.path()), ws.path()).unwrap();
    assert!(made.venv, "a virtual environment: {log}");
    assert!(
        made.ipykernel,
        "with ipykernel, which the project does not list: {log}"
    );
}

#[tokio::test]
async fn the_side_panels_install_goes_into_the_kernels_venv_though_it_has_no_pip() {
    let ws = workspace();
    let python = project_venv(ws.path());
    let e = builder(ws.path())
        .kernel_python(&python)
        .spare_kernel(false)
        .build();
    e.start().await.unwrap();
    e.install_package("six")
        .await
        .expect("uv installs into a venv without pip");
    let out = run(&e, "import six, sys\nprint(six.__file__)").await;
    assert!(
        out.contains(&ws.path().join(".venv").display().to_string()),
        "installed into the kernel's .venv: {out}"
    );
    e.stop().await.unwrap();
}
