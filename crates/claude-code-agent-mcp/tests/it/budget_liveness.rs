//! A byte budget never wedges a session: answers larger than the budget
//! come, the small calls after them too, and the budget recovers — on one
//! Streamable HTTP session driven by the official TypeScript client
//! (`tests/peers/ts_budget_client.mjs`), and on one stdio connection
//! between our client and our server, each with a budget half the size of
//! the largest answer. A cancel that overtakes its request stops the
//! handler before it starts, on both.
//!
//! The server is `support/interop_server.rs` (tools `echo`, `big`, `slow`,
//! `running`); over stdio, the devtools program `interop-server` serves it.

use std::time::Duration;

use crate::support::peers;
use claude_code_agent_mcp::client::{ClientOptions, McpClient, StdioOptions, StdioTransport};
use serde_json::json;
#[cfg(feature = "http-server")]
use {
    crate::support::{interop_server, wire},
    claude_code_agent_mcp::http_server::{HTTP_MAX_HELD_BYTES, StreamableHttpConfig},
};

#[cfg(feature = "http-server")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_client_over_http_gets_every_answer_after_answers_twice_the_budget() {
    let Some(dir) =
        peers::ts_sdk("ts_client_over_http_gets_every_answer_after_answers_twice_the_budget")
    else {
        return;
    };
    // The default budget (16 MiB) and answers of twice as much.
    let config = StreamableHttpConfig::default();
    let size = 2 * HTTP_MAX_HELD_BYTES;
    let http = wire::Http::serve(interop_server::server(), config).await;
    let args = [http.url.as_str(), &size.to_string(), "4", "1000"];
    let report = peers::ts_script_report(
        &dir,
        "ts_budget_client.mjs",
        &args,
        Duration::from_secs(180),
    )
    .await;

    let steps = report["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 9, "{report}");
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(step["ok"], true, "step {i} failed: {step}");
        if step["tool"] == "big" {
            assert_eq!(step["chars"], size, "step {i}: {step}");
        }
    }
    // Cancelled as they were sent: none answered, none still running 1 s later.
    let cancelled = report["cancelled"].as_array().unwrap();
    assert_eq!(cancelled.len(), 5);
    assert!(cancelled.iter().all(|c| c != "answered"), "{report}");
    assert_eq!(
        report["running_text"], "0",
        "handlers still running: {report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_our_client_and_server_recover_after_answers_twice_their_budgets() {
    const BUDGET: usize = 1 << 20;
    let server = peers::devtool("interop-server");
    let transport = StdioTransport::spawn(
        StdioOptions::new(server)
            .arg("--max-held-bytes")
            .arg(BUDGET.to_string()),
    )
    .unwrap();
    let options = ClientOptions::new("budget-test", "1")
        .request_timeout(Duration::from_secs(20))
        .max_held_bytes(BUDGET);
    let client = McpClient::connect(transport, options).await.unwrap();
    let text = |r: &claude_code_agent_mcp::CallToolResult| {
        r.content
            .first()
            .and_then(|c| c.as_text())
            .map(str::len)
            .unwrap_or(0)
    };
    let echo = || client.call_tool("echo", json!({"text": "hi"}));
    let big = |n: usize| client.call_tool("big", json!({"n": n}));

    assert_eq!(text(&echo().await.unwrap()), 2);
    for round in 0..4 {
        let answer = big(2 * BUDGET).await.unwrap();
        assert_eq!(text(&answer), 2 * BUDGET, "round {round}");
        drop(answer);
        assert_eq!(text(&echo().await.unwrap()), 2, "round {round}");
    }
    // Large and small at once: every one is answered.
    let calls: Vec<_> = (0..12)
        .map(|i| {
            let n = if i % 3 == 0 { 3 * BUDGET } else { 10 };
            async move { (n, big(n).await) }
        })
        .collect();
    for (n, answer) in futures::future::join_all(calls).await {
        assert_eq!(text(&answer.unwrap()), n);
    }

    // Five slow calls, each given up right after it was sent: its cancel
    // comes right behind it.
    for _ in 0..5 {
        let call = client.call_tool("slow", json!({"ms": 6000}));
        assert!(
            tokio::time::timeout(Duration::from_millis(2), call)
                .await
                .is_err()
        );
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let running = client.call_tool("running", json!({})).await.unwrap();
    assert_eq!(
        running.content[0].as_text(),
        Some("0"),
        "slow handlers still running 1 s after their cancel"
    );
    client.close().await.unwrap();
}
