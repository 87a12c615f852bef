//! Reading a message and routing it: requests, notifications, responses.

use serde_json::{Map, Value, json};

use super::context::RequestContext;
use super::session::Session;
use super::{ServerInner, call, catalog, stateless};
use crate::jsonrpc::{self, ErrorObject};
use crate::types::{ClientCapabilities, LogLevel};
use crate::types::{
    Implementation, InitializeResult, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS,
    json_type_name,
};

/// Answers one message; see [`Server::handle`](super::Server::handle).
pub(crate) async fn handle(
    server: &ServerInner,
    message: Value,
    ctx: RequestContext,
) -> Option<Value> {
    let Value::Object(mut msg) = message else {
        let what = json_type_name(&message);
        return Some(invalid(
            &Value::Null,
            format!("a JSON-RPC message must be an object, not {what}"),
        ));
    };

    let id = match msg.remove("id") {
        None | Some(Value::Null) => None,
        Some(id @ (Value::Number(_) | Value::String(_))) => Some(id),
        // A response (no method) never gets a reply, whatever its id.
        Some(_)
            if !msg.contains_key("method")
                && (msg.contains_key("result") || msg.contains_key("error")) =>
        {
            return None;
        }
        Some(other) => {
            let what = json_type_name(&other);
            return Some(invalid(
                &Value::Null,
                format!("a request id must be a number or a string, not {what}"),
            ));
        }
    };

    let method = match msg.remove("method") {
        Some(Value::String(method)) => method,
        Some(other) => {
            let what = json_type_name(&other);
            let id = id.unwrap_or(Value::Null);
            return Some(invalid(
                &id,
                format!("\"method\" must be a string, not {what}"),
            ));
        }
        // A response to something the server sent (e.g. the client
        // answering `sampling/createMessage`): route it to its waiter;
        // nothing to say back.
        None if msg.contains_key("result") || msg.contains_key("error") => {
            if let (Some(session), Some(id)) = (ctx.session(), &id) {
                session.resolve_response(id, &msg);
            }
            return None;
        }
        None => {
            let id = id.unwrap_or(Value::Null);
            return Some(invalid(&id, "a JSON-RPC request needs a \"method\""));
        }
    };
    let params = msg.remove("params");

    let Some(id) = id else {
        notification(server, &method, params, ctx.session());
        return None;
    };

    let outcome = match stateless::request_meta(&method, params.as_ref()) {
        Some(meta) => stateless_request(server, &id, &method, meta.cloned(), params, ctx).await,
        None => request(server, &id, &method, params, ctx).await,
    };
    Some(match outcome {
        Ok(result) => jsonrpc::response(&id, result),
        Err(error) => jsonrpc::error_response(&id, error),
    })
}

/// A request of the stateless revision (2026-07-28): its `_meta` checked,
/// served on a session of its own, its result decorated as the revision says.
async fn stateless_request(
    server: &ServerInner,
    id: &Value,
    method: &str,
    meta: Option<Map<String, Value>>,
    params: Option<Value>,
    ctx: RequestContext,
) -> Result<Value, ErrorObject> {
    stateless::validate_meta(meta.as_ref())?;
    if stateless::REMOVED_METHODS.contains(&method) {
        return Err(ErrorObject::method_not_found(method));
    }
    let result = match method {
        "server/discover" => Ok(stateless::discover(server)),
        "subscriptions/listen" => {
            let params = params_object(params)?;
            stateless::listen(server, id, &params, ctx).await
        }
        _ => {
            let ctx = stateless::request_context(ctx, meta.as_ref());
            request(server, id, method, params, ctx)
                .await
                .map_err(stateless::error)
        }
    }?;
    Ok(stateless::decorate(server, method, result))
}

fn invalid(id: &Value, message: impl Into<String>) -> Value {
    jsonrpc::error_response(id, ErrorObject::invalid_request(message))
}

async fn request(
    server: &ServerInner,
    id: &Value,
    method: &str,
    params: Option<Value>,
    ctx: RequestContext,
) -> Result<Value, ErrorObject> {
    match method {
        "initialize" => initialize(server, params_object(params)?, ctx.session()),
        "ping" => Ok(json!({})),
        "tools/list" => list_tools(server, params_object(params)?),
        "tools/call" => {
            let params = params_object(params)?;
            call::call_tool(server, id, params, ctx).await
        }
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
        .filter(|v| SUPPORTED_PROTOCOL_VERSIONS.contains(v))
        .unwrap_or(LATEST_PROTOCOL_VERSION);

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
                (Some(session), Some(id)) => session.cancel(id),
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
