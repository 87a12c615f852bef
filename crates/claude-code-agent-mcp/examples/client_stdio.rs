//! Connects to a stdio MCP server, lists what it offers, optionally calls a
//! tool, and shuts it down.
//!
//! ```text
//! cargo run -p claude-code-agent-mcp --example client_stdio -- <command> [args…]
//! CALL='add {"a":1,"b":2}' cargo run -p claude-code-agent-mcp --example client_stdio -- \
//!     target/debug/examples/stdio_server
//! ```

use claude_code_agent_mcp::client::{ClientOptions, McpClient, StdioOptions, StdioTransport};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv = std::env::args().skip(1);
    let program = argv.next().ok_or("usage: client_stdio <command> [args…]")?;
    let transport = StdioTransport::spawn(
        StdioOptions::new(program)
            .args(argv)
            .on_stderr(|line| eprintln!("[server] {line}")),
    )?;
    let options = ClientOptions::new("client_stdio-example", "0.1.0")
        .on_roots_list(|_| async { Ok(json!({"roots": []})) })
        .on_notification(|n| eprintln!("[notification] {n:?}"));
    let client = McpClient::connect(transport, options).await?;
    println!(
        "server: {:?} (protocol {})",
        client.server_info(),
        client.protocol_version()
    );
    println!(
        "capabilities: {}",
        Value::Object(client.server_capabilities().clone())
    );
    for tool in client.list_tools().await? {
        println!(
            "tool {}: {}",
            tool.name,
            tool.description.unwrap_or_default()
        );
    }
    if client.server_capabilities().contains_key("resources") {
        for r in client.list_resources().await? {
            println!("resource {} ({})", r.uri, r.name);
        }
        for t in client.list_resource_templates().await? {
            println!("template {} ({})", t.uri_template, t.name);
        }
    }
    if client.server_capabilities().contains_key("prompts") {
        for p in client.list_prompts().await? {
            println!(
                "prompt {} {:?}",
                p.name,
                p.arguments.iter().map(|a| &a.name).collect::<Vec<_>>()
            );
        }
    }
    if let Ok(call) = std::env::var("CALL") {
        let (name, args) = call.split_once(' ').unwrap_or((&call, "{}"));
        let result = client.call_tool(name, serde_json::from_str(args)?).await?;
        println!("{name} → {}", result.into_value());
    }
    client.ping().await?;
    client.close().await?;
    Ok(())
}
