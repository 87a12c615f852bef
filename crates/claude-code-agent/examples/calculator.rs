//! A `calc` MCP server with three tools, driven through a scripted exchange,
//! or served to any MCP client over stdio or Streamable HTTP.
//!
//! ```text
//! cargo run -p claude-code-agent --example calculator                 # scripted exchange
//! cargo run -p claude-code-agent --example calculator -- --stdio      # NDJSON on stdin/stdout
//! cargo run -p claude-code-agent --features http-server --example calculator -- --http 127.0.0.1:8080
//! cargo run -p claude-code-agent --features http-server --example calculator -- --http 127.0.0.1:8080 --max-sessions 10000
//! cargo run -p claude-code-agent --features redis --example calculator -- --http 127.0.0.1:8081 \
//!     --redis redis://127.0.0.1:6379 --session-prefix r1.
//! ```
//!
//! (`--http` serves `http://127.0.0.1:8080/mcp`; it needs the `http-server`
//! feature. `--max-sessions N` caps the live sessions, default 1024: the
//! `initialize` that would open one more gets 503. `--redis URL` shares
//! sessions and SSE streams with the other replicas given the same Redis,
//! behind a load balancer (feature `redis`; docs/deployment.md), and
//! `--session-prefix P` starts the ids of the sessions it opens with P.)
//!
//! Without arguments it sends the messages the Claude Code CLI would send
//! (`initialize`, `notifications/initialized`, `tools/list`, then some
//! `tools/call`s, one of them failing) straight to the server's `handle`,
//! and prints each request and reply. With `--http`, the address's port may
//! be 0; the URL actually served goes to stderr as `listening on <url>`.

#[path = "support/calc.rs"]
mod calc;

use calc::calc_server;
use claude_code_agent::mcp::{RequestContext, Session};
use serde_json::{Value, json};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => {
            scripted().await;
            Ok(())
        }
        ["--stdio"] => claude_code_agent::mcp::server::serve_stdio(calc_server()).await,
        #[cfg(feature = "http-server")]
        ["--http", addr, rest @ ..] => serve_http(addr, rest).await,
        #[cfg(not(feature = "http-server"))]
        ["--http", ..] => {
            eprintln!(
                "calculator: built without the `http-server` feature; run \
                 `cargo run -p claude-code-agent --features http-server --example calculator -- --http HOST:PORT`"
            );
            std::process::exit(2);
        }
        _ => usage("unknown arguments"),
    }
}

/// Serves the calculator over Streamable HTTP at `addr`, with the options
/// that follow `--http`.
#[cfg(feature = "http-server")]
async fn serve_http(addr: &str, options: &[&str]) -> std::io::Result<()> {
    use claude_code_agent::mcp::http_server::{StreamableHttpConfig, StreamableHttpService};
    let mut config = StreamableHttpConfig::default();
    let mut options = options.iter();
    while let Some(option) = options.next() {
        let Some(value) = options.next() else {
            usage(&format!("{option} wants a value"));
        };
        match *option {
            "--max-sessions" => match value.parse::<usize>() {
                Ok(n) if n > 0 => config = config.max_sessions(n),
                _ => usage(&format!(
                    "--max-sessions wants a positive count, not {value:?}"
                )),
            },
            "--session-prefix" => {
                if value.len() > 64 || !value.bytes().all(|b| b.is_ascii_graphic()) {
                    usage(&format!(
                        "--session-prefix wants at most 64 visible ASCII characters, not {value:?}"
                    ));
                }
                config = config.session_id_prefix(*value);
            }
            #[cfg(feature = "redis")]
            "--redis" => {
                let store = claude_code_agent::mcp::http_server::RedisEventStore::new(value)
                    .map_err(std::io::Error::other)?;
                config = config.event_store(store);
            }
            #[cfg(not(feature = "redis"))]
            "--redis" => usage(
                "built without the `redis` feature; run `cargo run -p claude-code-agent \
                 --features redis --example calculator -- --http HOST:PORT --redis URL`",
            ),
            _ => usage(&format!(
                "unexpected argument after --http {addr}: {option:?}"
            )),
        }
    }
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    StreamableHttpService::new(calc_server(), config)
        .serve(listener)
        .await
}

fn usage(why: &str) -> ! {
    eprintln!(
        "calculator: {why}\nusage: calculator [--stdio | --http HOST:PORT [--max-sessions N] \
         [--redis URL] [--session-prefix P]]"
    );
    std::process::exit(2);
}

/// Sends the CLI's messages to the server in process and prints the exchange.
async fn scripted() {
    let server = calc_server();
    // One session per connection; it prints what the server sends on its own.
    let session = Session::with_notifier(|message| println!("<- (notification) {message}\n"));

    let call = |id: i64, tool: &str, arguments: Value| {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
               "params":{"name":tool,"arguments":arguments,
                         "_meta":{"claudecode/toolUseId":format!("toolu_{id}"),"progressToken":id}}})
    };
    let script = [
        json!({"jsonrpc":"2.0","id":0,"method":"initialize",
               "params":{"protocolVersion":"2025-11-25","capabilities":{},
                         "clientInfo":{"name":"claude-code","version":"2.1.332"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
        call(2, "add", json!({"a": 2, "b": 3})),
        call(3, "divide", json!({"a": 1, "b": 0})),
        call(4, "divide", json!({"a": "one", "b": 4})),
        call(5, "stats", json!({"values": [2, 4, 4, 5, 9]})),
        call(6, "sqrt", json!({"x": 2})),
    ];

    for message in script {
        println!("-> {}", pretty(&message));
        match server
            .handle(message, RequestContext::with_session(session.clone()))
            .await
        {
            Some(reply) => println!("<- {}\n", pretty(&reply)),
            None => println!("<- (no reply: a notification)\n"),
        }
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}
