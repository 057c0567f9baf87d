//! The desktop link: how `ipybox mcp --approval desktop` has the tool calls of an agent's
//! code approved by the ipybox app open on the same workspace, through the app's dialog,
//! rules and audit log.
//!
//! The app listens on a Unix socket in the user's runtime directory (`$XDG_RUNTIME_DIR`,
//! else ipybox's data directory), in a directory only the user can enter, mode 0600, and
//! checks that the peer runs as the same user. Both ends then prove they know a secret the
//! app wrote into the workspace's state directory in ipybox's data directory (0600; kernel
//! code never gets it, and a sandboxed kernel can neither read that directory nor create a
//! Unix socket): each answers the other's fresh nonce with an HMAC-SHA256, so neither a
//! process that merely opened the socket nor one that merely listens on its path (to approve
//! calls itself) gets anywhere.
//!
//! After that the agent's side only *asks*: it sends a call, and the app answers with the
//! decision its person, rules or batch made. Nothing an agent sends can decide a request.
//! The protocol is JSON Lines, one message per line, tagged by `type`.
//!
//! The parts: `wire` is what crosses the socket and where it is (the messages, their
//! framing, the proofs, the paths), `app` the app's end ([`LinkServer`]), `agent` the
//! agent's end ([`DesktopApproval`]).

mod agent;
mod app;
mod wire;

pub use agent::DesktopApproval;
pub use app::LinkServer;
pub use wire::LinkPaths;
