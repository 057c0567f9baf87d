//! The `ipybox` command line.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

mod cli;

use cli::args::{Cli, Command, SandboxCommand};
use cli::export;
use cli::open::*;
use cli::signin::{register, sign_in, sign_out};
use cli::words::{for_terminal, in_words};
use cli::{audit::audit, exec::exec, mcp::mcp, sandbox::accept_policy};

fn main() -> ExitCode {
    // As `ipybox open` when run as `ipybox-desktop`, given a link or a file:// URL, or a
    // notebook or folder alone (what a file manager or the desktop entry passes).
    let args = implied_open(std::env::args_os().collect());
    let cli = Cli::parse_from(&args);
    // The headless build hands the window to the desktop app, before anything else starts.
    #[cfg(not(feature = "desktop"))]
    if matches!(cli.command, None | Some(Command::Open(_))) {
        return hand_over_to_desktop(&args[1..]);
    }
    // A PDF is printed by the desktop app's web engine: the desktop app makes it.
    #[cfg(not(feature = "desktop"))]
    if matches!(&cli.command, Some(Command::Export(e)) if e.to == export::Format::Pdf) {
        let me = std::env::current_exe().ok();
        let path = std::env::var_os("PATH").unwrap_or_default();
        if find_desktop_app(me.as_deref(), &path).is_none() {
            eprintln!(
                "ipybox: a PDF is printed by the desktop app's web engine, and the desktop app (ipybox-desktop {}) is not installed; `--to html` makes a page any browser prints",
                env!("CARGO_PKG_VERSION")
            );
            return ExitCode::from(4);
        }
        return hand_over_to_desktop(&args[1..]);
    }
    // Orphaned sandbox processes become ours to reap: `ipybox exec` returns when they are gone.
    ipybox::setup::become_subreaper();
    let log = match &cli.command {
        Some(Command::Mcp(args)) => args.log_filter().unwrap_or(&cli.log),
        _ => &cli.log,
    };
    let mut filter = tracing_subscriber::EnvFilter::try_new(log)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // rmcp's OAuth debug lines print token responses with their extra fields (an id_token,
    // say): a sign-in's secrets stay out of the logs at any level.
    if let Ok(cap) = ipybox::oauth::LOG_DIRECTIVE.parse() {
        filter = filter.add_directive(cap);
    }
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colours only for a person at a terminal: logs piped to a file or another program
        // (an agent's MCP client, a test) stay plain text.
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none(),
        )
        .init();
    tracing::debug!("ipybox started");
    #[cfg(feature = "desktop")]
    if matches!(cli.command, None | Some(Command::Open(_))) {
        ipybox::app::prepare_environment();
    }
    // Installs from before ipybox wrote its files 0600 in a 0700 directory are fixed here,
    // beside the start (a walk of the data directory; what ipybox writes now is private).
    if let Ok(home) = ipybox::setup::ipybox_home() {
        std::thread::spawn(move || ipybox::setup::protect_data_dir(&home));
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ipybox: cannot start the async runtime: {e}");
            return ExitCode::from(4);
        }
    };
    let (path, args) = match cli.command {
        Some(Command::Open(args)) => (args.paths, Some((args.sandbox, args.gateway))),
        None => (Vec::new(), None),
        // Synchronous: a PDF runs GTK's main loop on this thread.
        Some(Command::Export(args)) => {
            return export::run(args).unwrap_or_else(|e| {
                eprintln!("ipybox: {}", for_terminal(&in_words(&e)));
                ExitCode::from(1)
            });
        }
        Some(command) => return run_cli(&runtime, command),
    };
    match open(path, args, &runtime) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ipybox: {}", for_terminal(&in_words(&e)));
            ExitCode::from(4)
        }
    }
}

fn run_cli(runtime: &tokio::runtime::Runtime, command: Command) -> ExitCode {
    let outcome = runtime.block_on(async {
        match command {
            Command::Exec(args) => exec(args).await,
            Command::Setup {
                python,
                sandbox,
                srt_dir,
            } => setup(python, sandbox, srt_dir).await,
            Command::Register(args) => register(args).await,
            Command::SignIn(args) => sign_in(args).await,
            Command::SignOut(args) => sign_out(args),
            Command::Mcp(args) => mcp(args).await,
            Command::Audit(args) => audit(args),
            Command::Sandbox(SandboxCommand::Accept { workspace, yes }) => {
                accept_policy(workspace, yes)
            }
            Command::Sandbox(SandboxCommand::Check {
                policy,
                workspace,
                queries,
            }) => {
                let ws = workspace.unwrap_or_else(|| PathBuf::from("."));
                print!(
                    "{}",
                    ipybox::sandbox_check_report(policy.as_deref(), &ws, &queries)?
                );
                Ok(ExitCode::SUCCESS)
            }
            Command::Open(_) | Command::Export(_) => unreachable!("run above"),
        }
    });
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ipybox: {}", for_terminal(&in_words(&e)));
            ExitCode::from(4)
        }
    }
}

async fn setup(
    python: Option<PathBuf>,
    sandbox: bool,
    srt_dir: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    if srt_dir.is_none() {
        let env = tokio::task::spawn_blocking(move || {
            ipybox::setup::python_env(python.as_deref(), ipybox::Progress::Terminal)
        })
        .await
        .context("provisioning task failed")??;
        println!("Python environment ready: {}", env.python().display());
    }
    if sandbox {
        // Into a folder of its own, srt is made for another machine (a package): this one's
        // tools are not the question.
        let for_here = srt_dir.is_none();
        let srt = tokio::task::spawn_blocking(move || match srt_dir {
            Some(dir) => ipybox::setup::install_srt_in(&dir),
            None => ipybox::setup::install_srt(),
        })
        .await
        .context("installing srt failed")??;
        if for_here {
            ipybox::setup::check_tools(&srt)?;
        }
        ipybox::setup::check_node(&srt)?;
        println!(
            "Sandbox runtime ready: srt {} ({})",
            srt.version().unwrap_or_default(),
            srt.program.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
