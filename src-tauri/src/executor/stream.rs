//! What an execution tells as it runs: its events, the input it asks for, and the stream that
//! carries them (cancelled when dropped).

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::Stream;
use tokio::sync::{mpsc, oneshot};

use super::{CodeExecutionResult, DEFAULT_TIMEOUT, Output};
use crate::error::Result;
use crate::tools::ApprovalRequest;

/// An event of [`CodeExecutor::stream`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The kernel began the execution; its count is what a notebook shows as `[n]` (only
    /// when [`StreamOptions::outputs`] is set).
    Started {
        /// The execution count, when the kernel gives one.
        execution_count: Option<i64>,
    },
    /// An output, as it arrives and in the kernel's order (only when
    /// [`StreamOptions::outputs`] is set).
    Output(Output),
    /// The code asks for input (`input()`, `getpass()`): answer with
    /// [`InputRequest::reply`] (only when [`StreamOptions::input`] is set). The execution
    /// timeout is paused while it waits.
    Input(InputRequest),
    /// A tool call waits for `accept()` or `reject()` (nothing runs before). The execution
    /// timeout is paused while a decision is pending.
    ApprovalRequest(ApprovalRequest),
    /// The final result; always the last event of a successful execution.
    Result(CodeExecutionResult),
}

/// A request for input from running code. Answer it once with [`reply`](Self::reply);
/// dropping every clone unanswered interrupts the code (its `input()` raises
/// `KeyboardInterrupt`).
#[derive(Debug, Clone)]
pub struct InputRequest {
    pub(super) prompt: String,
    pub(super) password: bool,
    pub(super) answer: Arc<Mutex<Option<oneshot::Sender<String>>>>,
}

impl PartialEq for InputRequest {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.answer, &other.answer)
    }
}

impl InputRequest {
    /// The prompt the code shows (`input("Name: ")`).
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    /// Is it a password (`getpass()`)? Then do not echo what is typed.
    pub fn password(&self) -> bool {
        self.password
    }

    /// Answer: the code's `input()` returns `value`. Later answers are ignored.
    pub fn reply(&self, value: impl Into<String>) {
        if let Some(tx) = self.answer.lock().ok().and_then(|mut a| a.take()) {
            let _ = tx.send(value.into());
        }
    }
}

/// Options of [`CodeExecutor::stream`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamOptions {
    /// Interrupt the code after this long; `None` waits forever.
    pub timeout: Option<Duration>,
    /// Emit [`Event::Started`] and [`Event::Output`]s as the kernel sends them.
    pub outputs: bool,
    /// Let the code ask for input with [`Event::Input`]; without it `input()` raises
    /// (`StdinNotImplementedError`) instead of waiting for an answer nobody gives.
    pub input: bool,
    /// Save displayed images in the images directory and list them in the result (default
    /// on); a notebook, which keeps images in its outputs, turns it off.
    pub save_images: bool,
    /// Where the code comes from, in words ("cell 3 of analysis.ipynb", "agent session
    /// 4f2a"): approval requests and the audit log name it.
    pub origin: Option<String>,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            timeout: Some(DEFAULT_TIMEOUT),
            outputs: false,
            input: false,
            save_images: true,
            origin: None,
        }
    }
}

/// The events of one execution; see [`CodeExecutor::stream`]. Dropping it cancels the
/// execution (see [`cancel`](Self::cancel)).
#[derive(Debug)]
pub struct ExecutionStream {
    pub(super) id: String,
    pub(super) rx: mpsc::UnboundedReceiver<Result<Event>>,
    pub(super) cancel: Option<oneshot::Sender<()>>,
}

impl ExecutionStream {
    /// The execution's id, as [`SessionEvent`]s and approval requests name it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Cancel the execution: a queued one never starts, a running one is interrupted (its
    /// kernel keeps its state). The stream then ends with [`Error::Cancelled`].
    pub fn cancel(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            let _ = cancel.send(());
        }
    }

    /// A handle that cancels this execution from elsewhere; `None` once taken or
    /// cancelled. The stream then still ends with [`Error::Cancelled`].
    pub fn cancel_handle(&mut self) -> Option<CancelHandle> {
        self.cancel.take().map(CancelHandle)
    }
}

/// Cancels an execution from elsewhere (when its stream has been moved into a task); see
/// [`ExecutionStream::cancel_handle`].
#[derive(Debug)]
pub struct CancelHandle(oneshot::Sender<()>);

impl CancelHandle {
    /// Cancel the execution, as [`ExecutionStream::cancel`] does.
    pub fn cancel(self) {
        let _ = self.0.send(());
    }
}

impl Stream for ExecutionStream {
    type Item = Result<Event>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}
