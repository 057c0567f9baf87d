//! The `ipybox` command line.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use futures_util::StreamExt;
use ipybox::{CodeExecutor, Error, Event, StreamOptions};

#[path = "cli/export.rs"]
mod export;
mod terminal_form;

/// Run Python code in stateful IPython kernels, with MCP tools as a typed Python API and
/// every tool call approved.
#[derive(Debug, Parser)]
#[command(name = "ipybox", version, about, long_about = None)]
struct Cli {
    /// Log level of ipybox itself (error, warn, info, debug, trace); logs go to stderr.
    #[arg(long, global = true, env = "IPYBOX_LOG", default_value = "warn")]
    log: String,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Open the desktop app on a workspace folder or a notebook (`ipybox` with no command
    /// opens the current folder).
    Open(OpenArgs),
    /// Run code in a fresh kernel and stream its output.
    ///
    /// Output is printed as it arrives; saved images are listed at the end. The exit status
    /// is 0 on success, 1 when the code raises (traceback on stderr), 2 on a timeout, 3 when
    /// the kernel dies and 4 when ipybox itself cannot run the code.
    Exec(ExecArgs),
    /// Generate the typed Python API of an MCP server and register the server for a
    /// workspace, so code run there can call its tools (`from mcptools.NAME.TOOL import
    /// Params, run`).
    Register(RegisterArgs),
    /// Sign in to a registered HTTP MCP server that asks for OAuth (again, when its sign-in
    /// expired or was revoked): prints the link to open, waits for the browser to come back,
    /// keeps the tokens in ipybox's data directory.
    SignIn(SignInArgs),
    /// Forget the sign-in to a registered HTTP MCP server.
    SignOut(SignOutArgs),
    /// Serve ipybox as an MCP server (stdio, or Streamable HTTP with --http) with the tools
    /// register_mcp_server, execute_ipython_cell, install_package, reset, list_tools and
    /// save_code_action.
    Mcp(McpArgs),
    /// Print a workspace's audit log: every MCP tool call and shell command its code asked
    /// for, who decided and how, and what came of it.
    Audit(AuditArgs),
    /// The workspace's sandbox policy (sandbox-config.json).
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// Create (or check) the Python environment ipybox runs kernels in; with --sandbox also
    /// install the sandbox runtime (srt) and check its system packages.
    /// Export a notebook as a self-contained HTML page, a PDF or a Python script, without
    /// opening a window.
    Export(export::ExportArgs),
    Setup {
        /// Check an existing environment instead of the managed one.
        #[arg(long, env = "IPYBOX_PYTHON")]
        python: Option<PathBuf>,
        /// Also install srt (Anthropic's sandbox-runtime, pinned) with npm into ipybox's
        /// data directory and check bubblewrap, socat and ripgrep.
        #[arg(long)]
        sandbox: bool,
    },
}

/// `ipybox audit`.
#[derive(Debug, Args)]
struct AuditArgs {
    /// The workspace (default: the current folder).
    #[arg(long, short)]
    workspace: Option<PathBuf>,
    /// Print the entries as JSON Lines, as the log keeps them.
    #[arg(long)]
    json: bool,
    /// Only the last N entries.
    #[arg(long, value_name = "N")]
    last: Option<usize>,
}

/// `ipybox sandbox …`.
#[derive(Debug, Subcommand)]
enum SandboxCommand {
    /// Show the workspace's sandbox policy (what changed since it was last accepted) and
    /// accept it, so `--sandbox-config workspace` and the app run under it. A policy file
    /// that anyone who could write the workspace may have written is never used unseen.
    Accept {
        /// The workspace (default: the current folder).
        #[arg(long, short)]
        workspace: Option<PathBuf>,
        /// Accept without asking (the policy is still printed).
        #[arg(long)]
        yes: bool,
    },
    /// Would sandboxed code be allowed to read or write a path, or reach a URL? Answers by
    /// which rule, from the policy as the sandbox receives it.
    Check {
        /// The policy: a settings file, or `workspace` for the workspace's
        /// sandbox-config.json (default: ipybox's default policy).
        #[arg(long, value_name = "FILE|workspace")]
        policy: Option<PathBuf>,
        /// The workspace (default: the current folder); relative paths are relative to it.
        #[arg(long, short)]
        workspace: Option<PathBuf>,
        /// Paths (read and write are answered) and URLs (scheme://host…).
        #[arg(value_name = "PATH|URL", required = true)]
        queries: Vec<String>,
    },
}

/// `ipybox open`.
#[derive(Debug, Args)]
struct OpenArgs {
    /// A workspace folder, a `.ipynb` notebook (its folder is the workspace; `file://` URLs
    /// too), or an `ipybox://add-server` link (see docs/links.md). Default: the current
    /// folder. A workspace already open in ipybox comes forward in its window (the notebook
    /// opened there) instead of opening twice; a link goes to the app used last. Each further
    /// PATH or LINK opens as if given alone.
    #[arg(value_name = "PATH|LINK")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    sandbox: SandboxArgs,
    #[command(flatten)]
    gateway: GatewayArgs,
}

/// Sandboxing of the kernel.
#[derive(Debug, Args)]
struct SandboxArgs {
    /// Run the kernel inside srt (Anthropic's sandbox-runtime) with ipybox's default policy:
    /// no network, no secrets (.env, ~/.ssh, ...), writes only in the workspace.
    #[arg(long)]
    sandbox: bool,
    /// Use this srt settings file as the kernel's sandbox policy instead of the default
    /// (implies --sandbox). Relative paths in it are relative to the workspace. The word
    /// `workspace` (not with `open`) means the workspace's own sandbox-config.json, created
    /// as the default policy when it has none; sandboxed code cannot change that file. A
    /// file named workspace is ./workspace.
    #[arg(long, value_name = "FILE")]
    sandbox_config: Option<PathBuf>,
}

/// `--sandbox-config`'s word for the workspace's own policy file.
const WORKSPACE_POLICY_WORD: &str = "workspace";

impl SandboxArgs {
    /// Whether the policy is the workspace's own file: something kernel code could have
    /// written, read only because the person asked for it by this word.
    fn workspace_policy(&self) -> bool {
        self.sandbox_config
            .as_deref()
            .is_some_and(|p| p == std::path::Path::new(WORKSPACE_POLICY_WORD))
    }

    /// The sandbox asked for, for kernels working in `workspace`.
    fn options(
        &self,
        workspace: &std::path::Path,
    ) -> anyhow::Result<Option<ipybox::SandboxOptions>> {
        if !self.sandbox && self.sandbox_config.is_none() {
            return Ok(None);
        }
        let policy = match &self.sandbox_config {
            Some(_) if self.workspace_policy() => {
                // The path the session runs in, links resolved: only a policy file inside it
                // is made read-only to the sandboxed kernel.
                let workspace = std::fs::canonicalize(workspace)
                    .with_context(|| format!("the workspace {}", workspace.display()))?;
                let home = ipybox::setup::ipybox_home()?;
                let (file, created) = ipybox::workspace_policy(&home, &workspace)?;
                // Stopped here, before anything starts, rather than when the sandbox does.
                if let ipybox::PolicyReview::Changed { .. } =
                    ipybox::review_workspace_policy(&home, &workspace)?
                {
                    bail!(
                        "the sandbox policy {} has not been accepted on this machine, or changed since it was: it decides what sandboxed code may do, and anyone who could write the workspace could have written it. Review it with `ipybox sandbox accept --workspace {}`, then run again",
                        file.display(),
                        workspace.display()
                    );
                }
                if created {
                    eprintln!(
                        "ipybox: sandbox policy: {} (the workspace had none: created as ipybox's default policy)",
                        file.display()
                    );
                } else {
                    eprintln!(
                        "ipybox: sandbox policy: {} (the workspace's own)",
                        file.display()
                    );
                }
                Some(file)
            }
            Some(p) => Some(
                std::fs::canonicalize(p)
                    .with_context(|| format!("the sandbox policy {}", p.display()))?,
            ),
            None => None,
        };
        Ok(Some(ipybox::SandboxOptions { policy, srt: None }))
    }
}

#[derive(Debug, Args)]
struct RegisterArgs {
    /// Server name: becomes the package `mcptools.NAME` (a Python identifier).
    name: String,
    /// Connection parameters as JSON, or @FILE to read them from a file. Stdio:
    /// {"command", "args", "env", "cwd"}; HTTP: {"url", "headers"}; optional "type":
    /// "stdio" | "streamable_http" | "sse". ${VAR} placeholders are filled from the
    /// environment and the workspace's .env when the server starts.
    #[arg(long)]
    params: String,
    /// The workspace (default: the current directory).
    #[arg(long, short)]
    workspace: Option<PathBuf>,
    #[command(flatten)]
    oauth: OAuthArgs,
}

/// How to sign in to a server that asks for OAuth.
#[derive(Debug, Args)]
struct OAuthArgs {
    /// A client ID registered for ipybox with the server's authorization server, for one
    /// that lets ipybox register no other way. Its secret, if it has one, comes from
    /// IPYBOX_OAUTH_CLIENT_SECRET (never the command line).
    #[arg(long)]
    client_id: Option<String>,
    /// Scopes to ask for (repeat it, or separate them with spaces); default: the scopes the
    /// server asks for.
    #[arg(long = "scope")]
    scopes: Vec<String>,
}

#[derive(Debug, Args)]
struct SignInArgs {
    /// The registered server's name.
    name: String,
    /// The workspace (default: the current directory).
    #[arg(long, short)]
    workspace: Option<PathBuf>,
    #[command(flatten)]
    oauth: OAuthArgs,
}

#[derive(Debug, Args)]
struct SignOutArgs {
    /// The registered server's name.
    name: String,
    /// The workspace (default: the current directory).
    #[arg(long, short)]
    workspace: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct McpArgs {
    /// The workspace: the kernel's working directory, home of mcptools/ and .env (default:
    /// the current directory; created if missing).
    #[arg(long, short)]
    workspace: Option<PathBuf>,
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio. ADDR is PORT or HOST:PORT
    /// (host 127.0.0.1 by default). Clients send `Authorization: Bearer <token>`; the token is
    /// IPYBOX_MCP_TOKEN, or a random one printed on stderr. Each MCP session gets a kernel of
    /// its own.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// With --http on a loopback address: accept requests without a bearer token (for
    /// clients that cannot send one, such as the MCP conformance suite).
    #[arg(long, requires = "http")]
    no_auth: bool,
    /// With --http: also answer requests addressed to HOST (a name, or HOST:PORT) — the name
    /// clients reach the server by behind a proxy or in a container. Without it only
    /// loopback names and the bound address are answered, against DNS rebinding; others get
    /// 403. Repeatable; IPYBOX_MCP_ALLOWED_HOSTS takes a comma-separated list.
    #[arg(
        long = "allow-host",
        value_name = "HOST",
        requires = "http",
        env = "IPYBOX_MCP_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    allow_hosts: Vec<String>,
    /// With --http: at most this many sessions (kernels) at once; one more is refused with
    /// an error saying so.
    #[arg(long, value_name = "N", requires = "http", default_value_t = ipybox::server::DEFAULT_MAX_SESSIONS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_sessions: usize,
    /// With --http: end a session and stop its kernel after this many seconds without a tool
    /// call (0: never).
    #[arg(long, value_name = "SECONDS", requires = "http",
          default_value_t = ipybox::server::DEFAULT_SESSION_IDLE_TIMEOUT.as_secs())]
    session_idle_timeout: u64,
    /// Who approves the MCP tool calls executed code makes: `auto` (approve all, the
    /// default), `reject` (reject all), `rules` (the --rules file; a call no rule matches
    /// is rejected; see docs/approval-rules.md) or `desktop` (a person, in the ipybox app
    /// open on the workspace, with its rules; rejected when no app is open). There is no
    /// terminal to `ask` on. `--approval rules FILE` works too. Every call goes into the
    /// workspace's audit log (`ipybox audit`).
    #[arg(long, num_args = 1..=2, value_names = ["MODE", "FILE"])]
    approval: Vec<String>,
    /// The approval rules file (implies --approval rules).
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// Python interpreter of an existing environment to use.
    #[arg(long, env = "IPYBOX_PYTHON")]
    python: Option<PathBuf>,
    #[command(flatten)]
    gateway: GatewayArgs,
    #[command(flatten)]
    sandbox: SandboxArgs,
    /// Log level, as the Python ipybox's flag (any case); overrides --log. Also the
    /// gateway's log level (its log file is in the session's state directory).
    #[arg(long, value_enum, ignore_case = true, value_name = "LEVEL")]
    log_level: Option<PyLogLevel>,
    /// Accepted for the Python ipybox's command lines, with nothing to set: ipybox has no
    /// tool server port (kernels ask for tool calls over their own Jupyter channel).
    #[arg(long, value_name = "PORT")]
    tool_server_port: Option<u16>,
    /// Accepted and ignored, as --tool-server-port.
    #[arg(long, value_name = "HOST")]
    tool_server_host: Option<String>,
    /// Port of the Kernel Gateway ipybox starts (default: a free one). Honoured over stdio
    /// without --sandbox; otherwise ignored with a note.
    #[arg(long, value_name = "PORT")]
    kernel_gateway_port: Option<u16>,
    /// Loopback address of the Kernel Gateway (default 127.0.0.1; `localhost` means that).
    #[arg(long, value_name = "HOST")]
    kernel_gateway_host: Option<String>,
}

/// The Python ipybox's `--log-level` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum PyLogLevel {
    Debug,
    Info,
    #[value(alias = "warn")]
    Warning,
    Error,
    Critical,
}

impl PyLogLevel {
    /// The `tracing` filter and the Kernel Gateway's (traitlets) log level.
    fn levels(self) -> (&'static str, &'static str) {
        match self {
            PyLogLevel::Debug => ("debug", "DEBUG"),
            PyLogLevel::Info => ("info", "INFO"),
            PyLogLevel::Warning => ("warn", "WARN"),
            PyLogLevel::Error => ("error", "ERROR"),
            // tracing has nothing above error.
            PyLogLevel::Critical => ("error", "CRITICAL"),
        }
    }
}

impl McpArgs {
    /// The `tracing` filter `--log-level` asks for, if given.
    fn log_filter(&self) -> Option<&'static str> {
        self.log_level.map(|l| l.levels().0)
    }

    /// The Python ipybox's fixed addresses, where they apply: over stdio without a sandbox
    /// there is one gateway for the whole run. Elsewhere it is ignored with a note on
    /// stderr.
    fn fixed_addresses(&self) -> ipybox::server::FixedAddresses {
        if self.tool_server_port.is_some() || self.tool_server_host.is_some() {
            // Quietly: a Python ipybox configuration that sets them works unchanged.
            tracing::info!(
                "--tool-server-host/--tool-server-port have nothing to set: ipybox has no tool server port; kernels ask for tool calls over their own Jupyter channel"
            );
        }
        let sandboxed = self.sandbox.sandbox || self.sandbox.sandbox_config.is_some();
        let why_not = if self.http.is_some() {
            Some("over --http every session has its own gateway, on a free port")
        } else if sandboxed {
            Some(
                "with --sandbox each sandbox (a fresh one at every reset) has its own gateway, inside its own network namespace",
            )
        } else {
            None
        };
        let mut fixed = ipybox::server::FixedAddresses::default();
        let flags = [(
            "--kernel-gateway-host",
            self.kernel_gateway_host.as_deref(),
            self.kernel_gateway_port,
        )];
        for (flag, host, port) in flags {
            let port_flag = flag.replace("-host", "-port");
            let ip = match host {
                None => None,
                Some(h) => match loopback(h) {
                    Some(ip) => Some(ip),
                    None => {
                        eprintln!(
                            "ipybox: note: {flag} {h} is ignored: ipybox's gateway listens on 127.0.0.1 only, out of the network's reach"
                        );
                        None
                    }
                },
            };
            let default_host = ip.is_none_or(|ip| ip == std::net::Ipv4Addr::LOCALHOST);
            if let Some(reason) = why_not {
                if port.is_some() || !default_host {
                    let given = [
                        port.map(|p| format!("{port_flag} {p}")),
                        (!default_host).then(|| format!("{flag} {}", host.unwrap_or_default())),
                    ];
                    let given: Vec<String> = given.into_iter().flatten().collect();
                    let verb = if given.len() > 1 { "are" } else { "is" };
                    eprintln!(
                        "ipybox: note: {} {verb} ignored: {reason}",
                        given.join(" and ")
                    );
                }
                continue;
            }
            if port.is_none() && default_host {
                continue;
            }
            let addr = std::net::SocketAddr::from((
                ip.unwrap_or(std::net::Ipv4Addr::LOCALHOST),
                port.unwrap_or(0),
            ));
            fixed.gateway = Some(addr);
        }
        fixed
    }
}

/// `host` as an IPv4 loopback address (`localhost` is 127.0.0.1), or `None` when it is not
/// one.
fn loopback(host: &str) -> Option<std::net::Ipv4Addr> {
    if host.eq_ignore_ascii_case("localhost") {
        return Some(std::net::Ipv4Addr::LOCALHOST);
    }
    host.parse::<std::net::Ipv4Addr>()
        .ok()
        .filter(std::net::Ipv4Addr::is_loopback)
}

/// Who approves the tool calls code makes: one vocabulary for `exec --approval` and
/// `mcp --approval`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Approval {
    /// Ask a person on the terminal for each call.
    Ask,
    /// Approve every call.
    Auto,
    /// Reject every call.
    Reject,
    /// Decide by a rules file; a call no rule matches is asked on the terminal where there is
    /// one (`exec`), rejected otherwise (`mcp`).
    Rules(PathBuf),
    /// Ask the ipybox app open on the workspace: its dialog, rules and audit log (`mcp`).
    Desktop,
}

impl Approval {
    /// `--approval MODE [FILE]` and `--rules FILE` as given on the command line; `all` and
    /// `none` are the older spellings of `auto` and `reject`.
    fn parse(words: &[String], rules: Option<&PathBuf>, default: &str) -> anyhow::Result<Approval> {
        let mode = words.first().map(String::as_str).unwrap_or(default);
        let file = match (words.get(1), rules) {
            (Some(_), Some(_)) => {
                bail!("give the rules file once: --approval rules FILE or --rules FILE")
            }
            (Some(f), None) => Some(PathBuf::from(f)),
            (None, r) => r.cloned(),
        };
        Ok(match (mode, file) {
            ("rules", Some(file)) => Approval::Rules(file),
            ("rules", None) => bail!("--approval rules needs the rules file: --rules FILE"),
            // --rules alone: the mode is rules, whatever the default was.
            (_, Some(file)) if words.is_empty() => Approval::Rules(file),
            (_, Some(_)) => bail!("--rules FILE goes with --approval rules, not --approval {mode}"),
            ("ask", None) => Approval::Ask,
            ("auto" | "all", None) => Approval::Auto,
            ("reject" | "none", None) => Approval::Reject,
            ("desktop", None) => Approval::Desktop,
            (other, None) => {
                bail!("--approval takes ask, auto, reject, rules or desktop, not {other:?}")
            }
        })
    }
}

#[derive(Debug, Args)]
struct ExecArgs {
    /// The code to run; `-` reads it from stdin.
    #[arg(conflicts_with = "file", required_unless_present = "file")]
    code: Option<String>,
    /// Read the code from a file.
    #[arg(long, short)]
    file: Option<PathBuf>,
    /// Working directory of the kernel (default: the current directory).
    #[arg(long, short)]
    workspace: Option<PathBuf>,
    /// Interrupt the code after this many seconds (0: no timeout).
    #[arg(long, default_value_t = 120.0)]
    timeout: f64,
    /// Where to save images (default: images/ in the workspace).
    #[arg(long)]
    images_dir: Option<PathBuf>,
    /// An environment variable for the kernel (repeatable).
    #[arg(long = "env", short = 'e', value_name = "KEY=VALUE", value_parser = parse_env)]
    env: Vec<(String, String)>,
    /// Python interpreter of an existing environment to use.
    #[arg(long, env = "IPYBOX_PYTHON")]
    python: Option<PathBuf>,
    #[command(flatten)]
    gateway: GatewayArgs,
    /// Who approves the MCP tool calls the code makes: `ask` on the terminal, `auto`
    /// (approve all), `reject` (reject all), or `rules` (the --rules file first, then ask;
    /// see docs/approval-rules.md).
    #[arg(long, visible_alias = "approve", value_name = "MODE")]
    approval: Option<String>,
    /// The approval rules file (implies --approval rules).
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// With --approval ask (or rules): reject a call nobody answered within this many
    /// seconds.
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    approval_timeout: f64,
    #[command(flatten)]
    sandbox: SandboxArgs,
}

/// A gateway someone else runs (`--gateway-url`).
#[derive(Debug, clap::Args)]
struct GatewayArgs {
    /// Use this running Kernel Gateway, Jupyter Server or Jupyter Enterprise Gateway
    /// (http://, https://) instead of starting one; its kernels may run on other machines.
    #[arg(long, value_name = "URL")]
    gateway_url: Option<String>,
    /// Token of the server given with --gateway-url.
    #[arg(long, env = "IPYBOX_GATEWAY_TOKEN", requires = "gateway_url")]
    gateway_token: Option<String>,
    /// A header sent with every request to --gateway-url, as 'Name: value' (repeatable).
    #[arg(long, value_name = "HEADER", requires = "gateway_url")]
    gateway_header: Vec<String>,
}

impl GatewayArgs {
    fn remote(&self) -> Option<ipybox::RemoteGateway> {
        self.gateway_url.as_ref().map(|url| ipybox::RemoteGateway {
            url: url.clone(),
            token: self.gateway_token.clone(),
            headers: self.gateway_header.clone(),
        })
    }
}

fn parse_env(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, got {s:?}"))?;
    if k.is_empty() {
        return Err(format!("empty variable name in {s:?}"));
    }
    Ok((k.to_owned(), v.to_owned()))
}

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

/// Where the app opens when it is given nothing: the current folder, unless that is the
/// user's home folder (a start from the applications menu, whose programs run there): then
/// the workspace used last, else `~/ipybox-workspace` — never the whole home folder, where
/// the kernel would write `mcptools/` and list every notebook of the user.
#[cfg(feature = "desktop")]
fn workspace_for_nothing(
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
fn open(
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
fn local_path(path: PathBuf) -> anyhow::Result<PathBuf> {
    match path.to_str().and_then(file_url_path) {
        Some(decoded) => decoded,
        None => Ok(path),
    }
}

#[cfg(not(feature = "desktop"))]
fn open(
    _paths: Vec<PathBuf>,
    _args: Option<(SandboxArgs, GatewayArgs)>,
    _runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<ExitCode> {
    unreachable!("the headless build hands `open` to the desktop app in main")
}

/// The program of the desktop app, installed by the `ipybox-desktop` package.
const DESKTOP_PROGRAM: &str = "ipybox-desktop";

/// `ipybox open` (or `ipybox` alone) in the headless build: the same command line, run by
/// the desktop app when it is installed; otherwise a message saying how to install it.
#[cfg(not(feature = "desktop"))]
fn hand_over_to_desktop(args: &[std::ffi::OsString]) -> ExitCode {
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
fn find_desktop_app(me: Option<&std::path::Path>, path: &std::ffi::OsStr) -> Option<PathBuf> {
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
fn desktop_missing() -> String {
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
fn implied_open(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
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
fn file_url_path(text: &str) -> Option<anyhow::Result<PathBuf>> {
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

fn run_cli(runtime: &tokio::runtime::Runtime, command: Command) -> ExitCode {
    let outcome = runtime.block_on(async {
        match command {
            Command::Exec(args) => exec(args).await,
            Command::Setup { python, sandbox } => setup(python, sandbox).await,
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

async fn setup(python: Option<PathBuf>, sandbox: bool) -> anyhow::Result<ExitCode> {
    let env = tokio::task::spawn_blocking(move || {
        ipybox::setup::python_env(python.as_deref(), ipybox::Progress::Terminal)
    })
    .await
    .context("provisioning task failed")??;
    println!("Python environment ready: {}", env.python().display());
    if sandbox {
        let srt = tokio::task::spawn_blocking(ipybox::setup::install_srt)
            .await
            .context("installing srt failed")??;
        ipybox::setup::check_tools(&srt)?;
        ipybox::setup::check_node(&srt)?;
        println!(
            "Sandbox runtime ready: srt {} ({})",
            srt.version().unwrap_or_default(),
            srt.program.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn mcp(args: McpArgs) -> anyhow::Result<ExitCode> {
    use ipybox::server::{HttpOptions, Listener, McpServerConfig, serve_http, serve_stdio};
    use std::sync::Arc;
    let workspace = match &args.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir()?,
    };
    let mut desktop = None;
    let approval: Arc<dyn ipybox::ApprovalHandler> = match Approval::parse(
        &args.approval,
        args.rules.as_ref(),
        "auto",
    )? {
        Approval::Auto => Arc::new(ipybox::AutoApprove),
        Approval::Reject => Arc::new(ipybox::RejectAll),
        // The file was given for this process, whose calls are all agents': a rule without
        // a scope decides them.
        Approval::Rules(file) => Arc::new(ipybox::RulesHandler::new(
            ipybox::Rules::load(file)?.with_default_scope(ipybox::RuleScope::Any),
        )),
        Approval::Desktop => {
            let agent = format!("ipybox mcp (pid {})", std::process::id());
            let handler = ipybox::DesktopApproval::new(&workspace, agent)?;
            desktop = Some(handler.clone());
            Arc::new(handler)
        }
        Approval::Ask => bail!(
            "`ipybox mcp` has no terminal to ask on (its stdin and stdout carry the protocol): use --approval auto, reject, desktop or `rules FILE`"
        ),
    };
    // Every tool call goes into the workspace's audit log; with --approval desktop the app
    // records the calls it decided, and this process the rest.
    let audit = ipybox::WorkspaceState::of(&workspace)?.audit_log();
    let audited = workspace.clone();
    let listener = Listener(Arc::new(move |event: ipybox::SessionEvent| {
        if desktop.as_ref().is_some_and(|d| d.forward(&event)) {
            return;
        }
        if let Some(entry) = ipybox::AuditEntry::from_event(&event, &audited)
            && let Err(e) = audit.append(&entry)
        {
            tracing::error!("the audit log missed a tool call: {e}");
        }
    }));
    if let Some(policy) = &args.sandbox.sandbox_config
        && !args.sandbox.workspace_policy()
        && !policy.exists()
    {
        // The Python ipybox falls back to its default policy here; running with a sandbox
        // other than the one asked for would be a silent surprise.
        bail!(
            "the sandbox policy {} does not exist (ipybox does not fall back to the default policy; drop --sandbox-config to use it)",
            policy.display()
        );
    }
    if args.sandbox.workspace_policy() {
        // As the server does with a workspace not made yet: its policy goes in it.
        std::fs::create_dir_all(&workspace)
            .with_context(|| format!("creating the workspace {}", workspace.display()))?;
    }
    let sandbox = args.sandbox.options(&workspace)?;
    let config = McpServerConfig {
        workspace,
        approval,
        python: args.python.clone(),
        sandbox,
        gateway_log_level: args.log_level.map(|l| l.levels().1.to_owned()),
        fixed: args.fixed_addresses(),
        gateway: args.gateway.remote(),
        listener: Some(listener),
        activity: None,
        approval_timeout: None,
    };
    match &args.http {
        None => serve_stdio(config).await?,
        Some(addr) => {
            let addr = if addr.contains(':') {
                addr.clone()
            } else {
                format!("127.0.0.1:{addr}")
            };
            let listener = tokio::net::TcpListener::bind(&addr)
                .await
                .with_context(|| format!("binding {addr}"))?;
            let loopback = listener.local_addr()?.ip().is_loopback();
            if args.no_auth && !loopback {
                bail!("--no-auth is only allowed on a loopback address (127.0.0.1, ::1)");
            }
            let token = match std::env::var("IPYBOX_MCP_TOKEN") {
                _ if args.no_auth => None,
                Ok(t) if !t.is_empty() => Some(t),
                _ => {
                    let t = ipybox::new_token();
                    eprintln!("ipybox: bearer token: {t}");
                    Some(t)
                }
            };
            eprintln!(
                "ipybox: MCP server on http://{}/mcp",
                listener.local_addr()?
            );
            let shutdown = async {
                let _ = tokio::signal::ctrl_c().await;
            };
            let options = HttpOptions {
                token,
                max_sessions: args.max_sessions,
                idle_timeout: (args.session_idle_timeout > 0)
                    .then(|| Duration::from_secs(args.session_idle_timeout)),
                control: None,
                allowed_hosts: args
                    .allow_hosts
                    .iter()
                    .map(|h| h.trim().to_owned())
                    .filter(|h| !h.is_empty())
                    .collect(),
            };
            serve_http(config, listener, options, shutdown).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn register(args: RegisterArgs) -> anyhow::Result<ExitCode> {
    let text = match args.params.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?,
        None => args.params.clone(),
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).context("--params is not valid JSON")?;
    let params = ipybox::ServerParams::from_json(&value)?;
    let workspace = match &args.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir()?,
    };
    let executor = CodeExecutor::builder().working_dir(&workspace).build();
    // A server that asks for a sign-in gets one, then registering goes on; a sign-in that
    // covers too little is widened once.
    let mut signed_in = 0;
    let generated = loop {
        match executor.register_mcp_server(&args.name, &params).await {
            Ok(generated) => break generated,
            Err(e) => match ipybox::oauth::sign_in_needed(&e) {
                Some(needed) if signed_in < 2 => {
                    signed_in += 1;
                    let (url, options) = (needed.url.clone(), sign_in_options(&args.oauth, needed));
                    sign_in_at_terminal(&args.name, &url, &options).await?;
                }
                _ => return Err(e.into()),
            },
        }
    };
    println!(
        "Registered \"{}\" for {} and generated {} tool module(s) in {}:",
        args.name,
        workspace.display(),
        generated.modules.len(),
        workspace.join("mcptools").join(&args.name).display()
    );
    // Tool names and reasons come from the server.
    use ipybox::text::escape;
    for (module, tool) in generated.modules.iter().zip(&generated.tools) {
        if module == tool {
            println!("  {module}");
        } else {
            println!("  {module}  (tool \"{}\")", escape(tool));
        }
    }
    for (tool, reason) in &generated.skipped {
        println!("  skipped {}: {}", escape(tool), escape(reason));
    }
    if let Some(first) = generated.modules.first() {
        println!(
            "Use it as: from mcptools.{}.{first} import Params, run",
            args.name
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// [`ipybox::oauth::SignInOptions`] from the command line, for the sign-in `needed` asks
/// for (if any).
fn sign_in_options(
    args: &OAuthArgs,
    needed: &ipybox::oauth::SignInNeeded,
) -> ipybox::oauth::SignInOptions {
    let mut scopes: Vec<String> = args
        .scopes
        .iter()
        .flat_map(|s| s.split_whitespace().map(str::to_owned))
        .collect();
    if let (true, Some(challenge)) = (needed.scope.is_some(), &needed.challenge)
        && let Ok(auth) = ipybox::oauth::Authorizations::for_home()
    {
        scopes = ipybox::oauth::step_up_scopes(
            &auth.granted_scopes(&needed.url),
            challenge,
            &needed.url,
        );
    }
    ipybox::oauth::SignInOptions {
        client_id: args.client_id.clone(),
        client_secret: std::env::var("IPYBOX_OAUTH_CLIENT_SECRET")
            .ok()
            .filter(|s| !s.is_empty()),
        scopes,
        client_metadata_url: None,
        challenge: needed.challenge.clone(),
    }
}

/// The browser step at a terminal: the link printed (the tests and people without a browser
/// open it from there) and opened in the system's browser where there is one.
struct TerminalBrowser<'a> {
    server: &'a str,
}

impl ipybox::oauth::Browser for TerminalBrowser<'_> {
    fn open(&self, url: &str) {
        // The link is the authorization server's: shown escaped.
        eprintln!(
            "The MCP server \"{}\" asks you to sign in. Open this link in a browser (it opens by itself where there is one):\n{}\nWaiting for the sign-in to complete (at most {} minutes)...",
            ipybox::text::escape(self.server),
            ipybox::text::escape(url),
            ipybox::oauth::SIGN_IN_TIMEOUT.as_secs() / 60
        );
        ipybox::oauth::SystemBrowser.open(url);
    }
}

async fn sign_in_at_terminal(
    server: &str,
    url: &str,
    options: &ipybox::oauth::SignInOptions,
) -> anyhow::Result<()> {
    let status = ipybox::oauth::Authorizations::for_home()?
        .sign_in(
            url,
            options,
            &TerminalBrowser { server },
            ipybox::oauth::SIGN_IN_TIMEOUT,
        )
        .await?;
    eprintln!("{}", signed_in_words(server, &status));
    Ok(())
}

/// "Signed in to …" as a person reads it.
fn signed_in_words(server: &str, status: &ipybox::oauth::Status) -> String {
    use ipybox::text::escape;
    match status {
        ipybox::oauth::Status::SignedOut => format!("Not signed in to \"{}\".", escape(server)),
        ipybox::oauth::Status::SignedIn {
            issuer,
            scopes,
            expires,
            refreshable,
            ..
        } => {
            let mut text = format!("Signed in to \"{}\"", escape(server));
            if let Some(issuer) = issuer {
                text.push_str(&format!(" with {}", escape(issuer)));
            }
            if !scopes.is_empty() {
                text.push_str(&format!(" (scopes: {})", escape(&scopes.join(" "))));
            }
            if let Some(left) =
                expires.and_then(|e| e.duration_since(std::time::SystemTime::now()).ok())
            {
                text.push_str(&format!(
                    "; the access token expires in {} min{}",
                    left.as_secs() / 60,
                    if *refreshable {
                        " and is refreshed before then"
                    } else {
                        ""
                    }
                ));
            }
            text.push('.');
            text
        }
    }
}

async fn sign_in(args: SignInArgs) -> anyhow::Result<ExitCode> {
    let workspace = match &args.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir()?,
    };
    let url = ipybox::registered_url(&workspace, &args.name)?;
    let needed = ipybox::oauth::SignInNeeded {
        server: args.name.clone(),
        url: url.clone(),
        challenge: None,
        again: false,
        scope: None,
    };
    sign_in_at_terminal(&args.name, &url, &sign_in_options(&args.oauth, &needed)).await?;
    Ok(ExitCode::SUCCESS)
}

fn sign_out(args: SignOutArgs) -> anyhow::Result<ExitCode> {
    let workspace = match &args.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir()?,
    };
    let url = ipybox::registered_url(&workspace, &args.name)?;
    ipybox::oauth::Authorizations::for_home()?.sign_out(&url)?;
    eprintln!("Signed out of \"{}\".", ipybox::text::escape(&args.name));
    Ok(ExitCode::SUCCESS)
}

/// Asks the person at the terminal. One thread reads `/dev/tty` for the whole run and hands
/// lines over, so that a question nobody answered in time leaves no reader behind to take
/// the answer to the next one. Code piped on stdin still works; without a terminal every
/// call is rejected.
struct Terminal {
    lines: Option<tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<String>>>,
    /// The terminal itself: questions are written to it (the terminal that answers them,
    /// wherever stderr goes), and what was typed before a question is dropped from it.
    tty: Option<std::fs::File>,
}

/// Where every question starts: attributes reset, the cursor shown, a line of its own.
/// Kernel output keeps only its colours on the way to the terminal ([`ipybox::text::TerminalFilter`]),
/// but it may leave them set, or the cursor mid-line after text that looks like a question.
const FRESH_LINE: &str = "\x1b[0m\x1b[?25h\r\n";

impl Terminal {
    fn open() -> Terminal {
        use std::io::BufRead;
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty");
        let Ok(tty) = opened else {
            return Terminal {
                lines: None,
                tty: None,
            };
        };
        let flush = tty.try_clone().ok();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(tty).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Terminal {
            lines: Some(tokio::sync::Mutex::new(rx)),
            tty: flush,
        }
    }

    /// Show `text` on the terminal (on stderr when it cannot be written).
    fn show(&self, text: &str) {
        let written = self.tty.as_ref().is_some_and(|mut tty| {
            tty.write_all(text.as_bytes())
                .and_then(|()| tty.flush())
                .is_ok()
        });
        if !written {
            eprint!("{text}");
        }
    }

    /// Drop input typed but not yet entered: keys pressed before a question appeared are not
    /// its answer.
    fn drop_typed_input(&self) {
        if let Some(tty) = &self.tty {
            use std::os::fd::AsRawFd;
            // SAFETY: tcflush only discards the terminal's pending input; the descriptor is
            // open for as long as `tty` lives.
            unsafe {
                libc::tcflush(tty.as_raw_fd(), libc::TCIFLUSH);
            }
        }
    }

    /// Show `prompt` and read a line (for the code's `input()`); `None` without a terminal.
    async fn read_line(&self, prompt: &str) -> Option<String> {
        let lines = self.lines.as_ref()?;
        let mut lines = lines.lock().await;
        while lines.try_recv().is_ok() {}
        eprint!("{prompt}");
        lines.recv().await
    }

    /// Ask whether to run a tool call; `false` when rejected, unanswered within `timeout`,
    /// or when there is no terminal. Everything in the question that kernel code or a server
    /// chose is escaped ([`ipybox::text::escape`]): it cannot move the cursor, hide text or
    /// reorder it.
    async fn ask(&self, request: &ipybox::ApprovalRequest, timeout: Duration) -> bool {
        use ipybox::text::{escape, escape_lines};
        let call = format!(
            "{}.{}",
            escape(request.server_name()),
            escape(request.tool_name())
        );
        // Indented JSON: a value's own newlines are `\n` in it, and a shell command is one
        // value, `{"command": …}`.
        let args = serde_json::to_string_pretty(request.tool_args()).unwrap_or_default();
        let question = format!(
            "Approve tool call {call} ?\n  server: {}\n  arguments: {}",
            escape(request.server()),
            escape_lines(&args).replace('\n', "\n  ")
        );
        let Some(lines) = &self.lines else {
            eprintln!(
                "\n{question}\n(no terminal to ask on: rejected; use --approval auto, reject or `rules FILE`)"
            );
            return false;
        };
        let mut lines = lines.lock().await;
        // Whatever was typed before this question is not its answer.
        self.drop_typed_input();
        while lines.try_recv().is_ok() {}
        let _ = std::io::stderr().flush();
        self.show(&format!(
            "{FRESH_LINE}{question}\nApprove {call}? [y/N] (rejected after {:.0} s) ",
            timeout.as_secs_f64()
        ));
        match tokio::time::timeout(timeout, lines.recv()).await {
            Ok(Some(line)) => matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"),
            Ok(None) => false,
            Err(_) => {
                self.show(&format!(
                    "\nno answer within {:.0} s: rejected\n",
                    timeout.as_secs_f64()
                ));
                false
            }
        }
    }
}

async fn exec(args: ExecArgs) -> anyhow::Result<ExitCode> {
    let code = match (&args.code, &args.file) {
        (_, Some(path)) => {
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?
        }
        (Some(c), None) if c == "-" => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("reading code from stdin")?;
            s
        }
        (Some(c), None) => c.clone(),
        (None, None) => bail!("no code given"),
    };
    let mut builder = CodeExecutor::builder()
        .kernel_env(args.env.clone())
        .show_progress(true)
        .spare_kernel(false);
    if let Some(ws) = &args.workspace {
        builder = builder.working_dir(ws);
    }
    if let Some(dir) = &args.images_dir {
        let dir = if dir.is_relative() {
            std::env::current_dir()?.join(dir)
        } else {
            dir.clone()
        };
        builder = builder.images_dir(dir);
    }
    if let Some(p) = &args.python {
        builder = builder.python(p);
    }
    if let Some(gateway) = args.gateway.remote() {
        builder = builder.remote_gateway(&gateway);
    }
    let workspace = match &args.workspace {
        Some(ws) => ws.clone(),
        None => std::env::current_dir()?,
    };
    builder = builder.sandbox_options(args.sandbox.options(&workspace)?);
    let approval_timeout = Duration::try_from_secs_f64(args.approval_timeout)
        .ok()
        .filter(|t| !t.is_zero())
        .context("--approval-timeout must be a positive number of seconds")?;
    let approval = Approval::parse(args.approval.as_slice(), args.rules.as_ref(), "ask")?;
    if approval == Approval::Desktop {
        bail!(
            "`ipybox exec` asks on the terminal; the app approves the calls of `ipybox mcp --approval desktop`"
        );
    }
    let rules = match &approval {
        Approval::Rules(file) => Some(ipybox::Rules::load(file)?),
        _ => None,
    };
    let terminal = std::sync::Arc::new(Terminal::open());
    if approval == Approval::Ask {
        // A server's question in the middle of a call is asked here too; in the other
        // modes nobody is there to answer, and the server is told so.
        let elicitor = terminal_form::TerminalElicitor {
            terminal: terminal.clone(),
            timeout: approval_timeout,
        };
        builder = builder.elicitation(ipybox::mcp_client::Elicitation::By(std::sync::Arc::new(
            elicitor,
        )));
    }
    let executor = builder.approval_timeout(approval_timeout).build();
    // Every tool call goes into the workspace's audit log (`ipybox audit`).
    let audit = ipybox::WorkspaceState::of(&workspace)?
        .audit_log()
        .record(workspace, executor.subscribe());
    executor.start().await?;
    let timeout = (args.timeout > 0.0).then(|| Duration::from_secs_f64(args.timeout));
    let mut stream = executor.stream(
        &code,
        StreamOptions {
            timeout,
            outputs: true,
            input: true,
            ..Default::default()
        },
    );
    let mut stdout = std::io::stdout();
    // Kernel output reaches the terminal with its colours and nothing else of a terminal's
    // controls, wherever stdout goes: a pipe or a file is read by a person too (`| tee`,
    // `| less -R`, `cat out.txt`), and ends on the screen the questions are asked on.
    let mut shown = ipybox::text::TerminalFilter::new();
    let mut printed_newline = true;
    let mut status = ExitCode::SUCCESS;
    while let Some(event) = stream.next().await {
        match event {
            Ok(Event::ApprovalRequest(request)) => {
                stdout.flush()?;
                use ipybox::{DecidedBy, Decision};
                let held = request.held();
                if let (Some(held), Approval::Auto | Approval::Rules(_)) = (&held, &approval) {
                    // Neither the policy nor a rule accepts a tool that changed since it was
                    // registered; a person may, so a rules session asks.
                    if matches!(approval, Approval::Auto) {
                        request.decide_as(Decision::Reject, DecidedBy::Policy, Some(held.clone()));
                        continue;
                    }
                    eprintln!("ipybox: {}", ipybox::text::escape_lines(held));
                    let decision = answer(terminal.ask(&request, approval_timeout).await);
                    request.decide_as(decision, DecidedBy::Person, None);
                    continue;
                }
                let (decision, by) = match &approval {
                    Approval::Auto => (Decision::Accept, DecidedBy::Policy),
                    Approval::Reject | Approval::Desktop => (Decision::Reject, DecidedBy::Policy),
                    Approval::Ask => (
                        answer(terminal.ask(&request, approval_timeout).await),
                        DecidedBy::Person,
                    ),
                    Approval::Rules(_) => match rules.as_ref().map(|r| {
                        r.decide(
                            request.server_name(),
                            request.tool_name(),
                            request.tool_args(),
                        )
                    }) {
                        Some(outcome) if outcome.rule.is_some() => {
                            eprintln!("ipybox: {}", ipybox::text::escape_lines(&outcome.message));
                            let rule = outcome
                                .rule
                                .and_then(|i| rules.as_ref()?.rules().get(i))
                                .map(ipybox::Rule::text)
                                .unwrap_or_default();
                            request.decide_by_rule(outcome.decision, rule, None);
                            continue;
                        }
                        _ => (
                            answer(terminal.ask(&request, approval_timeout).await),
                            DecidedBy::Person,
                        ),
                    },
                };
                request.decide_as(decision, by, None);
            }
            // An exception is reported with its traceback when the execution ends.
            Ok(Event::Output(ipybox::Output::Error { .. })) => {}
            Ok(Event::Output(output)) => {
                if let Some(text) = output.terminal_text() {
                    let text = shown.push(&text);
                    stdout.write_all(text.as_bytes())?;
                    stdout.flush()?;
                    if !text.is_empty() {
                        printed_newline = text.ends_with('\n');
                    }
                }
            }
            Ok(Event::Input(request)) => {
                stdout.flush()?;
                match terminal.read_line(&shown.push(request.prompt())).await {
                    Some(line) => request.reply(line),
                    // No terminal: input() raises KeyboardInterrupt.
                    None => drop(request),
                }
                printed_newline = true;
            }
            Ok(Event::Result(result)) => {
                stdout.write_all(shown.finish().as_bytes())?;
                if !printed_newline {
                    writeln!(stdout)?;
                }
                for image in &result.images {
                    writeln!(stdout, "image: {}", image.display())?;
                }
            }
            Ok(_) => {}
            Err(e) => {
                stdout.write_all(shown.finish().as_bytes())?;
                if !printed_newline {
                    writeln!(stdout)?;
                }
                stdout.flush()?;
                status = report(&e);
            }
        }
    }
    executor.stop().await?;
    drop(executor);
    // The last calls' entries are written when the session's events end.
    let _ = tokio::time::timeout(Duration::from_secs(2), audit).await;
    Ok(status)
}

/// `ipybox sandbox accept`: the policy (or what changed in it) on the terminal, then the
/// person's answer.
fn accept_policy(workspace: Option<PathBuf>, yes: bool) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    let workspace = match workspace {
        Some(ws) => ws,
        None => std::env::current_dir()?,
    };
    let workspace = std::fs::canonicalize(&workspace)
        .with_context(|| format!("the workspace {}", workspace.display()))?;
    let home = ipybox::setup::ipybox_home()?;
    let file = workspace.join(ipybox::WORKSPACE_POLICY);
    let (accepted, current) = match ipybox::review_workspace_policy(&home, &workspace)? {
        ipybox::PolicyReview::Accepted(_) => {
            println!("{} is accepted as it is; nothing to do.", file.display());
            return Ok(ExitCode::SUCCESS);
        }
        ipybox::PolicyReview::Changed { accepted, current } => (accepted, current),
    };
    let shown = match &accepted {
        Some(old) => format!(
            "{} changed since it was last accepted (- before, + now):\n\n{}",
            file.display(),
            ipybox::policy_diff(old, &current)
        ),
        None => format!(
            "{} has not been accepted on this machine:\n\n{}",
            file.display(),
            serde_json::from_str::<serde_json::Value>(&current)
                .ok()
                .and_then(|v| serde_json::to_string_pretty(&v).ok())
                .unwrap_or_else(|| current.clone())
        ),
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", ipybox::text::escape_lines(&shown))?;
    // The grants that matter, as the Sandbox tab warns of them.
    let warnings = ipybox::SandboxPolicy::from_json(&current)
        .map(|p| p.validate())
        .unwrap_or_default();
    for w in warnings
        .iter()
        .filter(|w| w.severity == ipybox::Severity::Warning)
    {
        writeln!(
            out,
            "warning: {} [{}]",
            ipybox::text::escape(&w.message),
            ipybox::text::escape(&w.field)
        )?;
    }
    if !yes {
        if !std::io::stdin().is_terminal() {
            bail!("not accepted: answer on a terminal, or pass --yes to accept it as printed");
        }
        write!(
            out,
            "{}Sandboxed code on this workspace will run under this policy. Accept it? [y/N] ",
            FRESH_LINE
        )?;
        out.flush()?;
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            println!("Not accepted.");
            return Ok(ExitCode::from(1));
        }
    }
    // What was shown is what is accepted: a file changed meanwhile is not.
    ipybox::accept_workspace_policy(&home, &workspace, &current)?;
    println!("Accepted.");
    Ok(ExitCode::SUCCESS)
}

fn audit(args: AuditArgs) -> anyhow::Result<ExitCode> {
    use ipybox::WorkspaceState;
    let workspace = match args.workspace {
        Some(ws) => ws,
        None => std::env::current_dir()?,
    };
    let log = WorkspaceState::of(&workspace)?.audit_log();
    let (mut entries, skipped) = log.read()?;
    if let Some(n) = args.last {
        entries.drain(..entries.len().saturating_sub(n));
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        for entry in &entries {
            // The same JSON, with what could act on a terminal written as `\uXXXX`.
            let line = serde_json::to_string(entry)?;
            writeln!(out, "{}", ipybox::text::escape(&line))?;
        }
    } else if entries.is_empty() {
        eprintln!(
            "No tool calls recorded for {} yet (the log: {}).",
            workspace.display(),
            log.path().display()
        );
    } else {
        // The questions servers asked during these calls, in time order among them.
        let since = entries
            .first()
            .map_or(0, |e| e.time.saturating_sub(e.duration_ms));
        let mut lines: Vec<(u64, String)> = entries
            .iter()
            .map(|e| (e.time, ipybox::describe_audit_entry(e)))
            .collect();
        for question in log.read_elicitations()?.iter().filter(|q| q.time >= since) {
            lines.push((question.time, ipybox::describe_elicitation(question)));
        }
        lines.sort_by_key(|(time, _)| *time);
        for (_, line) in &lines {
            writeln!(out, "{line}")?;
        }
    }
    if skipped > 0 {
        eprintln!(
            "ipybox: {skipped} line(s) of {} are not entries and were skipped",
            log.path().display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// An error and its causes in one line. Engine errors already end with their cause's words,
/// so a cause whose words are already there is not repeated.
fn in_words(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    let mut last = text.clone();
    for cause in e.chain().skip(1) {
        let words = cause.to_string();
        if !last.ends_with(&words) {
            text.push_str(": ");
            text.push_str(&words);
        }
        last = words;
    }
    text
}

/// A person's yes or no.
fn answer(yes: bool) -> ipybox::Decision {
    if yes {
        ipybox::Decision::Accept
    } else {
        ipybox::Decision::Reject
    }
}

fn report(e: &Error) -> ExitCode {
    match e {
        Error::CodeExecution { error, .. } => {
            if error.traceback.is_empty() {
                eprintln!(
                    "{}",
                    for_terminal(&format!("{}: {}", error.name, error.value))
                );
            } else {
                eprintln!("{}", for_terminal(&error.traceback));
            }
            ExitCode::from(1)
        }
        Error::Timeout { .. } => {
            eprintln!("ipybox: {}", for_terminal(&e.to_string()));
            ExitCode::from(2)
        }
        Error::KernelDied { .. } => {
            eprintln!("ipybox: {}", for_terminal(&e.to_string()));
            ExitCode::from(3)
        }
        other => {
            eprintln!("ipybox: {}", for_terminal(&other.to_string()));
            ExitCode::from(4)
        }
    }
}

/// Text that may carry what kernel code or a server wrote (a traceback, a server's stderr in
/// an error), as the terminal may show it: colours kept, other controls dropped or escaped.
fn for_terminal(text: &str) -> String {
    let mut filter = ipybox::text::TerminalFilter::new();
    let mut out = filter.push(text);
    out.push_str(&filter.finish());
    out
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
