//! The client over the in-process transport: handshake, typed calls,
//! errors kept apart, odd error shapes, timeouts and cancellation.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::calc;
use claude_code_agent_mcp::client::{
    ClientOptions, Error, HandshakeMode, InProcessTransport, McpClient, RequestOptions,
    SendOptions, Transport,
};
use claude_code_agent_mcp::{Handler, RequestContext};
use futures::future::BoxFuture;
use serde_json::{Value, json};

async fn calc() -> McpClient {
    McpClient::in_process(calc::calc_server()).await.unwrap()
}

#[tokio::test]
async fn handshake_discovers_the_stateless_revision() {
    // Our server answers server/discover (2026-07-28), so Auto settles on it.
    let client = calc().await;
    assert_eq!(client.server_info().unwrap().name, "calc");
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert!(client.server_state().stateless);
    assert_eq!(client.instructions(), Some("A small calculator."));
    assert!(client.server_capabilities().contains_key("tools"));
    // The revision has no `ping`; the liveness check uses `server/discover`.
    client.ping().await.unwrap();
    client.close().await.unwrap();
}

#[tokio::test]
async fn handshake_falls_back_to_initialize_and_reports_the_server() {
    let client = McpClient::connect(
        InProcessTransport::new(calc::calc_server()),
        ClientOptions::new("t", "1").handshake(HandshakeMode::Initialize),
    )
    .await
    .unwrap();
    assert_eq!(client.server_info().unwrap().name, "calc");
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert!(client.server_capabilities().contains_key("tools"));
    assert_eq!(client.instructions(), Some("A small calculator."));
    assert!(!client.server_state().stateless);
    assert!(client.is_alive());
    client.ping().await.unwrap();
    client.close().await.unwrap();
}

#[tokio::test]
async fn typed_calls_and_tool_errors() {
    let client = calc().await;
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["add", "divide", "echo", "slow", "big", "panic"]);
    assert_eq!(
        client
            .call_tool("add", json!({"a":2,"b":3}))
            .await
            .unwrap()
            .text_content(),
        "5"
    );
    let q = client
        .call_tool("divide", json!({"a":1,"b":4}))
        .await
        .unwrap();
    assert_eq!(q.structured_content, Some(json!({"quotient":0.25})));
    let zero = client
        .call_tool("divide", json!({"a":1,"b":0}))
        .await
        .unwrap();
    assert!(zero.is_error);
    assert!(zero.text_content().contains("division by zero"));
    let panicked = client.call_tool("panic", json!({})).await.unwrap();
    assert!(panicked.is_error);
}

#[tokio::test]
async fn a_jsonrpc_error_is_its_own_kind() {
    let client = calc().await;
    let e = client.call_tool("nope", json!({})).await.unwrap_err();
    assert_eq!(e.code(), Some(-32601));
    assert!(e.to_string().starts_with("MCP error -32601: "), "{e}");
    let e = client
        .send_request("resources/list", None)
        .await
        .unwrap_err();
    assert_eq!(e.jsonrpc_error().unwrap().code, -32601);
    // This server has no resources: the typed call says so the same way.
    assert_eq!(
        client.list_prompts().await.unwrap_err().code(),
        Some(-32601)
    );
}

#[tokio::test]
async fn per_call_timeout_overrides_the_default() {
    let options = ClientOptions::new("t", "1").request_timeout(Duration::from_secs(30));
    let client = McpClient::connect(InProcessTransport::new(calc::calc_server()), options)
        .await
        .unwrap();
    let slow = json!({"steps":1,"ms":5_000});
    let opts = RequestOptions::new().timeout(Duration::from_millis(50));
    let started = std::time::Instant::now();
    let e = client.call_tool_with("slow", slow, opts).await.unwrap_err();
    assert!(e.is_timeout(), "{e:?}");
    assert!(e.jsonrpc_error().is_none());
    assert_eq!(e.to_string(), "request tools/call timed out after 50ms");
    assert!(started.elapsed() < Duration::from_secs(2));
}

/// A server that answers `initialize` with a revision of its choosing.
struct Answers(&'static str);

impl Handler for Answers {
    fn handle(&self, message: Value, _ctx: RequestContext) -> BoxFuture<'_, Option<Value>> {
        Box::pin(async move {
            let id = message.get("id").cloned()?;
            Some(match message["method"].as_str() {
                Some("initialize") => json!({"jsonrpc":"2.0","id":id,"result":{
                    "protocolVersion":self.0,"capabilities":{},
                    "serverInfo":{"name":"stub","version":"0"}}}),
                _ => json!({"jsonrpc":"2.0","id":id,"result":{}}),
            })
        })
    }
}

#[tokio::test]
async fn a_protocol_version_the_client_does_not_speak_is_refused() {
    for mode in [HandshakeMode::Initialize, HandshakeMode::Auto] {
        let transport = InProcessTransport::new(Answers("1999-01-01"));
        let options = ClientOptions::new("t", "1").handshake(mode);
        let e = McpClient::connect(transport, options).await.unwrap_err();
        assert!(e.is_invalid_response(), "{e:?}");
        let text = e.to_string();
        assert!(
            text.contains("\"1999-01-01\"") && text.contains("does not speak"),
            "{text}"
        );
        assert!(text.contains("2025-11-25"), "names what it speaks: {text}");
    }
    // An older revision the client speaks is accepted.
    let client = McpClient::connect(
        InProcessTransport::new(Answers("2024-11-05")),
        ClientOptions::new("t", "1").handshake(HandshakeMode::Initialize),
    )
    .await
    .unwrap();
    assert_eq!(client.protocol_version(), "2024-11-05");
}

/// A handler that answers from a table and records what it was sent.
#[derive(Clone, Default)]
struct Scripted {
    seen: Arc<Mutex<Vec<Value>>>,
}

impl Handler for Scripted {
    fn handle(&self, message: Value, _ctx: RequestContext) -> BoxFuture<'_, Option<Value>> {
        self.seen.lock().unwrap().push(message.clone());
        Box::pin(async move {
            let id = message.get("id").cloned()?;
            let method = message["method"].as_str().unwrap_or_default().to_owned();
            let reply = |body: Value| {
                let mut r = json!({"jsonrpc":"2.0","id":id});
                r.as_object_mut()
                    .unwrap()
                    .extend(body.as_object().unwrap().clone());
                Some(r)
            };
            match method.as_str() {
                "server/discover" => reply(json!({"error":{"code":-32601,"message":"no"}})),
                "initialize" => reply(
                    json!({"result":{"protocolVersion":"2025-06-18","capabilities":{},
                                           "serverInfo":{"name":"odd","version":"0"}}}),
                ),
                "string" => reply(json!({"error":"it broke"})),
                "number" => reply(json!({"error":42})),
                "array" => reply(json!({"error":[1,2]})),
                "codeless" => reply(json!({"error":{"message":"no code"}})),
                "null-with-result" => reply(json!({"error":null,"result":{"ok":true}})),
                "null-alone" => reply(json!({"error":null})),
                "with-data" => {
                    reply(json!({"error":{"code":-32000,"message":"busy","data":{"retry":1}}}))
                }
                "silent" => None,
                "tools/list" => reply(json!({"result":{"tools":"not a list"}})),
                "hang" => std::future::pending().await,
                "panic" => panic!("handler blew up"),
                _ => reply(json!({"result":{}})),
            }
        })
    }
}

#[tokio::test]
async fn odd_error_shapes_and_transport_failures() {
    let client = McpClient::in_process(Scripted::default()).await.unwrap();
    assert_eq!(client.protocol_version(), "2025-06-18");
    let text = |r: Result<Value, Error>| match r {
        Err(e) => (e.code(), e.to_string()),
        Ok(v) => panic!("unexpected success {v}"),
    };
    assert_eq!(
        text(client.send_request("string", None).await),
        (None, "MCP error response: it broke".into())
    );
    assert_eq!(
        text(client.send_request("number", None).await),
        (None, "MCP error response: 42".into())
    );
    assert_eq!(
        text(client.send_request("array", None).await),
        (None, "MCP error response: [1,2]".into())
    );
    assert_eq!(
        text(client.send_request("codeless", None).await),
        (None, "MCP error response: {\"message\":\"no code\"}".into())
    );
    assert_eq!(
        client.send_request("null-with-result", None).await.unwrap(),
        json!({"ok":true})
    );
    let e = client.send_request("null-alone", None).await.unwrap_err();
    assert!(e.is_invalid_response(), "{e:?}");
    let e = client.send_request("with-data", None).await.unwrap_err();
    assert_eq!(e.to_string(), "MCP error -32000: busy");
    assert_eq!(e.jsonrpc_error().unwrap().data, Some(json!({"retry":1})));
    let e = client.send_request("silent", None).await.unwrap_err();
    assert!(e.is_invalid_response() && e.code().is_none(), "{e:?}");
    let e = client.send_request("panic", None).await.unwrap_err();
    assert!(e.is_transport(), "{e:?}");
    assert_eq!(e.to_string(), "MCP in-process handler panicked");
    // The panic's message is the source.
    let cause = std::error::Error::source(&e).map(ToString::to_string);
    assert!(
        cause.is_some_and(|m| m.contains("handler blew up")),
        "{e:?}"
    );
    // A result of the wrong shape: serde's error is the source.
    let e = client.list_tools().await.unwrap_err();
    assert!(e.is_invalid_response(), "{e:?}");
    assert_eq!(e.to_string(), "tools/list: unusable result");
    let serde = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<serde_json::Error>());
    assert_eq!(
        serde.map(serde_json::Error::classify),
        Some(serde_json::error::Category::Data),
        "{e:?}"
    );
    // The transport survives all of it.
    assert!(client.is_alive());
    client.ping().await.unwrap();
}

#[tokio::test]
async fn dropping_a_call_sends_cancelled_with_its_request_id() {
    let handler = Scripted::default();
    let seen = handler.seen.clone();
    let client = McpClient::in_process(handler).await.unwrap();
    let call = client.send_request("hang", None);
    let _ = tokio::time::timeout(Duration::from_millis(20), call).await;
    let e = client
        .send_request_with(
            "hang",
            None,
            RequestOptions::new().timeout(Duration::from_millis(10)),
        )
        .await
        .unwrap_err();
    assert!(e.is_timeout());
    tokio::time::sleep(Duration::from_millis(50)).await;
    let seen = seen.lock().unwrap().clone();
    let ids: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "hang")
        .map(|m| &m["id"])
        .collect();
    let cancelled: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/cancelled")
        .map(|m| &m["params"]["requestId"])
        .collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(cancelled, ids, "{seen:#?}");
}

#[tokio::test]
async fn in_process_ignores_send_options_and_close() {
    let t = InProcessTransport::new(calc::calc_server());
    assert!(!t.mirrors_header_params());
    let client = McpClient::connect(
        t,
        ClientOptions::new("t", "1").handshake(HandshakeMode::Initialize),
    )
    .await
    .unwrap();
    let opts = RequestOptions::new()
        .send_options(SendOptions::new().header_param("Region", "bad\r\nvalue"));
    let r = client
        .call_tool_with("add", json!({"a":1,"b":1}), opts)
        .await
        .unwrap();
    assert_eq!(r.text_content(), "2");
    client.close().await.unwrap();
    assert!(
        client
            .call_tool("add", json!({"a":1,"b":1}))
            .await
            .unwrap_err()
            .is_closed()
    );
}
