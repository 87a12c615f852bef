//! POST, GET and DELETE on the endpoint.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::Value;

use super::EndpointState;
use super::auth;
use super::config::{ResponseMode, StreamableHttpConfig};
use super::guard::{self, error};
use super::hub::{Hub, Rx};
use super::replica;
use super::sessions::{HttpSession, Owner};
use super::stateless;
use crate::jsonrpc::{self, ErrorObject, Kind};
use crate::server::AccessToken;
use crate::server::watchdog::{self, Watch};
use crate::server::watched;
use crate::server::{RequestContext, ResponseStream, answer};
use crate::transport::budget::Demand;

/// JSON-RPC error code for "no such session" (as the reference SDKs use).
const SESSION_NOT_FOUND: i64 = -32001;
const SESSION_HEADER: &str = "mcp-session-id";

pub(crate) async fn endpoint(
    State(shared): State<Arc<EndpointState>>,
    method: Method,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let config = &shared.config;
    if let Err(refused) = guard::check_host_and_origin(&headers, config) {
        return refused;
    }
    let access = match &config.protected_resource {
        Some(resource) => match auth::authorize(resource, &headers).await {
            Ok(access) => Some(access),
            Err(refused) => return refused,
        },
        None => {
            if let Err(refused) = guard::check_bearer(&headers, config) {
                return refused;
            }
            None
        }
    };
    match method {
        Method::POST => {
            // Running until answered (a graceful drain waits for it).
            let _running = shared.drain.running();
            match read_body(body, config).await {
                Ok(body) => post(&shared, &headers, body, access).await,
                Err(refused) => refused,
            }
        }
        Method::GET => get(&shared, &headers, access.as_ref()).await,
        Method::DELETE => delete(&shared, &headers, access.as_ref()).await,
        _ => {
            let mut r = error(
                StatusCode::METHOD_NOT_ALLOWED,
                &Value::Null,
                jsonrpc::INVALID_REQUEST,
                "Method not allowed",
            );
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
            r
        }
    }
}

/// A request's body, whole: 413 past `max_body_bytes`, 408 when it does not
/// arrive within `request_read_timeout` (a client that stalls mid-body does
/// not hold a request open forever).
async fn read_body(body: Body, config: &StreamableHttpConfig) -> Result<Bytes, Response> {
    use http_body_util::{BodyExt, LengthLimitError, Limited};
    let limited = Limited::new(body, config.max_body_bytes);
    match tokio::time::timeout(config.request_read_timeout, limited.collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => Err(error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &Value::Null,
            jsonrpc::INVALID_REQUEST,
            format!(
                "Payload Too Large: the body exceeds the limit of {} bytes",
                config.max_body_bytes
            ),
        )),
        Ok(Err(e)) => Err(error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            jsonrpc::INVALID_REQUEST,
            format!("Bad Request: reading the body failed: {e}"),
        )),
        Err(_) => Err(error(
            StatusCode::REQUEST_TIMEOUT,
            &Value::Null,
            jsonrpc::INVALID_REQUEST,
            format!(
                "Request Timeout: the body did not arrive within {}",
                crate::server::limits::human(config.request_read_timeout)
            ),
        )),
    }
}

fn session_header(headers: &HeaderMap) -> Option<&str> {
    headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok())
}

/// Who a request's access token speaks for: its subject and its client.
fn owner(access: &AccessToken) -> Owner {
    (
        access.subject().map(str::to_owned),
        access.client_id().map(str::to_owned),
    )
}

/// 503: the service holds as many sessions as it may.
fn too_many_sessions(id: &Value) -> Response {
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        jsonrpc::INTERNAL_ERROR,
        "Too many sessions; try again later",
    )
}

/// 503: the event store failed (`what` needed it). The client is told
/// that much; why (the store's address, its error) goes to the log only.
fn store_failed(id: &Value, what: &str, e: &super::StoreError) -> Response {
    tracing::warn!(error = %auth::chain(e), "MCP HTTP: {what} failed");
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        jsonrpc::INTERNAL_ERROR,
        format!("Service Unavailable: {what} needs the event store, which failed; try again"),
    )
}

/// The session a non-initialize request names: 400 without one, 404 for an
/// unknown or ended one, or for one another token's subject opened. With an
/// event store, a session this replica does not have is taken over from it
/// (503 if the store fails).
async fn existing_session(
    shared: &EndpointState,
    headers: &HeaderMap,
    id: &Value,
    access: Option<&Arc<AccessToken>>,
) -> Result<Arc<HttpSession>, Response> {
    let Some(sid) = session_header(headers) else {
        return Err(error(
            StatusCode::BAD_REQUEST,
            id,
            jsonrpc::INVALID_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        ));
    };
    let not_found = || {
        error(
            StatusCode::NOT_FOUND,
            id,
            SESSION_NOT_FOUND,
            "Session not found",
        )
    };
    let http = match (shared.sessions.get(sid), &shared.config.event_store) {
        (Some(http), None) => http,
        (Some(http), Some(store)) => {
            if !replica::check(shared, store, &http).await {
                // Ended (DELETE) through another replica.
                shared.sessions.remove(sid);
                return Err(not_found());
            }
            http
        }
        (None, None) => return Err(not_found()),
        (None, Some(store)) => match replica::adopt(shared, store, sid).await {
            Ok(replica::Adopted::Session(http)) => http,
            Ok(replica::Adopted::Unknown) => return Err(not_found()),
            Ok(replica::Adopted::Full) => return Err(too_many_sessions(id)),
            Err(e) => return Err(store_failed(id, "taking the session over", &e)),
        },
    };
    match (http.owner.get(), access) {
        (Some(opener), Some(access)) if **opener != owner(access) => {
            tracing::debug!("a session was named with another subject's token");
            Err(not_found())
        }
        _ => Ok(http),
    }
}

/// `GET` of the protected resource's metadata (RFC 9728).
pub(crate) async fn resource_metadata(State(shared): State<Arc<EndpointState>>) -> Response {
    match &shared.config.protected_resource {
        Some(resource) => auth::metadata_response(resource),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// `ctx` with the request's verified access token, if any, the service's
/// event store for its tasks, and the caller's trace context in `headers`.
fn authorized(
    config: &StreamableHttpConfig,
    headers: &HeaderMap,
    ctx: RequestContext,
    access: Option<&Arc<AccessToken>>,
) -> RequestContext {
    let ctx = config.with_task_store(ctx).with_trace_headers(headers);
    match access {
        Some(token) => ctx.with_access_token(Arc::clone(token)),
        None => ctx,
    }
}

async fn post(
    shared: &Arc<EndpointState>,
    headers: &HeaderMap,
    body: Bytes,
    access: Option<Arc<AccessToken>>,
) -> Response {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !content_type
        .to_ascii_lowercase()
        .starts_with("application/json")
    {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            &Value::Null,
            jsonrpc::INVALID_REQUEST,
            "Unsupported Media Type: Content-Type must be application/json",
        );
    }
    if !guard::accepts(headers, "application/json") && !guard::accepts(headers, "text/event-stream")
    {
        return error(
            StatusCode::NOT_ACCEPTABLE,
            &Value::Null,
            jsonrpc::INVALID_REQUEST,
            "Not Acceptable: accept application/json or text/event-stream",
        );
    }
    // Lone surrogate escapes (a string cut mid-emoji by a JavaScript or
    // Python client) decode to U+FFFD; a body that does not decode is
    // answered with the request's id when it shows one.
    let message: Value = match crate::transport::json::from_slice(&body) {
        Ok(m) => m,
        Err(e) => {
            let envelope = crate::transport::json::envelope(&body);
            return error(
                StatusCode::BAD_REQUEST,
                envelope.request_id().unwrap_or(&Value::Null),
                jsonrpc::PARSE_ERROR,
                format!("Parse error: {e}"),
            );
        }
    };
    let kind = jsonrpc::kind(&message);
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    // A tool's own scopes (the body names the tool; at 2026-07-28 so does
    // `Mcp-Name`, which stateless.rs checks against the body).
    if let (Some(resource), Some(access)) = (&shared.config.protected_resource, &access)
        && let Err(refused) = auth::check_tool_scopes(
            resource,
            access,
            &message,
            // Only a request without a session can be of the stateless revision.
            session_header(headers)
                .is_none()
                .then(|| headers.get("mcp-name").and_then(|v| v.to_str().ok()))
                .flatten(),
        )
    {
        return refused;
    }
    let access = access.as_ref();
    if message.is_array() {
        return batch(shared, headers, message, access).await;
    }
    if kind == Kind::Invalid {
        // Let the server word the complaint (it knows what is wrong).
        let ctx = authorized(&shared.config, headers, RequestContext::new(), access);
        let reply = answer(shared.handler.as_ref(), message, ctx).await;
        let reply = reply.unwrap_or_else(|| {
            jsonrpc::error_response(
                &Value::Null,
                ErrorObject::invalid_request("Invalid Request: not a JSON-RPC 2.0 message"),
            )
        });
        return json_reply(StatusCode::BAD_REQUEST, reply, None);
    }
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();

    if session_header(headers).is_none() && stateless::is_stateless(headers, &message) {
        return stateless::post(shared, headers, message, access).await;
    }
    if method == "initialize" && session_header(headers).is_none() {
        return initialize(shared, headers, message, access).await;
    }
    let http = match existing_session(shared, headers, &id, access).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let Err(r) = guard::check_protocol_version(headers, &id) {
        return r;
    }
    let ctx = authorized(
        &shared.config,
        headers,
        RequestContext::with_session(http.session.clone()),
        access,
    );
    if kind != Kind::Request {
        let _ = answer(shared.handler.as_ref(), message, ctx).await;
        return StatusCode::ACCEPTED.into_response();
    }
    // Taken once the session's byte budget has room (hub/).
    let ticket = http.hub.admit(Demand::of(&message, 1)).await;
    drop(body);
    let sse = guard::accepts(headers, "text/event-stream")
        && method != "initialize"
        && match shared.config.response_mode {
            ResponseMode::Json => false,
            ResponseMode::Sse => true,
            ResponseMode::Auto => method == "tools/call",
        };
    // A change to what the session keeps, for its record in the store.
    let change = replica::change(&shared.config, &message);
    if !sse {
        let reply = if method == "tools/call" && watchdog::can_watch() {
            // A handler that blocks its thread is answered on time all the
            // same (server/watchdog.rs).
            watched::answer_watched(Arc::clone(&shared.handler), message, ctx).await
        } else {
            answer(shared.handler.as_ref(), message, ctx).await
        };
        if let Some(change) = change {
            replica::remember(shared, &http, &change, reply.as_ref()).await;
        }
        let reply = reply.unwrap_or(Value::Null);
        let body = http.hub.json(&reply, Some(ticket));
        drop(reply);
        return json_body(StatusCode::OK, body, None);
    }
    let (stream, rx) = match &shared.config.event_store {
        None => http.hub.open(http.priming()),
        Some(store) => match replica::open(shared, store, &http, Some(id.clone())).await {
            Ok(opened) => opened,
            Err(e) => return store_failed(&id, "a streamed answer", &e),
        },
    };
    let mut stream_ctx = ctx.with_response_stream(Arc::new(PostStream {
        hub: Arc::clone(&http.hub),
        stream,
    }));
    // A tool call whose handler blocks its thread is answered on its stream
    // all the same (server/watchdog.rs).
    let watch = (method == "tools/call" && watchdog::can_watch()).then(|| {
        let hub = Arc::clone(&http.hub);
        Watch::new(Box::new(move |answer| {
            hub.send(stream, &answer);
            hub.finish(stream);
        }))
    });
    stream_ctx.watch.clone_from(&watch);
    let keep_alive = shared.config.keep_alive;
    let running = shared.drain.running();
    let shared = Arc::clone(shared);
    let hub = Arc::clone(&http.hub);
    let task = tokio::spawn({
        let watch = watch.clone();
        async move {
            let _running = running;
            let reply = answer(shared.handler.as_ref(), message, stream_ctx).await;
            if let Some(change) = change {
                replica::remember(&shared, &http, &change, reply.as_ref()).await;
            }
            if watch.as_ref().is_none_or(|w| w.settle()) {
                if let Some(reply) = reply {
                    http.hub.answer(stream, &reply, ticket);
                }
                http.hub.finish(stream);
            }
        }
    });
    if let Some(watch) = watch {
        watch.set_task(task.abort_handle());
    }
    sse_response(rx, &hub, Some(keep_alive), None)
}

/// A JSON-RPC batch: only on a session, and served by the handler (which
/// accepts it at 2025-03-26 and words the refusal otherwise). Answered with
/// one JSON array (202 when it held no request); a batch refused as a whole
/// is 400.
async fn batch(
    shared: &Arc<EndpointState>,
    headers: &HeaderMap,
    message: Value,
    access: Option<&Arc<AccessToken>>,
) -> Response {
    if session_header(headers).is_none() {
        return error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            jsonrpc::INVALID_REQUEST,
            "Invalid Request: a JSON-RPC batch needs a session of revision 2025-03-26 \
             (initialize may not be batched)",
        );
    }
    let http = match existing_session(shared, headers, &Value::Null, access).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let Err(r) = guard::check_protocol_version(headers, &Value::Null) {
        return r;
    }
    let ctx = authorized(
        &shared.config,
        headers,
        RequestContext::with_session(http.session.clone()),
        access,
    );
    let n = message.as_array().map_or(1, Vec::len);
    let ticket = http.hub.admit(Demand::of(&message, n)).await;
    match answer(shared.handler.as_ref(), message, ctx).await {
        None => StatusCode::ACCEPTED.into_response(),
        Some(replies @ Value::Array(_)) => {
            json_body(StatusCode::OK, http.hub.json(&replies, Some(ticket)), None)
        }
        Some(refused) => json_reply(StatusCode::BAD_REQUEST, refused, None),
    }
}

async fn initialize(
    shared: &Arc<EndpointState>,
    headers: &HeaderMap,
    message: Value,
    access: Option<&Arc<AccessToken>>,
) -> Response {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    if shared.drain.is_draining() {
        return super::drain::refused(&id, "new session");
    }
    let Some(http) = shared.sessions.create(&shared.config) else {
        return too_many_sessions(&id);
    };
    if let Some(access) = access {
        let _ = http.owner.set(Box::new(owner(access)));
    }
    let ctx = authorized(
        &shared.config,
        headers,
        RequestContext::with_session(http.session.clone()),
        access,
    );
    let store = shared.config.event_store.as_ref();
    if let Some(store) = store {
        replica::attach(shared, store, &http);
    }
    // Kept for a replica that takes the session over.
    let request = store.map(|_| message.clone());
    let reply = answer(shared.handler.as_ref(), message, ctx)
        .await
        .unwrap_or(Value::Null);
    match crate::jsonrpc::at(&reply, &["result", "protocolVersion"]).and_then(Value::as_str) {
        Some(version) => {
            let _ = http.protocol.set(version.to_owned());
            if let (Some(store), Some(request)) = (store, request)
                && let Err(e) = replica::save(shared, store, &http, request).await
            {
                shared.sessions.remove(&http.id);
                return store_failed(&id, "a new session", &e);
            }
            json_reply(StatusCode::OK, reply, Some(&http.id))
        }
        None => {
            shared.sessions.remove(&http.id);
            json_reply(StatusCode::OK, reply, None)
        }
    }
}

async fn get(
    shared: &Arc<EndpointState>,
    headers: &HeaderMap,
    access: Option<&Arc<AccessToken>>,
) -> Response {
    if !guard::accepts(headers, "text/event-stream") {
        return error(
            StatusCode::NOT_ACCEPTABLE,
            &Value::Null,
            jsonrpc::INVALID_REQUEST,
            "Not Acceptable: accept text/event-stream",
        );
    }
    let http = match existing_session(shared, headers, &Value::Null, access).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let Err(r) = guard::check_protocol_version(headers, &Value::Null) {
        return r;
    }
    let last = headers.get("last-event-id").and_then(|v| v.to_str().ok());
    // Draining: only the stream of a call running here may be resumed.
    if shared.drain.is_draining() && !last.is_some_and(|id| http.hub.answers_a_request(id)) {
        return super::drain::refused(&Value::Null, "GET stream");
    }
    let rx = match (last.and_then(|id| http.hub.resume(id)), last) {
        (Some(rx), _) => rx,
        (None, last) => match &shared.config.event_store {
            None => http.hub.open_standalone(http.priming()),
            Some(store) => match replica::get_stream(shared, store, &http, last).await {
                Ok(rx) => rx,
                Err(e) => return store_failed(&Value::Null, "a GET stream", &e),
            },
        },
    };
    // A drain that began meanwhile has not seen this GET stream: it ends
    // here (the drain flags first, then ends the streams it finds).
    if shared.drain.is_draining() {
        http.hub.end_standalone();
    }
    sse_response(
        rx,
        &http.hub,
        Some(shared.config.keep_alive),
        Some(&http.id),
    )
}

async fn delete(
    shared: &Arc<EndpointState>,
    headers: &HeaderMap,
    access: Option<&Arc<AccessToken>>,
) -> Response {
    let http = match existing_session(shared, headers, &Value::Null, access).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let Some(store) = &shared.config.event_store
        && let Err(e) = replica::end(shared, store, &http.id).await
    {
        return store_failed(&Value::Null, "ending a session", &e);
    }
    match shared.sessions.remove(&http.id) {
        Some(_) => StatusCode::OK.into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            &Value::Null,
            SESSION_NOT_FOUND,
            "Session not found",
        ),
    }
}

fn json_reply(status: StatusCode, reply: Value, session: Option<&str>) -> Response {
    json_body(status, Bytes::from(reply.to_string()), session)
}

fn json_body(status: StatusCode, body: Bytes, session: Option<&str>) -> Response {
    let mut response = (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    if let Some(sid) = session.and_then(|s| HeaderValue::from_str(s).ok()) {
        response.headers_mut().insert(SESSION_HEADER, sid);
    }
    response
}

/// An SSE response reading `rx`; with `keep_alive`, a comment line goes out
/// whenever the stream is quiet that long (so a vanished client is noticed).
/// Once it has read `rx` to the end, it tells `hub` (which then forgets what
/// it kept for a replay nobody needs).
fn sse_response(
    rx: Rx,
    hub: &Arc<Hub>,
    keep_alive: Option<Duration>,
    session: Option<&str>,
) -> Response {
    let state = (rx, Arc::clone(hub));
    let events = futures::stream::unfold(state, move |(mut rx, hub)| async move {
        let next = match keep_alive {
            Some(every) => match tokio::time::timeout(every, rx.recv()).await {
                Ok(next) => next,
                Err(_) => Some(Bytes::from_static(b": keep-alive\n\n")),
            },
            None => rx.recv().await,
        };
        match next {
            Some(bytes) => Some((Ok::<Bytes, Infallible>(bytes), (rx, hub))),
            None => {
                hub.delivered(&rx);
                None
            }
        }
    });
    let mut response = Response::new(Body::from_stream(events.boxed()));
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Some(sid) = session.and_then(|s| HeaderValue::from_str(s).ok()) {
        h.insert(SESSION_HEADER, sid);
    }
    response
}

/// The SSE stream a POSTed request is answered on.
struct PostStream {
    hub: Arc<Hub>,
    stream: u64,
}

impl ResponseStream for PostStream {
    fn send(&self, message: Value) {
        self.hub.send(self.stream, &message);
    }

    fn close(&self) -> bool {
        self.hub.close_early(self.stream)
    }
}
