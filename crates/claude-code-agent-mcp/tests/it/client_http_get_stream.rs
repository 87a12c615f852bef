//! The HTTP client's standalone GET stream is open before `connect`
//! returns: a server sends what belongs to no request (the TypeScript SDK's
//! server: list changes, log messages, even a tool's elicitation) only to a
//! stream that exists, so a call made right after `connect` must not race
//! the GET. Against a scripted server whose GET is slow to answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use claude_code_agent_mcp::client::{
    ClientOptions, HandshakeMode, HttpOptions, HttpTransport, McpClient,
};
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// How long the scripted server takes to answer a GET.
const GET_DELAY: Duration = Duration::from_millis(400);

#[derive(Clone, Default)]
struct SlowGet {
    /// Set just before the GET's status and headers go out.
    get_answered: Arc<AtomicBool>,
}

async fn handle(
    axum::extract::State(server): axum::extract::State<SlowGet>,
    verb: Method,
    body: axum::body::Bytes,
) -> Response {
    match verb {
        Method::GET => {
            tokio::time::sleep(GET_DELAY).await;
            server.get_answered.store(true, Ordering::SeqCst);
            let events = futures::stream::pending::<Result<String, std::io::Error>>();
            return (
                [("content-type", "text/event-stream")],
                axum::body::Body::from_stream(events),
            )
                .into_response();
        }
        Method::DELETE => return StatusCode::OK.into_response(),
        _ => {}
    }
    let body: Value = serde_json::from_slice(&body).unwrap();
    let id = body["id"].clone();
    if id.is_null() {
        return StatusCode::ACCEPTED.into_response();
    }
    let result = match body["method"].as_str() {
        Some("initialize") => {
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "slow-get", "version": "1"}})
        }
        _ => json!({}),
    };
    let mut response = (
        [("content-type", "application/json")],
        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    )
        .into_response();
    response
        .headers_mut()
        .insert("mcp-session-id", "s-1".parse().unwrap());
    response
}

async fn start(server: SlowGet) -> String {
    let app = axum::Router::new()
        .route("/mcp", axum::routing::any(handle))
        .with_state(server);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

async fn connect(url: &str, get_stream: bool) -> McpClient {
    let http = HttpTransport::new(HttpOptions::new(url).get_stream(get_stream)).unwrap();
    let options = ClientOptions::new("get-stream-test", "1")
        .request_timeout(Duration::from_secs(10))
        .handshake(HandshakeMode::Initialize);
    McpClient::connect(http, options).await.unwrap()
}

#[tokio::test]
async fn connect_returns_once_the_server_has_answered_the_get_stream() {
    let server = SlowGet::default();
    let url = start(server.clone()).await;
    let started = Instant::now();
    let client = connect(&url, true).await;
    assert!(
        server.get_answered.load(Ordering::SeqCst),
        "connect returned after {:?}, before the server had the GET stream",
        started.elapsed()
    );
    client.close().await.unwrap();
}

#[tokio::test]
async fn without_the_get_stream_connect_does_not_wait_for_one() {
    let server = SlowGet::default();
    let url = start(server.clone()).await;
    let started = Instant::now();
    let client = connect(&url, false).await;
    assert!(started.elapsed() < GET_DELAY, "{:?}", started.elapsed());
    assert!(!server.get_answered.load(Ordering::SeqCst));
    client.close().await.unwrap();
}
