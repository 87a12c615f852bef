//! Answering the CLI's requests: permission questions, hooks, MCP messages,
//! elicitations and dialogs.
//!
//! Every request is answered exactly once, also when its handler fails
//! (a control error) or panics (a control error naming the panic), unless
//! the CLI withdraws it first (`control_cancel_request`) or the session
//! ends: then its handler future is dropped (a running tool's or
//! callback's cancellation token fires) and nothing is answered.
//!
//! **A task per request.** The reader registers each request as in flight
//! (so that it can be withdrawn) and spawns a Tokio task that computes and
//! writes its answer; the reader never awaits a handler. A handler runs as
//! any Tokio task does (`tokio::task::id()`, task-locals, `block_in_place`);
//! one that blocks its thread holds up a worker of the runtime, as any task
//! that blocks does.
//!
//! **Answers finished together leave together.** An answer ready at its
//! task's first poll is queued in the writer
//! ([`LineWriter::queue`](crate::transport::LineWriter::queue)), not
//! written: a task holds back the writing until its first poll is over,
//! and the reader while it routes the lines of one read; the last to let
//! go writes everything queued with one `write`
//! ([`LineWriter::flush_queued`](crate::transport::LineWriter::flush_queued)).
//! An answer that takes longer is sent on its own. So the answers to the
//! lines of one read leave in one `write`, not one each.

use std::future::{Future, poll_fn};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;

use futures::FutureExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, Span};

use super::Connection;
use crate::callbacks::{DialogContext, HookContext, PermissionContext};
use crate::mcp::__private::ToolCallReply;
use crate::mcp::__private::transport::RegisterError;
use crate::protocol::{
    CliRequest, ControlRequest, ControlResponse, ElicitationResponse, HookInput, McpMessageLine,
};
use crate::telemetry::{self, Outcome, ToolCallFields};

/// A request's work: its answer's payload, or the text of a control error.
/// Boxed: the task that runs it stays small.
type Work = Pin<Box<dyn Future<Output = Result<Payload, String>> + Send>>;

/// The payload of a success answer.
enum Payload {
    /// Any answer, as JSON.
    Value(Value),
    /// The JSON-RPC reply to a tool call of one of our own servers,
    /// written as `{"mcp_response": <reply>}` with no `Value` built.
    ToolCall(ToolCallReply),
}

impl Connection {
    /// Starts answering one CLI request (see the module docs) in a task of
    /// its own.
    pub(super) fn on_control_request(self: &Arc<Self>, request: ControlRequest) {
        let ControlRequest {
            request_id,
            request,
            ..
        } = request;
        let Some(token) = self.register(&request_id) else {
            return;
        };
        let span = self.span_of(&request_id, &request);
        let work: Work = match request {
            CliRequest::McpMessage(message) => {
                let conn = self.clone();
                Box::pin(async move { Ok(Payload::Value(conn.bridge.reply(message).await)) })
            }
            request => Box::pin(
                callback(self.clone(), request_id.clone(), request, token.clone())
                    .map(|outcome| outcome.map(Payload::Value)),
            ),
        };
        tokio::spawn(serve(self.clone(), request_id, token, work, span));
    }

    /// The span of a CLI request: a tool call's, or a control request's
    /// with what it asks.
    fn span_of(&self, request_id: &str, request: &CliRequest) -> Span {
        if let CliRequest::McpMessage(m) = request {
            let params = m.message.get("params");
            let method = m.message.get("method").and_then(Value::as_str);
            if method == Some("tools/call")
                && let Some(tool) = params.and_then(|p| p.get("name")).and_then(Value::as_str)
            {
                let fields = ToolCallFields {
                    server: &m.server_name,
                    tool,
                    request_id,
                    meta: params
                        .and_then(|p| p.get("_meta"))
                        .and_then(Value::as_object),
                    arguments: params
                        .and_then(|p| p.get("arguments"))
                        .filter(|_| self.tool_details),
                };
                return self.request_span(|session| telemetry::tool(session, fields));
            }
        }
        let subtype = request.subtype().unwrap_or("unknown");
        let span = self.request_span(|session| telemetry::control(session, subtype, request_id));
        if span.is_disabled() {
            return span;
        }
        match request {
            CliRequest::CanUseTool(r) => {
                span.record("gen_ai.tool.name", r.tool_name.as_str());
            }
            CliRequest::HookCallback(r) => {
                span.record("hook.callback_id", r.callback_id.as_str());
            }
            CliRequest::McpMessage(m) => {
                span.record("mcp.server.name", m.server_name.as_str());
                if let Some(method) = m.message.get("method").and_then(Value::as_str) {
                    span.record("mcp.method.name", method);
                }
            }
            _ => {}
        }
        span
    }

    /// Starts answering one `mcp_message` request in a task of its own: a
    /// tool call for one of our own servers straight from its text, typed
    /// from end to end; any other message as [`on_control_request`](Self::on_control_request)
    /// does.
    pub(super) fn on_mcp_message(self: &Arc<Self>, request: McpMessageLine) {
        let Some(call) = self
            .bridge
            .tool_call(&request.server_name, request.message.get())
        else {
            let id = request.request_id.clone();
            match request.into_control_request() {
                Some(request) => self.on_control_request(request),
                // Valid JSON that no `Value` holds (a number past f64).
                None => {
                    if let Some(token) = self.register(&id) {
                        let work: Work = Box::pin(async {
                            Err("the mcp_message's message does not decode as JSON".to_owned())
                        });
                        let span = self.request_span(|session| {
                            telemetry::control(session, "mcp_message", &id)
                        });
                        tokio::spawn(serve(self.clone(), id, token, work, span));
                    }
                }
            }
            return;
        };
        let request_id = request.request_id;
        let Some(token) = self.register(&request_id) else {
            return;
        };
        let fields = ToolCallFields {
            server: &request.server_name,
            tool: call.text().name(),
            request_id: &request_id,
            meta: call.text().meta(),
            arguments: call.text().arguments().filter(|_| self.tool_details),
        };
        let span = self.request_span(|session| telemetry::tool(session, fields));
        let conn = self.clone();
        let work: Work =
            Box::pin(async move { Ok(Payload::ToolCall(conn.bridge.call_tool(call).await)) });
        tokio::spawn(serve(self.clone(), request_id, token, work, span));
    }

    /// Records request `id` as in flight (so the CLI can withdraw it) and
    /// holds back the writing until its task's first poll is over: its
    /// withdrawal token. `None` when it is not to be answered here: the
    /// session ended, or another request with its id is being answered
    /// (which gets a control error).
    fn register(self: &Arc<Self>, id: &str) -> Option<CancellationToken> {
        let token = CancellationToken::new();
        match self.requests.register_theirs(id.to_owned(), token.clone()) {
            Ok(()) => {}
            Err(RegisterError::Duplicate(_)) => {
                // Its answer could not be told from the other's.
                let response =
                    ControlResponse::error(id, "a request with this id is already being answered");
                let conn = self.clone();
                tokio::spawn(async move { conn.answer(&response).await });
                return None;
            }
            // The session has ended: nobody reads an answer.
            Err(_) => return None,
        }
        self.hold();
        Some(token)
    }

    /// Holds back the writing of queued answers: a request's task until its
    /// first poll is over, the reader while it routes the lines it read.
    pub(super) fn hold(&self) {
        self.holds.fetch_add(1, Ordering::AcqRel);
    }

    /// Lets go of a [`hold`](Self::hold); the last to let go writes what
    /// is queued, with one `write`.
    pub(super) fn release(&self) {
        if self.holds.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.writer.flush_queued();
        }
    }

    async fn answer(&self, response: &(impl serde::Serialize + Sync)) {
        if let Err(e) = self.writer.send(response).await {
            tracing::debug!("answering the CLI failed: {e}");
        }
    }

    /// [`answer`](Self::answer) in a box of its own: for the rarer answers
    /// that may wait, so that a task that does not carries no room for it.
    fn answer_boxed(
        self: &Arc<Self>,
        response: Response,
    ) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let conn = self.clone();
        Box::pin(async move { conn.answer(&response).await })
    }
}

/// Answers one request, unless it is withdrawn first (or the session
/// ends): then its future is dropped, and nothing is answered. An answer
/// ready at the first poll is queued, and written by the last to let go of
/// its hold; a later one is sent at once. The work runs in `span`, which
/// records the outcome.
async fn serve(
    conn: Arc<Connection>,
    id: String,
    token: CancellationToken,
    work: Work,
    span: Span,
) {
    let mut work = AssertUnwindSafe(work.instrument(span.clone())).catch_unwind();
    let first = poll_fn(|cx| Poll::Ready(work.poll_unpin(cx))).await;
    let at_once = first.is_ready();
    let outcome = match first {
        Poll::Ready(outcome) => outcome,
        Poll::Pending => {
            conn.release();
            tokio::select! {
                biased;
                outcome = &mut work => outcome,
                () = token.cancelled() => {
                    telemetry::record_outcome(&span, Outcome::Withdrawn);
                    return;
                }
            }
        }
    };
    if !span.is_disabled() {
        telemetry::record_outcome(
            &span,
            match &outcome {
                Ok(Ok(Payload::ToolCall(reply))) => Outcome::ToolCall(reply),
                Ok(Ok(Payload::Value(payload))) => Outcome::Answered(payload),
                Ok(Err(_)) => Outcome::Failed,
                Err(_) => Outcome::Panicked,
            },
        );
    }
    let response = respond(&conn, id, outcome);
    let send = if at_once {
        // Queued, to leave with the others (see the module docs); sent, once
        // there is room, when the writer's buffer is full.
        let full = match response.as_ref().map(|r| conn.writer.queue(r)) {
            Some(Ok(queued)) => !queued,
            Some(Err(e)) => {
                tracing::debug!("answering the CLI failed: {e}");
                false
            }
            None => false,
        };
        conn.release();
        response.filter(|_| full)
    } else {
        response
    };
    if let Some(response) = send {
        conn.answer_boxed(response).await;
    }
}

/// The answer to request `id`, unless it was withdrawn meanwhile.
fn respond(
    conn: &Connection,
    id: String,
    outcome: std::thread::Result<Result<Payload, String>>,
) -> Option<Response> {
    conn.requests.complete_theirs(&id)?;
    Some(match outcome {
        Ok(Ok(Payload::Value(payload))) => Response::Control(ControlResponse::success(id, payload)),
        Ok(Ok(Payload::ToolCall(reply))) => Response::ToolCall { id, reply },
        Ok(Err(message)) => Response::Control(ControlResponse::error(id, message)),
        Err(panic) => Response::Control(ControlResponse::error(
            id,
            format!(
                "the SDK's handler panicked: {}",
                crate::mcp::__private::panic_message(&*panic)
            ),
        )),
    })
}

/// An answer to one CLI request, as it is written.
enum Response {
    Control(ControlResponse),
    /// The success answer to a tool call of one of our own servers:
    /// `{"type":"control_response","response":{"subtype":"success",
    /// "request_id":…,"response":{"mcp_response":<reply>}}}`, what
    /// [`ControlResponse::success`] of the same reply as a `Value` writes.
    ToolCall {
        id: String,
        reply: ToolCallReply,
    },
}

impl serde::Serialize for Response {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Line<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            response: Success<'a>,
        }
        #[derive(serde::Serialize)]
        struct Success<'a> {
            subtype: &'static str,
            request_id: &'a str,
            response: McpResponse<'a>,
        }
        #[derive(serde::Serialize)]
        struct McpResponse<'a> {
            mcp_response: &'a ToolCallReply,
        }
        match self {
            Self::Control(response) => response.serialize(serializer),
            Self::ToolCall { id, reply } => Line {
                kind: "control_response",
                response: Success {
                    subtype: "success",
                    request_id: id,
                    response: McpResponse {
                        mcp_response: reply,
                    },
                },
            }
            .serialize(serializer),
        }
    }
}

/// The payload of the success answer to a request for a callback (or to
/// one this SDK does not know), or the text of the control error. A
/// callback gets the request's withdrawal token.
async fn callback(
    conn: Arc<Connection>,
    request_id: String,
    request: CliRequest,
    cancel: CancellationToken,
) -> Result<Value, String> {
    let cancel = || cancel.clone();
    match request {
        CliRequest::McpMessage(message) => Ok(conn.bridge.reply(message).await),
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
            let mut result = callback(req.tool_name, req.input.clone(), ctx).await;
            // As the TypeScript SDK (`{...result, toolUseID: request.tool_use_id}`).
            result.set_tool_use_id(req.tool_use_id);
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
