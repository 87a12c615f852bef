//! What every transport shares: the table of requests in flight.
//!
//! * [`RequestTable`] — our requests waiting for the peer's answer and the
//!   peer's requests we are answering, by id, under one lock. Used by the
//!   MCP client, the MCP server's sessions and the Claude Code SDK's
//!   control channel.

mod requests;

pub use requests::{RegisterError, RequestTable};
