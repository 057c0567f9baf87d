//! The tool server: how kernel code calls MCP tools. Generated modules ask for
//! `{server, tool, args}` over the kernel's stdin channel; the tool server looks the server up
//! in the application's registry, asks for approval, and calls the tool over a lazily
//! started, reused MCP session.

// Session grants are the desktop app's (its dialog's "Allow for this session").
#[cfg(feature = "desktop")]
pub mod grants;
pub mod rules;
pub mod server;
pub mod sessions;

pub use crate::approval::{
    ApprovalHandler, ApprovalRequest, Approvals, AutoApprove, Decision, RejectAll, ToolEvent,
};
pub use rules::{
    ArgMatcher, CallFacts, Rule, RuleDecision, Rules, RulesHandler, Scope as RuleScope,
    rule_would_match,
};
pub use server::ToolServer;
pub use sessions::Sessions;
