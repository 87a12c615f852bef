//! The Streamable HTTP service over real sockets on 127.0.0.1: sessions,
//! SSE, server→client requests, the GET stream, the security checks, and
//! bodies as JavaScript clients write them.

use std::time::Duration;

use crate::support::http_session;
use claude_code_agent_mcp::http_server::{
    ResponseMode, StreamableHttpConfig, StreamableHttpService,
};
use claude_code_agent_mcp::{LogLevel, Server, Tool, ToolContext};
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

struct Running {
    url: String,
    server: Server,
    http: Client,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn start(config: StreamableHttpConfig) -> Running {
    let server = Server::builder("http-test", "1")
        .tool(
            Tool::new(
                "work",
                "progress, a log line, then done",
                |_: Value, ctx: ToolContext| async move {
                    ctx.progress(1.0, Some(2.0), None);
                    ctx.log(LogLevel::Info, "half way");
                    "done"
                },
            )
            .input_schema(json!({"type":"object"})),
        )
        .tool(
            Tool::new("echo", "says `text` back", |v: Value| async move {
                v["text"].as_str().unwrap_or_default().to_owned()
            })
            .input_schema(json!({"type":"object"})),
        )
        .tool(
            Tool::new(
                "ask",
                "asks the client",
                |_: Value, ctx: ToolContext| async move {
                    match ctx
                        .request(
                            "sampling/createMessage",
                            json!({"messages":[],"maxTokens":1}),
                        )
                        .await
                    {
                        Ok(r) => format!("client said {}", r["content"]["text"]),
                        Err(e) => format!("error: {e}"),
                    }
                },
            )
            .input_schema(json!({"type":"object"})),
        )
        .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let service = StreamableHttpService::new(server.clone(), config);
    let task = tokio::spawn(async move {
        let _ = service.serve(listener).await;
    });
    Running {
        url,
        server,
        http: Client::new(),
        task,
    }
}

impl Running {
    fn post(&self, session: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
        http_session::post(&self.http, &self.url, session, body)
    }

    async fn initialize(&self) -> String {
        http_session::initialize(&self.http, &self.url, json!({"sampling":{}})).await
    }
}

/// The JSON messages of an SSE body (events with data only).
fn sse_messages(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter_map(|event| event.lines().find_map(|l| l.strip_prefix("data: ")))
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

/// Reads SSE events from a streaming response.
struct SseReader {
    resp: reqwest::Response,
    buf: String,
}

impl SseReader {
    /// Messages up to and including the first `until` accepts.
    async fn until(&mut self, until: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let event: String = self.buf.drain(..end + 2).collect();
                for m in sse_messages(&event) {
                    let stop = until(&m);
                    seen.push(m);
                    if stop {
                        return seen;
                    }
                }
            }
            match tokio::time::timeout_at(deadline, self.resp.chunk()).await {
                Ok(Ok(Some(chunk))) => self.buf.push_str(std::str::from_utf8(&chunk).unwrap()),
                other => panic!("stream ended or timed out ({other:?}); saw {seen:?}"),
            }
        }
    }
}

#[tokio::test]
async fn sessions_json_and_sse_answers_and_delete() {
    let t = start(StreamableHttpConfig::default()).await;
    let sid = t.initialize().await;

    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    let r = t.post(Some(&sid), &list).send().await.unwrap();
    assert_eq!(r.headers()["content-type"], "application/json");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["result"]["tools"].as_array().unwrap().len(), 3);

    // tools/call is answered with SSE: priming event, progress, log, result.
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work","arguments":{},"_meta":{"progressToken":"p"}}});
    let r = t.post(Some(&sid), &call).send().await.unwrap();
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let text = r.text().await.unwrap();
    assert!(
        text.starts_with("id: ") && text.contains("retry: 1000\ndata: \n\n"),
        "{text}"
    );
    let methods: Vec<Value> = sse_messages(&text)
        .iter()
        .map(|m| m.get("method").cloned().unwrap_or(m["id"].clone()))
        .collect();
    assert_eq!(
        methods,
        [
            json!("notifications/progress"),
            json!("notifications/message"),
            json!(2)
        ]
    );

    // Without a session: 400; unknown session: 404; after DELETE: 404.
    assert_eq!(
        t.post(None, &list).send().await.unwrap().status(),
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        t.post(Some("ffff"), &list).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    let del = t
        .http
        .delete(&t.url)
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(del.status(), StatusCode::OK);
    assert_eq!(
        t.post(Some(&sid), &list).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn server_to_client_requests_travel_on_the_call_stream() {
    let t = start(StreamableHttpConfig::default()).await;
    let sid = t.initialize().await;
    let call = json!({"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"ask","arguments":{}}});
    let resp = t.post(Some(&sid), &call).send().await.unwrap();
    let mut stream = SseReader {
        resp,
        buf: String::new(),
    };
    let request = stream
        .until(|m| m["method"] == "sampling/createMessage")
        .await
        .pop()
        .unwrap();
    // The client answers in a POST of its own (202); the result follows on the call's stream.
    let answer = json!({"jsonrpc":"2.0","id":request["id"],
        "result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}});
    let r = t.post(Some(&sid), &answer).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let reply = stream.until(|m| m["id"] == "c").await.pop().unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "client said \"hi\"");
}

#[tokio::test]
async fn get_stream_carries_list_changed() {
    let t = start(StreamableHttpConfig::default()).await;
    let sid = t.initialize().await;
    let get = t
        .http
        .get(&t.url)
        .header("mcp-session-id", &sid)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), StatusCode::OK);
    t.server.add_tool(
        Tool::new("late", "", |_: Value| async {}).input_schema(json!({"type":"object"})),
    );
    let mut stream = SseReader {
        resp: get,
        buf: String::new(),
    };
    let seen = stream
        .until(|m| m["method"] == "notifications/tools/list_changed")
        .await;
    assert_eq!(seen.len(), 1);
}

#[tokio::test]
async fn malformed_and_forbidden_requests_get_clear_errors() {
    let t = start(
        StreamableHttpConfig::default()
            .bearer_token("tok")
            .max_body_bytes(1024),
    )
    .await;
    let auth = |r: reqwest::RequestBuilder| r.header("authorization", "Bearer tok");
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});

    let r = t.post(None, &ping).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert!(r.headers().contains_key("www-authenticate"));

    let r = auth(t.post(None, &ping))
        .header("host", "evil.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = auth(t.post(None, &ping))
        .header("origin", "http://evil.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);

    let r = auth(t.http.post(&t.url))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert_eq!(r.json::<Value>().await.unwrap()["error"]["code"], -32700);

    let big = json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"y".repeat(4096)}});
    let r = auth(t.post(None, &big)).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);

    let discover = json!({"jsonrpc":"2.0","id":9,"method":"server/discover","params":{}});
    let r: Value = auth(t.post(None, &discover))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // A stateless (2026-07-28) request without its _meta: -32602.
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["id"], 9);

    // A bad protocol version on an existing session; the server keeps serving.
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}});
    let r = auth(t.post(None, &init)).send().await.unwrap();
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let r = auth(t.post(None, &ping))
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "1999-01-01")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r: Value = auth(t.post(Some(&sid), &ping))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r, json!({"jsonrpc":"2.0","id":1,"result":{}}));
}

#[tokio::test]
async fn a_string_cut_mid_emoji_is_answered_and_a_body_that_does_not_decode_gets_its_id() {
    let t = start(StreamableHttpConfig::default()).await;
    let sid = t.initialize().await;
    let raw = |body: &'static str| {
        t.http
            .post(&t.url)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .header("mcp-session-id", &sid)
            .header("mcp-protocol-version", "2025-11-25")
            .body(body)
    };
    // As JSON.stringify writes "ab😀".slice(0, 3).
    let r = raw(r#"{"method":"tools/call","params":{"name":"echo","arguments":{"text":"ab\ud83d"}},"jsonrpc":"2.0","id":3}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["id"], 3, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "ab\u{FFFD}", "{body}");

    let r = raw(r#"{"method":"tools/call","params":{"x":"\q"},"jsonrpc":"2.0","id":4}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32700, "{body}");
    assert_eq!(
        body["id"], 4,
        "the request's id, though it does not decode: {body}"
    );
}

/// A server with one tool, `stuck`, that blocks its thread for 2.5 s with a
/// timeout of 300 ms, served on 127.0.0.1 with `mode`.
async fn stuck_server(mode: ResponseMode) -> (String, tokio::task::JoinHandle<()>) {
    let server = Server::builder("blocking", "1")
        .tool(crate::support::stuck_tool())
        .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let config = StreamableHttpConfig::default().response_mode(mode);
    let service = StreamableHttpService::new(server, config);
    let task = tokio::spawn(async move {
        let _ = service.serve(listener).await;
    });
    (url, task)
}

/// The timeout answer of `stuck` to request 7, given `waited` after the call.
fn assert_stuck_timed_out(answer: &Value, waited: Duration) {
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let said = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        said.contains("\"stuck\" timed out after 300ms and was stopped"),
        "{said}"
    );
    // The timeout (300 ms) and the watchdog's grace (100 ms), well before
    // the thread is free (2.5 s).
    assert!(waited < Duration::from_millis(1500), "{waited:?}");
}

/// A tool call whose handler blocks its thread past its timeout is answered
/// on its SSE stream on time, with its timeout result (the watchdog, on the
/// other worker), and the stream ends; other requests are served meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_that_blocks_its_thread_is_answered_on_its_stream_on_time() {
    let (url, task) = stuck_server(ResponseMode::Auto).await;
    let http = Client::new();
    let sid = http_session::initialize(&http, &url, json!({})).await;

    let start = std::time::Instant::now();
    let call = json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"stuck","arguments":{}}});
    let r = http_session::post(&http, &url, Some(&sid), &call)
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let list = json!({"jsonrpc":"2.0","id":8,"method":"tools/list"});
    let listed: Value = http_session::post(&http, &url, Some(&sid), &list)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["id"], 8);
    let text = tokio::time::timeout(Duration::from_secs(2), r.text())
        .await
        .expect("the call's stream ends on time")
        .unwrap();
    let waited = start.elapsed();
    let messages = sse_messages(&text);
    let answer = messages
        .iter()
        .find(|m| m["id"] == 7)
        .unwrap_or_else(|| panic!("no answer on the stream: {text}"));
    assert_stuck_timed_out(answer, waited);
    task.abort();
}

/// The same answered as one JSON body: the POST gets the timeout result on
/// time, though the handler's thread is still stuck.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_that_blocks_its_thread_is_answered_in_json_on_time() {
    let (url, task) = stuck_server(ResponseMode::Json).await;
    let http = Client::new();
    let sid = http_session::initialize(&http, &url, json!({})).await;

    let start = std::time::Instant::now();
    let call = json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"stuck","arguments":{}}});
    let r = tokio::time::timeout(
        Duration::from_secs(2),
        http_session::post(&http, &url, Some(&sid), &call).send(),
    )
    .await
    .expect("the call is answered on time")
    .unwrap();
    assert_eq!(r.headers()["content-type"], "application/json");
    let answer: Value = r.json().await.unwrap();
    assert_stuck_timed_out(&answer, start.elapsed());
    task.abort();
}
