//! The sessions of one server: the workspace they share, each session's executor, and the
//! pool that opens, ends and reaps them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{ErrorCode, ErrorData};
use rmcp::transport::streamable_http_server::session::SessionId;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::{AgentActivity, IpyboxMcpServer, KERNEL_ENV_PREFIX, Listener, McpServerConfig};
use crate::error::{Error, Result};
use crate::executor::CodeExecutor;
use crate::mcp::params::Variables;

/// Ends the sessions of a running HTTP server from outside it: the app's window closes an
/// agent's tab.
#[derive(Debug, Clone, Default)]
pub struct SessionControl(pub(super) Arc<Mutex<std::sync::Weak<Pool>>>);

impl SessionControl {
    /// End session `serial` (as [`AgentActivity`] numbers it) and stop its kernel; its
    /// client is told the session is gone. `false` when no such session runs.
    pub async fn end(&self, serial: u64, why: &str) -> bool {
        let Some(pool) = self.0.lock().ok().and_then(|p| p.upgrade()) else {
            return false;
        };
        let session = pool
            .sessions
            .lock()
            .ok()
            .and_then(|s| s.iter().find(|s| s.serial == serial).cloned());
        let Some(session) = session else {
            return false;
        };
        let ended = pool.end(&session, why.to_owned());
        if ended && let Some(id) = session.mcp_id() {
            use rmcp::transport::streamable_http_server::session::SessionManager;
            if let Err(e) = pool.manager.close_session(&id).await {
                tracing::warn!(error = %e, "closing an ended MCP session failed");
            }
        }
        ended
    }
}

/// What all sessions of one server share: the workspace and how a session's executor is
/// built.
#[derive(Debug)]
pub(super) struct Workspace {
    pub(super) config: McpServerConfig,
    pub(super) kernel_env: BTreeMap<String, String>,
    /// Counts registrations, so that every session's tool server learns a server registered
    /// in another session before it runs code again.
    pub(super) registrations: AtomicU64,
    pub(super) tool_router: ToolRouter<IpyboxMcpServer>,
}

impl Workspace {
    pub(super) fn open(mut config: McpServerConfig) -> Result<Arc<Self>> {
        // As the Python ipybox does: a configuration may name a workspace not made yet.
        std::fs::create_dir_all(&config.workspace).map_err(|e| {
            Error::config(format!(
                "the workspace {} cannot be created: {e}",
                config.workspace.display()
            ))
        })?;
        config.workspace = std::fs::canonicalize(&config.workspace).map_err(|e| {
            Error::config(format!(
                "the workspace {} is not usable: {e}",
                config.workspace.display()
            ))
        })?;
        let vars = Variables::load(Some(&config.workspace))?;
        let kernel_env = vars
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix(KERNEL_ENV_PREFIX)
                    .filter(|k| !k.is_empty())
                    .map(|k| (k.to_owned(), v.to_owned()))
            })
            .collect();
        Ok(Arc::new(Workspace {
            config,
            kernel_env,
            registrations: AtomicU64::new(0),
            tool_router: IpyboxMcpServer::tool_router(),
        }))
    }

    /// A session's executor, not started; `fixed`: on the fixed addresses (the one session
    /// of a stdio server).
    pub(super) fn executor(&self, fixed: bool) -> Result<CodeExecutor> {
        let c = &self.config;
        let mut builder = CodeExecutor::builder()
            .working_dir(&c.workspace)
            .kernel_env(self.kernel_env.clone())
            .approval_handler(c.approval.clone())
            .sandbox_options(c.sandbox.clone())
            .show_progress(true);
        if let Some(p) = &c.python {
            builder = builder.python(p);
        }
        if let Some(t) = c.approval_timeout {
            builder = builder.approval_timeout(t);
        }
        if let Some(gateway) = &c.gateway {
            builder = builder.remote_gateway(gateway);
        }
        if let Some(level) = &c.gateway_log_level {
            builder = builder.log_level(level);
        }
        if fixed && let Some(addr) = c.fixed.gateway {
            if addr.port() != 0 {
                // The gateway binds later, in the background: say now that it cannot.
                std::net::TcpListener::bind(addr).map_err(|e| {
                    Error::config(format!(
                        "the Kernel Gateway cannot listen on {addr} (--kernel-gateway-host/--kernel-gateway-port): {e}"
                    ))
                })?;
                builder = builder.gateway_port(addr.port());
            }
            builder = builder.gateway_host(addr.ip().to_string());
        }
        let executor = builder.build();
        if let Some(Listener(listener)) = c.listener.clone() {
            let mut events = executor.subscribe();
            tokio::spawn(async move {
                use tokio::sync::broadcast::error::RecvError;
                loop {
                    match events.recv().await {
                        Ok(event) => listener(event),
                        Err(RecvError::Lagged(n)) => {
                            tracing::warn!(missed = n, "a session-event listener fell behind");
                        }
                        Err(RecvError::Closed) => break,
                    }
                }
            });
        }
        Ok(executor)
    }
}

/// One MCP session's kernel.
#[derive(Debug)]
pub(super) struct Session {
    /// Numbers sessions for [`AgentActivity`].
    pub(super) serial: u64,
    pub(super) executor: CodeExecutor,
    /// [`Workspace::registrations`] as this session's tool server knows them.
    pub(super) synced: AtomicU64,
    pub(super) activity: Mutex<Activity>,
    /// The Streamable HTTP session id, learned from the client's first request after
    /// `initialize` (the id is made after the handler answers it).
    pub(super) mcp_id: Mutex<Option<SessionId>>,
    /// Why the session ended, once it has; its executor is then stopped.
    pub(super) ended: Mutex<Option<String>>,
    /// The MCP client as it declared itself on `initialize`.
    pub(super) client: Mutex<Option<crate::definition::Client>>,
}

#[derive(Debug)]
pub(super) struct Activity {
    pub(super) last: Instant,
    pub(super) in_flight: usize,
}

/// Marks a session busy while a tool call runs; idle time counts from the end of the last.
pub(super) struct Busy<'a>(&'a Session);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        if let Ok(mut a) = self.0.activity.lock() {
            a.in_flight = a.in_flight.saturating_sub(1);
            a.last = Instant::now();
        }
    }
}

impl Session {
    /// A session whose executor starts in the background right away: by the first tool call
    /// the kernel is (nearly) ready.
    pub(super) fn start(executor: CodeExecutor) -> Arc<Self> {
        let background = executor.clone();
        tokio::spawn(async move {
            if let Err(e) = background.start().await {
                tracing::error!(error = %e, "starting the kernel failed; the next call retries");
            }
        });
        static SERIAL: AtomicU64 = AtomicU64::new(1);
        Arc::new(Session {
            serial: SERIAL.fetch_add(1, Ordering::Relaxed),
            executor,
            synced: AtomicU64::new(0),
            activity: Mutex::new(Activity {
                last: Instant::now(),
                in_flight: 0,
            }),
            mcp_id: Mutex::new(None),
            ended: Mutex::new(None),
            client: Mutex::new(None),
        })
    }

    pub(super) fn busy(&self) -> Busy<'_> {
        if let Ok(mut a) = self.activity.lock() {
            a.in_flight += 1;
        }
        Busy(self)
    }

    /// How long the session has been without a tool call (`None` while one runs).
    pub(super) fn idle_for(&self) -> Option<Duration> {
        let a = self.activity.lock().ok()?;
        (a.in_flight == 0).then(|| a.last.elapsed())
    }

    pub(super) fn ended(&self) -> Option<String> {
        self.ended.lock().ok().and_then(|e| e.clone())
    }

    /// Where this session's code comes from, in words: "agent session 4f2a9c1e" over
    /// Streamable HTTP, "agent" over stdio.
    pub(super) fn origin(&self) -> String {
        match self.mcp_id() {
            Some(id) => format!("agent session {}", id.chars().take(8).collect::<String>()),
            None => "agent".to_owned(),
        }
    }

    /// Who this session is, for a person: the agent's client as it names itself, and the
    /// session ("The agent “claude-code 2.1” (agent session 4f2a9c1e)"). Untrusted text.
    pub(super) fn who(&self) -> String {
        let client = self.client.lock().ok().and_then(|c| c.clone());
        // Over stdio there is one session: nothing to tell it apart by.
        let session = match self.mcp_id() {
            Some(_) => format!(" ({})", self.origin()),
            None => String::new(),
        };
        match client.and_then(|c| c.declared()) {
            Some(name) => format!("The agent “{name}”{session}"),
            // None, or an SDK's default name ("mcp 0.1.0"): it did not say who it is.
            None => format!("An agent that did not give its name{session}"),
        }
    }

    /// The client connected (`initialize`) or learned its session id: approval requests and
    /// the audit log name it ("claude-code 2.1, session 4f2a9c1e, connected at …").
    pub(super) fn set_client(&self, info: Option<&rmcp::model::Implementation>) {
        let Ok(mut client) = self.client.lock() else {
            return;
        };
        let session = match self.mcp_id() {
            Some(id) => id.chars().take(8).collect(),
            None => format!("{}", self.serial),
        };
        let updated = match (info, client.take()) {
            (Some(info), _) => crate::definition::Client {
                name: info.name.chars().take(100).collect(),
                version: Some(info.version.chars().take(40).collect::<String>())
                    .filter(|v| !v.is_empty()),
                session,
                connected_at_ms: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or_default(),
            },
            (None, Some(known)) => crate::definition::Client { session, ..known },
            (None, None) => return,
        };
        self.executor.set_client(updated.clone());
        *client = Some(updated);
    }

    pub(super) fn mcp_id(&self) -> Option<SessionId> {
        self.mcp_id.lock().ok().and_then(|id| id.clone())
    }

    /// Start the executor now if it is not running, and let its tool server know the
    /// servers registered since it last looked.
    pub(super) async fn ready(&self, workspace: &Workspace) -> std::result::Result<(), String> {
        self.executor
            .start()
            .await
            .map_err(|e| format!("the kernel could not start: {e}"))?;
        let registered = workspace.registrations.load(Ordering::Acquire);
        if self.synced.load(Ordering::Acquire) < registered {
            self.executor
                .reload_registry()
                .map_err(|e| format!("reading the workspace's registered MCP servers: {e}"))?;
            self.synced.fetch_max(registered, Ordering::AcqRel);
        }
        Ok(())
    }
}

/// The sessions of an HTTP server.
#[derive(Debug)]
pub(super) struct Pool {
    pub(super) workspace: Arc<Workspace>,
    pub(super) max: usize,
    pub(super) sessions: Mutex<Vec<Arc<Session>>>,
    /// Executors being stopped, so that shutting down waits for them.
    pub(super) stopping: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    pub(super) manager: Arc<LocalSessionManager>,
}

impl Pool {
    /// A session for a client's `initialize`, unless `max` are running.
    pub(super) fn open(&self) -> std::result::Result<Arc<Session>, ErrorData> {
        let mut sessions = self
            .sessions
            .lock()
            .map_err(|_| ErrorData::internal_error("the session table is unusable", None))?;
        if sessions.len() >= self.max {
            return Err(ErrorData::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "ipybox is already serving its maximum of {max} sessions (--max-sessions {max}), each with a kernel of its own; end a session, let one idle out, or restart ipybox mcp with a higher --max-sessions",
                    max = self.max
                ),
                Some(serde_json::json!({"maxSessions": self.max})),
            ));
        }
        let executor = self
            .workspace
            .executor(false)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let session = Session::start(executor);
        sessions.push(session.clone());
        tracing::info!(sessions = sessions.len(), "MCP session started");
        Ok(session)
    }

    /// End `session` (once): it leaves the pool and its executor stops in the background.
    /// Returns whether it was still running.
    pub(super) fn end(&self, session: &Arc<Session>, why: String) -> bool {
        let removed = self.sessions.lock().is_ok_and(|mut s| {
            let before = s.len();
            s.retain(|other| !Arc::ptr_eq(other, session));
            s.len() < before
        });
        if !removed {
            return false;
        }
        tracing::info!(reason = %why, "MCP session ended; stopping its kernel");
        if let Some(activity) = &self.workspace.config.activity {
            activity.tell(AgentActivity::SessionEnded {
                session: session.serial,
                reason: why.clone(),
            });
        }
        if let Ok(mut ended) = session.ended.lock() {
            *ended = Some(why);
        }
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let executor = session.executor.clone();
            let task = handle.spawn(async move {
                if let Err(e) = executor.stop().await {
                    tracing::warn!(error = %e, "stopping a session's kernel failed");
                }
            });
            if let Ok(mut stopping) = self.stopping.lock() {
                stopping.retain(|t| !t.is_finished());
                stopping.push(task);
            }
        }
        true
    }

    /// End sessions idle for `idle`, and their MCP sessions with them: the client is told
    /// (`404`) rather than finding a fresh kernel where its variables were.
    pub(super) async fn reap(self: Arc<Self>, idle: Duration) {
        let period = (idle / 4).clamp(Duration::from_millis(250), Duration::from_secs(30));
        loop {
            tokio::time::sleep(period).await;
            let expired: Vec<Arc<Session>> = self
                .sessions
                .lock()
                .map(|s| {
                    s.iter()
                        .filter(|s| s.idle_for().is_some_and(|t| t >= idle))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            for session in expired {
                let why = format!(
                    "it had no tool call for {} s (--session-idle-timeout)",
                    idle.as_secs()
                );
                if self.end(&session, why)
                    && let Some(id) = session.mcp_id()
                {
                    use rmcp::transport::streamable_http_server::session::SessionManager;
                    if let Err(e) = self.manager.close_session(&id).await {
                        tracing::warn!(error = %e, "closing an idle MCP session failed");
                    }
                }
            }
        }
    }

    /// Stop every session's executor and wait for them all.
    pub(super) async fn stop_all(&self) {
        let sessions: Vec<Arc<Session>> =
            self.sessions.lock().map(|s| s.clone()).unwrap_or_default();
        for session in &sessions {
            self.end(session, "ipybox is shutting down".into());
        }
        let stopping: Vec<_> = self
            .stopping
            .lock()
            .map(|mut s| s.drain(..).collect())
            .unwrap_or_default();
        for task in stopping {
            let _ = task.await;
        }
    }
}

/// A server's hold on its session: set from the start (stdio) or on `initialize` (HTTP),
/// ended when the MCP session's handler is dropped.
#[derive(Debug, Default)]
pub(super) struct Slot {
    pub(super) session: OnceLock<Arc<Session>>,
    pub(super) pool: Option<Arc<Pool>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let (Some(pool), Some(session)) = (&self.pool, self.session.get()) {
            pool.end(session, "the client ended the MCP session".into());
        }
    }
}
