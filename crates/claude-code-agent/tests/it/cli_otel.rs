//! One trace across the process boundary (feature `opentelemetry`): the
//! test's span, the SDK's session span, the real CLI's interaction and tool
//! spans (the CLI exports them with `CLAUDE_CODE_ENABLE_TELEMETRY=1`, its
//! parent from `TRACEPARENT`) and the SDK's in-process tool span, all
//! received by the testkit's `OtlpReceiver`, which decodes OTLP with the
//! official protobuf definitions. Both processes export to it: the SDK
//! through `opentelemetry-otlp` (HTTP, protobuf), the CLI with its own
//! exporter. One real-CLI run. And, separately, MCP alone: our MCP
//! client → our Streamable HTTP server → the tool, one trace in the
//! receiver through `_meta.traceparent`.

use std::time::Duration;

use crate::support::*;
use claude_code_agent::mcp::schemars::{self, JsonSchema};
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::{CliTelemetry, query};
use claude_code_agent_testkit::otlp::{OtlpReceiver, ReceivedSpan};
use claude_code_agent_testkit::{MockModel, Turn};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use serde::Deserialize;
use serde_json::json;
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

/// The CLI's API key in this test: no span may hold it.
const API_KEY: &str = "sk-test-otel-secret-5d1e9b";
/// A tool argument no span may hold (tool details are not asked for).
const ARGUMENT: f64 = 4242.125;

/// The README's tool.
#[derive(Deserialize, JsonSchema)]
struct Add {
    a: f64,
    b: f64,
}

/// The span named `name` (exactly one).
fn one<'a>(spans: &'a [ReceivedSpan], name: &str) -> &'a ReceivedSpan {
    let found: Vec<_> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "one {name} span expected: {spans:#?}");
    found[0]
}

/// The chain of parents of `span` that are in `spans`, nearest first.
fn ancestors<'a>(spans: &'a [ReceivedSpan], span: &ReceivedSpan) -> Vec<&'a ReceivedSpan> {
    let mut chain = Vec::new();
    let mut parent = span.parent_span_id.clone();
    while let Some(id) = parent {
        let Some(next) = spans.iter().find(|s| s.span_id == id) else {
            break;
        };
        chain.push(next);
        parent = next.parent_span_id.clone();
    }
    chain
}

/// A tracer provider of service `service` that exports to `receiver` over
/// OTLP/HTTP (protobuf) within 100 ms of a span's end: the receiver is
/// waited on, nothing is flushed by hand.
fn exporting_to(receiver: &OtlpReceiver, service: &'static str) -> SdkTracerProvider {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(receiver.traces_url())
        .build()
        .expect("the OTLP exporter builds");
    let processor = BatchSpanProcessor::builder(exporter)
        .with_batch_config(
            BatchConfigBuilder::default()
                .with_scheduled_delay(Duration::from_millis(100))
                .build(),
        )
        .build();
    SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_resource(Resource::builder().with_service_name(service).build())
        .build()
}

// A current-thread runtime: the subscriber set with `set_default` (for this
// thread only, so that no other test's spans reach it) sees every task.
#[tokio::test(flavor = "current_thread")]
async fn one_trace_from_the_callers_span_through_the_cli_to_the_tool() {
    with_timeout(async {
        let receiver = OtlpReceiver::start()
            .await
            .expect("the OTLP receiver starts");
        let provider = exporting_to(&receiver, "agent-under-test");
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("cli_otel")));
        let default = tracing::subscriber::set_default(subscriber);

        let h = Harness::start_with_env(
            MockModel::builder()
                .turn(Turn::tool_use(
                    "mcp__calc__add",
                    json!({"a": ARGUMENT, "b": 1}),
                ))
                .turn(Turn::text("4243.125")),
            &[("ANTHROPIC_API_KEY", API_KEY)],
        )
        .await;
        let calc = Server::builder("calc", "1.0.0")
            .tool(Tool::new("add", "Add two numbers", |x: Add| async move {
                x.a + x.b
            }))
            .build();
        let options = h
            .options()
            .mcp_server(calc)
            .allowed_tools(["mcp__calc__add"])
            .cli_telemetry(CliTelemetry::traces().endpoint(receiver.endpoint()));

        // The session's span is a child of the span current at `query()`.
        let root = tracing::info_span!("test.root");
        let stream = root.in_scope(|| query("What is 2+3?", options));
        let (messages, error) = drain(stream).instrument(root.clone()).await;
        assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());
        let tool_use_id = tool_uses(&messages)[0].id.clone();
        drop(root);

        let wanted = [
            "test.root",
            "claude_code_agent.session",
            "claude_code_agent.turn",
            "claude_code_agent.tool",
            "claude_code.interaction",
            "claude_code.tool",
        ];
        let spans = receiver
            .wait_for(Duration::from_secs(60), |spans| {
                wanted.iter().all(|w| spans.iter().any(|s| s.name == *w))
            })
            .await
            .unwrap_or_else(|e| panic!("{e}\n{:#?}\n{}", e.spans, h.stderr_text()));
        assert!(receiver.rejected().is_empty(), "{:?}", receiver.rejected());

        let root = one(&spans, "test.root");
        let session = one(&spans, "claude_code_agent.session");
        let turn = one(&spans, "claude_code_agent.turn");
        let tool = one(&spans, "claude_code_agent.tool");
        let interaction = one(&spans, "claude_code.interaction");
        let cli_tool = one(&spans, "claude_code.tool");

        // One trace: every span of both processes is in it.
        for span in &spans {
            assert_eq!(span.trace_id, root.trace_id, "{span:#?}");
        }
        assert_eq!(session.service_name(), Some("agent-under-test"));
        assert_ne!(interaction.service_name(), Some("agent-under-test"));
        // root → session → the CLI's interaction → the CLI's tool span.
        assert_eq!(root.parent_span_id, None);
        assert_eq!(session.parent_span_id.as_ref(), Some(&root.span_id));
        assert_eq!(interaction.parent_span_id.as_ref(), Some(&session.span_id));
        assert_eq!(interaction.str_attribute("parent.source"), Some("env"));
        assert!(
            ancestors(&spans, cli_tool)
                .iter()
                .any(|s| s.span_id == interaction.span_id),
            "{cli_tool:#?}"
        );
        // The CLI does not pass its tool span's context to an in-process
        // tool (docs/observability.md): ours is the session's child, tied
        // to the CLI's by the model's tool_use id.
        assert_eq!(tool.parent_span_id.as_ref(), Some(&session.span_id));
        assert_eq!(turn.parent_span_id.as_ref(), Some(&session.span_id));
        assert_eq!(
            tool.str_attribute("gen_ai.tool.call.id"),
            Some(tool_use_id.as_str())
        );
        assert_eq!(
            cli_tool.str_attribute("gen_ai.tool.call.id"),
            Some(tool_use_id.as_str())
        );
        assert!(
            cli_tool.start_unix_nano <= tool.start_unix_nano
                && tool.end_unix_nano <= cli_tool.end_unix_nano,
            "the tool ran inside the CLI's tool span: {cli_tool:#?} {tool:#?}"
        );

        // What our spans say.
        assert_eq!(tool.str_attribute("gen_ai.tool.name"), Some("add"));
        assert_eq!(
            tool.str_attribute("gen_ai.operation.name"),
            Some("execute_tool")
        );
        assert_eq!(tool.str_attribute("mcp.server.name"), Some("calc"));
        assert_eq!(tool.str_attribute("outcome"), Some("ok"));
        assert_eq!(
            turn.str_attribute("gen_ai.operation.name"),
            Some("invoke_agent")
        );
        assert!(
            turn.attribute("gen_ai.usage.input_tokens").is_some(),
            "{turn:#?}"
        );
        assert!(
            turn.attribute("gen_ai.usage.output_tokens").is_some(),
            "{turn:#?}"
        );
        assert!(
            turn.attribute("claude_code.cost_usd").is_some(),
            "{turn:#?}"
        );
        assert_eq!(turn.str_attribute("claude_code.result"), Some("success"));
        assert!(session.attribute("process.pid").is_some(), "{session:#?}");
        assert!(session.str_attribute("gen_ai.conversation.id").is_some());

        // No secret in any span of either process: not the API key, not the
        // tool's arguments.
        for span in &spans {
            for text in span.texts() {
                assert!(!text.contains(API_KEY), "{span:#?}");
                assert!(!text.contains("4242.125"), "{span:#?}");
            }
        }
        // Blocking (it exports what is left): off the runtime's one thread,
        // which serves the receiver.
        drop(default);
        tokio::task::spawn_blocking(move || provider.shutdown())
            .await
            .unwrap()
            .expect("the tracer provider shuts down");
        drop(receiver);
        h.finish().await;
    })
    .await
}

/// MCP alone, on the same receiver: the caller's span → our MCP client's
/// request span → our Streamable HTTP server's span of the request it
/// served → a span the tool made, one trace (the server takes the
/// client's context from `_meta.traceparent`).
#[tokio::test(flavor = "current_thread")]
async fn one_trace_from_an_mcp_client_through_our_http_server_to_the_tool() {
    use claude_code_agent::mcp::client::{ClientOptions, HttpOptions, HttpTransport, McpClient};
    use claude_code_agent::mcp::http_server::{StreamableHttpConfig, StreamableHttpService};

    with_timeout(async {
        let receiver = OtlpReceiver::start()
            .await
            .expect("the OTLP receiver starts");
        let provider = exporting_to(&receiver, "mcp-under-test");
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("mcp_otel")));
        let default = tracing::subscriber::set_default(subscriber);

        let calc = Server::builder("calc", "1.0.0")
            .tool(Tool::new("add", "Add two numbers", |x: Add| async move {
                tracing::info_span!("add.body").in_scope(|| x.a + x.b)
            }))
            .build();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving =
            tokio::spawn(
                StreamableHttpService::new(calc, StreamableHttpConfig::default())
                    .serve_with_shutdown(listener, async move {
                        let _ = stopped.await;
                    }),
            );
        let transport = HttpTransport::new(HttpOptions::new(&url)).unwrap();
        let client = McpClient::connect(transport, ClientOptions::new("traced", "1"))
            .await
            .expect("the client connects");
        let root = tracing::info_span!("test.root");
        let sum = client
            .call_tool("add", json!({"a": 2, "b": 3}))
            .instrument(root.clone())
            .await
            .expect("the call");
        assert!(!sum.is_error, "{sum:?}");
        drop(root);
        client.close().await.unwrap();
        let _ = stop.send(());
        serving.await.unwrap().unwrap();

        let spans = receiver
            .wait_for(Duration::from_secs(30), |spans| {
                ["test.root", "add.body"]
                    .iter()
                    .all(|w| spans.iter().any(|s| s.name == *w))
            })
            .await
            .unwrap_or_else(|e| panic!("{e}\n{:#?}", e.spans));
        let root = one(&spans, "test.root");
        let body = one(&spans, "add.body");
        let chain = ancestors(&spans, body);
        // add.body → served request → client request → test.root.
        assert_eq!(chain.len(), 3, "{chain:#?}");
        let (served, sent) = (chain[0], chain[1]);
        assert_eq!(chain[2].span_id, root.span_id);
        for span in [body, served, sent] {
            assert_eq!(span.trace_id, root.trace_id, "{span:#?}");
        }
        assert_eq!(served.name, "tools/call add", "{served:#?}");
        assert_eq!(sent.name, "tools/call add", "{sent:#?}");
        assert_eq!(sent.str_attribute("mcp.transport"), Some("http"));
        assert_eq!(served.str_attribute("gen_ai.tool.name"), Some("add"));

        drop(default);
        tokio::task::spawn_blocking(move || provider.shutdown())
            .await
            .unwrap()
            .expect("the tracer provider shuts down");
    })
    .await
}
