//! `tools/call`: find the tool, validate the arguments, run the handler
//! under its deadline (contained: `contain.rs`), honour cancellation,
//! check and cap the result.

use std::sync::Arc;

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
    let Some(tool) = server.tool(&name) else {
        // -32601 naming the tool; see the module docs for why not -32602.
        return Err(ErrorObject::new(
            METHOD_NOT_FOUND,
            format!("Unknown tool: {name}"),
        ));
    };
    let arguments = match params.remove("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(args @ Value::Object(_)) => args,
        Some(other) => {
            return Err(ErrorObject::invalid_params(format!(
                "tools/call: \"arguments\" must be an object, not {}",
                json_type_name(&other)
            )));
        }
    };
    let meta = match params.remove("_meta") {
        Some(Value::Object(meta)) => Some(meta),
        _ => None,
    };

    let result = run(server, &tool, id, arguments, meta, ctx).await;
    Ok(result.into_value())
}

async fn run(
    server: &ServerInner,
    registered: &Arc<Registered>,
    id: &Value,
    arguments: Value,
    meta: Option<Map<String, Value>>,
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
    let cancel_on_drop = token.clone().drop_guard();

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

    let outcome = tokio::select! {
        biased;
        () = token.cancelled() => Outcome::Cancelled,
        finished = contain::run(&deadline, move || handler(arguments, ctx, structured)) => {
            match finished {
                Ok(result) => Outcome::Done(result),
                Err(Failure::Panicked(message)) => Outcome::Panicked(message),
                Err(Failure::TimedOut(expiry)) => Outcome::TimedOut(expiry),
            }
        }
    };
    // The handler future is gone now. Its token fires unless it finished.

    let mut result = match outcome {
        Outcome::Done(result) => {
            cancel_on_drop.disarm();
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
