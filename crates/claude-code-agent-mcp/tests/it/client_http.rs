//! The Streamable HTTP transport against a scripted axum server: JSON and
//! SSE answers, 202s, the session header and DELETE, the protocol-version
//! and Mcp-* headers, custom headers, header refusal and stream resumption.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use claude_code_agent_mcp::client::{
    ClientOptions, Error, HttpOptions, HttpTransport, McpClient, ServerNotification,
};
use serde_json::{Value, json};

#[derive(Debug, Clone)]
struct Seen {
    verb: Method,
    headers: HashMap<String, String>,
    body: Value,
}

#[derive(Clone, Default)]
struct Mock {
    seen: Arc<Mutex<Vec<Seen>>>,
    cut_id: Arc<Mutex<Option<Value>>>,
    /// Answer `server/discover`: a server of the stateless revision.
    stateless: bool,
    /// `notifications/initialized` was answered (after a pause).
    initialized: Arc<AtomicBool>,
    /// A GET stream was asked for before that.
    early_get: Arc<AtomicBool>,
}

fn json_reply(status: StatusCode, body: Value) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn sse_reply(text: String) -> Response {
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(text))
        .unwrap()
}

async fn endpoint(
    State(mock): State<Mock>,
    verb: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let headers: HashMap<String, String> = headers
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
        .collect();
    mock.seen.lock().unwrap().push(Seen {
        verb: verb.clone(),
        headers: headers.clone(),
        body: body.clone(),
    });
    if verb == Method::DELETE {
        return json_reply(StatusCode::OK, json!({}));
    }
    if verb == Method::GET {
        let Some(last) = headers.get("last-event-id") else {
            if !mock.initialized.load(Ordering::SeqCst) {
                mock.early_get.store(true, Ordering::SeqCst);
            }
            return json_reply(StatusCode::METHOD_NOT_ALLOWED, json!({}));
        };
        assert_eq!(last, "ev-1");
        let id = mock.cut_id.lock().unwrap().clone().unwrap();
        let reply = json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":"resumed"}]}});
        return sse_reply(format!("id: ev-2\ndata: {reply}\n\n"));
    }
    if body["method"] == "notifications/initialized" {
        // Slow, so that a GET sent before it is answered shows.
        tokio::time::sleep(Duration::from_millis(200)).await;
        mock.initialized.store(true, Ordering::SeqCst);
    }
    let (Some(method), Some(id)) = (body["method"].as_str(), body.get("id")) else {
        return Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(Body::empty())
            .unwrap();
    };
    let ok = |result: Value| json!({"jsonrpc":"2.0","id":id,"result":result});
    match (method, body["params"]["name"].as_str()) {
        ("server/discover", _) if mock.stateless => json_reply(
            StatusCode::OK,
            ok(
                json!({"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},
                      "serverInfo":{"name":"mock","version":"1"}}),
            ),
        ),
        // A 2025-11-25 server refuses the probe with an HTTP error and a JSON-RPC body.
        ("server/discover", _) => json_reply(
            StatusCode::BAD_REQUEST,
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}),
        ),
        ("initialize", _) => {
            let mut r = json_reply(
                StatusCode::OK,
                ok(
                    json!({"protocolVersion":"2025-11-25","capabilities":{"tools":{}},
                                                           "serverInfo":{"name":"mock","version":"1"}}),
                ),
            );
            r.headers_mut()
                .insert("mcp-session-id", "sess-1".parse().unwrap());
            r
        }
        ("tools/list", _) => json_reply(
            StatusCode::OK,
            ok(json!({"tools":[
            {"name":"region","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}},
            {"name":"sse","inputSchema":{"type":"object"}}]})),
        ),
        ("tools/call", Some("sse")) => {
            let note = json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"half way"}});
            let ask = json!({"jsonrpc":"2.0","id":"srv-1","method":"ping"});
            let done = ok(json!({"content":[{"type":"text","text":"streamed"}]}));
            sse_reply(format!(
                ": comment\n\nevent: message\ndata: {note}\n\ndata: {ask}\n\nid: 9\ndata: {done}\n\n"
            ))
        }
        ("tools/call", Some("cut")) => {
            *mock.cut_id.lock().unwrap() = Some(id.clone());
            sse_reply("id: ev-1\nretry: 50\ndata: \n\n".to_owned())
        }
        ("tools/call", _) => json_reply(
            StatusCode::OK,
            ok(json!({"content":[{"type":"text","text":"plain"}]})),
        ),
        (other, _) => json_reply(
            StatusCode::OK,
            json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":other}}),
        ),
    }
}

async fn start() -> (Mock, String, tokio::task::JoinHandle<()>) {
    start_mock(Mock::default()).await
}

async fn start_mock(mock: Mock) -> (Mock, String, tokio::task::JoinHandle<()>) {
    let app = axum::Router::new()
        .route("/mcp", axum::routing::any(endpoint))
        .with_state(mock.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (mock, url, task)
}

#[tokio::test]
async fn streamable_http_end_to_end() {
    let (mock, url, server) = start().await;
    let notes = Arc::new(Mutex::new(Vec::new()));
    let sink = notes.clone();
    let transport = HttpTransport::new(
        HttpOptions::new(&url)
            .bearer_token("t0k3n")
            .header("X-Tenant", "acme"),
    )
    .unwrap();
    let options = ClientOptions::new("http-test", "1")
        .request_timeout(Duration::from_secs(10))
        .on_notification(move |n| sink.lock().unwrap().push(n));
    let client = McpClient::connect(transport, options).await.unwrap();
    assert_eq!(client.server_info().unwrap().name, "mock");

    // A JSON answer, with the argument mirrored into a header.
    let plain = client
        .call_tool("region", json!({"region":"eu-west"}))
        .await
        .unwrap();
    assert_eq!(plain.text_content(), "plain");
    // An SSE answer carrying a notification and a server request before the response.
    let streamed = client.call_tool("sse", json!({})).await.unwrap();
    assert_eq!(streamed.text_content(), "streamed");
    // A stream cut before its response is resumed with GET + Last-Event-ID.
    let resumed = client.call_tool("cut", json!({})).await.unwrap();
    assert_eq!(resumed.text_content(), "resumed");
    // A value that would split the header travels base64-wrapped: no
    // header is injected.
    let wrapped = client
        .call_tool("region", json!({"region":"a\r\nX-Evil: 1"}))
        .await
        .unwrap();
    assert_eq!(wrapped.text_content(), "plain");
    let last = mock.seen.lock().unwrap().last().unwrap().headers.clone();
    assert_eq!(last["mcp-param-region"], "=?base64?YQ0KWC1FdmlsOiAx?=");
    assert!(!last.contains_key("x-evil"));
    client.close().await.unwrap();

    let seen = mock.seen.lock().unwrap().clone();
    let posts: Vec<&Seen> = seen.iter().filter(|s| s.verb == Method::POST).collect();
    for p in &posts {
        assert_eq!(p.headers["accept"], "application/json, text/event-stream");
        assert_eq!(p.headers["content-type"], "application/json");
        assert_eq!(p.headers["authorization"], "Bearer t0k3n");
        assert_eq!(p.headers["x-tenant"], "acme");
    }
    let by_method = |m: &str| posts.iter().find(|p| p.body["method"] == m).unwrap();
    // Before the handshake: no session, no protocol version; after: both.
    assert!(
        !by_method("initialize")
            .headers
            .contains_key("mcp-session-id")
    );
    assert!(
        !by_method("initialize")
            .headers
            .contains_key("mcp-protocol-version")
    );
    let initialized = by_method("notifications/initialized");
    assert_eq!(initialized.headers["mcp-session-id"], "sess-1");
    assert_eq!(initialized.headers["mcp-protocol-version"], "2025-11-25");
    let call = posts
        .iter()
        .find(|p| p.body["params"]["name"] == "region")
        .unwrap();
    assert_eq!(call.headers["mcp-method"], "tools/call");
    assert_eq!(call.headers["mcp-name"], "region");
    assert_eq!(call.headers["mcp-param-region"], "eu-west");
    // The server's ping was answered with {} in a POST of its own.
    let answer = posts.iter().find(|p| p.body["id"] == "srv-1").unwrap();
    assert_eq!(answer.body["result"], json!({}));
    // The notification reached the callback.
    assert!(
        notes
            .lock()
            .unwrap()
            .iter()
            .any(|n| matches!(n, ServerNotification::Log(m) if m.data == "half way"))
    );
    // The session was deleted on close.
    let delete = seen
        .iter()
        .find(|s| s.verb == Method::DELETE)
        .expect("no DELETE on close");
    assert_eq!(delete.headers["mcp-session-id"], "sess-1");
    server.abort();
}

#[tokio::test]
async fn unreachable_server_is_a_transport_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let http =
        HttpTransport::new(HttpOptions::new(format!("http://127.0.0.1:{port}/mcp"))).unwrap();
    let e = McpClient::connect(http, ClientOptions::new("t", "1"))
        .await
        .unwrap_err();
    assert!(e.is_transport(), "{e:?}");
    assert!(e.jsonrpc_error().is_none() && e.status().is_none());
    // reqwest's error is the source, and says it could not connect.
    let cause = std::error::Error::source(&e)
        .and_then(|s| s.downcast_ref::<reqwest::Error>())
        .unwrap_or_else(|| panic!("no reqwest::Error source: {e:?}"));
    assert!(cause.is_connect(), "{cause:?}");
    assert!(
        !e.to_string().contains(&cause.to_string()),
        "not repeated: {e}"
    );
}

/// An error status without a JSON-RPC error in its body fails the request
/// with that status, its body quoted in the message.
#[tokio::test]
async fn an_error_status_is_the_errors_status() {
    let app = axum::Router::new()
        .route(
            "/500",
            axum::routing::any(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "it broke") }),
        )
        .route(
            "/404",
            axum::routing::any(|| async { (StatusCode::NOT_FOUND, "no such endpoint") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    for (path, status, body) in [("500", 500, "it broke"), ("404", 404, "no such endpoint")] {
        let http = HttpTransport::new(HttpOptions::new(format!("http://{addr}/{path}"))).unwrap();
        let e: Error = McpClient::connect(http, ClientOptions::new("t", "1"))
            .await
            .unwrap_err();
        assert!(e.is_transport(), "{e:?}");
        assert_eq!(e.status(), Some(status), "{e:?}");
        assert_eq!(e.code(), None);
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("HTTP {status} ")) && text.contains(body),
            "{text}"
        );
    }
    server.abort();
}

#[tokio::test]
async fn the_get_stream_is_tried_by_default_and_a_405_is_no_failure() {
    let (mock, url, server) = start().await;
    let transport = HttpTransport::new(HttpOptions::new(&url)).unwrap();
    let client = McpClient::connect(transport, ClientOptions::new("http-test", "1"))
        .await
        .unwrap();
    let gets = || {
        let seen = mock.seen.lock().unwrap();
        let posts = seen.iter().filter(|s| s.verb == Method::POST).count();
        let gets: Vec<Seen> = seen
            .iter()
            .filter(|s| s.verb == Method::GET)
            .cloned()
            .collect();
        (posts, gets)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while gets().1.is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "no GET stream was tried"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (_, got) = gets();
    // Once the session is initialized, with its id and revision.
    assert!(
        !mock.early_get.load(Ordering::SeqCst),
        "the GET stream was asked for before notifications/initialized was answered"
    );
    assert_eq!(got[0].headers["accept"], "text/event-stream");
    assert_eq!(got[0].headers["mcp-session-id"], "sess-1");
    assert_eq!(got[0].headers["mcp-protocol-version"], "2025-11-25");
    // The mock answers 405: the client carries on, and does not try again.
    let plain = client.call_tool("sse", json!({})).await.unwrap();
    assert_eq!(plain.text_content(), "streamed");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(gets().1.len(), 1);
    assert!(client.is_alive());
    client.close().await.unwrap();
    server.abort();
}

#[tokio::test]
async fn no_get_stream_at_the_stateless_revision() {
    let mock = Mock {
        stateless: true,
        ..Mock::default()
    };
    let (mock, url, server) = start_mock(mock).await;
    let transport = HttpTransport::new(HttpOptions::new(&url)).unwrap();
    let client = McpClient::connect(transport, ClientOptions::new("http-test", "1"))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2026-07-28");
    let plain = client.call_tool("sse", json!({})).await.unwrap();
    assert_eq!(plain.text_content(), "streamed");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let seen = mock.seen.lock().unwrap().clone();
    assert!(
        seen.iter().all(|s| s.verb != Method::GET),
        "a GET stream at the stateless revision: {seen:#?}"
    );
    assert!(seen.iter().any(|s| s.body["method"] == "tools/call"));
    client.close().await.unwrap();
    server.abort();
}
