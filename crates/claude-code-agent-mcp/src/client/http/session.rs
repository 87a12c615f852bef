//! A session the server no longer knows (it answered 404: it restarted, the
//! session expired, someone DELETEd it): the 2025-11-25 revision says the
//! client MUST start a new one with a fresh `initialize`. This is done here,
//! once for every message that met the 404, with the `initialize` first
//! sent; if the server will not open a new session on the revision already
//! negotiated, the transport closes, saying why. [`post`] sends a message
//! once more on the new session.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::authorize::{Retries, act};
use super::stream::{self, Attempt, deliver, url};
use super::{Shared, lock};
use crate::client::error::error_chain;
use crate::client::{Error, SendOptions, response_outcome};
use crate::jsonrpc;

/// POSTs one message and delivers everything the answer carries. When the
/// server answers 404 to the session, a new session is started and the
/// message sent once more; if that fails, the transport is closed.
pub(crate) async fn post(
    shared: &Arc<Shared>,
    message: Value,
    options: &SendOptions,
) -> Result<(), Error> {
    let sink = |m, n| deliver(shared, m, n);
    let stale = match post_authorized(shared, &message, options, &sink).await {
        Ok(()) => return Ok(()),
        Err(Attempt::Failed(e)) => return Err(e),
        Err(Attempt::Refused(_)) => unreachable!("post_authorized acts on refusals"),
        Err(Attempt::Expired(stale)) => stale,
        Err(Attempt::Lost(stale)) => {
            // Not sent again: the old session may have acted on it.
            renew(shared, &stale).await?;
            return Err(Error::interrupted(format!(
                "HTTP {}: the MCP session ended before the response came (resuming its stream got 404); a new session was started, but the message was not sent again",
                url(shared)
            ))
            .with_status(404));
        }
    };
    renew(shared, &stale).await?;
    match post_authorized(shared, &message, options, &sink).await {
        Ok(()) => Ok(()),
        Err(Attempt::Failed(e)) => Err(e),
        Err(Attempt::Refused(_)) => unreachable!("post_authorized acts on refusals"),
        Err(Attempt::Expired(_) | Attempt::Lost(_)) => Err(fail(
            shared,
            Error::closed(format!(
                "HTTP 404 from {}: the MCP session expired, and the server answered 404 again on the new session",
                url(shared)
            ))
            .with_status(404),
        )),
    }
}

/// POSTs one message; when the server refuses its authorization, lets
/// the OAuth flow act (authorize, refresh, step up) and sends it again, as
/// often as [`Retries`] allows. Never returns [`Attempt::Refused`].
pub(crate) async fn post_authorized(
    shared: &Shared,
    message: &Value,
    options: &SendOptions,
    sink: stream::Sink<'_>,
) -> Result<(), Attempt> {
    let mut retries = Retries::default();
    loop {
        match stream::post_once(shared, message, options, sink).await {
            Err(Attempt::Refused(refusal)) => act(shared, &refusal, &mut retries, false).await?,
            other => return other,
        }
    }
}

/// Starts a new session in place of `stale` (unless another message did
/// already). On failure the transport is closed and the error says why.
pub(crate) async fn renew(shared: &Arc<Shared>, stale: &str) -> Result<(), Error> {
    let _one_at_a_time = shared.renewing.lock().await;
    if shared.closed.load(Ordering::Acquire) {
        return Err(shared.closed_error());
    }
    if lock(&shared.session_id).as_deref() != Some(stale) {
        return Ok(()); // renewed meanwhile
    }
    tracing::info!(url = %url(shared), "MCP HTTP: the session expired (404); starting a new one");
    match start(shared, stale).await {
        Ok(()) => {
            // The GET stream reopens for the new session now, not after its
            // retry delay (or starts again, if it had given up).
            shared.new_session.notify_one();
            let _ = super::start_get_stream(shared);
            Ok(())
        }
        Err(why) => Err(fail(
            shared,
            Error::closed(format!(
                "HTTP 404 from {}: the MCP session expired and a new one could not be started",
                url(shared)
            ))
            .with_status(404)
            .with_source(why),
        )),
    }
}

/// Closes the transport with `reason` (an [`Error::closed`]): it is no
/// longer alive, every message waiting or sent later fails with it.
pub(crate) fn fail(shared: &Shared, reason: Error) -> Error {
    tracing::warn!("MCP HTTP: {}", error_chain(&reason));
    lock(&shared.closed_reason).get_or_insert_with(|| reason.clone());
    shared.closed.store(true, Ordering::Release);
    lock(&shared.session_id).take();
    if let Some(task) = lock(&shared.get_task).take() {
        task.abort();
    }
    if let Some(inbox) = shared.inbox.get() {
        inbox.closed_with(reason.clone());
    }
    reason
}

/// `initialize` again (its answer kept aside, not delivered), then
/// `notifications/initialized` on the new session.
async fn start(shared: &Shared, stale: &str) -> Result<(), Error> {
    let init = lock(&shared.init_message)
        .clone()
        .ok_or_else(|| Error::transport("this transport never sent initialize"))?;
    let negotiated = lock(&shared.protocol_version).clone();
    let id = init.get("id").cloned();
    let answer = Mutex::new(None);
    let keep_answer = |message: Value, bytes: usize| {
        if message.get("method").is_none() && message.get("id") == id.as_ref() {
            *lock(&answer) = Some(message);
        } else {
            deliver(shared, message, bytes);
        }
    };
    post_authorized(shared, &init, &SendOptions::default(), &keep_answer)
        .await
        .map_err(|e| describe("initialize", e))?;
    let answer = lock(&answer)
        .take()
        .ok_or_else(|| Error::invalid_response("no answer to initialize"))?;
    let Value::Object(answer) = answer else {
        return Err(Error::invalid_response(
            "the answer to initialize is not an object",
        ));
    };
    let result = response_outcome(answer)?;
    if lock(&shared.session_id).as_deref() == Some(stale) {
        return Err(Error::invalid_response(
            "the server answered initialize without a new session id",
        ));
    }
    let version = result.get("protocolVersion").and_then(Value::as_str);
    if version != negotiated.as_deref() {
        return Err(Error::invalid_response(format!(
            "the new session answered protocol version {version:?}, not the {negotiated:?} negotiated before"
        )));
    }
    let initialized = jsonrpc::notification("notifications/initialized", None);
    let sink = |message, bytes| deliver(shared, message, bytes);
    post_authorized(shared, &initialized, &SendOptions::default(), &sink)
        .await
        .map_err(|e| describe("notifications/initialized", e))
}

/// Why `what`, sent on the new session, failed.
fn describe(what: &str, attempt: Attempt) -> Error {
    match attempt {
        Attempt::Failed(e) => e,
        Attempt::Refused(_) => unreachable!("post_authorized acts on refusals"),
        Attempt::Expired(_) | Attempt::Lost(_) => {
            Error::transport(format!("{what}: the server answered 404")).with_status(404)
        }
    }
}
