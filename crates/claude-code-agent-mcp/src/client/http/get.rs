//! The standalone GET stream: what the server sends outside any request.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::oneshot;

use super::sse::SseParser;
use super::stream::{DEFAULT_RETRY, Got, Invalid, deliver, on_event, open_get, ready};
use super::{Shared, lock, session};
use crate::client::error::error_chain;

/// The standalone GET stream: notifications and requests outside any
/// request, resumed after a cut, until the transport closes. A server that
/// refuses it (405) is left alone; a 404 on the session starts a new one.
/// `answered` fires once the first GET has been answered or has failed.
pub(crate) async fn get_stream(shared: Arc<Shared>, answered: oneshot::Sender<()>) {
    let mut answered = Some(answered);
    let new_parser = || SseParser::with_max_event_bytes(shared.options.max_message_bytes);
    let mut parser = new_parser();
    let mut session = lock(&shared.session_id).clone();
    let mut failures = 0;
    while !shared.closed.load(Ordering::Acquire) && failures <= shared.options.max_reconnects {
        let now = lock(&shared.session_id).clone();
        if now != session {
            // A new session: the old one's event ids mean nothing to it.
            parser = new_parser();
            session = now;
        }
        let retry = parser
            .retry_ms()
            .map_or(DEFAULT_RETRY, Duration::from_millis);
        let got = open_get(&shared, parser.last_event_id()).await;
        if let Some(answered) = answered.take() {
            let _ = answered.send(());
        }
        let response = match got {
            Ok(Got::Stream(r)) => r,
            Ok(Got::NotOffered) => {
                tracing::debug!("MCP HTTP: the server offers no GET stream (405)");
                return;
            }
            Ok(Got::Expired(stale)) => {
                failures += 1;
                if session::renew(&shared, &stale).await.is_err() {
                    return;
                }
                continue;
            }
            Err(e) => {
                tracing::debug!(error = %error_chain(&e), "MCP HTTP: no GET stream");
                failures += 1;
                pause(&shared, retry).await;
                continue;
            }
        };
        failures = 0;
        let mut body = response.bytes_stream();
        let sink = |m, n| deliver(&shared, m, n);
        while let Some(Ok(bytes)) = {
            ready(&shared).await;
            body.next().await
        } {
            for item in parser.feed_checked(&bytes) {
                match item {
                    Ok(event) => {
                        // A response that cannot be read fails its request.
                        if let Err(Invalid {
                            error,
                            response_id: Some(id),
                            ..
                        }) = on_event(&shared, &sink, &event, None)
                            && let Some(inbox) = shared.inbox.get()
                        {
                            inbox.fail(id, error);
                        }
                    }
                    Err(e) => tracing::error!("MCP HTTP: GET stream: {e}; the event was skipped"),
                }
            }
        }
        parser.finish();
        failures += 1;
        let retry = parser
            .retry_ms()
            .map_or(DEFAULT_RETRY, Duration::from_millis);
        pause(&shared, retry).await;
    }
}

/// Waits `retry` before reopening the GET stream, or less if a new session
/// starts meanwhile: what the server sends outside requests is lost while
/// no stream is open.
async fn pause(shared: &Shared, retry: Duration) {
    tokio::select! {
        () = tokio::time::sleep(retry) => {}
        () = shared.new_session.notified() => {}
    }
}
