//! Talking to IPython kernels through a Jupyter Kernel Gateway: the gateway process, its
//! REST/WebSocket API, typed messages, one kernel session, and output collection.

pub mod api;
pub mod connector;
pub mod enclosure;
pub mod gateway;
pub mod messages;
pub mod output;
pub mod session;
