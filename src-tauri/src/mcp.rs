//! MCP client side: the connection parameters users register, `${VAR}` substitution, and
//! connecting to a server over stdio, Streamable HTTP or the legacy HTTP+SSE transport.

pub mod client;
pub mod params;
pub mod sse;

pub use client::{McpConnection, connect};
pub use params::ServerParams;
