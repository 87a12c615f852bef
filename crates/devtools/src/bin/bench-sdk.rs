//! The SDK side of the benchmark (`scripts/bench`): an in-process server
//! `bench` with one tool `add`, driven through `query()` by the fake CLI's
//! `bench` scenario, which times every `tools/call` round trip.
//!
//! ```text
//! FAKE_CLAUDE_PATH=target/release/fake-claude FAKE_CLAUDE_SCENARIO=bench \
//! FAKE_CLAUDE_PARAMS='{"report":"/tmp/r.json"}' \
//!   cargo run --release -p claude-code-agent-devtools --bin bench-sdk
//! ```
//!
//! The topology is the real one: this process spawns the (fake) CLI, which
//! inherits `FAKE_CLAUDE_SCENARIO`/`FAKE_CLAUDE_PARAMS`, measures, and
//! writes its report. At exit this prints its own peak RSS on stderr.
//! The runtime is tokio's default multi-thread one (`#[tokio::main]`), or a
//! current-thread one with `BENCH_TOKIO=current_thread`.
//!
//! With `BENCH_SUBJECT_REPORT` set, it writes there (JSON) when it called
//! `query()` and when the first message arrived, in ns since the Unix epoch:
//! `{"query_ns": …, "first_message_ns": …}` — as the other SDKs' benchmark
//! programs do (`bench/python_sdk.py`, `bench/ts_sdk.mjs`).
//!
//! `BENCH_TRACING` installs a `tracing` subscriber, so that the SDK's spans
//! (a session, its turn, one per tool call) are recorded: `fmt`, the
//! `tracing-subscriber` formatter at INFO writing to stderr (it prints
//! events, not spans: the SDK's spans cost their recording); `otel`,
//! `tracing-opentelemetry`'s layer into the OpenTelemetry SDK with a batch
//! span processor whose exporter drops each batch (the layer's and the
//! SDK's cost, not a network's). Unset: no subscriber.

use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::{Message, Options, query};
use futures::StreamExt;
use schemars::JsonSchema;
use serde::Deserialize;

/// The benchmark tool's arguments.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// Left operand.
    a: f64,
    /// Right operand.
    b: f64,
    /// Padding, to make the arguments big; ignored.
    #[allow(dead_code)]
    pad: Option<String>,
    /// Bytes of `x` to append to the result, to make it big.
    reply_bytes: Option<usize>,
}

/// Room for the 10 MiB payload phase.
const MAX_RESULT: usize = 64 << 20;

/// The `otel` subscriber's exporter: takes each batch and drops it.
#[derive(Debug)]
struct Discard;

impl opentelemetry_sdk::trace::SpanExporter for Discard {
    async fn export(
        &self,
        batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        drop(batch);
        Ok(())
    }
}

/// Installs the subscriber `BENCH_TRACING` names; the OpenTelemetry
/// provider to shut down at the end, if any.
fn install_tracing() -> Result<Option<opentelemetry_sdk::trace::SdkTracerProvider>, String> {
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::layer::SubscriberExt;
    match std::env::var("BENCH_TRACING").as_deref() {
        Err(_) | Ok("") => Ok(None),
        Ok("fmt") => {
            tracing_subscriber::fmt()
                .with_writer(std::io::stderr)
                .with_max_level(tracing::Level::INFO)
                .init();
            Ok(None)
        }
        Ok("otel") => {
            let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
                .with_batch_exporter(Discard)
                .build();
            let subscriber = tracing_subscriber::registry()
                .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("bench-sdk")));
            tracing::subscriber::set_global_default(subscriber).map_err(|e| e.to_string())?;
            Ok(Some(provider))
        }
        Ok(other) => Err(format!("BENCH_TRACING={other}: expected fmt or otel")),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let provider = install_tracing()?;
    // `BENCH_TOKIO=current_thread` runs everything on one thread (to measure
    // what the worker-thread hand-offs of the default runtime cost).
    let runtime = match std::env::var("BENCH_TOKIO").as_deref() {
        Ok("current_thread") => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    }
    .enable_all()
    .build()?;
    let outcome = runtime.block_on(run());
    if let Some(provider) = provider {
        provider.shutdown()?;
    }
    outcome
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let cli = std::env::var_os("FAKE_CLAUDE_PATH")
        .ok_or("set FAKE_CLAUDE_PATH to the fake-claude binary")?;
    let add = Tool::new("add", "Add two numbers", |args: AddArgs| async move {
        // The same construction as the echo floor's (echo-responder.rs).
        let mut text = format!("sum={}", args.a + args.b);
        text.push_str(&"x".repeat(args.reply_bytes.unwrap_or(0)));
        text
    })
    .max_result_chars(MAX_RESULT);
    let server = Server::builder("bench", "1.0.0")
        .tool(add)
        .max_result_chars(MAX_RESULT)
        .build();
    let options = Options::new()
        .cli_path(cli)
        .mcp_server(server)
        .allowed_tools(["mcp__bench__add"]);

    let mut failed = None;
    let query_ns = now_ns();
    let mut first_message_ns = 0;
    let mut stream = query("Run the benchmark.", options);
    while let Some(message) = stream.next().await {
        if first_message_ns == 0 {
            first_message_ns = now_ns();
            write_timing(query_ns, first_message_ns);
        }
        if let Message::Result(r) = message?
            && r.is_error
        {
            failed = r.result.clone();
        }
    }
    if let Some(hwm) = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(str::to_owned)
        })
    {
        eprintln!("bench-sdk: {hwm}");
    }
    match failed {
        Some(text) => Err(format!("the benchmark failed: {text}").into()),
        None => Ok(()),
    }
}

/// The wall clock in ns since the Unix epoch (comparable with the fake CLI's).
fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

fn write_timing(query_ns: u64, first_message_ns: u64) {
    if let Some(path) = std::env::var_os("BENCH_SUBJECT_REPORT") {
        let json = format!("{{\"query_ns\":{query_ns},\"first_message_ns\":{first_message_ns}}}");
        if let Err(e) = std::fs::write(&path, json) {
            eprintln!("bench-sdk: cannot write {}: {e}", path.to_string_lossy());
        }
    }
}
