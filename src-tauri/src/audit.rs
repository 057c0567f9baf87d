//! The audit log: every tool call a workspace's code asked for, how it was decided and what
//! came of it — one JSON object per line, appended as calls end.
//!
//! The log lives in ipybox's data directory ([`WorkspaceState`]), never in the workspace:
//! sandboxed code may write only its workspace, so it cannot edit the record of what it did.
//! (Unsandboxed code runs as the person and can write whatever they can; run code you do not
//! trust sandboxed.) The desktop app, `ipybox exec --approve ask` and `ipybox mcp` append to
//! the same file; `ipybox audit` prints it.
//!
//! An entry is a [`SessionEvent::ToolCall`] with the time and the workspace:
//!
//! ```json
//! {"time": 1763906400123, "workspace": "/home/me/project", "execution_id": "…",
//!  "origin": "cell 3 of analysis.ipynb", "server": "github", "tool": "create_issue",
//!  "arguments": {"title": "…"}, "decision": "approved", "decided_by": "person",
//!  "reason": null, "outcome": {"kind": "ok"}, "duration_ms": 412}
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::error::{Error, Result};
use crate::events::{CallDecision, CallOutcome, DecidedBy, SessionEvent};

/// One tool call, as the log keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct AuditEntry {
    /// When the call ended, in milliseconds since the Unix epoch.
    pub time: u64,
    /// The workspace whose code made the call.
    pub workspace: PathBuf,
    /// The execution whose code made the call.
    pub execution_id: Option<String>,
    /// Where that code came from, in words ("cell 3 of analysis.ipynb", "agent session …").
    pub origin: Option<String>,
    /// The registered server's name (`ipybox` for shell commands).
    pub server: String,
    /// The tool (`shell` for shell commands).
    pub tool: String,
    /// The arguments, as the code sent them.
    pub arguments: serde_json::Value,
    /// Approved, rejected or timed out.
    pub decision: CallDecision,
    /// Who or what decided.
    pub decided_by: DecidedBy,
    /// Why it was not approved.
    pub reason: Option<String>,
    /// What the call returned, when it ran.
    pub outcome: Option<CallOutcome>,
    /// How long the call took, approval excluded.
    pub duration_ms: u64,
    /// The rule that decided the call, as the rules file writes it (absent when no rule
    /// did, and in entries written before ipybox kept it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub rule: Option<String>,
    /// The agent's MCP client, for a call an agent's code made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub client: Option<crate::definition::Client>,
    /// The line of code that made the call, as the kernel reported it (untrusted text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub call_site: Option<String>,
}

impl AuditEntry {
    /// The entry for `event` in `workspace`, if it is a finished tool call.
    pub fn from_event(event: &SessionEvent, workspace: &Path) -> Option<AuditEntry> {
        let SessionEvent::ToolCall {
            request,
            decision,
            decided_by,
            reason,
            outcome,
            duration_ms,
        } = event
        else {
            return None;
        };
        Some(AuditEntry {
            time: now_ms(),
            workspace: workspace.to_path_buf(),
            execution_id: request.execution_id().map(str::to_owned),
            origin: request.origin().map(str::to_owned),
            server: request.server_name().to_owned(),
            tool: request.tool_name().to_owned(),
            arguments: request.tool_args().clone(),
            decision: *decision,
            decided_by: *decided_by,
            reason: reason.clone(),
            outcome: outcome.clone(),
            duration_ms: *duration_ms,
            rule: request.rule().map(str::to_owned),
            client: request.details().client.clone(),
            call_site: request.details().call_site.clone(),
        })
    }
}

/// A question a server asked during a call, and what went back: one line of the log with
/// `"kind": "elicitation"`. Values of secret fields are never in it, only their names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitationEntry {
    /// Always `elicitation`: tells these lines from tool calls'.
    pub kind: ElicitationKind,
    /// When it ended, in milliseconds since the Unix epoch.
    pub time: u64,
    /// The workspace whose code made the call.
    pub workspace: PathBuf,
    /// The registered server that asked.
    pub server: String,
    /// The tool call it came during (its request id and tool), when ipybox could tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// That call's request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<u64>,
    /// The execution whose code made the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_id: Option<String>,
    /// What the server asked (untrusted text).
    pub message: String,
    /// `accept`, `decline` or `cancel`.
    pub action: rmcp::model::ElicitationAction,
    /// The answered values, but for secret fields'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<serde_json::Map<String, serde_json::Value>>,
    /// The secret fields that were answered, whose values are not recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<String>,
    /// Why it was declined or cancelled without a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The `kind` of an [`ElicitationEntry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElicitationKind {
    /// A server's question.
    Elicitation,
}

impl ElicitationEntry {
    /// The entry for `event` in `workspace`, if it is a question that ended.
    pub fn from_event(event: &SessionEvent, workspace: &Path) -> Option<ElicitationEntry> {
        let SessionEvent::ElicitationEnded { answered } = event else {
            return None;
        };
        Some(ElicitationEntry {
            kind: ElicitationKind::Elicitation,
            time: now_ms(),
            workspace: workspace.to_path_buf(),
            server: answered.server.clone(),
            tool: answered.call.as_ref().map(|c| c.tool.clone()),
            call_id: answered.call.as_ref().map(|c| c.id),
            execution_id: answered.call.as_ref().and_then(|c| c.execution_id.clone()),
            message: answered.message.clone(),
            action: answered.action.clone(),
            values: answered.values.clone(),
            withheld: answered.withheld.clone(),
            reason: answered.reason.clone(),
        })
    }
}

/// What ipybox keeps about one workspace, in its data directory (out of the workspace's
/// reach): the audit log and the approval rules the desktop app made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceState {
    dir: PathBuf,
}

impl WorkspaceState {
    /// The state of `workspace`, kept under `home` (ipybox's data directory) in
    /// `workspaces/NAME-HASH/`, where HASH names the workspace's canonical path.
    pub fn new(home: &Path, workspace: &Path) -> WorkspaceState {
        let canonical = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.into());
        WorkspaceState {
            dir: crate::home::workspace_dir(home, &canonical),
        }
    }

    /// The state of `workspace` in ipybox's data directory (`$IPYBOX_HOME`, else the XDG
    /// data directory).
    pub fn of(workspace: &Path) -> Result<WorkspaceState> {
        Ok(Self::new(&crate::home::ipybox_home()?, workspace))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The audit log.
    pub fn audit_log(&self) -> AuditLog {
        AuditLog {
            path: self.dir.join("audit.jsonl"),
        }
    }

    /// The approval rules file (the `--approval rules` format).
    pub fn rules_file(&self) -> PathBuf {
        self.dir.join("approval-rules.json")
    }

    /// Which Python each of the workspace's notebooks runs.
    pub fn python_choices(&self) -> crate::pyenv::PythonChoices {
        crate::pyenv::PythonChoices::at(self.dir.join("python.json"))
    }

    /// Create the directory, private to the user.
    pub fn create(&self) -> Result<()> {
        crate::fsutil::create_private_dir(&self.dir)
    }
}

/// A JSON Lines audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditLog {
    path: PathBuf,
}

impl AuditLog {
    /// The log in the file at `path`.
    pub fn at(path: impl Into<PathBuf>) -> AuditLog {
        AuditLog { path: path.into() }
    }

    /// Its file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append `entry` as one line (one `write`, so concurrent writers do not interleave);
    /// the file is created private to the user.
    pub fn append(&self, entry: &AuditEntry) -> Result<()> {
        let mut line = serde_json::to_vec(entry)
            .map_err(|e| Error::config("cannot write an audit entry").because(e))?;
        line.push(b'\n');
        self.open()?
            .write_all(&line)
            .map_err(|e| Error::io(format!("writing the audit log {}", self.path.display()), e))
    }

    /// Every entry, oldest first (none when there is no log yet). Lines that are not
    /// entries (a write cut short by a crash) are skipped and counted.
    pub fn read(&self) -> Result<(Vec<AuditEntry>, usize)> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
            Err(e) => {
                return Err(Error::io(
                    format!("reading the audit log {}", self.path.display()),
                    e,
                ));
            }
        };
        let mut skipped = 0;
        let entries = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .filter(|l| !is_elicitation(l))
            .filter_map(|l| serde_json::from_str(l).inspect_err(|_| skipped += 1).ok())
            .collect();
        Ok((entries, skipped))
    }

    /// Every question a server asked, oldest first (none when there is no log yet).
    pub fn read_elicitations(&self) -> Result<Vec<ElicitationEntry>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(Error::io(
                    format!("reading the audit log {}", self.path.display()),
                    e,
                ));
            }
        };
        Ok(text
            .lines()
            .filter(|l| is_elicitation(l))
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect())
    }

    /// Append every tool call `events` reports, for `workspace`, until the session's events
    /// end. One writer keeps the file open and writes what has come in together, off the
    /// calls' path; a write that fails is logged, and the file opened again for the next.
    pub fn record(
        self,
        workspace: PathBuf,
        mut events: broadcast::Receiver<SessionEvent>,
    ) -> tokio::task::JoinHandle<()> {
        let (lines, mut waiting) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        let writer = tokio::task::spawn_blocking(move || {
            let mut file = None;
            let mut batch = Vec::new();
            while let Some(line) = waiting.blocking_recv() {
                batch.clear();
                batch.extend_from_slice(&line);
                while let Ok(more) = waiting.try_recv() {
                    batch.extend_from_slice(&more);
                }
                let written = match file.as_mut() {
                    Some(f) => std::io::Write::write_all(f, &batch).map_err(|e| {
                        Error::io(format!("writing the audit log {}", self.path.display()), e)
                    }),
                    None => self.open().and_then(|mut f| {
                        let w = std::io::Write::write_all(&mut f, &batch).map_err(|e| {
                            Error::io(format!("writing the audit log {}", self.path.display()), e)
                        });
                        file = Some(f);
                        w
                    }),
                };
                if let Err(e) = written {
                    tracing::error!("the audit log missed tool calls: {e}");
                    file = None;
                }
            }
        });
        tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(event) => {
                        let line = match AuditEntry::from_event(&event, &workspace) {
                            Some(entry) => Some(serde_json::to_vec(&entry)),
                            None => ElicitationEntry::from_event(&event, &workspace)
                                .map(|e| serde_json::to_vec(&e)),
                        };
                        if let Some(line) = line {
                            match line {
                                Ok(mut line) => {
                                    line.push(b'\n');
                                    let _ = lines.send(line);
                                }
                                Err(e) => tracing::error!("cannot write an audit entry: {e}"),
                            }
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::error!("the audit log fell behind and missed {n} session events");
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                }
            }
            drop(lines);
            let _ = writer.await;
        })
    }

    /// The file, opened for appending (created private to the user).
    fn open(&self) -> Result<std::fs::File> {
        if let Some(dir) = self.path.parent() {
            crate::fsutil::create_private_dir(dir)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options
            .open(&self.path)
            .map_err(|e| Error::io(format!("opening the audit log {}", self.path.display()), e))
    }
}

/// Whether a log line is a question's (`"kind": "elicitation"`), not a tool call's.
fn is_elicitation(line: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line)
        .is_ok_and(|v| v.get("kind").and_then(|k| k.as_str()) == Some("elicitation"))
}

/// One line in words for a question: time, server, what was done, the values (secrets'
/// names only), the message. What the server sent is escaped.
pub fn describe_elicitation(entry: &ElicitationEntry) -> String {
    use crate::display::escape;
    let action = match entry.action {
        rmcp::model::ElicitationAction::Accept => "accepted",
        rmcp::model::ElicitationAction::Decline => "declined",
        rmcp::model::ElicitationAction::Cancel => "cancelled",
        _ => "answered",
    };
    let during = entry
        .tool
        .as_deref()
        .map(|t| format!(" during {}.{}", escape(&entry.server), escape(t)))
        .unwrap_or_default();
    let mut what = String::new();
    if let Some(values) = &entry.values {
        what.push_str(&escape(
            &serde_json::Value::Object(values.clone()).to_string(),
        ));
    }
    if !entry.withheld.is_empty() {
        what.push_str(&format!(
            " (not recorded: {})",
            entry
                .withheld
                .iter()
                .map(|w| escape(w).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(reason) = &entry.reason {
        what.push_str(&escape(reason));
    }
    let mut message = escape(&entry.message).into_owned();
    if message.chars().count() > 120 {
        message = message.chars().take(119).collect::<String>() + "…";
    }
    format!(
        "{}  {} asked{during}: {message}  {action}  {}",
        local_time(entry.time),
        escape(&entry.server),
        what.trim()
    )
}

/// One line in words: time, call, decision and how, outcome, origin, arguments. What kernel
/// code or a server chose (names, arguments, messages, the origin) is escaped
/// ([`crate::display::escape`]): an entry cannot rewrite the lines around it.
pub fn describe(entry: &AuditEntry) -> String {
    use crate::display::escape;
    let by_rule;
    let how = match entry.decided_by {
        DecidedBy::Person => "by a person",
        DecidedBy::Batch => "with all pending calls",
        DecidedBy::Rule => match &entry.rule {
            Some(rule) => {
                by_rule = format!("by the rule {}", escape(rule));
                &by_rule
            }
            None => "by a rule",
        },
        DecidedBy::Grant => "by a grant for this session",
        DecidedBy::Timeout => "nobody decided in time",
        DecidedBy::Policy => "by the session's policy",
        DecidedBy::Nobody => "nobody decided",
    };
    let decision = match entry.decision {
        CallDecision::Approved => "approved",
        CallDecision::Rejected => "rejected",
        CallDecision::TimedOut => "timed out",
    };
    let outcome = match (&entry.outcome, &entry.reason) {
        (Some(CallOutcome::Ok), _) => format!("ok, {} ms", entry.duration_ms),
        (Some(CallOutcome::ToolError), _) => format!("tool error, {} ms", entry.duration_ms),
        (Some(CallOutcome::Failed { message }), _) => format!("failed: {}", escape(message)),
        (None, Some(reason)) => escape(reason).into_owned(),
        (None, None) => "did not run".into(),
    };
    let mut args = escape(&entry.arguments.to_string()).into_owned();
    if args.chars().count() > 120 {
        args = args.chars().take(119).collect::<String>() + "…";
    }
    let mut who = escape(
        entry
            .origin
            .as_deref()
            .or(entry.execution_id.as_deref())
            .unwrap_or("-"),
    )
    .into_owned();
    if let Some(client) = &entry.client {
        who.push_str(&format!(
            " ({}{}, session {})",
            escape(&client.name),
            client
                .version
                .as_deref()
                .map(|v| format!(" {}", escape(v)))
                .unwrap_or_default(),
            escape(&client.session)
        ));
    }
    format!(
        "{}  {}.{}  {decision} ({how})  {outcome}  {who}  {args}",
        local_time(entry.time),
        escape(&entry.server),
        escape(&entry.tool),
    )
}

/// `YYYY-MM-DD HH:MM:SS` in local time.
fn local_time(ms: u64) -> String {
    let secs = (ms / 1000) as libc::time_t;
    // SAFETY: localtime_r writes only into `tm`, which outlives the call.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&secs, &mut tm).is_null() {
            return format!("{ms} ms");
        }
        tm
    };
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(tool: &str) -> AuditEntry {
        AuditEntry {
            time: 1,
            workspace: "/w".into(),
            execution_id: Some("e1".into()),
            origin: Some("cell 1 of a.ipynb".into()),
            server: "fx".into(),
            tool: tool.into(),
            arguments: serde_json::json!({"path": "/tmp/x"}),
            decision: CallDecision::Approved,
            decided_by: DecidedBy::Person,
            reason: None,
            outcome: Some(CallOutcome::Ok),
            duration_ms: 3,
            rule: None,
            client: None,
            call_site: None,
        }
    }

    #[test]
    fn entries_append_and_read_back_and_a_torn_line_is_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = AuditLog::at(dir.path().join("state/audit.jsonl"));
        assert_eq!(log.read().expect("no log yet"), (Vec::new(), 0));
        log.append(&entry("a")).expect("append");
        std::fs::OpenOptions::new()
            .append(true)
            .open(log.path())
            .and_then(|mut f| f.write_all(b"{\"time\": 2, \"serv"))
            .expect("torn write");
        std::fs::OpenOptions::new()
            .append(true)
            .open(log.path())
            .and_then(|mut f| f.write_all(b"\n"))
            .expect("newline");
        log.append(&entry("b")).expect("append");
        let (entries, skipped) = log.read().expect("read");
        assert_eq!(entries, vec![entry("a"), entry("b")]);
        assert_eq!(skipped, 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(log.path())
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "private to the user");
        }
    }

    #[test]
    fn a_described_entry_is_one_line_that_cannot_act_on_a_terminal() {
        let mut e = entry("\u{1b}[1A\u{1b}[2K\u{1b}]52;c;ZXZpbA==\u{7}read_file");
        e.server = "fx\u{202e}".into();
        e.arguments = serde_json::json!({"path": "a\u{2028}\u{9b}2J"});
        e.origin = Some("cell\n1".into());
        e.decision = CallDecision::Rejected;
        e.outcome = None;
        e.reason = Some("no\rway".into());
        let line = describe(&e);
        assert!(
            !line.chars().any(crate::display::hidden),
            "nothing hidden or controlling is left: {line:?}"
        );
        assert!(
            line.contains("fx\\u202e.\\u001b[1A\\u001b[2K\\u001b]52;c;ZXZpbA==\\u0007read_file"),
            "the names, escaped: {line}"
        );
        assert!(line.contains(r#"{"path":"a\u2028\u009b2J"}"#), "{line}");
        assert!(
            line.contains("no\\u000dway") && line.contains("cell\\u000a1"),
            "{line}"
        );
    }

    #[test]
    fn an_entry_says_which_rule_decided_and_which_client_asked() {
        let mut e = entry("echo");
        e.decided_by = DecidedBy::Rule;
        e.rule = Some(r#"{"server":"fx","tool":"echo","decision":"allow"}"#.into());
        e.origin = Some("agent session 4f2a9c1e".into());
        e.client = Some(crate::definition::Client {
            name: "claude-code\u{1b}[2J".into(),
            version: Some("2.1".into()),
            session: "4f2a9c1e".into(),
            connected_at_ms: 5,
        });
        let line = describe(&e);
        assert!(
            line.contains(r#"by the rule {"server":"fx","tool":"echo","decision":"allow"}"#),
            "{line}"
        );
        assert!(
            line.contains("(claude-code\\u001b[2J 2.1, session 4f2a9c1e)"),
            "the client's declared name, escaped: {line}"
        );
        let json = serde_json::to_value(&e).expect("json");
        assert_eq!(json["client"]["name"], "claude-code\u{1b}[2J");
        assert_eq!(
            json["rule"],
            r#"{"server":"fx","tool":"echo","decision":"allow"}"#
        );
        let old: AuditEntry = serde_json::from_value(serde_json::json!({
            "time": 1, "workspace": "/w", "execution_id": null, "origin": null, "server": "fx",
            "tool": "echo", "arguments": {}, "decision": "approved", "decided_by": "person",
            "reason": null, "outcome": null, "duration_ms": 0
        }))
        .expect("an entry written before rule and client were kept still reads");
        assert_eq!((old.rule, old.client), (None, None));
    }

    #[test]
    fn a_servers_question_is_one_escaped_line_naming_its_secrets_only() {
        let entry = ElicitationEntry {
            kind: ElicitationKind::Elicitation,
            time: 1,
            workspace: "/w".into(),
            server: "asker\u{1b}[2J".into(),
            tool: Some("ask".into()),
            call_id: Some(3),
            execution_id: None,
            message: "Who\nare \u{202e}you?".into(),
            action: rmcp::model::ElicitationAction::Accept,
            values: serde_json::json!({"email": "a@b.org"}).as_object().cloned(),
            withheld: vec!["api_token".into()],
            reason: None,
        };
        let line = describe_elicitation(&entry);
        assert!(!line.chars().any(crate::display::hidden), "{line:?}");
        assert!(
            line.contains(r#"asker\u001b[2J asked during asker\u001b[2J.ask: Who\u000aare \u202eyou?  accepted  {"email":"a@b.org"} (not recorded: api_token)"#),
            "{line}"
        );
        let json = serde_json::to_value(&entry).expect("json");
        assert_eq!(json["kind"], "elicitation");
        assert!(is_elicitation(&json.to_string()), "told from a call's line");
        assert!(!is_elicitation(
            &serde_json::to_string(&entry_call()).expect("json")
        ));
    }

    fn entry_call() -> AuditEntry {
        entry("echo")
    }

    #[test]
    fn each_workspace_has_its_own_state_outside_it() {
        let home = tempfile::tempdir().expect("home");
        let a = tempfile::tempdir().expect("a");
        let b = tempfile::tempdir().expect("b");
        let sa = WorkspaceState::new(home.path(), a.path());
        let sb = WorkspaceState::new(home.path(), b.path());
        assert_ne!(sa, sb);
        assert!(sa.dir().starts_with(home.path().join("workspaces")));
        assert!(!sa.dir().starts_with(a.path()));
        assert_eq!(
            sa,
            WorkspaceState::new(home.path(), &a.path().join(".")),
            "the same folder, however it is written"
        );
    }
}
