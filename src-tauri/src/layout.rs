//! The Layout in `lib.rs`, checked: every module is placed in a layer, and no file uses a
//! module of a layer above its own (`crate::name` anywhere in it, doc links included, since a
//! link up is an arrow up too). A new arrow up fails here, naming the file, instead of
//! quietly bending the house.

use std::collections::BTreeMap;
use std::path::Path;

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// The crate's modules (`mod name;` in `lib.rs`), each with its layer: 0 for the bottom
/// bullet of the Layout, counting up. A module the Layout does not name has no layer.
fn layers(lib: &str) -> BTreeMap<String, Option<usize>> {
    let modules: Vec<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_owned)
        .collect();
    let layout: Vec<&str> = lib
        .lines()
        .skip_while(|l| !l.starts_with("//! # Layout"))
        .take_while(|l| l.starts_with("//!"))
        .collect();
    // A bullet and the lines that continue it.
    let mut bullets: Vec<String> = Vec::new();
    for line in layout {
        if let Some(rest) = line.strip_prefix("//! - ") {
            bullets.push(rest.to_owned());
        } else if let (Some(rest), Some(last)) = (line.strip_prefix("//!   "), bullets.last_mut()) {
            last.push(' ');
            last.push_str(rest);
        }
    }
    let count = bullets.len();
    let mut placed: BTreeMap<String, Option<usize>> =
        modules.iter().map(|m| (m.clone(), None)).collect();
    for (i, bullet) in bullets.iter().enumerate() {
        for name in bullet.split('`').skip(1).step_by(2) {
            if let Some(slot @ None) = placed.get_mut(name) {
                *slot = Some(count - 1 - i);
            }
        }
    }
    placed
}

/// The modules `text` names as `crate::name`.
fn uses(text: &str) -> Vec<String> {
    text.match_indices("crate::")
        .filter(|(at, _)| {
            // `ipybox_crate::x` or `$crate::x` are not this crate's root.
            !text[..*at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
        })
        .map(|(at, m)| {
            text[at + m.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir)
        .expect("reading the sources")
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let src = Path::new(SRC);
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let layers = layers(&lib);
    let unplaced: Vec<&String> = layers
        .iter()
        .filter(|(name, layer)| layer.is_none() && name.as_str() != "layout")
        .map(|(name, _)| name)
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules missing from the Layout in lib.rs: {unplaced:?}"
    );
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut arrows_up = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).expect("under src");
        let Some(top) = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|c| c.trim_end_matches(".rs").to_owned())
        else {
            continue;
        };
        let Some(Some(own)) = layers.get(&top) else {
            continue; // lib.rs, main.rs, bin/: above every layer
        };
        let text = std::fs::read_to_string(&file).expect("a source file");
        for used in uses(&text) {
            if let Some(Some(theirs)) = layers.get(&used)
                && theirs > own
            {
                arrows_up.push(format!("{} uses `{used}`", relative.display()));
            }
        }
    }
    arrows_up.sort();
    arrows_up.dedup();
    assert!(
        arrows_up.is_empty(),
        "modules use a layer above their own (see the Layout in lib.rs):\n{}",
        arrows_up.join("\n")
    );
}

#[test]
fn the_check_sees_an_arrow_up() {
    let lib = "//! # Layout\n//!\n//! - `top`: the app;\n//!   `also`: beside it.\n//! - `bottom`: below.\n\nmod also;\nmod bottom;\nmod top;\nmod nowhere;\n";
    let layers = layers(lib);
    assert_eq!(layers["top"], Some(1));
    assert_eq!(layers["also"], Some(1), "a bullet's continued lines count");
    assert_eq!(layers["bottom"], Some(0));
    assert_eq!(layers["nowhere"], None);
    assert_eq!(
        uses("use crate::top::X; [`crate::bottom::y`] $crate::z other_crate::w"),
        ["top", "bottom"]
    );
}
