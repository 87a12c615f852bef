//! Our server driven by a client on the official TypeScript SDK's 2.x line
//! (`tests/peers/ts2_client.mjs` on @modelcontextprotocol/client 2.4.0,
//! which scripts/install-mcp-peers puts in `$PEERS_DIR/ts-sdk2`) over
//! Streamable HTTP, one node process per revision: 2026-07-28, negotiated
//! (`server/discover` first; a second client pinned to it), and 2025-11-25, the SDK's default
//! `initialize` (a 2.x client that asks for 2025-11-25 gets it). Checked,
//! as the SDK sees them: tools listed and called, progress, an
//! elicitation in two rounds (`ToolContext::ask`: two `input_required`
//! results on 2026-07-28, two `elicitation/create` requests on 2025-11-25),
//! a call the SDK aborts (our handler is dropped), `ping` (removed at
//! 2026-07-28; the SDK refuses it itself).
//!
//! Tasks: the SDK has no Tasks runtime (see the script's header). A tool
//! that may run as a task (`TaskSupport::Optional`) answers its plain
//! call; a call that declares the extension gets our task, which the SDK
//! rejects as an unsupported `resultType`. On 2026-07-28 the script starts
//! two tasks with a bare POST and follows them through the SDK's
//! `request()` (`tasks/get` until one completes, with its result;
//! `tasks/cancel` of the other). At 2025-11-25 there is no Tasks extension
//! (SEP-2663 is a 2026-07-28 extension; neither side implements the
//! 2025-11-25 experimental tasks).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::support::{Unfinished, peers, wire};
use claude_code_agent_mcp::http_server::StreamableHttpConfig;
use claude_code_agent_mcp::server::{ClientRequestError, TaskSupport};
use claude_code_agent_mcp::types::InputRequest;
use claude_code_agent_mcp::{Server, Tool, ToolContext};
use serde_json::{Value, json};
use wire::text;

fn form(property: &str) -> Value {
    json!({"type": "object", "properties": {property: {"type": "string"}}, "required": [property]})
}

fn server() -> Server {
    let dropped = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&dropped);
    Server::builder("ours", "1.0.0")
        .instructions("Our server, for the TypeScript 2.x client.")
        .tool(Tool::new("add", "Adds a and b", |v: Value| async move {
            (v["a"].as_i64().unwrap_or(0) + v["b"].as_i64().unwrap_or(0)).to_string()
        }))
        .tool(Tool::new(
            "slow",
            "Reports progress each step",
            |v: Value, ctx: ToolContext| async move {
                let steps = v["steps"].as_u64().unwrap_or(1);
                for i in 1..=steps {
                    tokio::time::sleep(Duration::from_millis(v["ms"].as_u64().unwrap_or(10))).await;
                    ctx.progress(i as f64, Some(steps as f64), Some(&format!("step {i}")));
                }
                format!("done after {steps} steps")
            },
        ))
        .tool(Tool::new(
            "ask",
            "Asks for a name, then a colour",
            |_: Value, ctx: ToolContext| async move {
                let name = ctx
                    .ask("name", InputRequest::elicitation("Name?", form("name")))
                    .await?;
                let colour = ctx
                    .ask(
                        "colour",
                        InputRequest::elicitation("Colour?", form("colour")),
                    )
                    .await?;
                Ok::<_, ClientRequestError>(format!(
                    "{} likes {}",
                    name["content"]["name"].as_str().unwrap_or("?"),
                    colour["content"]["colour"].as_str().unwrap_or("?")
                ))
            },
        ))
        .tool(Tool::new(
            "hang",
            "Waits to be cancelled",
            move |_: Value| {
                let mut guard = Unfinished(Some(Arc::clone(&dropped)));
                async move {
                    tokio::time::sleep(Duration::from_secs(10)).await;
                    guard.finished();
                    "never cancelled"
                }
            },
        ))
        .tool(Tool::new(
            "hung",
            "Whether a hang was dropped",
            move |_: Value| {
                let dropped = seen.load(Ordering::SeqCst);
                async move { if dropped { "dropped" } else { "running" } }
            },
        ))
        .tool(
            Tool::new("long", "Works ms milliseconds", |v: Value| async move {
                let ms = v["ms"].as_u64().unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                format!("worked {ms} ms")
            })
            .task_support(TaskSupport::Optional),
        )
        .build()
}

/// Runs `ts2_client.mjs` against our server in `mode`; its report.
async fn drive(test: &str, mode: &str) -> Option<Value> {
    let dir = peers::ts_sdk2(test)?;
    let http = wire::Http::serve(server(), StreamableHttpConfig::default()).await;
    let report = peers::ts_script_report(
        &dir,
        "ts2_client.mjs",
        &[&http.url, mode],
        Duration::from_secs(60),
    )
    .await;
    Some(report)
}

/// What every revision checks.
fn check(report: &Value) {
    assert_eq!(report["server"]["name"], "ours", "{report}");
    assert_eq!(
        report["instructions"],
        "Our server, for the TypeScript 2.x client."
    );
    assert_eq!(
        report["tools"],
        json!(["add", "slow", "ask", "hang", "hung", "long"])
    );
    assert_eq!(text(&report["add"]), "5", "{report}");
    assert_eq!(text(&report["slow"]), "done after 4 steps", "{report}");
    assert_eq!(report["progress"], json!([1, 2, 3, 4]), "{report}");
    assert_eq!(text(&report["ask"]), "Ada likes blue", "{report}");
    assert_eq!(report["asked"], json!(["Name?", "Colour?"]), "{report}");
    assert!(report["hang"]["error"].is_object(), "{report}");
    assert_eq!(text(&report["hung"]), "dropped", "{report}");
    assert_eq!(text(&report["long_plain"]), "worked 10 ms", "{report}");
    // Nothing reported out of band but, on a session, our answer to the
    // call it cancelled: we answer every request once (see "Protocol
    // choices" in the server's documentation), which the SDK reports as a
    // response to an unknown id, and drops.
    for error in report["errors"].as_array().unwrap() {
        let error = error.as_str().unwrap();
        assert!(
            error.starts_with("Received a response for an unknown message ID")
                && error.contains(r#"Tool \"hang\" was cancelled by the client"#),
            "the SDK reported: {error}"
        );
    }
}

/// The 2026-07-28 revision's own checks.
fn check_stateless(report: &Value) {
    assert_eq!(report["version"], "2026-07-28", "{report}");
    assert!(
        report["capabilities"]["extensions"]
            .get("io.modelcontextprotocol/tasks")
            .is_some(),
        "{report}"
    );
    assert_eq!(
        report["long_task"]["error"]["code"], "UNSUPPORTED_RESULT_TYPE",
        "{report}"
    );
    assert_eq!(
        report["ping"]["error"]["code"], "METHOD_NOT_SUPPORTED_BY_PROTOCOL_VERSION",
        "{report}"
    );
    // Tasks started by a bare POST, followed through the SDK: one polled
    // while it works, then fetched with its result; another cancelled.
    let tasks = &report["tasks"]["result"];
    let statuses = tasks["statuses"].as_array().expect("tasks followed");
    assert_eq!(statuses.first(), Some(&json!("working")), "{report}");
    assert_eq!(statuses.last(), Some(&json!("completed")), "{report}");
    let fetched = &tasks["fetched"]["result"]["result"];
    assert_eq!(fetched["content"][0]["text"], "worked 800 ms", "{report}");
    assert!(tasks["cancel"]["result"].is_object(), "{report}");
    assert_eq!(
        tasks["cancelled"]["result"]["status"], "cancelled",
        "{report}"
    );
}

#[tokio::test]
async fn ts2_client_negotiates_2026_07_28() {
    let Some(report) = drive("ts2_client_negotiates_2026_07_28", "auto").await else {
        return;
    };
    check(&report);
    check_stateless(&report);
    // A client pinned to 2026-07-28 gets it too.
    assert_eq!(report["pinned"]["version"], "2026-07-28", "{report}");
    assert_eq!(text(&report["pinned"]["add"]), "2", "{report}");
}

#[tokio::test]
async fn ts2_client_on_2025_11_25() {
    let Some(report) = drive("ts2_client_on_2025_11_25", "legacy").await else {
        return;
    };
    assert_eq!(report["version"], "2025-11-25", "{report}");
    check(&report);
    assert!(report["long_task"].is_null(), "{report}");
    assert!(report["tasks"].is_null(), "{report}");
    assert!(report["ping"]["result"].is_object(), "{report}");
}
