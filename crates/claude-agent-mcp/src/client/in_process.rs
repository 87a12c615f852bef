//! The in-process transport: calls a [`Handler`] directly.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;

use super::ClientError;
use super::transport::{Inbox, SendOptions, Transport};
use crate::server::{Handler, RequestContext, Session};

/// Calls a [`Handler`] (our [`Server`](crate::Server), or any type of yours)
/// directly, every message with the transport's one [`Session`].
///
/// The fastest transport: messages stay [`Value`]s, never text, and the
/// reply is delivered from inside [`send`](Transport::send) with no task
/// switch. What the server sends on its own through the session — progress,
/// log messages, `list_changed`, what `subscriptions/listen` forwards —
/// reaches the client the same way, synchronously; requests to the client
/// (sampling, elicitation, roots) are not carried
/// ([`ToolContext::request`](crate::ToolContext::request) fails with
/// `NotSupported`). Per-request options (header parameters) are accepted
/// and ignored. [`close`](Transport::close) ends the session (its requests
/// to the client fail); [`is_alive`](Transport::is_alive) is always true.
///
/// A handler that panics, or that answers a request with nothing, fails
/// that request with a transport error (never a JSON-RPC error).
#[derive(Clone)]
pub struct InProcessTransport {
    handler: Arc<dyn Handler>,
    inbox: Arc<OnceLock<Inbox>>,
    session: Session,
}

impl InProcessTransport {
    /// A transport to `handler`.
    pub fn new(handler: impl Handler) -> Self {
        Self::from_arc(Arc::new(handler))
    }

    /// A transport to a shared handler.
    pub fn from_arc(handler: Arc<dyn Handler>) -> Self {
        let inbox: Arc<OnceLock<Inbox>> = Arc::new(OnceLock::new());
        let to_client = Arc::clone(&inbox);
        let session = Session::with_notifier(move |message| {
            if let Some(inbox) = to_client.get() {
                inbox.deliver(message);
            }
        });
        Self {
            handler,
            inbox,
            session,
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
        let handler = &self.handler;
        let ctx = RequestContext::with_session(self.session.clone());
        let future = std::panic::catch_unwind(AssertUnwindSafe(|| handler.handle(message, ctx)));
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
        self.session.close();
        Box::pin(futures::future::ready(Ok(())))
    }

    fn is_alive(&self) -> bool {
        true
    }
}
