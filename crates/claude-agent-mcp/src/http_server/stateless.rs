//! POSTs of the stateless revision (2026-07-28): no session, the
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`
//! headers checked against the body (400 with `-32020` when they disagree),
//! and errors mapped to HTTP statuses (`-32601` 404; `_meta`, header,
//! version and capability errors 400).
//!
//! A request is answered with one JSON body unless something (a progress or
//! log notification, the `subscriptions/listen` acknowledgement) comes
//! before its result: then with a `text/event-stream` that carries those
//! messages and ends with the result. `subscriptions/listen` streams until
//! the client disconnects; the request's handler is dropped then.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::Shared;
use super::guard::{self, error};
use crate::jsonrpc::{self, Kind};
use crate::server::stateless::{
    HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION,
    validate_meta,
};
use crate::server::{RequestContext, ResponseStream};
use crate::types::{PROTOCOL_VERSION_META, SUPPORTED_PROTOCOL_VERSIONS};

const X_MCP_HEADER: &str = "x-mcp-header";

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .map(|v| v.to_str().unwrap_or("\u{fffd}").trim())
}

fn body_version(message: &Value) -> Option<&str> {
    message
        .pointer("/params/_meta")?
        .get(PROTOCOL_VERSION_META)?
        .as_str()
}

/// Whether a POST without a session is one of the stateless revision: its
/// `MCP-Protocol-Version` is no session-based revision, or it has none and
/// its body carries the stateless `_meta`, or it is `server/discover`.
pub(crate) fn is_stateless(headers: &HeaderMap, message: &Value) -> bool {
    match header(headers, "mcp-protocol-version") {
        Some(v) => !SUPPORTED_PROTOCOL_VERSIONS.contains(&v),
        None => {
            body_version(message).is_some()
                || message.get("method").and_then(Value::as_str) == Some("server/discover")
        }
    }
}

fn mismatch(id: &Value, message: impl Into<String>) -> Response {
    error(StatusCode::BAD_REQUEST, id, HEADER_MISMATCH, message)
}

/// The HTTP status of a stateless request's JSON-RPC reply.
fn status_of(reply: &Value) -> StatusCode {
    match reply.pointer("/error/code").and_then(Value::as_i64) {
        Some(jsonrpc::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(
            HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION,
        ) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// Decodes a `Mcp-Param-*` value: `=?base64?…?=` is strict base64 of
/// UTF-8 text, anything else literal. `None` when it does not decode.
pub(crate) fn decode_header_value(value: &str) -> Option<String> {
    let value = value.trim_matches([' ', '\t']);
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(encoded) => String::from_utf8(base64_decode(encoded)?).ok(),
        None => Some(value.to_owned()),
    }
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    fn sextet(c: u8) -> Option<u32> {
        Some(u32::from(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        }))
    }
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let chunks = bytes.len() / 4;
    for (i, chunk) in bytes.chunks(4).enumerate() {
        let pad = chunk.iter().rev().take_while(|&&b| b == b'=').count();
        if pad > 2 || (pad > 0 && i + 1 != chunks) {
            return None;
        }
        let mut n = 0u32;
        for (j, &b) in chunk.iter().enumerate() {
            let v = if j >= 4 - pad { 0 } else { sextet(b)? };
            n |= v << (18 - 6 * j);
        }
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Some(out)
}

/// A value of the body as a header would carry it.
fn render(value: &Value) -> Option<String> {
    match value {
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// `Mcp-Method` and `Mcp-Name` must match the body.
fn check_standard_headers(headers: &HeaderMap, message: &Value) -> Result<(), String> {
    let method = message.get("method").and_then(Value::as_str).unwrap_or("");
    match header(headers, "mcp-method") {
        Some(h) if h == method => {}
        Some(h) => {
            return Err(format!(
                "Mcp-Method header {h:?} does not match the body's method {method:?}"
            ));
        }
        None => return Err("the Mcp-Method header is required".into()),
    }
    let name_field = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(field) = name_field {
        let body = message
            .pointer(&format!("/params/{field}"))
            .and_then(Value::as_str);
        match (header(headers, "mcp-name"), body) {
            (Some(h), Some(b)) if h == b => {}
            (Some(h), Some(b)) => {
                return Err(format!(
                    "Mcp-Name header {h:?} does not match the body's {field} {b:?}"
                ));
            }
            (None, Some(_)) => return Err(format!("{method} needs an Mcp-Name header")),
            (_, None) => {}
        }
    }
    Ok(())
}

/// The `x-mcp-header` annotations of a tool's input schema (top-level
/// properties and nested ones): (property path, header name).
fn annotations(schema: &Value) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let mut stack: Vec<(Vec<String>, &Value)> = vec![(Vec::new(), schema)];
    while let Some((path, node)) = stack.pop() {
        if !path.is_empty()
            && let Some(name) = node.get(X_MCP_HEADER).and_then(Value::as_str)
        {
            out.push((path.clone(), name.to_owned()));
        }
        if let Some(Value::Object(props)) = node.get("properties") {
            for (key, sub) in props {
                let mut p = path.clone();
                p.push(key.clone());
                stack.push((p, sub));
            }
        }
    }
    out
}

/// The input schema of tool `name`, from the handler's `tools/list`.
async fn tool_schema(shared: &Shared, name: &str, meta: &Value) -> Option<Value> {
    let mut cursor: Option<Value> = None;
    for page in 0..1000 {
        let mut params = json!({"_meta": meta});
        if let Some(c) = cursor.take() {
            params["cursor"] = c;
        }
        let list = json!({"jsonrpc":"2.0","id":format!("mcp-param-{page}"),"method":"tools/list","params":params});
        let reply = shared.handler.handle(list, RequestContext::new()).await?;
        let result = reply.get("result")?;
        if let Some(tool) = result
            .get("tools")?
            .as_array()?
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
        {
            return tool.get("inputSchema").cloned();
        }
        cursor = Some(result.get("nextCursor")?.clone());
    }
    None
}

/// `Mcp-Param-<Name>` headers of a `tools/call` must match the annotated
/// arguments: present exactly when the argument is, with its value.
async fn check_param_headers(
    shared: &Shared,
    headers: &HeaderMap,
    message: &Value,
) -> Result<(), String> {
    let Some(params) = message.get("params") else {
        return Ok(());
    };
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Ok(());
    };
    let meta = params.get("_meta").cloned().unwrap_or(Value::Null);
    let Some(schema) = tool_schema(shared, name, &meta).await else {
        return Ok(()); // an unknown tool: the server says so
    };
    let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
    for (path, header_name) in annotations(&schema) {
        let value = path
            .iter()
            .try_fold(&arguments, |node, key| node.get(key))
            .and_then(render);
        let given = header(headers, &format!("mcp-param-{header_name}"));
        match (given, value) {
            (None, None) => {}
            (Some(_), None) => {
                return Err(format!(
                    "Mcp-Param-{header_name} is set but the argument is absent"
                ));
            }
            (None, Some(_)) => {
                return Err(format!(
                    "the argument {:?} needs an Mcp-Param-{header_name} header",
                    path.join(".")
                ));
            }
            (Some(raw), Some(value)) => match decode_header_value(raw) {
                None => return Err(format!("Mcp-Param-{header_name} is not valid base64")),
                Some(decoded) if decoded == value => {}
                Some(_) => {
                    return Err(format!(
                        "Mcp-Param-{header_name} does not match the argument {:?}",
                        path.join(".")
                    ));
                }
            },
        }
    }
    Ok(())
}

/// Serves one stateless POST (its body already parsed and checked to be a
/// single request or notification).
pub(crate) async fn post(shared: &Arc<Shared>, headers: &HeaderMap, message: Value) -> Response {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let kind = jsonrpc::kind(&message);

    // The version header and the body must agree.
    let body_version = body_version(&message);
    match (header(headers, "mcp-protocol-version"), body_version) {
        (Some(h), Some(b)) if h != b => {
            return mismatch(
                &id,
                format!("MCP-Protocol-Version header {h:?} does not match _meta's {b:?}"),
            );
        }
        (None, Some(_)) => {
            return mismatch(&id, "the MCP-Protocol-Version header is required");
        }
        _ => {}
    }
    if kind == Kind::Request {
        let meta = message.pointer("/params/_meta").and_then(Value::as_object);
        if let Err(e) = validate_meta(meta) {
            return json_reply(StatusCode::BAD_REQUEST, jsonrpc::error_response(&id, e));
        }
        if let Err(why) = check_standard_headers(headers, &message) {
            return mismatch(&id, format!("Bad Request: {why}"));
        }
        if message.get("method").and_then(Value::as_str) == Some("tools/call")
            && let Err(why) = check_param_headers(shared, headers, &message).await
        {
            return mismatch(&id, format!("Bad Request: {why}"));
        }
    }
    if kind != Kind::Request {
        let _ = shared.handler.handle(message, RequestContext::new()).await;
        return StatusCode::ACCEPTED.into_response();
    }

    let sse = guard::accepts(headers, "text/event-stream");
    let (tx, mut rx) = mpsc::channel::<Frame>(NOTES_IN_FLIGHT);
    let stream = Arc::new(ChannelStream {
        tx: tx.clone(),
        dropped: AtomicBool::new(false),
    });
    let ctx = if sse {
        RequestContext::new().with_response_stream(stream)
    } else {
        RequestContext::new()
    };
    let handler = Arc::clone(&shared.handler);
    tokio::spawn(async move {
        tokio::select! {
            reply = handler.handle(message, ctx) => {
                // Waits for room (or for the client to go): never lost.
                let _ = tx.send(Frame::Final(reply.unwrap_or(Value::Null))).await;
            }
            () = tx.closed() => {} // the client went away
        }
    });
    let first = loop {
        match rx.recv().await {
            Some(Frame::Final(reply)) => return json_reply(status_of(&reply), reply),
            Some(Frame::Note(note)) if sse => break note,
            Some(Frame::Note(_)) => {}
            None => return StatusCode::ACCEPTED.into_response(),
        }
    };
    let keep_alive = shared.config.keep_alive;
    let events = futures::stream::unfold(
        (Some(first), rx, false),
        move |(first, mut rx, done)| async move {
            if done {
                return None;
            }
            if let Some(first) = first {
                return Some((Ok::<Bytes, Infallible>(event(&first)), (None, rx, false)));
            }
            match tokio::time::timeout(keep_alive, rx.recv()).await {
                Err(_) => Some((
                    Ok(Bytes::from_static(b": keep-alive\n\n")),
                    (None, rx, false),
                )),
                Ok(None) => None,
                Ok(Some(Frame::Note(m))) => Some((Ok(event(&m)), (None, rx, false))),
                Ok(Some(Frame::Final(m))) => Some((Ok(event(&m)), (None, rx, true))),
            }
        },
    );
    let mut response = Response::new(Body::from_stream(events.boxed()));
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn event(message: &Value) -> Bytes {
    Bytes::from(format!("event: message\ndata: {message}\n\n"))
}

fn json_reply(status: StatusCode, reply: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        reply.to_string(),
    )
        .into_response()
}

enum Frame {
    Note(Value),
    Final(Value),
}

/// Messages sent ahead of a stateless request's reply that wait for a slow
/// client; past this, further ones are dropped (there is no resumption to
/// keep them for) rather than buffered without bound.
const NOTES_IN_FLIGHT: usize = 1024;

/// The stream of one stateless request.
struct ChannelStream {
    tx: mpsc::Sender<Frame>,
    /// Whether a message was dropped already (warn once).
    dropped: AtomicBool,
}

impl ResponseStream for ChannelStream {
    fn send(&self, message: Value) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.tx.try_send(Frame::Note(message))
            && !self.dropped.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                "a stateless SSE client is not reading; messages sent before the reply are \
                 dropped until it catches up"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_decode() {
        assert_eq!(decode_header_value("=?base64?SGVsbG8=?=").unwrap(), "Hello");
        assert_eq!(decode_header_value("  plain ").unwrap(), "plain");
        assert_eq!(decode_header_value("=?base64?w6k=?=").unwrap(), "é");
        assert!(decode_header_value("=?base64?SGVsbG8?=").is_none());
        assert!(decode_header_value("=?base64?SGVs!!!bG8=?=").is_none());
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8=").unwrap(),
            "=?base64?SGVsbG8="
        );
        assert_eq!(base64_decode("").unwrap(), b"");
        assert_eq!(base64_decode("YQ==").unwrap(), b"a");
        assert_eq!(base64_decode("YWI=").unwrap(), b"ab");
        assert!(base64_decode("YQ==YQ==").is_none());
    }

    #[test]
    fn annotations_follow_properties() {
        let schema = json!({"type":"object","properties":{
            "a":{"type":"string","x-mcp-header":"A"},
            "b":{"type":"object","properties":{"c":{"type":"number","x-mcp-header":"C"}}}}});
        let mut found = annotations(&schema);
        found.sort();
        assert_eq!(
            found,
            vec![
                (vec!["a".to_owned()], "A".to_owned()),
                (vec!["b".to_owned(), "c".to_owned()], "C".to_owned())
            ]
        );
    }
}
