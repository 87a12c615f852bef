//! Raw wire access to a served [`Handler`] for the server-rule tests: the
//! NDJSON end (`serve_lines` over an in-memory pipe) and the Streamable HTTP
//! end (a `StreamableHttpService` on 127.0.0.1, raw POSTs, SSE reading), so
//! a rule can be checked on every transport with the same few lines.

use std::sync::Arc;
use std::time::Duration;

use claude_code_agent_mcp::server::{Handler, serve_lines};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

/// How long a test waits for one message before failing.
pub const WAIT: Duration = Duration::from_secs(10);

/// A connection served by `serve_lines`: write lines, read lines.
pub struct Lines {
    input: DuplexStream,
    output: tokio::io::Lines<BufReader<DuplexStream>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Lines {
    /// Serves `handler` over a fresh in-memory pipe.
    pub fn serve(handler: impl Handler) -> Self {
        let (input, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, output) = tokio::io::duplex(1 << 20);
        let task = tokio::spawn(serve_lines(Arc::new(handler), server_in, server_out));
        Self {
            input,
            output: BufReader::new(output).lines(),
            task,
        }
    }

    /// Writes one message as a line.
    pub async fn send(&mut self, message: &Value) {
        self.send_raw(&format!("{message}\n")).await;
    }

    /// Writes raw text.
    pub async fn send_raw(&mut self, text: &str) {
        self.input.write_all(text.as_bytes()).await.unwrap();
    }

    /// The next message the server writes (within [`WAIT`]).
    pub async fn recv(&mut self) -> Value {
        self.try_recv(WAIT)
            .await
            .expect("a message from the server in time")
    }

    /// The next message within `wait`, or `None`.
    pub async fn try_recv(&mut self, wait: Duration) -> Option<Value> {
        let line = tokio::time::timeout(wait, self.output.next_line())
            .await
            .ok()?
            .unwrap()
            .expect("a message, not the end of the output");
        Some(serde_json::from_str(&line).unwrap())
    }

    /// Messages up to and including the first that `stop` accepts.
    pub async fn until(&mut self, stop: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let m = self
                .try_recv(WAIT)
                .await
                .unwrap_or_else(|| panic!("no matching message in time; saw {seen:?}"));
            let done = stop(&m);
            seen.push(m);
            if done {
                return seen;
            }
        }
    }

    /// `initialize` at `version` declaring `capabilities`, then
    /// `notifications/initialized`; returns the initialize result.
    pub async fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        self.send(&initialize_request(version, capabilities)).await;
        let reply = self.recv().await;
        assert_eq!(reply["id"], "init", "{reply}");
        self.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
            .await;
        reply["result"].clone()
    }

    /// Closes the input and waits for serving to end.
    pub async fn end(mut self) {
        self.input.shutdown().await.unwrap();
        drop(self.input);
        while let Ok(Some(_)) = self.output.next_line().await {}
        tokio::time::timeout(WAIT, self.task)
            .await
            .expect("serving ends with its input")
            .unwrap()
            .unwrap();
    }
}

/// The `initialize` request (id `"init"`) of a client at `version`.
pub fn initialize_request(version: &str, capabilities: Value) -> Value {
    json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
        "protocolVersion":version,"capabilities":capabilities,
        "clientInfo":{"name":"wire-test","version":"1"}}})
}

/// A `tools/call` request.
pub fn call(id: impl Into<Value>, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id.into(),"method":"tools/call",
           "params":{"name":tool,"arguments":arguments}})
}

/// The concatenated text of a reply's `tools/call` result.
pub fn text(reply: &Value) -> String {
    reply["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content: {reply}"))
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect()
}

#[cfg(feature = "http-server")]
#[allow(unused_imports)]
pub use http::*;

#[cfg(feature = "http-server")]
mod http {
    use super::*;
    use claude_code_agent_mcp::http_server::{StreamableHttpConfig, StreamableHttpService};
    use reqwest::{Client, RequestBuilder, StatusCode};

    /// A Streamable HTTP endpoint on 127.0.0.1, stopped on drop.
    pub struct Http {
        pub url: String,
        pub http: Client,
        task: tokio::task::JoinHandle<()>,
    }

    impl Drop for Http {
        fn drop(&mut self) {
            self.task.abort();
        }
    }

    impl Http {
        /// Serves `handler` with `config` on a free port.
        pub async fn serve(handler: impl Handler, config: StreamableHttpConfig) -> Self {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}/mcp", listener.local_addr().unwrap());
            let service = StreamableHttpService::new(handler, config);
            let task = tokio::spawn(async move {
                let _ = service.serve(listener).await;
            });
            Self {
                url,
                http: Client::new(),
                task,
            }
        }

        /// A POST of `body` (any JSON, batches included) accepting JSON or
        /// SSE; with `session`, its id and the protocol `version` headers.
        pub fn post(&self, session: Option<(&str, &str)>, body: &Value) -> RequestBuilder {
            let mut r = self
                .http
                .post(&self.url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(body.to_string());
            if let Some((sid, version)) = session {
                r = r
                    .header("mcp-session-id", sid)
                    .header("mcp-protocol-version", version);
            }
            r
        }

        /// Opens a session at `version` declaring `capabilities`; returns its id.
        pub async fn initialize(&self, version: &str, capabilities: Value) -> String {
            let r = self
                .post(None, &initialize_request(version, capabilities))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::OK);
            let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
            let body: Value = r.json().await.unwrap();
            assert_eq!(body["result"]["protocolVersion"], version, "{body}");
            let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
            let r = self
                .post(Some((&sid, version)), &note)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::ACCEPTED);
            sid
        }

        /// POSTs `body` on a session and reads its answer: the JSON body, or
        /// every message of its SSE stream.
        pub async fn exchange(&self, session: (&str, &str), body: &Value) -> Vec<Value> {
            let r = self.post(Some(session), body).send().await.unwrap();
            messages_of(r).await
        }
    }

    /// The messages of a response: its JSON body, or the data of its SSE events.
    pub async fn messages_of(r: reqwest::Response) -> Vec<Value> {
        let sse = r
            .headers()
            .get("content-type")
            .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
        let body = tokio::time::timeout(WAIT, r.text())
            .await
            .expect("the response ends in time")
            .unwrap();
        if sse {
            sse_messages(&body)
        } else if body.is_empty() {
            Vec::new()
        } else {
            vec![serde_json::from_str(&body).unwrap()]
        }
    }

    /// The JSON messages of an SSE body (events with data only).
    pub fn sse_messages(body: &str) -> Vec<Value> {
        body.split("\n\n")
            .filter_map(|event| event.lines().find_map(|l| l.strip_prefix("data: ")))
            .filter(|d| !d.trim().is_empty())
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    /// Reads SSE events from a streaming response as they arrive.
    pub struct SseReader {
        resp: reqwest::Response,
        buf: String,
    }

    impl SseReader {
        pub fn new(resp: reqwest::Response) -> Self {
            Self {
                resp,
                buf: String::new(),
            }
        }

        /// Messages up to and including the first `stop` accepts.
        pub async fn until(&mut self, stop: impl Fn(&Value) -> bool) -> Vec<Value> {
            let mut seen = Vec::new();
            let deadline = tokio::time::Instant::now() + WAIT;
            loop {
                while let Some(end) = self.buf.find("\n\n") {
                    let event: String = self.buf.drain(..end + 2).collect();
                    for m in sse_messages(&event) {
                        let done = stop(&m);
                        seen.push(m);
                        if done {
                            return seen;
                        }
                    }
                }
                match tokio::time::timeout_at(deadline, self.resp.chunk()).await {
                    Ok(Ok(Some(chunk))) => {
                        self.buf.push_str(std::str::from_utf8(&chunk).unwrap());
                    }
                    other => panic!("stream ended or timed out ({other:?}); saw {seen:?}"),
                }
            }
        }
    }

    /// One SSE event: its id and its JSON message (none for a priming event).
    #[derive(Debug)]
    pub struct Event {
        pub id: Option<String>,
        pub message: Option<Value>,
    }

    /// Reads SSE events, with their ids, off a streaming response.
    pub struct Events {
        resp: reqwest::Response,
        buf: Vec<u8>,
    }

    impl Events {
        pub fn new(resp: reqwest::Response) -> Self {
            assert_eq!(resp.headers()["content-type"], "text/event-stream");
            Self {
                resp,
                buf: Vec::new(),
            }
        }

        /// The next event; `None` when the response ends. Panics when none
        /// comes within twice [`WAIT`].
        pub async fn next(&mut self) -> Option<Event> {
            loop {
                if let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
                    let raw: Vec<u8> = self.buf.drain(..end + 2).collect();
                    let raw = String::from_utf8(raw).unwrap();
                    if raw.starts_with(':') {
                        continue; // keep-alive comment
                    }
                    let field = |name: &str| {
                        raw.lines()
                            .find_map(|l| l.strip_prefix(name))
                            .map(|v| v.trim_start().to_owned())
                    };
                    let message = field("data:")
                        .filter(|d| !d.is_empty())
                        .map(|d| serde_json::from_str(&d).unwrap());
                    return Some(Event {
                        id: field("id:"),
                        message,
                    });
                }
                let chunk = tokio::time::timeout(WAIT * 2, self.resp.chunk())
                    .await
                    .expect("an SSE event in time");
                match chunk {
                    Ok(Some(chunk)) => self.buf.extend_from_slice(&chunk),
                    Ok(None) | Err(_) => return None,
                }
            }
        }
    }
}
