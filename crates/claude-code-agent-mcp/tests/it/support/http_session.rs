//! A raw Streamable HTTP client for the server tests: POSTs with the
//! headers of a 2025-11-25 session, and the handshake that opens one.

use reqwest::{Client, RequestBuilder, StatusCode};
use serde_json::{Value, json};

/// A POST of `body` to `url`, accepting JSON or SSE; with `session`, its
/// `Mcp-Session-Id` and the negotiated `MCP-Protocol-Version`.
pub fn post(http: &Client, url: &str, session: Option<&str>, body: &Value) -> RequestBuilder {
    let mut r = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(s) = session {
        r = r
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", "2025-11-25");
    }
    r
}

/// A GET of `session`'s stream at `url` (resuming after `last_event_id`).
pub fn get(http: &Client, url: &str, session: &str, last_event_id: Option<&str>) -> RequestBuilder {
    let r = http
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25");
    match last_event_id {
        Some(id) => r.header("last-event-id", id),
        None => r,
    }
}

/// `initialize` (declaring `capabilities`) and `notifications/initialized`;
/// checks the answers and returns the session id.
pub async fn initialize(http: &Client, url: &str, capabilities: Value) -> String {
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",
        "capabilities":capabilities,"clientInfo":{"name":"t","version":"1"}}});
    let r = post(http, url, None, &init).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    assert_eq!(sid.len(), 32, "128 random bits in hex");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let r = post(http, url, Some(&sid), &note).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    sid
}
