//! Questions MCP servers ask a person in the middle of a tool call (`elicitation/create`):
//! who answers them, which call each belongs to, the answer checked against the form before
//! it goes back, and events saying that a server asked and what was answered (what the
//! audit log records, secrets left out).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation>.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use crate::events::{Events, SessionEvent};
pub use crate::question::form::{Form, Problem};
pub use crate::question::{Answered, CallRef, Question};

/// The answer to a server's question, as the person (or a program standing in for them)
/// gave it.
pub type Answer = Pin<Box<dyn Future<Output = ElicitResult> + Send>>;

/// Who answers a server's `elicitation/create` requests. Without one, ipybox does not offer
/// elicitation to servers, and declines a request a server sends anyway.
pub trait Elicitor: Send + Sync + 'static {
    /// The answer to `server`'s `request`. Fields left out of an accepted answer that the
    /// requested schema gives a default for are filled in with it before the answer goes
    /// back ([SEP-1034](https://github.com/modelcontextprotocol/modelcontextprotocol/issues/1034)).
    fn elicit(&self, server: &str, request: ElicitRequestParams) -> Answer;

    /// Whether servers are told they may ask (the `elicitation` client capability). One
    /// that is not told and asks anyway is declined with a reason.
    fn offered(&self) -> bool {
        true
    }
}

/// Who answers the questions servers ask during a session's tool calls.
#[derive(Clone, Default)]
pub enum Elicitation {
    /// Nobody: servers are not offered elicitation; a question is declined, with a reason
    /// the server sees (a non-interactive session: `--approval auto`, rules, an agent's).
    #[default]
    Off,
    /// This elicitor (a terminal prompt, a program); its answer is checked against the form.
    By(Arc<dyn Elicitor>),
    /// The session's listeners: each question is a
    /// [`SessionEvent::ElicitationRequested`], answered with
    /// [`CodeExecutor::answer_elicitation`](crate::CodeExecutor::answer_elicitation) (the
    /// desktop app's form).
    Listeners,
}

impl std::fmt::Debug for Elicitation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Elicitation::Off => "Off",
            Elicitation::By(_) => "By(..)",
            Elicitation::Listeners => "Listeners",
        })
    }
}

/// Where a server's reason for a decline goes in the answer's `_meta`.
pub const REASON_META: &str = "ipybox/reason";

/// How long a question that belongs to no running call waits for its answer (one that
/// belongs to a call waits as long as the call does).
const UNTIED_WAIT: Duration = Duration::from_secs(600);

/// Why an answer was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// No such question waits (answered already, withdrawn, or never asked).
    #[error("no question {0} waits for an answer: it was answered already, or its tool call ended")]
    Unknown(u64),
    /// The answer does not fit the form; the question still waits.
    #[error("{0}")]
    Field(#[from] Problem),
}

struct Pending {
    question: Question,
    answer: oneshot::Sender<Reply>,
}

/// What ends a question's wait.
enum Reply {
    /// A person's answer, to be checked and told.
    Person(ElicitResult),
    /// An answer no person gave, already told to listeners (its call or cell ended).
    Told(ElicitResult),
}

/// A session's questions: the ones waiting and the calls they may belong to.
pub struct Elicitations {
    events: Events,
    by: Elicitation,
    next: AtomicU64,
    pending: Mutex<HashMap<u64, Pending>>,
    calls: Mutex<Vec<CallRef>>,
}

impl std::fmt::Debug for Elicitations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Elicitations")
            .field("by", &self.by)
            .finish_non_exhaustive()
    }
}

impl Elicitations {
    /// Questions answered `by`, told to `events`.
    pub fn new(by: Elicitation, events: Events) -> Elicitations {
        Elicitations {
            events,
            by,
            next: AtomicU64::new(1),
            pending: Mutex::default(),
            calls: Mutex::default(),
        }
    }

    /// Whether servers are offered elicitation.
    pub fn offered(&self) -> bool {
        match &self.by {
            Elicitation::Off => false,
            Elicitation::By(e) => e.offered(),
            Elicitation::Listeners => true,
        }
    }

    /// The questions waiting now, oldest first (a window that opens late shows them).
    pub fn waiting(&self) -> Vec<Question> {
        let mut all: Vec<Question> = self
            .pending
            .lock()
            .map(|p| p.values().map(|p| p.question.clone()).collect())
            .unwrap_or_default();
        all.sort_by_key(|q| q.id);
        all
    }

    /// `call` runs until the returned guard drops; a question its server asks meanwhile
    /// belongs to it, and is withdrawn when it ends.
    pub fn calling(self: &Arc<Self>, call: CallRef) -> Calling {
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(call.clone());
        }
        Calling {
            elicitations: self.clone(),
            call,
        }
    }

    /// The answer to `server`'s `request`, from whoever answers this session's questions.
    pub async fn ask(self: &Arc<Self>, server: &str, request: ElicitRequestParams) -> ElicitResult {
        let (message, schema) = match &request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => (
                message.clone(),
                serde_json::to_value(requested_schema).unwrap_or_default(),
            ),
            ElicitRequestParams::UrlElicitationParams { message, .. } => {
                let question = self.question(server, message.clone(), Form { fields: Vec::new() });
                return self.decline(
                    question,
                    "ipybox answers questions asked as a form only, not by opening a web page",
                );
            }
            _ => {
                let question = self.question(server, String::new(), Form { fields: Vec::new() });
                return self.decline(question, "ipybox does not know this kind of question");
            }
        };
        let form = match Form::from_schema(&schema) {
            Ok(form) => form,
            Err(why) => {
                let question = self.question(server, message, Form { fields: Vec::new() });
                return self.decline(question, &format!("ipybox cannot show the form: {why}"));
            }
        };
        let question = self.question(server, message, form);
        match &self.by {
            Elicitation::Off => self.decline(
                question,
                "nobody can answer: this ipybox session does not ask the person questions (it runs without an interactive approver)",
            ),
            Elicitation::By(elicitor) if !elicitor.offered() => self.decline(
                question,
                "nobody can answer: this ipybox session has no one to ask (no terminal)",
            ),
            Elicitation::By(elicitor) => {
                self.events.send(SessionEvent::ElicitationRequested {
                    question: Box::new(question.clone()),
                });
                let answer = elicitor.elicit(server, request).await;
                self.settle(question, answer)
            }
            Elicitation::Listeners => self.wait(question).await,
        }
    }

    /// `id`'s answer, given by a person: refused when no such question waits or the answer
    /// does not fit its form (the question then still waits).
    pub fn answer(
        &self,
        id: u64,
        action: ElicitationAction,
        content: Option<Map<String, Value>>,
    ) -> Result<(), AnswerError> {
        let mut pending = self.pending.lock().map_err(|_| AnswerError::Unknown(id))?;
        let Some(waiting) = pending.get(&id) else {
            return Err(AnswerError::Unknown(id));
        };
        let mut result = ElicitResult::new(action.clone());
        if action == ElicitationAction::Accept {
            let checked = waiting.question.form.check(&content.unwrap_or_default())?;
            result = result.with_content(Value::Object(checked));
        }
        let Some(waiting) = pending.remove(&id) else {
            return Err(AnswerError::Unknown(id));
        };
        drop(pending);
        let _ = waiting.answer.send(Reply::Person(result));
        Ok(())
    }

    /// The cell `execution_id` ended (finished, failed, interrupted): the questions asked
    /// during its calls go, cancelled, even while a call it left running goes on (nobody
    /// reads its answer).
    pub fn end_execution(&self, execution_id: &str) {
        self.end_where(
            |q| q.call.as_ref().and_then(|c| c.execution_id.as_deref()) == Some(execution_id),
            CELL_ENDED,
        );
    }

    /// Cancel the waiting questions `which` picks, telling listeners and the servers why.
    fn end_where(&self, which: impl Fn(&Question) -> bool, reason: &str) {
        let ended: Vec<Pending> = match self.pending.lock() {
            Ok(mut pending) => {
                let ids: Vec<u64> = pending
                    .iter()
                    .filter(|(_, p)| which(&p.question))
                    .map(|(id, _)| *id)
                    .collect();
                ids.iter().filter_map(|id| pending.remove(id)).collect()
            }
            Err(_) => Vec::new(),
        };
        for Pending { question, answer } in ended {
            let result = self.cancel(question, reason);
            let _ = answer.send(Reply::Told(result));
        }
    }

    fn question(&self, server: &str, message: String, form: Form) -> Question {
        let call = self.calls.lock().ok().and_then(|calls| {
            let mut of_server = calls.iter().filter(|c| c.server == server);
            match (of_server.next(), of_server.next()) {
                (Some(only), None) => Some(only.clone()),
                _ => None,
            }
        });
        Question {
            id: self.next.fetch_add(1, Ordering::Relaxed),
            server: server.to_owned(),
            message,
            form,
            call,
            asked_at: crate::approval::now_ms(),
        }
    }

    /// Wait for a listener's answer: until the question's call ends, the server gives up
    /// on it (this future is dropped), or [`UNTIED_WAIT`] for one tied to no call.
    async fn wait(self: &Arc<Self>, question: Question) -> ElicitResult {
        let (tx, rx) = oneshot::channel();
        let id = question.id;
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(
                id,
                Pending {
                    question: question.clone(),
                    answer: tx,
                },
            );
        }
        let mut gone = Gone {
            elicitations: self.clone(),
            question: Some(question.clone()),
        };
        self.events.send(SessionEvent::ElicitationRequested {
            question: Box::new(question.clone()),
        });
        let answer = if question.call.is_some() {
            rx.await.ok()
        } else {
            tokio::time::timeout(UNTIED_WAIT, rx)
                .await
                .ok()
                .and_then(Result::ok)
        };
        gone.question = None;
        match answer {
            Some(Reply::Person(answer)) => self.settle(question, answer),
            Some(Reply::Told(answer)) => answer,
            None => {
                // Whoever takes a question out of the waiting ones says it ended: the call's
                // end did already, if that is what ended the wait.
                let reason = if question.call.is_some() {
                    CALL_ENDED
                } else {
                    "nobody answered in time"
                };
                match self.withdraw(id) {
                    Some(question) => self.cancel(question, reason),
                    None => without_person(ElicitationAction::Cancel, reason),
                }
            }
        }
    }

    fn withdraw(&self, id: u64) -> Option<Question> {
        self.pending
            .lock()
            .ok()
            .and_then(|mut p| p.remove(&id))
            .map(|p| p.question)
    }

    /// The answer checked against the question's form (defaults filled in), told to
    /// listeners with secrets left out. An answer that does not fit is declined instead.
    fn settle(&self, question: Question, mut answer: ElicitResult) -> ElicitResult {
        if answer.action == ElicitationAction::Accept {
            let content = match answer.content.take() {
                Some(Value::Object(m)) => m,
                _ => Map::new(),
            };
            match question.form.check(&content) {
                Ok(checked) => answer.content = Some(Value::Object(checked)),
                Err(problem) => {
                    return self.decline(
                        question,
                        &format!("the answer did not fit the form ({problem})"),
                    );
                }
            }
        } else {
            answer.content = None;
        }
        let (values, withheld) = match &answer.content {
            Some(Value::Object(m)) => {
                let (kept, withheld) = question.form.recordable(m);
                (Some(kept), withheld)
            }
            _ => (None, Vec::new()),
        };
        self.tell(question, answer.action.clone(), values, withheld, None);
        answer
    }

    fn decline(&self, question: Question, reason: &str) -> ElicitResult {
        self.ended_without_person(question, ElicitationAction::Decline, reason)
    }

    fn cancel(&self, question: Question, reason: &str) -> ElicitResult {
        self.ended_without_person(question, ElicitationAction::Cancel, reason)
    }

    fn ended_without_person(
        &self,
        question: Question,
        action: ElicitationAction,
        reason: &str,
    ) -> ElicitResult {
        tracing::info!(
            server = question.server,
            "a question was not answered by a person: {reason}"
        );
        self.tell(
            question,
            action.clone(),
            None,
            Vec::new(),
            Some(reason.to_owned()),
        );
        without_person(action, reason)
    }

    fn tell(
        &self,
        question: Question,
        action: ElicitationAction,
        values: Option<Map<String, Value>>,
        withheld: Vec<String>,
        reason: Option<String>,
    ) {
        self.events.send(SessionEvent::ElicitationEnded {
            answered: Box::new(Answered {
                id: question.id,
                server: question.server,
                message: question.message,
                call: question.call,
                action,
                values,
                withheld,
                reason,
            }),
        });
    }
}

/// Why a question is withdrawn when its call ends.
const CALL_ENDED: &str = "the tool call it was asked in ended";

/// Why a question is withdrawn when the cell that made its call ends.
const CELL_ENDED: &str = "the cell that made the call ended (finished or interrupted)";

/// An answer no person gave, with its reason in `_meta` for the server.
fn without_person(action: ElicitationAction, reason: &str) -> ElicitResult {
    let mut meta = rmcp::model::MetaObject::new();
    meta.0
        .insert(REASON_META.into(), Value::String(reason.to_owned()));
    let mut result = ElicitResult::new(action);
    result.meta = Some(meta);
    result
}

/// A question still waiting when its waiter is dropped (the server gave up on it, the
/// session's connection closed) is withdrawn and said to have ended.
struct Gone {
    elicitations: Arc<Elicitations>,
    question: Option<Question>,
}

impl Drop for Gone {
    fn drop(&mut self) {
        if let Some(question) = self.question.take()
            && self.elicitations.withdraw(question.id).is_some()
        {
            self.elicitations
                .cancel(question, "the server stopped waiting for the answer");
        }
    }
}

/// A running tool call its server's questions belong to; dropped when the call ends,
/// withdrawing a question still waiting.
pub struct Calling {
    elicitations: Arc<Elicitations>,
    call: CallRef,
}

impl Drop for Calling {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.elicitations.calls.lock()
            && let Some(at) = calls.iter().position(|c| c == &self.call)
        {
            calls.remove(at);
        }
        self.elicitations
            .end_where(|q| q.call.as_ref() == Some(&self.call), CALL_ENDED);
    }
}

/// The [`Elicitor`] a session's MCP connections are given: their server's questions go to
/// the session's [`Elicitations`].
pub struct SessionElicitor(pub Arc<Elicitations>);

impl Elicitor for SessionElicitor {
    fn elicit(&self, server: &str, request: ElicitRequestParams) -> Answer {
        let elicitations = self.0.clone();
        let server = server.to_owned();
        Box::pin(async move { elicitations.ask(&server, request).await })
    }

    fn offered(&self) -> bool {
        self.0.offered()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request() -> ElicitRequestParams {
        serde_json::from_value(json!({
            "mode": "form",
            "message": "Who are you?",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "default": "Ada"},
                "age": {"type": "integer", "minimum": 0},
                "api_token": {"type": "string"},
            }, "required": ["age"]},
        }))
        .expect("a form request")
    }

    fn ended(events: &mut tokio::sync::broadcast::Receiver<SessionEvent>) -> Answered {
        loop {
            match events.try_recv().expect("an event") {
                SessionEvent::ElicitationEnded { answered } => return *answered,
                _ => continue,
            }
        }
    }

    fn values(v: Value) -> Option<Map<String, Value>> {
        match v {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    #[tokio::test]
    async fn without_anyone_to_ask_a_question_is_declined_with_a_reason() {
        let events = Events::default();
        let mut heard = events.subscribe();
        let e = Arc::new(Elicitations::new(Elicitation::Off, events));
        assert!(!e.offered(), "servers are not offered elicitation");
        let answer = e.ask("fx", request()).await;
        assert_eq!(answer.action, ElicitationAction::Decline);
        let reason = answer
            .meta
            .as_ref()
            .and_then(|m| m.0.get(REASON_META))
            .and_then(Value::as_str)
            .unwrap_or_default();
        assert!(
            reason.starts_with("nobody can answer"),
            "the server is told why: {reason}"
        );
        let told = ended(&mut heard);
        assert_eq!(
            told.reason.as_deref(),
            Some(reason),
            "and so is the audit log"
        );
    }

    #[tokio::test]
    async fn a_persons_answer_is_checked_and_recorded_without_its_secret() {
        let events = Events::default();
        let mut heard = events.subscribe();
        let e = Arc::new(Elicitations::new(Elicitation::Listeners, events));
        let calling = e.calling(CallRef::new(7, Some("x1".into()), "fx", "ask"));
        let asked = tokio::spawn({
            let e = e.clone();
            async move { e.ask("fx", request()).await }
        });
        let question = loop {
            if let Some(q) = e.waiting().pop() {
                break q;
            }
            tokio::task::yield_now().await;
        };
        assert_eq!(
            question.call.as_ref().map(|c| c.id),
            Some(7),
            "tied to the one running call"
        );
        assert_eq!(
            e.answer(question.id + 1, ElicitationAction::Accept, None),
            Err(AnswerError::Unknown(question.id + 1)),
            "an answer to a question nobody asked is refused"
        );
        let bad = e.answer(
            question.id,
            ElicitationAction::Accept,
            values(json!({"age": "-1"})),
        );
        assert_eq!(
            bad.map_err(|e| e.to_string()),
            Err("age: it must be at least 0".into()),
            "a bad field is named, in words"
        );
        assert_eq!(e.waiting().len(), 1, "and the question still waits");
        e.answer(
            question.id,
            ElicitationAction::Accept,
            values(json!({"age": "36", "api_token": "tok-secret"})),
        )
        .expect("a good answer");
        let answer = asked.await.expect("asked");
        assert_eq!(
            answer.content,
            Some(json!({"name": "Ada", "age": 36, "api_token": "tok-secret"})),
            "the server gets the typed values, the default filled in, the secret too"
        );
        let told = ended(&mut heard);
        assert_eq!(told.values, values(json!({"name": "Ada", "age": 36})));
        assert_eq!(
            told.withheld,
            ["api_token"],
            "the secret is named, not recorded"
        );
        assert_eq!(
            e.answer(question.id, ElicitationAction::Decline, None),
            Err(AnswerError::Unknown(question.id)),
            "a question is answered once"
        );
        drop(calling);
    }

    #[tokio::test]
    async fn a_question_goes_when_its_call_ends() {
        let events = Events::default();
        let mut heard = events.subscribe();
        let e = Arc::new(Elicitations::new(Elicitation::Listeners, events));
        let calling = e.calling(CallRef::new(3, None, "fx", "ask"));
        let asked = tokio::spawn({
            let e = e.clone();
            async move { e.ask("fx", request()).await }
        });
        while e.waiting().is_empty() {
            tokio::task::yield_now().await;
        }
        drop(calling);
        let answer = asked.await.expect("asked");
        assert_eq!(
            answer.action,
            ElicitationAction::Cancel,
            "the server is told it was cancelled"
        );
        assert!(e.waiting().is_empty());
        let told = ended(&mut heard);
        assert_eq!(told.reason.as_deref(), Some(CALL_ENDED));
        assert!(
            heard.try_recv().is_err(),
            "its end is told once, by the call that ended it"
        );
    }
}

#[cfg(test)]
mod shape {
    use super::*;
    use serde_json::json;

    /// The shape `ui/src/ipc.ts` reads, pinned.
    #[test]
    fn a_question_reaches_a_window_in_this_shape() {
        let form = Form::from_schema(&json!({"type": "object", "properties": {
            "age": {"type": "integer", "minimum": 0, "default": 3}}, "required": ["age"]}))
        .expect("a form");
        let event = SessionEvent::ElicitationRequested {
            question: Box::new(Question {
                id: 2,
                server: "asker".into(),
                message: "How old?".into(),
                form,
                call: Some(CallRef::new(7, Some("x1".into()), "asker", "ask")),
                asked_at: 5,
            }),
        };
        assert_eq!(
            serde_json::to_value(&event).expect("json"),
            json!({"type": "elicitation_requested", "question": {
                "id": 2, "server": "asker", "message": "How old?",
                "form": {"fields": [{"name": "age", "title": null, "description": null,
                    "required": true, "secret": false, "default": 3, "kind": "number",
                    "integer": true, "minimum": 0.0, "maximum": null}]},
                "call": {"id": 7, "execution_id": "x1", "tool": "ask"}, "asked_at": 5}})
        );
        let ended = SessionEvent::ElicitationEnded {
            answered: Box::new(Answered {
                id: 2,
                server: "asker".into(),
                message: "How old?".into(),
                call: None,
                action: ElicitationAction::Decline,
                values: None,
                withheld: Vec::new(),
                reason: Some("why".into()),
            }),
        };
        assert_eq!(
            serde_json::to_value(&ended).expect("json"),
            json!({"type": "elicitation_ended", "id": 2, "server": "asker", "message": "How old?",
                   "call": null, "action": "decline", "values": null, "withheld": [], "reason": "why"})
        );
    }
}
