//! What the integration tests share: JSON-RPC messages and replies (here),
//! the demo calculator (`calc`, also served by the `stdio_server` example),
//! the binaries and third-party peers the tests run (`peers`, `peer_checks`),
//! raw wire access to a served handler (`wire`), scripted HTTP servers
//! (`fault_http`, `http_session`) and the server the TypeScript SDK client
//! drives (`interop_server`); the log of a test's thread (`logs`) and,
//! with the feature `opentelemetry`, its spans (`otel`).

pub mod calc;
#[cfg(feature = "http-client")]
pub mod fault_http;
#[cfg(feature = "http-server")]
pub mod http_session;
#[cfg(feature = "http-server")]
pub mod interop_server;
pub mod logs;
#[cfg(feature = "opentelemetry")]
pub mod otel;
#[cfg(feature = "http-client")]
pub mod peer_checks;
pub mod peers;
pub mod wire;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use claude_code_agent_mcp::{RequestContext, Server, Session};
use serde_json::{Value, json};

/// Sets its flag when dropped before it was disarmed ([`finished`](Self::finished)):
/// a tool handler dropped mid-call (cancelled).
pub struct Unfinished(pub Option<Arc<AtomicBool>>);

impl Unfinished {
    pub fn finished(&mut self) {
        self.0 = None;
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some(flag) = self.0.take() {
            flag.store(true, Ordering::SeqCst);
        }
    }
}

/// `stuck`: a tool whose handler blocks its thread for 2.5 s, with a
/// timeout of 300 ms (what a handler must not do: see docs/mcp-servers.md).
#[cfg(feature = "http-server")]
pub fn stuck_tool() -> claude_code_agent_mcp::Tool {
    claude_code_agent_mcp::Tool::new("stuck", "blocks its thread", |_: Value| async move {
        std::thread::sleep(std::time::Duration::from_millis(2500));
        "blocked"
    })
    .input_schema(json!({"type":"object"}))
    .timeout(std::time::Duration::from_millis(300))
}

/// A JSON-RPC request.
pub fn req(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id.into(),"method":method,"params":params})
}

/// A `tools/call` request.
pub fn call(id: impl Into<Value>, tool: &str, arguments: Value) -> Value {
    req(id, "tools/call", json!({"name":tool,"arguments":arguments}))
}

/// Sends a message without a session and returns the reply.
pub async fn send(server: &Server, message: Value) -> Option<Value> {
    server.handle(message, RequestContext::new()).await
}

/// Sends a request without a session; panics if there is no reply.
pub async fn ask(server: &Server, message: Value) -> Value {
    send(server, message).await.expect("a request gets a reply")
}

/// The `result` of a reply, checking the envelope.
pub fn result(reply: &Value) -> &Value {
    assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
    assert!(reply.get("error").is_none(), "unexpected error: {reply}");
    &reply["result"]
}

/// The error `code` of a reply.
pub fn error_code(reply: &Value) -> i64 {
    assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
    reply["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error reply: {reply}"))
}

/// The concatenated text of a `tools/call` result.
pub fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content: {result}"))
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect()
}

/// A session that records what the server sends on its own.
pub fn recording_session() -> (Session, Arc<Mutex<Vec<Value>>>) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&sent);
    let session = Session::with_notifier(move |m| sink.lock().unwrap().push(m));
    (session, sent)
}

/// The `initialize` request the Claude Code CLI sends.
pub fn cli_initialize(id: i64, version: &str) -> Value {
    req(
        id,
        "initialize",
        json!({"protocolVersion":version,"capabilities":{},
               "clientInfo":{"name":"claude-code","version":"2.1.332"}}),
    )
}
