//! The in-process transport: calls a [`Handler`] directly.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};
use std::task::Context;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::error::Panicked;
use super::options::ClientOptions;
use super::transport::{Inbox, SendOptions, Transport};
use super::{Error, McpClient};
use crate::jsonrpc::ErrorObject;
use crate::server::{Call, Handler, RequestContext, Served, Server, Session, ToolCall};
use crate::types::CallToolResult;

/// A stateless `_meta` and the context calls carrying it are served in.
type StatelessContext = (Arc<Map<String, Value>>, RequestContext);

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
///
/// Connected to our [`Server`] (given to [`new`](Self::new) or
/// [`McpClient::in_process`](super::McpClient::in_process)), the client's
/// `tools/call` skips JSON-RPC altogether: it hands the server the typed
/// call that a `tools/call` request is decoded into, served by the same
/// code (arguments validated, timeout, panic capture, cancellation, the
/// result cap, the stateless revision's `_meta`), and gets back the typed
/// result.
#[derive(Clone)]
pub struct InProcessTransport {
    handler: Arc<dyn Handler>,
    /// The handler when it is our [`Server`]: tool calls go to it directly.
    server: Option<Server>,
    /// The context of stateless calls that carry the client's own `_meta`
    /// (the same `Arc` every call): made and checked once
    /// ([`prepare_stateless`](Self::prepare_stateless)), as a server would
    /// for each request.
    stateless: Arc<OnceLock<StatelessContext>>,
    inbox: Arc<OnceLock<Inbox>>,
    session: Session,
}

impl InProcessTransport {
    /// A transport to `handler`.
    pub fn new(handler: impl Handler) -> Self {
        let server = (&handler as &dyn Any).downcast_ref::<Server>().cloned();
        Self {
            server,
            ..Self::from_arc(Arc::new(handler))
        }
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
            server: None,
            stateless: Arc::new(OnceLock::new()),
            inbox,
            session,
        }
    }
}

impl InProcessTransport {
    /// Whether tool calls can skip JSON-RPC (the handler is our [`Server`]).
    pub(crate) fn is_direct(&self) -> bool {
        self.server.is_some()
    }

    /// `tools/call` of `name`, the typed call handed to the server as is
    /// (no JSON-RPC), started at once (the handler polled once with `cx`):
    /// the server's answer, or the call still running.
    pub(crate) fn start_call<'a>(
        &'a self,
        id: &Value,
        name: &str,
        arguments: Value,
        meta: Option<Arc<Map<String, Value>>>,
        cx: &mut Context<'_>,
    ) -> Result<Started<'a>, Error> {
        let Some(server) = &self.server else {
            return Err(Error::transport("MCP in-process: the handler is no Server"));
        };
        // The client's own stateless `_meta`: its context is ready.
        let served = match self.stateless.get() {
            Some((own, ctx)) if meta.as_ref().is_some_and(|m| Arc::ptr_eq(own, m)) => {
                Served::Stateless(ctx.clone())
            }
            _ => Served::Connection(RequestContext::with_session(self.session.clone())),
        };
        let call = ToolCall {
            id,
            name: name.into(),
            arguments: Some(arguments),
            meta,
            input_responses: None,
            request_state: None,
            as_task: false,
        };
        Ok(match server.start_call(call, served, cx) {
            Call::Done(answer) => Started::Answered(answer),
            Call::Running(running) => Started::Running(running),
        })
    }

    /// Makes the context of the stateless calls that carry `meta`, the
    /// client's own `_meta`, once; a `_meta` that fails the server's
    /// check fails each call that carries it instead.
    pub(crate) fn prepare_stateless(&self, meta: &Arc<Map<String, Value>>) {
        let ctx = RequestContext::with_session(self.session.clone());
        if self.server.is_some()
            && let Ok(ctx) = Server::stateless_context(meta, ctx)
        {
            let _ = self.stateless.set((Arc::clone(meta), ctx));
        }
    }
}

/// A `tools/call` [`start_call`](InProcessTransport::start_call) handed to
/// the server.
pub(crate) enum Started<'a> {
    /// Answered in its first poll: the result, or the server's JSON-RPC
    /// error.
    Answered(Result<CallToolResult, ErrorObject>),
    /// Still running; dropping it cancels the call.
    Running(BoxFuture<'a, Result<CallToolResult, ErrorObject>>),
}

impl McpClient {
    /// Connects in process to `handler` (a [`Server`] or any
    /// [`Handler`]), with default options.
    pub async fn in_process(handler: impl Handler) -> Result<Self, Error> {
        Self::connect(
            InProcessTransport::new(handler),
            ClientOptions::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
        )
        .await
    }
}

impl std::fmt::Debug for InProcessTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InProcessTransport")
    }
}

impl Transport for InProcessTransport {
    fn start(&self, inbox: Inbox) -> Result<(), Error> {
        self.inbox
            .set(inbox)
            .map_err(|_| Error::transport("the in-process transport was already started"))
    }

    fn send(&self, message: Value, _options: SendOptions) -> BoxFuture<'_, Result<(), Error>> {
        let method = message.get("method").and_then(Value::as_str);
        let is_request = method.is_some() && message.get("id").is_some_and(|id| !id.is_null());
        let handler = &self.handler;
        let ctx = RequestContext::with_session(self.session.clone());
        let future = std::panic::catch_unwind(AssertUnwindSafe(|| handler.handle(message, ctx)));
        Box::pin(async move {
            let future = future.map_err(|p| panicked(&*p))?;
            let reply = AssertUnwindSafe(future)
                .catch_unwind()
                .await
                .map_err(|p| panicked(&*p))?;
            match reply {
                Some(reply) => {
                    if let Some(inbox) = self.inbox.get() {
                        inbox.deliver(reply);
                    }
                    Ok(())
                }
                None if is_request => Err(Error::invalid_response(
                    "MCP in-process invalid response: the handler answered nothing",
                )),
                None => Ok(()),
            }
        })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), Error>> {
        self.session.close();
        Box::pin(futures::future::ready(Ok(())))
    }

    fn is_alive(&self) -> bool {
        true
    }
}

/// An in-process handler that panicked: a transport failure whose source is
/// the panic's message.
fn panicked(payload: &(dyn std::any::Any + Send)) -> Error {
    let message = crate::server::panic_message(payload);
    Error::transport("MCP in-process handler panicked").with_source(Panicked(message))
}
