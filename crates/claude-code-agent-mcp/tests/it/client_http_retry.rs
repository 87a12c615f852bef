//! The client sends a request again when its answer was lost with its
//! connection (`RetryPolicy`), against a scripted axum server that answers
//! the first attempt of each call as a proxy whose replica died (502), or
//! as a replica that took over a dead one's stream (the retryable
//! JSON-RPC error): a call of a tool annotated idempotent or read-only goes
//! again, with the same id on the same session; any other call fails with
//! the error that says it may or may not have run, sent once; retries are
//! bounded and can be turned off.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use claude_code_agent_mcp::client::{
    ClientOptions, HandshakeMode, HttpOptions, HttpTransport, McpClient, RetryPolicy,
};
use serde_json::{Value, json};

/// The `tools/call`s the server saw: (tool, JSON-RPC id, session id).
#[derive(Clone, Default)]
struct Flaky {
    calls: Arc<Mutex<Vec<(String, Value, String)>>>,
}

impl Flaky {
    fn calls_of(&self, tool: &str) -> Vec<(Value, String)> {
        let calls = self.calls.lock().unwrap();
        let of = calls.iter().filter(|(t, _, _)| t == tool);
        of.map(|(_, id, s)| (id.clone(), s.clone())).collect()
    }
}

fn reply(status: StatusCode, body: &Value, session: bool) -> Response {
    let mut r = Response::builder()
        .status(status)
        .header("content-type", "application/json");
    if session {
        r = r.header("mcp-session-id", "s-1");
    }
    r.body(body.to_string().into()).unwrap()
}

/// `safe` (idempotent), `read` (read-only), `unsafe` (no hints) and
/// `lost` (idempotent): their first call fails, the next ones answer;
/// `always` (idempotent) fails every time. `lost` fails with the retryable
/// JSON-RPC error, the others with a bare 502.
async fn endpoint(
    State(flaky): State<Flaky>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if method == Method::GET {
        return reply(StatusCode::METHOD_NOT_ALLOWED, &Value::Null, false);
    }
    if method == Method::DELETE {
        return reply(StatusCode::OK, &Value::Null, false);
    }
    let message: Value = serde_json::from_slice(&body).unwrap();
    let id = message["id"].clone();
    let ok = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    match message["method"].as_str().unwrap_or_default() {
        "initialize" => reply(
            StatusCode::OK,
            &ok(
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                       "serverInfo": {"name": "flaky", "version": "1"}}),
            ),
            true,
        ),
        "tools/list" => {
            let tool = |name: &str, hints: Value| json!({"name": name, "inputSchema": {"type": "object"}, "annotations": hints});
            let tools = [
                tool("safe", json!({"idempotentHint": true})),
                tool("read", json!({"readOnlyHint": true})),
                tool("unsafe", json!({"idempotentHint": false})),
                tool("lost", json!({"idempotentHint": true})),
                tool("always", json!({"idempotentHint": true})),
            ];
            reply(StatusCode::OK, &ok(json!({"tools": tools})), false)
        }
        "tools/call" => {
            let tool = message["params"]["name"].as_str().unwrap().to_owned();
            let session = headers["mcp-session-id"].to_str().unwrap().to_owned();
            let attempt = {
                let mut calls = flaky.calls.lock().unwrap();
                calls.push((tool.clone(), id.clone(), session));
                calls.iter().filter(|(t, _, _)| *t == tool).count()
            };
            match (tool.as_str(), attempt) {
                ("lost", 1) => {
                    let error = json!({"code": -32603, "message": "The server replica that ran \
                        this request stopped before it answered", "data": {"retryable": true}});
                    let body = json!({"jsonrpc": "2.0", "id": id, "error": error});
                    reply(StatusCode::OK, &body, false)
                }
                ("always", _) | (_, 1) => Response::builder()
                    .status(StatusCode::BAD_GATEWAY)
                    .body("<html>502 Bad Gateway</html>".into())
                    .unwrap(),
                _ => reply(
                    StatusCode::OK,
                    &ok(json!({"content": [{"type": "text", "text": tool}]})),
                    false,
                ),
            }
        }
        _ if id.is_null() => reply(StatusCode::ACCEPTED, &Value::Null, false),
        other => {
            let error = json!({"code": -32601, "message": other});
            reply(
                StatusCode::OK,
                &json!({"jsonrpc": "2.0", "id": id, "error": error}),
                false,
            )
        }
    }
}

async fn start() -> (String, Flaky) {
    let flaky = Flaky::default();
    let app = axum::Router::new()
        .route("/mcp", axum::routing::any(endpoint))
        .with_state(flaky.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, flaky)
}

async fn connect(url: &str, retry: RetryPolicy) -> McpClient {
    let options = ClientOptions::new("retry-test", "1")
        .request_timeout(Duration::from_secs(10))
        .handshake(HandshakeMode::Initialize)
        .retry(retry);
    let http = HttpTransport::new(HttpOptions::new(url).get_stream(false)).unwrap();
    McpClient::connect(http, options).await.unwrap()
}

fn quick() -> RetryPolicy {
    RetryPolicy::new().backoff(Duration::from_millis(10), Duration::from_millis(40))
}

#[tokio::test]
async fn a_lost_answer_is_asked_for_again_only_when_the_tool_may_run_twice() {
    let (url, flaky) = start().await;
    let client = connect(&url, quick()).await;

    // Idempotent and read-only tools: sent again, same id, same session.
    for tool in ["safe", "read", "lost"] {
        let result = client.call_tool(tool, json!({})).await.unwrap();
        assert_eq!(result.text_content(), tool);
        let calls = flaky.calls_of(tool);
        assert_eq!(calls.len(), 2, "{tool}: {calls:?}");
        assert_eq!(
            calls[0], calls[1],
            "{tool}: the same request, on the same session"
        );
    }
    assert_eq!(client.retries(), 3);

    // Not idempotent: fails, saying it may have run, and is sent once.
    let e = client.call_tool("unsafe", json!({})).await.unwrap_err();
    assert!(e.is_interrupted() && e.is_transport(), "{e:?}");
    assert_eq!(e.status(), Some(502));
    assert_eq!(flaky.calls_of("unsafe").len(), 1);
    assert_eq!(client.retries(), 3);
    // Called again by its caller, it runs.
    let result = client.call_tool("unsafe", json!({})).await.unwrap();
    assert_eq!(result.text_content(), "unsafe");

    // Bounded: the default is three retries, each after a wait.
    let started = Instant::now();
    let e = client.call_tool("always", json!({})).await.unwrap_err();
    assert!(e.is_interrupted(), "{e:?}");
    assert_eq!(
        flaky.calls_of("always").len(),
        4,
        "one call and three retries"
    );
    assert!(started.elapsed() >= Duration::from_millis(5 + 10 + 20));
}

#[tokio::test]
async fn retries_can_be_turned_off_and_need_the_tools_hints() {
    let (url, flaky) = start().await;
    let client = connect(&url, RetryPolicy::none()).await;
    let e = client.call_tool("safe", json!({})).await.unwrap_err();
    assert!(e.is_interrupted(), "{e:?}");
    assert_eq!(flaky.calls_of("safe").len(), 1);
    assert_eq!(client.retries(), 0);

    // The hints of a tool the server has not listed are not guessed: over
    // HTTP the client lists the tools before its first call, so a tool it
    // never saw listed is not sent again.
    let (url, flaky) = start().await;
    let client = connect(&url, quick()).await;
    let e = client.call_tool("unlisted", json!({})).await.unwrap_err();
    assert!(e.is_interrupted(), "{e:?}");
    assert_eq!(flaky.calls_of("unlisted").len(), 1);
}
