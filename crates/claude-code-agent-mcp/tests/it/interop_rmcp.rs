//! Our client against a server on rmcp, the official Rust MCP SDK (the
//! `rmcp-server` program of `crates/devtools`, rmcp from crates.io), over
//! stdio and Streamable HTTP: results, a tool error, a JSON-RPC error,
//! progress (and a timeout that follows it, up to its cap), cancellation
//! (a timeout, and a call dropped by its caller), and `list_changed`.

use std::time::Duration;

use claude_code_agent_mcp::client::{
    ClientOptions, HttpOptions, HttpTransport, McpClient, ServerNotification, StdioOptions,
    StdioTransport, Transport,
};
use serde_json::json;

use crate::support::{peer_checks, peers};
use peer_checks::{Seen, text, until};

fn options(seen: &Seen) -> ClientOptions {
    let sink = seen.clone();
    ClientOptions::new("rmcp-interop", "1")
        .request_timeout(Duration::from_secs(30))
        .on_notification(move |n| sink.lock().unwrap().push(n))
}

async fn tool_names(client: &McpClient) -> Vec<String> {
    let mut names = peer_checks::tool_names(client).await;
    names.sort();
    names
}

async fn scenario(transport: impl Transport) {
    let seen = Seen::default();
    let client = McpClient::connect(transport, options(&seen)).await.unwrap();
    assert_eq!(client.server_info().unwrap().name, "rmcp-peer");
    assert_eq!(
        tool_names(&client).await,
        ["add", "cancelled", "fail", "grow", "reject", "slow", "wait"]
    );

    // Results and errors.
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum.text_content(), "5");
    assert!(!sum.is_error);
    let fail = client.call_tool("fail", json!({})).await.unwrap();
    assert!(fail.is_error);
    assert_eq!(fail.text_content(), "always fails");
    let e = client.call_tool("reject", json!({})).await.unwrap_err();
    assert_eq!(e.code(), Some(-32602), "{e:?}");
    assert!(e.to_string().contains("rejected on purpose"), "{e}");

    peer_checks::progress_restarts_the_timeout_and_the_cap_stops_it(&client, &seen).await;

    // Cancellation: a call that times out, then one its caller drops; the
    // server's handler sees each cancelled.
    peer_checks::gives_up(&client, "wait", Duration::from_millis(200)).await;
    until(&client, "cancelled", "1").await;
    let dropped = tokio::time::timeout(
        Duration::from_millis(200),
        client.call_tool("wait", json!({})),
    )
    .await;
    assert!(dropped.is_err(), "wait answered: {dropped:?}");
    until(&client, "cancelled", "2").await;
    assert!(client.is_alive());

    // list_changed: the notification, then the new list.
    assert_eq!(text(&client, "grow").await, "grown");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !seen
        .lock()
        .unwrap()
        .contains(&ServerNotification::ToolListChanged)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no tools/list_changed; seen: {:#?}",
            seen.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(tool_names(&client).await.contains(&"extra".to_owned()));
    assert_eq!(text(&client, "extra").await, "extra");

    client.close().await.unwrap();
    assert!(!client.is_alive());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_server_over_stdio() {
    let server = peers::devtool("rmcp-server");
    let transport = StdioTransport::spawn(StdioOptions::new(server).arg("stdio")).unwrap();
    tokio::time::timeout(Duration::from_secs(90), scenario(transport))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_server_over_streamable_http() {
    let server = peers::devtool("rmcp-server");
    let port = peers::free_port();
    let mut cmd = std::process::Command::new(server);
    cmd.arg("http").arg(port.to_string());
    let _server = peers::PeerProcess::spawn(cmd);
    peers::wait_port(port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let http = HttpTransport::new(HttpOptions::new(url)).unwrap();
    tokio::time::timeout(Duration::from_secs(90), scenario(http))
        .await
        .unwrap();
}
