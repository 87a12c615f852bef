//! The HTTP side of the mock: the axum routes, their handlers, and the responses
//! (JSON, SSE, Anthropic-shaped errors) they send.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;
use axum::routing::any;
use serde_json::{Value, json};

use super::render::{error_body, estimate_tokens, new_id, render_reply, sse_frame};
use super::request::{Answer, RequestKind};
use super::script::{MockServer, resolve_dynamic};
use super::turn::{ApiError, Block, Turn, TurnKind};

/// Largest request body accepted (the real API's limit is 32 MB; the CLI can send more
/// when tool results are huge, and tests of that should see the CLI's behaviour, not ours).
const BODY_LIMIT: usize = 256 * 1024 * 1024;

/// The routes of the mock (see the [module docs](super)).
pub(super) fn router(server: Arc<MockServer>) -> Router {
    Router::new()
        .route("/v1/messages", any(messages))
        .route("/v1/messages/count_tokens", any(count_tokens))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(server)
}

/// `/v1/messages`: records the request, chooses its turn, waits the turn's delay and
/// answers (an error, a JSON message, or an SSE stream).
async fn messages(
    State(server): State<Arc<MockServer>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut req = server.new_request(RequestKind::Other, &method, &uri, &headers, &body);
    if method != Method::POST {
        let index = server.record(req);
        return rejected(
            &server,
            index,
            405,
            "invalid_request_error",
            format!("Method {method} not allowed for /v1/messages"),
        );
    }
    if !req.body.is_object() {
        let index = server.record(req);
        return rejected(
            &server,
            index,
            400,
            "invalid_request_error",
            "request body is not a JSON object".to_owned(),
        );
    }
    req.kind = match (server.classifier)(&req) {
        RequestKind::Conversation => RequestKind::Conversation,
        _ => RequestKind::SideCall,
    };
    let kind = req.kind;
    let model = req.model().unwrap_or("claude-mock").to_owned();
    let streaming = req.is_streaming();
    let snapshot = req.clone();
    let index = server.record(req);

    let mut choice = server.choose(kind, &snapshot.body);
    choice.turn = resolve_dynamic(choice.turn, &snapshot);
    server.set_answer(index, &choice.answer);
    let mut guard = DisconnectGuard {
        server: &server,
        index,
        armed: true,
    };
    server.remember_failure(kind, &snapshot.body, &choice);

    let turn = choice.turn;
    let paused = pause(&server, turn.delay).await;
    guard.armed = false;
    if !paused {
        return rejected(
            &server,
            index,
            503,
            "api_error",
            "mock model shut down".to_owned(),
        );
    }

    let input_tokens = server
        .input_tokens
        .unwrap_or_else(|| estimate_tokens(char_count(&body)));
    match &turn.kind {
        TurnKind::Error { error, .. } => {
            let (status, body, resp) = error_turn_response(error, &turn.headers);
            server.finish(index, choice.answer, status, body);
            resp
        }
        TurnKind::Reply { blocks, .. } => reply(
            &server,
            index,
            choice.answer,
            &turn,
            blocks,
            Rendering {
                model: &model,
                input_tokens,
                streaming,
            },
        ),
        TurnKind::Dynamic(_) => unreachable!("dynamic turns are resolved above"),
    }
}

/// What a reply is rendered with.
struct Rendering<'a> {
    model: &'a str,
    input_tokens: u64,
    streaming: bool,
}

/// A reply turn: the message as JSON, or streamed as SSE events (spaced by the turn's
/// event interval, cut short when the mock shuts down).
fn reply(
    server: &MockServer,
    index: usize,
    answer: Answer,
    turn: &Turn,
    blocks: &[Block],
    how: Rendering<'_>,
) -> Response {
    let stop = turn.stop_reason().unwrap_or("end_turn");
    let rendered = render_reply(blocks, stop, how.model, how.input_tokens);
    let request_id = new_id("req_");
    server.finish(index, answer, 200, rendered.message.clone());
    if !how.streaming {
        return json_response(200, &request_id, &rendered.message, &turn.headers);
    }
    let frames: Vec<Bytes> = rendered
        .events
        .iter()
        .map(|(name, data)| Bytes::from(sse_frame(name, data)))
        .collect();
    let interval = turn.event_interval;
    let token = server.shutdown.clone();
    let stream = futures::stream::unfold((frames.into_iter(), true), move |(mut frames, first)| {
        let token = token.clone();
        async move {
            let frame = frames.next()?;
            if !first && !interval.is_zero() {
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = token.cancelled() => return None,
                }
            }
            Some((Ok::<Bytes, std::io::Error>(frame), (frames, false)))
        }
    });
    let mut resp = Response::new(Body::from_stream(stream));
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    add_headers(h, &request_id, &turn.headers);
    resp
}

/// `/v1/messages/count_tokens`: an estimate from the body's length.
async fn count_tokens(
    State(server): State<Arc<MockServer>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let req = server.new_request(RequestKind::CountTokens, &method, &uri, &headers, &body);
    let ok = method == Method::POST && req.body.is_object();
    let index = server.record(req);
    if !ok {
        return rejected(
            &server,
            index,
            400,
            "invalid_request_error",
            "count_tokens expects a POST with a JSON object body".to_owned(),
        );
    }
    let response = json!({"input_tokens": estimate_tokens(char_count(&body))});
    server.finish(index, Answer::CountTokens, 200, response.clone());
    json_response(200, &new_id("req_"), &response, &[])
}

/// Any other path: 404 with Anthropic's error shape.
async fn not_found(
    State(server): State<Arc<MockServer>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let req = server.new_request(RequestKind::Other, &method, &uri, &headers, &body);
    let index = server.record(req);
    rejected(
        &server,
        index,
        404,
        "not_found_error",
        format!("Not found: {method} {}", uri.path()),
    )
}

fn char_count(body: &Bytes) -> usize {
    std::str::from_utf8(body)
        .map(|s| s.chars().count())
        .unwrap_or(body.len())
}

fn json_response(
    status: u16,
    request_id: &str,
    body: &Value,
    extra: &[(String, String)],
) -> Response {
    let mut resp = Response::new(Body::from(body.to_string()));
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    add_headers(h, request_id, extra);
    resp
}

fn add_headers(h: &mut HeaderMap, request_id: &str, extra: &[(String, String)]) {
    if let Ok(v) = HeaderValue::from_str(request_id) {
        h.insert("request-id", v);
    }
    for (k, v) in extra {
        if let (Ok(k), Ok(v)) = (
            header::HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_str(v),
        ) {
            h.append(k, v);
        }
    }
}

fn error_turn_response(error: &ApiError, extra: &[(String, String)]) -> (u16, Value, Response) {
    let request_id = new_id("req_");
    let body = error_body(error, &request_id);
    let resp = json_response(error.status, &request_id, &body, extra);
    (error.status, body, resp)
}

/// Answers a request the mock did not understand (or could not serve) with an error.
fn rejected(
    server: &MockServer,
    index: usize,
    status: u16,
    error_type: &str,
    message: String,
) -> Response {
    let error = ApiError {
        status,
        error_type: error_type.to_owned(),
        message,
    };
    let (status, body, resp) = error_turn_response(&error, &[]);
    server.finish(index, Answer::Rejected, status, body);
    resp
}

/// Marks the request as abandoned by the client if the handler is dropped (the client
/// disconnected) while the reply is delayed.
struct DisconnectGuard<'a> {
    server: &'a MockServer,
    index: usize,
    armed: bool,
}

impl Drop for DisconnectGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.server.disconnected(self.index);
        }
    }
}

/// Sleeps unless the mock shuts down first; `false` if it did.
async fn pause(server: &MockServer, d: Duration) -> bool {
    if d.is_zero() {
        return true;
    }
    tokio::select! {
        _ = tokio::time::sleep(d) => true,
        _ = server.shutdown.cancelled() => false,
    }
}
