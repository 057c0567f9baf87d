//! `ipybox open`: the desktop app on a folder or notebook, or handed to the app already
//! running there; what a file manager or a link passes, read as `open`.

use std::path::PathBuf;
use std::process::ExitCode;

use super::args::*;
#[cfg(feature = "desktop")]
use anyhow::Context;

/// Where the app opens when it is given nothing: the current folder, unless that is the
/// user's home folder (a start from the applications menu, whose programs run there): then
/// the workspace used last, else `~/ipybox-workspace` — never the whole home folder, where
/// the kernel would write `mcptools/` and list every notebook of the user.
#[cfg(feature = "desktop")]
pub(crate) fn workspace_for_nothing(
    cwd: PathBuf,
    user_home: Option<&std::path::Path>,
    last: Option<PathBuf>,
) -> PathBuf {
    if user_home != Some(cwd.as_path()) {
        return cwd;
    }
    last.unwrap_or_else(|| cwd.join("ipybox-workspace"))
}

/// The desktop app on `paths` (default: the current folder), or the app already running
/// there brought forward.
#[cfg(feature = "desktop")]
pub(crate) fn open(
    mut paths: Vec<PathBuf>,
    args: Option<(SandboxArgs, GatewayArgs)>,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<ExitCode> {
    use ipybox::app::{Claim, InstancePaths, Recent, Request};
    if paths.len() > 1 {
        // A file manager passes every file selected (`%U`): each opens as if alone.
        let exe = std::env::current_exe().context("finding ipybox itself")?;
        for extra in paths.drain(1..) {
            if let Err(e) = std::process::Command::new(&exe)
                .arg("open")
                .arg(&extra)
                .stdin(std::process::Stdio::null())
                .spawn()
            {
                eprintln!("ipybox: {} was not opened: {e}", extra.display());
            }
        }
    }
    let home = ipybox::setup::ipybox_home().ok();
    let given = match paths.pop() {
        Some(p) => p,
        None => {
            let cwd = std::env::current_dir().context("the current folder")?;
            let last = home
                .as_ref()
                .and_then(|h| Recent::new(h).list().first().cloned())
                .filter(|p| p.is_dir());
            let chosen = workspace_for_nothing(cwd, dirs::home_dir().as_deref(), last);
            std::fs::create_dir_all(&chosen)
                .with_context(|| format!("creating {}", chosen.display()))?;
            chosen
        }
    };
    // The engine and the instance socket spawn tasks: everything runs inside the runtime.
    let _inside = runtime.enter();
    let link = given
        .to_str()
        .filter(|s| {
            s.get(..7)
                .is_some_and(|p| p.eq_ignore_ascii_case("ipybox:"))
        })
        .map(str::to_owned);
    let (target, request) = match link {
        Some(url) => {
            let request = Request::Link { url };
            if let Some(home) = &home {
                match runtime.block_on(ipybox::app::send_to_any(home, &request)) {
                    Ok(true) => return Ok(ExitCode::SUCCESS),
                    Ok(false) => {}
                    Err(e) => tracing::warn!("the running ipybox app did not take the link: {e}"),
                }
            }
            // No app runs: one opens on the workspace used last, and asks there.
            let workspace = match home
                .as_ref()
                .and_then(|h| Recent::new(h).list().first().cloned())
            {
                Some(w) => w,
                None => std::env::current_dir().context("the current folder")?,
            };
            (ipybox::app::Target::resolve(&workspace)?, request)
        }
        None => {
            let path = local_path(given)?;
            let target = ipybox::app::Target::resolve(&path)?;
            let notebook = (path.extension().is_some_and(|e| e == "ipynb") && !path.is_dir())
                .then(|| target.notebook.clone());
            (target, Request::Open { notebook })
        }
    };
    let (sandbox, remote) = match &args {
        Some((sandbox, _)) if sandbox.workspace_policy() => anyhow::bail!(
            "--sandbox-config workspace is for `ipybox mcp` and `ipybox exec`; in the app, choose \"This workspace's policy\" in the Sandbox tab (kept for the workspace) or give a policy file"
        ),
        Some((sandbox, gateway)) => (sandbox.options(&target.workspace)?, gateway.remote()),
        None => (None, None),
    };
    if sandbox.is_some() && remote.is_some() {
        anyhow::bail!(
            "--sandbox runs kernels on this computer, --gateway-url on a server: choose one"
        );
    }
    let mut arrivals = ipybox::app::Arrivals::alone();
    let claimed = InstancePaths::of(&target.workspace)
        .and_then(|paths| Ok((ipybox::app::claim(&paths, arrivals.sender.clone())?, paths)));
    match claimed {
        Ok((Claim::Owner(owner), _)) => arrivals.owner = Some(owner),
        Ok((Claim::Taken, paths)) => {
            // Never two apps on one workspace: the running one takes the request.
            runtime
                .block_on(ipybox::app::send(&paths, &request))
                .with_context(|| {
                    format!(
                        "{} is already open in ipybox, and that app did not take the request",
                        target.workspace.display()
                    )
                })?;
            if sandbox.is_some() || remote.is_some() {
                eprintln!(
                    "ipybox: note: the app already open on {} keeps its own sandbox and kernel settings; --sandbox and --gateway-url are ignored",
                    target.workspace.display()
                );
            }
            eprintln!(
                "ipybox: {} is already open: its window was brought forward",
                target.workspace.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => tracing::warn!(
            "opening without the one-app-per-workspace lock (a second `ipybox open` of this workspace will start another app): {e}"
        ),
    }
    if matches!(request, Request::Link { .. }) {
        arrivals.first.push(request);
    }
    let launch = ipybox::app::Launch { sandbox, remote };
    ipybox::app::run(target, launch, arrivals, runtime.handle().clone())
        .context("the desktop app failed")?;
    Ok(ExitCode::SUCCESS)
}

/// `path` as a local path: a `file://` URL (what a file manager passes for `%U`) decoded.
#[cfg(feature = "desktop")]
pub(crate) fn local_path(path: PathBuf) -> anyhow::Result<PathBuf> {
    match path.to_str().and_then(file_url_path) {
        Some(decoded) => decoded,
        None => Ok(path),
    }
}

#[cfg(not(feature = "desktop"))]
pub(crate) fn open(
    _paths: Vec<PathBuf>,
    _args: Option<(SandboxArgs, GatewayArgs)>,
    _runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<ExitCode> {
    unreachable!("the headless build hands `open` to the desktop app in main")
}

/// The program of the desktop app, installed by the `ipybox-desktop` package.
pub(crate) const DESKTOP_PROGRAM: &str = "ipybox-desktop";

/// `ipybox open` (or `ipybox` alone) in the headless build: the same command line, run by
/// the desktop app when it is installed; otherwise a message saying how to install it.
#[cfg(not(feature = "desktop"))]
pub(crate) fn hand_over_to_desktop(args: &[std::ffi::OsString]) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let me = std::env::current_exe().ok();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let Some(desktop) = find_desktop_app(me.as_deref(), &path) else {
        eprintln!("{}", desktop_missing());
        return ExitCode::from(4);
    };
    // Only returns when the program could not be started.
    let e = std::process::Command::new(&desktop).args(args).exec();
    eprintln!(
        "ipybox: cannot start the desktop app {}: {e}",
        desktop.display()
    );
    ExitCode::from(4)
}

/// The desktop app: `ipybox-desktop` beside this program (`me`), else on `path`; never this
/// program itself.
#[cfg(any(test, not(feature = "desktop")))]
pub(crate) fn find_desktop_app(
    me: Option<&std::path::Path>,
    path: &std::ffi::OsStr,
) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let beside = me.and_then(std::path::Path::parent).map(PathBuf::from);
    let itself = me.and_then(|m| std::fs::canonicalize(m).ok());
    beside
        .into_iter()
        // An empty or relative entry of PATH would mean the current folder: not a place to
        // start a program from unasked.
        .chain(std::env::split_paths(path).filter(|dir| dir.is_absolute()))
        .map(|dir| dir.join(DESKTOP_PROGRAM))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                && std::fs::canonicalize(candidate).ok() != itself
        })
}

/// What the headless build says when asked for a window it cannot open.
#[cfg(any(test, not(feature = "desktop")))]
pub(crate) fn desktop_missing() -> String {
    let version = env!("CARGO_PKG_VERSION");
    format!(
        "ipybox: the desktop app is not installed (this ipybox is the command line and MCP server). \
         Install the ipybox-desktop package of the same version ({version}): \
         `sudo apt install ./ipybox-desktop_{version}_amd64.deb` on Debian and Ubuntu, \
         `sudo dnf install ./ipybox-desktop-{version}-1.x86_64.rpm` on Fedora (see docs/install.md). \
         Without it, `ipybox exec \"print('hello')\"` runs code and `ipybox mcp` serves agents."
    )
}

/// The command line with `open` put in where it is implied: ipybox run as `ipybox-desktop`
/// (the desktop entry's `Exec=ipybox-desktop %U`), an `ipybox:` link or a `file://` URL
/// (decoded by `open`), or a notebook or a folder alone. Anything else is left for clap, so
/// that a mistyped command is still reported as one.
pub(crate) fn implied_open(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    use clap::CommandFactory;
    let as_desktop = args.first().is_some_and(|a| {
        std::path::Path::new(a)
            .file_name()
            .is_some_and(|n| n == DESKTOP_PROGRAM)
    });
    let Some(first) = args.get(1) else {
        if as_desktop {
            args.push("open".into());
        }
        return args;
    };
    let text = first.to_string_lossy();
    let a_url = text
        .get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("file://") || p.eq_ignore_ascii_case("ipybox:"));
    let named = text.starts_with('-')
        || text == "help"
        || Cli::command()
            .get_subcommands()
            .any(|c| c.get_name() == text || c.get_all_aliases().any(|a| a == text));
    let path = PathBuf::from(first);
    let opened = if a_url || (as_desktop && text != "open") {
        true
    } else {
        !named && (path.extension().is_some_and(|e| e == "ipynb") || path.is_dir())
    };
    if opened {
        args.insert(1, "open".into());
    }
    args
}

/// The local path of a `file://` URL (`None` for anything else), percent-decoded; an error for
/// another computer's file.
#[cfg(feature = "desktop")]
pub(crate) fn file_url_path(text: &str) -> Option<anyhow::Result<PathBuf>> {
    use std::os::unix::ffi::OsStringExt;
    let rest = text
        .get(..7)
        .filter(|p| p.eq_ignore_ascii_case("file://"))
        .map(|_| &text[7..])?;
    // `file:///p` and `file://localhost/p` name this computer; another host is not a file here.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return Some(Err(anyhow::anyhow!("{text} is a file on another computer")));
    }
    let raw = rest.as_bytes();
    let mut bytes = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let hex = raw
            .get(i + 1..i + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (raw[i], hex) {
            (b'%', Some(b)) => {
                bytes.push(b);
                i += 3;
            }
            (b, _) => {
                bytes.push(b);
                i += 1;
            }
        }
    }
    Some(Ok(PathBuf::from(std::ffi::OsString::from_vec(bytes))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn args(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_notebook_or_folder_alone_is_opened() {
        let dir = tempfile::tempdir().expect("tempdir");
        let folder = dir.path().to_str().expect("utf-8 path");
        assert_eq!(
            implied_open(args(&["ipybox-desktop", folder])),
            args(&["ipybox-desktop", "open", folder]),
            "a folder from a file manager is a workspace to open"
        );
        assert_eq!(
            implied_open(args(&["ipybox-desktop", "/no/such/dir/a b.ipynb"])),
            args(&["ipybox-desktop", "open", "/no/such/dir/a b.ipynb"]),
            "a notebook opens even when it does not exist yet"
        );
        for words in [
            &["ipybox-desktop", "file:///tmp/a%20b%C3%A9.ipynb"][..],
            &["ipybox", "FILE://otherhost/x.ipynb"],
            &["ipybox", "ipybox://add-server?x"],
            &["ipybox-desktop"],
            &["/usr/bin/ipybox-desktop", "exec"],
        ] {
            let mut opened = args(words);
            opened.insert(1, "open".into());
            assert_eq!(
                implied_open(args(words)),
                opened,
                "{words:?}: the desktop app, a link and a file:// URL (decoded by `open`) open"
            );
        }
    }

    #[test]
    fn commands_flags_and_typos_are_left_to_clap() {
        for words in [
            &["ipybox"][..],
            &["ipybox", "exec", "print(1)"],
            &["ipybox", "--version"],
            &["ipybox", "help"],
            &["ipybox", "exce", "print(1)"],
            &["ipybox", "ipybox-desktop"],
        ] {
            assert_eq!(
                implied_open(args(words)),
                args(words),
                "{words:?} is not a path to open"
            );
        }
    }

    #[test]
    fn the_desktop_app_is_found_beside_then_on_path_never_itself() {
        use std::os::unix::fs::PermissionsExt;
        let make = |dir: &std::path::Path, name: &str| {
            let file = dir.join(name);
            std::fs::write(&file, "#!/bin/sh\n").expect("write");
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            file
        };
        let bin = tempfile::tempdir().expect("tempdir");
        let other = tempfile::tempdir().expect("tempdir");
        let me = make(bin.path(), "ipybox");
        let path = std::env::join_paths([other.path()]).expect("PATH");
        assert_eq!(
            find_desktop_app(Some(&me), &path),
            None,
            "nothing installed: nothing found"
        );
        let on_path = make(other.path(), DESKTOP_PROGRAM);
        assert_eq!(find_desktop_app(Some(&me), &path), Some(on_path));
        let beside = make(bin.path(), DESKTOP_PROGRAM);
        assert_eq!(
            find_desktop_app(Some(&me), &path),
            Some(beside.clone()),
            "the app installed beside this ipybox comes first"
        );
        assert_eq!(
            find_desktop_app(Some(&beside), &OsString::new()),
            None,
            "a program named ipybox-desktop never hands over to itself"
        );
    }

    #[test]
    fn the_missing_app_message_says_how_to_install_it() {
        let text = desktop_missing();
        let version = env!("CARGO_PKG_VERSION");
        assert!(
            text.contains(&format!("apt install ./ipybox-desktop_{version}_amd64.deb"))
                && text.contains("dnf install")
                && text.contains("ipybox exec"),
            "the message names the package, the command to install it and what works without it: {text}"
        );
    }

    #[cfg(feature = "desktop")]
    #[test]
    fn started_from_the_menu_it_opens_the_last_workspace_never_the_home_folder() {
        use std::path::PathBuf;
        let home = PathBuf::from("/home/ana");
        let last = Some(PathBuf::from("/home/ana/projects/weather"));
        assert_eq!(
            workspace_for_nothing(PathBuf::from("/home/ana/proj"), Some(&home), last.clone()),
            PathBuf::from("/home/ana/proj"),
            "`ipybox` in a folder opens that folder"
        );
        assert_eq!(
            workspace_for_nothing(home.clone(), Some(&home), last.clone()),
            PathBuf::from("/home/ana/projects/weather")
        );
        assert_eq!(
            workspace_for_nothing(home.clone(), Some(&home), None),
            PathBuf::from("/home/ana/ipybox-workspace"),
            "the first start from the menu gets a workspace of its own"
        );
    }

    #[cfg(feature = "desktop")]
    #[test]
    fn a_file_url_from_a_file_manager_is_a_local_path() {
        use std::path::PathBuf;
        let path = |s: &str| local_path(PathBuf::from(s)).map_err(|e| e.to_string());
        assert_eq!(
            path("file:///home/me/My%20Notes/a.ipynb"),
            Ok(PathBuf::from("/home/me/My Notes/a.ipynb"))
        );
        assert_eq!(
            path("file://localhost/tmp/x.ipynb"),
            Ok(PathBuf::from("/tmp/x.ipynb"))
        );
        assert_eq!(path("/tmp/plain"), Ok(PathBuf::from("/tmp/plain")));
        assert_eq!(
            path("File:///tmp/a%20b%C3%A9%zz.ipynb"),
            Ok(PathBuf::from("/tmp/a bé%zz.ipynb")),
            "the scheme in any case; a % that starts no escape is kept"
        );
        assert!(
            path("file://server/share/a.ipynb").is_err(),
            "a file of another computer is not opened as a local one"
        );
    }
}
