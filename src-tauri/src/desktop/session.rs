//! The window's session: one executor on one workspace, its events forwarded to the window,
//! the input requests and executions the window may answer or cancel, and the app's
//! settings, which a running session follows as soon as they are saved.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tauri::{AppHandle, Emitter, Runtime};

use super::approval::Asker;
use super::dto::{
    AppSettings, AppState, DesktopError, KernelStatus, McpEndpointState, Provisioning, StartState,
};
use super::endpoint::{Endpoint, Place, Saved, Serve};
use super::settings::{LiveSettings, Settings, SettingsFile};
use crate::audit::WorkspaceState;
use crate::error::Error;
use crate::events::SessionEvent;
use crate::executor::CodeExecutor;
use crate::executor::{CancelHandle, InputRequest};
use crate::instance::{Claim, InstancePaths, Owner, Request};
use crate::tools::grants::{Grants, GrantsHandler};
use crate::tools::{Rules, RulesHandler};
use crate::workspace::{Recent, Target, display_name, read_notebook};
use tokio::sync::mpsc;

/// How the app was asked to run.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// Run kernels in the sandbox, with this policy.
    pub sandbox: Option<crate::sandbox::SandboxOptions>,
    /// Run kernels on this server (`--gateway-url`).
    pub remote: Option<crate::executor::RemoteGateway>,
}

/// One workspace's executor and what the window shows of it.
#[derive(Debug)]
struct Session {
    executor: CodeExecutor,
    target: Target,
    status: Arc<Mutex<Status>>,
    /// The workspace's approval rules, then the person.
    rules: Arc<RulesHandler>,
    /// Where its rules and audit log are kept.
    state: Option<WorkspaceState>,
    /// What the person allowed for a session ("Allow for this session").
    grants: Arc<Grants>,
    /// Where agents on this workspace (`ipybox mcp --approval desktop`) ask for approval,
    /// once the kernel runs; dropping the session closes it.
    #[allow(dead_code, reason = "held for its lifetime, never read")]
    link: Arc<Mutex<Option<crate::link::LinkServer>>>,
    /// The app's own MCP endpoint for agents, when it serves one.
    endpoint: Arc<tokio::sync::Mutex<EndpointSlot>>,
    /// Where its kernels run.
    place: Place,
    /// Where agents' kernels run: on the same server, or sandboxed here whenever the
    /// sandbox works, even when the notebook's kernel is not.
    agents: Place,
}

/// The endpoint as it is: serving, or why it could not.
#[derive(Debug, Default)]
struct EndpointSlot {
    running: Option<Endpoint>,
    error: Option<String>,
    /// The agents' kernels run in the sandbox.
    sandboxed: bool,
}

/// The kernel as last seen, kept for a window that loads after the events were sent.
#[derive(Debug, Clone)]
struct Status {
    kernel: KernelStatus,
    provisioning: Option<Provisioning>,
    startup_error: Option<DesktopError>,
}

/// The app's managed state: cheap to share between commands.
#[derive(Debug)]
pub struct Desktop {
    launch: Launch,
    recent: Option<Recent>,
    settings_file: Option<SettingsFile>,
    /// As saved (read once, when the app starts), and in force.
    settings: LiveSettings,
    session: Mutex<Option<Session>>,
    inputs: Mutex<HashMap<u64, InputRequest>>,
    executions: Mutex<HashMap<String, CancelHandle>>,
    next_input: AtomicU64,
    /// The lock and socket of the workspace open now: no other app opens it meanwhile.
    instance: Mutex<Option<Owner>>,
    /// Where the socket of a workspace opened later sends its requests.
    requests: mpsc::UnboundedSender<Request>,
    /// Whether the window has loaded (it asked for the app's state).
    loaded: tokio::sync::watch::Sender<bool>,
}

impl Desktop {
    /// State for `launch`, holding `instance` (the workspace's lock and socket), whose
    /// requests arrive through `requests`; no session yet.
    pub fn new(
        launch: Launch,
        instance: Option<Owner>,
        requests: mpsc::UnboundedSender<Request>,
    ) -> Desktop {
        let settings_file = crate::home::ipybox_home()
            .ok()
            .map(|h| SettingsFile::new(&h));
        let settings = LiveSettings::new(
            settings_file
                .as_ref()
                .map(SettingsFile::load)
                .unwrap_or_default(),
        );
        Desktop {
            launch,
            recent: crate::home::ipybox_home().ok().map(|h| Recent::new(&h)),
            settings_file,
            settings,
            session: Mutex::new(None),
            inputs: Mutex::default(),
            executions: Mutex::default(),
            next_input: AtomicU64::new(1),
            instance: Mutex::new(instance),
            requests,
            loaded: tokio::sync::watch::Sender::new(false),
        }
    }

    /// The window loaded: requests from outside may now be shown in it.
    pub fn mark_loaded(&self) {
        self.loaded.send_replace(true);
    }

    /// Wait until the window has loaded.
    pub async fn window_loaded(&self) {
        let mut loaded = self.loaded.subscribe();
        let _ = loaded.wait_for(|l| *l).await;
    }

    /// The person uses this app now: `ipybox://` links come here.
    pub fn mark_used(&self) {
        if let Some(owner) = lock(&self.instance).as_ref() {
            owner.mark_used();
        }
    }

    /// Take `workspace`'s lock and socket for this app before moving there, letting go of
    /// the old workspace's. `false` when another app runs there: it got `notebook` instead.
    async fn move_instance(&self, workspace: &std::path::Path, notebook: &std::path::Path) -> bool {
        let paths = match InstancePaths::of(workspace) {
            Ok(paths) => paths,
            Err(e) => {
                tracing::warn!("another app could open this workspace too: {e}");
                lock(&self.instance).take();
                return true;
            }
        };
        match crate::instance::claim(&paths, self.requests.clone()) {
            Ok(Claim::Owner(owner)) => {
                *lock(&self.instance) = Some(owner);
                true
            }
            Ok(Claim::Taken) => {
                let request = Request::Open {
                    notebook: Some(notebook.to_path_buf()),
                };
                if let Err(e) = crate::instance::send(&paths, &request).await {
                    tracing::warn!("the app open on that workspace does not answer: {e}");
                }
                false
            }
            Err(e) => {
                tracing::warn!("another app could open this workspace too: {e}");
                lock(&self.instance).take();
                true
            }
        }
    }

    /// Open `target`: stop the current session (if another workspace), start one there,
    /// its kernel starting in the background while the window draws.
    pub async fn open<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        target: Target,
    ) -> Result<AppState, DesktopError> {
        let moving = lock(&self.session)
            .as_ref()
            .is_none_or(|s| s.target.workspace != target.workspace);
        if moving
            && !self
                .move_instance(&target.workspace, &target.notebook)
                .await
        {
            return Err(Error::config(format!(
                "{} is open in another ipybox window; that window was brought forward",
                target.workspace.display()
            ))
            .into());
        }
        let old = {
            let mut session = lock(&self.session);
            match session.as_mut() {
                Some(s) if s.target.workspace == target.workspace => {
                    s.target = target.clone();
                    None
                }
                _ => session.take(),
            }
        };
        if let Some(old) = old {
            old.stop_endpoint().await;
            old.executor.stop().await?;
        }
        let needs_start = lock(&self.session).is_none();
        if needs_start {
            let session = self.start(app, target.clone());
            *lock(&self.session) = Some(session);
        }
        if let Some(recent) = &self.recent
            && let Err(e) = recent.push(&target.workspace)
        {
            tracing::warn!("recent workspaces not saved: {e}");
        }
        self.state()
    }

    /// The first session, when the app starts: the kernel starts while the window opens.
    pub fn begin<R: Runtime>(&self, app: &AppHandle<R>, target: Target) {
        if let Some(recent) = &self.recent
            && let Err(e) = recent.push(&target.workspace)
        {
            tracing::warn!("recent workspaces not saved: {e}");
        }
        let session = self.start(app, target);
        *lock(&self.session) = Some(session);
    }

    fn start<R: Runtime>(&self, app: &AppHandle<R>, target: Target) -> Session {
        let state = WorkspaceState::of(&target.workspace)
            .inspect_err(|e| tracing::error!("no audit log or rules for this workspace: {e}"))
            .ok();
        let rules = state
            .as_ref()
            .map(|s| s.rules_file())
            .filter(|f| f.exists())
            .map(|f| {
                Rules::load(&f).unwrap_or_else(|e| {
                    // Nothing is allowed by a rules file that cannot be read: every call asks.
                    tracing::error!("{e}; every tool call asks until the rules are fixed");
                    Rules::default()
                })
            })
            .unwrap_or_default();
        // Rules first, then the grants the person gave for a session, then the person.
        let grants = Grants::new();
        {
            let app = app.clone();
            grants.listen(Arc::new(move |list| {
                let _ = app.emit("approval-grants", &list);
            }));
        }
        let asker = Asker::new(app.clone(), self.settings.clone(), grants.clone());
        let rules = Arc::new(
            RulesHandler::new(rules)
                .then(Arc::new(GrantsHandler::new(grants.clone(), asker.clone()))),
        );
        let kernel_grants = grants.clone();
        // The command line's server or sandbox, else the workspace's choice (kept out of its
        // reach). A server whose token cannot be read is an error shown in the window, never a
        // kernel started elsewhere than chosen.
        let (remote, remote_problem) =
            match super::remote::remote_for(self.launch.remote.as_ref(), state.as_ref()) {
                Ok(remote) => (remote, None),
                Err(e) => (None, Some(e)),
            };
        let sandbox = if remote.is_some() || remote_problem.is_some() {
            None
        } else {
            super::policy::sandbox_for(
                self.launch.sandbox.as_ref(),
                &target.workspace,
                state.as_ref(),
            )
        };
        let agents = Place {
            sandbox: match &remote {
                Some(_) => None,
                None => super::policy::agents_sandbox(
                    sandbox.as_ref(),
                    &target.workspace,
                    state.as_ref(),
                ),
            },
            remote: remote.clone(),
        };
        let mut builder = CodeExecutor::builder()
            .working_dir(&target.workspace)
            .sandbox_options(sandbox.clone())
            .approval_handler(rules.clone())
            .approval_timeout(self.settings.get().approval_timeout())
            .elicitation(crate::elicitation::Elicitation::Listeners);
        if let Some(remote) = &remote {
            builder = builder.remote_gateway(remote);
        }
        let executor = builder.build();
        if let Some(state) = &state {
            state
                .audit_log()
                .record(target.workspace.clone(), executor.subscribe());
        }
        let status = Arc::new(Mutex::new(Status {
            kernel: KernelStatus::Starting,
            provisioning: None,
            startup_error: None,
        }));
        // Events first, so the window sees provisioning progress from the first step.
        let mut events = executor.subscribe();
        let started: std::pin::Pin<Box<dyn Future<Output = crate::error::Result<()>> + Send>> =
            match remote_problem {
                Some(e) => Box::pin(std::future::ready(Err(e))),
                None => match sandbox
                    .as_ref()
                    .and_then(|o| super::policy::to_review(o, &target.workspace))
                {
                    // A workspace policy nobody accepted: the person sees it first, in a
                    // native dialog, and the kernel starts only under what they accepted.
                    Some(review) => {
                        let (app, executor, workspace) =
                            (app.clone(), executor.clone(), target.workspace.clone());
                        Box::pin(async move {
                            super::policy::ask_to_accept(&app, &workspace, review).await?;
                            executor.start_now().await
                        })
                    }
                    None => Box::pin(executor.start_now()),
                },
            };
        let (emit_app, emit_status) = (app.clone(), status.clone());
        tauri::async_runtime::spawn(async move {
            use tokio::sync::broadcast::error::RecvError;
            loop {
                match events.recv().await {
                    Ok(event) => {
                        let now = match &event {
                            SessionEvent::Started | SessionEvent::KernelIdle => {
                                Some(KernelStatus::Idle)
                            }
                            SessionEvent::KernelBusy { .. } => Some(KernelStatus::Busy),
                            SessionEvent::KernelReplaced { .. } => Some(KernelStatus::Idle),
                            SessionEvent::Stopped => Some(KernelStatus::Dead),
                            _ => None,
                        };
                        {
                            let mut status = lock(&emit_status);
                            if let Some(now) = now {
                                status.kernel = now;
                            }
                            status.provisioning = match &event {
                                SessionEvent::Provisioning {
                                    step,
                                    steps,
                                    message,
                                } => Some(Provisioning {
                                    step: *step,
                                    steps: *steps,
                                    message: message.clone(),
                                }),
                                _ => None,
                            };
                        }
                        if let SessionEvent::ApprovalDecided { id, .. }
                        | SessionEvent::ApprovalWithdrawn { id, .. } = &event
                        {
                            asker.settled(*id);
                        }
                        // A grant for the notebook lasts as long as its kernel.
                        if matches!(
                            event,
                            SessionEvent::KernelReplaced { .. } | SessionEvent::Stopped
                        ) {
                            kernel_grants.kernel_ended();
                        }
                        let _ = emit_app.emit("session", &event);
                        if matches!(event, SessionEvent::Stopped) {
                            break;
                        }
                    }
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => break,
                }
            }
        });
        let (fail_app, fail_status) = (app.clone(), status.clone());
        let link: Arc<Mutex<Option<crate::link::LinkServer>>> = Arc::default();
        let (link_slot, link_executor) = (Arc::downgrade(&link), executor.clone());
        let link_workspace = target.workspace.clone();
        let endpoint: Arc<tokio::sync::Mutex<EndpointSlot>> = Arc::default();
        let serve_later = {
            let (app, slot) = (app.clone(), Arc::downgrade(&endpoint));
            let (workspace, approver) = (target.workspace.clone(), executor.clone());
            let place = agents.clone();
            let state = state.clone();
            async move {
                let Some(state) = state else { return };
                let saved = Saved::load(state.dir());
                if !saved.enabled {
                    return;
                }
                let Some(slot) = slot.upgrade() else { return };
                let mut slot = slot.lock().await;
                if slot.running.is_some() {
                    // Switched on in the window while the kernel started.
                    return;
                }
                serve(&mut slot, &app, &workspace, approver, place, &state, saved).await;
                // The window asked before the endpoint was up: tell it now.
                let _ = app.emit("endpoint", endpoint_state(&slot));
            }
        };
        tauri::async_runtime::spawn(async move {
            let started = started.await;
            if started.is_ok() {
                serve_later.await;
                // Agents' calls are approved here once there is a session to approve them in.
                match crate::link::LinkServer::serve(&link_workspace, link_executor).await {
                    Ok(server) => match link_slot.upgrade() {
                        Some(slot) => *lock(&slot) = Some(server),
                        None => drop(server),
                    },
                    Err(e) => tracing::warn!("agents cannot ask this window for approval: {e}"),
                }
            }
            if let Err(e) = started {
                let error = DesktopError::from(e);
                {
                    let mut status = lock(&fail_status);
                    status.kernel = KernelStatus::Dead;
                    status.provisioning = None;
                    status.startup_error = Some(error.clone());
                }
                let _ = fail_app.emit(
                    "session",
                    serde_json::json!({
                        "type": "startup_failed",
                        "code": error.code,
                        "message": error.message,
                    }),
                );
            }
        });
        Session {
            executor,
            target,
            status,
            rules,
            state,
            grants,
            link,
            endpoint,
            place: Place { sandbox, remote },
            agents,
        }
    }

    /// The app's own MCP endpoint for agents, as it is now.
    pub async fn endpoint(&self) -> Result<McpEndpointState, DesktopError> {
        let slot = self.endpoint_slot()?;
        let slot = slot.lock().await;
        Ok(endpoint_state(&slot))
    }

    /// Serve agents over MCP on this workspace, or stop (agents' sessions end, their
    /// kernels stop); `new_token`: serve with a new token (configurations with the old one
    /// stop working). Kept for the next time the workspace opens.
    pub async fn set_endpoint<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        enabled: bool,
        new_token: bool,
    ) -> Result<McpEndpointState, DesktopError> {
        let (slot, workspace, approver, place, state) = {
            let session = lock(&self.session);
            let s = session.as_ref().ok_or(Error::NotRunning)?;
            let state = s
                .state
                .clone()
                .ok_or_else(|| Error::config("this workspace has no place in ipybox's data directory for its endpoint's settings"))?;
            (
                s.endpoint.clone(),
                s.target.workspace.clone(),
                s.executor.clone(),
                s.agents.clone(),
                state,
            )
        };
        let mut slot = slot.lock().await;
        if enabled && slot.running.is_none() {
            let sandboxed = place.sandbox.is_some() || place.remote.is_some();
            let question = super::confirm::Question {
                title: "Serve agents on this workspace?".into(),
                message: format!(
                    "Any program on this computer that has the token shown in the window (an agent such as Claude Code) can then run code on {} and call this workspace's MCP tools. Each tool call still asks you, as the notebook's calls do.\n\n{}",
                    workspace.display(),
                    if place.remote.is_some() {
                        "The agents' code runs on the kernel server this workspace uses, not on this computer."
                    } else if sandboxed {
                        "The agents' code runs in the sandbox, under this workspace's policy, even if your own cells do not."
                    } else {
                        "The kernel is NOT sandboxed: the agents' code runs with your own rights. It can read every file you can, change or delete them, start programs and reach the network."
                    }
                ),
                detail: String::new(),
                yes: "Serve agents".into(),
                no: "Cancel".into(),
            };
            if !super::confirm::confirm(app, question).await {
                return Ok(endpoint_state(&slot));
            }
        }
        if let Some(running) = slot.running.take() {
            running.stop().await;
        }
        slot.error = None;
        let mut saved = Saved::load(state.dir());
        saved.enabled = enabled;
        if new_token {
            saved.token = None;
        }
        state.create()?;
        if enabled {
            serve(&mut slot, app, &workspace, approver, place, &state, saved).await;
        } else {
            saved.save(state.dir())?;
        }
        Ok(endpoint_state(&slot))
    }

    /// End agent session `serial` and its kernel; `false` when no such session runs.
    pub async fn end_agent_session(&self, serial: u64) -> Result<bool, DesktopError> {
        let slot = self.endpoint_slot()?;
        let slot = slot.lock().await;
        Ok(match &slot.running {
            Some(endpoint) => endpoint.end_session(serial).await,
            None => false,
        })
    }

    fn endpoint_slot(&self) -> Result<Arc<tokio::sync::Mutex<EndpointSlot>>, DesktopError> {
        Ok(lock(&self.session)
            .as_ref()
            .ok_or(Error::NotRunning)?
            .endpoint
            .clone())
    }

    /// The app's settings, as saved and in force (the defaults without a data directory).
    pub fn app_settings(&self) -> AppSettings {
        AppSettings {
            approval_timeout_secs: self.settings.get().approval_timeout_secs,
        }
    }

    /// Check `settings`, keep them in ipybox's data directory and put them in force: the
    /// running session's next approval request waits the new timeout (one already waiting
    /// keeps its own), with the kernel and its state untouched.
    pub fn set_settings(&self, settings: Settings) -> Result<AppSettings, DesktopError> {
        self.settings_file
            .as_ref()
            .ok_or_else(|| Error::config("ipybox has no data directory to keep settings in"))?
            .save(&settings)?;
        self.settings.set(settings);
        if let Ok(executor) = self.executor() {
            executor.set_approval_timeout(settings.approval_timeout());
        }
        Ok(self.app_settings())
    }

    /// What the window draws.
    pub fn state(&self) -> Result<AppState, DesktopError> {
        let (target, status, sandbox, remote) = {
            let session = lock(&self.session);
            let s = session.as_ref().ok_or(Error::NotRunning)?;
            (
                s.target.clone(),
                lock(&s.status).clone(),
                s.place.sandbox.is_some(),
                s.place.remote.as_ref().map(|r| r.url.clone()),
            )
        };
        Ok(AppState {
            workspace: target.workspace.display().to_string(),
            workspace_name: display_name(&target.workspace),
            notebook_path: target.notebook.display().to_string(),
            notebook: read_notebook(&target.notebook)?,
            recent: self
                .recent
                .as_ref()
                .map(|r| r.list())
                .unwrap_or_default()
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            sandbox,
            remote,
            kernel: status.kernel,
            provisioning: status.provisioning,
            startup_error: status.startup_error,
        })
    }

    /// The window's initialization script: the state it draws first, handed over before
    /// the page's scripts run, so that its cells show without a round trip to ask for them
    /// (the page asks again once it listens, and takes the state handed over only once).
    /// Nothing when there is no session yet.
    pub fn start_script(&self) -> String {
        let Ok(state) = self.state() else {
            return String::new();
        };
        let trusted = match &state.notebook {
            None => true,
            Some(text) => crate::home::ipybox_home()
                .and_then(|home| super::trust::TrustStore::at(&home).is_trusted(text))
                .unwrap_or(false),
        };
        match serde_json::to_string(&StartState { state, trusted }) {
            // JSON is a JavaScript expression; the page deletes the property once read.
            Ok(json) => format!(
                "Object.defineProperty(window, '__IPYBOX_START__', {{ value: {json}, configurable: true }});"
            ),
            Err(_) => String::new(),
        }
    }

    /// The sandbox `--sandbox`/`--sandbox-config` set for this run.
    pub fn launch_sandbox(&self) -> Option<crate::sandbox::SandboxOptions> {
        self.launch.sandbox.clone()
    }

    /// The server `--gateway-url` set for this run.
    pub fn launch_remote(&self) -> Option<crate::executor::RemoteGateway> {
        self.launch.remote.clone()
    }

    /// The server the current session's kernels run on (its URL), when not this computer.
    pub fn session_remote(&self) -> Result<Option<String>, DesktopError> {
        Ok(lock(&self.session)
            .as_ref()
            .ok_or(Error::NotRunning)?
            .place
            .remote
            .as_ref()
            .map(|r| r.url.clone()))
    }

    /// The sandbox the current session's kernels run in.
    pub fn session_sandbox(&self) -> Result<Option<crate::sandbox::SandboxOptions>, DesktopError> {
        Ok(lock(&self.session)
            .as_ref()
            .ok_or(Error::NotRunning)?
            .place
            .sandbox
            .clone())
    }

    /// Stop the session and start a new one on the same notebook (the sandbox choice
    /// changed): kernels, gateway and agents' sessions stop, their state lost.
    pub async fn restart<R: Runtime>(&self, app: &AppHandle<R>) -> Result<AppState, DesktopError> {
        let old = lock(&self.session).take().ok_or(Error::NotRunning)?;
        old.stop_endpoint().await;
        if let Err(e) = old.executor.stop().await {
            tracing::warn!("stopping the session: {e}");
        }
        let session = self.start(app, old.target.clone());
        *lock(&self.session) = Some(session);
        self.state()
    }

    /// The current session's executor.
    pub fn executor(&self) -> Result<CodeExecutor, DesktopError> {
        Ok(lock(&self.session)
            .as_ref()
            .ok_or(Error::NotRunning)?
            .executor
            .clone())
    }

    /// The session grants in force.
    pub fn grants(&self) -> Result<Arc<Grants>, DesktopError> {
        Ok(lock(&self.session)
            .as_ref()
            .ok_or(Error::NotRunning)?
            .grants
            .clone())
    }

    /// The approval rules in force.
    pub fn rules(&self) -> Result<Arc<Rules>, DesktopError> {
        Ok(lock(&self.session)
            .as_ref()
            .ok_or(Error::NotRunning)?
            .rules
            .rules())
    }

    /// Check `rules`, save them for the workspace (atomically, out of the workspace's reach)
    /// and decide calls by them from now on.
    pub fn set_rules(&self, rules: Rules) -> Result<(), DesktopError> {
        let session = lock(&self.session);
        let s = session.as_ref().ok_or(Error::NotRunning)?;
        let state = s
            .state
            .as_ref()
            .ok_or_else(|| Error::config("this workspace has no place for its rules"))?;
        state.create()?;
        crate::fsutil::write_private(&state.rules_file(), rules.to_json().as_bytes())?;
        s.rules.set_rules(rules);
        Ok(())
    }

    /// The workspace's audit log.
    pub fn audit_log(&self) -> Result<crate::audit::AuditLog, DesktopError> {
        Ok(lock(&self.session)
            .as_ref()
            .ok_or(Error::NotRunning)?
            .state
            .as_ref()
            .ok_or_else(|| Error::config("this workspace has no audit log"))?
            .audit_log())
    }

    /// The current workspace.
    pub fn workspace(&self) -> Result<PathBuf, DesktopError> {
        Ok(lock(&self.session)
            .as_ref()
            .ok_or(Error::NotRunning)?
            .target
            .workspace
            .clone())
    }

    /// Keep `request` until the window answers it; its id.
    pub fn hold_input(&self, request: InputRequest) -> u64 {
        let id = self.next_input.fetch_add(1, Ordering::Relaxed);
        lock(&self.inputs).insert(id, request);
        id
    }

    /// Answer input request `id`; false when it no longer waits.
    pub fn reply_input(&self, id: u64, value: String) -> bool {
        match lock(&self.inputs).remove(&id) {
            Some(request) => {
                request.reply(value);
                true
            }
            None => false,
        }
    }

    /// Remember how to cancel execution `id`.
    pub fn track(&self, id: String, cancel: CancelHandle) {
        lock(&self.executions).insert(id, cancel);
    }

    /// The execution `id` ended.
    pub fn untrack(&self, id: &str) {
        lock(&self.executions).remove(id);
    }

    /// Cancel execution `id` (queued: never runs; running: interrupted).
    pub fn cancel(&self, id: &str) -> bool {
        match lock(&self.executions).remove(id) {
            Some(cancel) => {
                cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Stop the session (the app is closing): kernels, gateway, MCP servers.
    pub async fn shutdown(&self) {
        let session = lock(&self.session).take();
        if let Some(session) = session {
            session.stop_endpoint().await;
            if let Err(e) = session.executor.stop().await {
                tracing::warn!("stopping the session: {e}");
            }
        }
    }
}

impl Session {
    /// Stop serving agents: their sessions end, their kernels stop.
    async fn stop_endpoint(&self) {
        let running = self.endpoint.lock().await.running.take();
        if let Some(running) = running {
            running.stop().await;
        }
    }
}

/// Start serving into `slot` (which is empty), and keep what it served with; a failure is
/// kept in the slot for the window to show.
async fn serve<R: Runtime>(
    slot: &mut EndpointSlot,
    app: &AppHandle<R>,
    workspace: &std::path::Path,
    approver: CodeExecutor,
    place: Place,
    state: &WorkspaceState,
    saved: Saved,
) {
    let serve = Serve {
        app,
        workspace,
        approver,
        place,
        audit: Some(state.audit_log()),
    };
    slot.sandboxed = serve.place.sandbox.is_some();
    match Endpoint::start(serve, &saved).await {
        Ok((endpoint, kept)) => {
            if let Err(e) = kept.save(state.dir()) {
                tracing::warn!("the MCP endpoint's settings were not kept: {e}");
            }
            tracing::info!(url = %endpoint.url, "serving agents over MCP");
            slot.running = Some(endpoint);
        }
        Err(e) => slot.error = Some(e.to_string()),
    }
}

fn endpoint_state(slot: &EndpointSlot) -> McpEndpointState {
    McpEndpointState {
        enabled: slot.running.is_some(),
        url: slot.running.as_ref().map(|e| e.url.clone()),
        token: slot.running.as_ref().map(|e| e.token.clone()),
        error: slot.error.clone(),
        sandboxed: slot.sandboxed,
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
