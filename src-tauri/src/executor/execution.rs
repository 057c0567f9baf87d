//! One execution: sends the code to the kernel, turns its messages into events, asks for
//! approval of the tool calls the code makes, and ends with the result or an error. It runs
//! as a task of its own beside the executor's actor, which can abort it at any time.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::calls::Calls;
use super::{CodeExecutionResult, Event, InputRequest, Output, StreamOptions};
use crate::channel::{self, Answer, RefusalKind};
use crate::error::{Error, PythonError, Result};
use crate::events::{DecidedBy, Events};
use crate::fsutil::Anchored;
use crate::kernel::messages::{
    Content, ErrorContent, ExecuteReply, ExecuteRequest, Header, NO_INPUT, ReplyStatus,
};
use crate::kernel::output::{OutputCollector, python_error};
use crate::kernel::session::{KernelEvent, KernelSession};
use crate::sandbox::access::Checker;
use crate::tools::{ApprovalHandler, Approvals, Decision, ToolEvent, ToolServer};

/// A queued execution, as the caller submitted it.
#[derive(Debug)]
pub(super) struct Job {
    pub(super) id: String,
    pub(super) code: String,
    pub(super) options: StreamOptions,
    /// `execute()`: approve tool calls nobody else decides.
    pub(super) auto_approve: bool,
    pub(super) out: mpsc::UnboundedSender<Result<Event>>,
    /// Fires (or closes) when the caller cancels or drops the stream.
    pub(super) cancel: oneshot::Receiver<()>,
}

impl Job {
    /// Has the caller cancelled (or dropped) it?
    pub(super) fn is_cancelled(&mut self) -> bool {
        !matches!(
            self.cancel.try_recv(),
            Err(oneshot::error::TryRecvError::Empty)
        )
    }

    /// End it with `error` without running it.
    pub(super) fn refuse(self, error: Error) {
        let _ = self.out.send(Err(error));
    }
}

/// Why the actor ends a running execution.
#[derive(Debug)]
pub(super) enum Abort {
    /// `interrupt()`: interrupt the kernel and let it settle; its state stays.
    Interrupt,
    /// The kernel is going away (reset, stop): end now, saying why.
    Discard(&'static str),
}

/// What the executor needs to run one job.
#[derive(Debug)]
pub(super) struct Context {
    pub(super) kernel: KernelSession,
    pub(super) tools: Arc<ToolServer>,
    /// The workspace, for a remote kernel that imports generated modules over its channel.
    pub(super) sources: Option<Arc<std::path::PathBuf>>,
    pub(super) approvals: Arc<Approvals>,
    pub(super) images_dir: Anchored,
    pub(super) handler: Option<Arc<dyn ApprovalHandler>>,
    pub(super) interrupt_grace: Duration,
    /// With a sandbox: its policy, to check what the kernel reports as blocked, and where
    /// to tell of a block.
    pub(super) blocks: Option<(Arc<Checker>, Events)>,
}

/// How it ended, for the actor.
#[derive(Debug)]
pub(super) struct Outcome {
    /// The kernel died, or ignored an interrupt: replace it.
    pub(super) retire: bool,
}

enum Stop {
    Finished(ExecuteReply),
    Died(String),
    TimedOut,
    Cancelled(&'static str),
    Discarded(&'static str),
}

/// Run `job` on `ctx.kernel`; the result (or error) is the last event sent to the caller.
pub(super) async fn run(job: Job, ctx: Context, abort: oneshot::Receiver<Abort>) -> Outcome {
    let out = job.out.clone();
    let (result, retire) = execute(job, &ctx, abort).await;
    let _ = out.send(result.map(Event::Result));
    Outcome { retire }
}

async fn execute(
    job: Job,
    ctx: &Context,
    mut abort: oneshot::Receiver<Abort>,
) -> (Result<CodeExecutionResult>, bool) {
    let Job {
        id,
        code,
        options,
        auto_approve,
        out,
        mut cancel,
    } = job;
    let kernel = &ctx.kernel;
    let mut collector = OutputCollector::new(options.save_images.then(|| ctx.images_dir.clone()));
    // Tool calls made by this execution's code come here for approval.
    let (_listening, mut tool_events) = ctx
        .approvals
        .listen_as(Some(id.clone()), options.origin.clone());
    // So do the questions servers ask during its calls, when it ends.
    let _questions = ctx.tools.questions_of(id.clone());
    // Tool calls come over stdin, so it is always allowed; a plain input() nobody can
    // answer is told so (`NO_INPUT`) and raises in the kernel.
    let mut calls = Calls::new(ctx.tools.clone(), ctx.sources.clone(), kernel.clone())
        .with_blocks(id.clone(), ctx.blocks.clone());
    let request = ExecuteRequest {
        allow_stdin: true,
        ..ExecuteRequest::new(&code)
    };
    let (msg_id, mut events) = match kernel.execute(&request) {
        Ok(sent) => sent,
        Err(e) => return (Err(e), true),
    };
    let mut deadline = options.timeout.map(|t| tokio::time::Instant::now() + t);
    // Time spent waiting for approval decisions does not count against the timeout.
    let mut pending = HashSet::new();
    let mut paused_since = None;
    // An input() waiting for its answer: the request's header and the answer to come.
    let mut asking: Option<(Header, oneshot::Receiver<String>)> = None;
    let mut abort_open = true;
    let stop = loop {
        let running_deadline = if pending.is_empty() && asking.is_none() {
            deadline
        } else {
            None
        };
        let event = tokio::select! {
            e = events.recv() => e,
            Some(t) = tool_events.recv() => {
                match t {
                    ToolEvent::Requested(request) => {
                        if pending.is_empty() {
                            paused_since = Some(tokio::time::Instant::now());
                        }
                        pending.insert(request.id());
                        if let Some(handler) = &ctx.handler {
                            tokio::spawn(handler.handle(request));
                        } else if auto_approve {
                            crate::approval::auto_approve(&request);
                        } else if let Err(e) = out.send(Ok(Event::ApprovalRequest(request)))
                            && let Ok(Event::ApprovalRequest(r)) = e.0
                        {
                            // Nobody listens to the stream any more.
                            r.decide_as(Decision::Reject, DecidedBy::Nobody, None);
                        }
                    }
                    ToolEvent::Settled(id) => {
                        if pending.remove(&id) && pending.is_empty()
                            && let (Some(d), Some(since)) = (deadline.as_mut(), paused_since.take())
                        {
                            *d += since.elapsed();
                        }
                    }
                }
                continue;
            }
            answer = async {
                match asking.as_mut() {
                    Some((_, rx)) => rx.await,
                    None => std::future::pending().await,
                }
            } => {
                let Some((header, _)) = asking.take() else { continue };
                if let (Some(d), Some(since)) = (deadline.as_mut(), paused_since.take())
                    && pending.is_empty()
                {
                    *d += since.elapsed();
                }
                match answer {
                    Ok(value) => {
                        if let Err(e) = kernel.input_reply(&header, &value) {
                            tracing::warn!(error = %e, "answering input() failed");
                        }
                    }
                    // Nobody will answer: input() raises KeyboardInterrupt.
                    Err(_) => {
                        if let Err(e) = kernel.interrupt().await {
                            tracing::warn!(error = %e, "interrupting the kernel failed");
                        }
                    }
                }
                continue;
            }
            () = calls.settle() => continue,
            _ = sleep_until(running_deadline) => break Stop::TimedOut,
            _ = &mut cancel => break Stop::Cancelled("the execution was cancelled"),
            a = &mut abort, if abort_open => {
                abort_open = false;
                match a {
                    Ok(Abort::Interrupt) => break Stop::Cancelled("the execution was interrupted"),
                    Ok(Abort::Discard(why)) => break Stop::Discarded(why),
                    Err(_) => continue,
                }
            }
        };
        match event {
            Some(KernelEvent::Output(Content::ExecuteInput(input))) => {
                if options.outputs {
                    let _ = out.send(Ok(Event::Started {
                        execution_count: input.execution_count,
                    }));
                }
            }
            Some(KernelEvent::Output(content)) => {
                if options.outputs
                    && let Some(output) = Output::from_content(&content)
                {
                    let _ = out.send(Ok(Event::Output(output)));
                }
                collector.push(content);
            }
            Some(KernelEvent::Input { header, request }) => {
                match request.ipybox {
                    Some(channel::Message::Request(request)) => {
                        calls.request(header, *request);
                        continue;
                    }
                    Some(channel::Message::Malformed(why)) => {
                        let refusal = Answer::refused(RefusalKind::BadRequest, why).to_reply();
                        if let Err(e) = kernel.input_reply(&header, &refusal) {
                            tracing::warn!(error = %e, "answering a malformed request failed");
                        }
                        continue;
                    }
                    None => {}
                }
                if !options.input {
                    if let Err(e) = kernel.input_reply(&header, NO_INPUT) {
                        tracing::warn!(error = %e, "answering input() failed");
                    }
                    continue;
                }
                let (tx, rx) = oneshot::channel();
                let input = InputRequest {
                    prompt: request.prompt,
                    password: request.password,
                    answer: Arc::new(std::sync::Mutex::new(Some(tx))),
                };
                if pending.is_empty() {
                    paused_since = Some(tokio::time::Instant::now());
                }
                asking = Some((header, rx));
                let _ = out.send(Ok(Event::Input(input)));
            }
            Some(KernelEvent::Done(reply)) => break Stop::Finished(reply),
            Some(KernelEvent::Died(reason)) => break died(&mut abort, abort_open, reason),
            None => {
                break died(
                    &mut abort,
                    abort_open,
                    "the connection to the kernel closed".into(),
                );
            }
        }
    };
    let reply = match stop {
        Stop::Finished(reply) => reply,
        Stop::Died(reason) => {
            kernel.forget(&msg_id);
            let error = Error::KernelDied {
                reason,
                output: Box::new(collector.finish()),
            };
            return (Err(error), true);
        }
        Stop::Discarded(why) => {
            kernel.forget(&msg_id);
            let error = Error::Cancelled {
                reason: why.into(),
                output: Box::new(collector.finish()),
            };
            return (Err(error), false);
        }
        Stop::TimedOut | Stop::Cancelled(_) => {
            // Interrupt, then let the kernel finish the request so its output and state stay
            // consistent; a kernel that ignores the interrupt is replaced.
            if let Err(e) = kernel.interrupt().await {
                tracing::warn!(error = %e, "interrupting the kernel failed");
            }
            let grace = tokio::time::Instant::now() + ctx.interrupt_grace;
            let mut settled = false;
            while !settled {
                match tokio::time::timeout_at(grace, events.recv()).await {
                    Ok(Some(KernelEvent::Output(c))) => {
                        // What the code printed while stopping (the KeyboardInterrupt
                        // traceback) is shown where it happened, like any output.
                        if options.outputs
                            && let Some(output) = Output::from_content(&c)
                        {
                            let _ = out.send(Ok(Event::Output(output)));
                        }
                        collector.push(c);
                    }
                    Ok(Some(KernelEvent::Input { header, request })) => {
                        // Nothing more is asked of a person for a cell being stopped.
                        let value = match request.ipybox {
                            Some(_) => Answer::refused(
                                RefusalKind::Rejected,
                                "the cell was stopped before the call could be approved",
                            )
                            .to_reply(),
                            None => "\u{4}".to_owned(),
                        };
                        let _ = kernel.input_reply(&header, &value);
                    }
                    Ok(Some(KernelEvent::Done(_))) => settled = true,
                    Ok(Some(KernelEvent::Died(_))) | Ok(None) | Err(_) => break,
                }
            }
            kernel.forget(&msg_id);
            let error = match stop {
                Stop::Cancelled(why) => Error::Cancelled {
                    reason: if settled {
                        why.into()
                    } else {
                        format!(
                            "{why}; the kernel did not respond to the interrupt and was replaced by a fresh one"
                        )
                    },
                    output: Box::new(collector.finish()),
                },
                _ => Error::Timeout {
                    timeout: options.timeout.unwrap_or_default(),
                    output: Box::new(collector.finish()),
                    kernel_restarted: !settled,
                },
            };
            return (Err(error), !settled);
        }
    };
    kernel.forget(&msg_id);
    let output = collector.finish();
    let result = match reply.status {
        ReplyStatus::Ok => Ok(CodeExecutionResult {
            text: output.text,
            images: output.images,
            image_data: collector.saved_images(),
        }),
        _ => {
            let error = collector
                .take_error()
                .unwrap_or_else(|| reply_error(&reply));
            Err(Error::CodeExecution {
                error: Box::new(error),
                output: Box::new(output),
            })
        }
    };
    (result, false)
}

/// The kernel's connection ended. A stop or reset closes it right after telling the
/// execution why; when that reason already came, it is the one to report.
fn died(abort: &mut oneshot::Receiver<Abort>, open: bool, reason: String) -> Stop {
    match open.then(|| abort.try_recv().ok()).flatten() {
        Some(Abort::Interrupt) => Stop::Cancelled("the execution was interrupted"),
        Some(Abort::Discard(why)) => Stop::Discarded(why),
        None => Stop::Died(reason),
    }
}

fn reply_error(reply: &ExecuteReply) -> PythonError {
    if reply.status == ReplyStatus::Aborted {
        return PythonError {
            name: "ExecutionAborted".into(),
            value: "the kernel aborted the execution".into(),
            traceback: String::new(),
            raw_traceback: Vec::new(),
        };
    }
    python_error(&ErrorContent {
        ename: reply.ename.clone().unwrap_or_default(),
        evalue: reply.evalue.clone().unwrap_or_default(),
        traceback: reply.traceback.clone().unwrap_or_default(),
    })
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
