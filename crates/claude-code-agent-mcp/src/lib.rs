//! Model Context Protocol (MCP) for Rust.
//!
//! This crate knows nothing about the Claude Code CLI. It holds:
//!
//! * [`jsonrpc`] — JSON-RPC 2.0 ids, error objects and reply builders;
//! * [`types`] — MCP wire types (tools, content blocks, call results, handshake);
//! * [`server`] — an in-process MCP server whose single entry point,
//!   [`Server::handle`] (or [`Handler::handle`]), serves every transport;
//! * `http_server` — (feature `http-server`, on by default) any server
//!   over Streamable HTTP, as an axum router or on its own;
#![cfg_attr(feature = "http-server", doc = "  see [`http_server`];")]
//! * [`client`] — an MCP client over in-process, stdio and (feature
//!   `http-client`, on by default) Streamable HTTP transports;
//! * `trace_context` — (feature `opentelemetry`) W3C trace context carried
//!   with each request (SEP-414), so that a served request's span is a
//!   child of the caller's.
#![cfg_attr(feature = "opentelemetry", doc = "  See [`trace_context`].")]
//!
//! Every request the client sends and every request a server serves runs
//! in a `tracing` span (`mcp.client.request`, `mcp.server.request`, at
//! level INFO) named and attributed as OpenTelemetry's MCP conventions
//! say; without a subscriber that wants them they cost nothing.
//!
//! Features: `http-client` and `http-server` (on by default; without
//! default features the crate compiles none of the HTTP stack); off by
//! default: `oauth-client` (the HTTP client reaches servers behind OAuth
//! 2.1), `oauth-server` (the HTTP server as an OAuth protected resource),
//! `redis` (an event store in Redis for replicas of the HTTP server),
//! `rmcp` (an rmcp `ServerHandler` as a [`Handler`]), `opentelemetry`
//! (trace context across MCP, on `tracing-opentelemetry`) and `jsonschema` (tool
//! arguments are validated by a built-in JSON Schema checker; this adds the
//! `jsonschema` crate for the schemas it leaves aside: draft 4, a `$ref` to
//! another document or to a meta-schema, patterns with Unicode classes or
//! look-around, draft 6/7 format assertions). Supported platforms: Linux
//! and macOS (the stdio client runs a server in its own process group,
//! which is POSIX).
//!
//! ```
//! use claude_code_agent_mcp::{Json, RequestContext, Server, Tool};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Numbers {
//!     /// The values to summarize.
//!     values: Vec<f64>,
//! }
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Stats { count: usize, mean: f64 }
//!
//! let stats = Tool::new("stats", "Count and mean", |n: Numbers| async move {
//!     let count = n.values.len();
//!     let mean = n.values.iter().sum::<f64>() / count.max(1) as f64;
//!     Json(Stats { count, mean })
//! })
//! .output_schema::<Stats>();
//!
//! let server = Server::builder("calc", "1.0.0").tool(stats).build();
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let reply = server
//!     .handle(
//!         json!({"jsonrpc":"2.0","id":"a","method":"tools/call",
//!                "params":{"name":"stats","arguments":{"values":[1,2,3]}}}),
//!         RequestContext::new(),
//!     )
//!     .await
//!     .unwrap();
//! assert_eq!(reply["id"], "a");
//! assert_eq!(reply["result"]["structuredContent"], json!({"count":3,"mean":2.0}));
//! # });
//! ```
#![warn(missing_docs)]

#[cfg(not(any(unix, windows)))]
compile_error!(
    "claude-code-agent-mcp supports Unix-like systems (Linux, macOS) and Windows: its stdio \
     client runs the server in a process group (POSIX) or a Job Object (Windows)."
);

pub mod client;
#[cfg(feature = "__fuzz")]
mod fuzz;
#[cfg(feature = "http-server")]
pub mod http_server;
#[cfg(any(feature = "oauth-client", feature = "oauth-server"))]
mod jose;
pub mod jsonrpc;
#[cfg(feature = "rmcp")]
pub mod rmcp_server;
pub mod server;
mod spans;
#[cfg(feature = "opentelemetry")]
pub mod trace_context;
mod transport;
pub mod types;

pub use server::{
    AccessToken, Handler, IntoToolResult, Json, RawResult, RequestContext, Server, ServerBuilder,
    Session, Tool, ToolContext, ToolHandler,
};
pub use types::{CallToolResult, Content, LogLevel};

/// The guide in `docs/mcp-client.md`, compiled so its examples stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/mcp-client.md")]
mod mcp_client_guide {}

/// Not public API: shared with the Claude Code SDK built on this crate, no
/// semver promise; do not use.
///
/// The transport internals (NDJSON framing, child process groups, the
/// request table, the lenient JSON decoder, the `x-mcp-header` rules), the
/// SSE parser and the panic-message helper, which the Claude Code SDK, this
/// workspace's tooling, fuzz targets and tests share with this crate.
/// Anything here may change or go in any release.
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "http-client")]
    pub use crate::client::http::{SseEvent, SseEventTooLarge, SseParser};
    pub use crate::server::contain::panic_message;
    pub use crate::server::{ToolCallReply, ToolCallText};
    pub use crate::transport::mcp_headers::encode_header_value;

    /// What the transports share: NDJSON framing, child process groups,
    /// the request table, lenient JSON, the `x-mcp-header` rules.
    pub mod transport {
        pub use crate::transport::*;
    }

    /// The fuzz targets' checks and their short run in the tests (feature
    /// `__fuzz`).
    #[cfg(feature = "__fuzz")]
    pub mod fuzz {
        pub use crate::fuzz::*;
    }

    /// The Redis client and the connection setup of `RedisEventStore`,
    /// shared with the SDK's Redis session store.
    #[cfg(feature = "redis")]
    pub mod redis {
        pub use crate::http_server::store::redis::{connect, failed};
        pub use ::redis::*;
    }
}

/// The `schemars` this crate derives schemas with, for `#[derive(JsonSchema)]`.
pub use schemars;
