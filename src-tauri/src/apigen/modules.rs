//! The generated `mcptools/` and saved `gentools/` modules, read one by one for a kernel that
//! does not share the workspace's file system (on a remote gateway): its import hook asks
//! for a module by name over the kernel's channel, and gets its source from here.
//!
//! Only modules of those two packages, by identifier names, read without following links
//! anywhere on the way: a workspace link cannot make ipybox send another file of the
//! person's machine into a kernel.

use std::path::Path;

use super::codeaction::read_regular;
use super::names::is_valid_identifier;
use crate::fsutil::Dir;

/// The packages a kernel may ask for.
const PACKAGES: [&str; 2] = ["mcptools", "gentools"];
/// The largest module sent (generated modules are a few kilobytes).
const MAX_MODULE: u64 = 4 << 20;

/// A module's source, as an import hook needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleSource {
    /// A package (`__init__.py`), so its submodules can be asked for.
    pub package: bool,
    /// Where it lives, relative to the workspace (for tracebacks).
    pub path: String,
    /// The source text.
    pub source: String,
}

/// The module `dotted` (`mcptools.fx.echo`) of `workspace`, if there is one.
pub fn module_source(workspace: &Path, dotted: &str) -> Option<ModuleSource> {
    let parts: Vec<&str> = dotted.split('.').collect();
    if !PACKAGES.contains(&parts[0]) || !parts.iter().all(|p| is_valid_identifier(p)) {
        return None;
    }
    let mut dir = Dir::open_nofollow(workspace).ok()?;
    let (last, parents) = parts.split_last()?;
    for part in parents {
        dir = Dir::open_nofollow(&dir.join(part)).ok()?;
    }
    let path = parts.join("/");
    if let Ok(package) = Dir::open_nofollow(&dir.join(last)) {
        return read_regular(&package, "__init__.py", MAX_MODULE).map(|source| ModuleSource {
            package: true,
            path: format!("{path}/__init__.py"),
            source,
        });
    }
    read_regular(&dir, &format!("{last}.py"), MAX_MODULE).map(|source| ModuleSource {
        package: false,
        path: format!("{path}.py"),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_of_the_two_packages_only_and_never_through_links() {
        let ws = tempfile::tempdir().expect("tempdir");
        let root = ws.path();
        std::fs::create_dir_all(root.join("mcptools/fx")).expect("dirs");
        std::fs::write(root.join("mcptools/__init__.py"), "# top").expect("write");
        std::fs::write(root.join("mcptools/_runtime.py"), "R = 1").expect("write");
        std::fs::write(root.join("mcptools/fx/__init__.py"), "").expect("write");
        std::fs::write(root.join("mcptools/fx/echo.py"), "def run(): ...").expect("write");
        std::fs::write(root.join("secret.py"), "KEY = 'x'").expect("write");

        let echo = module_source(root, "mcptools.fx.echo").expect("echo");
        assert_eq!(
            (echo.package, echo.path.as_str(), echo.source.as_str()),
            (false, "mcptools/fx/echo.py", "def run(): ...")
        );
        let fx = module_source(root, "mcptools.fx").expect("package");
        assert!(fx.package);
        assert_eq!(fx.path, "mcptools/fx/__init__.py");
        assert!(module_source(root, "mcptools._runtime").is_some());

        for refused in [
            "secret",
            "os",
            "mcptools.fx.nope",
            "mcptools..fx",
            "mcptools.fx/../../secret",
            "mcptools.fx.echo.py",
        ] {
            assert_eq!(module_source(root, refused), None, "{refused}");
        }

        // Links planted in the workspace lead nowhere.
        std::os::unix::fs::symlink(root.join("secret.py"), root.join("mcptools/fx/leak.py"))
            .expect("link");
        std::os::unix::fs::symlink(root, root.join("mcptools/up")).expect("link");
        assert_eq!(module_source(root, "mcptools.fx.leak"), None);
        assert_eq!(module_source(root, "mcptools.up.secret"), None);
        assert_eq!(module_source(root, "mcptools.up.mcptools"), None);
    }
}
