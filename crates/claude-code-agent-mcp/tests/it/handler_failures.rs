//! Whatever a handler does — panic in a resource, template, prompt or
//! completion handler (in its future or before it returns one), hang, or
//! (for a `Handler` of your own) panic or answer a request with nothing —
//! every request is answered exactly once, `-32603` for a failure of the
//! server itself, in process, over NDJSON and over Streamable HTTP, and the
//! server goes on serving.

use std::future::Future;
use std::time::Duration;

use crate::support::wire;
use crate::support::*;
use claude_code_agent_mcp::server::{
    CompletionRequest, Handler, Prompt, PromptRequest, Resource, ResourceRequest, ResourceTemplate,
};
use claude_code_agent_mcp::{RequestContext, Server};
use futures::future::BoxFuture;
use serde_json::{Value, json};

/// A handler that panics before it returns its future.
fn panics_at_once<Fut: Future<Output = String>>(_: ResourceRequest) -> Fut {
    panic!("resource handler blew up before returning a future")
}

fn server(timeout: Duration) -> Server {
    Server::builder("failing", "1")
        .tool_timeout(timeout)
        .resource(Resource::new(
            "docs://boom",
            "boom",
            |_: ResourceRequest| async {
                if true {
                    panic!("resource handler blew up");
                }
                "unreachable"
            },
        ))
        .resource(Resource::new(
            "docs://boom-at-once",
            "boom-at-once",
            panics_at_once::<std::future::Ready<String>>,
        ))
        .resource(Resource::new(
            "docs://hang",
            "hang",
            |_: ResourceRequest| async {
                std::future::pending::<()>().await;
                "never"
            },
        ))
        .resource(Resource::new(
            "docs://fine",
            "fine",
            |_: ResourceRequest| async { "fine" },
        ))
        .resource_template(ResourceTemplate::new(
            "docs://item/{id}",
            "items",
            |r: ResourceRequest| async move {
                if r.var("id") == Some("0") {
                    panic!("template handler blew up");
                }
                format!("item {}", r.var("id").unwrap_or_default())
            },
        ))
        .prompt(Prompt::new("boom", |_: PromptRequest| async {
            if true {
                panic!("prompt handler blew up");
            }
            "unreachable".to_owned()
        }))
        .prompt(Prompt::new("hang", |_: PromptRequest| async {
            std::future::pending::<()>().await;
            "never".to_owned()
        }))
        .completion(|req: CompletionRequest| async move {
            if req.value == "boom" {
                panic!("completion handler blew up");
            }
            if req.value == "hang" {
                std::future::pending::<()>().await;
            }
            vec![format!("{}!", req.value)]
        })
        .build()
}

fn read(id: i64, uri: &str) -> Value {
    req(id, "resources/read", json!({"uri": uri}))
}

fn complete(id: i64, value: &str) -> Value {
    req(
        id,
        "completion/complete",
        json!({"ref":{"type":"ref/prompt","name":"boom"},"argument":{"name":"x","value":value}}),
    )
}

/// (request, what its -32603 message must mention)
fn failing_requests() -> Vec<(Value, &'static str)> {
    vec![
        (read(1, "docs://boom"), "resource handler blew up"),
        (
            read(2, "docs://boom-at-once"),
            "resource handler blew up before returning a future",
        ),
        (read(3, "docs://item/0"), "template handler blew up"),
        (
            req(4, "prompts/get", json!({"name":"boom"})),
            "prompt handler blew up",
        ),
        (complete(5, "boom"), "completion handler blew up"),
    ]
}

fn check_internal(reply: &Value, request: &Value, mention: &str) {
    assert_eq!(reply["jsonrpc"], "2.0", "{request} -> {reply}");
    assert_eq!(reply["id"], request["id"], "{request} -> {reply}");
    assert_eq!(reply["error"]["code"], -32603, "{request} -> {reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.contains(mention), "{request} -> {reply}");
    assert!(message.contains("panicked"), "{request} -> {reply}");
}

#[tokio::test]
async fn in_process_panics_in_catalog_handlers_are_internal_errors() {
    let server = server(Duration::from_secs(60));
    for (request, mention) in failing_requests() {
        let reply = server
            .handle(request.clone(), RequestContext::new())
            .await
            .unwrap();
        check_internal(&reply, &request, mention);
    }
    // The server goes on serving, the same handlers included.
    let fine = ask(&server, read(9, "docs://item/7")).await;
    assert_eq!(result(&fine)["contents"][0]["text"], "item 7");
    let fine = ask(&server, complete(10, "ok")).await;
    assert_eq!(result(&fine)["completion"]["values"], json!(["ok!"]));
}

#[tokio::test(start_paused = true)]
async fn catalog_handlers_time_out_like_tools() {
    let server = server(Duration::from_secs(3));
    for request in [
        read(1, "docs://hang"),
        req(2, "prompts/get", json!({"name":"hang"})),
        complete(3, "hang"),
    ] {
        let started = tokio::time::Instant::now();
        // Bounded, so a handler that is never stopped fails the test.
        let reply = tokio::time::timeout(Duration::from_secs(30), ask(&server, request.clone()))
            .await
            .unwrap_or_else(|_| panic!("no answer within 30 s: {request}"));
        assert_eq!(started.elapsed(), Duration::from_secs(3), "{request}");
        assert_eq!(reply["id"], request["id"]);
        assert_eq!(reply["error"]["code"], -32603, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains("timed out after 3s"), "{reply}");
    }
}

#[tokio::test]
async fn over_ndjson_every_failing_request_is_answered() {
    let mut lines = wire::Lines::serve(server(Duration::from_secs(60)));
    lines.initialize("2025-11-25", json!({})).await;
    for (request, mention) in failing_requests() {
        lines.send(&request).await;
        let reply = lines.recv().await;
        check_internal(&reply, &request, mention);
    }
    lines.send(&read(9, "docs://fine")).await;
    assert_eq!(lines.recv().await["result"]["contents"][0]["text"], "fine");
    lines.end().await;
}

#[cfg(feature = "http-server")]
#[tokio::test]
async fn over_http_every_failing_request_is_answered() {
    use claude_code_agent_mcp::http_server::StreamableHttpConfig;
    let http = wire::Http::serve(
        server(Duration::from_secs(60)),
        StreamableHttpConfig::default(),
    )
    .await;
    let sid = http.initialize("2025-11-25", json!({})).await;
    for (request, mention) in failing_requests() {
        let replies = http.exchange((&sid, "2025-11-25"), &request).await;
        assert_eq!(replies.len(), 1, "{replies:?}");
        check_internal(&replies[0], &request, mention);
    }
    let replies = http
        .exchange((&sid, "2025-11-25"), &read(9, "docs://fine"))
        .await;
    assert_eq!(replies[0]["result"]["contents"][0]["text"], "fine");
}

/// A `Handler` of the user's own that panics on `boom`, panics before
/// returning its future on `boom-at-once`, and answers `silent` with
/// nothing.
struct Unruly;

impl Handler for Unruly {
    fn handle(&self, message: Value, _: RequestContext) -> BoxFuture<'_, Option<Value>> {
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        if method == "boom-at-once" {
            panic!("unruly handler blew up at once");
        }
        Box::pin(async move {
            match method.as_str() {
                "boom" => panic!("unruly handler blew up"),
                "silent" => None,
                _ => Some(json!({"jsonrpc":"2.0","id":message["id"],"result":{}})),
            }
        })
    }
}

fn unruly_requests() -> Vec<(Value, &'static str)> {
    vec![
        (req(1, "boom", json!({})), "unruly handler blew up"),
        (
            req(2, "boom-at-once", json!({})),
            "unruly handler blew up at once",
        ),
        (req(3, "silent", json!({})), "no reply"),
    ]
}

#[tokio::test]
async fn over_ndjson_a_handler_of_your_own_cannot_leave_a_request_unanswered() {
    let mut lines = wire::Lines::serve(Unruly);
    for (request, mention) in unruly_requests() {
        lines.send(&request).await;
        let reply = lines.recv().await;
        assert_eq!(reply["id"], request["id"], "{reply}");
        assert_eq!(reply["error"]["code"], -32603, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains(mention), "{reply}");
    }
    lines.send(&req(4, "ping", json!({}))).await;
    assert_eq!(lines.recv().await["result"], json!({}));
    lines.end().await;
}

#[cfg(feature = "http-server")]
#[tokio::test]
async fn over_http_a_handler_of_your_own_cannot_leave_a_request_unanswered() {
    use claude_code_agent_mcp::http_server::StreamableHttpConfig;
    let http = wire::Http::serve(Unruly, StreamableHttpConfig::default()).await;
    // Unruly answers initialize without a protocolVersion, so no session is
    // made: every request below is sent without one, as a stateless POST.
    for (request, mention) in unruly_requests() {
        let mut request = request;
        request["params"] = json!({"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{}}});
        let method = request["method"].as_str().unwrap().to_owned();
        let r = http
            .post(None, &request)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .send()
            .await
            .unwrap();
        let replies = wire::messages_of(r).await;
        assert_eq!(replies.len(), 1, "{request}: {replies:?}");
        let reply = &replies[0];
        assert_eq!(reply["id"], request["id"], "{reply}");
        assert_eq!(reply["error"]["code"], -32603, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains(mention), "{reply}");
    }
}
