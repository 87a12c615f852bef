//! The Streamable HTTP service facing misbehaving clients over real sockets:
//! one that drops its connection mid-call, one that stops reading a chatty
//! stream, one that sends half a request and stalls. Nothing hangs, nothing
//! is lost that the protocol lets a client get back, nothing is left running.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::support::http_session;
use crate::support::wire::Events;
use claude_code_agent_mcp::http_server::{StreamableHttpConfig, StreamableHttpService};
use claude_code_agent_mcp::{LogLevel, Server, Tool, ToolContext};
use claude_code_agent_testkit::tasks::Baseline;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;

/// Log lines the `chatty` tool sends before its result, and their size.
const CHATTY_LINES: usize = 3000;
const CHATTY_LINE_BYTES: usize = 32 * 1024;

struct Probes {
    /// Released by the test: the `gate` tool then returns.
    gate: Arc<Semaphore>,
    /// Whether a `gate` call has ended (returned, or was cancelled and
    /// dropped).
    gate_ended: Arc<AtomicBool>,
    /// Set when the `chatty` tool has sent everything.
    chatty_done: Arc<tokio::sync::Notify>,
}

/// Sets its flag when dropped.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

struct Running {
    url: String,
    http: reqwest::Client,
    addr: std::net::SocketAddr,
    probes: Probes,
    shutdown: tokio_util::sync::CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

async fn start(config: StreamableHttpConfig) -> Running {
    let probes = Probes {
        gate: Arc::new(Semaphore::new(0)),
        gate_ended: Arc::new(AtomicBool::new(false)),
        chatty_done: Arc::new(tokio::sync::Notify::new()),
    };
    let (gate, ended) = (probes.gate.clone(), probes.gate_ended.clone());
    let done = probes.chatty_done.clone();
    let server = Server::builder("faults", "1")
        .tool(
            Tool::new(
                "gate",
                "returns once the test opens the gate",
                move |_: Value, ctx: ToolContext| {
                    let (gate, ended) = (gate.clone(), SetOnDrop(ended.clone()));
                    async move {
                        let _ended = ended;
                        tokio::select! {
                            permit = gate.acquire() => { permit.unwrap().forget(); "opened" }
                            () = ctx.cancelled() => "cancelled",
                        }
                    }
                },
            )
            .input_schema(json!({"type":"object"})),
        )
        .tool(
            Tool::new(
                "chatty",
                "many big log lines, then a result",
                move |_: Value, ctx: ToolContext| {
                    let done = done.clone();
                    async move {
                        let line = "x".repeat(CHATTY_LINE_BYTES);
                        for _ in 0..CHATTY_LINES {
                            ctx.log(LogLevel::Info, line.as_str());
                        }
                        done.notify_one();
                        "finished"
                    }
                },
            )
            .input_schema(json!({"type":"object"})),
        )
        .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let service = StreamableHttpService::new(server, config);
    let stop = shutdown.clone().cancelled_owned();
    let task = tokio::spawn(async move {
        let _ = service.serve_with_shutdown(listener, stop).await;
    });
    Running {
        url: format!("http://{addr}/mcp"),
        // No idle connections kept: a closed exchange leaves no task behind.
        http: reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .build()
            .unwrap(),
        addr,
        probes,
        shutdown,
        task,
    }
}

impl Running {
    fn post(&self, session: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
        http_session::post(&self.http, &self.url, session, body)
    }

    async fn initialize(&self) -> String {
        http_session::initialize(&self.http, &self.url, json!({})).await
    }

    fn call(&self, sid: &str, id: u64, tool: &str) -> reqwest::RequestBuilder {
        let call = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":tool,"arguments":{}}});
        self.post(Some(sid), &call)
    }

    fn resume(&self, sid: &str, last_event_id: &str) -> reqwest::RequestBuilder {
        self.http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", "2025-11-25")
            .header("last-event-id", last_event_id)
    }

    /// Stops the service and checks that only the test's own work is left.
    async fn stop(self, baseline: Baseline) {
        self.shutdown.cancel();
        drop(self.http);
        bounded(self.task).await.unwrap();
        baseline.settled("the service").await;
    }
}

async fn bounded<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("timed out after 20 s")
}

/// A client whose connection drops while its call runs: the call is not
/// cancelled (the protocol says a disconnection is no cancellation), and the
/// client gets its result by resuming with `Last-Event-ID`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_dropping_mid_call_resumes_and_gets_the_result() {
    let baseline = Baseline::now();
    let t = start(StreamableHttpConfig::default()).await;
    let sid = t.initialize().await;

    let mut events = Events::new(t.call(&sid, 7, "gate").send().await.unwrap());
    let priming = events.next().await.expect("the priming event");
    assert!(priming.message.is_none(), "{priming:?}");
    let last_id = priming.id.expect("the priming event has an id");
    drop(events); // the connection goes

    t.probes.gate.add_permits(1);
    let mut resumed = Events::new(bounded(t.resume(&sid, &last_id).send()).await.unwrap());
    let event = resumed.next().await.expect("the result, replayed");
    let reply = event.message.expect("a message");
    assert_eq!(reply["id"], 7, "{reply}");
    assert_eq!(reply["result"]["content"][0]["text"], "opened", "{reply}");
    assert!(resumed.next().await.is_none(), "the stream ends after it");
    drop(resumed);
    t.stop(baseline).await;
}

/// A client that stops reading while a tool sends ~94 MiB of log lines: the
/// tool is never held up, the server buffers a bounded amount and then ends
/// that response; the client catches up, resumes with `Last-Event-ID`, and
/// still gets the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_cut_off_and_resumes_to_the_result() {
    let baseline = Baseline::now();
    let t = start(StreamableHttpConfig::default()).await;
    let sid = t.initialize().await;

    let resp = t.call(&sid, 8, "chatty").send().await.unwrap();
    // The client reads nothing more; the tool must still finish. Its ~94 MiB
    // of log lines take seconds in a debug build, more beside other tests.
    tokio::time::timeout(Duration::from_secs(90), t.probes.chatty_done.notified())
        .await
        .expect("the tool did not finish in 90 s");

    let mut events = Events::new(resp);
    let mut last_id = None;
    let mut logs = 0;
    while let Some(event) = events.next().await {
        if let Some(m) = &event.message {
            assert_eq!(
                m["method"], "notifications/message",
                "cut off before the result"
            );
            logs += 1;
        }
        last_id = event.id;
    }
    assert!(
        logs < CHATTY_LINES,
        "all {logs} lines were buffered for a client that did not read"
    );
    let mut resumed = Events::new(
        bounded(t.resume(&sid, &last_id.expect("an event id")).send())
            .await
            .unwrap(),
    );
    let mut result = None;
    while let Some(event) = resumed.next().await {
        if let Some(m) = event.message
            && m.get("id").is_some()
        {
            result = Some(m);
        }
    }
    let result = result.expect("the result, on resumption");
    assert_eq!(result["id"], 8);
    assert_eq!(result["result"]["content"][0]["text"], "finished");
    eprintln!("cut off after {logs} of {CHATTY_LINES} log lines");
    t.stop(baseline).await;
}

/// Half a request — headers promising a body that never comes, headers that
/// never end — does not hold up other clients, and does not hold its
/// connection forever: the stalled body gets 408, the stalled headers have
/// their connection closed, both after `request_read_timeout`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_time_out_without_holding_up_other_clients() {
    use tokio::io::AsyncReadExt;
    let baseline = Baseline::now();
    let t =
        start(StreamableHttpConfig::default().request_read_timeout(Duration::from_secs(1))).await;

    let started = std::time::Instant::now();
    let mut half_body = tokio::net::TcpStream::connect(t.addr).await.unwrap();
    half_body
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":",
        )
        .await
        .unwrap();
    let mut half_headers = tokio::net::TcpStream::connect(t.addr).await.unwrap();
    half_headers
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
        .await
        .unwrap();

    // Meanwhile another client is served as usual.
    let sid = bounded(t.initialize()).await;
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    let r = bounded(t.post(Some(&sid), &list).send()).await.unwrap();
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["result"]["tools"].as_array().unwrap().len(), 2);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );

    let mut answer = Vec::new();
    let _ = bounded(half_body.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive within 1s"), "{answer}");
    let mut rest = Vec::new();
    let _ = bounded(half_headers.read_to_end(&mut rest)).await;
    assert!(started.elapsed() >= Duration::from_secs(1));
    t.stop(baseline).await;
}

/// Shutting down with clients still attached — a GET stream open, a call
/// running, a connection stalled mid-request — ends them all, within the
/// grace period: the streams end, the call is cancelled, the stalled
/// connection is closed, no task is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_open_streams_running_calls_and_stalled_connections() {
    let baseline = Baseline::now();
    let t = start(StreamableHttpConfig::default().shutdown_grace(Duration::from_millis(500))).await;
    let sid = t.initialize().await;
    let get = t
        .http
        .get(&t.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    let mut listening = Events::new(get);
    assert!(listening.next().await.is_some(), "the priming event");
    let mut calling = Events::new(t.call(&sid, 9, "gate").send().await.unwrap());
    assert!(calling.next().await.is_some(), "the priming event");
    let mut stalled = tokio::net::TcpStream::connect(t.addr).await.unwrap();
    stalled
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99\r\n\r\n{")
        .await
        .unwrap();

    let started = std::time::Instant::now();
    t.shutdown.cancel();
    bounded(t.task).await.unwrap();
    assert!(
        bounded(listening.next()).await.is_none(),
        "the GET stream ended"
    );
    assert!(
        bounded(calling.next()).await.is_none(),
        "the call's stream ended"
    );
    for _ in 0..250 {
        if t.probes.gate_ended.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        t.probes.gate_ended.load(Ordering::SeqCst),
        "the call was cancelled"
    );
    // The stalled request holds its connection until the grace period ends.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "shutting down took {took:?}");
    drop((listening, calling, stalled, t.http));
    baseline.settled("the service").await;
}
