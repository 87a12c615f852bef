//! The rules rmcp leaves to its users, enforced inside its own service loop.
//!
//! rmcp runs each request in a task of its own; a handler that panics kills
//! that task and nothing answers the request, and a handler that never
//! finishes is never stopped. [`Guarded`] wraps the user's handler as the
//! rmcp [`Service`] the loop drives, so every request it starts ends with an
//! answer: a panic or a timeout of `tools/call` is an `isError` result the
//! model can read (as with a native [`Server`](crate::Server)); of any other
//! request, a `-32603` error.

use std::borrow::Cow;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::FutureExt;
use rmcp::ErrorData;
use rmcp::model::{
    ClientNotification, ClientRequest, ErrorCode, ProtocolVersion, ServerConfig, ServerResult,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, Service};

use crate::server::contain::{self, Deadline, Expiry, Failure, ProgressClock};
use crate::server::panic_message;
use crate::types::CallToolResult;

/// How long a request may run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// Without progress (or with a fixed deadline: in all).
    pub(super) timeout: Duration,
    /// With [`RmcpServer::reset_timeout_on_progress`](super::RmcpServer::reset_timeout_on_progress):
    /// each progress report restarts `timeout`, up to this after the start.
    pub(super) progress_cap: Option<Duration>,
}

/// The progress clocks of the requests in flight that carry a progress
/// token, by the token's JSON text: the guard starts one per request, the
/// link's pump ticks it on each `notifications/progress` the handler sends.
#[derive(Debug, Default)]
pub(super) struct Clocks(Mutex<HashMap<String, Arc<ProgressClock>>>);

impl Clocks {
    /// Records progress for `token` (the JSON text of a progress token).
    pub(super) fn tick(&self, token: &str) {
        if let Some(clock) = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(token)
        {
            clock.tick();
        }
    }

    fn start(self: &Arc<Self>, token: String) -> (Arc<ProgressClock>, ForgetClock) {
        let clock = ProgressClock::start();
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(token.clone(), Arc::clone(&clock));
        (
            clock,
            ForgetClock {
                clocks: Arc::clone(self),
                token,
            },
        )
    }
}

/// Removes a request's clock when its handling ends, however it ends.
struct ForgetClock {
    clocks: Arc<Clocks>,
    token: String,
}

impl Drop for ForgetClock {
    fn drop(&mut self) {
        self.clocks
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.token);
    }
}

/// The user's rmcp handler with a timeout and panic capture around each request.
pub(super) struct Guarded<H> {
    pub(super) inner: Arc<H>,
    pub(super) limits: Limits,
    pub(super) clocks: Arc<Clocks>,
}

enum Outcome<T> {
    Done(T),
    Panicked(String),
    TimedOut(Expiry),
}

impl<H: rmcp::ServerHandler> Guarded<H> {
    async fn run(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Outcome<Result<ServerResult, ErrorData>> {
        let ct = context.ct.clone();
        let Limits {
            timeout,
            progress_cap,
        } = self.limits;
        // With a progress token and a cap, progress the handler reports
        // (seen by the link's pump) restarts the timeout.
        let token = progress_cap.and_then(|_| context.meta.get_progress_token());
        let token = token.and_then(|t| serde_json::to_string(&t).ok());
        let (deadline, _forget) = match (token, progress_cap) {
            (Some(token), Some(cap)) => {
                let (clock, forget) = self.clocks.start(token);
                (Deadline::following(timeout, clock, cap), Some(forget))
            }
            _ => (Deadline::fixed(timeout), None),
        };
        let inner = Arc::clone(&self.inner);
        let call = contain::run(&deadline, move || async move {
            <H as Service<RoleServer>>::handle_request(&inner, request, context).await
        });
        tokio::select! {
            biased;
            // Cancelled by the client or the loop ending: rmcp drops the
            // answer anyway; the handler future is dropped at once.
            () = ct.cancelled() => Outcome::Done(Err(ErrorData::internal_error("request cancelled", None))),
            finished = call => match finished {
                Ok(result) => Outcome::Done(result),
                Err(Failure::Panicked(message)) => Outcome::Panicked(message),
                Err(Failure::TimedOut(expiry)) => {
                    ct.cancel();
                    Outcome::TimedOut(expiry)
                }
            },
        }
    }
}

impl<H: rmcp::ServerHandler> Guarded<H> {
    /// rmcp's tool router answers a call to a tool it does not have with
    /// `-32602` "tool not found"; the bridge rules (and a native server)
    /// say `-32601`. Only that error, for a tool the handler does not know
    /// (`get_tool`, which `#[tool_handler]` implements), is translated.
    fn is_unknown_tool(&self, e: &ErrorData, tool: &str) -> bool {
        e.code == ErrorCode::INVALID_PARAMS
            && e.message == "tool not found"
            && self.inner.get_tool(tool).is_none()
    }
}

impl<H: rmcp::ServerHandler> Service<RoleServer> for Guarded<H> {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let tool = match &request {
            ClientRequest::CallToolRequest(call) => Some(call.params.name.to_string()),
            _ => None,
        };
        match (self.run(request, context).await, tool) {
            (Outcome::Done(Err(e)), Some(tool)) if self.is_unknown_tool(&e, &tool) => {
                Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("Unknown tool: {tool}"),
                    None,
                ))
            }
            (Outcome::Done(result), _) => result,
            (Outcome::Panicked(message), Some(tool)) => {
                tracing::error!(tool, panic = %message, "rmcp tool handler panicked");
                error_result(format!("Tool \"{tool}\" panicked: {message}"))
            }
            (Outcome::Panicked(message), None) => {
                tracing::error!(panic = %message, "rmcp handler panicked");
                Err(ErrorData::internal_error(
                    format!("the handler panicked: {message}"),
                    None,
                ))
            }
            (Outcome::TimedOut(expiry), Some(tool)) => {
                tracing::warn!(tool, ?expiry, "rmcp tool call timed out");
                error_result(format!(
                    "Tool \"{tool}\" {} and was stopped",
                    expiry.describe()
                ))
            }
            (Outcome::TimedOut(expiry), None) => Err(ErrorData::internal_error(
                format!("the handler {}", expiry.describe()),
                None,
            )),
        }
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let inner = Arc::clone(&self.inner);
        let handled = AssertUnwindSafe(async move {
            <H as Service<RoleServer>>::handle_notification(&inner, notification, context).await
        })
        .catch_unwind()
        .await;
        handled.unwrap_or_else(|panic| {
            let message = panic_message(panic.as_ref());
            tracing::error!(panic = %message, "rmcp notification handler panicked");
            Ok(())
        })
    }

    fn get_info(&self) -> ServerConfig {
        <H as Service<RoleServer>>::get_info(&self.inner)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        <H as Service<RoleServer>>::supported_protocol_versions(&self.inner)
    }
}

/// A `tools/call` error result in rmcp's type, built from ours.
fn error_result(message: String) -> Result<ServerResult, ErrorData> {
    serde_json::from_value(CallToolResult::error(message).into_value())
        .map(ServerResult::CallToolResult)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}
