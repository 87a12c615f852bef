//! A client talking to our own server in the same process: no
//! serialization, no task switch.
//!
//! ```text
//! cargo run -p claude-code-agent-mcp --example client_in_process
//! ```

use claude_code_agent_mcp::client::{ClientOptions, InProcessTransport, McpClient};
use claude_code_agent_mcp::{Server, Tool};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: f64,
    b: f64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("calc", "1.0.0")
        .tool(Tool::new("add", "Add two numbers", |x: Add| async move {
            x.a + x.b
        }))
        .build();
    let client = McpClient::connect(
        InProcessTransport::new(server),
        ClientOptions::new("example", "0.1.0"),
    )
    .await?;
    println!(
        "connected to {:?}, protocol {}",
        client.server_info(),
        client.protocol_version()
    );
    for tool in client.list_tools().await? {
        println!("tool {}: {}", tool.name, tool.input_schema);
    }
    let result = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
    println!("add(2, 3) = {}", result.text_content());
    match client.call_tool("missing", json!({})).await {
        Err(e) if e.jsonrpc_error().is_some() => println!("server error: {e}"),
        other => println!("unexpected: {other:?}"),
    }
    client.close().await?;
    Ok(())
}
