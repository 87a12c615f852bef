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
use serde_json::Value;
use tokio::sync::mpsc;

use super::EndpointState;
use super::guard::{self, error};
use crate::jsonrpc::{self, Kind};
use crate::server::stateless::{
    HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION,
    validate_meta,
};
use crate::server::{AccessToken, RequestContext, ResponseStream, answer, watchdog, watched};
use crate::transport::mcp_headers;
use crate::types::{PROTOCOL_VERSION_META, SESSION_PROTOCOL_VERSIONS};

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .map(|v| v.to_str().unwrap_or("\u{fffd}").trim())
}

fn body_version(message: &Value) -> Option<&str> {
    crate::jsonrpc::at(message, &["params", "_meta"])?
        .get(PROTOCOL_VERSION_META)?
        .as_str()
}

/// Whether a POST without a session is one of the stateless revision: its
/// `MCP-Protocol-Version` is no session-based revision, or it has none and
/// its body carries the stateless `_meta`, or it is `server/discover`.
pub(crate) fn is_stateless(headers: &HeaderMap, message: &Value) -> bool {
    match header(headers, "mcp-protocol-version") {
        Some(v) => !SESSION_PROTOCOL_VERSIONS.contains(&v),
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
    match crate::jsonrpc::at(reply, &["error", "code"]).and_then(Value::as_i64) {
        Some(jsonrpc::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(
            HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION,
        ) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
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
    if let Some(field) = mcp_headers::name_field(method) {
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

/// `Mcp-Param-<Name>` headers of a `tools/call` must match the annotated
/// arguments (see [`mcp_headers::check_param_headers`]). The tool's schema
/// comes from [`Handler::tool_info`](crate::server::Handler::tool_info); a
/// handler that cannot say (or an unknown tool, which the server then
/// refuses) has nothing to check.
fn check_param_headers(
    state: &EndpointState,
    headers: &HeaderMap,
    message: &Value,
) -> Result<(), String> {
    let Some(params) = message.get("params") else {
        return Ok(());
    };
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Ok(());
    };
    let Some(tool) = state.handler.tool_info(name) else {
        return Ok(());
    };
    let arguments = params.get("arguments").unwrap_or(&Value::Null);
    mcp_headers::check_param_headers(
        &mcp_headers::annotations(&tool.input_schema),
        arguments,
        |name| header(headers, name),
    )
}

/// Serves one stateless POST (its body already parsed and checked to be a
/// single request or notification).
pub(crate) async fn post(
    shared: &Arc<EndpointState>,
    headers: &HeaderMap,
    message: Value,
    access: Option<&Arc<AccessToken>>,
) -> Response {
    let context = || {
        let ctx = shared
            .config
            .with_task_store(RequestContext::new())
            .with_trace_headers(headers);
        match access {
            Some(token) => ctx.with_access_token(Arc::clone(token)),
            None => ctx,
        }
    };
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
        let meta = crate::jsonrpc::at(&message, &["params", "_meta"]).and_then(Value::as_object);
        if let Err(e) = validate_meta(meta) {
            return json_reply(StatusCode::BAD_REQUEST, jsonrpc::error_response(&id, e));
        }
        if let Err(why) = check_standard_headers(headers, &message) {
            return mismatch(&id, format!("Bad Request: {why}"));
        }
        if message.get("method").and_then(Value::as_str) == Some("tools/call")
            && let Err(why) = check_param_headers(shared, headers, &message)
        {
            return mismatch(&id, format!("Bad Request: {why}"));
        }
    }
    if kind != Kind::Request {
        let _ = answer(shared.handler.as_ref(), message, context()).await;
        return StatusCode::ACCEPTED.into_response();
    }

    let sse = guard::accepts(headers, "text/event-stream");
    let (tx, mut rx) = mpsc::channel::<Frame>(NOTES_IN_FLIGHT);
    let stream = Arc::new(ChannelStream {
        tx: tx.clone(),
        dropped: AtomicBool::new(false),
    });
    let ctx = if sse {
        context().with_response_stream(stream)
    } else {
        context()
    };
    let handler = Arc::clone(&shared.handler);
    let watched = message.get("method").and_then(Value::as_str) == Some("tools/call")
        && watchdog::can_watch();
    // Running until answered (a graceful drain waits for it).
    let running = shared.drain.running();
    tokio::spawn(async move {
        let _running = running;
        let reply = async move {
            if watched {
                // A handler that blocks its thread is answered on time all
                // the same (server/watchdog.rs).
                watched::answer_watched(handler, message, ctx).await
            } else {
                answer(handler.as_ref(), message, ctx).await
            }
        };
        tokio::select! {
            reply = reply => {
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
