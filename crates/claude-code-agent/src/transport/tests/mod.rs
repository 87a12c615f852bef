//! Tests of the CLI transport: finding the CLI, and the mapping of the MCP
//! crate's transport layer onto this crate's errors (framing and process
//! hygiene themselves are tested with the shared code, in
//! `claude_code_agent_mcp::__private::transport`).

mod adapter;
mod discover;
mod process;
mod support;
