//! The `tracing` spans of MCP requests: one for each request the client
//! sends (`mcp.client.request`) and one for each request a server serves
//! (`mcp.server.request`), named and attributed as OpenTelemetry's MCP and
//! GenAI conventions say (`otel.name` `"tools/call add"`, `otel.kind`,
//! `mcp.method.name`, `jsonrpc.request.id`, `gen_ai.operation.name =
//! "execute_tool"`, `gen_ai.tool.name`, `error.type`, …; `otel.*` are read
//! by `tracing-opentelemetry`), plus `mcp.outcome`: `ok`, `tool_error`,
//! `jsonrpc_error` or, on the client, `failed` (no answer: a timeout, a
//! closed transport).
//!
//! A span no subscriber wants is disabled: none of its fields is evaluated
//! and entering it does nothing. With the feature `opentelemetry` a sent
//! request carries its span's W3C trace context in `params._meta`, and a
//! served one takes the caller's as its parent (`trace_context.rs`).

use std::fmt;

use serde_json::{Map, Value};
use tracing::Span;
use tracing::field::Empty;

/// The `target` of a request: what its span is named after besides the
/// method (`tools/call add`), and the GenAI attributes it sets.
#[derive(Clone, Copy)]
pub(crate) struct Target<'a> {
    method: &'a str,
    name: Option<&'a str>,
}

impl<'a> Target<'a> {
    /// `method`, naming `name` (a tool's or a prompt's).
    pub(crate) fn new(method: &'a str, name: Option<&'a str>) -> Self {
        Self { method, name }
    }

    /// `method` with the `name` its `params` hold (`tools/call`,
    /// `prompts/get`).
    pub(crate) fn of(method: &'a str, params: Option<&'a Value>) -> Self {
        let name = match method {
            "tools/call" | "prompts/get" => params.and_then(|p| p.get("name")?.as_str()),
            _ => None,
        };
        Self { method, name }
    }

    fn is_tool_call(&self) -> bool {
        self.method == "tools/call"
    }

    fn tool(&self) -> Option<&'a str> {
        self.name.filter(|_| self.is_tool_call())
    }

    fn prompt(&self) -> Option<&'a str> {
        self.name.filter(|_| self.method == "prompts/get")
    }

    fn operation(&self) -> Option<&'static str> {
        self.is_tool_call().then_some("execute_tool")
    }
}

impl fmt::Display for Target<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name {
            Some(name) => write!(f, "{} {name}", self.method),
            None => f.write_str(self.method),
        }
    }
}

/// A request id as its attribute: a string id without quotes.
struct Id<'a>(&'a Value);

impl fmt::Display for Id<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Value::String(s) => f.write_str(s),
            other => write!(f, "{other}"),
        }
    }
}

/// Where the client's requests go, as its spans say.
#[derive(Debug, Clone, Default)]
pub(crate) struct Peer {
    /// `in_process`, `stdio` or `http`; `None` for a transport of the
    /// user's own.
    pub(crate) transport: Option<&'static str>,
    /// OpenTelemetry's `network.transport`: `pipe` (stdio), `tcp` (HTTP).
    pub(crate) network: Option<&'static str>,
    /// The HTTP server's host and port.
    pub(crate) address: Option<String>,
    pub(crate) port: Option<u16>,
}

/// The span of a request the client sends. `server` is the server's name
/// and `version` the negotiated revision, once the handshake is done.
pub(crate) fn client(
    target: Target<'_>,
    id: impl fmt::Display,
    peer: &Peer,
    server: Option<&str>,
    version: Option<&str>,
) -> Span {
    tracing::info_span!(
        "mcp.client.request",
        otel.name = %target,
        otel.kind = "client",
        mcp.method.name = target.method,
        jsonrpc.request.id = %id,
        gen_ai.operation.name = target.operation(),
        gen_ai.tool.name = target.tool(),
        gen_ai.prompt.name = target.prompt(),
        mcp.transport = peer.transport,
        network.transport = peer.network,
        server.address = peer.address.as_deref(),
        server.port = peer.port,
        mcp.server.name = server,
        mcp.protocol.version = version,
        mcp.outcome = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    )
}

/// The span of a request a server serves: `server` is its name, `version`
/// gives the session's revision (called only when the span is wanted),
/// `meta` is the request's `_meta`; with the feature `opentelemetry`, the
/// caller's trace context there (else `remote`, what the transport got:
/// the HTTP headers) is its parent.
pub(crate) fn served(
    target: Target<'_>,
    id: &Value,
    server: &str,
    version: impl FnOnce() -> Option<String>,
    meta: Option<&Map<String, Value>>,
    remote: Option<&Remote>,
) -> Span {
    let span = tracing::info_span!(
        "mcp.server.request",
        otel.name = %target,
        otel.kind = "server",
        mcp.method.name = target.method,
        jsonrpc.request.id = %Id(id),
        gen_ai.operation.name = target.operation(),
        gen_ai.tool.name = target.tool(),
        gen_ai.prompt.name = target.prompt(),
        mcp.server.name = server,
        mcp.protocol.version = version().as_deref(),
        mcp.outcome = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    );
    #[cfg(feature = "opentelemetry")]
    if !span.is_disabled() {
        crate::trace_context::set_parent(&span, meta, remote);
    }
    #[cfg(not(feature = "opentelemetry"))]
    let _ = (meta, remote);
    span
}

/// The trace context a transport received beside the message (the W3C
/// HTTP headers), for [`served`].
#[cfg(feature = "opentelemetry")]
pub(crate) type Remote = crate::trace_context::TraceContext;

/// Without the feature `opentelemetry` nothing is received.
#[cfg(not(feature = "opentelemetry"))]
#[derive(Debug, Clone)]
pub(crate) enum Remote {}

/// Records how the request of `span` ended.
pub(crate) fn outcome(span: &Span, outcome: Outcome<'_>) {
    if span.is_disabled() {
        return;
    }
    match outcome {
        Outcome::Ok => {
            span.record("mcp.outcome", "ok");
        }
        Outcome::ToolError => {
            span.record("mcp.outcome", "tool_error");
            span.record("error.type", "tool_error");
            span.record("otel.status_code", "ERROR");
        }
        Outcome::Error { code, message } => {
            span.record("mcp.outcome", "jsonrpc_error");
            span.record("error.type", code.to_string());
            span.record("rpc.response.status_code", code.to_string());
            span.record("otel.status_code", "ERROR");
            span.record("otel.status_description", message);
        }
        Outcome::Failed { kind, message } => {
            span.record("mcp.outcome", "failed");
            span.record("error.type", kind);
            span.record("otel.status_code", "ERROR");
            span.record("otel.status_description", message);
        }
    }
}

/// How a request ended.
pub(crate) enum Outcome<'a> {
    /// Answered with a result (a tool's result that is no error).
    Ok,
    /// A tool's result with `isError`.
    ToolError,
    /// A JSON-RPC error.
    Error { code: i64, message: &'a str },
    /// No answer (the client's side: a timeout, a closed transport, …):
    /// `kind` says which.
    Failed { kind: &'a str, message: &'a str },
}

impl<'a> Outcome<'a> {
    /// The outcome of a served request answered with `answer`; `tool_call`
    /// says whether a result is a tool's (whose `isError` is its outcome).
    pub(crate) fn of_answer(
        answer: Result<&Value, &'a crate::jsonrpc::ErrorObject>,
        tool_call: bool,
    ) -> Self {
        match answer {
            Ok(result) if tool_call && result.get("isError") == Some(&Value::Bool(true)) => {
                Self::ToolError
            }
            Ok(_) => Self::Ok,
            Err(error) => Self::Error {
                code: error.code,
                message: &error.message,
            },
        }
    }
}
