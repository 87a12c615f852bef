//! Answering the CLI's requests: permission questions, hooks, MCP messages,
//! elicitations and dialogs.
//!
//! Every request is answered exactly once, also when its handler fails
//! (a control error) or panics (a control error naming the panic), unless
//! the CLI withdraws it first (`control_cancel_request`) or the session
//! ends: then its handler future is dropped (a running tool's or
//! callback's cancellation token fires) and nothing is answered.
//!
//! **Inline first poll.** The reader does not spawn a task per request: it
//! polls the request's future once, right where it read it. Most answers
//! are ready at once (a quick tool, `ping`, `tools/list`, an
//! acknowledgement); theirs is queued in the writer by that same poll, with
//! no task, no hand-off between threads and no wakeup, and the reader
//! writes everything it queued with one `write` just before it would wait
//! for more input (so answers to the lines of one read leave together, and
//! none waits for the next line). A request that is not done on
//! its first poll is registered as in flight (so it can be withdrawn) and
//! moved, as it is, into a task of its own. The reader never *awaits* a
//! handler; a handler doing seconds of blocking work in its first poll
//! would still hold the reader (a thread of its own, inside the runtime's
//! context but not one of its workers) up: use `spawn_blocking` for such
//! work.
//!
//! **Blocked tool calls.** A `tools/call` carries a watch of the MCP
//! crate's watchdog: a handler that blocks its thread past the tool's
//! timeout is answered on time with its timeout result, from the watchdog
//! ([`answer_on_timeout`]), and withdrawn; its own answer, when the thread
//! is free, is dropped. If it blocked in its first poll, the reader
//! reads nothing more until then, but the CLI has its answer.

use std::future::{Future, poll_fn};
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use futures::FutureExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Connection;
use crate::callbacks::{DialogContext, HookContext, PermissionContext};
use crate::mcp::__private::ExternalWatch;
use crate::protocol::{
    CliRequest, ControlRequest, ControlResponse, ElicitationResponse, HookInput, McpMessageResponse,
};

impl Connection {
    /// Starts answering one CLI request (see the module docs): its future
    /// polled once here, then, if it is not done, in a task of its own.
    pub(super) fn on_control_request(self: &Arc<Self>, request: ControlRequest) {
        let ControlRequest {
            request_id,
            request,
            ..
        } = request;
        let mut answering = Box::pin(serve(self.clone(), request_id, request));
        // The no-op waker is never needed: a future that is pending after
        // this poll is polled again at once by its task, with the task's
        // waker.
        match answering
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            // Answered at once: queued, and written with the other answers
            // of the lines read together before the reader waits (the
            // reader flushes). If the buffer is full: sent by a task.
            Poll::Ready(Some(response)) => match self.writer.queue(&response) {
                Ok(true) => {}
                Ok(false) => {
                    let conn = self.clone();
                    tokio::spawn(async move { conn.answer(&response).await });
                }
                Err(e) => tracing::debug!("answering the CLI failed: {e}"),
            },
            Poll::Ready(None) => {}
            Poll::Pending => {
                let conn = self.clone();
                tokio::spawn(async move {
                    if let Some(response) = answering.await {
                        conn.answer(&response).await;
                    }
                });
            }
        }
    }

    async fn answer(&self, response: &ControlResponse) {
        if let Err(e) = self.writer.send(response).await {
            tracing::debug!("answering the CLI failed: {e}");
        }
    }
}

/// Computes the answer to one request, unless the request is withdrawn
/// first (or the session has ended): then `None`, and nothing is answered.
async fn serve(conn: Arc<Connection>, id: String, request: CliRequest) -> Option<ControlResponse> {
    // Callbacks get the withdrawal token up front; an MCP message needs one
    // only if it is still running after its first poll, or if it is a
    // watched tool call (the watchdog withdraws it when it answers).
    let mut token = match &request {
        CliRequest::McpMessage(_) => None,
        _ => Some(CancellationToken::new()),
    };
    let watch = match &request {
        CliRequest::McpMessage(m) if m.message.get("method") == Some(&"tools/call".into()) => {
            let token = token.get_or_insert_with(CancellationToken::new).clone();
            ExternalWatch::new(answer_on_timeout(&conn, id.clone(), token))
        }
        _ => None,
    };
    let mut work = pin!(
        AssertUnwindSafe(answer(
            &conn,
            id.clone(),
            request,
            token.clone(),
            watch.as_ref()
        ))
        .catch_unwind()
    );
    let mut withdrawn = None;
    let outcome = poll_fn(|cx| {
        if let Poll::Ready(outcome) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(outcome));
        }
        let withdrawn = match &mut withdrawn {
            Some(withdrawn) => withdrawn,
            None if watch.as_ref().is_some_and(ExternalWatch::answered) => {
                // Its first poll blocked past the timeout: answered.
                return Poll::Ready(None);
            }
            None => {
                // Not done at once: from now on it can be withdrawn.
                let token = token.get_or_insert_with(CancellationToken::new);
                if conn
                    .requests
                    .register_theirs(id.clone(), token.clone())
                    .is_err()
                {
                    // The session has ended (or the CLI reused an id
                    // still in flight): nobody reads this answer.
                    return Poll::Ready(None);
                }
                withdrawn.insert(Box::pin(token.clone().cancelled_owned()))
            }
        };
        withdrawn.as_mut().poll(cx).map(|()| None)
    })
    .await;
    let Some(outcome) = outcome else {
        if watch.as_ref().is_some_and(ExternalWatch::answered) {
            // Registered after the watchdog took it off the table: out.
            conn.requests.complete_theirs(&id);
        }
        return None;
    };
    // Answered by the watchdog, or withdrawn meanwhile? Then this answer
    // is not expected.
    if watch.as_ref().is_some_and(|w| !w.settle()) {
        return None;
    }
    if withdrawn.is_some() && conn.requests.complete_theirs(&id).is_none() {
        return None;
    }
    Some(match outcome {
        Ok(Ok(payload)) => ControlResponse::success(id, payload),
        Ok(Err(message)) => ControlResponse::error(id, message),
        Err(panic) => ControlResponse::error(
            id,
            format!(
                "the SDK's handler panicked: {}",
                crate::mcp::__private::panic_message(&*panic)
            ),
        ),
    })
}

/// What the watchdog does when a tool call's handler blocks its thread past
/// the call's timeout (called from the watchdog's thread, outside the
/// runtime): the call is withdrawn (its handler future is dropped once
/// the thread is free) and its timeout result is sent to the CLI.
fn answer_on_timeout(
    conn: &Arc<Connection>,
    id: String,
    token: CancellationToken,
) -> impl FnOnce(Value) + Send + 'static {
    let conn = Arc::downgrade(conn);
    let runtime = tokio::runtime::Handle::current();
    move |reply| {
        let Some(conn) = conn.upgrade() else {
            return;
        };
        conn.requests.complete_theirs(&id);
        token.cancel();
        let response = ControlResponse::success(id, McpMessageResponse::new(reply).into_value());
        runtime.spawn(async move { conn.answer(&response).await });
    }
}

/// The payload of the success answer to one request, or the text of the
/// control error.
async fn answer(
    conn: &Connection,
    request_id: String,
    request: CliRequest,
    cancel: Option<CancellationToken>,
    watch: Option<&ExternalWatch>,
) -> Result<Value, String> {
    // Callbacks always get the request's token (see `serve`).
    let cancel = || cancel.clone().unwrap_or_default();
    match request {
        CliRequest::McpMessage(message) => Ok(conn.bridge.reply(message, watch).await),
        CliRequest::CanUseTool(req) => {
            let Some(callback) = &conn.callbacks.can_use_tool else {
                return Err("no permission callback is registered in this SDK session".into());
            };
            let ctx = PermissionContext {
                tool_use_id: req.tool_use_id.clone(),
                suggestions: req.permission_suggestions.clone().unwrap_or_default(),
                blocked_path: req.blocked_path.clone(),
                decision_reason: req.decision_reason.clone(),
                cancellation: cancel(),
                raw: req.to_value(),
            };
            let result = callback(req.tool_name, req.input.clone(), ctx).await;
            Ok(result.into_answer(req.input))
        }
        CliRequest::HookCallback(req) => {
            let Some(callback) = conn.callbacks.hook(&req.callback_id) else {
                return Err(format!("no hook callback with id {:?}", req.callback_id));
            };
            let ctx = HookContext {
                tool_use_id: req.tool_use_id,
                cancellation: cancel(),
            };
            let output = callback(HookInput::from_value(req.input), ctx).await;
            serde_json::to_value(output).map_err(|e| e.to_string())
        }
        CliRequest::Elicitation(req) => {
            // No callback: declined, as the TypeScript SDK does.
            let answer = match &conn.callbacks.on_elicitation {
                Some(callback) => callback(req, dialog_context(request_id, cancel())).await,
                None => ElicitationResponse::decline(),
            };
            Ok(answer.to_value())
        }
        CliRequest::UserDialog(req) => {
            // The CLI sends only the kinds `on_user_dialog` declared; an
            // error answer is discarded by the CLI, which leaves the dialog
            // to its deadline, as the TypeScript SDK's silence does.
            let Some(callback) = &conn.callbacks.on_user_dialog else {
                return Err(format!(
                    "no dialog callback is registered in this SDK session (dialog {:?})",
                    req.dialog_kind
                ));
            };
            let answer = callback(req, dialog_context(request_id, cancel())).await;
            serde_json::to_value(answer).map_err(|e| e.to_string())
        }
        CliRequest::Unknown(v) => Err(format!(
            "unsupported control request subtype {}",
            v.get("subtype").unwrap_or(&Value::Null)
        )),
    }
}

fn dialog_context(request_id: String, cancellation: CancellationToken) -> DialogContext {
    DialogContext {
        request_id,
        cancellation,
    }
}
