//! One POST and what comes back: a JSON body or an SSE stream, resumed with
//! GET + `Last-Event-ID` when it is cut before the response; opening a GET
//! stream. A 404 on the session is reported, not acted on: what starts a new
//! session is in [`session`](super::session), the standalone GET stream in
//! [`get`](super::get).

use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde_json::Value;

use super::sse::{SseEvent, SseParser};
use super::{PROTOCOL_HEADER, SESSION_HEADER, Shared, header, lock, post_headers};
use crate::client::body::{BodyError, read_capped};
use crate::client::error::error_chain;
use crate::client::{Error, SendOptions};
use crate::transport::json::{self, envelope};

/// The default wait before resuming a stream when the server gave no `retry:`.
pub(crate) const DEFAULT_RETRY: Duration = Duration::from_secs(1);

pub(crate) fn url(shared: &Shared) -> &str {
    &shared.options.url
}

/// Delivers a message that took `bytes` on the wire.
pub(crate) fn deliver(shared: &Shared, message: Value, bytes: usize) {
    if let Some(inbox) = shared.inbox.get() {
        inbox.deliver_sized(message, bytes);
    }
}

/// Waits until the client has room for more (its byte budget): a stream
/// is read no further meanwhile.
pub(crate) async fn ready(shared: &Shared) {
    if let Some(inbox) = shared.inbox.get() {
        inbox.ready().await;
    }
}

/// Where the messages an answer carries go: the inbox, except while a new
/// session is being started (its `initialize` answer is kept aside).
/// Each message comes with the bytes it took on the wire.
pub(crate) type Sink<'a> = &'a (dyn Fn(Value, usize) + Send + Sync);

/// How one POST went wrong.
pub(crate) enum Attempt {
    /// The server answered 404 to the session the POST carried (its id).
    Expired(String),
    /// The answer's stream was cut and resuming it got 404: the session
    /// (its id) ended while the server may have been acting on the message.
    Lost(String),
    /// The server refused the request's authorization (401, or 403 with a
    /// challenge), and there is an OAuth flow to act on it.
    Refused(super::authorize::Refusal),
    /// Anything else.
    Failed(Error),
}

impl From<Error> for Attempt {
    fn from(e: Error) -> Self {
        Self::Failed(e)
    }
}

/// POSTs one message once, with the session id of the moment.
pub(crate) async fn post_once(
    shared: &Shared,
    message: &Value,
    options: &SendOptions,
    sink: Sink<'_>,
) -> Result<(), Attempt> {
    let method = message.get("method").and_then(Value::as_str);
    let request_id = match method {
        Some(_) => message.get("id").filter(|id| !id.is_null()).cloned(),
        None => None,
    };
    let (mut headers, session) = post_headers(shared, message, options)?;
    let sent = super::authorize::add_token(shared, "POST", &mut headers).await?;
    let body = serde_json::to_vec(message)
        .map_err(|e| Error::transport("could not serialize a message").with_source(e))?;
    let send = shared
        .http
        .post(url(shared))
        .headers(headers)
        .body(body)
        .send();
    let mut response = match shared.options.request_timeout {
        Some(t) => tokio::time::timeout(t, send).await.map_err(|_| {
            Error::timeout(format!("HTTP POST {}: no answer within {t:?}", url(shared)))
        })?,
        None => send.await,
    }
    .map_err(|e| {
        // Not connected: nothing was sent. Otherwise the server may have
        // the request, and its answer is lost.
        let failed = format!("HTTP POST {} failed", url(shared));
        match e.is_connect() {
            true => Error::transport(failed),
            false => Error::interrupted(failed),
        }
        .with_source(e)
    })?;

    if let Some(session) = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
    {
        let mut slot = lock(&shared.session_id);
        if slot.is_none() || method == Some("initialize") {
            *slot = Some(session.to_owned());
        }
    }
    let status = response.status();
    if status == StatusCode::NOT_FOUND
        && let Some(session) = session
    {
        return Err(Attempt::Expired(session));
    }
    if let Some(refusal) =
        super::authorize::refusal(shared, status.as_u16(), response.headers(), sent)
    {
        return Err(Attempt::Refused(refusal));
    }
    if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
        return Ok(());
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let limit = shared.options.max_message_bytes;
    if !status.is_success() {
        let text = match read_capped(&mut response, limit).await {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e @ BodyError::TooLarge { .. }) => format!("<{e}>"),
            Err(BodyError::Read(_)) => String::new(),
        };
        return Ok(error_status(shared, status, &text, request_id, sink)?);
    }
    if content_type.starts_with("text/event-stream") {
        return read_sse(shared, response, request_id, sink).await;
    }
    let bytes = read_capped(&mut response, limit)
        .await
        .map_err(|e| match e {
            BodyError::TooLarge { .. } => {
                Error::invalid_response(format!("HTTP POST {}: {e}", url(shared)))
            }
            BodyError::Read(cause) => Error::interrupted(format!(
                "HTTP POST {}: reading the body failed",
                url(shared)
            ))
            .with_source(cause),
        })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return match request_id {
            Some(_) => Err(Attempt::Failed(Error::invalid_response(format!(
                "HTTP POST {}: an empty {status} answer to a request",
                url(shared)
            )))),
            None => Ok(()),
        };
    }
    let value: Value = json::from_slice(&bytes).map_err(|e| {
        let what = format!("HTTP POST {}: the body of the answer", url(shared));
        Error::undecodable(&what, &bytes, e)
    })?;
    sink(value, bytes.len());
    Ok(())
}

/// A 4xx/5xx: a JSON-RPC error body answers the request; anything else
/// fails it as a transport error with that status.
fn error_status(
    shared: &Shared,
    status: StatusCode,
    text: &str,
    request_id: Option<Value>,
    sink: Sink<'_>,
) -> Result<(), Error> {
    // What a proxy answers when its upstream failed or is gone: a request
    // may have reached it.
    let gateway = matches!(status.as_u16(), 502..=504) && request_id.is_some();
    if let Ok(Value::Object(mut map)) = json::from_str::<Value>(text)
        && map.get("error").is_some_and(|e| !e.is_null())
        && let Some(id) = request_id
    {
        // Servers answer some refusals with a null id; it is ours.
        if map.get("id").is_none_or(Value::is_null) {
            map.insert("id".into(), id);
        }
        sink(Value::Object(map), text.len());
        return Ok(());
    }
    let snippet: String = text.chars().take(300).collect();
    let message = format!("HTTP {status} from {}: {snippet}", url(shared));
    let e = match gateway {
        true => Error::interrupted(message),
        false => Error::transport(message),
    };
    Err(e.with_status(status.as_u16()))
}

/// An SSE event that does not decode: the error that names it, and what
/// can be read of its envelope.
pub(crate) struct Invalid {
    pub(crate) error: Error,
    /// It shows a `method`: a request or notification of the server's, not
    /// a response.
    pub(crate) from_server: bool,
    /// The id of the response it seems to be.
    pub(crate) response_id: Option<Value>,
}

/// Delivers one event; says whether it was the response to `request_id`.
pub(crate) fn on_event(
    shared: &Shared,
    sink: Sink<'_>,
    event: &SseEvent,
    request_id: Option<&Value>,
) -> Result<bool, Invalid> {
    if event.data.trim().is_empty() {
        return Ok(false);
    }
    match json::from_str::<Value>(&event.data) {
        Ok(message) => {
            let answers = request_id
                .is_some_and(|id| message.get("method").is_none() && message.get("id") == Some(id));
            sink(message, event.data.len());
            Ok(answers)
        }
        Err(e) => {
            let what = format!("HTTP {}: an SSE event", url(shared));
            let error = Error::undecodable(&what, event.data.as_bytes(), e);
            tracing::warn!("MCP HTTP: {error}");
            let envelope = envelope(event.data.as_bytes());
            Err(Invalid {
                error,
                from_server: envelope.method,
                response_id: envelope.response_id().cloned(),
            })
        }
    }
}

/// Reads the SSE answer to a POST until it carries the response to
/// `request_id` (then the stream is dropped: a server that keeps it open
/// must not hold the request), resuming it when it is cut before.
async fn read_sse(
    shared: &Shared,
    mut response: reqwest::Response,
    request_id: Option<Value>,
    sink: Sink<'_>,
) -> Result<(), Attempt> {
    let mut parser = SseParser::with_max_event_bytes(shared.options.max_message_bytes);
    let mut answered = request_id.is_none();
    // A server message on the stream that could not be read (the response
    // may still come; if it does not, the error says what was skipped).
    let mut skipped: Option<Error> = None;
    let mut attempts = 0;
    loop {
        let mut body = response.bytes_stream();
        let mut broke = None;
        while let Some(chunk) = {
            ready(shared).await;
            body.next().await
        } {
            let bytes = match chunk {
                Ok(bytes) => bytes,
                Err(e) => {
                    tracing::debug!(error = %error_chain(&e), "MCP HTTP: the SSE stream broke");
                    broke = Some(e);
                    break;
                }
            };
            for item in parser.feed_checked(&bytes) {
                match item {
                    Ok(event) => match on_event(shared, sink, &event, request_id.as_ref()) {
                        Ok(answers) => answered |= answers,
                        Err(_) if answered => {}
                        Err(bad) if bad.from_server => skipped = Some(bad.error),
                        // Most likely the response itself: the request fails
                        // saying so rather than waiting for one.
                        Err(bad) => return Err(Attempt::Failed(bad.error)),
                    },
                    Err(too_large) if answered => {
                        tracing::warn!("MCP HTTP: {too_large}; dropping the stream");
                        return Ok(());
                    }
                    Err(too_large) => {
                        return Err(Attempt::Failed(Error::invalid_response(format!(
                            "HTTP {}: {too_large}; the stream was dropped",
                            url(shared)
                        ))));
                    }
                }
            }
            if answered {
                return Ok(());
            }
        }
        let partial = if parser.has_partial_event() {
            "; an unterminated event was discarded"
        } else {
            ""
        };
        parser.finish();
        if answered {
            return Ok(());
        }
        if shared.closed.load(Ordering::Acquire) {
            return Err(shared.closed_error().into());
        }
        let mut how = if broke.is_some() { "broke" } else { "ended" }.to_owned();
        if skipped.is_some() {
            how.push_str(" after an event it could not read");
        }
        // The cause: the read error if the stream broke, else the event
        // that could not be read (its excerpt and serde's reason).
        // The request was sent: it may have run.
        let failed = |message: String| {
            let e = Error::interrupted(message);
            Attempt::Failed(match (broke, skipped.clone()) {
                (Some(cause), _) => e.with_source(cause),
                (None, Some(skipped)) => e.with_source(skipped),
                (None, None) => e,
            })
        };
        let Some(last_id) = parser.last_event_id().map(str::to_owned) else {
            return Err(failed(format!(
                "HTTP {}: the SSE stream {how} before the response{partial}, with no event id to resume from",
                url(shared)
            )));
        };
        attempts += 1;
        if attempts > shared.options.max_reconnects {
            return Err(failed(format!(
                "HTTP {}: the SSE stream was cut {attempts} times before the response (last: it {how}{partial})",
                url(shared)
            )));
        }
        let wait = parser
            .retry_ms()
            .map_or(DEFAULT_RETRY, Duration::from_millis);
        tokio::time::sleep(wait).await;
        let resumed = open_get(shared, Some(&last_id)).await.map_err(|e| {
            let what = format!(
                "HTTP GET {}: resuming the SSE stream of a request failed",
                url(shared)
            );
            match e.is_unauthorized() {
                true => e,
                false => Error::interrupted(what).with_source(e),
            }
        });
        response = match resumed? {
            Got::Stream(response) => response,
            Got::Expired(stale) => return Err(Attempt::Lost(stale)),
            Got::NotOffered => {
                return Err(Attempt::Failed(Error::interrupted(format!(
                    "HTTP GET {}: the server does not offer a stream to resume",
                    url(shared)
                ))));
            }
        };
    }
}

/// What a GET got.
pub(crate) enum Got {
    Stream(reqwest::Response),
    /// 405: the server offers no stream.
    NotOffered,
    /// 404 to the session the GET carried (its id).
    Expired(String),
}

/// Opens a GET SSE stream.
pub(crate) async fn open_get(shared: &Shared, last_event_id: Option<&str>) -> Result<Got, Error> {
    let mut h = shared.base_headers.clone();
    h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    let session = lock(&shared.session_id).clone();
    if let Some(session) = &session {
        let (n, v) = header(SESSION_HEADER, session)?;
        h.insert(n, v);
    }
    if let Some(version) = lock(&shared.protocol_version).clone() {
        let (n, v) = header(PROTOCOL_HEADER, &version)?;
        h.insert(n, v);
    }
    if let Some(id) = last_event_id {
        let (n, v) = header("last-event-id", id)?;
        h.insert(n, v);
    }
    let mut retries = super::authorize::Retries::default();
    let response = loop {
        let mut h = h.clone();
        let sent = super::authorize::add_token(shared, "GET", &mut h).await?;
        let response = shared
            .http
            .get(url(shared))
            .headers(h)
            .send()
            .await
            .map_err(|e| {
                Error::transport(format!("HTTP GET {} failed", url(shared))).with_source(e)
            })?;
        match super::authorize::refusal(
            shared,
            response.status().as_u16(),
            response.headers(),
            sent,
        ) {
            Some(refusal) => super::authorize::act(shared, &refusal, &mut retries, true).await?,
            None => break response,
        }
    };
    let status = response.status();
    if status == StatusCode::METHOD_NOT_ALLOWED {
        return Ok(Got::NotOffered);
    }
    if status == StatusCode::NOT_FOUND
        && let Some(session) = session
    {
        return Ok(Got::Expired(session));
    }
    if !status.is_success() {
        return Err(
            Error::transport(format!("HTTP GET {}: {status}", url(shared)))
                .with_status(status.as_u16()),
        );
    }
    Ok(Got::Stream(response))
}
