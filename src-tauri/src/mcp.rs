//! MCP client side: the connection parameters users register, `${VAR}` substitution,
//! connecting to a server over stdio, Streamable HTTP or the legacy HTTP+SSE transport, and
//! what the client answers a server (elicitation, progress, logs).

pub mod client;
pub mod handler;
mod http;
pub mod oauth;
pub mod params;
pub mod sse;

pub use client::{McpConnection, connect};
pub use params::ServerParams;
