//! The demo calculator server over stdin/stdout (NDJSON), for the stdio
//! client's tests and benchmark.
//!
//! ```text
//! cargo run -p claude-code-agent-mcp --example stdio_server
//! ```

#[path = "../tests/it/support/calc.rs"]
mod calc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    claude_code_agent_mcp::server::serve_stdio(calc::calc_server()).await
}
