//! MCP servers ipybox installs itself, so that a person adds one without a terminal: the
//! reference servers (fetch, time, git from PyPI; filesystem, memory, everything from npm)
//! and any Python or npm package named. Each goes into a folder of its own in ipybox's data
//! directory — a Python virtual environment (uv, else `python3 -m venv` and pip), or an npm
//! prefix filled by the Node.js and npm ipybox brings for srt — from wheels and with no
//! package scripts, so installing runs none of the package's code —
//! at the version the registry has then, which stays until the person updates it. What comes
//! back is the server's parameters, the exact command, for the person to see and save (run
//! in the sandbox by default: `srt --settings ipybox:mcp-server …`).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde::Serialize;

use crate::error::{Error, Result};

/// Where a package comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "PackageSource"))]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A Python package from PyPI, run by its console script.
    Pypi,
    /// An npm package, run by its `bin` on ipybox's own Node.js.
    Npm,
}

/// A server of the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "CatalogEntry"))]
pub struct Entry {
    /// The name it is registered under by default (kernel code imports `mcptools.<name>`).
    pub name: &'static str,
    /// What it does, in a line.
    pub summary: &'static str,
    /// Where its package comes from.
    pub source: Source,
    /// The package.
    pub package: &'static str,
    /// Arguments after its command (`${WORKSPACE}` is the workspace when it starts).
    #[cfg_attr(test, ts(type = "string[]"))]
    pub args: &'static [&'static str],
}

/// The reference MCP servers (modelcontextprotocol/servers).
pub const ENTRIES: [Entry; 6] = [
    Entry {
        name: "time",
        summary: "The time now and across time zones.",
        source: Source::Pypi,
        package: "mcp-server-time",
        args: &[],
    },
    Entry {
        name: "fetch",
        summary: "Fetches web pages as Markdown (in the sandbox, only the domains its policy allows).",
        source: Source::Pypi,
        package: "mcp-server-fetch",
        args: &[],
    },
    Entry {
        name: "git",
        summary: "Reads and changes the workspace's git repository.",
        source: Source::Pypi,
        package: "mcp-server-git",
        args: &["--repository", "${WORKSPACE}"],
    },
    Entry {
        name: "filesystem",
        summary: "Reads and writes files in the workspace (only reads, in the sandbox).",
        source: Source::Npm,
        package: "@modelcontextprotocol/server-filesystem",
        args: &["${WORKSPACE}"],
    },
    Entry {
        name: "memory",
        summary: "A knowledge graph that remembers across sessions.",
        source: Source::Npm,
        package: "@modelcontextprotocol/server-memory",
        args: &[],
    },
    Entry {
        name: "everything",
        summary: "Every MCP feature, for trying things out.",
        source: Source::Npm,
        package: "@modelcontextprotocol/server-everything",
        args: &["stdio"],
    },
];

/// A package installed: how to start it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Installed {
    /// The program (absolute).
    pub command: String,
    /// Its arguments, the catalog's after the package's own.
    pub args: Vec<String>,
    /// The version installed.
    pub version: String,
    /// The folder it is installed in.
    #[cfg_attr(test, ts(type = "string"))]
    pub dir: PathBuf,
}

/// Check a package name as its registry spells names; the error says what is wrong.
pub fn check_name(source: Source, package: &str) -> Result<()> {
    let ok = match source {
        // PEP 508 names: letters, digits, `.`, `_`, `-`, starting and ending alphanumeric.
        Source::Pypi => {
            !package.is_empty()
                && package.len() <= 100
                && package
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c))
                && package.starts_with(|c: char| c.is_ascii_alphanumeric())
                && package.ends_with(|c: char| c.is_ascii_alphanumeric())
        }
        // npm: lower case, an optional `@scope/`, no leading `.` or `_`.
        Source::Npm => {
            let (scope, name) = match package.strip_prefix('@') {
                Some(rest) => match rest.split_once('/') {
                    Some((scope, name)) => (Some(scope), name),
                    None => (None, ""),
                },
                None => (None, package),
            };
            let part = |p: &str| {
                !p.is_empty()
                    && !p.starts_with(['.', '_'])
                    && p.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-._~".contains(c))
            };
            package.len() <= 214 && part(name) && scope.is_none_or(part)
        }
    };
    if ok {
        Ok(())
    } else {
        Err(Error::config(format!(
            "“{}” is not a {} package name",
            crate::display::escape(package),
            match source {
                Source::Pypi => "PyPI",
                Source::Npm => "npm",
            }
        )))
    }
}

/// The folder a package is installed in, under ipybox's data directory `home`.
pub fn folder(home: &Path, source: Source, package: &str) -> PathBuf {
    let (kind, name) = match source {
        Source::Pypi => (
            "pypi",
            package.to_ascii_lowercase().replace(['_', '.'], "-"),
        ),
        Source::Npm => ("npm", package.trim_start_matches('@').replace('/', "__")),
    };
    home.join("mcp-servers").join(kind).join(name)
}

/// What `spec` names: a catalog server by its name (`time`), or a package as
/// `pypi:NAME` / `npm:NAME`; with the arguments its command takes.
pub fn resolve(spec: &str) -> Result<(Source, String, Vec<String>)> {
    if let Some(entry) = ENTRIES.iter().find(|e| e.name == spec) {
        let args = entry.args.iter().map(|a| (*a).to_owned()).collect();
        return Ok((entry.source, entry.package.to_owned(), args));
    }
    let (source, package) = match spec.split_once(':') {
        Some(("pypi", package)) => (Source::Pypi, package),
        Some(("npm", package)) => (Source::Npm, package),
        _ => {
            let names: Vec<&str> = ENTRIES.iter().map(|e| e.name).collect();
            return Err(Error::config(format!(
                "“{}” is neither a server of the catalog ({}) nor pypi:PACKAGE or npm:PACKAGE",
                crate::display::escape(spec),
                names.join(", ")
            )));
        }
    };
    check_name(source, package)?;
    Ok((source, package.to_owned(), Vec::new()))
}

/// The server parameters of an installed package: its command, in the sandbox under the
/// profile ipybox ships for MCP servers when `sandboxed`.
pub fn params(installed: &Installed, sandboxed: bool) -> serde_json::Value {
    if sandboxed {
        let mut args = vec![
            "--settings".to_owned(),
            format!("{}mcp-server", crate::registry::SHIPPED_PROFILE),
            installed.command.clone(),
        ];
        args.extend(installed.args.iter().cloned());
        serde_json::json!({ "command": "srt", "args": args })
    } else {
        serde_json::json!({ "command": installed.command, "args": installed.args })
    }
}

/// Install `package` (again: an update to the registry's newest version) into its folder in
/// `home`; `args` go after its command. Blocking: minutes on a slow network.
pub fn install(home: &Path, source: Source, package: &str, args: &[String]) -> Result<Installed> {
    check_name(source, package)?;
    let dir = folder(home, source, package);
    let mut installed = match source {
        Source::Pypi => install_pypi(&dir, package)?,
        Source::Npm => install_npm(home, &dir, package)?,
    };
    installed.args.extend(args.iter().cloned());
    Ok(installed)
}

fn run(command: &mut std::process::Command, what: &str) -> Result<String> {
    let out = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::config(format!("{what}: cannot start it")).because(e))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = said.lines().rev().take(6).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(Error::config(format!(
        "{what} failed ({}):\n{}",
        out.status,
        crate::display::escape(&tail.join("\n"))
    )))
}

fn install_pypi(dir: &Path, package: &str) -> Result<Installed> {
    let python = dir.join("bin/python");
    let uv = crate::pyenv::which("uv");
    if !python.is_file() {
        let parent = dir.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
        match &uv {
            Some(uv) => run(
                crate::process::host_command(uv)
                    .args(["venv", "-q"])
                    .arg(dir),
                "making a Python environment for the server",
            )?,
            None => run(
                crate::process::host_command("python3")
                    .args(["-m", "venv"])
                    .arg(dir),
                "making a Python environment for the server (python3 -m venv)",
            )?,
        };
    }
    let what = format!("installing {package} from PyPI");
    match &uv {
        Some(uv) => run(
            crate::process::host_command(uv)
                .args([
                    "pip",
                    "install",
                    "-q",
                    "--upgrade",
                    "--only-binary",
                    ":all:",
                    "--python",
                ])
                .arg(&python)
                .arg(package),
            &what,
        )?,
        None => run(
            crate::process::host_command(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--upgrade",
                    "--only-binary",
                    ":all:",
                    "--disable-pip-version-check",
                ])
                .arg(package),
            &what,
        )?,
    };
    // Its version and console scripts, as the installed distribution says.
    let said = run(
        crate::process::host_command(&python).args([
            "-I",
            "-c",
            "import importlib.metadata as m, json, sys\nd = m.distribution(sys.argv[1])\nprint(json.dumps([d.version, sorted(e.name for e in d.entry_points if e.group == 'console_scripts')]))",
            package,
        ]),
        "reading what was installed",
    )?;
    let (version, scripts): (String, Vec<String>) = serde_json::from_str(said.trim())
        .map_err(|e| Error::config("reading what was installed").because(e))?;
    let script = pick(package, &scripts).ok_or_else(|| {
        Error::config(format!(
            "{package} has no program to start ({}); give its command in the form instead",
            if scripts.is_empty() {
                "it installs none".to_owned()
            } else {
                format!("it installs {}", scripts.join(", "))
            }
        ))
    })?;
    Ok(Installed {
        command: dir.join("bin").join(script).display().to_string(),
        args: Vec::new(),
        version,
        dir: dir.to_path_buf(),
    })
}

/// The program of a package that installs `scripts`: the one named as the package (or its
/// last part), else the only one.
fn pick(package: &str, scripts: &[String]) -> Option<String> {
    let base = package.rsplit('/').next().unwrap_or(package);
    scripts
        .iter()
        .find(|s| s.as_str() == base || s.as_str() == package)
        .or_else(|| (scripts.len() == 1).then(|| &scripts[0]))
        .cloned()
}

fn install_npm(home: &Path, dir: &Path, package: &str) -> Result<Installed> {
    let runtime = crate::sandbox::private_runtime(home)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    run(
        &mut runtime.npm_install(dir, &format!("{package}@latest")),
        &format!("installing {package} from npm"),
    )?;
    let root = dir.join("node_modules").join(package);
    let manifest: serde_json::Value = std::fs::read_to_string(root.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or_else(|| Error::config(format!("{package} was not installed as expected")))?;
    let version = manifest["version"].as_str().unwrap_or("?").to_owned();
    let bin = match &manifest["bin"] {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Object(map) => {
            let names: Vec<String> = map.keys().cloned().collect();
            pick(package, &names).and_then(|n| map[&n].as_str().map(str::to_owned))
        }
        _ => None,
    }
    .ok_or_else(|| {
        Error::config(format!(
            "{package} has no program to start (its package.json names no `bin`); give its command in the form instead"
        ))
    })?;
    let script = crate::fsutil::lexically_normal(&root.join(bin));
    if !script.starts_with(&root) {
        return Err(Error::config(format!(
            "{package} names a program outside its own folder"
        )));
    }
    Ok(Installed {
        command: runtime.node.display().to_string(),
        args: vec![script.display().to_string()],
        version,
        dir: dir.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_are_checked_as_their_registries_spell_them() {
        for ok in ["mcp-server-time", "mcp_server.x", "A1"] {
            assert!(check_name(Source::Pypi, ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "-x",
            "x-",
            "a b",
            "x;rm",
            "../x",
            "x==1.0",
            "git+https://e.example/x",
        ] {
            assert!(check_name(Source::Pypi, bad).is_err(), "{bad}");
        }
        for ok in ["@modelcontextprotocol/server-memory", "left-pad", "a.b_c~d"] {
            assert!(check_name(Source::Npm, ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "@scope",
            "@/x",
            "Upper",
            ".hidden",
            "x y",
            "../x",
            "x@1.0",
            "https://e.example/x.tgz",
            "git+ssh://x",
        ] {
            assert!(check_name(Source::Npm, bad).is_err(), "{bad}");
        }
        let err = check_name(Source::Npm, "x\u{202e}y").expect_err("refused");
        assert!(err.to_string().contains("\\u202e"), "escaped: {err}");
    }

    #[test]
    fn each_package_has_a_folder_of_its_own() {
        let home = Path::new("/h");
        assert_eq!(
            folder(home, Source::Npm, "@modelcontextprotocol/server-memory"),
            Path::new("/h/mcp-servers/npm/modelcontextprotocol__server-memory")
        );
        assert_eq!(
            folder(home, Source::Pypi, "MCP_Server.Time"),
            Path::new("/h/mcp-servers/pypi/mcp-server-time")
        );
        assert_ne!(
            folder(home, Source::Npm, "a"),
            folder(home, Source::Pypi, "a")
        );
    }

    #[test]
    fn the_program_is_the_one_named_as_the_package_or_the_only_one() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            pick("mcp-server-time", &s(&["mcp-server-time", "other"])),
            Some("mcp-server-time".into())
        );
        assert_eq!(pick("@scope/tool", &s(&["tool", "x"])), Some("tool".into()));
        assert_eq!(pick("pkg", &s(&["only"])), Some("only".into()));
        assert_eq!(pick("pkg", &s(&["a", "b"])), None);
        assert_eq!(pick("pkg", &[]), None);
    }

    #[test]
    fn specs_name_a_catalog_server_or_a_package() {
        assert_eq!(
            resolve("git").expect("catalog"),
            (
                Source::Pypi,
                "mcp-server-git".to_owned(),
                vec!["--repository".to_owned(), "${WORKSPACE}".to_owned()]
            )
        );
        assert_eq!(
            resolve("npm:@scope/x").expect("npm"),
            (Source::Npm, "@scope/x".to_owned(), Vec::new())
        );
        assert!(resolve("pip:x").is_err());
        assert!(resolve("npm:x y").is_err());
        let installed = Installed {
            command: "/h/node".into(),
            args: vec!["/h/x.js".into(), "stdio".into()],
            version: "1".into(),
            dir: "/h".into(),
        };
        assert_eq!(
            params(&installed, true),
            serde_json::json!({"command": "srt", "args": ["--settings", "ipybox:mcp-server", "/h/node", "/h/x.js", "stdio"]})
        );
        assert_eq!(
            params(&installed, false),
            serde_json::json!({"command": "/h/node", "args": ["/h/x.js", "stdio"]})
        );
    }

    #[test]
    fn the_catalog_names_are_valid_and_its_packages_well_formed() {
        for e in &ENTRIES {
            crate::apigen::check_server_name(e.name).expect("a valid server name");
            check_name(e.source, e.package).expect("a valid package name");
        }
    }
}
