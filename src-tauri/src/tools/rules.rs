//! Approval rules: a versioned JSON file that allows or rejects MCP tool calls by server
//! name, tool name and arguments, so that calls can be approved without a person to ask
//! (`--approval rules FILE`, and later the desktop app, which writes the same format).
//!
//! The first rule whose server, tool and argument conditions all match decides; a call that
//! no rule matches is rejected, and the rejection names a rule that would allow it. The
//! format is specified in `docs/approval-rules.md`:
//!
//! ```json
//! {
//!   "version": 1,
//!   "rules": [
//!     {"server": "github", "tool": "get_*", "decision": "allow"},
//!     {"server": "filesystem", "tool": "read_*",
//!      "args": {"path": {"under": "/home/me/project"}}, "decision": "allow"},
//!     {"server": "*", "tool": "delete_*", "decision": "reject",
//!      "reason": "deletions are never allowed"}
//!   ]
//! }
//! ```
//!
//! Rules see the arguments as the kernel code sent them, nothing more: `under` compares paths
//! lexically and does not resolve symlinks.
//!
//! The parts: `format` holds the rule format's types, `file` reads, checks and writes the
//! file, `args` holds the conditions on arguments and the comparisons they make,
//! `matching` decides a call by the rules, `words` says a rule to a person, and `handler`
//! decides approval requests by them.

mod args;
mod file;
mod format;
mod handler;
mod matching;
#[cfg(test)]
mod testing;
mod words;

pub use format::{ArgMatcher, Rule, RuleDecision, Rules, Scope};
pub use handler::RulesHandler;
pub use matching::{CallFacts, rule_would_match};
