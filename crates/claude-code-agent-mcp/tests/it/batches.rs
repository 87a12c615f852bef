//! JSON-RPC batches: accepted on a session that negotiated 2025-03-26 (the
//! one revision whose receivers must accept them), refused with `-32600`
//! on later ones — over NDJSON and Streamable HTTP.

use crate::support::wire;
use claude_code_agent_mcp::{Server, Tool};
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("batches", "1")
        .tool(
            Tool::new("echo", "echoes its arguments", |v: Value| async move {
                v.to_string()
            })
            .input_schema(json!({"type":"object"})),
        )
        .build()
}

fn batch() -> Value {
    json!([
        {"jsonrpc":"2.0","id":1,"method":"ping"},
        {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},
        wire::call("two", "echo", json!({"x":2})),
        {"jsonrpc":"2.0","id":3,"method":"nope"},
    ])
}

/// The replies to [`batch`]: one per request, none for the notification.
fn check_batch_reply(reply: &Value) {
    let replies = reply.as_array().unwrap_or_else(|| panic!("{reply}"));
    assert_eq!(replies.len(), 3, "{reply}");
    let by_id = |id: Value| replies.iter().find(|r| r["id"] == id).unwrap();
    assert_eq!(by_id(json!(1))["result"], json!({}));
    assert_eq!(wire::text(by_id(json!("two"))), r#"{"x":2}"#);
    assert_eq!(by_id(json!(3))["error"]["code"], -32601);
}

fn check_refused(reply: &Value, version: &str) {
    assert_eq!(reply["id"], Value::Null, "{reply}");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("batch") && message.contains(version),
        "{reply}"
    );
}

#[tokio::test]
async fn over_ndjson_batches_are_served_at_2025_03_26() {
    let mut lines = wire::Lines::serve(server());
    lines.initialize("2025-03-26", json!({})).await;
    lines.send(&batch()).await;
    check_batch_reply(&lines.recv().await);

    // Notifications only: nothing to answer.
    lines
        .send(&json!([{"jsonrpc":"2.0","method":"notifications/initialized"}]))
        .await;
    lines
        .send(&json!({"jsonrpc":"2.0","id":"p","method":"ping"}))
        .await;
    assert_eq!(lines.recv().await["id"], "p");

    // An empty batch is one invalid request.
    lines.send(&json!([])).await;
    let reply = lines.recv().await;
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["id"], Value::Null);
    lines.end().await;
}

#[tokio::test]
async fn over_ndjson_batches_are_refused_after_2025_03_26() {
    for version in ["2025-06-18", "2025-11-25"] {
        let mut lines = wire::Lines::serve(server());
        lines.initialize(version, json!({})).await;
        lines.send(&batch()).await;
        check_refused(&lines.recv().await, version);
        lines.end().await;
    }
}

#[cfg(feature = "http-server")]
#[tokio::test]
async fn over_http_batches_are_served_at_2025_03_26_and_refused_after() {
    use claude_code_agent_mcp::http_server::StreamableHttpConfig;
    use reqwest::StatusCode;
    let http = wire::Http::serve(server(), StreamableHttpConfig::default()).await;

    let sid = http.initialize("2025-03-26", json!({})).await;
    let session = (sid.as_str(), "2025-03-26");
    let r = http.post(Some(session), &batch()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let replies = wire::messages_of(r).await;
    assert_eq!(replies.len(), 1, "{replies:?}");
    check_batch_reply(&replies[0]);

    let notes = json!([{"jsonrpc":"2.0","method":"notifications/initialized"}]);
    let r = http.post(Some(session), &notes).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);

    let sid = http.initialize("2025-11-25", json!({})).await;
    let r = http
        .post(Some((&sid, "2025-11-25")), &batch())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    check_refused(&r.json().await.unwrap(), "2025-11-25");
}
