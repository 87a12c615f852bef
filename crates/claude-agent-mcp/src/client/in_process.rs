//! The in-process transport: calls a [`Handler`] directly.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;

use super::ClientError;
use super::transport::{Inbox, SendOptions, Transport};
use crate::server::{Handler, RequestContext};

/// Calls a [`Handler`] (our [`Server`](crate::Server), or any type of yours)
/// directly, with a fresh [`RequestContext::new`] for every message.
///
/// The fastest transport: messages stay [`Value`]s, never text, and the
/// reply is delivered from inside [`send`](Transport::send) with no task
/// switch. Per-request options (header parameters) are accepted and
/// ignored; [`close`](Transport::close) does nothing and
/// [`is_alive`](Transport::is_alive) is always true. There is no stream the
/// server could push notifications over, so `subscriptions/listen` is
/// refused.
///
/// A handler that panics, or that answers a request with nothing, fails
/// that request with a transport error (never a JSON-RPC error).
#[derive(Clone)]
pub struct InProcessTransport {
    handler: Arc<dyn Handler>,
    inbox: Arc<OnceLock<Inbox>>,
}

impl InProcessTransport {
    /// A transport to `handler`.
    pub fn new(handler: impl Handler) -> Self {
        Self::from_arc(Arc::new(handler))
    }

    /// A transport to a shared handler.
    pub fn from_arc(handler: Arc<dyn Handler>) -> Self {
        Self {
            handler,
            inbox: Arc::new(OnceLock::new()),
        }
    }
}

impl std::fmt::Debug for InProcessTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InProcessTransport")
    }
}

impl Transport for InProcessTransport {
    fn start(&self, inbox: Inbox) -> Result<(), ClientError> {
        self.inbox.set(inbox).map_err(|_| {
            ClientError::Transport("the in-process transport was already started".into())
        })
    }

    fn send(
        &self,
        message: Value,
        _options: SendOptions,
    ) -> BoxFuture<'_, Result<(), ClientError>> {
        let method = message.get("method").and_then(Value::as_str);
        let is_request = method.is_some() && message.get("id").is_some_and(|id| !id.is_null());
        if method == Some("subscriptions/listen") {
            return Box::pin(futures::future::ready(Err(ClientError::Refused(
                "subscriptions/listen: the in-process transport cannot carry server-initiated notifications"
                    .into(),
            ))));
        }
        let handler = &self.handler;
        let future = std::panic::catch_unwind(AssertUnwindSafe(|| {
            handler.handle(message, RequestContext::new())
        }));
        Box::pin(async move {
            let future = future.map_err(|p| {
                ClientError::Transport(format!(
                    "MCP in-process handler failed: {}",
                    crate::server::panic_message(&*p)
                ))
            })?;
            let reply = AssertUnwindSafe(future).catch_unwind().await.map_err(|p| {
                ClientError::Transport(format!(
                    "MCP in-process handler failed: {}",
                    crate::server::panic_message(&*p)
                ))
            })?;
            match reply {
                Some(reply) => {
                    if let Some(inbox) = self.inbox.get() {
                        inbox.deliver(reply);
                    }
                    Ok(())
                }
                None if is_request => Err(ClientError::InvalidResponse(
                    "MCP in-process invalid response: the handler answered nothing".into(),
                )),
                None => Ok(()),
            }
        })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(futures::future::ready(Ok(())))
    }

    fn is_alive(&self) -> bool {
        true
    }
}
