//! One replica of the calculator served over Streamable HTTP, for the
//! scale-out tests and benchmarks (`tests/it/scale_out.rs` of the MCP
//! crate, `bench-driver`): HAProxy or nginx in front of several of these.
//!
//! ```text
//! replica --port PORT --name NAME [--redis redis://127.0.0.1:6379] [--session-prefix P]
//!         [--drain-timeout MS]
//! ```
//!
//! Serves the MCP crate's test calculator (`add`, `slow` with progress, …),
//! named NAME (the `serverInfo` of the sessions it opens), plus `whoami`
//! (answers NAME: the replica serving the call), `job` (a task, the
//! Tasks extension: works `seconds`, then answers NAME; task lease 1 s,
//! poll interval 100 ms), `sum` (`a + b` after `ms` milliseconds,
//! annotated read-only and idempotent) and `tally` (counts its calls after
//! `ms` milliseconds: not idempotent) at
//! `http://127.0.0.1:PORT/mcp`. With `--redis`, sessions and SSE events are
//! shared through Redis (`RedisEventStore`, stream TTL 60 s); with
//! `--session-prefix`, its session ids start with P. Prints `listening` once
//! it accepts connections; runs until killed, or until SIGTERM, on which it
//! drains (`serve_with_drain`: no new session, the calls running finish)
//! within `--drain-timeout` (default 10 000 ms) and exits.

#[path = "../../../claude-code-agent-mcp/tests/it/support/calc.rs"]
#[allow(dead_code)]
mod calc;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use claude_code_agent_mcp::Tool;
use claude_code_agent_mcp::http_server::{
    RedisEventStore, StreamableHttpConfig, StreamableHttpService,
};
use claude_code_agent_mcp::server::TaskSupport;
use claude_code_agent_mcp::types::ToolAnnotations;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Job {
    seconds: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Sum {
    a: f64,
    b: f64,
    /// Milliseconds of work first.
    ms: u64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Tally {
    /// Milliseconds of work first.
    ms: u64,
}

fn usage() -> ! {
    eprintln!(
        "usage: replica --port PORT --name NAME [--redis URL] [--session-prefix P] [--drain-timeout MS]"
    );
    std::process::exit(2)
}

/// Work of `ms` milliseconds, at most a minute.
async fn work(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms.min(60_000))).await;
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let (mut port, mut name, mut redis) = (None, String::from("replica"), None);
    let mut prefix = String::new();
    let mut drain = Duration::from_secs(10);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--port" => port = Some(value.parse::<u16>().unwrap_or_else(|_| usage())),
            "--name" => name = value,
            "--redis" => redis = Some(value),
            "--session-prefix" => prefix = value,
            "--drain-timeout" => {
                drain = Duration::from_millis(value.parse().unwrap_or_else(|_| usage()));
            }
            _ => usage(),
        }
    }
    let port = port.unwrap_or_else(|| usage());
    let worker = name.clone();
    let server = calc::calc_builder(&name)
        .tool(
            Tool::new("job", "Works `seconds`, as a task", move |a: Job| {
                let me = worker.clone();
                async move {
                    tokio::time::sleep(Duration::from_secs_f64(a.seconds.clamp(0.0, 600.0))).await;
                    me
                }
            })
            .task_support(TaskSupport::Optional)
            .timeout(Duration::from_secs(600)),
        )
        .task_lease(Duration::from_secs(1))
        .task_poll_interval(Duration::from_millis(100))
        .build();
    let me = name.clone();
    server.add_tool(Tool::new(
        "whoami",
        "The name of the replica that answers",
        move |_: serde_json::Value| {
            let me = me.clone();
            async move { me }
        },
    ));
    server.add_tool(
        Tool::new(
            "sum",
            "a + b, after `ms` milliseconds",
            |s: Sum| async move {
                work(s.ms).await;
                s.a + s.b
            },
        )
        .annotations(ToolAnnotations::new().read_only(true).idempotent(true)),
    );
    let tally = Arc::new(AtomicU64::new(0));
    server.add_tool(
        Tool::new(
            "tally",
            "Counts its calls, after `ms` milliseconds: how many so far",
            move |t: Tally| {
                let tally = Arc::clone(&tally);
                async move {
                    work(t.ms).await;
                    tally.fetch_add(1, Ordering::Relaxed) + 1
                }
            },
        )
        .annotations(ToolAnnotations::new().idempotent(false)),
    );
    let mut config = StreamableHttpConfig::default()
        .max_sessions(100_000)
        .sse_retry(Some(Duration::from_millis(100)))
        .session_id_prefix(prefix)
        .drain_timeout(drain);
    if let Some(url) = redis {
        let store = RedisEventStore::new(&url)
            .map_err(std::io::Error::other)?
            .ttl(Duration::from_secs(60));
        config = config.event_store(store);
    }
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening");
    let stopped = async move {
        sigterm.recv().await;
    };
    StreamableHttpService::new(server, config)
        .serve_with_drain(listener, stopped)
        .await
}
