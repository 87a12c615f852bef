//! Give Claude an in-process calculator and ask it something.
//!
//! ```text
//! cargo run -p claude-code-agent --example quickstart
//! ```
//!
//! With `ANTHROPIC_API_KEY` set this talks to the real API. Without it, it
//! starts the testkit's mock model on 127.0.0.1, scripted to call the tools,
//! so it runs offline; the first line says which.

#[path = "support/calc.rs"]
mod calc;

#[path = "support/offline.rs"]
mod offline;

use std::time::Instant;

use claude_code_agent::{ContentBlock, Message, Options, query};
use claude_code_agent_testkit::{MockModel, Turn};
use futures::StreamExt;
use serde_json::json;

const PROMPT: &str = "What is 2+3, and what is 10/0?";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut options = Options::new()
        .mcp_server(calc::calc_server())
        .allowed_tools(["mcp__calc__add", "mcp__calc__divide"])
        .max_turns(4);

    // Held until the end: the mock model and the CLI's temporary folders.
    let mut _offline = None;
    if std::env::var_os("ANTHROPIC_API_KEY").is_some() {
        println!("Using the Anthropic API (ANTHROPIC_API_KEY is set).");
    } else {
        println!(
            "No ANTHROPIC_API_KEY: using the testkit's mock model, scripted to call the tools."
        );
        let mock = MockModel::builder()
            .turn(
                Turn::text("Let me work both out.")
                    .with_tool_use("mcp__calc__add", json!({"a": 2, "b": 3})),
            )
            .turn(Turn::tool_use(
                "mcp__calc__divide",
                json!({"a": 10, "b": 0}),
            ))
            .turn(Turn::dynamic(|request| {
                let error = request
                    .tool_results()
                    .first()
                    .map(|r| r.text())
                    .unwrap_or_default();
                Turn::text(format!(
                    "2 + 3 = 5. 10 / 0 has no answer: the calculator said \"{error}\"."
                ))
            }))
            .start()
            .await;
        let (offline_options, held) = offline::offline(options, mock).await?;
        options = offline_options;
        _offline = Some(held);
    }

    println!("> {PROMPT}\n");
    let started = Instant::now();
    let mut first_message = None;
    let mut stream = query(PROMPT, options);
    while let Some(message) = stream.next().await {
        let message = message?;
        first_message.get_or_insert_with(|| started.elapsed());
        match &message {
            Message::Assistant(m) => {
                for block in m.content() {
                    match block {
                        ContentBlock::Text(t) if !t.text.trim().is_empty() => {
                            println!("Claude: {}", t.text)
                        }
                        ContentBlock::ToolUse(t) => {
                            println!("  [tool call] {} {}", t.name, t.input)
                        }
                        _ => {}
                    }
                }
            }
            Message::User(m) => {
                for result in m.tool_results() {
                    let text = result
                        .content
                        .as_ref()
                        .map(|c| c.text())
                        .unwrap_or_default();
                    let status = if result.is_error == Some(true) {
                        "error"
                    } else {
                        "ok"
                    };
                    println!("  [tool result, {status}] {text}");
                }
            }
            Message::Result(r) => {
                println!();
                println!(
                    "Done: {} turn(s), ${:.4}, {} ms{}",
                    r.num_turns.unwrap_or(0),
                    r.total_cost_usd.unwrap_or(0.0),
                    r.duration_ms.unwrap_or(0),
                    if r.is_error {
                        " (ended with an error)"
                    } else {
                        ""
                    }
                );
            }
            _ => {}
        }
    }
    if let Some(t) = first_message {
        println!("First message after {} ms.", t.as_millis());
    }
    Ok(())
}
