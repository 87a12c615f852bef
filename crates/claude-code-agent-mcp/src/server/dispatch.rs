//! Reading a message and routing it: requests, notifications, responses.

use serde_json::{Map, Value, json};
use tracing::Instrument;

use super::call::{self, Served, ToolCall};
use super::context::RequestContext;
use super::session::Session;
use super::{ServerInner, catalog, contain, limits, stateless, tasks};
use crate::jsonrpc::{self, ErrorObject};
use crate::spans;
use crate::types::{CallToolResult, ClientCapabilities, LogLevel};
use crate::types::{
    Implementation, InitializeResult, LATEST_SESSION_PROTOCOL_VERSION, SESSION_PROTOCOL_VERSIONS,
    json_type_name,
};

/// Answers one message, or a batch of them; see
/// [`Server::handle`](super::Server::handle).
pub(crate) async fn handle(
    server: &ServerInner,
    message: Value,
    ctx: RequestContext,
) -> Option<Value> {
    match message {
        Value::Object(msg) => one(server, msg, ctx).await,
        Value::Array(batch) => self::batch(server, batch, ctx).await,
        other => Some(invalid(
            &Value::Null,
            format!(
                "a JSON-RPC message must be an object, not {}",
                json_type_name(&other)
            ),
        )),
    }
}

/// The revision whose receivers must accept JSON-RPC batches.
const BATCH_REVISION: &str = "2025-03-26";

/// A JSON-RPC batch: served, on a session that negotiated 2025-03-26, as
/// its messages handled concurrently (each contained, as `handle` is), the
/// replies in one array (none if all were notifications or responses).
async fn batch(server: &ServerInner, batch: Vec<Value>, ctx: RequestContext) -> Option<Value> {
    let version = ctx.session().and_then(Session::protocol_version);
    if version.as_deref() != Some(BATCH_REVISION) {
        let revision = match &version {
            Some(v) => format!("protocol revision {v}"),
            None => "a connection that has not negotiated 2025-03-26".to_owned(),
        };
        return Some(invalid(
            &Value::Null,
            format!("JSON-RPC batches are not accepted in {revision}; only 2025-03-26 has them"),
        ));
    }
    if batch.is_empty() {
        return Some(invalid(&Value::Null, "an empty JSON-RPC batch"));
    }
    if batch.len() > limits::MAX_BATCH_LEN {
        return Some(invalid(
            &Value::Null,
            format!(
                "a batch of {} messages is over the limit of {}",
                batch.len(),
                limits::MAX_BATCH_LEN
            ),
        ));
    }
    let replies = batch.into_iter().map(|message| {
        let ctx = ctx.clone();
        contain::answer(message, move |message| async move {
            match message {
                Value::Object(msg) if msg.get("method") == Some(&json!("initialize")) => {
                    let id = msg.get("id").cloned().unwrap_or(Value::Null);
                    Some(invalid(
                        &id,
                        "initialize may not be part of a JSON-RPC batch",
                    ))
                }
                Value::Object(msg) => one(server, msg, ctx).await,
                other => Some(invalid(
                    &Value::Null,
                    format!(
                        "a batch holds JSON-RPC messages (objects), not {}",
                        json_type_name(&other)
                    ),
                )),
            }
        })
    });
    let replies: Vec<Value> = futures::future::join_all(replies)
        .await
        .into_iter()
        .flatten()
        .collect();
    (!replies.is_empty()).then_some(Value::Array(replies))
}

/// Answers one message. The envelope is checked first: a response goes to
/// its waiter; anything else must be JSON-RPC 2.0 with a string method and,
/// if it has an id, a number or string one.
async fn one(
    server: &ServerInner,
    mut msg: Map<String, Value>,
    ctx: RequestContext,
) -> Option<Value> {
    let id = msg.remove("id");
    if !msg.contains_key("method") && (msg.contains_key("result") || msg.contains_key("error")) {
        response(id, &msg, ctx.session());
        return None;
    }
    let id = match id {
        None => None,
        Some(id @ (Value::Number(_) | Value::String(_))) => Some(id),
        Some(Value::Null) => {
            return Some(invalid(
                &Value::Null,
                "a request id must be a number or a string, not null (a notification has no \"id\")",
            ));
        }
        Some(other) => {
            let what = json_type_name(&other);
            return Some(invalid(
                &Value::Null,
                format!("a request id must be a number or a string, not {what}"),
            ));
        }
    };
    let reply_id = id.clone().unwrap_or(Value::Null);
    match msg.get("jsonrpc") {
        Some(Value::String(v)) if v == jsonrpc::VERSION => {}
        Some(other) => {
            return Some(invalid(
                &reply_id,
                format!("\"jsonrpc\" must be \"2.0\", not {other}"),
            ));
        }
        None => return Some(invalid(&reply_id, "\"jsonrpc\":\"2.0\" is missing")),
    }
    let method = match msg.remove("method") {
        Some(Value::String(method)) => method,
        Some(other) => {
            let what = json_type_name(&other);
            return Some(invalid(
                &reply_id,
                format!("\"method\" must be a string, not {what}"),
            ));
        }
        None => return Some(invalid(&reply_id, "a JSON-RPC request needs a \"method\"")),
    };
    let params = msg.remove("params");

    let Some(id) = id else {
        notification(server, &method, params, ctx.session());
        return None;
    };

    let span = spans::served(
        spans::Target::of(&method, params.as_ref()),
        &id,
        &server.name,
        || ctx.session().and_then(Session::protocol_version),
        params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object),
        ctx.remote(),
    );
    let tool_call = method == "tools/call";
    let outcome = async {
        if tool_call {
            tools_call(server, &id, params, ctx).await
        } else if stateless::request_meta(&method, params.as_ref()).is_some() {
            stateless_request(server, &id, &method, params, ctx).await
        } else {
            request(server, &method, params, ctx).await
        }
    }
    .instrument(span.clone())
    .await;
    spans::outcome(
        &span,
        spans::Outcome::of_answer(outcome.as_ref(), tool_call),
    );
    Some(match outcome {
        Ok(result) => jsonrpc::response(&id, result),
        Err(error) => jsonrpc::error_response(&id, error),
    })
}

/// A response to something the server sent (the client answering
/// `sampling/createMessage`): routed to its waiter; never answered. One
/// that is not JSON-RPC 2.0 fails its waiter rather than leaving it to time
/// out.
fn response(id: Option<Value>, msg: &Map<String, Value>, session: Option<&Session>) {
    let (Some(session), Some(id)) = (session, id.filter(|id| id.is_number() || id.is_string()))
    else {
        tracing::debug!("a response with no usable id, or no session to route it to: dropped");
        return;
    };
    if msg.get("jsonrpc").and_then(Value::as_str) == Some(jsonrpc::VERSION) {
        session.resolve_response(&id, msg);
    } else {
        tracing::warn!(%id, "a response that is not JSON-RPC 2.0 fails its request");
        let error = json!({"error": ErrorObject::invalid_request(
            "the client's response is not JSON-RPC 2.0 (\"jsonrpc\" must be \"2.0\")")});
        if let Value::Object(error) = error {
            session.resolve_response(&id, &error);
        }
    }
}

/// A request of the stateless revision (2026-07-28) but `tools/call`
/// (which does this itself, [`tools_call`]): its `_meta` checked, served
/// on a session of its own, its result decorated as the revision says.
async fn stateless_request(
    server: &ServerInner,
    id: &Value,
    method: &str,
    params: Option<Value>,
    ctx: RequestContext,
) -> Result<Value, ErrorObject> {
    // Read in place (the params go on to the method).
    let meta = || {
        params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object)
    };
    stateless::validate_meta(meta())?;
    if stateless::REMOVED_METHODS.contains(&method) {
        return Err(ErrorObject::method_not_found(method));
    }
    let result = match method {
        "server/discover" => Ok(stateless::discover(server)),
        "tasks/get" | "tasks/update" | "tasks/cancel" => {
            tasks::request(server, method, params_object(params)?, ctx).await
        }
        "subscriptions/listen" => {
            let params = params_object(params)?;
            stateless::listen(server, id, &params, ctx).await
        }
        _ => {
            let ctx = stateless::request_context(ctx, meta());
            request(server, method, params, ctx)
                .await
                .map_err(stateless::error)
        }
    }?;
    Ok(stateless::decorate(server, method, result))
}

/// `tools/call`: its params decoded into the typed call, the one the
/// in-process client makes too (`Server::start_call`), and its answer
/// encoded. At the stateless revision the call checks its `_meta` and
/// decorates its result itself.
async fn tools_call(
    server: &ServerInner,
    id: &Value,
    params: Option<Value>,
    ctx: RequestContext,
) -> Result<Value, ErrorObject> {
    let call = ToolCall::from_params(id, params_object(params)?)?;
    if tasks::wants_task(server, &call)? {
        return tasks::start(server, call, ctx).await;
    }
    let answer = call::run(server, call, Served::Connection(ctx)).await;
    answer.map(CallToolResult::into_value)
}

fn invalid(id: &Value, message: impl Into<String>) -> Value {
    jsonrpc::error_response(id, ErrorObject::invalid_request(message))
}

async fn request(
    server: &ServerInner,
    method: &str,
    params: Option<Value>,
    ctx: RequestContext,
) -> Result<Value, ErrorObject> {
    match method {
        "initialize" => initialize(server, params_object(params)?, ctx.session()),
        "ping" => Ok(json!({})),
        "tools/list" => list_tools(server, params_object(params)?),
        "logging/setLevel" => set_level(params_object(params)?, ctx.session()),
        m if catalog::handles(&server.catalog, m) => {
            catalog::request(server, m, params_object(params)?, ctx).await
        }
        _ => Err(ErrorObject::method_not_found(method)),
    }
}

/// `params` as an object: absent or `null` is `{}`; anything else is -32602.
fn params_object(params: Option<Value>) -> Result<Map<String, Value>, ErrorObject> {
    match params {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(other) => Err(ErrorObject::invalid_params(format!(
            "\"params\" must be an object, not {}",
            json_type_name(&other)
        ))),
    }
}

fn initialize(
    server: &ServerInner,
    params: Map<String, Value>,
    session: Option<&Session>,
) -> Result<Value, ErrorObject> {
    // Echo the client's revision when we speak it, else offer our newest.
    let protocol_version = params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .filter(|v| SESSION_PROTOCOL_VERSIONS.contains(v))
        .unwrap_or(LATEST_SESSION_PROTOCOL_VERSION);

    let capabilities = stateless::capabilities(server);

    let result = InitializeResult {
        protocol_version: protocol_version.to_owned(),
        capabilities,
        server_info: Implementation::new(&server.name, &server.version),
        instructions: server.instructions.clone(),
        extra: Map::new(),
    };
    // A repeated initialize (the CLI reconnecting) is answered the same way.
    if let Some(session) = session {
        let declared = params.get("capabilities").unwrap_or(&Value::Null);
        session.set_negotiated(protocol_version, ClientCapabilities::from_value(declared));
        session.mark_initialized();
        server.register_session(session);
    }
    serde_json::to_value(result).map_err(|e| ErrorObject::internal(e.to_string()))
}

fn list_tools(server: &ServerInner, params: Map<String, Value>) -> Result<Value, ErrorObject> {
    let tools = server.tools.read();
    catalog::paginate(
        "tools",
        tools.values(),
        |r| r.listing.clone(),
        &params,
        server.page_size,
    )
}

fn set_level(params: Map<String, Value>, session: Option<&Session>) -> Result<Value, ErrorObject> {
    let level = params
        .get("level")
        .and_then(Value::as_str)
        .ok_or_else(|| ErrorObject::invalid_params("logging/setLevel needs a string \"level\""))?
        .parse::<LogLevel>()
        .map_err(ErrorObject::invalid_params)?;
    if let Some(session) = session {
        session.set_log_level(level);
    }
    Ok(json!({}))
}

fn notification(
    server: &ServerInner,
    method: &str,
    params: Option<Value>,
    session: Option<&Session>,
) {
    match method {
        "notifications/cancelled" => {
            let request_id = params.as_ref().and_then(|p| p.get("requestId"));
            let cancelled = match (session, request_id) {
                (Some(session), Some(id)) => session.cancel_from_client(id),
                _ => false,
            };
            tracing::debug!(server = %server.name, ?request_id, cancelled, "notifications/cancelled");
        }
        "notifications/initialized" => {
            if let Some(session) = session {
                session.mark_initialized();
                server.register_session(session);
            }
        }
        other => tracing::trace!(server = %server.name, method = other, "notification ignored"),
    }
}
