//! Our MCP server with the tools and handlers that the TypeScript SDK
//! client script (`tests/peers/ts_client.mjs` of the MCP crate) drives,
//! served on stdin/stdout with `serve_stdio`: over stdio the script's
//! `StdioClientTransport` starts this program (`tests/it/interop_ts_client.rs`
//! builds it first). Over Streamable HTTP that test serves the same server
//! in its own process.
//!
//! The server is the MCP crate's test support, compiled in here: one
//! definition for both transports.
//!
//! `interop-server [--max-held-bytes N]`: `N` is the byte budget of the
//! client ([`ServeOptions::max_held_bytes`]; default the crate's).

use claude_code_agent_mcp::server::{ServeOptions, serve_stdio_with};

#[path = "../../../claude-code-agent-mcp/tests/it/support/interop_server.rs"]
mod interop_server;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let mut options = ServeOptions::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next().and_then(|n| n.parse().ok())) {
            ("--max-held-bytes", Some(n)) => options = options.max_held_bytes(n),
            _ => {
                eprintln!("usage: interop-server [--max-held-bytes N]");
                std::process::exit(2);
            }
        }
    }
    serve_stdio_with(interop_server::server(), options).await
}
