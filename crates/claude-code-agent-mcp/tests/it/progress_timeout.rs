//! Timeouts that follow progress, on every client transport (in process,
//! stdio, Streamable HTTP): a call that keeps reporting progress outlives
//! its timeout when `reset_timeout_on_progress` is on, still stops at
//! `max_total_timeout`, and with the defaults times out as before.

use std::time::{Duration, Instant};

use crate::support::{calc, peers};
use claude_code_agent_mcp::client::{
    ClientOptions, HttpOptions, HttpTransport, InProcessTransport, McpClient, RequestOptions,
    ServerNotification, StdioOptions, StdioTransport, Transport,
};
use claude_code_agent_mcp::http_server::{StreamableHttpConfig, StreamableHttpService};
use futures::StreamExt;
use serde_json::json;

const BASE: Duration = Duration::from_millis(400);

async fn connect(transport: impl Transport) -> McpClient {
    let options = ClientOptions::new("progress-test", "1").request_timeout(Duration::from_secs(30));
    McpClient::connect(transport, options).await.unwrap()
}

/// `slow` reports progress every `ms` for `steps` steps, then answers.
fn slow(steps: u32, ms: u64) -> serde_json::Value {
    json!({"steps": steps, "ms": ms})
}

async fn progress_keeps_a_call_alive_up_to_the_cap(client: McpClient) {
    // 10 steps of 150 ms (1.5 s) against a 400 ms timeout: progress saves it.
    let mut notes = client.notifications();
    let started = Instant::now();
    let done = client
        .call_tool_with(
            "slow",
            slow(10, 150),
            RequestOptions::new()
                .timeout(BASE)
                .reset_timeout_on_progress(true)
                .max_total_timeout(Duration::from_secs(20)),
        )
        .await
        .unwrap();
    assert_eq!(done.text_content(), "done after 10 steps");
    assert!(started.elapsed() >= Duration::from_millis(1500));
    // The request's id went out as its progress token, and progress came back.
    let first = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Some(ServerNotification::Progress(p)) = notes.next().await {
                return p;
            }
        }
    })
    .await
    .unwrap();
    assert!(first.progress_token.is_number(), "{first:?}");

    // The defaults are unchanged: the same call times out at 400 ms.
    let started = Instant::now();
    let e = client
        .call_tool_with("slow", slow(10, 150), RequestOptions::new().timeout(BASE))
        .await
        .unwrap_err();
    assert!(e.is_timeout(), "{e:?}");
    assert_eq!(e.to_string(), "request tools/call timed out after 400ms");
    let took = started.elapsed();
    assert!(
        took >= BASE && took < Duration::from_millis(1400),
        "{took:?}"
    );

    // Progress forever (100 steps of 150 ms): the cap ends it at 1.2 s.
    let started = Instant::now();
    let e = client
        .call_tool_with(
            "slow",
            slow(100, 150),
            RequestOptions::new()
                .timeout(BASE)
                .reset_timeout_on_progress(true)
                .max_total_timeout(Duration::from_millis(1200)),
        )
        .await
        .unwrap_err();
    assert!(e.is_timeout(), "{e:?}");
    assert_eq!(
        e.to_string(),
        "request tools/call reached its maximum total timeout of 1200ms"
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(1200) && took < Duration::from_millis(2500),
        "{took:?}"
    );

    // A progress token of the caller's own works the same (6 × 150 ms).
    let done = client
        .call_tool_with(
            "slow",
            slow(6, 150),
            RequestOptions::new()
                .timeout(BASE)
                .reset_timeout_on_progress(true)
                .progress_token("mine"),
        )
        .await
        .unwrap();
    assert_eq!(done.text_content(), "done after 6 steps");

    // No progress (the first report would come after 30 s): it times out
    // after the base timeout, saying so.
    let e = client
        .call_tool_with(
            "slow",
            slow(1, 30_000),
            RequestOptions::new()
                .timeout(BASE)
                .reset_timeout_on_progress(true)
                .progress_token("mine"),
        )
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "request tools/call timed out after 400ms without progress"
    );
    // The client goes on.
    let sum = client.call_tool("add", json!({"a":1,"b":2})).await.unwrap();
    assert_eq!(sum.text_content(), "3");
    client.close().await.unwrap();
}

#[tokio::test]
async fn in_process() {
    let client = connect(InProcessTransport::new(calc::calc_server())).await;
    progress_keeps_a_call_alive_up_to_the_cap(client).await;
}

#[tokio::test]
async fn over_stdio() {
    let transport = StdioTransport::spawn(StdioOptions::new(peers::stdio_server())).unwrap();
    progress_keeps_a_call_alive_up_to_the_cap(connect(transport).await).await;
}

#[tokio::test]
async fn over_streamable_http() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let service = StreamableHttpService::new(calc::calc_server(), StreamableHttpConfig::new());
    let server = tokio::spawn(async move {
        let _ = service.serve(listener).await;
    });
    let http = HttpTransport::new(HttpOptions::new(url)).unwrap();
    progress_keeps_a_call_alive_up_to_the_cap(connect(http).await).await;
    server.abort();
}
