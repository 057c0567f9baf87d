//! `ipybox mcp`: ipybox as an MCP server for agents, over stdio or Streamable HTTP.

use std::process::ExitCode;
use std::time::Duration;

use super::args::*;
use anyhow::{Context, bail};

pub(crate) async fn mcp(args: McpArgs) -> anyhow::Result<ExitCode> {
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
