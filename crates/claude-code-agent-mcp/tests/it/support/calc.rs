//! The calculator-like demo server shared by the fidelity tests, the stdio
//! server example and the benchmarks (one definition, so in-process and
//! stdio serve exactly the same thing).

use std::time::Duration;

use claude_code_agent_mcp::server::ServerBuilder;
use claude_code_agent_mcp::{Json, LogLevel, Server, Tool, ToolContext};
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Pair {
    /// Left operand.
    pub a: f64,
    /// Right operand.
    pub b: f64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct Quotient {
    pub quotient: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Steps {
    /// How many progress steps.
    pub steps: u32,
    /// Milliseconds per step (0: none, not even a timer tick).
    pub ms: u64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Size {
    /// How many characters.
    pub n: usize,
}

/// The demo server: `add`, `divide` (structured; dividing by zero fails),
/// `echo` (raw), `slow` (progress and logging), `big` (large output),
/// `panic` (a handler that panics).
pub fn calc_server() -> Server {
    calc_builder("calc").build()
}

/// The demo server's builder, named `name` (the replicas of the scale-out
/// tests say which one opened a session by it).
pub fn calc_builder(name: &str) -> ServerBuilder {
    Server::builder(name, "1.0.0")
        .instructions("A small calculator.")
        .tool(Tool::new("add", "Add two numbers", |p: Pair| async move {
            p.a + p.b
        }))
        .tool(
            Tool::new("divide", "Divide a by b", |p: Pair| async move {
                if p.b == 0.0 {
                    Err("division by zero".to_owned())
                } else {
                    Ok(Json(Quotient {
                        quotient: p.a / p.b,
                    }))
                }
            })
            .output_schema::<Quotient>(),
        )
        .tool(
            Tool::new(
                "echo",
                "Echo the arguments",
                |args: Value| async move { args["text"].as_str().unwrap_or_default().to_owned() },
            )
            .input_schema(json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})),
        )
        .tool(Tool::new(
            "slow",
            "Report progress, then answer",
            |s: Steps, ctx: ToolContext| async move {
                for i in 1..=s.steps {
                    if s.ms > 0 {
                        tokio::time::sleep(Duration::from_millis(s.ms)).await;
                    }
                    ctx.progress(f64::from(i), Some(f64::from(s.steps)), Some("working"));
                    ctx.log(LogLevel::Info, json!({"step": i}));
                }
                format!("done after {} steps", s.steps)
            },
        ))
        .tool(
            Tool::new("big", "n characters of x", |s: Size| async move {
                "x".repeat(s.n)
            })
            .max_result_chars(usize::MAX),
        )
        .tool(
            Tool::new(
                "panic",
                "Panics",
                |_: Value| async move {
                    if true {
                        panic!("the panic tool panicked");
                    }
                    "unreachable"
                },
            )
            .input_schema(json!({"type":"object"})),
        )
}
