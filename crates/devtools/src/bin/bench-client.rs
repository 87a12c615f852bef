//! A quick benchmark of the client: in-process and stdio `call_tool`
//! round trips per second against the demo calculator server.
//!
//! ```text
//! cargo run --release -p claude-code-agent-devtools --bin bench-client [in-process|stdio|all|bench|soak|add|tasks]
//! ```
//! (`add`: only the calculator's `add` in process, serially, `BENCH_CALLS`
//! times — the loop to profile the in-process path with.)
//! (`stdio` needs the `stdio_server` example built in the same profile:
//! `cargo build --release -p claude-code-agent-mcp --example stdio_server`;
//! it also measures calls that report progress before their answer.)
//!
//! `tasks` measures what a task (the Tasks extension) costs beside a plain
//! call, in process and over HTTP (see `tasks_bench`);
//! bench/performance-notes.md has its table ("Tasks beside plain calls").
//!
//! `bench` is the client benchmark of `scripts/bench`, run the same way as
//! the other clients (`bench/mcp_client.py`, `bench/rmcp-client`): in-process
//! against the calculator server, over stdio against `BENCH_STDIO_SERVER` (a
//! JSON array: the command), over Streamable HTTP against `BENCH_HTTP_URL`
//! (when set); serially, then 16 in flight; each measurement runs for
//! `BENCH_CLIENT_SECONDS` after a warm-up and prints one JSON line:
//! `{"transport", "in_flight", "calls", "seconds"}`.
//!
//! `soak` is the HTTP client of `scripts/soak`: over Streamable HTTP against
//! `BENCH_HTTP_URL`, on one session, `SOAK_WARMUP` calls (default 50 000),
//! then `SOAK_CALLS` (default 1 000 000), `SOAK_IN_FLIGHT` (default 16) at
//! once; every answer is checked. On stdout, one line when the warm-up is
//! done, one every 100 000 calls, one at the end (the script samples the
//! server between the first and the last):
//!
//! ```text
//! soak: warmup done calls=50000 seconds=3.1
//! soak: progress calls=100000 seconds=6.2
//! soak: done calls=1000000 seconds=61.0 calls_per_s=16393
//! ```

#[path = "../../../claude-code-agent-mcp/tests/it/support/calc.rs"]
mod calc;

use std::time::{Duration, Instant};

use claude_code_agent_mcp::client::{
    ClientOptions, HandshakeMode, HttpOptions, HttpTransport, McpClient, RequestOptions,
    StdioOptions, StdioTransport,
};
use claude_code_agent_mcp::http_server::{
    MemoryEventStore, RedisEventStore, StreamableHttpConfig, StreamableHttpService,
};
use claude_code_agent_mcp::{Handler, RequestContext};
use futures::StreamExt;
use serde_json::json;

fn report(what: &str, n: u64, elapsed: Duration) {
    let rate = n as f64 / elapsed.as_secs_f64();
    println!("{what:<48} {n:>9} calls in {elapsed:>10.3?}  = {rate:>12.0} calls/s");
}

/// The least a handler can do: answer every request with a fixed result.
struct Trivial;

impl Handler for Trivial {
    fn handle(
        &self,
        message: serde_json::Value,
        _ctx: RequestContext,
    ) -> futures::future::BoxFuture<'_, Option<serde_json::Value>> {
        Box::pin(async move {
            let id = message.get("id")?.clone();
            let result = match message["method"].as_str() {
                Some("initialize") => json!({"protocolVersion":"2025-11-25","capabilities":{},
                                             "serverInfo":{"name":"trivial","version":"0"}}),
                Some("tools/call") => {
                    json!({"content":[{"type":"text","text":"3"}],"isError":false})
                }
                _ => json!({}),
            };
            Some(claude_code_agent_mcp::jsonrpc::response(&id, result))
        })
    }
}

async fn in_process() {
    let client = McpClient::connect(
        claude_code_agent_mcp::client::InProcessTransport::new(Trivial),
        ClientOptions::new("bench", "1").handshake(HandshakeMode::Initialize),
    )
    .await
    .unwrap();
    let n = 2_000_000u64;
    let start = Instant::now();
    for _ in 0..n {
        let r = client.call_tool("add", json!({"a":1,"b":2})).await.unwrap();
        debug_assert_eq!(r.text_content(), "3");
    }
    report("in-process call_tool, trivial handler", n, start.elapsed());
    let start = Instant::now();
    for _ in 0..n {
        client.send_request("ping", None).await.unwrap();
    }
    report("in-process ping, trivial handler", n, start.elapsed());

    let server = calc::calc_server();
    let n = 1_000_000u64;
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}});
    let start = Instant::now();
    for _ in 0..n {
        let reply = Handler::handle(&server, call.clone(), RequestContext::new()).await;
        assert!(reply.is_some());
    }
    report("Server::handle alone (baseline)", n, start.elapsed());

    let client = McpClient::in_process(server).await.unwrap();
    let start = Instant::now();
    for _ in 0..n {
        let r = client.call_tool("add", json!({"a":1,"b":2})).await.unwrap();
        debug_assert_eq!(r.text_content(), "3");
    }
    report("in-process call_tool (sequential)", n, start.elapsed());
    let start = Instant::now();
    for _ in 0..n {
        client.send_request("ping", None).await.unwrap();
    }
    report("in-process ping (sequential)", n, start.elapsed());
}

/// `add` on the calculator, in process, serially, `BENCH_CALLS` times
/// (default 2 000 000): the loop to profile the in-process path with.
async fn add_calls() {
    let n = env_count("BENCH_CALLS", 2_000_000);
    let client = McpClient::in_process(calc::calc_server()).await.unwrap();
    for _ in 0..10_000 {
        client.call_tool("add", json!({"a":1,"b":2})).await.unwrap();
    }
    let start = Instant::now();
    for _ in 0..n {
        let r = client.call_tool("add", json!({"a":1,"b":2})).await.unwrap();
        debug_assert_eq!(r.text_content(), "3");
    }
    report("in-process call_tool add (serial)", n, start.elapsed());
}

async fn stdio() {
    // target/<profile>/bench-client → target/<profile>/examples/stdio_server
    let exe = std::env::current_exe().unwrap();
    let server = exe.with_file_name("examples").join("stdio_server");
    assert!(
        server.exists(),
        "build the stdio_server example first: {}",
        server.display()
    );
    let transport = StdioTransport::spawn(StdioOptions::new(&server)).unwrap();
    let options = ClientOptions::new("bench", "1").handshake(HandshakeMode::Initialize);
    let client = McpClient::connect(transport, options).await.unwrap();
    let n = 50_000u64;
    let start = Instant::now();
    for _ in 0..n {
        client.call_tool("add", json!({"a":1,"b":2})).await.unwrap();
    }
    report("stdio call_tool (sequential)", n, start.elapsed());
    for concurrency in [16usize, 64] {
        let n = 200_000u64;
        let start = Instant::now();
        futures::stream::iter(0..n)
            .map(|_| {
                let client = client.clone();
                async move { client.call_tool("add", json!({"a":1,"b":2})).await.unwrap() }
            })
            .buffer_unordered(concurrency)
            .for_each(|_| async {})
            .await;
        report(
            &format!("stdio call_tool ({concurrency} in flight)"),
            n,
            start.elapsed(),
        );
    }
    stdio_progress(&client).await;
    client.close().await.unwrap();
}

/// Calls that report progress (and log) before their answer: `slow` with
/// one step and no wait, each with a progress token of its own, serially
/// and 16 in flight. What keeping an answer apart from its progress costs.
async fn stdio_progress(client: &McpClient) {
    let call = |client: McpClient, i: u64| async move {
        let options = RequestOptions::new().progress_token(i);
        let r = client
            .call_tool_with("slow", json!({"steps": 1, "ms": 0}), options)
            .await
            .unwrap();
        assert!(!r.is_error, "{}", r.text_content());
    };
    let n = 20_000u64;
    let start = Instant::now();
    for i in 0..n {
        call(client.clone(), i).await;
    }
    report(
        "stdio call_tool with progress (sequential)",
        n,
        start.elapsed(),
    );
    let n = 100_000u64;
    let start = Instant::now();
    futures::stream::iter(0..n)
        .map(|i| call(client.clone(), n + i))
        .buffer_unordered(16)
        .for_each(|()| async {})
        .await;
    report(
        "stdio call_tool with progress (16 in flight)",
        n,
        start.elapsed(),
    );
}

/// `call_tool("add", {"a":1,"b":2})` for `seconds` with `in_flight` at once
/// (after a warm-up); prints the JSON line of the client benchmark.
async fn measure(client: &McpClient, transport: &str, in_flight: usize, seconds: f64) {
    let call = |client: McpClient| async move {
        let r = client.call_tool("add", json!({"a":1,"b":2})).await.unwrap();
        assert!(!r.is_error, "tool error: {}", r.text_content());
    };
    for _ in 0..200 {
        call(client.clone()).await;
    }
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let workers = (0..in_flight).map(|_| {
        let client = client.clone();
        async move {
            // The clock is read every 16 calls: at a million calls a second
            // a read per call would be a measurable share of the loop.
            let mut n = 0u64;
            while Instant::now() < deadline {
                for _ in 0..16 {
                    call(client.clone()).await;
                }
                n += 16;
            }
            n
        }
    });
    let calls: u64 = futures::future::join_all(workers).await.into_iter().sum();
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{{\"transport\":\"{transport}\",\"in_flight\":{in_flight},\"calls\":{calls},\"seconds\":{secs}}}"
    );
}

/// The client benchmark of `scripts/bench` (see the module documentation).
async fn bench() {
    let seconds: f64 = std::env::var("BENCH_CLIENT_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let client = McpClient::in_process(calc::calc_server()).await.unwrap();
    for in_flight in [1, 16] {
        measure(&client, "in-process", in_flight, seconds).await;
    }
    let server: Vec<String> = serde_json::from_str(
        &std::env::var("BENCH_STDIO_SERVER").expect("BENCH_STDIO_SERVER: the server command"),
    )
    .expect("BENCH_STDIO_SERVER is a JSON array of strings");
    let transport =
        StdioTransport::spawn(StdioOptions::new(&server[0]).args(&server[1..])).unwrap();
    let client = McpClient::connect(transport, ClientOptions::new("bench", "1"))
        .await
        .unwrap();
    for in_flight in [1, 16] {
        measure(&client, "stdio", in_flight, seconds).await;
    }
    client.close().await.unwrap();
    if let Ok(url) = std::env::var("BENCH_HTTP_URL")
        && !url.is_empty()
    {
        let transport = HttpTransport::new(HttpOptions::new(url)).unwrap();
        let client = McpClient::connect(transport, ClientOptions::new("bench", "1"))
            .await
            .unwrap();
        for in_flight in [1, 16] {
            measure(&client, "http", in_flight, seconds).await;
        }
        client.close().await.unwrap();
    }
}

/// A count from the environment, or `default` when it is not set.
fn env_count(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?}: expected a count")),
        Err(_) => default,
    }
}

/// The HTTP soak of `scripts/soak` (see the module documentation).
async fn soak() {
    let url = std::env::var("BENCH_HTTP_URL").expect("BENCH_HTTP_URL: the server's URL");
    let warmup = env_count("SOAK_WARMUP", 50_000);
    let calls = env_count("SOAK_CALLS", 1_000_000);
    let in_flight = env_count("SOAK_IN_FLIGHT", 16).max(1) as usize;
    let transport = HttpTransport::new(HttpOptions::new(url)).unwrap();
    let client = McpClient::connect(transport, ClientOptions::new("soak", "1"))
        .await
        .unwrap();
    let secs = soak_calls(&client, warmup, in_flight, None).await;
    println!("soak: warmup done calls={warmup} seconds={secs:.3}");
    let secs = soak_calls(&client, calls, in_flight, Some(100_000)).await;
    println!(
        "soak: done calls={calls} seconds={secs:.3} calls_per_s={:.0}",
        calls as f64 / secs
    );
    client.close().await.unwrap();
}

/// `calls` checked calls of `add`, `in_flight` at once; with `progress`, a
/// line every that many. Returns the seconds taken.
async fn soak_calls(
    client: &McpClient,
    calls: u64,
    in_flight: usize,
    progress: Option<u64>,
) -> f64 {
    let start = Instant::now();
    let mut answers = futures::stream::iter(0..calls)
        .map(|_| {
            let client = client.clone();
            async move { client.call_tool("add", json!({"a":1,"b":2})).await }
        })
        .buffer_unordered(in_flight);
    let mut done = 0u64;
    while let Some(answer) = answers.next().await {
        let r = answer.unwrap_or_else(|e| panic!("call {done} failed: {e}"));
        assert!(
            !r.is_error && r.text_content() == "3",
            "call {done}: unexpected answer: {}",
            r.text_content()
        );
        done += 1;
        if progress.is_some_and(|every| done.is_multiple_of(every)) {
            println!(
                "soak: progress calls={done} seconds={:.3}",
                start.elapsed().as_secs_f64()
            );
        }
    }
    start.elapsed().as_secs_f64()
}

/// The server of the task benchmark: the calculator plus `three`, which
/// answers at once and may run as a task; its own store unbounded, each
/// task kept 100 ms (a `MemoryEventStore` keeps at most 1000 tasks: that
/// many at a few hundred µs each would outlive 100 ms), polls asked every
/// 10 ms.
fn task_server() -> claude_code_agent_mcp::Server {
    calc::calc_builder("bench")
        .tool(
            claude_code_agent_mcp::Tool::new("three", "Answers 3", |_: serde_json::Value| async {
                "3"
            })
            .task_support(claude_code_agent_mcp::server::TaskSupport::Optional),
        )
        .max_tasks(usize::MAX)
        .max_task_bytes(usize::MAX)
        .task_ttl(Duration::from_millis(100))
        .task_poll_interval(Duration::from_millis(10))
        .build()
}

/// `three` as a plain call, `n` times, serially: the seconds taken.
async fn plain_calls(client: &McpClient, n: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        let r = client.call_tool("three", json!({})).await.unwrap();
        assert_eq!(r.text_content(), "3");
    }
    start.elapsed().as_secs_f64()
}

/// `three` as a task, `n` times, serially, each from its creation to its
/// result: `call_tool_as_task`, then `tasks/get` until it is completed
/// (no wait between polls but a yield). The seconds taken and the polls.
async fn task_calls(client: &McpClient, n: u64) -> (f64, u64) {
    use claude_code_agent_mcp::types::{TaskStatus, ToolCallOutcome};
    let start = Instant::now();
    let mut polls = 0;
    for _ in 0..n {
        let ToolCallOutcome::Task(task) =
            client.call_tool_as_task("three", json!({})).await.unwrap()
        else {
            panic!("not run as a task");
        };
        loop {
            polls += 1;
            let got = client.get_task(&task.task_id).await.unwrap();
            if got.status == TaskStatus::Completed {
                assert_eq!(got.result.unwrap().text_content(), "3");
                break;
            }
            assert_eq!(got.status, TaskStatus::Working);
            tokio::task::yield_now().await;
        }
    }
    (start.elapsed().as_secs_f64(), polls)
}

/// What a task costs beside a plain call (`bench-client tasks`): the same
/// tool, which answers at once, called plainly and as a task (created,
/// then polled to its result), serially, `BENCH_CALLS` times each (default
/// 5 000), `BENCH_REPS` repetitions (default 5) interleaved; in process,
/// and over Streamable HTTP on loopback (the server on a thread and
/// runtime of its own), without and with an event store (the tasks kept
/// in it as replicas keep them: `MemoryEventStore`, and Redis when
/// `BENCH_REDIS_URL` is set). One JSON line per measurement:
/// `{"transport", "rep", "plain_us", "task_us", "polls_per_task"}`.
async fn tasks_bench() {
    let n = env_count("BENCH_CALLS", 5_000);
    let reps = env_count("BENCH_REPS", 5);
    let mut subjects = vec![(
        "in-process".to_owned(),
        McpClient::in_process(task_server()).await.unwrap(),
    )];
    let redis = std::env::var("BENCH_REDIS_URL").ok();
    let mut http = vec!["http", "http+memory-store"];
    if redis.is_some() {
        http.push("http+redis");
    }
    for name in http {
        let config = StreamableHttpConfig::default();
        let config = match (name, &redis) {
            ("http", _) => config,
            ("http+redis", Some(url)) => config.event_store(RedisEventStore::new(url).unwrap()),
            _ => config.event_store(MemoryEventStore::new()),
        };
        let url = serve_apart(task_server(), config);
        let transport = HttpTransport::new(HttpOptions::new(url)).unwrap();
        let client = McpClient::connect(transport, ClientOptions::new("bench", "1"))
            .await
            .unwrap();
        assert!(client.server_state().stateless);
        subjects.push((name.to_owned(), client));
    }
    for (_, client) in &subjects {
        plain_calls(client, 200).await;
        task_calls(client, 200).await;
    }
    for rep in 1..=reps {
        for (transport, client) in &subjects {
            let plain = plain_calls(client, n).await;
            let (task, polls) = task_calls(client, n).await;
            let us = |secs: f64| secs * 1e6 / n as f64;
            println!(
                "{{\"transport\":\"{transport}\",\"rep\":{rep},\"plain_us\":{:.2},\"task_us\":{:.2},\"polls_per_task\":{:.3}}}",
                us(plain),
                us(task),
                polls as f64 / n as f64
            );
        }
    }
}

/// Serves `server` over Streamable HTTP on loopback, on a thread with a
/// runtime of its own (one worker) for the rest of the process: its URL.
fn serve_apart(server: claude_code_agent_mcp::Server, config: StreamableHttpConfig) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            StreamableHttpService::new(server, config)
                .serve(listener)
                .await
                .unwrap();
        });
    });
    url
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "all".into());
    if which == "tasks" {
        tasks_bench().await;
        return;
    }
    if which == "bench" {
        bench().await;
        return;
    }
    if which == "soak" {
        soak().await;
        return;
    }
    if which == "add" {
        add_calls().await;
        return;
    }
    if which == "all" || which == "in-process" {
        in_process().await;
    }
    if which == "all" || which == "stdio" {
        stdio().await;
    }
}
