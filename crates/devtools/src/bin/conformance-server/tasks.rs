//! The Tasks extension's fixtures (SEP-2663, the `tasks-*` scenarios): a
//! tool that runs at once, tools that run as tasks (slow, failing, one that
//! panics, ones that ask the client for input), and the one the
//! multi round-trip scenario turns into a task on its last round.

use std::time::Duration;

use claude_code_agent_mcp::server::TaskSupport;
use claude_code_agent_mcp::{Tool, ToolContext};
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Greet {
    name: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Compute {
    /// How long to work, in seconds.
    seconds: f64,
    /// A label echoed in the result.
    #[serde(default)]
    label: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Delete {
    filename: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Gathered {
    /// The name gathered by the multi round-trip phase (the conformance
    /// wrapper sets it from the client's answer).
    #[serde(default)]
    user_name: Option<String>,
}

/// An elicitation of one string property.
fn ask(message: &str, property: &str) -> Value {
    json!({"mode":"form","message":message,
        "requestedSchema":{"type":"object","properties":{property:{"type":"string"}}}})
}

async fn answer(ctx: &ToolContext, params: Value) -> String {
    match ctx.request("elicitation/create", params).await {
        Ok(r) => format!(
            "action={}, content={}",
            r["action"].as_str().unwrap_or_default(),
            r.get("content").cloned().unwrap_or(json!({}))
        ),
        Err(e) => format!("no answer: {e}"),
    }
}

/// The fixtures the `tasks-*` scenarios call.
pub fn task_tools() -> Vec<Tool> {
    let long = Duration::from_secs(120);
    vec![
        Tool::new(
            "greet",
            "Says hello (never a task)",
            |a: Greet| async move { format!("Hello, {}!", a.name) },
        ),
        Tool::new(
            "slow_compute",
            "Works `seconds` seconds, as a task",
            |a: Compute| async move {
                tokio::time::sleep(Duration::from_secs_f64(a.seconds.clamp(0.0, 600.0))).await;
                format!("computed {} after {} s", a.label, a.seconds)
            },
        )
        .task_support(TaskSupport::Optional)
        .timeout(long),
        Tool::new(
            "failing_job",
            "Fails after a second (only as a task)",
            |_: Value| async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Err::<String, _>("the job failed")
            },
        )
        .task_support(TaskSupport::Required),
        Tool::new(
            "protocol_error_job",
            "Panics, which fails its task with a JSON-RPC error",
            |_: Value| async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                if true {
                    panic!("protocol_error_job always fails");
                }
                "never"
            },
        )
        .task_support(TaskSupport::Optional),
        Tool::new(
            "confirm_delete",
            "Asks the client to confirm, as a task",
            |a: Delete, ctx: ToolContext| async move {
                let what = format!("Delete {}?", a.filename);
                format!(
                    "{}: {}",
                    a.filename,
                    answer(&ctx, ask(&what, "confirm")).await
                )
            },
        )
        .task_support(TaskSupport::Optional)
        .timeout(long),
        Tool::new(
            "multi_input",
            "Asks the client two things at once, as a task",
            |_: Value, ctx: ToolContext| async move {
                let (a, b) = tokio::join!(
                    answer(&ctx, ask("Your name?", "name")),
                    answer(&ctx, ask("Confirm?", "confirm"))
                );
                format!("first: {a}; second: {b}")
            },
        )
        .task_support(TaskSupport::Optional)
        .timeout(long),
        Tool::new(
            "test_tool_with_task",
            "Gathers a name by multi round-trip, then runs as a task",
            |a: Gathered| async move {
                tokio::time::sleep(Duration::from_millis(200)).await;
                format!("Hello, {}!", a.user_name.as_deref().unwrap_or("nobody"))
            },
        )
        .task_support(TaskSupport::Required),
    ]
}
