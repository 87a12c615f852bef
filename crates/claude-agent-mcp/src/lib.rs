//! Model Context Protocol (MCP) for Rust.
//!
//! This crate knows nothing about the Claude Code CLI. It holds:
//!
//! * [`jsonrpc`] — JSON-RPC 2.0 ids, error objects and reply builders;
//! * [`types`] — MCP wire types (tools, content blocks, call results, handshake);
//! * [`server`] — an in-process MCP server whose single entry point,
//!   [`Handler::handle`], serves every transport.
#![warn(missing_docs)]

pub mod jsonrpc;
pub mod server;
pub mod types;

pub use server::{
    Handler, Json, RequestContext, Server, ServerBuilder, Session, Tool, ToolContext, ToolResult,
};
pub use types::{CallToolResult, Content};
