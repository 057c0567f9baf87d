//! Session grants: "Allow for this session" in the approval dialog. A grant allows every
//! call to one tool of one server from one caller's session: the notebook's kernel until it
//! restarts or stops, or one agent's session until it ends. Grants live in memory only (a
//! restart of the app forgets them), are checked before a person is asked (a granted call
//! never opens a dialog), and can be revoked at any time.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde::Serialize;

use crate::approval::{ApprovalHandler, ApprovalRequest, Decision};
use crate::events::DecidedBy;
use crate::sync::lock;

/// Whose session a grant covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum GrantScope {
    /// The notebook's kernel, until it restarts or stops.
    Notebook,
    /// One agent's session, until it ends.
    Agent,
}

/// One grant, as the window lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Grant {
    /// Its id, for [`Grants::revoke`].
    pub id: u64,
    /// The registered server's name.
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// Whose session it covers.
    pub scope: GrantScope,
    /// The session: the agent session's id, or the notebook kernel's generation (a number
    /// that changes when the kernel restarts).
    pub session: String,
    /// When it was granted, in milliseconds since the Unix epoch.
    pub granted_at: u64,
}

/// Called with every grant in force whenever they change.
pub type GrantsListener = Arc<dyn Fn(Vec<Grant>) + Send + Sync>;

/// The grants in force, and the notebook kernel's current generation.
#[derive(Default)]
pub struct Grants {
    state: Mutex<State>,
    listener: Mutex<Option<GrantsListener>>,
}

#[derive(Debug, Default)]
struct State {
    grants: Vec<Grant>,
    next_id: u64,
    /// Changes when the notebook's kernel restarts or stops: the grants of the kernel
    /// before are dropped, and calls of the new one ask again.
    kernel: u64,
}

impl std::fmt::Debug for Grants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grants")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// Whose session `request` comes from: an agent's (its MCP client's session, or the session
/// its origin names, "agent session 4f2a9c1e"), else the notebook's kernel.
fn caller(request: &ApprovalRequest, kernel: u64) -> (GrantScope, String) {
    if let Some(client) = &request.details().client {
        return (GrantScope::Agent, client.session.clone());
    }
    if let Some(session) = request
        .origin()
        .and_then(|o| o.strip_prefix("agent session "))
        .and_then(|rest| rest.split([',', ' ']).next())
        .filter(|s| !s.is_empty())
    {
        return (GrantScope::Agent, session.to_owned());
    }
    (GrantScope::Notebook, kernel.to_string())
}

impl Grants {
    /// No grants yet.
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// Tell `listener` of every change from now on.
    pub fn listen(&self, listener: GrantsListener) {
        *lock(&self.listener) = Some(listener);
    }

    /// Every grant in force, oldest first.
    pub fn list(&self) -> Vec<Grant> {
        lock(&self.state).grants.clone()
    }

    /// Allow every call to `request`'s tool from `request`'s caller for the rest of that
    /// caller's session; the grant (an existing one when there is one already).
    pub fn grant(&self, request: &ApprovalRequest) -> Grant {
        let grant = {
            let mut s = lock(&self.state);
            let (scope, session) = caller(request, s.kernel);
            if let Some(g) = s.grants.iter().find(|g| {
                g.scope == scope
                    && g.session == session
                    && g.server == request.server_name()
                    && g.tool == request.tool_name()
            }) {
                return g.clone();
            }
            s.next_id += 1;
            let grant = Grant {
                id: s.next_id,
                server: request.server_name().to_owned(),
                tool: request.tool_name().to_owned(),
                scope,
                session,
                granted_at: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or_default(),
            };
            s.grants.push(grant.clone());
            grant
        };
        self.changed();
        grant
    }

    /// The grant that allows `request`, if any.
    pub fn covering(&self, request: &ApprovalRequest) -> Option<Grant> {
        let s = lock(&self.state);
        let (scope, session) = caller(request, s.kernel);
        s.grants
            .iter()
            .find(|g| {
                g.scope == scope
                    && g.session == session
                    && g.server == request.server_name()
                    && g.tool == request.tool_name()
            })
            .cloned()
    }

    /// Take back the grant `id`; `false` when there is none (revoked already, or its
    /// session ended).
    pub fn revoke(&self, id: u64) -> bool {
        let removed = {
            let mut s = lock(&self.state);
            let before = s.grants.len();
            s.grants.retain(|g| g.id != id);
            s.grants.len() != before
        };
        if removed {
            self.changed();
        }
        removed
    }

    /// The notebook's kernel restarted or stopped: its grants end.
    pub fn kernel_ended(&self) {
        let removed = {
            let mut s = lock(&self.state);
            s.kernel += 1;
            let before = s.grants.len();
            s.grants.retain(|g| g.scope != GrantScope::Notebook);
            s.grants.len() != before
        };
        if removed {
            self.changed();
        }
    }

    /// The agent session `session` ended: its grants end.
    pub fn agent_session_ended(&self, session: &str) {
        let removed = {
            let mut s = lock(&self.state);
            let before = s.grants.len();
            s.grants
                .retain(|g| !(g.scope == GrantScope::Agent && g.session == session));
            s.grants.len() != before
        };
        if removed {
            self.changed();
        }
    }

    fn changed(&self) {
        let listener = lock(&self.listener).clone();
        if let Some(listener) = listener {
            listener(self.list());
        }
    }
}

/// Decides a call a grant covers (as [`DecidedBy::Grant`]); hands every other call to the
/// next handler (the person).
#[derive(Debug)]
pub struct GrantsHandler {
    grants: Arc<Grants>,
    next: Arc<dyn ApprovalHandler>,
}

impl GrantsHandler {
    /// Check `grants`, then ask `next`.
    pub fn new(grants: Arc<Grants>, next: Arc<dyn ApprovalHandler>) -> Self {
        GrantsHandler { grants, next }
    }
}

impl ApprovalHandler for GrantsHandler {
    fn decide_now(&self, request: &ApprovalRequest) -> bool {
        // A changed tool definition is for a person to look at, whatever was granted.
        if request.details().change.is_none() && self.grants.covering(request).is_some() {
            request.decide_as(Decision::Accept, DecidedBy::Grant, None);
            return true;
        }
        self.next.decide_now(request)
    }

    fn handle(&self, request: ApprovalRequest) -> BoxFuture<'static, ()> {
        if self.decide_now(&request) {
            return Box::pin(std::future::ready(()));
        }
        self.next.handle(request)
    }

    /// No grant covers a program: the person decides.
    fn start_program(
        &self,
        request: crate::approval::ProgramRequest,
    ) -> BoxFuture<'static, crate::approval::ProgramVerdict> {
        self.next.start_program(request)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::approval::{Approvals, ExternalCall};

    fn request(approvals: &Arc<Approvals>, tool: &str, origin: &str) -> ApprovalRequest {
        let call = ExternalCall {
            server: "fx".into(),
            tool: tool.into(),
            arguments: serde_json::json!({}),
            server_description: "fx".into(),
            origin: origin.into(),
        };
        approvals.request_external(call, None).0
    }

    #[test]
    fn a_grant_covers_its_tool_in_its_session_only() {
        let approvals = Arc::new(Approvals::new(Duration::from_secs(60)));
        let grants = Grants::new();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let h = heard.clone();
        grants.listen(Arc::new(move |g| h.lock().expect("lock").push(g.len())));
        let touch = request(&approvals, "touch", "agent session 4f2a9c1e");
        let grant = grants.grant(&touch);
        assert_eq!(grant.scope, GrantScope::Agent);
        assert_eq!(grant.session, "4f2a9c1e");
        assert_eq!(grants.grant(&touch).id, grant.id, "granted once");
        assert!(
            grants
                .covering(&request(&approvals, "touch", "agent session 4f2a9c1e"))
                .is_some()
        );
        assert!(
            grants
                .covering(&request(&approvals, "echo", "agent session 4f2a9c1e"))
                .is_none(),
            "another tool asks"
        );
        assert!(
            grants
                .covering(&request(&approvals, "touch", "agent session 77777777"))
                .is_none(),
            "another agent asks"
        );
        assert!(
            grants
                .covering(&request(&approvals, "touch", "cell 1 of a.ipynb"))
                .is_none(),
            "the notebook asks"
        );
        grants.agent_session_ended("4f2a9c1e");
        assert!(
            grants.list().is_empty(),
            "the session's end ends its grants"
        );
        assert_eq!(
            *heard.lock().expect("lock"),
            vec![1, 0],
            "each change is told"
        );
    }

    #[test]
    fn the_notebook_grants_end_with_its_kernel_and_can_be_revoked() {
        let approvals = Arc::new(Approvals::new(Duration::from_secs(60)));
        let grants = Grants::new();
        let cell = request(&approvals, "touch", "cell 2 of a.ipynb");
        let grant = grants.grant(&cell);
        assert_eq!(grant.scope, GrantScope::Notebook);
        assert!(
            grants
                .covering(&request(&approvals, "touch", "cell 5 of a.ipynb"))
                .is_some()
        );
        grants.kernel_ended();
        assert!(
            grants
                .covering(&request(&approvals, "touch", "cell 5 of a.ipynb"))
                .is_none(),
            "a restarted kernel asks again"
        );
        let again = grants.grant(&cell);
        assert!(grants.revoke(again.id));
        assert!(!grants.revoke(again.id), "revoked once");
        assert!(grants.covering(&cell).is_none());
    }

    /// Records who decided, and how.
    #[derive(Debug, Default)]
    struct Person(Mutex<Vec<u64>>);

    impl ApprovalHandler for Person {
        fn handle(&self, request: ApprovalRequest) -> BoxFuture<'static, ()> {
            self.0.lock().expect("lock").push(request.id());
            Box::pin(std::future::ready(()))
        }
    }

    /// Behind the rules, as the app chains them: a granted call is decided before it is
    /// announced (no dialog or panel entry flashes for it).
    #[test]
    fn a_granted_call_is_decided_before_it_is_announced() {
        use crate::tools::{Rules, RulesHandler};
        let approvals = Arc::new(Approvals::new(Duration::from_secs(60)));
        let grants = Grants::new();
        let person = Arc::new(Person::default());
        let chain = RulesHandler::new(Rules::new(Vec::new()).expect("no rules"))
            .then(Arc::new(GrantsHandler::new(grants.clone(), person.clone())));
        let first = request(&approvals, "touch", "cell 2 of a.ipynb");
        assert!(
            !chain.decide_now(&first),
            "no rule and no grant: the call waits for the person"
        );
        grants.grant(&first);
        let next = request(&approvals, "touch", "cell 3 of a.ipynb");
        assert!(chain.decide_now(&next), "decided before it is announced");
        assert!(next.is_decided());
        assert!(
            person.0.lock().expect("lock").is_empty(),
            "nobody was asked"
        );
    }

    #[tokio::test]
    async fn a_granted_call_is_decided_without_asking_the_person() {
        let approvals = Arc::new(Approvals::new(Duration::from_secs(60)));
        let grants = Grants::new();
        let person = Arc::new(Person::default());
        let handler = GrantsHandler::new(grants.clone(), person.clone());
        let call = |tool: &str| ExternalCall {
            server: "fx".into(),
            tool: tool.into(),
            arguments: serde_json::json!({}),
            server_description: "fx".into(),
            origin: "cell 1 of a.ipynb".into(),
        };
        let (first, _) = approvals.request_external(call("touch"), None);
        grants.grant(&first);
        let (granted, wait) = approvals.request_external(call("touch"), None);
        handler.handle(granted.clone()).await;
        let approved = wait.await.expect("approved");
        assert_eq!(approved.by, DecidedBy::Grant);
        let (other, _wait) = approvals.request_external(call("echo"), None);
        handler.handle(other.clone()).await;
        assert_eq!(
            *person.0.lock().expect("lock"),
            vec![other.id()],
            "only the call no grant covers reaches the person"
        );
        assert!(!other.is_decided());
    }
}
