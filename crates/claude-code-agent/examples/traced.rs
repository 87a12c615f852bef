//! The trace of one agent run, as a waterfall in the terminal: the SDK's
//! spans (from a local in-memory exporter) and the Claude Code CLI's (from
//! the testkit's local OTLP receiver), one trace, indented by parent, each
//! with its duration, a bar on the run's time line and its key attributes.
//!
//! ```text
//! cargo run -p claude-code-agent --features opentelemetry --example traced
//! ```
//!
//! With `ANTHROPIC_API_KEY` set it talks to the real API. Without it, it
//! starts the testkit's mock model on 127.0.0.1, scripted to call the tool,
//! so it runs offline. Nothing leaves the machine either way: the spans go
//! to this program (docs/observability.md sends them to a real backend).

#[path = "support/calc.rs"]
mod calc;

#[path = "support/offline.rs"]
mod offline;

use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};

use claude_code_agent::{CliTelemetry, Message, Options, query};
use claude_code_agent_testkit::otlp::OtlpReceiver;
use claude_code_agent_testkit::{MockModel, Turn};
use futures::StreamExt;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::json;
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

const PROMPT: &str = "What is 2+3?";

/// The width of the time line, in characters.
const BAR: usize = 40;

/// The attributes shown beside a span, when it has them.
const SHOWN: &[&str] = &[
    "gen_ai.tool.name",
    "tool_name",
    "mcp.method.name",
    "control.subtype",
    "outcome",
    "success",
    "gen_ai.request.model",
    "model",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "input_tokens",
    "output_tokens",
    "claude_code.cost_usd",
    "claude_code.version",
    "process.pid",
];

/// A span of either process, as the waterfall shows it.
struct Row {
    trace: String,
    id: String,
    parent: Option<String>,
    name: String,
    from_cli: bool,
    start: u64,
    end: u64,
    attributes: BTreeMap<String, String>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The SDK's spans: tracing → tracing-opentelemetry → an in-memory exporter.
    let memory = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(memory.clone())
        .with_resource(
            Resource::builder()
                .with_service_name("traced-example")
                .build(),
        )
        .build();
    tracing::subscriber::set_global_default(
        tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("traced"))),
    )?;
    // The CLI's spans: OTLP over HTTP to a receiver in this process.
    let receiver = OtlpReceiver::start().await?;

    let mut options = Options::new()
        .mcp_server(calc::calc_server())
        .allowed_tools(["mcp__calc__add"])
        .max_turns(3)
        .cli_telemetry(CliTelemetry::traces().endpoint(receiver.endpoint()));
    let mut _offline = None;
    if std::env::var_os("ANTHROPIC_API_KEY").is_some() {
        println!("Using the Anthropic API (ANTHROPIC_API_KEY is set).");
    } else {
        println!(
            "No ANTHROPIC_API_KEY: using the testkit's mock model, scripted to call the tool."
        );
        let mock = MockModel::builder()
            .turn(Turn::tool_use("mcp__calc__add", json!({"a": 2, "b": 3})))
            .turn(Turn::text("2 + 3 = 5."))
            .start()
            .await;
        let (offline_options, held) = offline::offline(options, mock).await?;
        options = offline_options;
        _offline = Some(held);
    }

    println!("> {PROMPT}");
    let run = tracing::info_span!("traced.run", prompt.length = PROMPT.len());
    let mut stream = run.in_scope(|| query(PROMPT, options));
    async {
        while let Some(message) = stream.next().await {
            if let Message::Result(r) = message? {
                println!("{}", r.result.unwrap_or_default());
            }
        }
        Ok::<_, claude_code_agent::Error>(())
    }
    .instrument(run.clone())
    .await?;
    drop(stream);
    drop(run);

    // The CLI exports its spans as it exits.
    let cli_spans = match receiver
        .wait_for(Duration::from_secs(20), |spans| {
            spans.iter().any(|s| s.name == "claude_code.interaction")
        })
        .await
    {
        Ok(spans) => spans,
        Err(e) => {
            eprintln!("(no span from the CLI: {e})");
            e.spans
        }
    };
    provider.force_flush()?;

    let mut rows: Vec<Row> = memory.get_finished_spans()?.into_iter().map(ours).collect();
    rows.extend(cli_spans.into_iter().map(|s| {
        Row {
            trace: s.trace_id,
            id: s.span_id,
            parent: s.parent_span_id,
            name: s.name,
            from_cli: true,
            start: s.start_unix_nano,
            end: s.end_unix_nano,
            attributes: s
                .attributes
                .into_iter()
                .map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
                .collect(),
        }
    }));
    waterfall(&rows);
    provider.shutdown()?;
    Ok(())
}

/// A span of this process, from the in-memory exporter.
fn ours(span: opentelemetry_sdk::trace::SpanData) -> Row {
    let nanos = |t: std::time::SystemTime| {
        t.duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    };
    let parent = span.parent_span_id;
    Row {
        trace: format!("{:032x}", span.span_context.trace_id()),
        id: format!("{:016x}", span.span_context.span_id()),
        parent: (parent != opentelemetry::trace::SpanId::INVALID).then(|| format!("{parent:016x}")),
        name: span.name.into_owned(),
        from_cli: false,
        start: nanos(span.start_time),
        end: nanos(span.end_time),
        attributes: span
            .attributes
            .into_iter()
            .map(|kv| (kv.key.to_string(), kv.value.to_string()))
            .collect(),
    }
}

/// Prints each trace: roots first, children under their parent by start
/// time, each with its duration, a bar on the trace's time line and the
/// attributes of [`SHOWN`] it has.
fn waterfall(rows: &[Row]) {
    let mut traces: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for row in rows {
        traces.entry(row.trace.as_str()).or_default().push(row);
    }
    for (trace, spans) in traces {
        let t0 = spans.iter().map(|s| s.start).min().unwrap_or(0);
        let t1 = spans.iter().map(|s| s.end).max().unwrap_or(t0).max(t0 + 1);
        let from_cli = spans.iter().filter(|s| s.from_cli).count();
        println!(
            "\ntrace {trace}: {} spans ({} from this program, {from_cli} from the CLI), {:.1} ms\n",
            spans.len(),
            spans.len() - from_cli,
            (t1 - t0) as f64 / 1e6
        );
        let known = |id: &String| spans.iter().any(|s| &s.id == id);
        let mut roots: Vec<&Row> = spans
            .iter()
            .copied()
            .filter(|s| !s.parent.as_ref().is_some_and(known))
            .collect();
        roots.sort_by_key(|s| s.start);
        for root in roots {
            print_tree(root, &spans, 0, t0, t1);
        }
    }
}

fn print_tree(row: &Row, spans: &[&Row], depth: usize, t0: u64, t1: u64) {
    let scale = |t: u64| ((t - t0) as f64 / (t1 - t0) as f64 * BAR as f64) as usize;
    let (from, to) = (scale(row.start), scale(row.end).max(scale(row.start) + 1));
    let bar: String = (0..BAR)
        .map(|i| if (from..to).contains(&i) { '█' } else { '·' })
        .collect();
    let name = format!(
        "{}{}{}",
        "  ".repeat(depth),
        row.name,
        if row.from_cli { " [cli]" } else { "" }
    );
    let shown: Vec<String> = SHOWN
        .iter()
        .filter_map(|k| row.attributes.get(*k).map(|v| format!("{k}={v}")))
        .collect();
    println!(
        "{name:<48} {:>9.1} ms {bar} {}",
        (row.end.saturating_sub(row.start)) as f64 / 1e6,
        shown.join(" ")
    );
    let mut children: Vec<&Row> = spans
        .iter()
        .copied()
        .filter(|s| s.parent.as_deref() == Some(row.id.as_str()))
        .collect();
    children.sort_by_key(|s| s.start);
    for child in children {
        print_tree(child, spans, depth + 1, t0, t1);
    }
}
