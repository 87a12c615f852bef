//! Our MCP server with the tools and handlers that the TypeScript SDK
//! client script (`tests/peers/ts_client.mjs` of the MCP crate) drives,
//! served on stdin/stdout with `serve_stdio`: over stdio the script's
//! `StdioClientTransport` starts this program (`tests/it/interop_ts_client.rs`
//! builds it first). Over Streamable HTTP that test serves the same server
//! in its own process.
//!
//! The server is the MCP crate's test support, compiled in here: one
//! definition for both transports.

#[path = "../../../claude-code-agent-mcp/tests/it/support/interop_server.rs"]
mod interop_server;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    claude_code_agent_mcp::server::serve_stdio(interop_server::server()).await
}
