//! The JSON-RPC envelope is strict: `"jsonrpc"` must be exactly `"2.0"`,
//! and an id must be a number or a string. A request that breaks either is
//! answered `-32600` (with its id when it has a usable one, else `null`),
//! never taken for a notification — in process, over NDJSON and over
//! Streamable HTTP.

use crate::support::wire;
use claude_code_agent_mcp::{RequestContext, Server};
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("envelope", "1").build()
}

/// (message, the id its -32600 reply must carry)
fn invalid_requests() -> Vec<(Value, Value)> {
    vec![
        (json!({"jsonrpc":"1.0","id":1,"method":"ping"}), json!(1)),
        (json!({"id":"a","method":"ping"}), json!("a")),
        (json!({"jsonrpc":2.0,"id":2,"method":"ping"}), json!(2)),
        (
            json!({"jsonrpc":"2.0","id":null,"method":"ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc":"2.0","id":null,"method":"tools/list"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc":"2.0","id":true,"method":"ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc":"2.0","id":[1],"method":"ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc":"2.0","id":{"n":1},"method":"ping"}),
            Value::Null,
        ),
    ]
}

fn check_invalid(reply: &Value, id: &Value, sent: &Value) {
    assert_eq!(reply["jsonrpc"], "2.0", "{sent} -> {reply}");
    assert_eq!(&reply["id"], id, "{sent} -> {reply}");
    assert_eq!(reply["error"]["code"], -32600, "{sent} -> {reply}");
    assert!(reply.get("result").is_none(), "{sent} -> {reply}");
}

#[tokio::test]
async fn in_process_bad_versions_and_ids_are_invalid_requests() {
    let server = server();
    for (message, id) in invalid_requests() {
        let reply = server
            .handle(message.clone(), RequestContext::new())
            .await
            .unwrap_or_else(|| panic!("no reply to {message}"));
        check_invalid(&reply, &id, &message);
    }
    let reply = server
        .handle(
            json!({"jsonrpc":"1.0","id":1,"method":"ping"}),
            RequestContext::new(),
        )
        .await
        .unwrap();
    assert!(
        reply["error"]["message"].as_str().unwrap().contains("2.0"),
        "the message says what is wrong: {reply}"
    );
    // A message without an id but with a bad version is no notification:
    // it is answered as an invalid request with id null (JSON-RPC 2.0 §5).
    let reply = server
        .handle(
            json!({"jsonrpc":"1.0","method":"notifications/initialized"}),
            RequestContext::new(),
        )
        .await
        .unwrap();
    check_invalid(&reply, &Value::Null, &json!("bad notification"));
    assert_eq!(
        server
            .handle(
                json!({"jsonrpc":"2.0","id":7,"method":"ping"}),
                RequestContext::new()
            )
            .await,
        Some(json!({"jsonrpc":"2.0","id":7,"result":{}}))
    );
}

#[tokio::test]
async fn over_ndjson_a_null_id_is_answered_not_ignored() {
    let mut lines = wire::Lines::serve(server());
    for (message, id) in invalid_requests() {
        lines.send(&message).await;
        let reply = lines.recv().await;
        check_invalid(&reply, &id, &message);
    }
    lines.end().await;
}

#[cfg(feature = "http-server")]
#[tokio::test]
async fn over_http_a_null_id_is_answered_not_accepted_as_a_notification() {
    use claude_code_agent_mcp::http_server::StreamableHttpConfig;
    let http = wire::Http::serve(server(), StreamableHttpConfig::default()).await;
    let sid = http.initialize("2025-11-25", json!({})).await;
    for (message, id) in invalid_requests() {
        let r = http
            .post(Some((&sid, "2025-11-25")), &message)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), reqwest::StatusCode::BAD_REQUEST, "{message}");
        let reply: Value = r.json().await.unwrap();
        check_invalid(&reply, &id, &message);
    }
}

/// A client's answer to our request that is not JSON-RPC 2.0 fails the
/// request (the tool hears why) instead of leaving it to time out.
#[tokio::test]
async fn a_response_that_is_not_json_rpc_2_0_fails_its_request() {
    use crate::support::*;
    use claude_code_agent_mcp::{Tool, ToolContext};
    let server = Server::builder("envelope", "1")
        .tool(
            Tool::new("roots", "", |_: Value, ctx: ToolContext| async move {
                match ctx.request("roots/list", json!({})).await {
                    Ok(r) => format!("answered: {r}"),
                    Err(e) => format!("failed: {e}"),
                }
            })
            .input_schema(json!({"type":"object"})),
        )
        .build();
    let (session, outbox) = recording_session();
    session.set_client_requests(true);
    let ctx = RequestContext::with_session(session);
    let init = req(
        0,
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":{"roots":{}},
               "clientInfo":{"name":"t","version":"1"}}),
    );
    server.handle(init, ctx.clone()).await.unwrap();
    let running = tokio::spawn({
        let (server, ctx) = (server.clone(), ctx.clone());
        async move { server.handle(call(1, "roots", json!({})), ctx).await }
    });
    let request = loop {
        let sent = outbox
            .lock()
            .unwrap()
            .iter()
            .find(|m| m["method"] == "roots/list")
            .cloned();
        if let Some(m) = sent {
            break m;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    };
    let lax = json!({"jsonrpc":"1.0","id":request["id"],"result":{"roots":[]}});
    assert_eq!(
        server.handle(lax, ctx).await,
        None,
        "a response is never answered"
    );
    let reply = running.await.unwrap().unwrap();
    let said = text(result(&reply));
    assert!(
        said.starts_with("failed: ") && said.contains("2.0"),
        "{said}"
    );
}
