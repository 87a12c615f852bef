//! A tool asks the user mid-call (`ToolContext::ask`), answered by our
//! client's elicitation handler, whatever the transport: as requests to the
//! client on a stdio session (2025-11-25), as `input_required` results and
//! retries at the stateless revision (2026-07-28) over Streamable HTTP and
//! in process; and a `requestState` that was forged, belongs to another
//! request or expired is refused, saying so.
//!
//! The server is `support/interop_server.rs` (tool `greet`: a name, then a
//! colour); over stdio, the devtools program `interop-server` serves it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use claude_code_agent_mcp::client::{
    ClientOptions, HandshakeMode, InProcessTransport, McpClient, StdioOptions, StdioTransport,
};
#[cfg(all(feature = "http-client", feature = "http-server"))]
use claude_code_agent_mcp::client::{HttpOptions, HttpTransport};
use serde_json::{Value, json};

use crate::support::{interop_server, peers};

/// A client whose user answers "Ada" and "teal"; `asked` counts the questions.
fn options(handshake: HandshakeMode, asked: &Arc<AtomicUsize>) -> ClientOptions {
    let asked = Arc::clone(asked);
    ClientOptions::new("asking-test", "1")
        .handshake(handshake)
        .request_timeout(Duration::from_secs(20))
        .on_elicitation(move |params: Value| {
            asked.fetch_add(1, Ordering::SeqCst);
            async move {
                let message = params["message"].as_str().unwrap_or_default();
                let content = match message {
                    "What is your name?" => json!({"name": "Ada"}),
                    m if m.ends_with("Ada?") => json!({"colour": "teal"}),
                    other => json!({"unexpected": other}),
                };
                Ok(json!({"action": "accept", "content": content}))
            }
        })
}

async fn greets(client: &McpClient, asked: &AtomicUsize) {
    let result = client.call_tool("greet", json!({})).await.unwrap();
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.text_content(), "Hello, Ada! You like teal.");
    assert!(!result.is_input_required());
    assert_eq!(asked.load(Ordering::SeqCst), 2, "one question each");
}

#[tokio::test]
async fn over_stdio_a_tool_asks_the_user_with_requests_of_the_session() {
    let server = peers::devtool("interop-server");
    let transport = StdioTransport::spawn(StdioOptions::new(server)).unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let client = McpClient::connect(transport, options(HandshakeMode::Initialize, &asked))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2025-11-25");
    greets(&client, &asked).await;
    client.close().await.unwrap();
}

#[cfg(all(feature = "http-client", feature = "http-server"))]
#[tokio::test]
async fn over_stateless_http_a_tool_asks_the_user_with_input_required_results() {
    use claude_code_agent_mcp::http_server::StreamableHttpConfig;
    let http = crate::support::wire::Http::serve(
        interop_server::server(),
        StreamableHttpConfig::default(),
    )
    .await;
    let asked = Arc::new(AtomicUsize::new(0));
    let transport = HttpTransport::new(HttpOptions::new(&http.url)).unwrap();
    let client = McpClient::connect(transport, options(HandshakeMode::Discover, &asked))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2026-07-28");
    greets(&client, &asked).await;

    // The wire: the first round is a question, no content, with a state.
    let first = post(&http, 1, json!({"name": "greet", "arguments": {}})).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["name"]["method"],
        "elicitation/create"
    );
    assert!(result.get("content").is_none() && result.get("isError").is_none());
    assert!(
        result["requestState"]
            .as_str()
            .unwrap()
            .starts_with("mrtr1.")
    );
    client.close().await.unwrap();
}

#[tokio::test]
async fn in_process_at_the_stateless_revision_a_tool_asks_the_user() {
    let transport = InProcessTransport::new(interop_server::server());
    let asked = Arc::new(AtomicUsize::new(0));
    let client = McpClient::connect(transport, options(HandshakeMode::Discover, &asked))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2026-07-28");
    greets(&client, &asked).await;

    // A client that cannot answer is told so, not handed the question.
    let silent = ClientOptions::new("silent", "1").handshake(HandshakeMode::Discover);
    let transport = InProcessTransport::new(interop_server::server());
    let client = McpClient::connect(transport, silent).await.unwrap();
    let result = client.call_tool("greet", json!({})).await.unwrap();
    assert!(result.is_error, "{result:?}");
    assert!(
        result.text_content().contains("elicitation"),
        "{}",
        result.text_content()
    );
}

/// A stateless `tools/call` POSTed as it is, its JSON-RPC reply.
#[cfg(all(feature = "http-client", feature = "http-server"))]
async fn post(http: &crate::support::wire::Http, id: u64, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    });
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    http.http
        .post(&http.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[cfg(all(feature = "http-client", feature = "http-server"))]
#[tokio::test]
async fn a_forged_misused_or_expired_request_state_is_refused_saying_why() {
    use claude_code_agent_mcp::http_server::StreamableHttpConfig;
    use claude_code_agent_mcp::{Server, Tool};
    let server = Server::builder("states", "1")
        .tool(Tool::new(
            "greet",
            "asks, then greets",
            interop_server::greet,
        ))
        .tool(Tool::new("other", "asks too", interop_server::greet))
        .request_state_ttl(Duration::from_secs(1))
        .build();
    let http = crate::support::wire::Http::serve(server, StreamableHttpConfig::default()).await;
    let call = |arguments: Value| json!({"name": "greet", "arguments": arguments});
    let first = post(&http, 1, call(json!({"to": "me"}))).await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let answers = json!({"name": {"action": "accept", "content": {"name": "Ada"}}});
    let retry = |name: &str, arguments: Value, state: &str| {
        json!({"name": name, "arguments": arguments, "inputResponses": answers,
               "requestState": state})
    };
    let refused = |reply: &Value, why: &str| {
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains(why), "{message:?} does not say {why:?}");
    };

    // The state as issued: the next round (the colour), with a new state.
    let second = post(&http, 2, retry("greet", json!({"to": "me"}), &state)).await;
    assert_eq!(
        second["result"]["inputRequests"]["colour"]["method"],
        "elicitation/create"
    );

    // Changed anywhere: refused.
    let (payload, tag) = state.rsplit_once('.').unwrap();
    let mut bytes = payload.as_bytes().to_vec();
    let at = bytes.len() / 2;
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    let forged = format!("{}.{tag}", String::from_utf8(bytes).unwrap());
    let reply = post(&http, 3, retry("greet", json!({"to": "me"}), &forged)).await;
    refused(&reply, "requestState");
    let reply = post(
        &http,
        4,
        retry("greet", json!({"to": "me"}), &format!("{state}-TAMPERED")),
    )
    .await;
    refused(&reply, "requestState");
    let reply = post(&http, 5, retry("greet", json!({"to": "me"}), "made-up")).await;
    refused(&reply, "requestState is not one this server issued");

    // Shown on another tool, or with other arguments: refused.
    let reply = post(&http, 6, retry("other", json!({"to": "me"}), &state)).await;
    refused(&reply, "issued for another request");
    let reply = post(&http, 7, retry("greet", json!({"to": "you"}), &state)).await;
    refused(&reply, "issued for another request");

    // Past its lifetime: refused.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let reply = post(&http, 8, retry("greet", json!({"to": "me"}), &state)).await;
    refused(&reply, "requestState expired");
}
