//! MCP sessions of the tool server: started lazily on a server's first call, reused by later
//! and concurrent calls, restarted after the server crashes, all closed on reset.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, OnceCell};

use crate::elicitation::{Elicitations, SessionElicitor};
use crate::error::Result;
use crate::events::{Events, SessionEvent};
use crate::mcp::client::connect_with;
use crate::mcp::handler::Hooks;
use crate::mcp::params::Variables;
use crate::mcp::{McpConnection, ServerParams};

type Slot = Arc<OnceCell<Arc<McpConnection>>>;

/// How long one MCP tool call may take by default.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// The live MCP sessions of one executor.
#[derive(Debug)]
pub struct Sessions {
    slots: Mutex<HashMap<String, Slot>>,
    workspace: PathBuf,
    connect_timeout: Duration,
    call_timeout: Duration,
    /// Variables fixed when the session started, instead of reading `.env` at each start.
    fixed: Option<Variables>,
    events: Events,
    elicitations: Option<Arc<Elicitations>>,
}

impl Sessions {
    /// Sessions whose stdio servers run in `workspace` and whose `${VAR}`s come from the
    /// environment and `workspace/.env`.
    pub fn new(workspace: PathBuf, connect_timeout: Duration) -> Self {
        Sessions {
            slots: Mutex::new(HashMap::new()),
            workspace,
            connect_timeout,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            fixed: None,
            events: Events::default(),
            elicitations: None,
        }
    }

    /// Tell `events` when a server starts and when it goes away on its own.
    pub fn with_events(mut self, events: Events) -> Self {
        self.events = events;
        self
    }

    /// Servers' questions go to `elicitations` (each session is offered elicitation when
    /// someone answers them).
    pub fn with_elicitations(mut self, elicitations: Arc<Elicitations>) -> Self {
        self.elicitations = Some(elicitations);
        self
    }

    /// The session's questions, when it has them.
    pub fn elicitations(&self) -> Option<&Arc<Elicitations>> {
        self.elicitations.as_ref()
    }

    /// Give up on a tool call after `timeout` (default [`DEFAULT_CALL_TIMEOUT`]).
    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// How long one tool call may take.
    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// Use these variables for every server start instead of re-reading `workspace/.env`.
    /// A sandboxed kernel can write the workspace: it must not be able to plant a `.env`
    /// that steers the `${VAR}`s of the servers ipybox starts on the host.
    pub fn with_fixed_variables(mut self, vars: Variables) -> Self {
        self.fixed = Some(vars);
        self
    }

    /// The variables `${VAR}`s resolve from now: the session's snapshot, or the environment
    /// and the workspace's `.env`.
    pub fn variables(&self) -> Result<Variables> {
        match &self.fixed {
            Some(v) => Ok(v.clone()),
            None => Variables::load(Some(&self.workspace)),
        }
    }

    /// The session of `name`, starting it if needed. Concurrent callers share one start; a
    /// failed start is retried by the next call.
    pub async fn get(&self, name: &str, params: &ServerParams) -> Result<Arc<McpConnection>> {
        let slot = self
            .slots
            .lock()
            .await
            .entry(name.to_owned())
            .or_default()
            .clone();
        let conn = slot
            .get_or_try_init(|| async {
                let vars = self.variables()?;
                let resolved = params.resolve(&vars)?;
                let program = crate::sandbox::server_program(&resolved)?;
                let events = self.events.clone();
                let server = name.to_owned();
                let mut hooks = Hooks::new().on_log(move |log| {
                    events.send(SessionEvent::McpServerLog {
                        server: server.clone(),
                        level: log.level,
                        message: log.message,
                    })
                });
                if let Some(elicitations) = &self.elicitations {
                    hooks = hooks.elicitor(Arc::new(SessionElicitor(elicitations.clone())));
                }
                let conn = Arc::new(
                    connect_with(
                        name,
                        &resolved,
                        program,
                        &self.workspace,
                        self.connect_timeout,
                        hooks,
                    )
                    .await?,
                );
                self.events.send(SessionEvent::McpServerStarted {
                    server: name.to_owned(),
                });
                watch(name.to_owned(), Arc::downgrade(&conn), self.events.clone());
                Ok::<_, crate::error::Error>(conn)
            })
            .await?
            .clone();
        if conn.is_closed() {
            // The server exited since its last call: start a new one.
            self.forget(name, &slot).await;
            return Box::pin(self.get(name, params)).await;
        }
        Ok(conn)
    }

    /// `name`'s session if it is running now (none is started).
    pub async fn running(&self, name: &str) -> Option<Arc<McpConnection>> {
        let slots = self.slots.lock().await;
        slots
            .get(name)
            .and_then(|s| s.get())
            .filter(|c| !c.is_closed())
            .cloned()
    }

    /// Drop `name`'s session if it is still `slot` (a crashed server restarts on next use).
    async fn forget(&self, name: &str, slot: &Slot) {
        let mut slots = self.slots.lock().await;
        if slots.get(name).is_some_and(|s| Arc::ptr_eq(s, slot)) {
            slots.remove(name);
        }
    }

    /// Forget `name`'s session if it is `conn` (a call to it timed out: whatever the server
    /// sends later for that call is not waited for; the next call starts it afresh).
    pub async fn forget_conn(&self, name: &str, conn: &Arc<McpConnection>) {
        let mut slots = self.slots.lock().await;
        if slots
            .get(name)
            .and_then(|s| s.get())
            .is_some_and(|c| Arc::ptr_eq(c, conn))
        {
            slots.remove(name);
        }
    }

    /// Forget a session whose call failed because the connection is gone.
    pub async fn forget_if_closed(&self, name: &str, conn: &Arc<McpConnection>) {
        if !conn.is_closed() {
            return;
        }
        report_exit(&self.events, name, conn).await;
        self.forget_conn(name, conn).await;
    }

    /// Close `name`'s session (its parameters changed, or it was unregistered); it starts
    /// again on its next call.
    pub async fn close(&self, name: &str) {
        if let Some(slot) = self.slots.lock().await.remove(name) {
            close(slot).await;
        }
    }

    /// Close every session; servers restart lazily on their next call.
    pub async fn reset(&self) {
        let slots: Vec<Slot> = self.slots.lock().await.drain().map(|(_, s)| s).collect();
        for slot in slots {
            close(slot).await;
        }
    }
}

/// Report when `conn` goes away on its own (the server exited or crashed); a connection
/// ipybox closes or drops itself is not reported.
fn watch(name: String, conn: std::sync::Weak<McpConnection>, events: Events) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let Some(conn) = conn.upgrade() else { return };
            if conn.is_closed() {
                report_exit(&events, &name, &conn).await;
                return;
            }
        }
    });
}

/// Close a session's connection (and stop its server). Still in use by a call in flight, it
/// is dropped — and its server stopped — when the call ends.
async fn close(slot: Slot) {
    if let Some(conn) = Arc::into_inner(slot)
        .and_then(OnceCell::into_inner)
        .and_then(Arc::into_inner)
    {
        conn.close().await;
    }
}

async fn report_exit(events: &Events, name: &str, conn: &McpConnection) {
    if conn.claim_exit_report() {
        // Its exit status tells a crash (a code, a signal) from a clean exit; wait a little
        // for it, as the pipes close before the OS reports the process gone. That wait also
        // lets the stderr reader catch the last lines.
        let exit = conn.exit_status(Duration::from_secs(1)).await;
        events.send(SessionEvent::McpServerExited {
            server: name.to_owned(),
            stderr: conn.stderr_tail(),
            exit,
        });
    }
}
