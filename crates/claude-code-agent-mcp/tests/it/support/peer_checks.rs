//! Checks our client makes the same way against every peer server that has
//! the interop tools (`slow {steps, ms}` reporting progress after each step).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use claude_code_agent_mcp::client::{McpClient, RequestOptions, ServerNotification};
use serde_json::json;

/// The notifications a client heard, in order.
pub type Seen = Arc<Mutex<Vec<ServerNotification>>>;

/// The names of the server's tools, in its order.
pub async fn tool_names(client: &McpClient) -> Vec<String> {
    let tools = client.list_tools().await.unwrap();
    tools.into_iter().map(|t| t.name).collect()
}

/// Calls `tool` with no arguments; the text it answers.
pub async fn text(client: &McpClient, tool: &str) -> String {
    let result = client.call_tool(tool, json!({})).await.unwrap();
    result.text_content()
}

/// Waits (up to 10 s) until `tool` answers `want`.
pub async fn until(client: &McpClient, tool: &str, want: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let got = text(client, tool).await;
        if got == want {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{tool}: {got}, not {want}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A call of `tool` (no arguments) given up after `after`: it times out.
pub async fn gives_up(client: &McpClient, tool: &str, after: Duration) {
    let options = RequestOptions::new().timeout(after);
    let e = client.call_tool_with(tool, json!({}), options).await;
    assert!(e.as_ref().is_err_and(|e| e.is_timeout()), "{e:?}");
}

/// `slow` makes 6 steps of 100 ms against a 300 ms timeout restarted by
/// each progress report (and the 6 reports arrive in order); 100 steps
/// are still stopped by an 800 ms cap.
pub async fn progress_restarts_the_timeout_and_the_cap_stops_it(client: &McpClient, seen: &Seen) {
    let slow = |steps: u32, cap: Duration| {
        client.call_tool_with(
            "slow",
            json!({"steps": steps, "ms": 100}),
            RequestOptions::new()
                .timeout(Duration::from_millis(300))
                .reset_timeout_on_progress(true)
                .max_total_timeout(cap),
        )
    };
    let done = slow(6, Duration::from_secs(20)).await.unwrap();
    assert_eq!(done.text_content(), "done after 6 steps");
    let steps: Vec<f64> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|n| match n {
            ServerNotification::Progress(p) => Some(p.progress),
            _ => None,
        })
        .collect();
    assert_eq!(steps, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let e = slow(100, Duration::from_millis(800)).await.unwrap_err();
    assert!(e.is_timeout(), "{e:?}");
}
