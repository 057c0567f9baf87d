//! Tool calls kernel code asks for over the kernel's stdin channel.
//!
//! The kernel (`ipybox_channel`, installed by ipybox's kernel init) sends an
//! `input_request` whose content carries a [`Request`] (the protocol is `channel.rs`); the
//! execution that ran the cell hands it here, the [`ToolServer`] approves and runs it, and
//! the answer goes back as the `input_reply` value. The channel reaches only the client that
//! ran the cell, and needs no network path from the kernel to ipybox: the same for local,
//! sandboxed and remote kernels.
//!
//! A request can come more than once: the kernel asks again when an answer is slow, in case
//! the first copy was lost with a dropped connection. Calls are keyed by the kernel's call
//! id, so a call runs once and every copy gets its answer. An answer too long for one
//! WebSocket message (Jupyter Server takes at most 10 MiB from a client) is sent in parts
//! that the kernel asks for one by one.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::apigen::modules::module_source;
use crate::channel::{Answer, BlockReport, RefusalKind, Request, first_reply, part_reply};
use crate::events::{Events, SessionEvent};
use crate::kernel::messages::Header;
use crate::kernel::session::KernelSession;
use crate::sandbox::access::Checker;
use crate::sandbox::block::assess;
use crate::tools::ToolServer;

/// How long an answer is kept for copies of its request (the kernel asks again after 5 s
/// without an answer; a connection is taken up again within 30 s).
const KEEP_ANSWERS: Duration = Duration::from_secs(60);

/// The calls of one execution.
pub(super) struct Calls {
    tools: Arc<ToolServer>,
    /// The workspace whose generated modules a remote kernel may import (`None`: the
    /// kernel sees the workspace itself).
    sources: Option<Arc<PathBuf>>,
    kernel: KernelSession,
    calls: HashMap<String, Call>,
    /// When each answered call was answered, oldest first.
    answered_at: VecDeque<(Instant, String)>,
    done: mpsc::UnboundedSender<(String, Arc<Vec<String>>)>,
    answered: mpsc::UnboundedReceiver<(String, Arc<Vec<String>>)>,
    /// The execution's id, the sandbox's policy and where to tell of a block (with a
    /// sandbox only).
    blocks: Option<(String, Arc<Checker>, Events)>,
}

enum Call {
    /// Running; further copies of the request wait here for the answer.
    Running(Vec<Header>),
    /// Answered, in parts (one part for all but long answers).
    Answered(Arc<Vec<String>>),
}

impl Calls {
    pub(super) fn new(
        tools: Arc<ToolServer>,
        sources: Option<Arc<PathBuf>>,
        kernel: KernelSession,
    ) -> Self {
        let (done, answered) = mpsc::unbounded_channel();
        Calls {
            tools,
            sources,
            kernel,
            calls: HashMap::new(),
            answered_at: VecDeque::new(),
            done,
            answered,
            blocks: None,
        }
    }

    /// Take the kernel's reports of blocked file operations of execution `id`, checked
    /// against the sandbox's policy (`None`: no sandbox, reports are ignored).
    pub(super) fn with_blocks(
        mut self,
        id: String,
        blocks: Option<(Arc<Checker>, Events)>,
    ) -> Self {
        self.blocks = blocks.map(|(checker, events)| (id, checker, events));
        self
    }

    /// The kernel's hook reports a cell that failed with an `OSError`: told on as a
    /// [`SessionEvent::SandboxBlocked`] only when the policy agrees the sandbox blocked it.
    fn block(&self, header: &Header, report: &BlockReport) {
        if let Some((id, checker, events)) = &self.blocks
            && let Some(block) = assess(report, checker)
        {
            events.send(SessionEvent::SandboxBlocked {
                execution_id: id.clone(),
                block: Box::new(block),
            });
        }
        self.reply(header, &Answer::Noted.to_reply());
    }

    /// A request from the kernel, asked by `header`.
    pub(super) fn request(&mut self, header: Header, request: Request) {
        match &request {
            Request::Block { report, .. } => return self.block(&header, report),
            Request::Part { id, part } => {
                let value = match self.calls.get(id) {
                    Some(Call::Answered(parts)) if *part < parts.len() => part_reply(&parts[*part]),
                    _ => Answer::refused(RefusalKind::BadRequest, "no such part of an answer")
                        .to_reply(),
                };
                return self.reply(&header, &value);
            }
            Request::Call(_) | Request::Module { .. } => {}
        }
        let id = request.id().to_owned();
        match self.calls.get_mut(&id) {
            Some(Call::Running(waiting)) => waiting.push(header),
            Some(Call::Answered(parts)) => {
                let first = first_reply(parts);
                self.reply(&header, &first);
            }
            None => {
                self.calls.insert(id.clone(), Call::Running(Vec::new()));
                let (tools, kernel, done) =
                    (self.tools.clone(), self.kernel.clone(), self.done.clone());
                let sources = self.sources.clone();
                tokio::spawn(async move {
                    let answer = match request {
                        Request::Module { module, .. } => module_answer(sources, module).await,
                        Request::Call(call) => tools.answer(&call).await,
                        Request::Block { .. } | Request::Part { .. } => {
                            unreachable!("answered above")
                        }
                    };
                    let parts = Arc::new(answer.to_parts());
                    // Answered from the task: it may outlive the execution (a call from a
                    // thread the cell left running is still approved or refused).
                    if let Err(e) = kernel.input_reply(&header, &first_reply(&parts)) {
                        tracing::warn!(error = %e, "answering a tool call failed");
                    }
                    let _ = done.send((id, parts));
                });
            }
        }
    }

    /// Wait for a running call to be answered, and answer the copies of it that came
    /// meanwhile. Pending forever when nothing runs.
    pub(super) async fn settle(&mut self) {
        let Some((id, parts)) = self.answered.recv().await else {
            return std::future::pending().await;
        };
        if let Some(Call::Running(waiting)) = self.calls.remove(&id) {
            let first = first_reply(&parts);
            for header in &waiting {
                self.reply(header, &first);
            }
        }
        // Answers are kept to answer copies of their request, which come within seconds;
        // a cell making many calls does not keep them all.
        while let Some((at, old)) = self.answered_at.front()
            && at.elapsed() > KEEP_ANSWERS
        {
            self.calls.remove(old);
            self.answered_at.pop_front();
        }
        self.answered_at.push_back((Instant::now(), id.clone()));
        self.calls.insert(id, Call::Answered(parts));
    }

    fn reply(&self, header: &Header, value: &str) {
        if let Err(e) = self.kernel.input_reply(header, value) {
            tracing::warn!(error = %e, "answering a tool call failed");
        }
    }
}

/// The source of a generated module, for a remote kernel's import hook.
async fn module_answer(sources: Option<Arc<PathBuf>>, module: String) -> Answer {
    let Some(workspace) = sources else {
        return Answer::refused(
            RefusalKind::BadRequest,
            "this kernel imports generated modules from the workspace itself",
        );
    };
    let found = tokio::task::spawn_blocking(move || module_source(&workspace, &module))
        .await
        .ok()
        .flatten();
    match found {
        Some(m) => Answer::Module {
            package: m.package,
            path: m.path,
            source: m.source,
        },
        None => Answer::refused(RefusalKind::NotFound, "no such module"),
    }
}
