//! One replica of the calculator served over Streamable HTTP, for the
//! scale-out tests and benchmarks (`tests/it/scale_out.rs` of the MCP
//! crate, `bench-driver`): HAProxy or nginx in front of several of these.
//!
//! ```text
//! replica --port PORT --name NAME [--redis redis://127.0.0.1:6379] [--session-prefix P]
//! ```
//!
//! Serves the MCP crate's test calculator (`add`, `slow` with progress, …),
//! named NAME (the `serverInfo` of the sessions it opens), plus `whoami`
//! (answers NAME: the replica serving the call) and `job` (a task, the
//! Tasks extension: works `seconds`, then answers NAME; task lease 1 s,
//! poll interval 100 ms) at
//! `http://127.0.0.1:PORT/mcp`. With `--redis`, sessions and SSE events are
//! shared through Redis (`RedisEventStore`, stream TTL 60 s); with
//! `--session-prefix`, its session ids start with P. Prints `listening` once
//! it accepts connections; runs until killed.

#[path = "../../../claude-code-agent-mcp/tests/it/support/calc.rs"]
#[allow(dead_code)]
mod calc;

use std::time::Duration;

use claude_code_agent_mcp::Tool;
use claude_code_agent_mcp::http_server::{
    RedisEventStore, StreamableHttpConfig, StreamableHttpService,
};
use claude_code_agent_mcp::server::TaskSupport;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Job {
    seconds: f64,
}

fn usage() -> ! {
    eprintln!("usage: replica --port PORT --name NAME [--redis URL] [--session-prefix P]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let (mut port, mut name, mut redis) = (None, String::from("replica"), None);
    let mut prefix = String::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--port" => port = Some(value.parse::<u16>().unwrap_or_else(|_| usage())),
            "--name" => name = value,
            "--redis" => redis = Some(value),
            "--session-prefix" => prefix = value,
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
    let mut config = StreamableHttpConfig::default()
        .max_sessions(100_000)
        .sse_retry(Some(Duration::from_millis(100)))
        .session_id_prefix(prefix);
    if let Some(url) = redis {
        let store = RedisEventStore::new(&url)
            .map_err(std::io::Error::other)?
            .ttl(Duration::from_secs(60));
        config = config.event_store(store);
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening");
    StreamableHttpService::new(server, config)
        .serve(listener)
        .await
}
