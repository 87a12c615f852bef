//! An `rmcp` client as a subject of the client benchmark (`scripts/bench`).
//!
//! `call_tool("add", {"a": 1, "b": 2})` round trips per second over stdio
//! (spawning `BENCH_STDIO_SERVER`, a JSON array) and Streamable HTTP
//! (`BENCH_HTTP_URL`, when set): serially, then 16 in flight. Each
//! measurement runs for `BENCH_CLIENT_SECONDS` after a warm-up and prints one
//! JSON line: `{"transport", "in_flight", "calls", "seconds"}`.

use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{Peer, RoleClient};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

const WARMUP: u64 = 200;

async fn call(peer: &Peer<RoleClient>) {
    let args = serde_json::json!({"a": 1, "b": 2});
    let serde_json::Value::Object(args) = args else {
        unreachable!()
    };
    let r = peer
        .call_tool(CallToolRequestParams::new("add").with_arguments(args))
        .await
        .expect("call_tool");
    assert_ne!(r.is_error, Some(true), "tool error: {r:?}");
}

async fn measure(peer: &Peer<RoleClient>, transport: &str, in_flight: u64, seconds: f64) {
    for _ in 0..WARMUP {
        call(peer).await;
    }
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let workers = (0..in_flight).map(|_| {
        let peer = peer.clone();
        async move {
            let mut n = 0u64;
            while Instant::now() < deadline {
                call(&peer).await;
                n += 1;
            }
            n
        }
    });
    let calls: u64 = futures::future::join_all(workers).await.into_iter().sum();
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{{\"transport\":\"{transport}\",\"in_flight\":{in_flight},\"calls\":{calls},\"seconds\":{secs}}}"
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds: f64 = std::env::var("BENCH_CLIENT_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let server: Vec<String> = serde_json::from_str(&std::env::var("BENCH_STDIO_SERVER")?)?;
    let mut cmd = tokio::process::Command::new(&server[0]);
    cmd.args(&server[1..]);
    let client = ().serve(TokioChildProcess::new(cmd)?).await?;
    for in_flight in [1, 16] {
        measure(client.peer(), "stdio", in_flight, seconds).await;
    }
    client.cancel().await?;
    if let Ok(url) = std::env::var("BENCH_HTTP_URL")
        && !url.is_empty()
    {
        let client = ().serve(StreamableHttpClientTransport::from_uri(url)).await?;
        for in_flight in [1, 16] {
            measure(client.peer(), "http", in_flight, seconds).await;
        }
        client.cancel().await?;
    }
    Ok(())
}
