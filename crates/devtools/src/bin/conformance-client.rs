//! The client under the MCP conformance suite's client scenarios
//! (`@modelcontextprotocol/conformance client --command …`): the harness
//! runs this with its server URL as the last argument and the scenario in
//! `MCP_CONFORMANCE_SCENARIO`.
//!
//! ```text
//! npx @modelcontextprotocol/conformance client \
//!     --command "target/debug/conformance-client" --scenario initialize
//! ```

use std::time::Duration;

use claude_code_agent_mcp::client::{
    ClientOptions, HandshakeMode, HttpOptions, HttpTransport, McpClient,
};
use serde_json::{Map, Value, json};

/// An elicitation answer that accepts, filling every field with its schema default.
fn accept_with_defaults(params: &Value) -> Value {
    let mut content = Map::new();
    if let Some(props) = params
        .pointer("/requestedSchema/properties")
        .and_then(Value::as_object)
    {
        for (name, schema) in props {
            if let Some(default) = schema.get("default") {
                content.insert(name.clone(), default.clone());
            }
        }
    }
    json!({"action": "accept", "content": content})
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .next_back()
        .ok_or("usage: conformance-client <server-url>")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let options = ClientOptions::new(
        "claude-code-agent-mcp-conformance",
        env!("CARGO_PKG_VERSION"),
    )
    .handshake(HandshakeMode::Initialize)
    .request_timeout(Duration::from_secs(20))
    .on_elicitation(|params| async move { Ok(accept_with_defaults(&params)) });
    let transport = HttpTransport::new(HttpOptions::new(&url))?;
    let client = McpClient::connect(transport, options).await?;
    eprintln!(
        "scenario {scenario:?}: connected to {:?}",
        client.server_info()
    );
    let tools = client.list_tools().await?;
    match scenario.as_str() {
        "initialize" => {}
        "tools_call" => {
            let r = client
                .call_tool("add_numbers", json!({"a": 5, "b": 3}))
                .await?;
            eprintln!("add_numbers → {}", r.text_content());
        }
        _ => {
            // Other scenarios: call each tool the server offers, with no arguments.
            for tool in &tools {
                match client.call_tool(&tool.name, json!({})).await {
                    Ok(r) => eprintln!("{} → {}", tool.name, r.into_value()),
                    Err(e) => eprintln!("{} failed: {e}", tool.name),
                }
            }
        }
    }
    client.close().await?;
    Ok(())
}
