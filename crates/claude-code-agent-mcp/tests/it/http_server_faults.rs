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

impl Probes {
    /// Whether a `gate` call has ended, or does within 5 s.
    async fn gate_ends(&self) -> bool {
        for _ in 0..250 {
            if self.gate_ended.load(Ordering::SeqCst) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }
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

/// How a test's service is served.
#[derive(Clone, Copy, PartialEq)]
enum Serve {
    /// `serve_with_shutdown`.
    Shutdown,
    /// `serve_with_drain`.
    Drain,
}

async fn start(config: StreamableHttpConfig) -> Running {
    start_as(config, Serve::Shutdown).await
}

async fn start_as(config: StreamableHttpConfig, serve: Serve) -> Running {
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
        let _ = match serve {
            Serve::Shutdown => service.serve_with_shutdown(listener, stop).await,
            Serve::Drain => service.serve_with_drain(listener, stop).await,
        };
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
        http_session::get(&self.http, &self.url, sid, Some(last_event_id))
    }

    /// Opens the session's GET stream (its priming event read).
    async fn listen(&self, sid: &str) -> Events {
        let get = http_session::get(&self.http, &self.url, sid, None);
        let mut listening = Events::new(get.send().await.unwrap());
        assert!(listening.next().await.is_some(), "the priming event");
        listening
    }

    /// Calls `tool` with an SSE answer: its stream, the priming event read.
    async fn calling(&self, sid: &str, id: u64, tool: &str) -> Events {
        let mut calling = Events::new(self.call(sid, id, tool).send().await.unwrap());
        assert!(calling.next().await.is_some(), "the priming event");
        calling
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
    let mut listening = t.listen(&sid).await;
    let mut calling = t.calling(&sid, 9, "gate").await;
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
    assert!(t.probes.gate_ends().await, "the call was cancelled");
    // The stalled request holds its connection until the grace period ends.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "shutting down took {took:?}");
    drop((listening, calling, stalled, t.http));
    baseline.settled("the service").await;
}

/// A graceful drain (`serve_with_drain`, as on SIGTERM): new connections
/// are refused, the GET stream ends at once (its client reconnects
/// elsewhere), the call running goes on and its client gets its answer;
/// then the service stops, long before the drain's deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_lets_the_running_call_answer_and_takes_nothing_new() {
    let baseline = Baseline::now();
    let config = StreamableHttpConfig::default().drain_timeout(Duration::from_secs(20));
    let t = start_as(config, Serve::Drain).await;
    let sid = t.initialize().await;
    let mut listening = t.listen(&sid).await;
    let mut calling = t.calling(&sid, 9, "gate").await;

    let started = std::time::Instant::now();
    t.shutdown.cancel();
    assert!(
        bounded(listening.next()).await.is_none(),
        "the GET stream ended"
    );
    let refused = tokio::net::TcpStream::connect(t.addr).await;
    assert!(refused.is_err(), "no new connection");
    assert!(
        !t.probes.gate_ended.load(Ordering::SeqCst),
        "the call still runs"
    );
    t.probes.gate.add_permits(1);
    let answer = bounded(calling.next()).await.expect("the answer");
    let reply = answer.message.expect("a message");
    assert_eq!(reply["result"]["content"][0]["text"], "opened", "{reply}");
    assert!(
        bounded(calling.next()).await.is_none(),
        "then the stream ends"
    );
    bounded(t.task).await.unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "draining took {took:?}");
    drop((listening, calling, t.http));
    baseline.settled("the service").await;
}

/// A call still running at the drain's deadline is cancelled, and the
/// service stops then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_ends_at_its_deadline() {
    let baseline = Baseline::now();
    let config = StreamableHttpConfig::default().drain_timeout(Duration::from_millis(300));
    let t = start_as(config, Serve::Drain).await;
    let sid = t.initialize().await;
    let mut calling = t.calling(&sid, 9, "gate").await;
    let started = std::time::Instant::now();
    t.shutdown.cancel();
    bounded(t.task).await.unwrap();
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "stopped after {took:?}"
    );
    assert!(bounded(calling.next()).await.is_none(), "its stream ended");
    assert!(t.probes.gate_ends().await, "the call was cancelled");
    drop((calling, t.http));
    baseline.settled("the service").await;
}

/// `drain` on a service mounted in the caller's own server: while it
/// drains, a new session and a GET stream are refused with a 503 whose
/// error says to try again (it was not acted on), requests of a session
/// are served, and it returns once the running call has answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_refuses_new_sessions_and_waits_for_the_running_calls() {
    let gate = Arc::new(Semaphore::new(0));
    let opened = gate.clone();
    let server = Server::builder("drained", "1")
        .tool(
            Tool::new(
                "gate",
                "returns once the test opens the gate",
                move |_: Value| {
                    let gate = opened.clone();
                    async move {
                        gate.acquire().await.unwrap().forget();
                        "opened"
                    }
                },
            )
            .input_schema(json!({"type":"object"})),
        )
        .build();
    let service = StreamableHttpService::new(server, StreamableHttpConfig::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let router = service.router();
    let serving = tokio::spawn(async move { axum::serve(listener, router).await });
    let http = reqwest::Client::new();
    let sid = http_session::initialize(&http, &url, json!({})).await;
    let call = json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
        "params":{"name":"gate","arguments":{}}});
    let mut calling = Events::new(
        http_session::post(&http, &url, Some(&sid), &call)
            .send()
            .await
            .unwrap(),
    );
    assert!(calling.next().await.is_some(), "the priming event");

    let draining = tokio::spawn({
        let service = service.clone();
        async move { service.drain(Duration::from_secs(20)).await }
    });
    // Refused: a new session, and a GET stream.
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",
        "capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    let refused = loop {
        let r = http_session::post(&http, &url, None, &init)
            .send()
            .await
            .unwrap();
        if r.status() == reqwest::StatusCode::SERVICE_UNAVAILABLE {
            break r;
        }
        assert!(!draining.is_finished(), "the drain waits for the call");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["id"], 0, "{body}");
    assert_eq!(body["error"]["data"]["retryable"], true, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("shutting down"),
        "{body}"
    );
    let get = http_session::get(&http, &url, &sid, None).send().await;
    assert_eq!(
        get.unwrap().status(),
        reqwest::StatusCode::SERVICE_UNAVAILABLE
    );
    // The session's other requests are served.
    let list = json!({"jsonrpc":"2.0","id":4,"method":"tools/list"});
    let listed: Value = http_session::post(&http, &url, Some(&sid), &list)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["result"]["tools"][0]["name"], "gate", "{listed}");

    gate.add_permits(1);
    let answer = bounded(calling.next()).await.expect("the answer");
    assert_eq!(
        answer.message.unwrap()["result"]["content"][0]["text"],
        "opened"
    );
    assert_eq!(bounded(draining).await.unwrap(), 0, "nothing left running");
    serving.abort();
}
