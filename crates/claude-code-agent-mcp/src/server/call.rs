//! `tools/call`: find the tool, validate the arguments, run the handler
//! under its deadline (contained: `contain.rs`), honour cancellation,
//! check and cap the result.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio::time::Instant;

use super::cap;
use super::contain::{self, Deadline, Expiry, Failure, ProgressClock, Started};
use super::context::{CallContext, Cancel, RequestContext};
use super::session::Session;
use super::watchdog::Timing;
use super::{Registered, ServerInner};
use crate::jsonrpc::{self, ErrorObject, METHOD_NOT_FOUND, RequestId};
use crate::types::{CallToolResult, json_type_name};

/// How a handler run ended.
enum Outcome {
    Done(CallToolResult),
    Panicked(String),
    TimedOut(Expiry),
    Cancelled,
}

pub(crate) async fn call_tool(
    server: &ServerInner,
    id: &Value,
    mut params: Map<String, Value>,
    ctx: RequestContext,
) -> Result<Value, ErrorObject> {
    let name = match params.remove("name") {
        Some(Value::String(name)) => name,
        Some(other) => {
            return Err(ErrorObject::invalid_params(format!(
                "tools/call: \"name\" must be a string, not {}",
                json_type_name(&other)
            )));
        }
        None => return Err(ErrorObject::invalid_params("tools/call needs a \"name\"")),
    };
    let arguments = params.remove("arguments");
    let meta = match params.remove("_meta") {
        Some(Value::Object(meta)) => Some(Arc::new(meta)),
        _ => None,
    };
    let result = call_named(server, id, &name, arguments, meta, ctx).await?;
    Ok(result.into_value())
}

/// `tools/call` of the tool `name` with `arguments` (absent or `null`: `{}`)
/// and the request's `_meta`: what [`call_tool`] does once the params are
/// taken apart, the result still typed.
pub(crate) async fn call_named(
    server: &ServerInner,
    id: &Value,
    name: &str,
    arguments: Option<Value>,
    meta: Option<Arc<Map<String, Value>>>,
    ctx: RequestContext,
) -> Result<CallToolResult, ErrorObject> {
    let mut parts = Some((arguments, meta, ctx));
    let call = std::future::poll_fn(|cx| match parts.take() {
        Some((arguments, meta, ctx)) => {
            Poll::Ready(start_named(server, id, name, arguments, meta, ctx, cx))
        }
        None => Poll::Pending, // never: the first poll is ready
    })
    .await;
    match call {
        Call::Done(outcome) => outcome,
        Call::Running(running) => Ok(running.await),
    }
}

/// A tool call [`start_named`]: answered on the handler's first poll, or
/// running (the rest of it boxed once, so nothing large is moved).
pub(crate) enum Call<'a> {
    Done(Result<CallToolResult, ErrorObject>),
    Running(BoxFuture<'a, CallToolResult>),
}

/// Starts `tools/call` of `name`, synchronously, polling the handler once
/// with `cx` (the caller's task): see [`call_named`]. The in-process
/// client's fast path (`Server::start_call_direct`) calls this directly.
pub(crate) fn start_named<'a>(
    server: &'a ServerInner,
    id: &Value,
    name: &str,
    arguments: Option<Value>,
    meta: Option<Arc<Map<String, Value>>>,
    ctx: RequestContext,
    cx: &mut Context<'_>,
) -> Call<'a> {
    let Some(tool) = server.tool(name) else {
        // -32601 naming the tool; see the module docs for why not -32602.
        return Call::Done(Err(ErrorObject::new(
            METHOD_NOT_FOUND,
            format!("Unknown tool: {name}"),
        )));
    };
    let arguments = match arguments {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(args @ Value::Object(_)) => args,
        Some(other) => {
            return Call::Done(Err(ErrorObject::invalid_params(format!(
                "tools/call: \"arguments\" must be an object, not {}",
                json_type_name(&other)
            ))));
        }
    };
    start(server, tool, id, arguments, meta, ctx, cx)
}

/// Validates the arguments, makes the handler's future and polls it once.
///
/// Cancellation: the call's [`Cancel`] exists from the start (the handler's
/// context carries it; its token is made only when the handler asks for
/// one, or here when the first poll leaves the call running), but the
/// call is recorded in its session only when
/// the first poll leaves it running — a call that finishes there never
/// touches the session's table. A `notifications/cancelled` that arrives
/// while the first poll runs (another thread) finds no call in the table;
/// the session notes every cancel before looking, and `begin_call` looks at
/// those noted since `mark` after recording the call, so one of the two
/// always sees the other (see `Session::begin_call`). A cancel that came
/// before the call started (it overtook its request: over HTTP they come
/// on two connections, over stdio the request waits for its task) is
/// remembered by the session for a short while, and the call ends as
/// cancelled without running its handler
/// (`Session::cancelled_before_start`).
fn start<'a>(
    server: &'a ServerInner,
    registered: Arc<Registered>,
    id: &Value,
    arguments: Value,
    meta: Option<Arc<Map<String, Value>>>,
    mut ctx: RequestContext,
    cx: &mut Context<'_>,
) -> Call<'a> {
    let watch = ctx.watch.take();
    let parts = ctx.into_parts();
    let (session, stream) = (parts.session, parts.stream);
    let tool = &registered.tool;
    let cap = tool.max_result_chars.unwrap_or(server.max_result_chars);
    let structured = tool.output.is_some();
    if let Err(problems) = tool.input.check(&arguments) {
        // The message quotes the model's arguments: it is capped like any result.
        let mut result = CallToolResult::error(format!(
            "Invalid arguments for tool \"{}\":\n{problems}",
            tool.info.name
        ));
        cap::cap_result(&mut result, cap, &tool.info.name, structured);
        return Call::Done(Ok(result));
    }

    let limit = tool.timeout.unwrap_or(server.tool_timeout);
    // Where the call is recorded for `notifications/cancelled`. The mark
    // first: a cancel noted before it is seen here, one noted after it by
    // `begin_call`.
    let home = session.as_ref().map(Session::calls_home);
    let mark = home.map(Session::cancel_mark);
    if home.is_some_and(|s| s.cancelled_before_start(id)) {
        // Its cancel overtook it: the handler never runs.
        return Call::Done(Ok(conclude(tool, Outcome::Cancelled, limit, cap)));
    }
    let (deadline, clock) = match tool.progress_cap.or(server.progress_cap) {
        Some(progress_cap) => {
            let clock = ProgressClock::start();
            let deadline = Deadline::following(limit, Arc::clone(&clock), progress_cap);
            (deadline, Some(clock))
        }
        None => (Deadline::fixed(limit), None),
    };
    if let Some(watch) = &watch {
        // The backstop, should the handler block its thread (watchdog.rs).
        let timing = Timing {
            start: Instant::now(),
            deadline: deadline.clone(),
        };
        let (id, registered) = (id.clone(), Arc::clone(&registered));
        watch.arm(
            timing,
            Box::new(move |expiry| {
                let result = conclude(&registered.tool, Outcome::TimedOut(expiry), limit, cap);
                jsonrpc::response(&id, result.into_value())
            }),
        );
    }
    // Made with the handler's context, if it takes one.
    let mut cancel: Option<Arc<Cancel>> = None;
    let ctx = CallContext {
        request_id: id,
        tool: &registered.name,
        meta,
        session: &session,
        stream,
        clock: &clock,
        cancel: &mut cancel,
        access_token: parts.access_token,
    };
    let handler = &tool.handler;
    let running = match contain::start(|| handler(arguments, ctx, structured), cx) {
        Started::Finished(finished) => {
            let outcome = match finished {
                Ok(result) => Outcome::Done(result),
                Err(failure) => {
                    // The handler future is gone: its token fires.
                    if let Some(cancel) = &cancel {
                        cancel.cancel();
                    }
                    Outcome::from(failure)
                }
            };
            return Call::Done(Ok(conclude(tool, outcome, limit, cap)));
        }
        Started::Running(running) => running,
    };
    let cancel = cancel.unwrap_or_default();

    // Recorded while the call runs, so notifications/cancelled finds it.
    let in_flight = match (home, RequestId::from_value(id), mark) {
        (Some(home), Some(request_id), Some(mark)) => {
            Some(home.begin_call(request_id, cancel.token().clone(), mark))
        }
        _ => None,
    };
    Call::Running(Box::pin(async move {
        let _in_flight = in_flight;
        // If this future is dropped mid-call (the caller gave up), the token fires.
        let mut cancel_on_drop = CancelOnDrop(Some(&cancel));
        let finished = tokio::select! {
            biased;
            () = cancel.token().cancelled() => None,
            finished = contain::finish(running, &deadline) => Some(finished),
        };
        let outcome = match finished {
            None => Outcome::Cancelled,
            Some(Ok(result)) => {
                cancel_on_drop.0 = None;
                Outcome::Done(result)
            }
            Some(Err(failure)) => Outcome::from(failure),
        };
        // The handler future is gone now. Its token fires unless it finished.
        drop(cancel_on_drop);
        conclude(&registered.tool, outcome, limit, cap)
    }))
}

impl From<Failure> for Outcome {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Panicked(message) => Self::Panicked(message),
            Failure::TimedOut(expiry) => Self::TimedOut(expiry),
        }
    }
}

/// The result of a call that ended with `outcome`, checked and capped.
fn conclude(tool: &super::Tool, outcome: Outcome, limit: Duration, cap: usize) -> CallToolResult {
    let name = tool.info.name.as_str();
    let structured = tool.output.is_some();
    let mut result = match outcome {
        Outcome::Done(result) => check_output(tool, result),
        Outcome::Panicked(message) => {
            tracing::error!(tool = name, panic = %message, "tool handler panicked");
            CallToolResult::error(format!("Tool \"{name}\" panicked: {message}"))
        }
        Outcome::TimedOut(expiry) => {
            tracing::warn!(tool = name, ?limit, ?expiry, "tool call timed out");
            CallToolResult::error(format!(
                "Tool \"{name}\" {} and was stopped",
                expiry.describe()
            ))
        }
        Outcome::Cancelled => {
            tracing::debug!(tool = name, "tool call cancelled by the client");
            CallToolResult::error(format!("Tool \"{name}\" was cancelled by the client"))
        }
    };
    cap::cap_result(&mut result, cap, name, structured);
    result
}

/// Cancels the call when dropped, unless disarmed (`None`): a
/// `DropGuard` without a clone of the token.
struct CancelOnDrop<'a>(Option<&'a Cancel>);

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(cancel) = self.0 {
            cancel.cancel();
        }
    }
}

/// With an output schema, a successful result must carry matching
/// `structuredContent`.
fn check_output(tool: &super::Tool, result: CallToolResult) -> CallToolResult {
    let Some(schema) = &tool.output else {
        return result;
    };
    if result.is_error {
        return result;
    }
    let name = &tool.info.name;
    match &result.structured_content {
        None => CallToolResult::error(format!(
            "Tool \"{name}\" declares an output schema but returned no structured content \
             (return Json(value) or set structured_content)"
        )),
        Some(structured) => match schema.check(structured) {
            Ok(()) => result,
            Err(problems) => CallToolResult::error(format!(
                "Tool \"{name}\" returned structured content that does not match its output \
                 schema:\n{problems}"
            )),
        },
    }
}
