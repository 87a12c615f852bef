//! Our client against a server on the official TypeScript SDK's 2.x line
//! (`tests/peers/ts2_server.mjs` on @modelcontextprotocol/server 2.4.0,
//! which scripts/install-mcp-peers puts in `$PEERS_DIR/ts-sdk2`) over
//! Streamable HTTP, on each revision: 2026-07-28 (`server/discover`, every
//! request stateless with its `_meta`) and 2025-11-25 (`initialize`, a
//! session). On each: tools listed and called, progress (restarting the
//! call's timeout), an elicitation in two rounds (on 2026-07-28 two
//! `input_required` results, on 2025-11-25 two `elicitation/create`
//! requests; our client answers both with `on_elicitation`), a call
//! cancelled (the server's handler sees its signal abort).
//!
//! Tasks: the SDK has no Tasks runtime; the script writes the extension by
//! hand on what the SDK lets through (see its header). On 2026-07-28 a task
//! is started, polled, its result fetched, and another cancelled; on
//! 2025-11-25 our client refuses tasks before sending anything.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::{peer_checks, peers};
use claude_code_agent_mcp::client::{
    ClientOptions, HandshakeMode, HttpOptions, HttpTransport, McpClient,
};
use claude_code_agent_mcp::types::{Task, TaskStatus, ToolCallOutcome};
use peer_checks::Seen;
use serde_json::{Value, json};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/ts2_server.mjs")
}

/// The script on a free port; its URL.
async fn serve(dir: &Path) -> (peers::PeerProcess, String) {
    let port = peers::free_port();
    let mut cmd = std::process::Command::new("node");
    cmd.env("TS_SDK_DIR", dir)
        .arg(script())
        .arg(port.to_string())
        .stdout(std::process::Stdio::null());
    let server = peers::PeerProcess::spawn(cmd);
    peers::wait_port(port).await;
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

/// Our client over HTTP with `mode`, answering each elicitation (and
/// recording its message).
async fn connect(url: &str, mode: HandshakeMode, seen: &Seen, asked: &Asked) -> McpClient {
    let sink = seen.clone();
    let asked = asked.clone();
    let options = ClientOptions::new("ts2-interop", "1")
        .handshake(mode)
        .request_timeout(Duration::from_secs(20))
        .on_notification(move |n| sink.lock().unwrap().push(n))
        .on_elicitation(move |params: Value| {
            let asked = asked.clone();
            async move {
                let message = params["message"].as_str().unwrap_or_default().to_owned();
                let content = match message.as_str() {
                    "Name?" => json!({"name": "Ada"}),
                    _ => json!({"colour": "blue"}),
                };
                asked.lock().unwrap().push(message);
                Ok(json!({"action": "accept", "content": content}))
            }
        });
    let transport = HttpTransport::new(HttpOptions::new(url)).unwrap();
    McpClient::connect(transport, options).await.unwrap()
}

type Asked = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// What the server's SDK reported out of band (requests it rejected, …):
/// nothing.
async fn no_sdk_errors(url: &str) {
    let errors = reqwest::get(url.replace("/mcp", "/errors"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(errors, "[]", "the SDK reported errors");
}

/// What both revisions check.
async fn scenario(client: &McpClient, seen: &Seen, asked: &Asked) {
    assert_eq!(client.server_info().unwrap().name, "ts2-peer");
    assert_eq!(client.instructions(), Some("TypeScript 2.x interop peer."));
    let names = peer_checks::tool_names(client).await;
    assert_eq!(names, ["add", "slow", "ask", "hang", "hung", "long"]);
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum.text_content(), "5");
    let bad = client.call_tool("add", json!({"a": "x"})).await.unwrap();
    assert!(bad.is_error, "{bad:?}");

    peer_checks::progress_restarts_the_timeout_and_the_cap_stops_it(client, seen).await;

    // Two rounds of elicitation, in order.
    let asked_twice = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(asked_twice.text_content(), "Ada likes blue");
    assert_eq!(*asked.lock().unwrap(), ["Name?", "Colour?"]);

    // A call given up: the server's handler sees its signal abort.
    peer_checks::gives_up(client, "hang", Duration::from_millis(500)).await;
    peer_checks::until(client, "hung", "aborted").await;
}

/// Starts `long` as a task.
async fn start_long(client: &McpClient, ms: u64) -> Task {
    match client.call_tool_as_task("long", json!({"ms": ms})).await {
        Ok(ToolCallOutcome::Task(task)) => *task,
        other => panic!("long did not run as a task: {other:?}"),
    }
}

/// Our client connected with `mode` to the script: it gets `version`,
/// passes the [`scenario`], then `more`; the SDK reports no error.
async fn run(test: &str, mode: HandshakeMode, version: &str, more: impl AsyncFnOnce(&McpClient)) {
    let Some(dir) = peers::ts_sdk2(test) else {
        return;
    };
    let (_server, url) = serve(&dir).await;
    let (seen, asked) = (Seen::default(), Asked::default());
    let client = connect(&url, mode, &seen, &asked).await;
    assert_eq!(client.protocol_version(), version);
    scenario(&client, &seen, &asked).await;
    more(&client).await;
    client.close().await.unwrap();
    no_sdk_errors(&url).await;
}

/// Discover first (the default): the server offers 2026-07-28, and tasks.
#[tokio::test]
async fn ts2_server_on_2026_07_28() {
    run(
        "ts2_server_on_2026_07_28",
        HandshakeMode::Auto,
        "2026-07-28",
        async |client| {
            assert!(
                client
                    .server_extensions()
                    .contains("io.modelcontextprotocol/tasks")
            );
            // A task started, polled, its result fetched.
            let task = start_long(client, 300).await;
            assert_eq!(task.status, TaskStatus::Working);
            let polled = client.get_task(&task.task_id).await.unwrap();
            assert_eq!(polled.task_id, task.task_id);
            let done = client.wait_task(&task.task_id).await.unwrap();
            assert_eq!(done.text_content(), "worked 300 ms");
            // Another, cancelled.
            let task = start_long(client, 5000).await;
            client.cancel_task(&task.task_id).await.unwrap();
            let e = client.wait_task(&task.task_id).await.unwrap_err();
            assert!(e.is_cancelled(), "{e:?}");
            // Without the extension declared, the same tool answers the call.
            let plain = client.call_tool("long", json!({"ms": 10})).await.unwrap();
            assert_eq!(plain.text_content(), "worked 10 ms");
        },
    )
    .await;
}

/// `initialize`: a session at 2025-11-25, where our client refuses tasks.
#[tokio::test]
async fn ts2_server_on_2025_11_25() {
    run(
        "ts2_server_on_2025_11_25",
        HandshakeMode::Initialize,
        "2025-11-25",
        async |client| {
            let e = client
                .call_tool_as_task("long", json!({"ms": 10}))
                .await
                .unwrap_err();
            assert!(e.is_refused(), "{e:?}");
        },
    )
    .await;
}
