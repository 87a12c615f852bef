//! The stateless revision (2026-07-28) over Streamable HTTP on 127.0.0.1:
//! no session, the `Mcp-*` headers checked against the body, HTTP statuses,
//! SSE only when something precedes the result, `subscriptions/listen`.

use std::time::Duration;

use claude_code_agent_mcp::http_server::{StreamableHttpConfig, StreamableHttpService};
use claude_code_agent_mcp::types::SERVER_INFO_META;
use claude_code_agent_mcp::{Server, Tool, ToolContext};
use reqwest::{Client, RequestBuilder, StatusCode};
use serde_json::{Value, json};

const V: &str = "2026-07-28";

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

async fn start() -> Running {
    let server = Server::builder("stateless-http", "1")
        .tool(
            Tool::new(
                "echo",
                "echoes its value, mirrored in Mcp-Param-Value",
                |args: Value| async move { args["value"].as_str().unwrap_or("-").to_owned() },
            )
            .input_schema(json!({"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Value"}}})),
        )
        .tool(
            Tool::new(
                "slow",
                "reports progress",
                |_: Value, ctx: ToolContext| async move {
                    ctx.progress(1.0, Some(2.0), None);
                    "done"
                },
            )
            .input_schema(json!({"type":"object"})),
        )
        .tool(
            crate::support::stuck_tool(),
        )
        .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let service = StreamableHttpService::new(server.clone(), StreamableHttpConfig::default());
    let task = tokio::spawn(async move {
        let _ = service.serve(listener).await;
    });
    Running {
        url,
        server,
        http: Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap(),
        task,
    }
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": V,
           "io.modelcontextprotocol/clientCapabilities": {}})
}

fn body(method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    json!({"jsonrpc":"2.0","id":1,"method":method,"params":params})
}

/// A POST with the headers a 2026-07-28 client sends (`Mcp-Name` added by the caller).
fn post(r: &Running, message: &Value) -> RequestBuilder {
    post_as(r, message, V, message["method"].as_str().unwrap())
}

/// A POST with this `MCP-Protocol-Version` and `Mcp-Method`.
fn post_as(r: &Running, message: &Value, version: &str, method: &str) -> RequestBuilder {
    r.http
        .post(&r.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", version)
        .header("mcp-method", method)
        .body(message.to_string())
}

async fn json_of(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    let text = response.text().await.unwrap();
    let value = serde_json::from_str(&text).unwrap_or_else(|_| {
        // An SSE body: the last data line is the reply.
        let last = text
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap_or("null");
        serde_json::from_str(last).unwrap()
    });
    (status, value)
}

#[tokio::test]
async fn requests_are_served_without_a_session() {
    let r = start().await;
    let m = body("server/discover", json!({}));
    let resp = post(&r, &m).send().await.unwrap();
    assert!(resp.headers().get("mcp-session-id").is_none());
    let (status, v) = json_of(resp).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["result"]["serverInfo"]["name"], "stateless-http");

    let m = body(
        "tools/call",
        json!({"name":"echo","arguments":{"value":"hi"}}),
    );
    let resp = post(&r, &m)
        .header("mcp-name", "echo")
        .header("mcp-param-value", "hi")
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.headers()["content-type"],
        "application/json",
        "nothing precedes the result: one JSON body"
    );
    let (status, v) = json_of(resp).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["result"]["content"][0]["text"], "hi");
    assert_eq!(r.server.tool_names().len(), 3);
}

/// A tool call whose handler blocks its thread past its timeout is answered
/// on time with its timeout result, though the thread is still stuck.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_that_blocks_its_thread_is_answered_on_time() {
    let r = start().await;
    let m = body("tools/call", json!({"name":"stuck","arguments":{}}));
    let start = std::time::Instant::now();
    let resp = tokio::time::timeout(
        Duration::from_secs(2),
        post(&r, &m).header("mcp-name", "stuck").send(),
    )
    .await
    .expect("the call is answered on time")
    .unwrap();
    let (status, v) = json_of(resp).await;
    let waited = start.elapsed();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["result"]["isError"], true, "{v}");
    let said = v["result"]["content"][0]["text"].as_str().unwrap();
    assert!(said.contains("timed out after 300ms"), "{said}");
    // The watchdog's answer is the call's: with the revision's fields.
    assert_eq!(v["result"]["resultType"], "complete", "{v}");
    assert!(
        v["result"]["_meta"][SERVER_INFO_META]["name"].is_string(),
        "{v}"
    );
    // The timeout (300 ms) and the watchdog's grace (100 ms), well before
    // the thread is free (2.5 s).
    assert!(waited < Duration::from_millis(1500), "{waited:?}");
}

#[tokio::test]
async fn progress_makes_an_event_stream() {
    let r = start().await;
    let mut m = body("tools/call", json!({"name":"slow","arguments":{}}));
    m["params"]["_meta"]["progressToken"] = json!("p1");
    let resp = post(&r, &m)
        .header("mcp-name", "slow")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let text = resp.text().await.unwrap();
    let progress = text.find("notifications/progress").unwrap();
    let done = text.find("\"done\"").unwrap();
    assert!(progress < done, "{text}");
}

#[tokio::test]
async fn headers_must_match_the_body() {
    let r = start().await;
    let call = body(
        "tools/call",
        json!({"name":"echo","arguments":{"value":"héllo"}}),
    );
    let cases: Vec<(&str, RequestBuilder)> = vec![
        (
            "Mcp-Method differs",
            post_as(&r, &call, V, "tools/list").header("mcp-name", "echo"),
        ),
        (
            "Mcp-Name missing",
            post(&r, &call).header("mcp-param-value", "=?base64?aMOpbGxv?="),
        ),
        (
            "Mcp-Name differs",
            post(&r, &call)
                .header("mcp-name", "other")
                .header("mcp-param-value", "=?base64?aMOpbGxv?="),
        ),
        (
            "Mcp-Param missing",
            post(&r, &call).header("mcp-name", "echo"),
        ),
        (
            "Mcp-Param differs",
            post(&r, &call)
                .header("mcp-name", "echo")
                .header("mcp-param-value", "hello"),
        ),
        (
            "bad base64",
            post(&r, &call)
                .header("mcp-name", "echo")
                .header("mcp-param-value", "=?base64?aMOpbGxv?"),
        ),
    ];
    for (why, request) in cases {
        let (status, v) = json_of(request.send().await.unwrap()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{why}: {v}");
        assert_eq!(v["error"]["code"], -32020, "{why}");
        assert_eq!(v["id"], 1, "{why}");
    }
    // The base64 form of a non-ASCII value, with surrounding whitespace.
    let (status, v) = json_of(
        post(&r, &call)
            .header("mcp-name", " echo ")
            .header("mcp-param-value", "=?base64?aMOpbGxv?=")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["result"]["content"][0]["text"], "héllo");

    // The version header must match _meta.
    let (status, v) = json_of(
        post_as(
            &r,
            &body("tools/list", json!({})),
            "2025-11-25",
            "tools/list",
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    // 2025-11-25 in the header means a session-based request: it needs a session.
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
}

#[tokio::test]
async fn errors_map_to_http_statuses() {
    let r = start().await;
    let (status, v) = json_of(post(&r, &body("ping", json!({}))).send().await.unwrap()).await;
    assert_eq!(
        (status, v["error"]["code"].clone()),
        (StatusCode::NOT_FOUND, json!(-32601))
    );

    let mut m = body("tools/list", json!({}));
    m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999");
    let (status, v) = json_of(post_as(&r, &m, "v999", "tools/list").send().await.unwrap()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(v["error"]["code"], -32022);
    assert_eq!(v["error"]["data"]["requested"], "v999");

    let (status, v) = json_of(post(&r, &m).send().await.unwrap()).await;
    assert_eq!(
        (status, v["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32020))
    );

    let no_meta = json!({"jsonrpc":"2.0","id":3,"method":"server/discover","params":{}});
    let (status, v) = json_of(post(&r, &no_meta).send().await.unwrap()).await;
    assert_eq!(
        (status, v["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32602))
    );
    assert_eq!(v["id"], 3);
}

#[tokio::test]
async fn listen_streams_list_changes_until_the_client_leaves() {
    let r = start().await;
    let m = body(
        "subscriptions/listen",
        json!({"notifications":{"toolsListChanged":true}}),
    );
    let mut resp = post(&r, &m).send().await.unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let mut seen = String::new();
    let read_until = async |resp: &mut reqwest::Response, seen: &mut String, what: &str| {
        while !seen.contains(what) {
            let chunk = tokio::time::timeout(Duration::from_secs(5), resp.chunk())
                .await
                .expect("a frame in time")
                .unwrap()
                .expect("the stream stays open");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    };
    read_until(
        &mut resp,
        &mut seen,
        "notifications/subscriptions/acknowledged",
    )
    .await;
    r.server.add_tool(
        Tool::new("late", "late", |_: Value| async { "" }).input_schema(json!({"type":"object"})),
    );
    read_until(&mut resp, &mut seen, "notifications/tools/list_changed").await;
    assert!(
        seen.contains("\"io.modelcontextprotocol/subscriptionId\":1"),
        "{seen}"
    );
    drop(resp);
}
