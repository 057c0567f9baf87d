//! The window's session: one executor on one workspace, its events forwarded to the window,
//! the input requests and executions the window may answer or cancel, and the app's
//! settings, which a running session follows as soon as they are saved.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tauri::{AppHandle, Emitter, Manager, Runtime};

use super::agents::{self, Agents};
use super::approval::{AddRule, Asker};
use super::dto::{AppSettings, AppState, DesktopError, McpEndpointState, StartState};
use super::place::{Launch, Place, Places, places};
use super::settings::{LiveSettings, Settings, SettingsFile};
use super::status;
use crate::audit::WorkspaceState;
use crate::error::Error;
use crate::executor::CodeExecutor;
use crate::executor::{CancelHandle, InputRequest};
use crate::instance::{Claim, InstancePaths, Owner, Request};
use crate::sync::lock;
use crate::tools::grants::{Grants, GrantsHandler};
use crate::tools::{Rule, Rules, RulesHandler};
use crate::workspace::{Recent, Target, display_name, read_notebook};
use tokio::sync::mpsc;

/// One workspace's executor and what the window shows of it.
#[derive(Debug)]
struct Session {
    executor: CodeExecutor,
    target: Target,
    status: status::Shared,
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
    endpoint: agents::Slot,
    /// Where its kernels run.
    place: Place,
    /// What its agents are served with (where their kernels run, who approves their calls).
    served: Agents,
    /// The Python its kernel runs.
    python: super::dto::KernelPython,
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
                // Same workspace, same Python: the kernel stays.
                Some(s)
                    if s.target.workspace == target.workspace
                        && s.python.choice
                            == super::python::choice_of(s.state.as_ref(), &target.notebook) =>
                {
                    s.target = target.clone();
                    None
                }
                _ => session.take(),
            }
        };
        if let Some(old) = old {
            agents::stop(&old.endpoint).await;
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

    /// A session on `target`: its approvals, where its kernels run, the executor, its
    /// status followed; the kernel starts in the background, and the agents' endpoint and
    /// link once it runs.
    fn start<R: Runtime>(&self, app: &AppHandle<R>, target: Target) -> Session {
        let state = WorkspaceState::of(&target.workspace)
            .inspect_err(|e| tracing::error!("no audit log or rules for this workspace: {e}"))
            .ok();
        // Rules first, then the grants the person gave for a session, then the person.
        let grants = Grants::new();
        {
            let app = app.clone();
            grants.listen(Arc::new(move |list| {
                let _ = app.emit("approval-grants", &list);
            }));
        }
        let asker = Asker::new(
            app.clone(),
            self.settings.clone(),
            grants.clone(),
            rule_keeper(app),
        );
        let rules = Arc::new(
            RulesHandler::new(rules_of(state.as_ref()))
                .then(Arc::new(GrantsHandler::new(grants.clone(), asker.clone()))),
        );
        let Places {
            notebook,
            agents,
            problem,
        } = places(&self.launch, &target.workspace, state.as_ref());
        let python = super::python::of_notebook(state.as_ref(), &target, &notebook);
        let mut builder = CodeExecutor::builder()
            .working_dir(&target.workspace)
            .sandbox_options(notebook.sandbox.clone())
            .approval_handler(rules.clone())
            .approval_timeout(self.settings.get().approval_timeout())
            .elicitation(crate::elicitation::Elicitation::Listeners);
        if let Some(remote) = &notebook.remote {
            builder = builder.remote_gateway(remote);
        }
        let (builder, problem) =
            super::python::apply(builder, &python, &target, &notebook, problem);
        let executor = builder.build();
        if let Some(state) = &state {
            state
                .audit_log()
                .record(target.workspace.clone(), executor.subscribe());
        }
        // Events first, so the window sees provisioning progress from the first step.
        let status = status::starting();
        status::follow(
            app,
            executor.subscribe(),
            status.clone(),
            asker,
            grants.clone(),
        );
        let started = match problem {
            Some(e) => Box::pin(std::future::ready(Err(e))),
            None => start_under_accepted_policy(app, &executor, &notebook, &target.workspace),
        };
        let link: Arc<Mutex<Option<crate::link::LinkServer>>> = Arc::default();
        let endpoint: agents::Slot = Arc::default();
        let served = Agents {
            workspace: target.workspace.clone(),
            approver: executor.clone(),
            place: agents,
            state: state.clone(),
            grants: grants.clone(),
        };
        let (app, slot, link_slot, failed, once_started) = (
            app.clone(),
            Arc::downgrade(&endpoint),
            Arc::downgrade(&link),
            status.clone(),
            served.clone(),
        );
        tauri::async_runtime::spawn(async move {
            match started.await {
                Ok(()) => once_started.serve_once_started(&app, slot, link_slot).await,
                Err(e) => status::failed(&app, &failed, e),
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
            place: notebook,
            served,
            python,
        }
    }

    /// The app's own MCP endpoint for agents, as it is now.
    pub async fn endpoint(&self) -> Result<McpEndpointState, DesktopError> {
        Ok(agents::state(&self.endpoint_slot()?).await)
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
        let (slot, agents, state) = {
            let session = lock(&self.session);
            let s = session.as_ref().ok_or(Error::NotRunning)?;
            let state = s
                .served
                .state
                .clone()
                .ok_or_else(|| Error::config("this workspace has no place in ipybox's data directory for its endpoint's settings"))?;
            (s.endpoint.clone(), s.served.clone(), state)
        };
        agents.set(app, &slot, &state, enabled, new_token).await
    }

    /// End agent session `serial` and its kernel; `false` when no such session runs.
    pub async fn end_agent_session(&self, serial: u64) -> Result<bool, DesktopError> {
        Ok(agents::end_session(&self.endpoint_slot()?, serial).await)
    }

    fn endpoint_slot(&self) -> Result<agents::Slot, DesktopError> {
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
        let (target, status, sandbox, remote, python) = {
            let session = lock(&self.session);
            let s = session.as_ref().ok_or(Error::NotRunning)?;
            (
                s.target.clone(),
                status::now(&s.status),
                s.place.sandbox.is_some(),
                s.place.remote.as_ref().map(|r| r.url.clone()),
                s.python.clone(),
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
            python,
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
            Some(text) => {
                let trusted = crate::home::ipybox_home()
                    .and_then(|home| super::trust::TrustStore::at(&home).is_trusted(text))
                    .unwrap_or(false);
                if trusted {
                    super::trust::vouched().read_trusted(text);
                }
                trusted
            }
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
        agents::stop(&old.endpoint).await;
        if let Err(e) = old.executor.stop().await {
            tracing::warn!("stopping the session: {e}");
        }
        let session = self.start(app, old.target.clone());
        *lock(&self.session) = Some(session);
        self.state()
    }

    /// The open notebook, its workspace's state (where its Python choice is kept), whether
    /// its kernels are sandboxed, and the Python they run.
    pub fn python_context(
        &self,
    ) -> Result<
        (
            Target,
            Option<WorkspaceState>,
            bool,
            super::dto::KernelPython,
        ),
        DesktopError,
    > {
        let session = lock(&self.session);
        let s = session.as_ref().ok_or(Error::NotRunning)?;
        Ok((
            s.target.clone(),
            s.state.clone(),
            s.place.sandbox.is_some(),
            s.python.clone(),
        ))
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

    /// Put `rule` before the workspace's others (the first rule that matches decides), saved
    /// as [`set_rules`](Self::set_rules) saves them; the rule as the audit log names it.
    pub fn add_rule_first(&self, rule: Rule) -> Result<String, DesktopError> {
        let text = rule.text();
        let mut rules = vec![rule];
        rules.extend(self.rules()?.rules().iter().cloned());
        self.set_rules(Rules::new(rules)?)?;
        Ok(text)
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
            agents::stop(&session.endpoint).await;
            if let Err(e) = session.executor.stop().await {
                tracing::warn!("stopping the session: {e}");
            }
        }
    }
}

/// The workspace's approval rules as kept; none when it keeps none. A rules file that
/// cannot be read allows nothing: every call asks until it is fixed.
fn rules_of(state: Option<&WorkspaceState>) -> Rules {
    state
        .map(|s| s.rules_file())
        .filter(|f| f.exists())
        .map(|f| {
            Rules::load(&f).unwrap_or_else(|e| {
                tracing::error!("{e}; every tool call asks until the rules are fixed");
                Rules::default()
            })
        })
        .unwrap_or_default()
}

/// What "Always allow this tool" in the approval dialog calls: the rule goes first among
/// the rules of whichever session is open.
fn rule_keeper<R: Runtime>(app: &AppHandle<R>) -> AddRule {
    let app = app.clone();
    Arc::new(move |rule| {
        app.try_state::<Desktop>()
            .ok_or("the app has no workspace open")?
            .add_rule_first(rule)
            .map_err(|e| e.message)
    })
}

/// Start `executor`'s kernel. Under a workspace policy nobody accepted, the person sees it
/// first, in a native dialog, and the kernel starts only under what they accepted.
fn start_under_accepted_policy<R: Runtime>(
    app: &AppHandle<R>,
    executor: &CodeExecutor,
    place: &Place,
    workspace: &std::path::Path,
) -> std::pin::Pin<Box<dyn Future<Output = crate::error::Result<()>> + Send>> {
    match place
        .sandbox
        .as_ref()
        .and_then(|o| super::policy::to_review(o, workspace))
    {
        Some(review) => {
            let (app, executor, workspace) =
                (app.clone(), executor.clone(), workspace.to_path_buf());
            Box::pin(async move {
                super::policy::ask_to_accept(&app, &workspace, review).await?;
                executor.start_now().await
            })
        }
        None => Box::pin(executor.start_now()),
    }
}
