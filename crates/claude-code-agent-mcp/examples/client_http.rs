//! A client over Streamable HTTP.
//!
//! ```text
//! cargo run -p claude-code-agent-mcp --example client_http -- http://127.0.0.1:3001/mcp [bearer-token]
//! CALL='get-sum {"a":1,"b":2}' cargo run -p claude-code-agent-mcp --example client_http -- http://127.0.0.1:3001/mcp
//! ```

use std::time::Duration;

use claude_code_agent_mcp::client::{ClientOptions, HttpOptions, HttpTransport, McpClient};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv = std::env::args().skip(1);
    let url = argv
        .next()
        .ok_or("usage: client_http <url> [bearer-token]")?;
    let mut http = HttpOptions::new(url).connect_timeout(Duration::from_secs(5));
    if let Some(token) = argv.next() {
        http = http.bearer_token(token);
    }
    let options = ClientOptions::new("client_http-example", "0.1.0")
        .on_notification(|n| eprintln!("[notification] {n:?}"));
    let client = McpClient::connect(HttpTransport::new(http)?, options).await?;
    println!(
        "server: {:?} (protocol {})",
        client.server_info(),
        client.protocol_version()
    );
    for tool in client.list_tools().await? {
        println!("tool {}", tool.name);
    }
    if let Ok(call) = std::env::var("CALL") {
        let (name, args) = call.split_once(' ').unwrap_or((&call, "{}"));
        let result = client.call_tool(name, serde_json::from_str(args)?).await?;
        println!("{name} → {}", result.into_value());
    }
    client.close().await?;
    Ok(())
}
