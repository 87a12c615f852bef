//! Slow tools: the server's own timeout, and the CLI's (`MCP_TOOL_TIMEOUT`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::*;
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::query;
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_past_the_server_timeout_is_an_error_result() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__slow__wait", json!({})))
                .turn(echo_results()),
        )
        .await;
        let (tool, probe) = slow_tool("wait", Duration::from_secs(60));
        let server = Server::builder("slow", "1.0.0")
            .tool(tool)
            .tool_timeout(Duration::from_millis(1500))
            .build();
        let options = h.options().mcp_server(server).allowed_tools(["mcp__slow"]);

        let started = Instant::now();
        let (messages, error) = drain(query("go", options)).await;
        assert!(error.is_none(), "{error:?}");
        let took = started.elapsed();

        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 1, "{sent:?}");
        assert!(sent[0].is_error, "{:?}", sent[0]);
        assert!(sent[0].text().contains("timed out"), "{:?}", sent[0]);
        // The handler was stopped: its token fired, it never finished.
        assert!(probe.wait_cancelled(1, Duration::from_secs(5)).await);
        assert_eq!(probe.finished(), 0);
        assert!(took < Duration::from_secs(30), "took {took:?}");
        let result = results(&messages).pop().expect("a result");
        assert!(!result.is_error, "{result:?}");
        h.finish().await;
    })
    .await
}

/// `MCP_TOOL_TIMEOUT=3000`: the CLI gives up after 3 s, tells the model the
/// call timed out, and cancels it with `notifications/cancelled`, which
/// reaches the handler's cancellation token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_tool_timeout_cancels_the_handler() {
    with_timeout(async {
        let h = Harness::start_with_env(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__slow__wait", json!({})))
                .turn(echo_results()),
            &[("MCP_TOOL_TIMEOUT", "3000")],
        )
        .await;
        let (tool, probe) = slow_tool("wait", Duration::from_secs(30));
        let server = Server::builder("slow", "1.0.0")
            .tool(tool)
            .tool_timeout(Duration::from_secs(60))
            .build();
        let options = h.options().mcp_server(server).allowed_tools(["mcp__slow"]);

        let stream = query("go", options);
        let run = tokio::spawn(drain(stream));
        probe.wait_started(1).await;
        let started = Instant::now();
        assert!(
            probe.wait_cancelled(1, Duration::from_secs(15)).await,
            "the handler never saw a cancellation"
        );
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(2) && waited < Duration::from_secs(10),
            "cancelled after {waited:?}"
        );
        let (messages, error) = run.await.unwrap();
        assert!(error.is_none(), "{error:?}");

        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 1, "{sent:?}");
        assert!(sent[0].is_error, "{:?}", sent[0]);
        assert!(sent[0].text().contains("timed out"), "{:?}", sent[0]);
        assert_eq!(probe.finished(), 0);
        assert_eq!(results(&messages).len(), 1);
        h.finish().await;
    })
    .await
}

/// A handler that blocks its thread (`std::thread::sleep`, 4 s) past the
/// tool's timeout (400 ms): the CLI gets the timeout result on time from
/// the watchdog, and the model sees it long before the thread is free,
/// whether the handler blocks in its first poll (the session's reader is
/// held until it returns) or after an `.await` (in a task of its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_that_blocks_its_thread_is_answered_on_time() {
    for after_an_await in [true, false] {
        with_timeout(blocked_handler_answered_on_time(after_an_await)).await;
    }
}

async fn blocked_handler_answered_on_time(after_an_await: bool) {
    let seen = Arc::new(Mutex::new(None::<Instant>));
    let h = Harness::start(
        MockModel::builder()
            .turn(Turn::tool_use("mcp__stuck__block", json!({})))
            .turn(Turn::dynamic({
                let seen = Arc::clone(&seen);
                move |req| {
                    seen.lock().unwrap().get_or_insert_with(Instant::now);
                    let texts: Vec<String> = req.tool_results().iter().map(|r| r.text()).collect();
                    Turn::text(format!("results: {}", texts.join(" | ")))
                }
            })),
    )
    .await;
    let called = Arc::new(Mutex::new(None::<Instant>));
    let tool = Tool::new("block", "blocks its thread", {
        let called = Arc::clone(&called);
        move |_: Value| {
            called.lock().unwrap().get_or_insert_with(Instant::now);
            blocking(after_an_await)
        }
    })
    .input_schema(json!({"type": "object"}))
    .timeout(Duration::from_millis(400));
    let server = Server::builder("stuck", "1.0.0").tool(tool).build();
    let options = h.options().mcp_server(server).allowed_tools(["mcp__stuck"]);

    let (_, error) = drain(query("go", options)).await;
    assert!(error.is_none(), "{error:?}");
    let sent = h.mock().tool_results();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].is_error, "{:?}", sent[0]);
    assert!(
        sent[0].text().contains("timed out after 400ms"),
        "{:?}",
        sent[0]
    );
    // The timeout (400 ms), the watchdog's grace (100 ms) and the CLI's
    // round trip to the model, well before the thread is free (4 s).
    let called = called.lock().unwrap().expect("the tool was called");
    let seen = seen.lock().unwrap().expect("the model saw the result");
    let answered = seen - called;
    assert!(
        answered < Duration::from_millis(2500),
        "after_an_await: {after_an_await}, answered after {answered:?}"
    );
    h.finish().await;
}

/// The stuck tool's handler.
async fn blocking(after_an_await: bool) -> &'static str {
    if after_an_await {
        tokio::task::yield_now().await;
    }
    // What a handler must not do (see docs/mcp-servers.md).
    std::thread::sleep(Duration::from_secs(4));
    "unblocked"
}
