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
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use rmcp::ErrorData;
use rmcp::model::{ClientNotification, ClientRequest, ProtocolVersion, ServerConfig, ServerResult};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, Service};

use crate::server::limits;
use crate::server::panic_message;
use crate::types::CallToolResult;

/// The user's rmcp handler with a timeout and panic capture around each request.
pub(super) struct Guarded<H> {
    pub(super) inner: Arc<H>,
    pub(super) timeout: Duration,
}

enum Outcome<T> {
    Done(T),
    Panicked(String),
    TimedOut,
}

impl<H: rmcp::ServerHandler> Guarded<H> {
    async fn run(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Outcome<Result<ServerResult, ErrorData>> {
        let ct = context.ct.clone();
        let inner = Arc::clone(&self.inner);
        // Created inside the future, so a panic in a synchronous part is caught too.
        let call = AssertUnwindSafe(async move {
            <H as Service<RoleServer>>::handle_request(&inner, request, context).await
        })
        .catch_unwind();
        tokio::select! {
            biased;
            // Cancelled by the client or the loop ending: rmcp drops the
            // answer anyway; the handler future is dropped at once.
            () = ct.cancelled() => Outcome::Done(Err(ErrorData::internal_error("request cancelled", None))),
            finished = tokio::time::timeout(self.timeout, call) => match finished {
                Ok(Ok(result)) => Outcome::Done(result),
                Ok(Err(panic)) => Outcome::Panicked(panic_message(panic.as_ref())),
                Err(_) => {
                    ct.cancel();
                    Outcome::TimedOut
                }
            },
        }
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
        let limit = limits::human(self.timeout);
        match (self.run(request, context).await, tool) {
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
            (Outcome::TimedOut, Some(tool)) => {
                tracing::warn!(tool, limit, "rmcp tool call timed out");
                error_result(format!(
                    "Tool \"{tool}\" timed out after {limit} and was stopped"
                ))
            }
            (Outcome::TimedOut, None) => Err(ErrorData::internal_error(
                format!("the handler did not answer within {limit}"),
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
