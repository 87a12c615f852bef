//! W3C Trace Context across MCP (feature `opentelemetry`): the caller's
//! span travels with each request as SEP-414 has it, in `params._meta`
//! (`traceparent`, `tracestate`), and over Streamable HTTP also in the
//! W3C HTTP headers of the same names.
//!
//! With the feature on and a [`tracing-opentelemetry`] layer installed
//! (`tracing_opentelemetry::layer()`, of the version this crate's feature
//! uses: 0.34, on `opentelemetry` 0.33):
//!
//! * [`McpClient`](crate::client::McpClient) puts the trace context of each
//!   request's span (`mcp.client.request`, a child of the span current
//!   where the request is made) into its `params._meta`; keys the caller
//!   set are kept, so a `traceparent` given in the request's `_meta`
//!   ([`RequestOptions::meta`](crate::client::RequestOptions::meta), or
//!   the params) wins. Over HTTP the same values also go as headers.
//! * Our servers, whatever the transport (stdio, Streamable HTTP, in
//!   process, the Claude Code SDK's bridge), make the span of each request
//!   they serve (`mcp.server.request`) a child of the context the request
//!   carries in `_meta`, else of the HTTP headers'. A request without one
//!   is served as before: its span's parent is the span current where it
//!   is served, if any.
//!
//! This module is the one place of the crate that reads or writes W3C
//! trace context; [`current`] gives the current span's, as text, for
//! carrying it elsewhere (the `TRACEPARENT` environment variable of a
//! child process, say).
//!
//! ```
//! use claude_code_agent_mcp::trace_context::{self, TraceContext};
//! use serde_json::json;
//!
//! // No OpenTelemetry layer is installed here: no current context.
//! assert_eq!(trace_context::current(), None);
//!
//! let meta = json!({"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
//!                   "tracestate": "vendor=1"});
//! let context = TraceContext::from_meta(meta.as_object().unwrap()).unwrap();
//! assert_eq!(context.tracestate.as_deref(), Some("vendor=1"));
//! // A malformed one is none.
//! assert_eq!(TraceContext::from_meta(json!({"traceparent": "00-0-0-01"}).as_object().unwrap()), None);
//! ```
//!
//! [`tracing-opentelemetry`]: https://docs.rs/tracing-opentelemetry

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::{Map, Value};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The `_meta` key and HTTP header of the W3C `traceparent`.
pub const TRACEPARENT: &str = "traceparent";
/// The `_meta` key and HTTP header of the W3C `tracestate`.
pub const TRACESTATE: &str = "tracestate";

/// A W3C trace context as text: a valid `traceparent`
/// (`00-<trace id>-<parent id>-<flags>`) and the `tracestate` that goes
/// with it, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TraceContext {
    /// The `traceparent` value.
    pub traceparent: String,
    /// The `tracestate` value, if there is one.
    pub tracestate: Option<String>,
}

impl TraceContext {
    /// The trace context `meta` (a request's `_meta`) carries: `None`
    /// without a `traceparent`, or with one that is not a valid W3C
    /// `traceparent` of a sampled or unsampled span.
    pub fn from_meta(meta: &Map<String, Value>) -> Option<Self> {
        let carried = Self::carried(|key| meta.get(key)?.as_str())?;
        carried.context().map(|_| carried)
    }

    /// The fields that `get` reads (HTTP headers, say), as they are: what
    /// [`set_parent`] checks when it uses them.
    pub(crate) fn carried<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Option<Self> {
        Some(Self {
            traceparent: get(TRACEPARENT)?.trim().to_owned(),
            tracestate: get(TRACESTATE).map(str::to_owned),
        })
    }

    /// The trace context of `span`, if it has a valid one (an
    /// OpenTelemetry layer records it).
    fn of(span: &Span) -> Option<Self> {
        if span.is_disabled() {
            return None;
        }
        let cx = span.context();
        if !cx.span().span_context().is_valid() {
            return None;
        }
        let mut fields = Fields::default();
        TraceContextPropagator::new().inject_context(&cx, &mut fields);
        Some(Self {
            traceparent: fields.traceparent?,
            tracestate: fields.tracestate.filter(|s| !s.is_empty()),
        })
    }

    /// The OpenTelemetry context this trace context describes (its span
    /// a remote one), if valid.
    fn context(&self) -> Option<opentelemetry::Context> {
        let fields = Fields {
            traceparent: Some(self.traceparent.clone()),
            tracestate: self.tracestate.clone(),
        };
        let cx = TraceContextPropagator::new()
            .extract_with_context(&opentelemetry::Context::new(), &fields);
        cx.span().span_context().is_valid().then_some(cx)
    }

    /// Writes this context into `meta` (a `_meta` object), unless it has a
    /// `traceparent` already: a caller's own wins, and its `tracestate`
    /// stays with it.
    fn write_to(&self, meta: &mut Map<String, Value>) {
        if meta.contains_key(TRACEPARENT) {
            return;
        }
        meta.insert(TRACEPARENT.into(), self.traceparent.clone().into());
        if let Some(state) = &self.tracestate {
            meta.entry(TRACESTATE)
                .or_insert_with(|| state.clone().into());
        }
    }
}

/// The trace context of the current `tracing` span, if it has one (an
/// OpenTelemetry layer records it): what [`McpClient`](crate::client::McpClient)
/// would send with a request made here, as text.
pub fn current() -> Option<TraceContext> {
    TraceContext::of(&Span::current())
}

/// Puts the trace context of `span` (a request's) into the request's
/// `params._meta`, making both when absent; params that are no object are
/// left as they are. A `traceparent` already there wins.
pub(crate) fn inject(span: &Span, params: &mut Option<Value>) {
    let Some(context) = TraceContext::of(span) else {
        return;
    };
    let params = params.get_or_insert_with(|| Value::Object(Map::new()));
    if params.is_null() {
        *params = Value::Object(Map::new());
    }
    let Value::Object(params) = params else {
        return;
    };
    if let Value::Object(meta) = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        context.write_to(meta);
    }
}

/// [`inject`] into a `_meta` shared by calls (the in-process client's
/// direct calls): a new one when `span` has a context to add.
pub(crate) fn inject_shared(
    span: &Span,
    meta: Option<std::sync::Arc<Map<String, Value>>>,
) -> Option<std::sync::Arc<Map<String, Value>>> {
    let Some(context) = TraceContext::of(span) else {
        return meta;
    };
    if meta.as_ref().is_some_and(|m| m.contains_key(TRACEPARENT)) {
        return meta;
    }
    let mut own = meta.map(|m| (*m).clone()).unwrap_or_default();
    context.write_to(&mut own);
    Some(std::sync::Arc::new(own))
}

/// Makes the caller's span the parent of `span` (a served request's): the
/// context in `meta`, the request's `_meta`, else `remote`, what the
/// transport received beside it (the HTTP headers). Nothing changes
/// without a valid one.
pub(crate) fn set_parent(
    span: &Span,
    meta: Option<&Map<String, Value>>,
    remote: Option<&TraceContext>,
) {
    let from_meta = meta.and_then(|meta| TraceContext::carried(|key| meta.get(key)?.as_str()));
    let Some(cx) = from_meta
        .as_ref()
        .and_then(TraceContext::context)
        .or_else(|| remote.and_then(TraceContext::context))
    else {
        return;
    };
    let _ = span.set_parent(cx);
}

/// The caller's trace context in the W3C headers of an HTTP request, as
/// sent (checked when used: [`set_parent`]).
#[cfg(feature = "http-server")]
pub(crate) fn from_http(headers: &axum::http::HeaderMap) -> Option<TraceContext> {
    TraceContext::carried(|name| headers.get(name)?.to_str().ok())
}

/// Adds the W3C headers of a request whose `_meta` is `meta` to `headers`:
/// its `traceparent` and `tracestate`, when they are a valid context.
#[cfg(feature = "http-client")]
pub(crate) fn to_http(meta: Option<&Map<String, Value>>, headers: &mut reqwest::header::HeaderMap) {
    use reqwest::header::HeaderValue;
    let Some(context) = meta.and_then(TraceContext::from_meta) else {
        return;
    };
    if let Ok(value) = HeaderValue::from_str(&context.traceparent) {
        headers.insert(TRACEPARENT, value);
    }
    if let Some(Ok(value)) = context.tracestate.as_deref().map(HeaderValue::from_str) {
        headers.insert(TRACESTATE, value);
    }
}

/// A propagator's carrier of the two W3C fields.
#[derive(Default)]
struct Fields {
    traceparent: Option<String>,
    tracestate: Option<String>,
}

impl Injector for Fields {
    fn set(&mut self, key: &str, value: String) {
        match key {
            TRACEPARENT => self.traceparent = Some(value),
            TRACESTATE => self.tracestate = Some(value),
            _ => {}
        }
    }
}

impl Extractor for Fields {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            TRACEPARENT => self.traceparent.as_deref(),
            TRACESTATE => self.tracestate.as_deref(),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec![TRACEPARENT, TRACESTATE]
    }
}
