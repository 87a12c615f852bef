//! [`OtlpReceiver`] (feature `otlp`): a local OpenTelemetry collector for
//! tests — OTLP over HTTP with protobuf bodies (`POST /v1/traces`), decoded
//! with the official protobuf definitions (the `opentelemetry-proto`
//! crate's generated messages) and kept for assertions.
//!
//! Point any OTLP/HTTP exporter at [`endpoint`](OtlpReceiver::endpoint)
//! (`OTEL_EXPORTER_OTLP_ENDPOINT`, with `OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`)
//! or [`traces_url`](OtlpReceiver::traces_url) (`opentelemetry-otlp`'s
//! `with_endpoint`), then wait for what a test expects with
//! [`wait_for`](OtlpReceiver::wait_for):
//!
//! ```no_run
//! use std::time::Duration;
//! use claude_code_agent_testkit::otlp::OtlpReceiver;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let receiver = OtlpReceiver::start().await.unwrap();
//! // … run the CLI with OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint() …
//! let spans = receiver
//!     .wait_for(Duration::from_secs(30), |spans| {
//!         spans.iter().any(|s| s.name == "claude_code.interaction")
//!     })
//!     .await
//!     .expect("the CLI exported its interaction span");
//! assert!(spans.iter().all(|s| s.trace_id == spans[0].trace_id));
//! # }
//! ```
//!
//! Only protobuf bodies without compression are decoded (what the Claude
//! Code CLI and `opentelemetry-otlp` send by default with
//! `http/protobuf`); JSON or gzip bodies are answered `415` and listed in
//! [`rejected`](OtlpReceiver::rejected), as is a body that does not decode.
//! Other paths (`/v1/metrics`, `/v1/logs`) are answered `404`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use prost::Message as _;
use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The largest request body accepted (an exporter's batch).
const BODY_LIMIT: usize = 64 << 20;

/// A span as an exporter sent it: its ids in lowercase hex, its attributes
/// and its resource's as JSON values.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ReceivedSpan {
    /// The trace id: 32 hex digits.
    pub trace_id: String,
    /// The span id: 16 hex digits.
    pub span_id: String,
    /// The parent's span id, if the span has a parent.
    pub parent_span_id: Option<String>,
    /// The span's name.
    pub name: String,
    /// The name of the instrumentation scope that made it.
    pub scope: String,
    /// Its attributes (strings, booleans, integers, doubles; arrays and
    /// key-value lists as JSON arrays and objects; bytes as hex strings).
    pub attributes: BTreeMap<String, Value>,
    /// Its events: name and attributes.
    pub events: Vec<(String, BTreeMap<String, Value>)>,
    /// The attributes of the resource that sent it (`service.name`, …).
    pub resource: BTreeMap<String, Value>,
    /// When it started and ended, in nanoseconds since the Unix epoch.
    pub start_unix_nano: u64,
    /// See [`start_unix_nano`](Self::start_unix_nano).
    pub end_unix_nano: u64,
    /// Its status code: 0 unset, 1 ok, 2 error.
    pub status_code: i32,
    /// Its status message.
    pub status_message: String,
}

impl ReceivedSpan {
    /// The attribute `key`.
    pub fn attribute(&self, key: &str) -> Option<&Value> {
        self.attributes.get(key)
    }

    /// The attribute `key`, if it is a string.
    pub fn str_attribute(&self, key: &str) -> Option<&str> {
        self.attribute(key).and_then(Value::as_str)
    }

    /// The resource's `service.name`.
    pub fn service_name(&self) -> Option<&str> {
        self.resource.get("service.name").and_then(Value::as_str)
    }

    /// How long it took.
    pub fn duration(&self) -> Duration {
        Duration::from_nanos(self.end_unix_nano.saturating_sub(self.start_unix_nano))
    }

    /// Every string it carries — attribute, event and resource keys and
    /// values, its name — for checks that something (a secret) appears
    /// nowhere.
    pub fn texts(&self) -> Vec<String> {
        let mut out = vec![self.name.clone()];
        let maps = std::iter::once(&self.attributes)
            .chain(self.events.iter().map(|(_, a)| a))
            .chain(std::iter::once(&self.resource));
        for map in maps {
            for (k, v) in map {
                out.push(k.clone());
                out.push(match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
            }
        }
        out.extend(self.events.iter().map(|(name, _)| name.clone()));
        out
    }
}

/// What was received so far.
#[derive(Default)]
struct Received {
    spans: Vec<ReceivedSpan>,
    rejected: Vec<String>,
}

struct Shared {
    received: Mutex<Received>,
    /// Woken whenever spans arrive.
    arrived: Notify,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Received> {
        self.received.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A local OTLP/HTTP trace receiver on `127.0.0.1` (see the
/// [module docs](self)). Stops serving when dropped.
pub struct OtlpReceiver {
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for OtlpReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let received = self.shared.lock();
        f.debug_struct("OtlpReceiver")
            .field("addr", &self.addr)
            .field("spans", &received.spans.len())
            .field("rejected", &received.rejected.len())
            .finish()
    }
}

/// [`OtlpReceiver::wait_for`] timed out: what had arrived by then.
#[derive(Debug, thiserror::Error)]
#[error(
    "the OTLP receiver did not get the expected spans within {waited:?} \
     ({} spans received, {} requests rejected: {rejected:?})", spans.len(), rejected.len()
)]
#[non_exhaustive]
pub struct WaitTimedOut {
    /// How long it waited.
    pub waited: Duration,
    /// The spans received by then.
    pub spans: Vec<ReceivedSpan>,
    /// The requests refused by then, and why.
    pub rejected: Vec<String>,
}

impl OtlpReceiver {
    /// Binds `127.0.0.1:0` and starts serving (inside a Tokio runtime).
    pub async fn start() -> std::io::Result<OtlpReceiver> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            received: Mutex::new(Received::default()),
            arrived: Notify::new(),
        });
        let shutdown = CancellationToken::new();
        let app = Router::new()
            .route("/v1/traces", post(traces))
            .layer(DefaultBodyLimit::max(BODY_LIMIT))
            .with_state(shared.clone());
        let token = shutdown.clone();
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(token.cancelled_owned());
            if let Err(e) = serve.await {
                tracing::warn!("OTLP receiver stopped: {e}");
            }
        });
        Ok(OtlpReceiver {
            shared,
            addr,
            shutdown,
        })
    }

    /// The base URL, `http://127.0.0.1:PORT`: the value of
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` (exporters add `/v1/traces`).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The traces URL, `http://127.0.0.1:PORT/v1/traces`: the value of
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or of `opentelemetry-otlp`'s
    /// `with_endpoint` for an HTTP span exporter.
    pub fn traces_url(&self) -> String {
        format!("{}/v1/traces", self.endpoint())
    }

    /// Every span received so far, in arrival order.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.shared.lock().spans.clone()
    }

    /// The requests refused so far, each with its reason (a content type or
    /// encoding other than uncompressed protobuf, a body that does not
    /// decode).
    pub fn rejected(&self) -> Vec<String> {
        self.shared.lock().rejected.clone()
    }

    /// Waits until the spans received satisfy `done` (checked now and at
    /// each arrival), at most `timeout`: the spans then, or what had
    /// arrived when it gave up.
    pub async fn wait_for(
        &self,
        timeout: Duration,
        mut done: impl FnMut(&[ReceivedSpan]) -> bool,
    ) -> Result<Vec<ReceivedSpan>, WaitTimedOut> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            // Registered before looking, so an arrival in between wakes it.
            let arrived = self.shared.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            {
                let received = self.shared.lock();
                if done(&received.spans) {
                    return Ok(received.spans.clone());
                }
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                let received = self.shared.lock();
                return Err(WaitTimedOut {
                    waited: timeout,
                    spans: received.spans.clone(),
                    rejected: received.rejected.clone(),
                });
            }
        }
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// `POST /v1/traces`: decodes an `ExportTraceServiceRequest` and keeps its
/// spans; answers an empty `ExportTraceServiceResponse`.
async fn traces(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("identity");
    let refuse = |status: StatusCode, why: String| {
        shared.lock().rejected.push(why.clone());
        shared.arrived.notify_waiters();
        (status, why).into_response()
    };
    if !content_type.starts_with("application/x-protobuf") {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("content type {content_type:?}: only application/x-protobuf is decoded"),
        );
    }
    if encoding != "identity" {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("content encoding {encoding:?}: only uncompressed bodies are decoded"),
        );
    }
    let request = match ExportTraceServiceRequest::decode(body) {
        Ok(request) => request,
        Err(e) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                format!("the body is no ExportTraceServiceRequest: {e}"),
            );
        }
    };
    let spans = flatten(request);
    shared.lock().spans.extend(spans);
    shared.arrived.notify_waiters();
    (
        [(header::CONTENT_TYPE, "application/x-protobuf")],
        ExportTraceServiceResponse::default().encode_to_vec(),
    )
        .into_response()
}

/// The request's spans, each with its resource's attributes and its scope.
fn flatten(request: ExportTraceServiceRequest) -> Vec<ReceivedSpan> {
    let mut out = Vec::new();
    for resource_spans in request.resource_spans {
        let resource = attributes(
            resource_spans
                .resource
                .map(|r| r.attributes)
                .unwrap_or_default(),
        );
        for scope_spans in resource_spans.scope_spans {
            let scope = scope_spans.scope.map(|s| s.name).unwrap_or_default();
            for span in scope_spans.spans {
                let status = span.status.unwrap_or_default();
                out.push(ReceivedSpan {
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: (!span.parent_span_id.is_empty())
                        .then(|| hex(&span.parent_span_id)),
                    name: span.name,
                    scope: scope.clone(),
                    attributes: attributes(span.attributes),
                    events: span
                        .events
                        .into_iter()
                        .map(|e| (e.name, attributes(e.attributes)))
                        .collect(),
                    resource: resource.clone(),
                    start_unix_nano: span.start_time_unix_nano,
                    end_unix_nano: span.end_time_unix_nano,
                    status_code: status.code,
                    status_message: status.message,
                });
            }
        }
    }
    out
}

fn attributes(list: Vec<KeyValue>) -> BTreeMap<String, Value> {
    list.into_iter()
        .map(|kv| (kv.key, kv.value.map_or(Value::Null, json)))
        .collect()
}

fn json(value: AnyValue) -> Value {
    use any_value::Value as V;
    match value.value {
        Some(V::StringValue(s)) => Value::String(s),
        Some(V::BoolValue(b)) => Value::Bool(b),
        Some(V::IntValue(i)) => Value::from(i),
        Some(V::DoubleValue(d)) => Value::from(d),
        Some(V::ArrayValue(a)) => Value::Array(a.values.into_iter().map(json).collect()),
        Some(V::KvlistValue(l)) => Value::Object(attributes(l.values).into_iter().collect()),
        Some(V::BytesValue(b)) => Value::String(hex(&b)),
        _ => Value::Null,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
    use opentelemetry_proto::tonic::resource::v1::Resource;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};

    use super::*;

    fn kv(key: &str, value: any_value::Value) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Some(AnyValue { value: Some(value) }),
            ..Default::default()
        }
    }

    fn request() -> ExportTraceServiceRequest {
        let span = Span {
            trace_id: vec![0xab; 16],
            span_id: vec![0x01; 8],
            parent_span_id: vec![0x02; 8],
            name: "claude_code.tool".into(),
            attributes: vec![
                kv("tool_name", any_value::Value::StringValue("add".into())),
                kv("duration_ms", any_value::Value::IntValue(7)),
            ],
            ..Default::default()
        };
        ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(Resource {
                    attributes: vec![kv(
                        "service.name",
                        any_value::Value::StringValue("claude-code".into()),
                    )],
                    ..Default::default()
                }),
                scope_spans: vec![ScopeSpans {
                    scope: Some(InstrumentationScope {
                        name: "com.anthropic.claude_code".into(),
                        ..Default::default()
                    }),
                    spans: vec![span],
                    ..Default::default()
                }],
                ..Default::default()
            }],
        }
    }

    async fn post(receiver: &OtlpReceiver, content_type: &str, body: Vec<u8>) -> u16 {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(receiver.addr).await.unwrap();
        let head = format!(
            "POST /v1/traces HTTP/1.1\r\nhost: x\r\ncontent-type: {content_type}\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(&body).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer[9..12].parse().unwrap()
    }

    #[tokio::test]
    async fn protobuf_spans_are_decoded_and_other_bodies_refused() {
        let receiver = OtlpReceiver::start().await.unwrap();
        let status = post(
            &receiver,
            "application/x-protobuf",
            request().encode_to_vec(),
        )
        .await;
        assert_eq!(status, 200);
        let spans = receiver
            .wait_for(Duration::from_secs(5), |s| !s.is_empty())
            .await
            .unwrap();
        let span = &spans[0];
        assert_eq!(span.trace_id, "ab".repeat(16));
        assert_eq!(span.span_id, "0101010101010101");
        assert_eq!(span.parent_span_id.as_deref(), Some("0202020202020202"));
        assert_eq!(span.name, "claude_code.tool");
        assert_eq!(span.scope, "com.anthropic.claude_code");
        assert_eq!(span.str_attribute("tool_name"), Some("add"));
        assert_eq!(span.attribute("duration_ms"), Some(&Value::from(7)));
        assert_eq!(span.service_name(), Some("claude-code"));
        assert!(span.texts().iter().any(|t| t == "add"));

        assert_eq!(
            post(&receiver, "application/json", b"{}".to_vec()).await,
            415
        );
        assert_eq!(
            post(&receiver, "application/x-protobuf", vec![0xff, 0xff]).await,
            400
        );
        let rejected = receiver.rejected();
        assert_eq!(rejected.len(), 2, "{rejected:?}");
        assert!(rejected[0].contains("application/json"), "{rejected:?}");
        assert_eq!(receiver.spans().len(), 1);

        let timed_out = receiver
            .wait_for(Duration::from_millis(50), |s| s.len() > 1)
            .await
            .unwrap_err();
        assert_eq!(timed_out.spans.len(), 1);
    }
}
