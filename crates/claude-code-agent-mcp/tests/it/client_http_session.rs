//! The HTTP client when the server no longer knows its session (404): it
//! starts a new session with a fresh `initialize` and sends the message
//! again once; when no new session can be had, it closes, and every later
//! call fails at once with a `Closed` error saying why. Against our own
//! Streamable HTTP server: a DELETE from elsewhere, a restart, a server
//! that refuses new sessions, and an idle client whose GET stream meets
//! the 404 first. (The TypeScript SDK server:
//! `interop_ts_server.rs`.)
use claude_code_agent_testkit::tasks;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::{calc, http_session};
use claude_code_agent_mcp::client::{
    ClientOptions, Error, HandshakeMode, HttpOptions, HttpTransport, McpClient, ServerNotification,
};
use claude_code_agent_mcp::http_server::{StreamableHttpConfig, StreamableHttpService};
use claude_code_agent_mcp::{Server, Tool};
use futures::StreamExt;
use serde_json::Value;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// Our server on `listener` until the returned sender is dropped or fired.
fn serve(
    listener: TcpListener,
    config: StreamableHttpConfig,
) -> (StreamableHttpService, oneshot::Sender<()>) {
    serve_server(calc::calc_server(), listener, config)
}

fn serve_server(
    server: Server,
    listener: TcpListener,
    config: StreamableHttpConfig,
) -> (StreamableHttpService, oneshot::Sender<()>) {
    let service = StreamableHttpService::new(server, config);
    let (stop, stopped) = oneshot::channel::<()>();
    let running = service.clone();
    tokio::spawn(async move {
        let _ = running
            .serve_with_shutdown(listener, async {
                let _ = stopped.await;
            })
            .await;
    });
    (service, stop)
}

async fn connect(url: &str) -> (McpClient, Arc<HttpTransport>) {
    let http = Arc::new(HttpTransport::new(HttpOptions::new(url)).unwrap());
    let options = ClientOptions::new("session-test", "1")
        .request_timeout(Duration::from_secs(10))
        // Sessions belong to the 2025-11-25 revision.
        .handshake(HandshakeMode::Initialize);
    let client = McpClient::connect_arc(http.clone(), options).await.unwrap();
    (client, http)
}

async fn add(client: &McpClient) -> Result<String, Error> {
    client
        .call_tool("add", json!({"a": 40, "b": 2}))
        .await
        .map(|r| r.text_content())
}

async fn delete(url: &str, session: &str) {
    let r = reqwest::Client::new()
        .delete(url)
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "DELETE: {}", r.status());
}

#[tokio::test]
async fn a_session_deleted_elsewhere_is_replaced_and_the_call_goes_through() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (service, _stop) = serve(listener, StreamableHttpConfig::new());
    let (client, http) = connect(&url).await;
    assert_eq!(add(&client).await.unwrap(), "42");
    let first = http.session_id().unwrap();

    delete(&url, &first).await;
    assert_eq!(service.session_count(), 0);
    // The call meets a 404, a new session is opened, the call is sent again.
    assert_eq!(add(&client).await.unwrap(), "42");
    let second = http.session_id().unwrap();
    assert_ne!(first, second);
    assert_eq!(service.session_count(), 1);
    assert!(client.is_alive());
    // And again, for a request of another kind.
    delete(&url, &second).await;
    assert_eq!(client.list_tools().await.unwrap().len(), 6);
    assert!(client.is_alive());
    // Many calls meeting the 404 at once share one new session.
    delete(&url, &http.session_id().unwrap()).await;
    let calls = (0..20).map(|_| add(&client));
    for sum in futures::future::join_all(calls).await {
        assert_eq!(sum.unwrap(), "42");
    }
    assert_eq!(service.session_count(), 1);
    client.close().await.unwrap();
    assert_eq!(service.session_count(), 0, "the new session was deleted");
}

#[tokio::test]
async fn a_restarted_server_gets_a_new_session() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let url = format!("http://{addr}/mcp");
    let (_old, stop) = serve(listener, StreamableHttpConfig::new());
    let (client, http) = connect(&url).await;
    assert_eq!(add(&client).await.unwrap(), "42");
    let first = http.session_id().unwrap();

    // The server restarts on the same port and knows no session.
    stop.send(()).unwrap();
    let listener = loop {
        match TcpListener::bind(addr).await {
            Ok(l) => break l,
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    };
    let (new, _stop) = serve(listener, StreamableHttpConfig::new());
    assert_eq!(add(&client).await.unwrap(), "42");
    assert_ne!(http.session_id().unwrap(), first);
    assert_eq!(new.session_count(), 1);
    client.close().await.unwrap();
}

#[tokio::test]
async fn when_no_new_session_can_be_started_the_client_closes_and_says_why() {
    let baseline = tasks::Baseline::now();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    // Room for one session only.
    let config = StreamableHttpConfig::new().max_sessions(1);
    let (service, stop) = serve(listener, config);
    let (client, http) = connect(&url).await;
    assert_eq!(add(&client).await.unwrap(), "42");

    // Our session is deleted, and another client takes the only place.
    delete(&url, &http.session_id().unwrap()).await;
    let other = reqwest::Client::new();
    http_session::initialize(&other, &url, json!({})).await;
    assert_eq!(service.session_count(), 1);

    let e = add(&client).await.unwrap_err();
    assert!(e.is_closed(), "{e:?}");
    assert_eq!(e.status(), Some(404));
    let why = e.to_string();
    assert!(
        why.contains("404") && why.contains("a new one could not be started"),
        "{why}"
    );
    // The cause: the server's JSON-RPC answer to the new `initialize`.
    let cause = std::error::Error::source(&e)
        .and_then(|s| s.downcast_ref::<Error>())
        .unwrap_or_else(|| panic!("no cause: {e:?}"));
    assert_eq!(cause.code(), Some(-32603), "{cause:?}");
    assert!(
        cause.to_string().contains("Too many sessions"),
        "the server's reason: {cause}"
    );
    assert!(!client.is_alive());
    // Every later call fails at once, naming why.
    let started = Instant::now();
    let later = client.ping().await.unwrap_err();
    assert!(later.is_closed(), "{later:?}");
    assert!(
        later.to_string().contains("could not be started"),
        "{later}"
    );
    assert!(started.elapsed() < Duration::from_millis(100));
    client.close().await.unwrap();
    drop((client, http, other));
    stop.send(()).unwrap();
    baseline.settled("a closed HTTP client").await;
}

#[tokio::test]
async fn an_idle_client_renews_its_session_from_the_get_stream() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = calc::calc_server();
    let config = StreamableHttpConfig::new().sse_retry(Some(Duration::from_millis(50)));
    let (service, _stop) = serve_server(server.clone(), listener, config);
    let (client, http) = connect(&url).await;
    let mut notes = client.notifications();
    let first = http.session_id().unwrap();

    // No call is made: the GET stream meets the 404 and starts a new session.
    delete(&url, &first).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while http.session_id().as_deref() == Some(first.as_str()) || service.session_count() == 0 {
        assert!(Instant::now() < deadline, "no new session");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // And listens on it: what the server says outside any request arrives.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        server.add_tool(
            Tool::new("late", "late", |_: Value| async { "" })
                .input_schema(json!({"type": "object"})),
        );
        let heard = tokio::time::timeout(Duration::from_millis(200), async {
            while let Some(note) = notes.next().await {
                if note == ServerNotification::ToolListChanged {
                    return true;
                }
            }
            false
        });
        if heard.await == Ok(true) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no list_changed on the new session"
        );
    }
    assert!(client.is_alive());
    client.close().await.unwrap();
}

/// A scripted server that forgets sessions: every `initialize` opens a new
/// one (`s-1`, `s-2`, …) answered with the revision `versions` gives for
/// it; `tools/call` of `gone` is always answered 404, `cut` answers with an
/// SSE stream cut before the response whose resumption meets 404; the
/// plain GET stream is refused (405). Counts the POSTs by method.
#[derive(Clone)]
struct Forgetful {
    versions: &'static [&'static str],
    sessions: Arc<std::sync::atomic::AtomicUsize>,
    posts: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Forgetful {
    fn new(versions: &'static [&'static str]) -> Self {
        Self {
            versions,
            sessions: Arc::default(),
            posts: Arc::default(),
        }
    }

    fn posted(&self, what: &str) -> usize {
        self.posts
            .lock()
            .unwrap()
            .iter()
            .filter(|m| *m == what)
            .count()
    }

    async fn start(&self) -> String {
        let app = axum::Router::new()
            .route("/mcp", axum::routing::any(forgetful))
            .with_state(self.clone());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        url
    }
}

async fn forgetful(
    axum::extract::State(mock): axum::extract::State<Forgetful>,
    verb: axum::http::Method,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> axum::response::Response {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let json = |status: StatusCode, body: Value| {
        (
            status,
            [("content-type", "application/json")],
            body.to_string(),
        )
            .into_response()
    };
    let gone = || {
        json(
            StatusCode::NOT_FOUND,
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}),
        )
    };
    match verb {
        axum::http::Method::GET if headers.contains_key("last-event-id") => return gone(),
        axum::http::Method::GET => return StatusCode::METHOD_NOT_ALLOWED.into_response(),
        axum::http::Method::DELETE => return StatusCode::OK.into_response(),
        _ => {}
    }
    let body: Value = serde_json::from_slice(&body).unwrap();
    let method = body["method"].as_str().unwrap_or("response").to_owned();
    let name = body["params"]["name"].as_str().unwrap_or("");
    mock.posts.lock().unwrap().push(match name {
        "" => method.clone(),
        name => format!("{method} {name}"),
    });
    let id = body["id"].clone();
    match (method.as_str(), name) {
        ("initialize", _) => {
            let n = mock
                .sessions
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let version = mock.versions[n.min(mock.versions.len() - 1)];
            let result = json!({"protocolVersion":version,"capabilities":{"tools":{}},
                "serverInfo":{"name":"forgetful","version":"1"}});
            let mut r = json(
                StatusCode::OK,
                json!({"jsonrpc":"2.0","id":id,"result":result}),
            );
            r.headers_mut()
                .insert("mcp-session-id", format!("s-{}", n + 1).parse().unwrap());
            r
        }
        ("tools/list", _) => json(
            StatusCode::OK,
            json!({"jsonrpc":"2.0","id":id,"result":{"tools":[]}}),
        ),
        ("tools/call", "gone") => gone(),
        ("tools/call", "cut") => (
            [("content-type", "text/event-stream")],
            "id: ev-1\nretry: 20\ndata: \n\n",
        )
            .into_response(),
        (_, _) if id.is_null() => StatusCode::ACCEPTED.into_response(),
        (_, _) => json(
            StatusCode::OK,
            json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":"ok"}]}}),
        ),
    }
}

#[tokio::test]
async fn a_404_on_the_new_session_too_closes_the_client_after_one_retry() {
    let mock = Forgetful::new(&["2025-11-25"]);
    let url = mock.start().await;
    let (client, http) = connect(&url).await;
    assert_eq!(http.session_id().as_deref(), Some("s-1"));

    let e = client.call_tool("gone", json!({})).await.unwrap_err();
    assert!(e.is_closed(), "{e:?}");
    assert!(
        e.to_string().contains("404 again on the new session"),
        "{e}"
    );
    // Sent twice (once per session), one new session, then no more.
    assert_eq!(mock.posted("tools/call gone"), 2);
    assert_eq!(mock.posted("initialize"), 2);
    assert!(!client.is_alive());
    let later = client.call_tool("other", json!({})).await.unwrap_err();
    assert!(later.is_closed(), "{later:?}");
    assert!(later.to_string().contains("404 again"), "{later}");
    assert_eq!(
        mock.posted("tools/call other"),
        0,
        "nothing sent once closed"
    );
    assert_eq!(mock.posted("initialize"), 2);
}

#[tokio::test]
async fn a_new_session_on_another_revision_closes_the_client() {
    let mock = Forgetful::new(&["2025-11-25", "2025-06-18"]);
    let url = mock.start().await;
    let (client, _http) = connect(&url).await;

    let e = client.call_tool("gone", json!({})).await.unwrap_err();
    assert!(e.is_closed(), "{e:?}");
    let why = std::error::Error::source(&e).map(ToString::to_string);
    let why = why.unwrap_or_else(|| panic!("no cause: {e:?}"));
    assert!(
        why.contains("\"2025-06-18\"") && why.contains("\"2025-11-25\""),
        "names both revisions: {why}"
    );
    assert_eq!(
        mock.posted("tools/call gone"),
        1,
        "not sent on that session"
    );
    assert!(!client.is_alive());
}

#[tokio::test]
async fn a_response_lost_with_its_session_is_not_sent_again() {
    let mock = Forgetful::new(&["2025-11-25"]);
    let url = mock.start().await;
    let (client, http) = connect(&url).await;

    // The answer's stream is cut and resuming it meets 404: the old session
    // may have acted on the call, so it is not repeated on the new one.
    let e = client.call_tool("cut", json!({})).await.unwrap_err();
    assert!(e.is_transport(), "{e:?}");
    assert!(e.to_string().contains("not sent again"), "{e}");
    assert_eq!(mock.posted("tools/call cut"), 1);
    assert_eq!(http.session_id().as_deref(), Some("s-2"));
    // The client goes on, on the new session.
    assert!(client.is_alive());
    assert_eq!(
        client
            .call_tool("fine", json!({}))
            .await
            .unwrap()
            .text_content(),
        "ok"
    );
    client.close().await.unwrap();
}
