//! Slow tools: the server's own timeout, and the CLI's (`MCP_TOOL_TIMEOUT`).

use std::time::{Duration, Instant};

use crate::support::*;
use claude_code_agent::mcp::Server;
use claude_code_agent::query;
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::json;

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
