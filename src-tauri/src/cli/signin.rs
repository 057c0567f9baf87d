//! `ipybox register`, `sign-in` and `sign-out`: an MCP server's API generated, and the
//! OAuth sign-in it may ask for, with the browser step at the terminal.

use std::process::ExitCode;

use super::args::*;
use anyhow::Context;
use ipybox::CodeExecutor;

pub(crate) async fn register(args: RegisterArgs) -> anyhow::Result<ExitCode> {
    let value = match (&args.install, &args.params) {
        (Some(spec), _) => installed(spec, !args.no_sandbox).await?,
        (None, Some(given)) => {
            let text = match given.strip_prefix('@') {
                Some(path) => {
                    std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?
                }
                None => given.clone(),
            };
            serde_json::from_str(&text).context("--params is not valid JSON")?
        }
        (None, None) => anyhow::bail!("give --params or --install"),
    };
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
pub(crate) fn sign_in_options(
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
pub(crate) struct TerminalBrowser<'a> {
    pub(crate) server: &'a str,
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

pub(crate) async fn sign_in_at_terminal(
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
pub(crate) fn signed_in_words(server: &str, status: &ipybox::oauth::Status) -> String {
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

pub(crate) async fn sign_in(args: SignInArgs) -> anyhow::Result<ExitCode> {
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

pub(crate) fn sign_out(args: SignOutArgs) -> anyhow::Result<ExitCode> {
    let workspace = match &args.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir()?,
    };
    let url = ipybox::registered_url(&workspace, &args.name)?;
    ipybox::oauth::Authorizations::for_home()?.sign_out(&url)?;
    eprintln!("Signed out of \"{}\".", ipybox::text::escape(&args.name));
    Ok(ExitCode::SUCCESS)
}

/// `--install SERVER`: the package installed (or updated) in ipybox's data directory, and the
/// parameters that run it, said on the terminal.
async fn installed(spec: &str, sandboxed: bool) -> anyhow::Result<serde_json::Value> {
    use ipybox::server_catalog as catalog;
    let (source, package, args) = catalog::resolve(spec)?;
    let home = ipybox::setup::ipybox_home()?;
    eprintln!("Installing {package} …");
    let done =
        tokio::task::spawn_blocking(move || catalog::install(&home, source, &package, &args))
            .await
            .context("the install task failed")??;
    let params = catalog::params(&done, sandboxed);
    eprintln!(
        "Installed version {} in {}
Runs: {}",
        done.version,
        done.dir.display(),
        params["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str())
            .fold(
                params["command"].as_str().unwrap_or_default().to_owned(),
                |line, a| format!("{line} {a}")
            )
    );
    Ok(params)
}
