//! One kernel and its channels WebSocket, driven by a single task.
//!
//! The task owns the socket: it writes requests handed to it through a channel, reads every
//! frame, and routes each message to the request it answers (by `parent_header.msg_id`).
//! Messages of nobody's request — output a thread left running after its cell ended — are
//! dropped. When the kernel dies (the server reports `restarting`/`dead`, or the socket
//! closes) every waiting request gets [`KernelEvent::Died`].

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message as WsMessage;

use super::api::{GatewayApi, KernelSocket};
use super::messages::{
    Channel, CompleteReply, CompleteRequest, Content, Empty, ExecuteReply, ExecuteRequest,
    ExecutionState, Header, Incoming, InputReply, InputRequest, InspectReply, InspectRequest,
    Request, Wire,
};
use crate::channel::{Answer, RefusalKind};
use crate::error::{Error, Result};

/// What a request receives.
#[derive(Debug)]
pub enum KernelEvent {
    /// An iopub message of the request (`stream`, `display_data`, `error`, …).
    Output(Content),
    /// The request is done: its shell reply and the iopub `status: idle` after its output
    /// have both arrived. They come on different channels, in either order; only after both
    /// is all of the request's output in. Nothing follows.
    Done(ExecuteReply),
    /// A stdin `input_request` of the request: answer with [`KernelSession::input_reply`]
    /// parented to `header`.
    Input {
        /// The request's own header.
        header: Header,
        /// The prompt.
        request: InputRequest,
    },
    /// The kernel died or the connection to it was lost.
    Died(String),
}

enum Command {
    Send {
        msg_id: String,
        frame: WsMessage,
        events: mpsc::UnboundedSender<KernelEvent>,
    },
    Forget {
        msg_id: String,
    },
    /// A message that expects no answer (a reply to the kernel).
    Write {
        frame: WsMessage,
    },
    Close {
        done: oneshot::Sender<()>,
    },
}

/// A connected kernel. Clones are handles to the same connection.
#[derive(Debug, Clone)]
pub struct KernelSession {
    id: String,
    session_id: String,
    wire: Wire,
    api: GatewayApi,
    commands: mpsc::UnboundedSender<Command>,
    dead: Arc<AtomicBool>,
    /// The kernel runs requests on subshells of their own (JEP 91, ipykernel 7).
    subshells: bool,
    /// The subshell completion and help requests go to, made on the first one: they are
    /// then answered while a cell runs on the main shell. `None` inside: making it failed.
    helper: Arc<tokio::sync::OnceCell<Option<String>>>,
    /// The subshell ipybox's own evaluations (the variables list, a data grid's pages) go to:
    /// another than the helper's, so a slow one never holds up completion.
    inspector: Arc<tokio::sync::OnceCell<Option<String>>>,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Command")
    }
}

const PING_INTERVAL: Duration = Duration::from_secs(30);

/// How many kernels [`KernelSession::start`] starts before it gives up on one that never
/// answers.
const START_ATTEMPTS: u32 = 2;

impl KernelSession {
    /// Start a kernel of spec `kernel_name` with `env`, connect its channels and wait until it
    /// answers `kernel_info_request`.
    pub async fn start(
        api: &GatewayApi,
        kernel_name: Option<&str>,
        env: &BTreeMap<String, String>,
        ready_timeout: Duration,
    ) -> Result<KernelSession> {
        let mut attempt = 1;
        loop {
            let model = api.create_kernel(kernel_name, env).await?;
            match Self::connect(api, &model.id, ready_timeout).await {
                Ok(session) => return Ok(session),
                Err(e) => {
                    let _ = api.delete_kernel(&model.id).await;
                    // A kernel that never answers is replaced once: the gateway picks its
                    // ports by binding and releasing them, and another process starting a
                    // kernel at the same moment can take one first (the kernel then never
                    // hears the gateway). A fresh kernel gets fresh ports.
                    if attempt < START_ATTEMPTS && matches!(e, Error::KernelStart { .. }) {
                        tracing::warn!(kernel = %model.id, "the kernel did not answer ({e}); starting another");
                        attempt += 1;
                        continue;
                    }
                    return Err(e);
                }
            }
        }
    }

    /// Connect to an existing kernel.
    pub async fn connect(
        api: &GatewayApi,
        id: &str,
        ready_timeout: Duration,
    ) -> Result<KernelSession> {
        let session_id = uuid::Uuid::new_v4().simple().to_string();
        let (socket, wire) = api.connect_channels(id, &session_id).await?;
        tracing::debug!(kernel = %id, ?wire, "kernel channels connected");
        let (tx, rx) = mpsc::unbounded_channel();
        let dead = Arc::new(AtomicBool::new(false));
        let link = Link {
            api: api.clone(),
            kernel_id: id.to_owned(),
            session_id: session_id.clone(),
            wire,
        };
        tokio::spawn(run(socket, rx, dead.clone(), link));
        let mut session = KernelSession {
            id: id.to_owned(),
            session_id,
            wire,
            api: api.clone(),
            commands: tx,
            dead,
            subshells: false,
            helper: Default::default(),
            inspector: Default::default(),
        };
        let info = session.wait_ready(ready_timeout).await?;
        session.subshells = info
            .get("supported_features")
            .and_then(serde_json::Value::as_array)
            .is_some_and(|f| f.iter().any(|f| f == "kernel subshells"));
        Ok(session)
    }

    /// Wait until the kernel answers `kernel_info_request`; its reply.
    async fn wait_ready(&self, timeout: Duration) -> Result<serde_json::Value> {
        // The kernel may not have subscribed its iopub socket yet; kernel_info is answered on
        // shell once it is up. Retry the request until one is answered.
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let header = Header::new("kernel_info_request", &self.session_id);
            let frame = encode(self.wire, &Request::new(&header, Channel::Shell, Empty {}));
            let mut events = self.send(header.msg_id.clone(), frame)?;
            let attempt = tokio::time::Instant::now() + Duration::from_secs(2);
            let answered = loop {
                match tokio::time::timeout_at(attempt.min(deadline), events.recv()).await {
                    Ok(Some(KernelEvent::Output(Content::KernelInfoReply(info)))) => {
                        break Some(info);
                    }
                    Ok(Some(KernelEvent::Died(reason))) => {
                        return Err(Error::kernel_start(format!(
                            "the kernel died while starting: {reason}"
                        )));
                    }
                    Ok(Some(_)) => continue,
                    Ok(None) => {
                        return Err(Error::kernel_start(
                            "the kernel's connection closed while starting",
                        ));
                    }
                    Err(_) => break None,
                }
            };
            self.forget(&header.msg_id);
            if let Some(info) = answered {
                return Ok(info);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(Error::kernel_start(format!(
                    "the kernel did not become ready within {:.0} s",
                    timeout.as_secs_f64()
                )));
            }
        }
    }

    /// The kernel id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Has the kernel died (or its connection been lost)?
    pub fn is_dead(&self) -> bool {
        self.dead.load(Ordering::Acquire) || self.commands.is_closed()
    }

    /// Send an `execute_request`; events for it arrive on the returned receiver.
    pub fn execute(
        &self,
        request: &ExecuteRequest<'_>,
    ) -> Result<(String, mpsc::UnboundedReceiver<KernelEvent>)> {
        let header = Header::new("execute_request", &self.session_id);
        let frame = encode(self.wire, &Request::new(&header, Channel::Shell, request));
        let events = self.send(header.msg_id.clone(), frame)?;
        Ok((header.msg_id, events))
    }

    /// Ask the kernel for completions of `code` at `cursor_pos` (code points); see
    /// [`KernelSession::help`] for when it is answered.
    ///
    /// Spec: <https://jupyter-client.readthedocs.io/en/stable/messaging.html#completion>.
    pub async fn complete(
        &self,
        code: &str,
        cursor_pos: usize,
        timeout: Duration,
    ) -> Result<CompleteReply> {
        let request = CompleteRequest { code, cursor_pos };
        match self.help("complete_request", &request, timeout).await? {
            Content::CompleteReply(reply) => Ok(reply),
            _ => Err(Error::gateway(
                "the kernel's completion reply was malformed",
            )),
        }
    }

    /// Ask the kernel what the name at `cursor_pos` is (signature and docstring; with
    /// `detail_level` 1 also the source).
    ///
    /// Spec: <https://jupyter-client.readthedocs.io/en/stable/messaging.html#introspection>.
    pub async fn inspect(
        &self,
        code: &str,
        cursor_pos: usize,
        detail_level: u8,
        timeout: Duration,
    ) -> Result<InspectReply> {
        let request = InspectRequest {
            code,
            cursor_pos,
            detail_level,
        };
        match self.help("inspect_request", &request, timeout).await? {
            Content::InspectReply(reply) => Ok(reply),
            _ => Err(Error::gateway(
                "the kernel's inspection reply was malformed",
            )),
        }
    }

    /// Send a shell request of `msg_type` and wait up to `timeout` for its reply. A kernel
    /// with subshells answers it on the helper subshell, so a running cell does not hold it
    /// up; any other kernel answers it after the running cell.
    async fn help<C: serde::Serialize>(
        &self,
        msg_type: &str,
        content: &C,
        timeout: Duration,
    ) -> Result<Content> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut header = Header::new(msg_type, &self.session_id);
        header.subshell_id = self.subshell(&self.helper, deadline).await;
        let reply = self
            .request(&header, Channel::Shell, content, deadline)
            .await?;
        reply.ok_or_else(|| {
            Error::gateway(format!(
                "the kernel did not answer within {:.1} s",
                timeout.as_secs_f64()
            ))
        })
    }

    /// Evaluate `expression` in the user namespace with a request of ipybox's own that the
    /// person never sees: an empty cell, `silent` (no output, no `execute_input`, the execution
    /// count unchanged), out of the history, with `expression` as its only user expression.
    /// IPython runs no cell hooks for an empty cell. Returns the value's `text/plain`. A
    /// kernel with subshells answers on the inspector subshell, also while a cell runs; any
    /// other kernel after the running cell.
    ///
    /// Spec: <https://jupyter-client.readthedocs.io/en/stable/messaging.html#execute>
    /// (`user_expressions`).
    pub async fn evaluate(&self, expression: &str, timeout: Duration) -> Result<String> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut header = Header::new("execute_request", &self.session_id);
        header.subshell_id = self.subshell(&self.inspector, deadline).await;
        let request = ExecuteRequest {
            silent: true,
            store_history: false,
            user_expressions: BTreeMap::from([("value".to_owned(), expression.to_owned())]),
            // ipykernel sets its one `allow_stdin` flag from every execute request: a cell
            // running on the main shell (always with stdin, for tool calls and input()) keeps
            // it.
            allow_stdin: true,
            stop_on_error: false,
            ..ExecuteRequest::new("")
        };
        let reply = self
            .await_reply(
                &header,
                Channel::Shell,
                &request,
                deadline,
                |event| match event {
                    KernelEvent::Done(reply) => Some(reply),
                    _ => None,
                },
            )
            .await?;
        let Some(reply) = reply else {
            return Err(Error::gateway(format!(
                "the kernel did not answer within {:.1} s",
                timeout.as_secs_f64()
            )));
        };
        let value = reply.user_expressions.get("value");
        match value.and_then(|v| v.pointer("/data/text~1plain")) {
            Some(serde_json::Value::String(text)) => Ok(text.clone()),
            _ => {
                let why = value
                    .and_then(|v| v.get("evalue"))
                    .and_then(serde_json::Value::as_str)
                    .or(reply.evalue.as_deref())
                    .unwrap_or("no value");
                Err(Error::gateway(format!(
                    "the kernel could not evaluate ipybox's request: {why}"
                )))
            }
        }
    }

    /// The id of the subshell kept in `cell`, made on first use; `None` when the kernel has
    /// no subshells or making one failed (requests then go to the main shell).
    async fn subshell(
        &self,
        cell: &tokio::sync::OnceCell<Option<String>>,
        deadline: tokio::time::Instant,
    ) -> Option<String> {
        if !self.subshells {
            return None;
        }
        cell.get_or_init(|| async {
            let header = Header::new("create_subshell_request", &self.session_id);
            match self
                .request(&header, Channel::Control, &Empty {}, deadline)
                .await
            {
                Ok(Some(Content::CreateSubshellReply(reply))) => reply.subshell_id,
                other => {
                    tracing::debug!(kernel = %self.id, ?other, "no subshell");
                    None
                }
            }
        })
        .await
        .clone()
    }

    /// Send one request and wait until `deadline` for its reply (its first message that is
    /// not output): `None` when none came.
    async fn request<C: serde::Serialize>(
        &self,
        header: &Header,
        channel: Channel,
        content: &C,
        deadline: tokio::time::Instant,
    ) -> Result<Option<Content>> {
        self.await_reply(header, channel, content, deadline, |event| match event {
            KernelEvent::Output(
                reply @ (Content::CompleteReply(_)
                | Content::InspectReply(_)
                | Content::CreateSubshellReply(_)),
            ) => Some(reply),
            _ => None,
        })
        .await
    }

    /// Send one request and wait until `deadline` for the first of its events `reply_of`
    /// takes; `None` when none came, an error when the kernel died meanwhile.
    async fn await_reply<C: serde::Serialize, R>(
        &self,
        header: &Header,
        channel: Channel,
        content: &C,
        deadline: tokio::time::Instant,
        reply_of: impl Fn(KernelEvent) -> Option<R>,
    ) -> Result<Option<R>> {
        let frame = encode(self.wire, &Request::new(header, channel, content));
        let mut events = self.send(header.msg_id.clone(), frame)?;
        let reply = loop {
            match tokio::time::timeout_at(deadline, events.recv()).await {
                Ok(Some(KernelEvent::Died(reason))) => {
                    break Err(Error::KernelDied {
                        reason,
                        output: Default::default(),
                    });
                }
                Ok(Some(event)) => {
                    if let Some(reply) = reply_of(event) {
                        break Ok(Some(reply));
                    }
                }
                Ok(None) | Err(_) => break Ok(None),
            }
        };
        self.forget(&header.msg_id);
        reply
    }

    fn send(
        &self,
        msg_id: String,
        frame: WsMessage,
    ) -> Result<mpsc::UnboundedReceiver<KernelEvent>> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.commands
            .send(Command::Send {
                msg_id,
                frame,
                events: tx,
            })
            .map_err(|_| Error::KernelDied {
                reason: "the connection to the kernel is closed".into(),
                output: Default::default(),
            })?;
        Ok(rx)
    }

    /// Answer the `input_request` with header `request` (the code's `input()` returns
    /// `value`).
    pub fn input_reply(&self, request: &Header, value: &str) -> Result<()> {
        let header = Header::new("input_reply", &self.session_id);
        let frame = encode(
            self.wire,
            &Request::reply(&header, request, Channel::Stdin, InputReply { value }),
        );
        self.commands
            .send(Command::Write { frame })
            .map_err(|_| Error::KernelDied {
                reason: "the connection to the kernel is closed".into(),
                output: Default::default(),
            })
    }

    /// Stop routing messages of `msg_id`.
    pub fn forget(&self, msg_id: &str) {
        let _ = self.commands.send(Command::Forget {
            msg_id: msg_id.to_owned(),
        });
    }

    /// Interrupt the running execution (REST, SIGINT to the kernel).
    pub async fn interrupt(&self) -> Result<()> {
        self.api.interrupt_kernel(&self.id).await
    }

    /// Close the socket; the kernel keeps running on the server.
    pub async fn close(&self) {
        let (done, wait) = oneshot::channel();
        if self.commands.send(Command::Close { done }).is_ok() {
            let _ = tokio::time::timeout(Duration::from_secs(2), wait).await;
        }
    }

    /// Close the socket and delete the kernel.
    pub async fn shutdown(self) {
        self.close().await;
        // A kernel the server is restarting cannot be deleted until the restart finishes.
        for attempt in 0..4 {
            match self.api.delete_kernel(&self.id).await {
                Ok(()) => return,
                Err(e) => {
                    tracing::debug!(kernel = %self.id, error = %e, attempt, "deleting kernel failed")
                }
            }
            tokio::time::sleep(Duration::from_millis(500 * (attempt + 1))).await;
        }
    }
}

/// What it takes to connect the same kernel session again.
struct Link {
    api: GatewayApi,
    kernel_id: String,
    session_id: String,
    wire: Wire,
}

impl Link {
    /// Connect again with the same session id (the server then replays what the kernel sent
    /// while nobody was connected), for as long as the gateway's reconnect window allows.
    async fn reconnect(&self, why: &str) -> Option<KernelSocket> {
        let deadline = tokio::time::Instant::now() + self.api.reconnect_window();
        let mut delay = Duration::from_millis(50);
        loop {
            match self
                .api
                .reconnect_channels(&self.kernel_id, &self.session_id, self.wire)
                .await
            {
                Ok(socket) => {
                    tracing::info!(kernel = %self.kernel_id, %why, "reconnected to the kernel");
                    return Some(socket);
                }
                Err(e) => {
                    tracing::debug!(kernel = %self.kernel_id, error = %e, "reconnecting failed");
                    if tokio::time::Instant::now() + delay > deadline {
                        return None;
                    }
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(2));
                }
            }
        }
    }
}

async fn run(
    socket: KernelSocket,
    mut commands: mpsc::UnboundedReceiver<Command>,
    dead: Arc<AtomicBool>,
    link: Link,
) {
    let (mut sink, mut stream) = socket.split();
    let mut pending: HashMap<String, Waiting> = HashMap::new();
    let mut ping = tokio::time::interval(PING_INTERVAL);
    ping.tick().await;
    // Frames whose sending failed, sent again once connected again.
    let mut unsent: Vec<WsMessage> = Vec::new();
    let reason = loop {
        let lost = tokio::select! {
            biased;
            frame = stream.next() => match frame {
                Some(Ok(frame @ (WsMessage::Text(_) | WsMessage::Binary(_)))) => match route(&frame, &mut pending) {
                    Routed::Delivered => None,
                    Routed::Died(reason) => break reason,
                    Routed::Orphan(request, call) => {
                        let frame = refuse_orphan(&request, call, &link);
                        send(&mut sink, frame, &mut unsent).await
                    }
                },
                Some(Ok(WsMessage::Close(frame))) => Some(format!(
                    "the gateway closed the kernel's connection{}",
                    frame.map(|f| format!(" ({})", f.reason)).unwrap_or_default()
                )),
                Some(Ok(_)) => None,
                Some(Err(e)) => Some(format!("the connection to the kernel failed: {e}")),
                None => Some("the connection to the kernel closed".to_owned()),
            },
            cmd = commands.recv() => match cmd {
                Some(Command::Send { msg_id, frame, events }) => {
                    pending.insert(msg_id, Waiting { events, reply: None, idle: false });
                    send(&mut sink, frame, &mut unsent).await
                }
                Some(Command::Forget { msg_id }) => {
                    pending.remove(&msg_id);
                    None
                }
                Some(Command::Write { frame }) => send(&mut sink, frame, &mut unsent).await,
                Some(Command::Close { done }) => {
                    let _ = sink.send(WsMessage::Close(None)).await;
                    dead.store(true, Ordering::Release);
                    let _ = done.send(());
                    return;
                }
                None => {
                    let _ = sink.send(WsMessage::Close(None)).await;
                    return;
                }
            },
            _ = ping.tick() => {
                sink.send(WsMessage::Ping(Default::default()))
                    .await
                    .err()
                    .map(|e| format!("the connection to the kernel failed: {e}"))
            }
        };
        let Some(why) = lost else { continue };
        let Some(socket) = link.reconnect(&why).await else {
            break why;
        };
        (sink, stream) = socket.split();
        let mut failed = None;
        for frame in std::mem::take(&mut unsent) {
            if let Err(e) = sink.send(frame).await {
                failed = Some(format!("sending to the kernel failed: {e}"));
                break;
            }
        }
        if let Some(why) = failed {
            break why;
        }
    };
    dead.store(true, Ordering::Release);
    tracing::debug!(%reason, "kernel session ended");
    for (_, waiting) in pending.drain() {
        let _ = waiting.events.send(KernelEvent::Died(reason.clone()));
    }
    // Answer requests that arrive after the end instead of leaving them hanging.
    commands.close();
    while let Some(cmd) = commands.recv().await {
        match cmd {
            Command::Send { events, .. } => {
                let _ = events.send(KernelEvent::Died(reason.clone()));
            }
            Command::Close { done } => {
                let _ = done.send(());
            }
            Command::Forget { .. } | Command::Write { .. } => {}
        }
    }
}

/// A request waiting for its messages: the reply and the idle status seen so far.
struct Waiting {
    events: mpsc::UnboundedSender<KernelEvent>,
    reply: Option<ExecuteReply>,
    idle: bool,
}

/// Send `frame`; when that fails, keep it to send again and say why.
async fn send(
    sink: &mut futures_util::stream::SplitSink<KernelSocket, WsMessage>,
    frame: WsMessage,
    unsent: &mut Vec<WsMessage>,
) -> Option<String> {
    // Cheap to clone (shared bytes), so the frame can be kept.
    match sink.send(frame.clone()).await {
        Ok(()) => None,
        Err(e) => {
            unsent.push(frame);
            Some(format!("sending to the kernel failed: {e}"))
        }
    }
}

/// What became of a frame.
enum Routed {
    /// Delivered to its request, or dropped (output of nobody's request).
    Delivered,
    /// The kernel died.
    Died(String),
    /// A stdin request of a request nobody waits for any more (a thread the cell left
    /// running asks for input or a tool call): answered with a refusal, not left hanging.
    /// `true` for a tool call.
    Orphan(Header, bool),
}

/// The refusal of an orphaned stdin request: a tool call is refused, `input()` gets
/// end-of-file.
fn refuse_orphan(request: &Header, call: bool, link: &Link) -> WsMessage {
    let value = if call {
        Answer::refused(
            RefusalKind::Rejected,
            "the cell that made this call has finished, so nobody is asked to approve it; finish the threads and tasks that call tools before the cell ends",
        )
        .to_reply()
    } else {
        "\u{4}".to_owned()
    };
    let header = Header::new("input_reply", &link.session_id);
    encode(
        link.wire,
        &Request::reply(
            &header,
            request,
            Channel::Stdin,
            InputReply { value: &value },
        ),
    )
}

/// `request` as a frame of `wire`.
fn encode<C: serde::Serialize>(wire: Wire, request: &Request<'_, C>) -> WsMessage {
    match wire {
        Wire::Json => WsMessage::text(request.to_json()),
        Wire::V1 => WsMessage::binary(request.to_v1()),
    }
}

/// Route one frame.
fn route(frame: &WsMessage, pending: &mut HashMap<String, Waiting>) -> Routed {
    let msg = match frame {
        WsMessage::Text(text) => serde_json::from_str::<Incoming>(text.as_str()).ok(),
        // v1 frames, or the older protocol's frames with binary buffers (widgets, comms):
        // those do not parse as v1, and ipybox does not use them.
        WsMessage::Binary(bytes) => Incoming::from_v1(bytes),
        _ => None,
    };
    let Some(msg) = msg else {
        tracing::debug!("skipping an unparsable frame");
        return Routed::Delivered;
    };
    let content = msg.content();
    if let Content::Status(status) = &content {
        // The server reports kernel restarts and failures on iopub without a parent.
        match status.execution_state {
            ExecutionState::Restarting | ExecutionState::Autorestarting => {
                return Routed::Died(
                    "the kernel process exited and the server restarted it".into(),
                );
            }
            ExecutionState::Dead => {
                return Routed::Died("the kernel process exited and could not be restarted".into());
            }
            _ => {}
        }
    }
    let Some(parent) = msg.parent_id() else {
        return Routed::Delivered;
    };
    let Some(waiting) = pending.get_mut(parent) else {
        return match content {
            Content::InputRequest(r) => Routed::Orphan(msg.header.clone(), r.ipybox.is_some()),
            _ => Routed::Delivered,
        };
    };
    let event = match (msg.channel, content) {
        (_, Content::Status(s)) if s.execution_state == ExecutionState::Idle => {
            waiting.idle = true;
            match waiting.reply.take() {
                Some(reply) => KernelEvent::Done(reply),
                None => return Routed::Delivered,
            }
        }
        (_, Content::Status(_)) => return Routed::Delivered,
        (_, Content::ExecuteReply(reply)) if waiting.idle => KernelEvent::Done(reply),
        (_, Content::ExecuteReply(reply)) => {
            waiting.reply = Some(reply);
            return Routed::Delivered;
        }
        (_, Content::InputRequest(request)) => KernelEvent::Input {
            header: msg.header.clone(),
            request,
        },
        (_, Content::Unknown) => return Routed::Delivered,
        (_, other) => KernelEvent::Output(other),
    };
    let done = matches!(event, KernelEvent::Done(_));
    if waiting.events.send(event).is_err() || done {
        pending.remove(parent);
    }
    Routed::Delivered
}
