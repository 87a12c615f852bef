//! Our client against a server on the official TypeScript MCP SDK
//! (`tests/peers/ts_server.mjs` on @modelcontextprotocol/sdk 1.32.2, which
//! scripts/install-mcp-peers puts in `$PEERS_DIR/ts-sdk`), over stdio and
//! Streamable HTTP: tools, a tool error, progress (and a timeout that
//! follows it), resources, prompts, and the notifications the SDK sends
//! outside any request — over HTTP only on the standalone GET stream,
//! which the client opens by default. A server restart and a DELETE from
//! elsewhere get new sessions; a server that will not open one closes the
//! client.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::support::{peer_checks, peers};
use claude_code_agent_mcp::client::{
    ClientOptions, HttpOptions, HttpTransport, McpClient, ServerNotification, StdioOptions,
    StdioTransport, Transport,
};
use serde_json::{Map, Value, json};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/ts_server.mjs")
}

use peer_checks::Seen;

fn options(seen: &Seen) -> ClientOptions {
    let sink = seen.clone();
    ClientOptions::new("ts-interop", "1")
        .request_timeout(Duration::from_secs(30))
        .on_notification(move |n| sink.lock().unwrap().push(n))
}

/// Waits (up to 10 s) until a notification matching `what` was seen.
async fn wait_for(seen: &Seen, what: &str, matches: impl Fn(&ServerNotification) -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !seen.lock().unwrap().iter().any(&matches) {
        assert!(
            std::time::Instant::now() < deadline,
            "no {what} within 10 s; seen: {:#?}",
            seen.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `touch`, then the three notifications it sends `delay_ms` later,
/// outside any request.
async fn touch_and_hear(client: &McpClient, seen: &Seen, delay_ms: u64) {
    let touched = client
        .call_tool("touch", json!({"delay_ms": delay_ms}))
        .await
        .unwrap();
    assert_eq!(touched.text_content(), "scheduled");
    wait_for(seen, "tools/list_changed", |n| {
        *n == ServerNotification::ToolListChanged
    })
    .await;
    wait_for(
        seen,
        "resources/updated",
        |n| matches!(n, ServerNotification::ResourceUpdated { uri } if uri == "counter://value"),
    )
    .await;
    wait_for(seen, "a log message", |n| {
        matches!(n, ServerNotification::Log(m) if m.data.as_str().is_some_and(|d| d.starts_with("touched")))
    })
    .await;
}

/// Everything but the notifications outside requests.
async fn calls(client: &McpClient, seen: &Seen) {
    assert_eq!(client.server_info().unwrap().name, "ts-peer");
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.instructions(), Some("TypeScript interop peer."));
    let names = peer_checks::tool_names(client).await;
    assert_eq!(names[..4], ["add", "fail", "slow", "touch"]);
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum.text_content(), "5");
    let fail = client.call_tool("fail", json!({})).await.unwrap();
    assert!(fail.is_error);
    assert!(fail.text_content().contains("always fails"));
    match client.call_tool("nope", json!({})).await {
        Ok(r) => assert!(r.is_error, "{r:?}"),
        Err(e) => assert!(e.code().is_some(), "{e:?}"),
    }

    peer_checks::progress_restarts_the_timeout_and_the_cap_stops_it(client, seen).await;

    let resources = client.list_resources().await.unwrap();
    assert_eq!(resources[0].uri, "counter://value");
    let read = client.read_resource("counter://value").await.unwrap();
    assert!(read.contents[0].text.is_some());
    let mut args = Map::new();
    args.insert("name".into(), Value::from("Ada"));
    let prompt = client.get_prompt("greet", Some(args)).await.unwrap();
    assert_eq!(prompt.messages[0].content.as_text(), Some("Hello, Ada!"));
    client
        .send_request(
            "resources/subscribe",
            Some(json!({"uri": "counter://value"})),
        )
        .await
        .unwrap();
}

async fn scenario(transport: impl Transport) {
    let seen = Seen::default();
    let client = McpClient::connect(transport, options(&seen)).await.unwrap();
    calls(&client, &seen).await;
    touch_and_hear(&client, &seen, 50).await;
    assert!(
        client
            .list_tools()
            .await
            .unwrap()
            .iter()
            .any(|t| t.name.starts_with("extra-"))
    );
    client.close().await.unwrap();
    assert!(!client.is_alive());
}

fn node(dir: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new("node");
    cmd.env("TS_SDK_DIR", dir).arg(script());
    cmd
}

/// The script over HTTP on `port`; `extra` arguments (`--no-get`,
/// `--refuse-sessions`).
async fn http_server(dir: &Path, port: u16, extra: &[&str]) -> peers::PeerProcess {
    let mut cmd = node(dir);
    cmd.arg("http")
        .arg(port.to_string())
        .args(extra)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let server = peers::PeerProcess::spawn(cmd);
    peers::wait_port(port).await;
    server
}

/// The script over HTTP on a free port, and a transport to it with the
/// default options.
async fn http_peer(dir: &Path, extra: &[&str]) -> (peers::PeerProcess, HttpTransport) {
    let port = peers::free_port();
    let server = http_server(dir, port, extra).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    (server, HttpTransport::new(HttpOptions::new(url)).unwrap())
}

#[tokio::test]
async fn ts_server_over_stdio() {
    let Some(dir) = peers::ts_sdk("ts_server_over_stdio") else {
        return;
    };
    let transport = StdioTransport::spawn(
        StdioOptions::new("node")
            .arg(script())
            .arg("stdio")
            .env("TS_SDK_DIR", &dir),
    )
    .unwrap();
    tokio::time::timeout(Duration::from_secs(90), scenario(transport))
        .await
        .unwrap();
}

/// The default options: what the SDK sends outside any request arrives
/// (it sends it on the standalone GET stream only).
#[tokio::test]
async fn ts_server_over_streamable_http_with_the_default_options() {
    let Some(dir) = peers::ts_sdk("ts_server_over_streamable_http_with_the_default_options") else {
        return;
    };
    let (_server, http) = http_peer(&dir, &[]).await;
    tokio::time::timeout(Duration::from_secs(90), scenario(http))
        .await
        .unwrap();
}

/// A server that answers the GET stream with 405: the client carries on.
#[tokio::test]
async fn ts_server_refusing_the_get_stream() {
    let Some(dir) = peers::ts_sdk("ts_server_refusing_the_get_stream") else {
        return;
    };
    let (_server, http) = http_peer(&dir, &["--no-get"]).await;
    let seen = Seen::default();
    let client = McpClient::connect(http, options(&seen)).await.unwrap();
    tokio::time::timeout(Duration::from_secs(60), calls(&client, &seen))
        .await
        .unwrap();
    assert!(client.is_alive());
    client.close().await.unwrap();
}

/// A restart of the server and a DELETE from elsewhere: each time the next
/// call opens a new session and goes through, and the GET stream follows;
/// a restarted server that opens no new session closes the client.
#[tokio::test]
async fn ts_server_restarted_or_session_deleted_gets_a_new_session() {
    let Some(dir) = peers::ts_sdk("ts_server_restarted_or_session_deleted_gets_a_new_session")
    else {
        return;
    };
    let port = peers::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let server = http_server(&dir, port, &[]).await;
    let http = Arc::new(HttpTransport::new(HttpOptions::new(&url)).unwrap());
    let seen = Seen::default();
    let client = McpClient::connect_arc(http.clone(), options(&seen))
        .await
        .unwrap();
    let add = async || {
        client
            .call_tool("add", json!({"a": 40, "b": 2}))
            .await
            .map(|r| r.text_content())
    };
    assert_eq!(add().await.unwrap(), "42");
    let first = http.session_id().unwrap();

    drop(server);
    let restarted = http_server(&dir, port, &[]).await;
    assert_eq!(add().await.unwrap(), "42");
    let second = http.session_id().unwrap();
    assert_ne!(first, second);
    assert!(client.is_alive());
    // The GET stream follows the new session (it reopens as soon as the
    // session is new; the server sends nowhere what comes before).
    client
        .send_request(
            "resources/subscribe",
            Some(json!({"uri": "counter://value"})),
        )
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), touch_and_hear(&client, &seen, 300))
        .await
        .unwrap();

    let deleted = reqwest::Client::new()
        .delete(&url)
        .header("mcp-session-id", &second)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    assert_eq!(add().await.unwrap(), "42");
    assert_ne!(http.session_id().unwrap(), second);

    // Restarted again, refusing new sessions: the client closes, says why,
    // and every later call fails at once.
    drop(restarted);
    let _full = http_server(&dir, port, &["--refuse-sessions"]).await;
    let e = add().await.unwrap_err();
    assert!(e.is_closed(), "{e:?}");
    assert_eq!(e.status(), Some(404));
    // The server's refusal of the new session is the cause.
    let mut why = e.to_string();
    let mut cause = std::error::Error::source(&e);
    while let Some(c) = cause {
        why = format!("{why}: {c}");
        cause = c.source();
    }
    assert!(
        why.contains("404") && why.contains("Server is full"),
        "says why: {why}"
    );
    assert!(!client.is_alive());
    let started = std::time::Instant::now();
    let later = client.ping().await.unwrap_err();
    assert!(later.is_closed(), "{later:?}");
    assert!(started.elapsed() < Duration::from_millis(100));
    client.close().await.unwrap();
}
