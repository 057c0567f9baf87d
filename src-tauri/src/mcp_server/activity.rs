//! What agents do in their sessions, as it happens: the cells they run, with their output,
//! for a window that shows each agent's session as a notebook of its own (read-only: the
//! agent owns it).

use std::sync::Arc;

use serde::Serialize;

use crate::executor::Output;

/// One step of an agent's session.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentActivity {
    /// The agent sent a cell to run.
    CellQueued {
        /// The session (a number that stays the same for the session's life).
        session: u64,
        /// The session in words ("agent session 4f2a9c1e"), as approval dialogs name it.
        name: String,
        /// The execution's id.
        execution_id: String,
        /// The cell's code.
        code: String,
    },
    /// The kernel began running it.
    CellStarted {
        /// The session.
        session: u64,
        /// The execution.
        execution_id: String,
        /// The kernel's execution count, when it gave one.
        execution_count: Option<i64>,
    },
    /// Output of a running cell, in order.
    CellOutput {
        /// The session.
        session: u64,
        /// The execution.
        execution_id: String,
        /// The output.
        output: Output,
    },
    /// The cell ended.
    CellFinished {
        /// The session.
        session: u64,
        /// The execution.
        execution_id: String,
        /// Why it failed, in words, when it did not end normally (an exception's traceback
        /// is already among its outputs).
        error: Option<String>,
    },
    /// The agent reset its kernel: the session's variables are gone.
    KernelReset {
        /// The session.
        session: u64,
    },
    /// The session ended; no more cells come.
    SessionEnded {
        /// The session.
        session: u64,
        /// Why, in words.
        reason: String,
    },
}

/// Hears every agent session's activity. Called on the session's task: keep it quick.
#[derive(Clone)]
pub struct ActivityListener(pub Arc<dyn Fn(AgentActivity) + Send + Sync>);

impl std::fmt::Debug for ActivityListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ActivityListener")
    }
}

impl ActivityListener {
    pub(super) fn tell(&self, activity: AgentActivity) {
        (self.0)(activity);
    }
}
