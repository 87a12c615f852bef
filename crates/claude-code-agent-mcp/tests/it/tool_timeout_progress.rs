//! A tool's timeout that follows its progress: with
//! `reset_timeout_on_progress(cap)`, each `ToolContext::progress` restarts
//! the timeout, so a tool that keeps reporting progress outlives the base
//! timeout — but never the absolute cap. Without it (the default), the
//! timeout is fixed. In process, over NDJSON and over Streamable HTTP.

use std::time::Duration;

use crate::support::wire;
use crate::support::*;
use claude_code_agent_mcp::{RequestContext, Server, Tool, ToolContext};
use serde_json::{Value, json};

const BASE: Duration = Duration::from_millis(300);
const CAP: Duration = Duration::from_millis(2000);
const STEP: Duration = Duration::from_millis(100);

/// `steps` progress reports `STEP` apart (`forever` with `steps: 0`).
async fn work(v: Value, ctx: ToolContext) -> String {
    let steps = v["steps"].as_u64().unwrap_or(0);
    let mut done = 0;
    while steps == 0 || done < steps {
        tokio::time::sleep(STEP).await;
        done += 1;
        ctx.progress(done as f64, None, None);
    }
    format!("{done} steps")
}

/// `quiet` sleeps `ms` without reporting progress.
async fn quiet(v: Value) -> String {
    tokio::time::sleep(Duration::from_millis(v["ms"].as_u64().unwrap_or(0))).await;
    "woke".to_owned()
}

fn server() -> Server {
    let schema = json!({"type":"object"});
    Server::builder("progress", "1")
        .tool_timeout(BASE)
        .tool(
            Tool::new("work", "", work)
                .input_schema(schema.clone())
                .reset_timeout_on_progress(CAP),
        )
        .tool(Tool::new("fixed", "", work).input_schema(schema.clone()))
        .tool(
            Tool::new("quiet", "", quiet)
                .input_schema(schema.clone())
                .reset_timeout_on_progress(CAP),
        )
        .build()
}

/// A server whose every tool follows progress (set on the server).
fn server_wide() -> Server {
    Server::builder("progress", "1")
        .tool_timeout(BASE)
        .reset_timeout_on_progress(CAP)
        .tool(Tool::new("work", "", work).input_schema(json!({"type":"object"})))
        .build()
}

/// 12 steps of 100 ms: 1.2 s, four times the base timeout.
fn long_call(id: i64) -> Value {
    call(id, "work", json!({"steps": 12}))
}

fn forever_call(id: i64) -> Value {
    call(id, "work", json!({"steps": 0}))
}

fn check_completed(reply: &Value) {
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert_eq!(wire::text(reply), "12 steps");
}

fn check_capped(reply: &Value) {
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let said = wire::text(reply);
    assert!(said.contains("2s") && said.contains("timed out"), "{said}");
}

#[tokio::test(start_paused = true)]
async fn in_process_progress_restarts_the_timeout_up_to_the_cap() {
    for server in [server(), server_wide()] {
        let (session, _) = recording_session();
        let ctx = RequestContext::with_session(session);
        let started = tokio::time::Instant::now();
        let reply = server.handle(long_call(1), ctx.clone()).await.unwrap();
        check_completed(&reply);
        assert_eq!(started.elapsed(), 12 * STEP);

        let started = tokio::time::Instant::now();
        let reply = server.handle(forever_call(2), ctx).await.unwrap();
        check_capped(&reply);
        assert_eq!(started.elapsed(), CAP);
    }
}

#[tokio::test(start_paused = true)]
async fn without_progress_or_without_the_option_the_timeout_is_fixed() {
    let server = server();
    // The option set, but no progress: the base timeout.
    let started = tokio::time::Instant::now();
    let reply = ask(&server, call(1, "quiet", json!({"ms": 1000}))).await;
    assert_eq!(started.elapsed(), BASE);
    assert!(
        wire::text(&reply).contains("timed out after 300ms"),
        "{reply}"
    );
    // Progress, but the option not set (the default): the base timeout.
    let started = tokio::time::Instant::now();
    let reply = ask(&server, call(2, "fixed", json!({"steps": 12}))).await;
    assert_eq!(started.elapsed(), BASE);
    assert!(
        wire::text(&reply).contains("timed out after 300ms"),
        "{reply}"
    );
    // Progress reports count even when the client asked for none (no
    // progress token, no session): they show the tool is alive.
    let reply = ask(&server, long_call(3)).await;
    check_completed(&reply);
}

#[tokio::test]
async fn over_ndjson_progress_restarts_the_timeout_up_to_the_cap() {
    let mut lines = wire::Lines::serve(server());
    lines.initialize("2025-11-25", json!({})).await;
    let mut long = long_call(1);
    long["params"]["_meta"] = json!({"progressToken": "p1"});
    lines.send(&long).await;
    let seen = lines.until(|m| m["id"] == 1).await;
    check_completed(seen.last().unwrap());
    assert_eq!(seen.len(), 13, "12 progress notifications, then the result");

    let started = std::time::Instant::now();
    lines.send(&forever_call(2)).await;
    let reply = lines.until(|m| m["id"] == 2).await.pop().unwrap();
    check_capped(&reply);
    let took = started.elapsed();
    assert!(
        took >= CAP && took < CAP + Duration::from_secs(2),
        "{took:?}"
    );
    lines.end().await;
}

#[cfg(feature = "http-server")]
#[tokio::test]
async fn over_http_progress_restarts_the_timeout_up_to_the_cap() {
    use claude_code_agent_mcp::http_server::StreamableHttpConfig;
    let http = wire::Http::serve(server(), StreamableHttpConfig::default()).await;
    let sid = http.initialize("2025-11-25", json!({})).await;
    let session = (sid.as_str(), "2025-11-25");
    let mut long = long_call(1);
    long["params"]["_meta"] = json!({"progressToken": "p1"});
    let seen = http.exchange(session, &long).await;
    check_completed(seen.last().unwrap());
    assert_eq!(seen.len(), 13, "{seen:?}");

    let started = std::time::Instant::now();
    let reply = http
        .exchange(session, &forever_call(2))
        .await
        .pop()
        .unwrap();
    check_capped(&reply);
    let took = started.elapsed();
    assert!(
        took >= CAP && took < CAP + Duration::from_secs(2),
        "{took:?}"
    );
}
