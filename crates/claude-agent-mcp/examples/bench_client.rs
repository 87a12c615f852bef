//! A quick benchmark of the client: in-process and stdio `call_tool`
//! round trips per second against the demo calculator server.
//!
//! ```text
//! cargo run --release -p claude-agent-mcp --example bench_client [in-process|stdio|all]
//! ```
//! (`stdio` needs the `stdio_server` example built in the same profile:
//! `cargo build --release -p claude-agent-mcp --example stdio_server`.)

#[path = "../tests/support/calc.rs"]
mod calc;

use std::time::{Duration, Instant};

use claude_agent_mcp::client::{
    Client, ClientOptions, HandshakeMode, StdioOptions, StdioTransport,
};
use claude_agent_mcp::{Handler, RequestContext};
use futures::StreamExt;
use serde_json::json;

fn report(what: &str, n: u64, elapsed: Duration) {
    let rate = n as f64 / elapsed.as_secs_f64();
    println!("{what:<48} {n:>9} calls in {elapsed:>10.3?}  = {rate:>12.0} calls/s");
}

/// The least a handler can do: answer every request with a fixed result.
struct Trivial;

impl Handler for Trivial {
    fn handle(
        &self,
        message: serde_json::Value,
        _ctx: RequestContext,
    ) -> futures::future::BoxFuture<'_, Option<serde_json::Value>> {
        Box::pin(async move {
            let id = message.get("id")?.clone();
            let result = match message["method"].as_str() {
                Some("initialize") => json!({"protocolVersion":"2025-11-25","capabilities":{},
                                             "serverInfo":{"name":"trivial","version":"0"}}),
                Some("tools/call") => {
                    json!({"content":[{"type":"text","text":"3"}],"isError":false})
                }
                _ => json!({}),
            };
            Some(claude_agent_mcp::jsonrpc::response(&id, result))
        })
    }
}

async fn in_process() {
    let client = Client::connect(
        claude_agent_mcp::client::InProcessTransport::new(Trivial),
        ClientOptions::new("bench", "1").handshake(HandshakeMode::Initialize),
    )
    .await
    .unwrap();
    let n = 2_000_000u64;
    let start = Instant::now();
    for _ in 0..n {
        let r = client.call_tool("add", json!({"a":1,"b":2})).await.unwrap();
        debug_assert_eq!(r.text_content(), "3");
    }
    report("in-process call_tool, trivial handler", n, start.elapsed());
    let start = Instant::now();
    for _ in 0..n {
        client.send_request("ping", None).await.unwrap();
    }
    report("in-process ping, trivial handler", n, start.elapsed());

    let server = calc::calc_server();
    let n = 1_000_000u64;
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}});
    let start = Instant::now();
    for _ in 0..n {
        let reply = Handler::handle(&server, call.clone(), RequestContext::new()).await;
        assert!(reply.is_some());
    }
    report("Server::handle alone (baseline)", n, start.elapsed());

    let client = Client::in_process(server).await.unwrap();
    let start = Instant::now();
    for _ in 0..n {
        let r = client.call_tool("add", json!({"a":1,"b":2})).await.unwrap();
        debug_assert_eq!(r.text_content(), "3");
    }
    report("in-process call_tool (sequential)", n, start.elapsed());
    let start = Instant::now();
    for _ in 0..n {
        client.send_request("ping", None).await.unwrap();
    }
    report("in-process ping (sequential)", n, start.elapsed());
}

async fn stdio() {
    let exe = std::env::current_exe().unwrap();
    let server = exe.with_file_name("stdio_server");
    assert!(
        server.exists(),
        "build the stdio_server example first: {}",
        server.display()
    );
    let transport = StdioTransport::spawn(StdioOptions::new(&server)).unwrap();
    let options = ClientOptions::new("bench", "1").handshake(HandshakeMode::Initialize);
    let client = Client::connect(transport, options).await.unwrap();
    let n = 50_000u64;
    let start = Instant::now();
    for _ in 0..n {
        client.call_tool("add", json!({"a":1,"b":2})).await.unwrap();
    }
    report("stdio call_tool (sequential)", n, start.elapsed());
    for concurrency in [16usize, 64] {
        let n = 200_000u64;
        let start = Instant::now();
        futures::stream::iter(0..n)
            .map(|_| {
                let client = client.clone();
                async move { client.call_tool("add", json!({"a":1,"b":2})).await.unwrap() }
            })
            .buffer_unordered(concurrency)
            .for_each(|_| async {})
            .await;
        report(
            &format!("stdio call_tool ({concurrency} in flight)"),
            n,
            start.elapsed(),
        );
    }
    client.close().await.unwrap();
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "all".into());
    if which == "all" || which == "in-process" {
        in_process().await;
    }
    if which == "all" || which == "stdio" {
        stdio().await;
    }
}
