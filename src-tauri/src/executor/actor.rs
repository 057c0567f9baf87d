//! The executor's actor: one task owns the session (hosts, kernels, the spare, the tool
//! server's state) and takes commands from every [`CodeExecutor`](super::CodeExecutor)
//! handle through one channel. Executions queue in the order they were submitted (the order
//! of the channel) and run one at a time, each in a task of its own, so `interrupt()`,
//! `reset()`, `stop()` and status questions are answered at once, whatever runs.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::execution::{self, Abort, Context, Job, Outcome};
use super::host::{Host, Launcher};
use super::{Config, Snapshot};
use crate::error::{Error, Result};
use crate::events::{Events, SessionEvent};
use crate::kernel::session::KernelSession;
use crate::mcp::params::Variables;
use crate::registry::Registry;
use crate::tools::{ApprovalHandler, Approvals, Sessions, ToolServer};

/// What a handle asks of the actor.
#[derive(Debug)]
pub(super) enum Command {
    Start(oneshot::Sender<Result<()>>),
    Stop(oneshot::Sender<Result<()>>),
    Reset(oneshot::Sender<Result<()>>),
    Interrupt(oneshot::Sender<Result<()>>),
    Execute(Job),
    /// The active kernel, for requests that do not queue (completion, help).
    Kernel(oneshot::Sender<Option<KernelSession>>),
}

/// The execution that runs now.
#[derive(Debug)]
struct Current {
    task: JoinHandle<Outcome>,
    abort: Option<oneshot::Sender<Abort>>,
    /// The kernel it runs on.
    kernel_id: String,
}

/// Where the session is. Starting it and replacing its kernel run in tasks the actor owns,
/// so its mailbox is never kept waiting: `stop()`, `interrupt()` and status questions are
/// answered at once even while Python is provisioned or a sandbox starts.
enum State {
    Stopped,
    /// Being started; each waiter hears how it went.
    Launching {
        task: JoinHandle<Result<Box<Running>>>,
        waiters: Vec<Reply>,
    },
    Running(Box<Running>),
    /// Its kernel being replaced; executions wait in the queue.
    Replacing {
        task: JoinHandle<(Box<Running>, Result<()>)>,
        waiters: Vec<Reply>,
        why: Replacement,
    },
}

type Reply = oneshot::Sender<Result<()>>;

/// Why a kernel is replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Replacement {
    /// `reset()`.
    Reset,
    /// It died or ignored an interrupt, in a sandbox of its own (which goes with it).
    Retired,
    /// It was found dead when an execution was about to run.
    Dead,
}

/// A task of the session's that finished.
enum Settled {
    Launched(std::result::Result<Result<Box<Running>>, tokio::task::JoinError>),
    Replaced(std::result::Result<(Box<Running>, Result<()>), tokio::task::JoinError>),
}

impl State {
    /// The session's task, when one runs, finished; pending forever otherwise.
    async fn settled(&mut self) -> Settled {
        match self {
            State::Launching { task, .. } => Settled::Launched(task.await),
            State::Replacing { task, .. } => Settled::Replaced(task.await),
            State::Stopped | State::Running(_) => std::future::pending().await,
        }
    }

    fn running(&self) -> Option<&Running> {
        match self {
            State::Running(r) => Some(r),
            _ => None,
        }
    }

    /// Replace the kernel of a running session in a task; `waiter` hears how it went.
    fn replace(&mut self, why: Replacement, waiter: Option<Reply>) {
        match std::mem::replace(self, State::Stopped) {
            State::Running(mut r) => {
                let task = tokio::spawn(async move {
                    let result = match why {
                        Replacement::Reset => r.reset().await,
                        Replacement::Retired => {
                            r.retire_isolated().await;
                            Ok(())
                        }
                        Replacement::Dead => r.revive().await,
                    };
                    (r, result)
                });
                *self = State::Replacing {
                    task,
                    waiters: waiter.into_iter().collect(),
                    why,
                };
            }
            other => {
                *self = other;
                if let Some(w) = waiter {
                    let _ = w.send(Err(Error::NotRunning));
                }
            }
        }
    }
}

/// Tell every waiter how something went (a failure as the same error for each).
fn answer_all(waiters: Vec<Reply>, result: &Result<()>) {
    for w in waiters {
        let _ = w.send(match result {
            Ok(()) => Ok(()),
            Err(e) => Err(e.again()),
        });
    }
}

/// The actor's loop; ends (stopping the session) when every handle is gone.
pub(super) async fn run(
    config: Config,
    snapshot: Arc<Mutex<Snapshot>>,
    mut commands: mpsc::UnboundedReceiver<Command>,
) {
    let mut state = State::Stopped;
    let mut queue: VecDeque<Job> = VecDeque::new();
    let mut current: Option<Current> = None;
    loop {
        tokio::select! {
            command = commands.recv() => {
                let Some(command) = command else { break };
                match command {
                    Command::Start(reply) => match &mut state {
                        State::Stopped => {
                            let config = config.clone();
                            state = State::Launching {
                                task: tokio::spawn(async move { Running::launch(&config).await.map(Box::new) }),
                                waiters: vec![reply],
                            };
                        }
                        State::Launching { waiters, .. } => waiters.push(reply),
                        State::Running(_) | State::Replacing { .. } => {
                            let _ = reply.send(Ok(()));
                        }
                    },
                    Command::Stop(reply) => {
                        abort_current(&mut current, "the executor was stopped");
                        for job in queue.drain(..) {
                            job.refuse(Error::NotRunning);
                        }
                        publish(&snapshot, None);
                        let events = config.events.clone();
                        match std::mem::replace(&mut state, State::Stopped) {
                            State::Stopped => {
                                let _ = reply.send(Ok(()));
                            }
                            State::Launching { task, waiters } => {
                                // Answered now; what the start makes is shut down when made.
                                answer_all(waiters, &Err(stopped_while_starting()));
                                let _ = reply.send(Ok(()));
                                tokio::spawn(async move {
                                    if let Ok(Ok(r)) = task.await {
                                        r.shutdown().await;
                                    }
                                });
                            }
                            State::Running(r) => {
                                tokio::spawn(async move {
                                    r.shutdown().await;
                                    events.send(SessionEvent::Stopped);
                                    let _ = reply.send(Ok(()));
                                });
                            }
                            State::Replacing { task, waiters, .. } => {
                                answer_all(waiters, &Err(Error::NotRunning));
                                tokio::spawn(async move {
                                    if let Ok((r, _)) = task.await {
                                        r.shutdown().await;
                                    }
                                    events.send(SessionEvent::Stopped);
                                    let _ = reply.send(Ok(()));
                                });
                            }
                        }
                    }
                    Command::Reset(reply) => match &mut state {
                        State::Stopped => {
                            let _ = reply.send(Err(Error::NotRunning));
                        }
                        // The kernel that comes is fresh.
                        State::Launching { waiters, .. } | State::Replacing { waiters, .. } => {
                            waiters.push(reply);
                        }
                        State::Running(r) => {
                            // The old kernel stops computing at once; it is deleted after.
                            if current.is_some()
                                && let Some(k) = &r.kernel
                            {
                                let k = k.clone();
                                tokio::spawn(async move { k.interrupt().await });
                            }
                            abort_current(&mut current, "the kernel was reset");
                            state.replace(Replacement::Reset, Some(reply));
                        }
                    },
                    Command::Interrupt(reply) => {
                        if let Some(c) = current.as_mut()
                            && let Some(abort) = c.abort.take()
                        {
                            let _ = abort.send(Abort::Interrupt);
                        }
                        let _ = reply.send(Ok(()));
                    }
                    Command::Kernel(reply) => {
                        let kernel = state
                            .running()
                            .and_then(|r| r.kernel.clone())
                            .filter(|k| !k.is_dead());
                        let _ = reply.send(kernel);
                    }
                    Command::Execute(job) => {
                        if matches!(state, State::Stopped) {
                            job.refuse(Error::NotRunning);
                        } else {
                            queue.push_back(job);
                        }
                    }
                }
            }
            settled = state.settled() => match settled {
                Settled::Launched(launched) => {
                    let State::Launching { waiters, .. } = std::mem::replace(&mut state, State::Stopped)
                    else {
                        unreachable!("only a launch finishes a launch")
                    };
                    let launched = launched.unwrap_or_else(|e| {
                        Err(Error::kernel_start(format!("starting the session failed: {e}")))
                    });
                    match launched {
                        Ok(r) => {
                            state = State::Running(r);
                            config.events.send(SessionEvent::Started);
                            publish(&snapshot, state.running());
                            answer_all(waiters, &Ok(()));
                        }
                        Err(e) => {
                            for job in queue.drain(..) {
                                job.refuse(e.again());
                            }
                            answer_all(waiters, &Err(e));
                        }
                    }
                }
                Settled::Replaced(replaced) => {
                    let State::Replacing { waiters, why, .. } =
                        std::mem::replace(&mut state, State::Stopped)
                    else {
                        unreachable!("only a replacement finishes a replacement")
                    };
                    match replaced {
                        Ok((r, result)) => {
                            state = State::Running(r);
                            match (&result, why) {
                                (Ok(()), Replacement::Reset) => {
                                    config.events.send(SessionEvent::KernelReplaced {
                                        reason: "reset".into(),
                                    });
                                }
                                (Err(e), Replacement::Dead) => {
                                    // The execution that found it dead hears why.
                                    if let Some(job) = queue.pop_front() {
                                        job.refuse(e.again());
                                    }
                                }
                                _ => {}
                            }
                            publish(&snapshot, state.running());
                            answer_all(waiters, &result);
                        }
                        Err(e) => {
                            // The task that held the session failed: the session is gone.
                            let e = Error::kernel_start(format!("replacing the kernel failed: {e}"));
                            for job in queue.drain(..) {
                                job.refuse(e.again());
                            }
                            answer_all(waiters, &Err(e));
                            publish(&snapshot, None);
                            config.events.send(SessionEvent::Stopped);
                        }
                    }
                }
            },
            outcome = async {
                match current.as_mut() {
                    Some(c) => (&mut c.task).await.ok(),
                    None => std::future::pending().await,
                }
            } => {
                if let Some(c) = current.take()
                    && let State::Running(r) = &mut state
                    && outcome.is_none_or(|o| o.retire)
                    && r.kernel.as_ref().is_some_and(|k| k.id() == c.kernel_id)
                {
                    config.events.send(SessionEvent::KernelReplaced {
                        reason: "the kernel died or did not respond to an interrupt".into(),
                    });
                    if r.launcher.isolated() {
                        state.replace(Replacement::Retired, None);
                    } else {
                        r.retire_shared();
                        publish(&snapshot, state.running());
                    }
                }
                if queue.is_empty() {
                    config.events.send(SessionEvent::KernelIdle);
                }
            }
        }
        if current.is_none()
            && let State::Running(r) = &mut state
        {
            match next(&mut queue, r, &config.events) {
                Next::Run(c) => {
                    current = Some(c);
                    publish(&snapshot, state.running());
                }
                Next::Revive => state.replace(Replacement::Dead, None),
                Next::Idle => {}
            }
        }
    }
    abort_current(&mut current, "the executor was dropped");
    for job in queue.drain(..) {
        job.refuse(Error::NotRunning);
    }
    match state {
        State::Stopped => {}
        State::Launching { task, waiters } => {
            answer_all(waiters, &Err(stopped_while_starting()));
            if let Ok(Ok(r)) = task.await {
                r.shutdown().await;
            }
        }
        State::Running(r) => r.shutdown().await,
        State::Replacing { task, waiters, .. } => {
            answer_all(waiters, &Err(Error::NotRunning));
            if let Ok((r, _)) = task.await {
                r.shutdown().await;
            }
        }
    }
}

/// The error of a start that a stop overtook.
fn stopped_while_starting() -> Error {
    Error::Cancelled {
        reason: "the executor was stopped while it started".into(),
        output: Default::default(),
    }
}

/// What to do for the queue.
enum Next {
    /// Run this execution.
    Run(Current),
    /// The kernel is gone: start a fresh one first (the execution waits at the front).
    Revive,
    /// Nothing is queued.
    Idle,
}

/// Start the first queued job that was not cancelled.
fn next(queue: &mut VecDeque<Job>, running: &Running, events: &Events) -> Next {
    while let Some(mut job) = queue.pop_front() {
        if job.is_cancelled() {
            job.refuse(Error::Cancelled {
                reason: "the execution was cancelled before it started".into(),
                output: Default::default(),
            });
            continue;
        }
        let Some(kernel) = running.kernel.as_ref().filter(|k| !k.is_dead()).cloned() else {
            queue.push_front(job);
            return Next::Revive;
        };
        let (abort, abort_rx) = oneshot::channel();
        let kernel_id = kernel.id().to_owned();
        if let Some(net) = running.host.as_ref().and_then(|h| h.net_blocks.as_ref()) {
            net.attribute(&job.id, events);
        }
        events.send(SessionEvent::KernelBusy {
            execution_id: job.id.clone(),
        });
        let ctx = Context {
            kernel,
            tools: running.tools.clone(),
            sources: running.launcher.remote_sources(),
            approvals: running.approvals.clone(),
            images_dir: running.images_dir.clone(),
            handler: running.handler.clone(),
            interrupt_grace: running.interrupt_grace,
            blocks: running
                .host
                .as_ref()
                .and_then(|h| h.checker.clone())
                .map(|checker| (checker, events.clone())),
        };
        return Next::Run(Current {
            task: tokio::spawn(execution::run(job, ctx, abort_rx)),
            abort: Some(abort),
            kernel_id,
        });
    }
    Next::Idle
}

/// End the running execution now; it reports back (and the queue moves on) at once.
fn abort_current(current: &mut Option<Current>, why: &'static str) {
    if let Some(c) = current.as_mut()
        && let Some(abort) = c.abort.take()
    {
        let _ = abort.send(Abort::Discard(why));
    }
}

/// Tell the handles what they may ask without waiting for the actor.
fn publish(snapshot: &Mutex<Snapshot>, running: Option<&Running>) {
    if let Ok(mut s) = snapshot.lock() {
        *s = match running {
            None => Snapshot::default(),
            Some(r) => Snapshot {
                running: true,
                gateway_pid: r
                    .host
                    .as_ref()
                    .and_then(|h| h.gateway.as_ref())
                    .and_then(crate::kernel::gateway::Gateway::pid),
                tools: Some(r.tools.clone()),
                approvals: Some(r.approvals.clone()),
            },
        };
    }
}

#[derive(Debug)]
pub(super) struct Running {
    launcher: Arc<Launcher>,
    handler: Option<Arc<dyn ApprovalHandler>>,
    interrupt_grace: Duration,
    /// `None` only while shutting down.
    host: Option<Host>,
    kernel: Option<KernelSession>,
    spare: Option<JoinHandle<Result<Spare>>>,
    images_dir: crate::fsutil::Anchored,
    tools: Arc<ToolServer>,
    approvals: Arc<Approvals>,
}

/// A kernel started in the background for the next reset: on the active host, or (with a
/// sandbox) on a host of its own.
#[derive(Debug)]
enum Spare {
    Kernel(KernelSession),
    Host(Box<Host>, KernelSession),
}

impl Running {
    /// Start a session for `config`: the first host and kernel, the tool server's state.
    async fn launch(c: &Config) -> Result<Running> {
        let working_dir = c.working_dir()?;
        let working_dir = std::fs::canonicalize(&working_dir).map_err(|e| {
            Error::config(format!(
                "the working directory {} is not usable: {e}",
                working_dir.display()
            ))
        })?;
        // Kernel code may have replaced images/ (or a folder above it) with a link, in this
        // session or an earlier one: below the workspace, nothing is followed.
        let images_dir = crate::fsutil::Anchored::new(
            &match &c.images_dir {
                Some(d) if d.is_relative() => working_dir.join(d),
                Some(d) => d.clone(),
                None => working_dir.join("images"),
            },
            &working_dir,
        );
        let home = crate::home::ipybox_home()?;
        let registry = Registry::load(&home, &working_dir)?;
        let approvals = Arc::new(
            Approvals::with_events(c.approval_timeout.clone(), c.events.clone())
                .with_client(c.client.clone())
                .with_handler(c.approval_handler.clone()),
        );
        let mut sessions = Sessions::new(working_dir.clone(), c.mcp_connect_timeout)
            .with_call_timeout(c.mcp_call_timeout)
            .with_events(c.events.clone())
            .with_elicitations(c.elicitations.clone());
        if c.sandbox.is_some() {
            // Sandboxed code can write the workspace: the ${VAR}s of servers ipybox starts on
            // the host come from the .env of the session's start, never from a later one.
            sessions = sessions.with_fixed_variables(Variables::load(Some(&working_dir))?);
        }
        let tools = Arc::new(
            ToolServer::new(registry.servers.clone(), sessions, approvals.clone())
                .with_pins(crate::definition::pins::Pins::in_dir(registry.dir())),
        );
        for (name, listed) in &registry.tools {
            tools.set_tools(name, listed.iter().map(|t| t.tool.clone()).collect());
        }
        let launcher = Arc::new(Launcher::new(c.clone(), home, working_dir.clone()).await?);
        let (host, kernel) = launcher.start_host_with_kernel().await?;
        let mut running = Running {
            handler: c.approval_handler.clone(),
            interrupt_grace: c.interrupt_grace,
            launcher,
            host: Some(host),
            kernel: Some(kernel),
            spare: None,
            images_dir,
            tools,
            approvals,
        };
        running.ensure_spare();
        Ok(running)
    }

    fn host(&self) -> Result<&Host> {
        self.host.as_ref().ok_or(Error::NotRunning)
    }

    /// Start a spare in the background if there is none.
    fn ensure_spare(&mut self) {
        if !self.launcher.spare() || self.spare.is_some() {
            return;
        }
        let launcher = self.launcher.clone();
        if launcher.isolated() {
            self.spare = Some(tokio::spawn(async move {
                let (host, kernel) = launcher.start_host_with_kernel().await?;
                Ok(Spare::Host(Box::new(host), kernel))
            }));
        } else if let Ok(host) = self.host() {
            let spec = host.spec.clone();
            let api = host.api.clone();
            self.spare = Some(tokio::spawn(async move {
                Ok(Spare::Kernel(spec.start(&api).await?))
            }));
        }
    }

    /// Make a fresh kernel the active one: the spare if it is ready and alive, else a new
    /// one; with a sandbox, on a new host that replaces the active one. The replaced kernel
    /// (and host) are shut down in the background.
    async fn replace_kernel(&mut self) -> Result<()> {
        let mut fresh = None;
        if let Some(spare) = self.spare.take() {
            match spare.await {
                Ok(Ok(Spare::Kernel(k))) if !k.is_dead() => fresh = Some((None, k)),
                Ok(Ok(Spare::Host(h, k))) if !k.is_dead() => fresh = Some((Some(*h), k)),
                Ok(Ok(Spare::Kernel(k))) => discard(k),
                Ok(Ok(Spare::Host(h, k))) => discard_host(*h, Some(k)),
                Ok(Err(e)) => tracing::warn!(error = %e, "the spare kernel failed to start"),
                Err(e) => tracing::warn!(error = %e, "the spare kernel task failed"),
            }
        }
        let (host, kernel) = match fresh {
            Some(f) => f,
            None if self.launcher.isolated() => {
                let (h, k) = self.launcher.start_host_with_kernel().await?;
                (Some(h), k)
            }
            None => (None, self.host()?.start_kernel().await?),
        };
        let old = self.kernel.replace(kernel);
        match (host, self.host.take()) {
            (Some(new), Some(replaced)) => {
                self.host = Some(new);
                discard_host(replaced, old);
            }
            (new, current) => {
                self.host = new.or(current);
                if let Some(old) = old {
                    discard(old);
                }
            }
        }
        Ok(())
    }

    /// A fresh kernel (the spare, when ready), a new spare behind it, and MCP sessions that
    /// restart on their next call.
    async fn reset(&mut self) -> Result<()> {
        self.replace_kernel().await?;
        self.ensure_spare();
        let tools = self.tools.clone();
        tokio::spawn(async move { tools.reset().await });
        Ok(())
    }

    /// A fresh kernel for one found dead, and a spare behind it.
    async fn revive(&mut self) -> Result<()> {
        self.replace_kernel().await?;
        self.ensure_spare();
        Ok(())
    }

    /// Give up on the active kernel (it died or ignored an interrupt) when kernels share a
    /// host: the next execution takes a fresh kernel.
    fn retire_shared(&mut self) {
        if let Some(k) = self.kernel.take() {
            discard(k);
        }
        self.ensure_spare();
    }

    /// Give up on the active kernel when each has a sandbox of its own: the whole sandbox
    /// is replaced now.
    async fn retire_isolated(&mut self) {
        if let Err(e) = self.replace_kernel().await {
            tracing::warn!(error = %e, "replacing the sandbox failed; the next execution retries");
            self.kernel = None;
        }
        self.ensure_spare();
    }

    async fn shutdown(mut self) {
        self.tools.reset().await;
        let mut kernels: Vec<KernelSession> = self.kernel.take().into_iter().collect();
        let mut spare_host = None;
        if let Some(spare) = self.spare.take() {
            if self.host.as_ref().is_some_and(|h| h.gateway.is_some()) && !self.launcher.isolated()
            {
                // Stopping the gateway ends a kernel still starting.
                spare.abort();
            }
            match spare.await {
                Ok(Ok(Spare::Kernel(k))) => kernels.push(k),
                Ok(Ok(Spare::Host(h, k))) => spare_host = Some((h, k)),
                _ => {}
            }
        }
        if let Some(host) = self.host.take() {
            host.shutdown(kernels).await;
        }
        if let Some((h, k)) = spare_host {
            h.shutdown(vec![k]).await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Not stopped: our gateways die with their Host (Drop); kernels on an external
        // server are deleted in the background if a runtime is still there.
        let external = self.host.as_ref().is_some_and(|h| h.gateway.is_none());
        if let Some(spare) = self.spare.take() {
            spare.abort();
        }
        if external
            && let Ok(handle) = tokio::runtime::Handle::try_current()
            && let Some(k) = self.kernel.take()
        {
            handle.spawn(k.shutdown());
        }
    }
}

/// Delete a kernel in the background.
fn discard(kernel: KernelSession) {
    tokio::spawn(kernel.shutdown());
}

/// Shut a replaced host (and its kernel) down in the background.
fn discard_host(host: Host, kernel: Option<KernelSession>) {
    tokio::spawn(host.shutdown(kernel.into_iter().collect()));
}
