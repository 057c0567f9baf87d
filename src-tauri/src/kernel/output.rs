//! Turns the output messages of one execution into the result a caller sees: text in arrival
//! order, images saved to disk, the exception if one was raised.
//!
//! Output kinds follow Jupyter's [IOPub messages](https://jupyter-client.readthedocs.io/en/stable/messaging.html#messages-on-the-iopub-pub-sub-channel):
//! `stream`, `execute_result`, `display_data`, `update_display_data`, `clear_output`, `error`.

use std::path::PathBuf;

use base64::Engine;

use super::messages::{Content, DisplayData, ErrorContent};
use crate::error::{PartialOutput, PythonError};
use crate::fsutil::Anchored;

/// Image MIME types ipybox saves, with their file extension.
const IMAGE_TYPES: [(&str, &str); 3] = [
    ("image/png", "png"),
    ("image/jpeg", "jpg"),
    ("image/svg+xml", "svg"),
];

/// An image ipybox saved: where, its MIME type, and the bytes written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedImage {
    /// The file.
    pub path: PathBuf,
    /// `image/png`, `image/jpeg` or `image/svg+xml`.
    pub mime: String,
    /// What was written to `path`.
    pub data: bytes::Bytes,
}

#[derive(Debug)]
struct Item {
    display_id: Option<String>,
    text: String,
    images: Vec<SavedImage>,
}

/// Collects one execution's output.
#[derive(Debug)]
pub struct OutputCollector {
    /// `None`: images are not saved (a notebook keeps them in its outputs).
    images_dir: Option<Anchored>,
    items: Vec<Item>,
    clear_on_next: bool,
    error: Option<PythonError>,
}

impl OutputCollector {
    /// A collector saving images into `images_dir` (created on first image), or saving
    /// none.
    pub(crate) fn new(images_dir: Option<Anchored>) -> Self {
        OutputCollector {
            images_dir,
            items: Vec::new(),
            clear_on_next: false,
            error: None,
        }
    }

    /// Take in one output message; returns new text to stream as a chunk, if any.
    pub fn push(&mut self, content: Content) -> Option<String> {
        match content {
            Content::ClearOutput(c) => {
                if c.wait {
                    self.clear_on_next = true;
                } else {
                    self.items.clear();
                }
                None
            }
            Content::Stream(s) => {
                self.before_output();
                // Consecutive stream text extends the last item, so 100 000 prints stay cheap.
                match self.items.last_mut() {
                    Some(last) if last.display_id.is_none() && last.images.is_empty() => {
                        last.text.push_str(&s.text);
                    }
                    _ => self.items.push(Item {
                        display_id: None,
                        text: s.text.clone(),
                        images: Vec::new(),
                    }),
                }
                Some(s.text)
            }
            Content::ExecuteResult(d) | Content::DisplayData(d) => {
                self.before_output();
                let item = self.render(&d);
                let chunk = (!item.text.is_empty()).then(|| item.text.clone());
                self.items.push(item);
                chunk
            }
            Content::UpdateDisplayData(d) => {
                let id = d.display_id().map(str::to_owned)?;
                let updated = self.render(&d);
                for item in self
                    .items
                    .iter_mut()
                    .filter(|i| i.display_id.as_deref() == Some(&id))
                {
                    item.text = updated.text.clone();
                    item.images = updated.images.clone();
                }
                None
            }
            Content::Error(e) => {
                self.error = Some(python_error(&e));
                None
            }
            _ => None,
        }
    }

    fn before_output(&mut self) {
        if std::mem::take(&mut self.clear_on_next) {
            self.items.clear();
        }
    }

    fn render(&self, d: &DisplayData) -> Item {
        // A display with an image is the image: its text/plain is only a description of it
        // (`<Figure size 640x480 with 1 Axes>`).
        let has_image = IMAGE_TYPES.iter().any(|(m, _)| d.data.contains_key(*m));
        let mut text = if has_image {
            String::new()
        } else {
            d.text("text/plain").unwrap_or_default()
        };
        let mut images = Vec::new();
        for (mime, ext) in IMAGE_TYPES {
            if !d.data.contains_key(mime) {
                continue;
            }
            let Some(images_dir) = &self.images_dir else {
                continue;
            };
            match save_image(images_dir, d, mime, ext) {
                Ok(image) => images.push(image),
                Err(reason) => {
                    tracing::warn!(%mime, %reason, "image output not saved");
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&format!("[ipybox: {mime} output not saved: {reason}]"));
                }
            }
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        Item {
            display_id: d.display_id().map(str::to_owned),
            text,
            images,
        }
    }

    /// The exception raised by the code, if any.
    pub fn take_error(&mut self) -> Option<PythonError> {
        self.error.take()
    }

    /// All text (whitespace-trimmed, `None` when empty) and image paths, in output order.
    pub fn finish(&self) -> PartialOutput {
        let text: String = self.items.iter().map(|i| i.text.as_str()).collect();
        let text = text.trim();
        PartialOutput {
            text: (!text.is_empty()).then(|| text.to_owned()),
            images: self
                .items
                .iter()
                .flat_map(|i| i.images.iter().map(|image| image.path.clone()))
                .collect(),
        }
    }

    /// The images of [`finish`](Self::finish), with their bytes.
    pub fn saved_images(&self) -> Vec<SavedImage> {
        self.items
            .iter()
            .flat_map(|i| i.images.iter().cloned())
            .collect()
    }
}

/// A [`PythonError`] from an `error` message (or an `execute_reply` with status `error`).
pub fn python_error(e: &ErrorContent) -> PythonError {
    PythonError {
        name: e.ename.clone(),
        value: e.evalue.clone(),
        traceback: e
            .traceback
            .iter()
            .map(|l| strip_ansi(l))
            .collect::<Vec<_>>()
            .join("\n"),
        raw_traceback: e.traceback.clone(),
    }
}

fn save_image(
    dir: &Anchored,
    d: &DisplayData,
    mime: &str,
    ext: &str,
) -> Result<SavedImage, String> {
    let bytes = if mime == "image/svg+xml" {
        let svg = d.text(mime).ok_or("the SVG payload is not text")?;
        if !svg.contains("<svg") {
            return Err("the payload is not an SVG document".into());
        }
        svg.into_bytes()
    } else {
        let b64 = d.text(mime).ok_or("the payload is not base64 text")?;
        let cleaned: String = b64.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(cleaned)
            .map_err(|e| format!("invalid base64: {e}"))?;
        let format = if mime == "image/png" {
            image::ImageFormat::Png
        } else {
            image::ImageFormat::Jpeg
        };
        image::load_from_memory_with_format(&bytes, format)
            .map_err(|e| format!("undecodable image: {e}"))?;
        bytes
    };
    let name = uuid::Uuid::new_v4().simple().to_string();
    let file_name = format!("{}.{ext}", &name[..12]);
    // Opened anew for each image, without following links: kernel code can replace the
    // directory with a link to any place the user can write.
    let handle = dir.open().map_err(|e| e.to_string())?;
    let path = dir.path().join(&file_name);
    handle
        .create_file(&file_name, &bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(SavedImage {
        path,
        mime: mime.to_owned(),
        data: bytes.into(),
    })
}

/// Remove ANSI escape sequences (colours, cursor moves, OSC titles/links).
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // CSI: parameters and intermediates, then one final byte in @..~
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC: until BEL or ESC \
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            // Two-character sequences (ESC ( B, ESC =, …)
            Some('(') | Some(')') => {
                chars.next();
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::messages::{ClearOutput, Stream};

    fn stream(t: &str) -> Content {
        Content::Stream(Stream {
            name: crate::kernel::messages::StreamName::Stdout,
            text: t.into(),
        })
    }

    #[test]
    fn strips_ansi_colours_and_links() {
        assert_eq!(
            strip_ansi("\u{1b}[0;31mZeroDivisionError\u{1b}[0m: x"),
            "ZeroDivisionError: x"
        );
        assert_eq!(
            strip_ansi("a\u{1b}]8;;http://x\u{7}link\u{1b}]8;;\u{7}b"),
            "alinkb"
        );
        assert_eq!(strip_ansi("plain"), "plain");
    }

    #[test]
    fn text_is_in_arrival_order_and_clear_output_clears() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut c = OutputCollector::new(Some(Anchored::new(dir.path(), dir.path())));
        assert_eq!(c.push(stream("a\n")).as_deref(), Some("a\n"));
        c.push(stream("b\n"));
        assert_eq!(c.finish().text.as_deref(), Some("a\nb"));
        c.push(Content::ClearOutput(ClearOutput { wait: true }));
        assert_eq!(
            c.finish().text.as_deref(),
            Some("a\nb"),
            "wait=true clears only at the next output"
        );
        c.push(stream("c"));
        assert_eq!(c.finish().text.as_deref(), Some("c"));
    }

    #[test]
    fn undecodable_png_is_reported_not_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut c = OutputCollector::new(Some(Anchored::new(dir.path(), dir.path())));
        let d: DisplayData =
            serde_json::from_str(r#"{"data":{"image/png":"aGVsbG8=","text/plain":"<Figure>"}}"#)
                .expect("valid");
        c.push(Content::DisplayData(d));
        let out = c.finish();
        assert!(out.images.is_empty(), "an invalid PNG is not saved");
        assert!(
            out.text
                .as_deref()
                .unwrap_or("")
                .contains("image/png output not saved"),
            "{out:?}"
        );
        assert_eq!(
            std::fs::read_dir(dir.path())
                .map(|d| d.count())
                .unwrap_or(0),
            0,
            "nothing written"
        );
    }
}
