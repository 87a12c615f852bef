//! `tools/call`: find the tool, validate the arguments, run the handler
//! under its deadline (contained: `contain.rs`), honour cancellation,
//! check and cap the result.

use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::cap;
use super::contain::{self, Deadline, Expiry, Failure, ProgressClock};
use super::context::{RequestContext, ToolContext};
use super::{Registered, ServerInner};
use crate::jsonrpc::{ErrorObject, METHOD_NOT_FOUND, RequestId};
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
/// taken apart, the result still typed. The in-process client calls this
/// directly (see `Server::call_tool_direct`).
pub(crate) async fn call_named(
    server: &ServerInner,
    id: &Value,
    name: &str,
    arguments: Option<Value>,
    meta: Option<Arc<Map<String, Value>>>,
    ctx: RequestContext,
) -> Result<CallToolResult, ErrorObject> {
    let Some(tool) = server.tool(name) else {
        // -32601 naming the tool; see the module docs for why not -32602.
        return Err(ErrorObject::new(
            METHOD_NOT_FOUND,
            format!("Unknown tool: {name}"),
        ));
    };
    let arguments = match arguments {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(args @ Value::Object(_)) => args,
        Some(other) => {
            return Err(ErrorObject::invalid_params(format!(
                "tools/call: \"arguments\" must be an object, not {}",
                json_type_name(&other)
            )));
        }
    };
    Ok(run(server, &tool, id, arguments, meta, ctx).await)
}

async fn run(
    server: &ServerInner,
    registered: &Arc<Registered>,
    id: &Value,
    arguments: Value,
    meta: Option<Arc<Map<String, Value>>>,
    ctx: RequestContext,
) -> CallToolResult {
    let (session, stream) = ctx.into_parts();
    let tool = &registered.tool;
    let name = tool.info.name.as_str();

    let cap = tool.max_result_chars.unwrap_or(server.max_result_chars);
    let structured = tool.output.is_some();
    if let Err(problems) = tool.input.check(&arguments) {
        // The message quotes the model's arguments: it is capped like any result.
        let mut result = CallToolResult::error(format!(
            "Invalid arguments for tool \"{name}\":\n{problems}"
        ));
        cap::cap_result(&mut result, cap, name, structured);
        return result;
    }

    let token = CancellationToken::new();
    // Registered while the call runs, so notifications/cancelled finds it.
    let _in_flight = match (&session, RequestId::from_value(id)) {
        (Some(session), Some(request_id)) => Some(session.begin_call(request_id, token.clone())),
        _ => None,
    };
    // If this future is dropped mid-call (the caller gave up), the token fires.
    let mut cancel_on_drop = CancelOnDrop(Some(&token));

    let limit = tool.timeout.unwrap_or(server.tool_timeout);
    let (deadline, clock) = match tool.progress_cap.or(server.progress_cap) {
        Some(progress_cap) => {
            let clock = ProgressClock::start();
            let deadline = Deadline::following(limit, Arc::clone(&clock), progress_cap);
            (deadline, Some(clock))
        }
        None => (Deadline::fixed(limit), None),
    };
    let ctx = ToolContext {
        request_id: id.clone(),
        tool: name.to_owned(),
        meta,
        token: token.clone(),
        session,
        stream,
        clock,
    };
    let handler = Arc::clone(&tool.handler);

    // Most handlers finish on their first poll: then no waiter is set on
    // the token and no timer armed (`contain::run` polls the handler
    // before its deadline). Otherwise both are watched until it ends.
    let finished = {
        let mut running = pin!(contain::run(&deadline, move || {
            handler(arguments, ctx, structured)
        }));
        match futures::poll!(running.as_mut()) {
            Poll::Ready(finished) => Some(finished),
            Poll::Pending => tokio::select! {
                biased;
                () = token.cancelled() => None,
                finished = &mut running => Some(finished),
            },
        }
    };
    let outcome = match finished {
        None => Outcome::Cancelled,
        Some(Ok(result)) => Outcome::Done(result),
        Some(Err(Failure::Panicked(message))) => Outcome::Panicked(message),
        Some(Err(Failure::TimedOut(expiry))) => Outcome::TimedOut(expiry),
    };
    // The handler future is gone now. Its token fires unless it finished.

    let mut result = match outcome {
        Outcome::Done(result) => {
            cancel_on_drop.0 = None;
            check_output(tool, result)
        }
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

/// Cancels the token when dropped, unless disarmed (`None`): a
/// `DropGuard` without a clone of the token.
struct CancelOnDrop<'a>(Option<&'a CancellationToken>);

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(token) = self.0 {
            token.cancel();
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
