//! [`CodeExecutor`]: the public API for running code in a stateful IPython kernel.
//!
//! Mirrors the Python ipybox's `CodeExecutor`: a builder, `start()`/`stop()`, `execute()`,
//! `stream()` with chunk events and the result last, `reset()`; and adds `interrupt()` and
//! cancellable streams. A `CodeExecutor` is a cheap handle to one actor task that owns the
//! session (`actor`): one kernel is active at a time, executions queue in the order they
//! were submitted and never interleave, and `interrupt()`, `reset()` and `stop()` act at once
//! whatever runs. A spare kernel (with a sandbox, a spare sandbox: `host`) is started in
//! the background so `reset()` and recovery from a dead kernel are a swap.

mod actor;
mod builder;
mod calls;
mod execution;
mod help;
mod host;
mod output;
mod packages;
mod servers;
mod stream;
mod variables;

pub use builder::{CodeExecutorBuilder, GatewayProbe, RemoteGateway};
pub use help::{Completion, Completions, Inspection};
pub use output::{MimeBundle, Output, StreamName};
pub use servers::{Placeholder, RegisteredServer, Registration, SkippedTool};
pub use stream::{CancelHandle, Event, ExecutionStream, InputRequest, StreamOptions};
pub use variables::{
    Filter, FilterOp, FrameColumn, FramePage, FrameQuery, KernelVariables, SortKey, Variable,
};

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use crate::error::{Error, Result};
use crate::events::SessionEvent;
use crate::tools::{ApprovalRequest, Approvals, Decision, ToolServer};
use actor::Command;
use builder::Config;
use execution::Job;

/// Default execution timeout, as in the Python ipybox.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// The result of a successful execution.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CodeExecutionResult {
    /// Everything printed or displayed as text, in order, trimmed; `None` when there was none.
    pub text: Option<String>,
    /// Images the code displayed, saved in `images_dir`.
    pub images: Vec<PathBuf>,
    /// The same images as saved: path, MIME type and bytes (no need to read the files
    /// back, which kernel code may have replaced since).
    #[serde(skip)]
    pub image_data: Vec<crate::kernel::output::SavedImage>,
}

/// Runs code in a stateful IPython kernel. Cheap to clone; clones share the kernel. When the
/// last clone is dropped the session stops in the background (at once if the runtime is
/// shutting down).
#[derive(Debug, Clone)]
pub struct CodeExecutor {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    config: Config,
    /// The actor's mailbox, made (and the actor spawned) on first use, inside a runtime.
    commands: OnceLock<mpsc::UnboundedSender<Command>>,
    /// What handles may know without asking the actor.
    snapshot: Arc<Mutex<Snapshot>>,
}

/// The actor's published state.
#[derive(Debug, Clone, Default)]
struct Snapshot {
    running: bool,
    gateway_pid: Option<u32>,
    tools: Option<Arc<ToolServer>>,
    approvals: Option<Arc<Approvals>>,
}

/// Who registers a server: what a person registers is what they accepted; an agent's
/// registration accepts nothing a person had not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Registrant {
    Person,
    Agent,
}

impl CodeExecutor {
    /// A builder with defaults.
    pub fn builder() -> CodeExecutorBuilder {
        CodeExecutorBuilder::default()
    }

    fn send(&self, command: Command) -> Result<()> {
        let commands = self.shared.commands.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let config = self.shared.config.clone();
            let snapshot = self.shared.snapshot.clone();
            tokio::spawn(actor::run(config, snapshot, rx));
            tx
        });
        commands.send(command).map_err(|_| Error::NotRunning)
    }

    async fn ask(
        &self,
        command: impl FnOnce(oneshot::Sender<Result<()>>) -> Command,
    ) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        self.send(command(tx))?;
        rx.await.map_err(|_| Error::NotRunning)?
    }

    /// Start the gateway (or connect to the external one) and the first kernel.
    /// Executions submitted meanwhile wait for it.
    pub async fn start(&self) -> Result<()> {
        self.ask(Command::Start).await?;
        self.catch_up_registry();
        Ok(())
    }

    /// A server registered while the session started (after it read the registry, before
    /// it could be told) is known to it from now on.
    fn catch_up_registry(&self) {
        if let Err(e) = self.reload_registry() {
            tracing::warn!("servers registered while the session started: {e}");
        }
    }

    /// [`start`](Self::start), begun before this returns: executions submitted from now on
    /// wait for it, in order. The future tells when the kernel is ready (or why it is not);
    /// for a window that opens while the kernel starts. Call it inside a Tokio runtime.
    pub fn start_now(&self) -> impl Future<Output = Result<()>> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let sent = self.send(Command::Start(tx));
        let this = self.clone();
        async move {
            sent?;
            rx.await.map_err(|_| Error::NotRunning)??;
            this.catch_up_registry();
            Ok(())
        }
    }

    /// Stop the kernels and the gateway; a running execution and queued ones end with an
    /// error. The executor can be started again.
    pub async fn stop(&self) -> Result<()> {
        if self.shared.commands.get().is_none() {
            return Ok(());
        }
        self.ask(Command::Stop).await
    }

    /// Process id of the gateway ipybox started (`None` when stopped or external); its
    /// kernels are its descendants.
    pub async fn gateway_pid(&self) -> Option<u32> {
        self.snapshot().gateway_pid
    }

    /// Is the executor started?
    pub async fn is_running(&self) -> bool {
        self.snapshot().running
    }

    fn snapshot(&self) -> Snapshot {
        self.shared
            .snapshot
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// Replace the kernel with a fresh one: no variables, no imports. Acts at once, also
    /// while code runs: the running execution ends with [`Error::Cancelled`], queued ones
    /// run on the fresh kernel. Near-instant when the spare kernel is ready; the old kernel
    /// is interrupted and deleted in the background. With a sandbox, the whole sandbox is
    /// replaced: nothing the old kernel started survives.
    pub async fn reset(&self) -> Result<()> {
        self.ask(Command::Reset).await
    }

    /// Every [`SessionEvent`] from now on: the kernel busy and idle, kernels replaced, tool
    /// calls with their approval and outcome, MCP servers started and gone. Any number of
    /// listeners; one that falls far behind is told how many events it missed.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<SessionEvent> {
        self.shared.config.events.subscribe()
    }

    /// Decide the pending approval request `id` from anywhere (a dialog, a panel, another
    /// process's channel); `false` when it is not pending (decided, withdrawn, unknown).
    pub fn decide(&self, id: u64, decision: Decision) -> bool {
        self.decide_as(id, decision, crate::events::DecidedBy::Person)
    }

    /// [`decide`](Self::decide), saying who or what decided (a batch, a rule made from the
    /// request) for listeners and the audit log.
    pub fn decide_as(&self, id: u64, decision: Decision, by: crate::events::DecidedBy) -> bool {
        self.snapshot()
            .approvals
            .is_some_and(|a| a.decide_as(id, decision, by))
    }

    /// Answer the question `id` a server asked (see [`SessionEvent::ElicitationRequested`]):
    /// accept with the form's values, decline, or cancel. Refused when no such question
    /// waits, or when the values do not fit the form (the question then still waits).
    pub fn answer_elicitation(
        &self,
        id: u64,
        action: rmcp::model::ElicitationAction,
        values: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> std::result::Result<(), crate::elicitation::AnswerError> {
        self.shared.config.elicitations.answer(id, action, values)
    }

    /// The questions servers asked that wait for an answer now.
    pub fn waiting_questions(&self) -> Vec<crate::elicitation::Question> {
        self.shared.config.elicitations.waiting()
    }

    /// Change the approval timeout (see [`CodeExecutorBuilder::approval_timeout`]) while
    /// the session runs: requests made from now on wait up to `timeout` for a decision.
    pub fn set_approval_timeout(&self, timeout: Duration) {
        self.shared
            .config
            .approval_timeout
            .store(millis(timeout), Ordering::Relaxed);
    }

    /// The approval timeout requests are made with now.
    pub fn approval_timeout(&self) -> Duration {
        Duration::from_millis(self.shared.config.approval_timeout.load(Ordering::Relaxed))
    }

    /// Have a call made by another process's code (an agent under `ipybox mcp --approval
    /// desktop`) approved in this session, by its approval handler, its panel and its
    /// audit log; `None` when the session is not running.
    pub(crate) fn request_external(
        &self,
        call: crate::approval::ExternalCall,
        details: crate::definition::CallDetails,
    ) -> Option<(ApprovalRequest, crate::approval::ExternalWait)> {
        let approvals = self.snapshot().approvals?;
        Some(approvals.request_external_with(
            call,
            details,
            self.shared.config.approval_handler.clone(),
        ))
    }

    /// Tell this session's listeners how an approved external call ended.
    pub(crate) fn report_external(
        &self,
        approved: crate::approval::Approved,
        outcome: Option<crate::events::CallOutcome>,
        duration_ms: u64,
    ) {
        if let Some(approvals) = self.snapshot().approvals {
            approvals.report(approved, outcome, duration_ms);
        }
    }

    /// This session runs an agent's code, sent through `client`: its approval requests (and
    /// the audit log) name the client.
    pub(crate) fn set_client(&self, client: crate::definition::Client) {
        if let Ok(mut c) = self.shared.config.client.lock() {
            *c = Some(client);
        }
    }

    /// The approval requests waiting for a decision, oldest first.
    pub fn pending_approvals(&self) -> Vec<ApprovalRequest> {
        self.snapshot()
            .approvals
            .map(|a| a.pending())
            .unwrap_or_default()
    }

    /// Interrupt the running execution (SIGINT to the kernel, as Jupyter's interrupt). The
    /// kernel keeps its state; the execution ends with [`Error::Cancelled`] (and a kernel that
    /// ignores the interrupt is replaced). Queued executions still run. Does nothing when
    /// nothing runs.
    pub async fn interrupt(&self) -> Result<()> {
        self.ask(Command::Interrupt).await
    }

    /// Run `code` and wait for its result. `timeout: None` waits forever.
    pub async fn execute(
        &self,
        code: &str,
        timeout: Option<Duration>,
    ) -> Result<CodeExecutionResult> {
        use futures_util::StreamExt;
        let options = StreamOptions {
            timeout,
            ..StreamOptions::default()
        };
        let mut stream = self.spawn_execution(code, options, true);
        while let Some(event) = stream.next().await {
            if let Event::Result(r) = event? {
                return Ok(r);
            }
        }
        Err(Error::KernelDied {
            reason: "the execution ended without a result".into(),
            output: Default::default(),
        })
    }

    /// Run `code`, streaming events: [`Event::Output`]s (when asked for), approval and input
    /// requests, and the [`Event::Result`] last, or an error. Dropping the stream cancels the
    /// execution.
    pub fn stream(&self, code: &str, options: StreamOptions) -> ExecutionStream {
        self.spawn_execution(code, options, false)
    }

    fn spawn_execution(
        &self,
        code: &str,
        options: StreamOptions,
        auto_approve: bool,
    ) -> ExecutionStream {
        let (out, rx) = mpsc::unbounded_channel();
        let (cancel, cancel_rx) = oneshot::channel();
        let id = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
        let job = Job {
            id: id.clone(),
            code: code.to_owned(),
            options,
            auto_approve,
            out: out.clone(),
            cancel: cancel_rx,
        };
        if let Err(e) = self.send(Command::Execute(job)) {
            let _ = out.send(Err(e));
        }
        ExecutionStream {
            id,
            rx,
            cancel: Some(cancel),
        }
    }
}

/// `d` in whole milliseconds, at least 1 (a zero timeout would reject every call unasked).
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

#[cfg(test)]
mod tests {
    //! The handle and the actor's mailbox, without a kernel: what a caller gets before
    //! `start()`, and that the handle's own state answers without the actor.
    use super::*;

    #[tokio::test]
    async fn before_start_nothing_runs_and_every_request_is_answered_at_once() {
        let executor = CodeExecutor::builder().build();
        assert!(!executor.is_running().await);
        let run = tokio::time::timeout(Duration::from_secs(5), executor.execute("print(1)", None))
            .await
            .expect("answered without a kernel");
        assert!(
            matches!(run, Err(Error::NotRunning)),
            "an execution before start() is refused: {run:?}"
        );
        tokio::time::timeout(Duration::from_secs(5), executor.interrupt())
            .await
            .expect("answered without a kernel")
            .expect("interrupting nothing is not an error");
        tokio::time::timeout(Duration::from_secs(5), executor.stop())
            .await
            .expect("answered without a kernel")
            .expect("stopping what never started is not an error");
        assert!(!executor.is_running().await);
        assert_eq!(executor.gateway_pid().await, None);
    }

    #[tokio::test]
    async fn approvals_and_questions_are_the_handles_own_state() {
        let executor = CodeExecutor::builder().build();
        assert!(executor.pending_approvals().is_empty());
        assert!(executor.waiting_questions().is_empty());
        assert!(
            !executor.decide(7, Decision::Accept),
            "no request 7 waits, so nothing is decided"
        );
        executor.set_approval_timeout(Duration::from_secs(42));
        assert_eq!(executor.approval_timeout(), Duration::from_secs(42));
    }
}
