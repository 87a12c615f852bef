//! The calculator server shared by the examples.

use claude_code_agent::mcp::types::ToolAnnotations;
use claude_code_agent::mcp::{Json, Server, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Two operands.
#[derive(Deserialize, JsonSchema)]
struct Operands {
    /// The left operand.
    a: f64,
    /// The right operand.
    b: f64,
}

/// Numbers to summarize.
#[derive(Deserialize, JsonSchema)]
struct Sample {
    /// The values (at least one).
    values: Vec<f64>,
}

/// A summary of a sample.
#[derive(Serialize, JsonSchema)]
struct Stats {
    /// How many values there were.
    count: usize,
    /// Their arithmetic mean.
    mean: f64,
    /// The smallest value.
    min: f64,
    /// The largest value.
    max: f64,
}

/// The `calc` server: `add`, `divide` (division by zero is an error result)
/// and `stats` (a structured output).
pub fn calc_server() -> Server {
    let pure = ToolAnnotations::new().read_only(true).idempotent(true);

    let add = Tool::new(
        "add",
        "Add two numbers",
        |x: Operands| async move { x.a + x.b },
    )
    .annotations(pure.clone());

    let divide = Tool::new("divide", "Divide a by b", |x: Operands| async move {
        if x.b == 0.0 {
            Err("division by zero")
        } else {
            Ok(x.a / x.b)
        }
    })
    .annotations(pure.clone());

    let stats = Tool::new(
        "stats",
        "Count, mean, min and max of some numbers",
        |s: Sample| async move {
            if s.values.is_empty() {
                return Err("stats needs at least one value".to_owned());
            }
            let count = s.values.len();
            let mean = s.values.iter().sum::<f64>() / count as f64;
            let min = s.values.iter().copied().fold(f64::INFINITY, f64::min);
            let max = s.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            Ok(Json(Stats {
                count,
                mean,
                min,
                max,
            }))
        },
    )
    .output_schema::<Stats>()
    .annotations(pure);

    Server::builder("calc", "1.0.0")
        .instructions("Use add, divide and stats for arithmetic.")
        .tools([add, divide, stats])
        .build()
}
