//! `ipybox exec`: code run in a kernel, its output on the terminal as it comes, tool calls
//! approved by the terminal's person or by the rules.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use super::args::*;
use super::terminal::Terminal;
use super::terminal_form;
use super::words::*;
use anyhow::{Context, bail};
use futures_util::StreamExt;
use ipybox::{CodeExecutor, Event, StreamOptions};

pub(crate) async fn exec(args: ExecArgs) -> anyhow::Result<ExitCode> {
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
    if let Some(p) = &args.kernel_python {
        builder = builder.kernel_python(ipybox::setup::kernel_interpreter(p));
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
