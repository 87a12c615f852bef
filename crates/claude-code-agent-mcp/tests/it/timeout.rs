//! Tool timeouts: an error result naming the tool and the limit; the
//! handler future is dropped and its token cancelled.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::support::*;
use claude_code_agent_mcp::{Server, Tool, ToolContext};
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Sleep {
    secs: u64,
}

fn server(dropped: Arc<AtomicBool>, token_seen: Arc<AtomicBool>) -> Server {
    let sleepy = Tool::new("sleepy", "sleeps", move |s: Sleep, ctx: ToolContext| {
        let dropped = dropped.clone();
        let token_seen = token_seen.clone();
        let token = ctx.cancellation_token().clone();
        tokio::spawn(async move {
            token.cancelled().await;
            token_seen.store(true, Ordering::SeqCst);
        });
        async move {
            struct Flag(Arc<AtomicBool>);
            impl Drop for Flag {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::SeqCst);
                }
            }
            let _flag = Flag(dropped);
            tokio::time::sleep(Duration::from_secs(s.secs)).await;
            "woke up"
        }
    });
    let quick = Tool::new("quick", "sleeps with its own limit", |_: Value| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
    })
    .input_schema(json!({"type":"object"}))
    .timeout(Duration::from_millis(1500));
    Server::builder("s", "1")
        .tool(sleepy)
        .tool(quick)
        .tool_timeout(Duration::from_secs(3))
        .build()
}

#[tokio::test(start_paused = true)]
async fn slow_tool_times_out_with_an_error_naming_tool_and_limit() {
    let dropped = Arc::new(AtomicBool::new(false));
    let token_seen = Arc::new(AtomicBool::new(false));
    let server = server(dropped.clone(), token_seen.clone());
    let started = tokio::time::Instant::now();
    let reply = ask(&server, call(2, "sleepy", json!({"secs": 8}))).await;
    assert_eq!(started.elapsed(), Duration::from_secs(3));
    let r = result(&reply);
    assert_eq!(r["isError"], true);
    assert_eq!(
        text(r),
        "Tool \"sleepy\" timed out after 3s and was stopped"
    );
    assert!(dropped.load(Ordering::SeqCst), "handler future dropped");
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert!(token_seen.load(Ordering::SeqCst), "token cancelled");
}

#[tokio::test(start_paused = true)]
async fn a_call_within_the_limit_completes() {
    let server = server(Arc::default(), Arc::default());
    let reply = ask(&server, call(1, "sleepy", json!({"secs": 2}))).await;
    assert_eq!(text(result(&reply)), "woke up");
    assert_eq!(result(&reply)["isError"], false);
}

#[tokio::test(start_paused = true)]
async fn a_tool_timeout_overrides_the_server_timeout() {
    let server = server(Arc::default(), Arc::default());
    let reply = ask(&server, call(1, "quick", json!({}))).await;
    assert_eq!(
        text(result(&reply)),
        "Tool \"quick\" timed out after 1.5s and was stopped"
    );
}
