//! MCP status, reconnect and toggle on a `Client` with an in-process server
//! (the "MCP status (Client only)" part of the guide this SDK implements),
//! and the progress the tool reports, as it arrives.
//!
//! ```text
//! cargo run -p claude-code-agent --example mcp_control
//! ```
//!
//! With `ANTHROPIC_API_KEY` set this talks to the real API. Without it, it
//! starts the testkit's mock model on 127.0.0.1, scripted to call the tool
//! after each step, so it runs offline against the pinned CLI.
//!
//! Claude Code CLI 2.1.332 refuses `mcp_reconnect` for in-process servers;
//! `Client::reconnect_mcp_server` toggles such a server off and on instead
//! (a fresh handshake), so the same call works for every kind of server.

#[path = "support/offline.rs"]
mod offline;

use claude_code_agent::mcp::{Server, Tool, ToolContext};
use claude_code_agent::{Client, Message, Options};
use claude_code_agent_testkit::{MockModel, Turn};
use futures::StreamExt;
use serde_json::{Value, json};

/// The `my-app` server: one tool that reports its progress.
fn my_app() -> Server {
    Server::builder("my-app", "1.0.0")
        .tool(
            Tool::new(
                "lookup",
                "Looks something up, in two steps",
                |args: Value, ctx: ToolContext| async move {
                    ctx.progress(1.0, Some(2.0), Some("searching"));
                    ctx.progress(2.0, Some(2.0), Some("found"));
                    format!("found {}", args["what"].as_str().unwrap_or("nothing"))
                },
            )
            .input_schema(json!({"type": "object", "properties": {"what": {"type": "string"}}})),
        )
        .build()
}

/// Sends `prompt` and prints what comes back, progress included.
async fn ask(client: &Client, prompt: &str) -> claude_code_agent::Result<()> {
    println!("> {prompt}");
    client.query(prompt).await?;
    let mut stream = client.receive_response();
    while let Some(message) = stream.next().await {
        match message? {
            Message::McpProgress(p) => println!(
                "  [progress] {}/{} {}/{}: {}",
                p.server_name.unwrap_or_default(),
                p.tool_name.unwrap_or_default(),
                p.progress.unwrap_or_default(),
                p.total.unwrap_or_default(),
                p.message.unwrap_or_default()
            ),
            Message::Result(r) => println!("  [result] {}", r.result.unwrap_or_default()),
            _ => {}
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut options = Options::new()
        .mcp_server(my_app())
        .allowed_tools(["mcp__my-app"]);

    // Held until the end: the mock model and the CLI's temporary folders.
    let mut _offline = None;
    if std::env::var_os("ANTHROPIC_API_KEY").is_none() {
        println!("No ANTHROPIC_API_KEY: using the testkit's mock model.");
        let lookup = || Turn::tool_use("mcp__my-app__lookup", json!({"what": "the answer"}));
        let reply = || {
            Turn::dynamic(|request| {
                let text = request.tool_results().first().map(|r| r.text());
                Turn::text(format!("The tool said: {}", text.unwrap_or_default()))
            })
        };
        let mock = MockModel::builder()
            .turns([lookup(), reply(), lookup(), reply(), lookup(), reply()])
            .start()
            .await;
        let (offline_options, held) = offline::offline(options, mock).await?;
        options = offline_options;
        _offline = Some(held);
    }

    let client = Client::connect(options).await?;
    ask(&client, "Look up the answer.").await?;

    // Check whether MCP servers are connected.
    let status = client.mcp_status().await?;
    for server in &status.mcp_servers {
        println!("{}: {:?}", server.name, server.status);
    }

    // Reconnect a server (in-process here).
    client.reconnect_mcp_server("my-app").await?;
    ask(&client, "Look it up again.").await?;

    // Toggle a server off and on.
    client.toggle_mcp_server("my-app", false).await?; // disable
    client.toggle_mcp_server("my-app", true).await?; // re-enable
    ask(&client, "And once more.").await?;

    client.disconnect().await?;
    Ok(())
}
