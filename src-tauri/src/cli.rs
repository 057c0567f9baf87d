//! The `ipybox` command line, one subcommand (or concern) per file: `args` is what it
//! reads, `words` what it says; the rest run a subcommand each.

pub(crate) mod args;
pub(crate) mod audit;
pub(crate) mod exec;
pub(crate) mod export;
pub(crate) mod mcp;
pub(crate) mod open;
pub(crate) mod sandbox;
pub(crate) mod signin;
pub(crate) mod terminal;
mod terminal_form;
pub(crate) mod words;
