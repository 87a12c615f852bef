//! The in-process transport: calls a [`Handler`] directly.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::Error;
use super::deadline::{self, Limits};
use super::engine::Inner;
use super::error::Panicked;
use super::options::RequestOptions;
use super::transport::{Inbox, SendOptions, Transport};
use crate::server::{DirectCall, Handler, RequestContext, Server, Session};
use crate::types::{CallToolResult, PROTOCOL_VERSION_META};

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
/// `tools/call` skips JSON-RPC altogether: the server serves the call as it
/// would the request (arguments validated, timeout, panic capture,
/// cancellation, the result cap, the stateless revision's `_meta`) and
/// hands back the typed result.
#[derive(Clone)]
pub struct InProcessTransport {
    handler: Arc<dyn Handler>,
    /// The handler when it is our [`Server`]: tool calls go to it directly.
    server: Option<Server>,
    /// The context of stateless calls that carry the client's own `_meta`
    /// (the same `Arc` every call): built and checked once, as a server
    /// would for each request.
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

    /// `tools/call` served by the server without the JSON-RPC envelope,
    /// started at once (the handler polled once with `cx`): the outcome
    /// the client would decode from the reply, or the call still running.
    fn start_call<'a>(
        &'a self,
        id: &Value,
        name: &str,
        arguments: Value,
        meta: Option<Arc<Map<String, Value>>>,
        cx: &mut Context<'_>,
    ) -> Result<DirectCall<'a>, Error> {
        let Some(server) = &self.server else {
            return Err(Error::transport("MCP in-process: the handler is no Server"));
        };
        let plain = || RequestContext::with_session(self.session.clone());
        // The client's own stateless `_meta`, checked once: no lookup.
        let cached = self
            .stateless
            .get()
            .filter(|(c, _)| meta.as_ref().is_some_and(|m| Arc::ptr_eq(c, m)));
        let (ctx, prepared) = match (&meta, cached) {
            (_, Some((_, ctx))) => (ctx.clone(), true),
            (Some(m), None) if m.contains_key(PROTOCOL_VERSION_META) => {
                match self.stateless.get() {
                    Some(_) => (plain(), false),
                    // A `_meta` that fails the check fails each call that carries it.
                    None => match Server::stateless_context(m, plain()) {
                        Ok(ctx) => {
                            let _ = self.stateless.set((Arc::clone(m), ctx.clone()));
                            (ctx, true)
                        }
                        Err(_) => (plain(), false),
                    },
                }
            }
            _ => (plain(), false),
        };
        Ok(server.start_call_direct(id, name, Some(arguments), meta, ctx, prepared, cx))
    }
}

impl Inner {
    /// Whether a `tools/call` with `options` may go straight to the
    /// in-process server ([`call_tool_direct`](Self::call_tool_direct)):
    /// the client has one, and the call needs nothing only the request
    /// table gives (a timeout that progress restarts).
    pub(crate) fn can_call_direct(&self, options: &RequestOptions) -> bool {
        self.direct
            .as_ref()
            .is_some_and(InProcessTransport::is_direct)
            && !options.reset_timeout_on_progress
            && !options.unbounded
    }

    /// `tools/call` straight to the in-process server (when
    /// [`can_call_direct`](Self::can_call_direct)). Resolves to what
    /// [`request`](Self::request) and decoding the result would: the
    /// server runs the same code (validation, timeout, panic capture,
    /// cap), the client keeps its timeout, its close and its cancellation
    /// (dropping the future drops the call, whose token fires).
    pub(crate) fn call_tool_direct<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
        options: RequestOptions,
    ) -> DirectCallFuture<'a> {
        let limits = Limits {
            timeout: options.timeout.unwrap_or(self.options.request_timeout),
            cap: options.max_total_timeout,
            reset_on_progress: false,
        };
        DirectCallFuture {
            inner: self,
            name,
            state: DirectState::Start {
                arguments,
                meta: self.direct_meta(options.meta),
                limits,
            },
        }
    }

    /// The rest of a direct call its first poll left running, within the
    /// client's limits and until the client closes. Dropping this future
    /// drops the call, whose token fires.
    async fn finish_direct(
        &self,
        running: BoxFuture<'_, Result<CallToolResult, crate::jsonrpc::ErrorObject>>,
        limits: Limits,
    ) -> Result<CallToolResult, Error> {
        let exchange = async {
            tokio::select! {
                biased;
                outcome = running => outcome.map_err(Error::from),
                () = self.closing.cancelled() => Err(self.closed_error()),
            }
        };
        match deadline::within(exchange, limits, None).await {
            Ok(outcome) => outcome,
            Err(expired) => Err(limits.error("tools/call", expired)),
        }
    }

    /// The `_meta` a request with `meta` carries (as `with_meta` puts it in
    /// the params), shared: the stateless `_meta` itself when the request
    /// adds none.
    fn direct_meta(&self, meta: Option<Map<String, Value>>) -> Option<Arc<Map<String, Value>>> {
        let stateless = self.stateless_meta.get();
        match (stateless, meta) {
            (None, None) => None,
            (Some(stateless), None) => Some(Arc::clone(stateless)),
            (stateless, Some(meta)) => {
                let mut all = stateless.map(|s| (**s).clone()).unwrap_or_default();
                all.extend(meta);
                Some(Arc::new(all))
            }
        }
    }
}

/// A `tools/call` on the in-process direct path
/// ([`Inner::call_tool_direct`]), written out rather than an `async fn`:
/// the call's state is a few words, not the kilobyte that nested `async`
/// functions hold (and copy) for arguments, options and locals.
///
/// Started synchronously in its first poll (the server gets the task's
/// `Context`): most calls are answered there, with no timer armed and
/// nothing boxed. A call the first poll leaves running continues in one
/// boxed future within the client's limits ([`Inner::finish_direct`]).
pub(crate) struct DirectCallFuture<'a> {
    inner: &'a Inner,
    name: &'a str,
    state: DirectState<'a>,
}

enum DirectState<'a> {
    /// Not polled yet.
    Start {
        arguments: Value,
        meta: Option<Arc<Map<String, Value>>>,
        limits: Limits,
    },
    /// Left running by its first poll.
    Running(BoxFuture<'a, Result<CallToolResult, Error>>),
    /// Answered.
    Done,
}

impl Future for DirectCallFuture<'_> {
    type Output = Result<CallToolResult, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut running = match std::mem::replace(&mut this.state, DirectState::Done) {
            DirectState::Running(running) => running,
            DirectState::Done => panic!("a tools/call future polled after it completed"),
            DirectState::Start {
                arguments,
                meta,
                limits,
            } => {
                let inner = this.inner;
                let Some(direct) = inner.direct.as_ref() else {
                    return Poll::Ready(Err(Error::transport(
                        "MCP in-process: no direct transport",
                    )));
                };
                if inner.is_closed() {
                    return Poll::Ready(Err(inner.closed_error()));
                }
                let id = inner.next_id().to_value();
                match direct.start_call(&id, this.name, arguments, meta, cx) {
                    Err(error) => return Poll::Ready(Err(error)),
                    Ok(DirectCall::Done(outcome)) => {
                        return Poll::Ready(outcome.map_err(Error::from));
                    }
                    Ok(DirectCall::Running(running)) => {
                        Box::pin(inner.finish_direct(running, limits))
                    }
                }
            }
        };
        let poll = running.as_mut().poll(cx);
        if poll.is_pending() {
            this.state = DirectState::Running(running);
        }
        poll
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
