//! Checks our client makes the same way against every peer server that has
//! the interop tools (`slow {steps, ms}` reporting progress after each step).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use claude_code_agent_mcp::client::{McpClient, RequestOptions, ServerNotification};
use serde_json::json;

/// The notifications a client heard, in order.
pub type Seen = Arc<Mutex<Vec<ServerNotification>>>;

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
