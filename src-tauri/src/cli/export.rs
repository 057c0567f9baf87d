//! `ipybox export`: a notebook as HTML, PDF or a Python script, without a window.
//!
//! What a user can expect: the output goes beside the notebook under the same name
//! (`analysis.ipynb` → `analysis.html`) unless `-o` says where (`-o -` writes HTML or the
//! script to stdout); an existing file is never replaced unless `--force` says so; the file
//! appears whole or not at all (written beside its place, then moved there); a notebook that
//! cannot be read or is not a notebook is named with what is wrong, and nothing is written.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};

/// `ipybox export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The notebook (.ipynb).
    #[arg(value_name = "NOTEBOOK")]
    pub notebook: PathBuf,
    /// What to make: a self-contained HTML page (outputs sanitized, images embedded), a PDF
    /// printed from that page by the app's web engine (no LaTeX), or a Python script.
    #[arg(long, value_enum)]
    pub to: Format,
    /// Where to write it (default: beside the notebook, with the format's extension); `-`
    /// writes HTML or the script to stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace the output file when it exists.
    #[arg(long)]
    pub force: bool,
}

/// The formats `ipybox export` makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One HTML file readable in any browser, with nothing that runs or loads.
    Html,
    /// A PDF of that page (needs the desktop app's web engine and a display).
    Pdf,
    /// A Python script, as `jupyter nbconvert --to script` makes it.
    Py,
}

impl Format {
    fn extension(self) -> &'static str {
        match self {
            Format::Html => "html",
            Format::Pdf => "pdf",
            Format::Py => "py",
        }
    }
}

/// Runs `ipybox export`.
pub fn run(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.notebook)
        .with_context(|| format!("cannot read the notebook {}", args.notebook.display()))?;
    let notebook = ipybox::Notebook::parse(&text)
        .with_context(|| format!("{} cannot be exported", args.notebook.display()))?;
    let title = args
        .notebook
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let to_stdout = args.output.as_deref() == Some(Path::new("-"));
    if to_stdout && args.to == Format::Pdf {
        bail!("a PDF is not written to the terminal: give a file with -o");
    }
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| args.notebook.with_extension(args.to.extension()));
    if !to_stdout {
        if same_file(&out, &args.notebook) {
            bail!(
                "{} is the notebook itself: give another file with -o",
                out.display()
            );
        }
        if out.exists() && !args.force {
            bail!(
                "{} exists: pass --force to replace it, or give another file with -o",
                out.display()
            );
        }
    }
    let bytes = match args.to {
        Format::Html => ipybox::export_html(&notebook, &title).into_bytes(),
        Format::Py => ipybox::export_python(&notebook).into_bytes(),
        Format::Pdf => return pdf(&notebook, &title, &out, args.force),
    };
    if to_stdout {
        std::io::stdout()
            .write_all(&bytes)
            .context("writing to stdout")?;
        return Ok(ExitCode::SUCCESS);
    }
    let staged = staging_path(&out);
    std::fs::write(&staged, &bytes)
        .with_context(|| format!("cannot write {}", staged.display()))?;
    put_in_place(&staged, &out, args.force)?;
    println!("Exported {}", out.display());
    Ok(ExitCode::SUCCESS)
}

#[cfg(all(feature = "desktop", target_os = "linux"))]
fn pdf(
    notebook: &ipybox::Notebook,
    title: &str,
    out: &Path,
    force: bool,
) -> anyhow::Result<ExitCode> {
    let html = ipybox::export_html(notebook, title);
    let staged = staging_path(out);
    if let Err(e) = ipybox::app::print_pdf(&html, &staged) {
        let _ = std::fs::remove_file(&staged);
        return Err(e.into());
    }
    put_in_place(&staged, out, force)?;
    println!("Exported {}", out.display());
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(all(feature = "desktop", target_os = "linux")))]
fn pdf(_: &ipybox::Notebook, _: &str, _: &Path, _: bool) -> anyhow::Result<ExitCode> {
    bail!(
        "a PDF is printed by the desktop app's web engine, which this ipybox lacks: install ipybox-desktop, or export HTML and print that from a browser"
    )
}

/// A name beside `out` for the file being written, so a failure never leaves half a file
/// where the reader looks.
fn staging_path(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    out.with_file_name(format!(".{name}.{}.part", std::process::id()))
}

/// Moves the written file to `out`: replacing what is there with `force`, else only if
/// nothing is (a link fails when the name is taken, even by a file made a moment ago).
fn put_in_place(staged: &Path, out: &Path, force: bool) -> anyhow::Result<()> {
    let result = if force {
        std::fs::rename(staged, out)
    } else {
        std::fs::hard_link(staged, out).and_then(|()| std::fs::remove_file(staged))
    };
    if let Err(e) = result {
        let _ = std::fs::remove_file(staged);
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            bail!(
                "{} exists: pass --force to replace it, or give another file with -o",
                out.display()
            );
        }
        return Err(e).with_context(|| format!("cannot write {}", out.display()));
    }
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
