//! The spans of a test's thread, as OpenTelemetry exports them: a
//! `tracing-opentelemetry` layer on an in-memory exporter, part of the one
//! subscriber of the test binary (`logs.rs` installs it). It records the
//! spans of the threads that [`Traces::capture`] (run the test on a
//! current-thread runtime, `#[tokio::test]`, so that the tasks it spawns,
//! servers included, are on its thread); the others, the other tests'
//! threads, are left out, so that no other test's requests carry a trace
//! context. Its filter asks the thread for every span (an `Interest` of
//! "sometimes"): a `FilterFn` would decide once per callsite, for every
//! thread.

use std::cell::Cell;
use std::sync::OnceLock;

use opentelemetry::trace::{SpanId, SpanKind, TraceContextExt, TraceId, TracerProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::DynFilterFn;
use tracing_subscriber::registry::LookupSpan;

thread_local! {
    /// Whether the thread's spans are recorded.
    static RECORDING: Cell<bool> = const { Cell::new(false) };
}

/// Where the recorded spans go once they end.
static EXPORTER: OnceLock<InMemorySpanExporter> = OnceLock::new();

/// The layer `logs.rs` adds to the binary's subscriber.
pub fn layer<S>() -> impl Layer<S>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    let exporter = EXPORTER.get_or_init(InMemorySpanExporter::default).clone();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter)
        .build();
    let tracer = provider.tracer("claude-code-agent-mcp tests");
    let recording = DynFilterFn::new(|_, _| RECORDING.with(Cell::get))
        .with_callsite_filter(|_| tracing::subscriber::Interest::sometimes());
    tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(recording)
}

/// The spans of the test's thread are recorded while this lives.
pub struct Traces(());

impl Traces {
    /// Starts recording the thread's spans.
    pub fn capture() -> Self {
        super::logs::install();
        RECORDING.with(|r| r.set(true));
        Self(())
    }
}

impl Drop for Traces {
    fn drop(&mut self) {
        RECORDING.with(|r| r.set(false));
    }
}

/// The trace id of `span` (recorded: a thread that captures made it).
pub fn trace_id(span: &tracing::Span) -> TraceId {
    span.context().span().span_context().trace_id()
}

/// The span id of `span`.
pub fn span_id(span: &tracing::Span) -> SpanId {
    span.context().span().span_context().span_id()
}

/// Every span of `trace` that has ended.
pub fn ended(trace: TraceId) -> Vec<SpanData> {
    ended_all()
        .into_iter()
        .filter(|s| s.span_context.trace_id() == trace)
        .collect()
}

/// Every span that has ended, of every trace.
pub fn ended_all() -> Vec<SpanData> {
    EXPORTER
        .get()
        .map(|e| e.get_finished_spans().unwrap())
        .unwrap_or_default()
}

/// The one span of `spans` named `name` of `kind`.
pub fn find<'a>(spans: &'a [SpanData], name: &str, kind: SpanKind) -> &'a SpanData {
    let found: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name == name && s.span_kind == kind)
        .collect();
    match found.as_slice() {
        [one] => one,
        _ => panic!(
            "not one {kind:?} span {name:?} but {}: {:#?}",
            found.len(),
            spans
                .iter()
                .map(|s| (&s.name, &s.span_kind))
                .collect::<Vec<_>>()
        ),
    }
}

/// The value of the attribute `key` of `span`, as text.
pub fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}
