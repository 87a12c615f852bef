//! Give Claude your own Rust tools, in process, through the Claude Code CLI.
#![warn(missing_docs)]

mod error;

pub use error::{Error, Result};

/// The MCP layer: protocol types, the in-process server, client and transports.
pub use claude_agent_mcp as mcp;
