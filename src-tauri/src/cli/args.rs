//! The command line's words: every subcommand and its arguments, as clap reads them.

use std::path::PathBuf;

use super::export;
use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};

/// Run Python code in stateful IPython kernels, with MCP tools as a typed Python API and
/// every tool call approved.
#[derive(Debug, Parser)]
#[command(name = "ipybox", version, about, long_about = None)]
pub(crate) struct Cli {
    /// Log level of ipybox itself (error, warn, info, debug, trace); logs go to stderr.
    #[arg(long, global = true, env = "IPYBOX_LOG", default_value = "warn")]
    pub(crate) log: String,
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
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
        /// Also install srt (Anthropic's sandbox-runtime, pinned) into ipybox's data
        /// directory, with a Node.js and npm of its own from the npm registry, and check
        /// bubblewrap, socat and ripgrep.
        #[arg(long)]
        sandbox: bool,
        /// Install only srt, into DIR (how the packages make /usr/lib/ipybox/srt).
        #[arg(long, value_name = "DIR", requires = "sandbox")]
        srt_dir: Option<PathBuf>,
    },
}

/// `ipybox audit`.
#[derive(Debug, Args)]
pub(crate) struct AuditArgs {
    /// The workspace (default: the current folder).
    #[arg(long, short)]
    pub(crate) workspace: Option<PathBuf>,
    /// Print the entries as JSON Lines, as the log keeps them.
    #[arg(long)]
    pub(crate) json: bool,
    /// Only the last N entries.
    #[arg(long, value_name = "N")]
    pub(crate) last: Option<usize>,
}

/// `ipybox sandbox …`.
#[derive(Debug, Subcommand)]
pub(crate) enum SandboxCommand {
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
pub(crate) struct OpenArgs {
    /// A workspace folder, a `.ipynb` notebook (its folder is the workspace; `file://` URLs
    /// too), or an `ipybox://add-server` link (see docs/links.md). Default: the current
    /// folder. A workspace already open in ipybox comes forward in its window (the notebook
    /// opened there) instead of opening twice; a link goes to the app used last. Each further
    /// PATH or LINK opens as if given alone.
    #[arg(value_name = "PATH|LINK")]
    pub(crate) paths: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) sandbox: SandboxArgs,
    #[command(flatten)]
    pub(crate) gateway: GatewayArgs,
}

/// Sandboxing of the kernel.
#[derive(Debug, Args)]
pub(crate) struct SandboxArgs {
    /// Run the kernel inside srt (Anthropic's sandbox-runtime) with ipybox's default policy:
    /// no network, no secrets (.env, ~/.ssh, ...), writes only in the workspace.
    #[arg(long)]
    pub(crate) sandbox: bool,
    /// Use this srt settings file as the kernel's sandbox policy instead of the default
    /// (implies --sandbox). Relative paths in it are relative to the workspace. The word
    /// `workspace` (not with `open`) means the workspace's own sandbox-config.json, created
    /// as the default policy when it has none; sandboxed code cannot change that file. A
    /// file named workspace is ./workspace.
    #[arg(long, value_name = "FILE")]
    pub(crate) sandbox_config: Option<PathBuf>,
}

/// `--sandbox-config`'s word for the workspace's own policy file.
pub(crate) const WORKSPACE_POLICY_WORD: &str = "workspace";

impl SandboxArgs {
    /// Whether the policy is the workspace's own file: something kernel code could have
    /// written, read only because the person asked for it by this word.
    pub(crate) fn workspace_policy(&self) -> bool {
        self.sandbox_config
            .as_deref()
            .is_some_and(|p| p == std::path::Path::new(WORKSPACE_POLICY_WORD))
    }

    /// The sandbox asked for, for kernels working in `workspace`.
    pub(crate) fn options(
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
pub(crate) struct RegisterArgs {
    /// Server name: becomes the package `mcptools.NAME` (a Python identifier).
    pub(crate) name: String,
    /// Connection parameters as JSON, or @FILE to read them from a file. Stdio:
    /// {"command", "args", "env", "cwd"}; HTTP: {"url", "headers"}; optional "type":
    /// "stdio" | "streamable_http" | "sse". ${VAR} placeholders are filled from the
    /// environment and the workspace's .env when the server starts.
    #[arg(long, required_unless_present = "install")]
    pub(crate) params: Option<String>,
    /// Instead of --params: install a server's package into ipybox's data directory and
    /// register it — a server of the catalog (time, fetch, git, filesystem, memory,
    /// everything) or pypi:PACKAGE / npm:PACKAGE. It runs in the sandbox (srt with
    /// ipybox's profile for MCP servers) unless --no-sandbox. Again: an update.
    #[arg(long, value_name = "SERVER", conflicts_with = "params")]
    pub(crate) install: Option<String>,
    /// With --install: run the server on the host, not in the sandbox.
    #[arg(long, requires = "install")]
    pub(crate) no_sandbox: bool,
    /// The workspace (default: the current directory).
    #[arg(long, short)]
    pub(crate) workspace: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) oauth: OAuthArgs,
}

/// How to sign in to a server that asks for OAuth.
#[derive(Debug, Args)]
pub(crate) struct OAuthArgs {
    /// A client ID registered for ipybox with the server's authorization server, for one
    /// that lets ipybox register no other way. Its secret, if it has one, comes from
    /// IPYBOX_OAUTH_CLIENT_SECRET (never the command line).
    #[arg(long)]
    pub(crate) client_id: Option<String>,
    /// Scopes to ask for (repeat it, or separate them with spaces); default: the scopes the
    /// server asks for.
    #[arg(long = "scope")]
    pub(crate) scopes: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct SignInArgs {
    /// The registered server's name.
    pub(crate) name: String,
    /// The workspace (default: the current directory).
    #[arg(long, short)]
    pub(crate) workspace: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) oauth: OAuthArgs,
}

#[derive(Debug, Args)]
pub(crate) struct SignOutArgs {
    /// The registered server's name.
    pub(crate) name: String,
    /// The workspace (default: the current directory).
    #[arg(long, short)]
    pub(crate) workspace: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// The workspace: the kernel's working directory, home of mcptools/ and .env (default:
    /// the current directory; created if missing).
    #[arg(long, short)]
    pub(crate) workspace: Option<PathBuf>,
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio. ADDR is PORT or HOST:PORT
    /// (host 127.0.0.1 by default). Clients send `Authorization: Bearer <token>`; the token is
    /// IPYBOX_MCP_TOKEN, or a random one printed on stderr. Each MCP session gets a kernel of
    /// its own.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<String>,
    /// With --http on a loopback address: accept requests without a bearer token (for
    /// clients that cannot send one, such as the MCP conformance suite).
    #[arg(long, requires = "http")]
    pub(crate) no_auth: bool,
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
    pub(crate) allow_hosts: Vec<String>,
    /// With --http: at most this many sessions (kernels) at once; one more is refused with
    /// an error saying so.
    #[arg(long, value_name = "N", requires = "http", default_value_t = ipybox::server::DEFAULT_MAX_SESSIONS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub(crate) max_sessions: usize,
    /// With --http: end a session and stop its kernel after this many seconds without a tool
    /// call (0: never).
    #[arg(long, value_name = "SECONDS", requires = "http",
          default_value_t = ipybox::server::DEFAULT_SESSION_IDLE_TIMEOUT.as_secs())]
    pub(crate) session_idle_timeout: u64,
    /// Who approves the MCP tool calls executed code makes: `auto` (approve all, the
    /// default), `reject` (reject all), `rules` (the --rules file; a call no rule matches
    /// is rejected; see docs/approval-rules.md) or `desktop` (a person, in the ipybox app
    /// open on the workspace, with its rules; rejected when no app is open). There is no
    /// terminal to `ask` on. `--approval rules FILE` works too. Every call goes into the
    /// workspace's audit log (`ipybox audit`).
    #[arg(long, num_args = 1..=2, value_names = ["MODE", "FILE"])]
    pub(crate) approval: Vec<String>,
    /// The approval rules file (implies --approval rules).
    #[arg(long, value_name = "FILE")]
    pub(crate) rules: Option<PathBuf>,
    /// Python interpreter of an existing environment to use.
    #[arg(long, env = "IPYBOX_PYTHON")]
    pub(crate) python: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) gateway: GatewayArgs,
    #[command(flatten)]
    pub(crate) sandbox: SandboxArgs,
    /// Log level, as the Python ipybox's flag (any case); overrides --log. Also the
    /// gateway's log level (its log file is in the session's state directory).
    #[arg(long, value_enum, ignore_case = true, value_name = "LEVEL")]
    pub(crate) log_level: Option<PyLogLevel>,
    /// Accepted for the Python ipybox's command lines, with nothing to set: ipybox has no
    /// tool server port (kernels ask for tool calls over their own Jupyter channel).
    #[arg(long, value_name = "PORT")]
    pub(crate) tool_server_port: Option<u16>,
    /// Accepted and ignored, as --tool-server-port.
    #[arg(long, value_name = "HOST")]
    pub(crate) tool_server_host: Option<String>,
    /// Port of the Kernel Gateway ipybox starts (default: a free one). Honoured over stdio
    /// without --sandbox; otherwise ignored with a note.
    #[arg(long, value_name = "PORT")]
    pub(crate) kernel_gateway_port: Option<u16>,
    /// Loopback address of the Kernel Gateway (default 127.0.0.1; `localhost` means that).
    #[arg(long, value_name = "HOST")]
    pub(crate) kernel_gateway_host: Option<String>,
}

/// The Python ipybox's `--log-level` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PyLogLevel {
    Debug,
    Info,
    #[value(alias = "warn")]
    Warning,
    Error,
    Critical,
}

impl PyLogLevel {
    /// The `tracing` filter and the Kernel Gateway's (traitlets) log level.
    pub(crate) fn levels(self) -> (&'static str, &'static str) {
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
    pub(crate) fn log_filter(&self) -> Option<&'static str> {
        self.log_level.map(|l| l.levels().0)
    }

    /// The Python ipybox's fixed addresses, where they apply: over stdio without a sandbox
    /// there is one gateway for the whole run. Elsewhere it is ignored with a note on
    /// stderr.
    pub(crate) fn fixed_addresses(&self) -> ipybox::server::FixedAddresses {
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
pub(crate) fn loopback(host: &str) -> Option<std::net::Ipv4Addr> {
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
pub(crate) enum Approval {
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
    pub(crate) fn parse(
        words: &[String],
        rules: Option<&PathBuf>,
        default: &str,
    ) -> anyhow::Result<Approval> {
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
pub(crate) struct ExecArgs {
    /// The code to run; `-` reads it from stdin.
    #[arg(conflicts_with = "file", required_unless_present = "file")]
    pub(crate) code: Option<String>,
    /// Read the code from a file.
    #[arg(long, short)]
    pub(crate) file: Option<PathBuf>,
    /// Working directory of the kernel (default: the current directory).
    #[arg(long, short)]
    pub(crate) workspace: Option<PathBuf>,
    /// Interrupt the code after this many seconds (0: no timeout).
    #[arg(long, default_value_t = 120.0)]
    pub(crate) timeout: f64,
    /// Where to save images (default: images/ in the workspace).
    #[arg(long)]
    pub(crate) images_dir: Option<PathBuf>,
    /// An environment variable for the kernel (repeatable).
    #[arg(long = "env", short = 'e', value_name = "KEY=VALUE", value_parser = parse_env)]
    pub(crate) env: Vec<(String, String)>,
    /// Python interpreter of an existing environment to use.
    #[arg(long, env = "IPYBOX_PYTHON")]
    pub(crate) python: Option<PathBuf>,
    /// The Python the kernel runs (an interpreter, or an environment's directory such as a
    /// project's `.venv`); it needs only ipykernel. The gateway stays in ipybox's own
    /// environment (or --python's).
    #[arg(long, value_name = "PYTHON")]
    pub(crate) kernel_python: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) gateway: GatewayArgs,
    /// Who approves the MCP tool calls the code makes: `ask` on the terminal, `auto`
    /// (approve all), `reject` (reject all), or `rules` (the --rules file first, then ask;
    /// see docs/approval-rules.md).
    #[arg(long, visible_alias = "approve", value_name = "MODE")]
    pub(crate) approval: Option<String>,
    /// The approval rules file (implies --approval rules).
    #[arg(long, value_name = "FILE")]
    pub(crate) rules: Option<PathBuf>,
    /// With --approval ask (or rules): reject a call nobody answered within this many
    /// seconds.
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    pub(crate) approval_timeout: f64,
    #[command(flatten)]
    pub(crate) sandbox: SandboxArgs,
}

/// A gateway someone else runs (`--gateway-url`).
#[derive(Debug, clap::Args)]
pub(crate) struct GatewayArgs {
    /// Use this running Kernel Gateway, Jupyter Server or Jupyter Enterprise Gateway
    /// (http://, https://) instead of starting one; its kernels may run on other machines.
    #[arg(long, value_name = "URL")]
    pub(crate) gateway_url: Option<String>,
    /// Token of the server given with --gateway-url.
    #[arg(long, env = "IPYBOX_GATEWAY_TOKEN", requires = "gateway_url")]
    pub(crate) gateway_token: Option<String>,
    /// A header sent with every request to --gateway-url, as 'Name: value' (repeatable).
    #[arg(long, value_name = "HEADER", requires = "gateway_url")]
    pub(crate) gateway_header: Vec<String>,
}

impl GatewayArgs {
    pub(crate) fn remote(&self) -> Option<ipybox::RemoteGateway> {
        self.gateway_url.as_ref().map(|url| ipybox::RemoteGateway {
            url: url.clone(),
            token: self.gateway_token.clone(),
            headers: self.gateway_header.clone(),
        })
    }
}

pub(crate) fn parse_env(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, got {s:?}"))?;
    if k.is_empty() {
        return Err(format!("empty variable name in {s:?}"));
    }
    Ok((k.to_owned(), v.to_owned()))
}
