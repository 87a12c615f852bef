//! The stateless revision (2026-07-28) on the server side: `server/discover`,
//! the per-request `_meta` (protocol version, client info and capabilities,
//! log level), the methods it removed, `subscriptions/listen`, and the
//! result fields it requires (`resultType`, cache hints, `serverInfo`).
//!
//! A request is *stateless* when its `params._meta` carries
//! `io.modelcontextprotocol/protocolVersion`, or when it is
//! `server/discover`. It then needs no `initialize`: it is served on a
//! session of its own that lives as long as the request, whose
//! notifications go to the request's response stream (or the transport's
//! session), `notifications/message` only when the request set
//! `io.modelcontextprotocol/logLevel`; the client capabilities its `_meta`
//! declares are the session's ([`ToolContext::client_capabilities`](super::ToolContext::client_capabilities)).
//! Requests to the client are not sent: the revision replaces them with
//! `input_required` results, which `round.rs` makes of a handler's
//! [`ToolContext::ask`](super::ToolContext::ask).
//! Requests without that `_meta` are served as before.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::context::{RequestContext, ResponseStream};
use super::session::Session;
use super::{ServerInner, catalog};
use crate::jsonrpc::{self, ErrorObject};
use crate::types::{
    CLIENT_CAPABILITIES_META, LOG_LEVEL_META, PROTOCOL_VERSION_META, SERVER_INFO_META,
    SESSION_PROTOCOL_VERSIONS, SUBSCRIPTION_ID_META, TASKS_EXTENSION, json_type_name,
};
use crate::types::{CallToolResult, ClientCapabilities, LogLevel, SharedMap};

/// The stateless revisions the server speaks (requests with `_meta`).
pub const STATELESS_PROTOCOL_VERSIONS: &[&str] = &["2026-07-28"];

pub use crate::types::{
    HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION,
};

/// Methods the stateless revision removed: answered `-32601` when stateless.
pub const REMOVED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Results clients may cache: they get `ttlMs` and `cacheScope`.
const CACHEABLE: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "skills/list",
    "skills/get",
];

/// Every revision the server speaks, oldest first (`supportedVersions`).
pub fn supported_versions() -> Vec<&'static str> {
    SESSION_PROTOCOL_VERSIONS
        .iter()
        .chain(STATELESS_PROTOCOL_VERSIONS)
        .copied()
        .collect()
}

/// A `-32021` error naming the capabilities the request should have declared,
/// e.g. `json!({"sampling": {}})`.
pub fn missing_client_capability(required: Value) -> ErrorObject {
    ErrorObject::new(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Missing required client capability",
    )
    .with_data(json!({ "requiredCapabilities": required }))
}

/// Whether a stateless request's `_meta` declares the Tasks extension.
pub(crate) fn declares_tasks(meta: Option<&Map<String, Value>>) -> bool {
    meta.and_then(client_capabilities)
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(TASKS_EXTENSION))
        .is_some_and(|v| !v.is_null())
}

/// The `-32021` a request gets that needed the Tasks extension declared
/// (a tool that runs only as a task).
pub(crate) fn tasks_extension_required() -> ErrorObject {
    missing_client_capability(json!({"extensions": {TASKS_EXTENSION: {}}}))
}

/// A `-32022` error listing the stateless revisions spoken here.
pub fn unsupported_version(requested: &str) -> ErrorObject {
    ErrorObject::new(
        UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version {requested:?}"),
    )
    .with_data(json!({"supported": STATELESS_PROTOCOL_VERSIONS, "requested": requested}))
}

/// The stateless `_meta` of a request, or `None` for a request of the
/// session-based revisions.
pub(crate) fn request_meta<'a>(
    method: &str,
    params: Option<&'a Value>,
) -> Option<Option<&'a Map<String, Value>>> {
    let meta = params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object);
    let stateless = method == "server/discover"
        || method == "subscriptions/listen"
        || meta.is_some_and(crate::types::is_stateless_meta);
    stateless.then_some(meta)
}

/// Checks a stateless request's `_meta`: `-32602` when it lacks what the
/// revision requires, `-32022` for a revision not spoken here.
pub fn validate_meta(meta: Option<&Map<String, Value>>) -> Result<(), ErrorObject> {
    let Some(meta) = meta else {
        return Err(ErrorObject::invalid_params(
            "a stateless request needs params._meta",
        ));
    };
    let version = match meta.get(PROTOCOL_VERSION_META) {
        Some(Value::String(v)) => v,
        Some(other) => {
            return Err(ErrorObject::invalid_params(format!(
                "_meta[{PROTOCOL_VERSION_META:?}] must be a string, not {}",
                json_type_name(other)
            )));
        }
        None => {
            return Err(ErrorObject::invalid_params(format!(
                "_meta needs {PROTOCOL_VERSION_META:?}"
            )));
        }
    };
    match meta.get(CLIENT_CAPABILITIES_META) {
        Some(Value::Object(_)) => {}
        Some(other) => {
            return Err(ErrorObject::invalid_params(format!(
                "_meta[{CLIENT_CAPABILITIES_META:?}] must be an object, not {}",
                json_type_name(other)
            )));
        }
        None => {
            return Err(ErrorObject::invalid_params(format!(
                "_meta needs {CLIENT_CAPABILITIES_META:?}"
            )));
        }
    }
    if !STATELESS_PROTOCOL_VERSIONS.contains(&version.as_str()) {
        return Err(unsupported_version(version));
    }
    if let Some(level) = meta.get(LOG_LEVEL_META) {
        level
            .as_str()
            .and_then(|l| l.parse::<LogLevel>().ok())
            .ok_or_else(|| ErrorObject::invalid_params(format!("invalid {LOG_LEVEL_META}")))?;
    }
    Ok(())
}

/// An error as the stateless revision words it: "resource not found" is
/// `-32602` there (`-32002` before).
pub(crate) fn error(mut error: ErrorObject) -> ErrorObject {
    if error.code == catalog::RESOURCE_NOT_FOUND {
        error.code = jsonrpc::INVALID_PARAMS;
    }
    error
}

/// The client capabilities a stateless request declared (`_meta`).
pub fn client_capabilities(meta: &Map<String, Value>) -> Option<&Map<String, Value>> {
    meta.get(CLIENT_CAPABILITIES_META)?.as_object()
}

/// The server's capabilities, as `initialize` and `server/discover` state them.
pub(crate) fn capabilities(server: &ServerInner) -> Map<String, Value> {
    let mut capabilities = Map::new();
    capabilities.insert("tools".into(), json!({"listChanged": true}));
    capabilities.insert("logging".into(), json!({}));
    server.catalog.capabilities(&mut capabilities);
    if !server.extensions.is_empty() {
        let extensions = Value::Object(server.extensions.clone());
        capabilities.insert("extensions".into(), extensions);
    }
    capabilities
}

pub(crate) fn discover(server: &ServerInner) -> Value {
    let mut result = Map::new();
    result.insert("supportedVersions".into(), json!(supported_versions()));
    let mut capabilities = capabilities(server);
    // The extensions of this revision: Tasks (SEP-2663), when a tool may
    // run as one.
    let runs_tasks = (server.tools.read().values())
        .any(|r| r.tool.task_support != super::tool::TaskSupport::Forbidden);
    if runs_tasks {
        let extensions = capabilities
            .entry("extensions")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(extensions) = extensions {
            extensions.insert(TASKS_EXTENSION.into(), json!({}));
        }
    }
    result.insert("capabilities".into(), Value::Object(capabilities));
    result.insert(
        "serverInfo".into(),
        json!({"name": server.name, "version": server.version}),
    );
    if let Some(instructions) = &server.instructions {
        result.insert("instructions".into(), instructions.clone().into());
    }
    Value::Object(result)
}

/// Adds what the stateless revision requires of a result: `resultType`,
/// cache hints on cacheable ones, the server's identity in `_meta`.
pub(crate) fn decorate(server: &ServerInner, method: &str, result: Value) -> Value {
    server.decoration.value(method, result)
}

/// What the stateless revision adds to the results of one server, built
/// once and shared by the results: `resultType` and the `_meta` naming the
/// server. Cheap to clone (clones of [`SharedMap`]s).
#[derive(Clone)]
pub(crate) struct Decoration {
    /// `{"resultType":"complete"}`.
    extra: SharedMap,
    /// `{"io.modelcontextprotocol/serverInfo":{"name":…,"version":…}}`.
    meta: SharedMap,
}

impl Decoration {
    pub(crate) fn new(name: &str, version: &str) -> Self {
        let server_info = json!({"name": name, "version": version});
        let meta = [(SERVER_INFO_META.to_owned(), server_info)];
        let extra = [("resultType".to_owned(), Value::from("complete"))];
        Self {
            extra: extra.into_iter().collect(),
            meta: meta.into_iter().collect(),
        }
    }

    /// [`decorate`], on the JSON of a result of `method`.
    fn value(&self, method: &str, result: Value) -> Value {
        let Value::Object(mut result) = result else {
            return result;
        };
        let input_required = crate::types::is_input_required(&result);
        if input_required && method == "tools/call" {
            // A tool that needs input: its (empty) content is no part of it.
            if result
                .get("content")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                result.remove("content");
            }
            if result.get("isError") == Some(&Value::Bool(false)) {
                result.remove("isError");
            }
        }
        result
            .entry("resultType")
            .or_insert_with(|| "complete".into());
        if CACHEABLE.contains(&method) && !input_required {
            result.entry("ttlMs").or_insert_with(|| 0.into());
            result
                .entry("cacheScope")
                .or_insert_with(|| "private".into());
        }
        let meta = result
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.entry(SERVER_INFO_META)
                .or_insert_with(|| self.meta[SERVER_INFO_META].clone());
        }
        Value::Object(result)
    }

    /// [`decorate`] for a typed `tools/call` result: the same fields as
    /// decorating its JSON and decoding that, shared rather than copied
    /// (no allocation). A result with members of its own beyond `_meta`
    /// goes the long way (through its JSON).
    pub(crate) fn call(&self, mut result: CallToolResult) -> CallToolResult {
        if !result.extra.is_empty() {
            let decorated = self.value("tools/call", result.into_value());
            return serde_json::from_value(decorated).unwrap_or_else(|e| {
                CallToolResult::error(format!("the decorated result does not decode: {e}"))
            });
        }
        result.extra = self.extra.clone();
        match &mut result.meta {
            None => result.meta = Some(self.meta.clone()),
            Some(meta) => {
                meta.entry(SERVER_INFO_META)
                    .or_insert_with(|| self.meta[SERVER_INFO_META].clone());
            }
        }
        result
    }
}

/// Where a stateless request's messages go, filtered: `notifications/message`
/// only at or above the requested level, nothing else dropped.
#[derive(Clone)]
struct Outlet {
    stream: Option<Arc<dyn ResponseStream>>,
    session: Option<Session>,
    log_level: Option<LogLevel>,
}

impl Outlet {
    fn deliver(&self, message: Value) {
        if message.get("method").and_then(Value::as_str) == Some("notifications/message") {
            let level = crate::jsonrpc::at(&message, &["params", "level"])
                .and_then(Value::as_str)
                .and_then(|l| l.parse::<LogLevel>().ok());
            match (self.log_level, level) {
                (Some(min), Some(level)) if level >= min => {}
                _ => return,
            }
        }
        if let Some(stream) = &self.stream {
            stream.send(message);
        } else if let Some(session) = &self.session {
            session.notify(message);
        }
    }

    fn is_connected(&self) -> bool {
        self.stream.is_some() || self.session.as_ref().is_some_and(Session::has_notifier)
    }
}

struct FilteredStream {
    outlet: Outlet,
    inner: Arc<dyn ResponseStream>,
}

impl ResponseStream for FilteredStream {
    fn send(&self, message: Value) {
        self.outlet.deliver(message);
    }

    fn close(&self) -> bool {
        self.inner.close()
    }
}

fn outlet(ctx: RequestContext, meta: Option<&Map<String, Value>>) -> Outlet {
    let log_level = meta
        .and_then(|m| m.get(LOG_LEVEL_META))
        .and_then(Value::as_str)
        .and_then(|l| l.parse().ok());
    let parts = ctx.into_parts();
    let (session, stream) = (parts.session, parts.stream);
    Outlet {
        stream,
        session,
        log_level,
    }
}

/// The context a stateless request with `meta` is served in, once its
/// `_meta` passed [`validate_meta`]: see [`request_context`].
pub(crate) fn checked_context(
    meta: Option<&Map<String, Value>>,
    ctx: RequestContext,
) -> Result<RequestContext, ErrorObject> {
    validate_meta(meta)?;
    Ok(request_context(ctx, meta))
}

/// The context a stateless request is served in: a session of its own
/// whose messages go through the request's outlet.
pub(crate) fn request_context(
    ctx: RequestContext,
    meta: Option<&Map<String, Value>>,
) -> RequestContext {
    let watch = ctx.watch.clone();
    let access_token = ctx.access_token.clone();
    let task_store = ctx.task_store.clone();
    let connection = ctx.session().cloned();
    let outlet = outlet(ctx, meta);
    let sink = outlet.clone();
    let session = Session::for_request(move |m| sink.deliver(m), connection);
    if let Some(level) = outlet.log_level {
        session.set_log_level(level);
    }
    if let Some(meta) = meta {
        let version = meta.get(PROTOCOL_VERSION_META).and_then(Value::as_str);
        let declared = meta.get(CLIENT_CAPABILITIES_META).unwrap_or(&Value::Null);
        session.set_negotiated(
            version.unwrap_or(STATELESS_PROTOCOL_VERSIONS[0]),
            ClientCapabilities::from_value(declared),
        );
    }
    session.mark_initialized();
    let mut ctx = RequestContext::with_session(session);
    if let Some(inner) = outlet.stream.clone() {
        ctx = ctx.with_response_stream(Arc::new(FilteredStream { outlet, inner }));
    }
    ctx.watch = watch;
    ctx.access_token = access_token;
    ctx.task_store = task_store;
    ctx
}

/// `subscriptions/listen`: acknowledges what will be delivered, then
/// forwards the server's notifications that match until the transport
/// drops this future (the client went away).
pub(crate) async fn listen(
    server: &ServerInner,
    id: &Value,
    params: &Map<String, Value>,
    ctx: RequestContext,
) -> Result<Value, ErrorObject> {
    let requested = match params.get("notifications") {
        Some(Value::Object(filter)) => filter,
        _ => {
            return Err(ErrorObject::invalid_params(
                "subscriptions/listen needs a \"notifications\" object",
            ));
        }
    };
    let has_resources = catalog::handles(&server.catalog, "resources/list");
    let has_prompts = catalog::handles(&server.catalog, "prompts/list");
    let wants = |key: &str| requested.get(key).and_then(Value::as_bool) == Some(true);
    let mut accepted = Map::new();
    let mut methods: Vec<&'static str> = Vec::new();
    if wants("toolsListChanged") {
        accepted.insert("toolsListChanged".into(), true.into());
        methods.push("notifications/tools/list_changed");
    }
    if wants("promptsListChanged") && has_prompts {
        accepted.insert("promptsListChanged".into(), true.into());
        methods.push("notifications/prompts/list_changed");
    }
    if wants("resourcesListChanged") && has_resources {
        accepted.insert("resourcesListChanged".into(), true.into());
        methods.push("notifications/resources/list_changed");
    }
    let uris: Vec<String> = match requested.get("resourceSubscriptions") {
        Some(Value::Array(uris)) if has_resources => uris
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    if requested.contains_key("resourceSubscriptions") && has_resources {
        accepted.insert("resourceSubscriptions".into(), json!(uris));
        methods.push("notifications/resources/updated");
    }

    // Task status (the Tasks extension): asked for by id, of the caller's
    // tasks running here, once the request declares the extension.
    let task_ids: Option<Vec<String>> = match requested.get("taskIds") {
        None => None,
        Some(_) if !declares_tasks(params.get("_meta").and_then(Value::as_object)) => {
            return Err(tasks_extension_required());
        }
        Some(Value::Array(ids)) => Some(
            ids.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        ),
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "subscriptions/listen: \"taskIds\" must be an array of task ids",
            ));
        }
    };
    let mut caller = RequestContext::new();
    caller.access_token = ctx.access_token.clone();
    let outlet = Outlet {
        log_level: None,
        ..outlet(ctx, None)
    };
    if !outlet.is_connected() {
        return Err(ErrorObject::new(
            jsonrpc::METHOD_NOT_FOUND,
            "subscriptions/listen needs a transport that carries notifications",
        ));
    }
    let tag = |mut message: Value| {
        if let Some(Value::Object(params)) = message
            .as_object_mut()
            .map(|m| m.entry("params").or_insert_with(|| json!({})))
        {
            let meta = params.entry("_meta").or_insert_with(|| json!({}));
            if let Value::Object(meta) = meta {
                meta.insert(SUBSCRIPTION_ID_META.into(), id.clone());
            }
        }
        message
    };
    if task_ids.is_some() {
        methods.push("notifications/tasks");
    }
    // Task status is heard once the acknowledgement (which says which
    // tasks) is out.
    let acknowledged = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let heard = Arc::clone(&acknowledged);
    let forward = outlet.clone();
    let tag_id = id.clone();
    let subscription = Session::with_notifier(move |mut message: Value| {
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        if !methods.contains(&method)
            || (method == "notifications/tasks"
                && !heard.load(std::sync::atomic::Ordering::Acquire))
        {
            return;
        }
        if let Some(Value::Object(params)) = message
            .as_object_mut()
            .map(|m| m.entry("params").or_insert_with(|| json!({})))
            && let Value::Object(meta) = params.entry("_meta").or_insert_with(|| json!({}))
        {
            meta.insert(SUBSCRIPTION_ID_META.into(), tag_id.clone());
        }
        forward.deliver(message);
    });
    if let Some(ids) = &task_ids {
        let agreed = server.watch_tasks(&subscription, ids, &caller);
        accepted.insert("taskIds".into(), json!(agreed));
    }
    outlet.deliver(tag(jsonrpc::notification(
        "notifications/subscriptions/acknowledged",
        Some(json!({ "notifications": accepted })),
    )));
    acknowledged.store(true, std::sync::atomic::Ordering::Release);
    for uri in &uris {
        subscription.subscribe(uri);
    }
    subscription.mark_initialized();
    server.register_session(&subscription);
    // Held (and registered) until the transport drops this future.
    let _subscription = subscription;
    std::future::pending::<()>().await;
    Ok(json!({}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_is_checked() {
        let ok = json!({PROTOCOL_VERSION_META: "2026-07-28", CLIENT_CAPABILITIES_META: {}});
        assert!(validate_meta(ok.as_object()).is_ok());
        assert_eq!(validate_meta(None).unwrap_err().code, -32602);
        let no_caps = json!({PROTOCOL_VERSION_META: "2026-07-28"});
        assert_eq!(validate_meta(no_caps.as_object()).unwrap_err().code, -32602);
        let old = json!({PROTOCOL_VERSION_META: "v9", CLIENT_CAPABILITIES_META: {}});
        let e = validate_meta(old.as_object()).unwrap_err();
        assert_eq!(e.code, UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(e.data.unwrap()["requested"], "v9");
    }
}
