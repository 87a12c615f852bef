//! An MCP server whose tool asks the user a question (`elicitation/create`),
//! and a program answering it with `Options::on_elicitation`.
//!
//! ```text
//! cargo run -p claude-code-agent --example elicitation             # the whole exchange
//! cargo run -p claude-code-agent --example elicitation -- --stdio  # the server alone, over stdio
//! ```
//!
//! The CLI forwards elicitations of the external servers it runs (it
//! declares no elicitation capability to in-process ones), so the server
//! runs as one: this same program with `--stdio`, started by the CLI. The
//! tool `greet` asks for a name; the program's `on_elicitation` answers
//! "Ada"; the tool's result says what came back. With `ANTHROPIC_API_KEY`
//! set this talks to the real API; without it, to the testkit's mock model
//! scripted to call the tool.
//!
//! `ToolContext::request` needs a connection that carries requests to the
//! client. Claude Code 2.1.332 first asks a server for the stateless
//! revision (2026-07-28, `server/discover`), which has none: there a tool
//! asks with an `input_required` result instead. So this server answers
//! `server/discover` with "method not found" ([`Stateful`]), and the CLI
//! connects with `initialize` (2025-11-25).

#[path = "support/offline.rs"]
mod offline;

use claude_code_agent::mcp::jsonrpc::{ErrorObject, error_response};
use claude_code_agent::mcp::{Handler, RequestContext, Server, Tool, ToolContext};
use claude_code_agent::protocol::ElicitationResponse;
use claude_code_agent::{McpServerConfig, Message, Options, query};
use claude_code_agent_testkit::{MockModel, Turn};
use futures::StreamExt;
use serde_json::{Value, json};

/// The `signup` server: `greet` asks for the user's name.
fn signup_server() -> Server {
    Server::builder("signup", "1.0.0")
        .tool(Tool::new(
            "greet",
            "Greets the user by the name they give",
            |_: (), ctx: ToolContext| async move {
                let question = json!({
                    "message": "What is your name?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string", "description": "Your name"}},
                        "required": ["name"],
                    },
                });
                match ctx.request("elicitation/create", question).await {
                    Ok(answer) => match answer["action"].as_str() {
                        Some("accept") => {
                            let name = answer["content"]["name"].as_str().unwrap_or("?");
                            format!("Hello, {name}!")
                        }
                        other => format!("no name given ({})", other.unwrap_or("?")),
                    },
                    Err(e) => format!("could not ask: {e}"),
                }
            },
        ))
        .build()
}

/// `server` without the stateless revision: `server/discover` is refused,
/// so clients connect with `initialize`.
struct Stateful(Server);

impl Handler for Stateful {
    fn handle(
        &self,
        message: Value,
        ctx: RequestContext,
    ) -> futures::future::BoxFuture<'_, Option<Value>> {
        if message["method"] == "server/discover" {
            let error = ErrorObject::method_not_found("server/discover");
            return Box::pin(async move { Some(error_response(&message["id"], error)) });
        }
        Handler::handle(&self.0, message, ctx)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("--stdio") {
        return Ok(claude_code_agent::mcp::server::serve_stdio(Stateful(signup_server())).await?);
    }
    let me = std::env::current_exe()?.to_string_lossy().into_owned();
    let mut options = Options::new()
        .mcp_server_config("signup", McpServerConfig::stdio(me, ["--stdio"]))
        .allowed_tools(["mcp__signup__greet"])
        .max_turns(3)
        .on_elicitation(|request, _ctx| async move {
            println!("  [{} asks] {}", request.mcp_server_name, request.message);
            ElicitationResponse::accept(json!({"name": "Ada"}))
        });

    let mut _offline = None;
    if std::env::var_os("ANTHROPIC_API_KEY").is_none() {
        println!("No ANTHROPIC_API_KEY: using the testkit's mock model.");
        let mock = MockModel::builder()
            .turn(Turn::tool_use("mcp__signup__greet", json!({})))
            .turn(Turn::dynamic(|request| {
                let said = request.tool_results().first().map(|r| r.text());
                Turn::text(format!("The tool said: {}", said.unwrap_or_default()))
            }))
            .start()
            .await;
        let (offline_options, held) = offline::offline(options, mock).await?;
        options = offline_options;
        _offline = Some(held);
    }

    let mut stream = query("Greet me.", options);
    while let Some(message) = stream.next().await {
        match message? {
            Message::User(m) => {
                for result in m.tool_results() {
                    let text = result.content.as_ref().map(|c| c.text());
                    println!("  [tool result] {}", text.unwrap_or_default());
                }
            }
            Message::Result(r) => println!("Claude: {}", r.result.unwrap_or_default()),
            _ => {}
        }
    }
    Ok(())
}
