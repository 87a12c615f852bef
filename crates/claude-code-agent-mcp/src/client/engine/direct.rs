//! The client's `tools/call` straight to an in-process [`Server`](crate::Server)
//! (an [`InProcessTransport`] connected to one), skipping JSON-RPC.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tracing::{Instrument, Span};

use super::Inner;
use crate::client::Error;
use crate::client::deadline::{self, Limits};
use crate::client::in_process::{InProcessTransport, Started};
use crate::client::options::RequestOptions;
use crate::spans;
use crate::types::CallToolResult;

impl Inner {
    /// Whether a `tools/call` with `options` may go straight to the
    /// in-process server ([`call_tool_direct`](Self::call_tool_direct)):
    /// the client has one, and the call needs nothing only the request
    /// table gives (a timeout that progress restarts), and it cannot be
    /// asked for input the client would answer (stateless revision: the
    /// retry that carries the answers goes as a request).
    pub(crate) fn can_call_direct(&self, options: &RequestOptions) -> bool {
        self.direct
            .as_ref()
            .is_some_and(InProcessTransport::is_direct)
            && !options.reset_timeout_on_progress
            && !options.unbounded
            && (!self.is_stateless() || !self.answers_input())
    }

    /// `tools/call` straight to the in-process server (when
    /// [`can_call_direct`](Self::can_call_direct)): the typed call that the
    /// server's JSON-RPC dispatch decodes a request into, its answer taken
    /// as it is. The client keeps its timeout, its close and its
    /// cancellation (dropping the future drops the call, whose token
    /// fires).
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
            Ok(outcome) => answered(outcome),
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

/// Records how a direct call ended on its span.
fn record(span: &Span, outcome: &Result<CallToolResult, Error>) {
    match outcome {
        Ok(result) if result.is_error => spans::outcome(span, spans::Outcome::ToolError),
        Ok(_) => spans::outcome(span, spans::Outcome::Ok),
        Err(error) => super::failed(span, error),
    }
}

/// A direct call's answer: a question (`input_required`) is an error
/// here, where the client has no handler to answer it.
fn answered(outcome: Result<CallToolResult, Error>) -> Result<CallToolResult, Error> {
    match outcome {
        Ok(result) if result.is_input_required() => {
            Err(crate::client::input::unanswerable("tools/call"))
        }
        outcome => outcome,
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
                let id = inner.next_id();
                // The request's span (a check, when disabled), current
                // while the server starts the call: its span is a child.
                let span = inner.span(spans::Target::new("tools/call", Some(this.name)), &id);
                let _entered = span.enter();
                #[cfg(feature = "opentelemetry")]
                let meta = crate::trace_context::inject_shared(&span, meta);
                let id = id.to_value();
                match direct.start_call(&id, this.name, arguments, meta, cx) {
                    Err(error) => {
                        super::failed(&span, &error);
                        return Poll::Ready(Err(error));
                    }
                    Ok(Started::Answered(answer)) => {
                        let outcome = answered(answer.map_err(Error::from));
                        record(&span, &outcome);
                        return Poll::Ready(outcome);
                    }
                    Ok(Started::Running(running)) if span.is_disabled() => {
                        Box::pin(inner.finish_direct(running, limits)) as BoxFuture<'_, _>
                    }
                    Ok(Started::Running(running)) => {
                        let finish = inner.finish_direct(running, limits);
                        let span = span.clone();
                        Box::pin(async move {
                            let outcome = finish.instrument(span.clone()).await;
                            record(&span, &outcome);
                            outcome
                        })
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
