//! What every transport shares: NDJSON framing, child processes, the
//! table of requests in flight, and the `x-mcp-header` rules.
//!
//! * [`json`] — JSON read as JavaScript and Python peers write it (lone
//!   surrogate escapes decode to U+FFFD), and the envelope of a message
//!   that does not decode; every transport decodes through it.
//! * [`lines`] — [`LineReader`] and [`LineWriter`]: bounded,
//!   cancellation-safe NDJSON, for the stdio client, [`serve_lines`](crate::server::serve_lines) and
//!   the Claude Code SDK's pipes to the CLI.
//! * [`process`] — [`ProcessGroup`]: a child spawned as the leader of its
//!   own process group, reaped by a thread, shut down with timeouts,
//!   killed on drop, its stderr drained into a bounded tail; one
//!   [orphan policy](process#the-orphan-policy).
//! * [`mcp_headers`] — the `Mcp-Method`, `Mcp-Name` and `x-mcp-header` /
//!   `Mcp-Param-*` rules of the stateless revision, for the HTTP client
//!   and server alike.
//! * [`RequestTable`] — our requests waiting for the peer's answer and the
//!   peer's requests we are answering, by id, under one lock. Used by the
//!   MCP client, the MCP server's sessions and the Claude Code SDK's
//!   control channel.
pub(crate) mod budget;
pub mod json;
pub mod lines;
pub mod mcp_headers;
pub mod process;
mod requests;

pub use lines::{
    DEFAULT_MAX_LINE_BYTES, DEFAULT_WRITE_BUFFER_BYTES, Line, LineReader, LineWriter, Order,
    Parsed, SendError, parse_line, parse_object,
};
pub use process::{
    DEFAULT_STDERR_TAIL_BYTES, Process, ProcessGroup, ProcessWatch, ShutdownTimeouts,
    StderrCallback, StdioOptions, spawn,
};
pub use requests::{RegisterError, RequestTable};
