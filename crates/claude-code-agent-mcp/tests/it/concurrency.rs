//! A slow call never delays `ping` or another call.

use std::time::Duration;

use crate::support::*;
use claude_code_agent_mcp::{RequestContext, Server, Session, Tool};
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("s", "1")
        .tool(
            Tool::new("slow", "", |_: Value| async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                "slow done"
            })
            .input_schema(json!({"type":"object"})),
        )
        .tool(
            Tool::new("fast", "", |_: Value| async { "fast done" })
                .input_schema(json!({"type":"object"})),
        )
        .build()
}

#[tokio::test(start_paused = true)]
async fn slow_call_does_not_delay_ping_or_other_calls() {
    let server = server();
    let session = Session::new();
    let ctx = RequestContext::with_session(session);
    let slow = server.handle(call(1, "slow", json!({})), ctx.clone());
    let others = async {
        let start = tokio::time::Instant::now();
        let ping = server
            .handle(req(2, "ping", json!({})), ctx.clone())
            .await
            .unwrap();
        let fast = server
            .handle(call(3, "fast", json!({})), ctx.clone())
            .await
            .unwrap();
        let list = server
            .handle(req(4, "tools/list", json!({})), ctx.clone())
            .await
            .unwrap();
        (start.elapsed(), ping, fast, list)
    };
    let start = tokio::time::Instant::now();
    let (slow, (elapsed, ping, fast, list)) = tokio::join!(slow, others);
    assert_eq!(elapsed, Duration::ZERO, "others waited for the slow call");
    assert_eq!(result(&ping), &json!({}));
    assert_eq!(text(result(&fast)), "fast done");
    assert_eq!(result(&list)["tools"].as_array().unwrap().len(), 2);
    assert_eq!(text(result(&slow.unwrap())), "slow done");
    assert_eq!(start.elapsed(), Duration::from_secs(30));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_calls_each_get_their_own_reply() {
    let server = Server::builder("s", "1")
        .tool(
            Tool::new("echo", "", |v: Value| async move {
                tokio::time::sleep(Duration::from_millis(v["ms"].as_u64().unwrap_or(0))).await;
                v["n"].to_string()
            })
            .input_schema(json!({"type":"object"})),
        )
        .build();
    let session = Session::new();
    let tasks: Vec<_> = (0..200u64)
        .map(|n| {
            let server = server.clone();
            let ctx = RequestContext::with_session(session.clone());
            tokio::spawn(async move {
                let reply = server
                    .handle(call(n, "echo", json!({"n": n, "ms": (200 - n) % 7})), ctx)
                    .await
                    .unwrap();
                (n, reply)
            })
        })
        .collect();
    for task in tasks {
        let (n, reply) = task.await.unwrap();
        assert_eq!(reply["id"], n);
        assert_eq!(text(result(&reply)), n.to_string());
    }
    assert_eq!(session.in_flight(), 0);
}

#[test]
fn handle_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let server = server();
    let fut = server.handle(json!({}), RequestContext::new());
    assert_send(&fut);
}
