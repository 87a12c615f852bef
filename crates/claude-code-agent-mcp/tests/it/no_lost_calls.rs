//! No call lost to a replica's death or restart: three replicas on Redis
//! behind HAProxy (the deployment of `scale_out.rs`), loaded by our client
//! and by the official TypeScript SDK's, calling `sum` (annotated read-only
//! and idempotent), through a `kill -9` of one replica and then a rolling
//! restart of all three (SIGTERM: each drains, `serve_with_drain`, and is
//! started again).
//!
//! What must hold: none of our idempotent calls fails (our client sends a
//! call whose answer was lost again, same id, same session, which another
//! replica takes over); no session is lost, ours or the TypeScript SDK's
//! (each ends on the id it started with, and answers); of two long calls
//! in flight at the kill, the idempotent one is sent again and answers,
//! the other (`tally`) fails with the error that says it may or may not
//! have run, and is not sent again, or completes: neither hangs; a replica
//! asked to stop exits on its own, in time. The
//! TypeScript SDK sends nothing again: its calls whose answer was lost
//! fail, and the test reports how many and why.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use claude_code_agent_mcp::client::{
    ClientOptions, HandshakeMode, HttpOptions, HttpTransport, McpClient,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

use crate::scale_out::{Balancer, Deployment, Services, replica};
use crate::support::peers;

/// Our sessions, and the TypeScript SDK's.
const OURS: usize = 4;
const THEIRS: usize = 2;
/// The work of one `sum` call, in ms.
const SUM_MS: u64 = 50;

/// One of our sessions: its client, its transport (for its session id),
/// and the id it started with.
struct Session {
    client: Arc<McpClient>,
    http: Arc<HttpTransport>,
    first_id: String,
}

async fn session(url: &str) -> Session {
    let http = Arc::new(HttpTransport::new(HttpOptions::new(url)).unwrap());
    let options = ClientOptions::new("no-lost-calls", "1")
        .request_timeout(Duration::from_secs(10))
        .handshake(HandshakeMode::Initialize);
    let client = McpClient::connect_arc(http.clone(), options).await.unwrap();
    // The annotations that make `sum` safe to send again.
    client.list_tools().await.unwrap();
    let first_id = http.session_id().unwrap();
    Session {
        client: Arc::new(client),
        http,
        first_id,
    }
}

/// Calls made by one of our sessions, and the failures.
#[derive(Default)]
struct Load {
    made: u64,
    failed: Vec<String>,
}

/// `sum` after `sum` on `client` until `stop`.
async fn load(client: Arc<McpClient>, who: u64, stop: Arc<AtomicBool>) -> Load {
    let mut load = Load::default();
    while !stop.load(Ordering::Relaxed) {
        load.made += 1;
        let a = who * 1_000_000 + load.made;
        let call = client.call_tool("sum", json!({"a": a, "b": 1, "ms": SUM_MS}));
        match call.await {
            Ok(result) => assert_eq!(result.text_content(), (a + 1).to_string()),
            Err(e) => load.failed.push(format!("{e:#}")),
        }
    }
    load
}

/// The TypeScript SDK's client (`tests/peers/ts_chaos_client.mjs`), once
/// its sessions are open and calling.
struct TsClient {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
}

impl TsClient {
    async fn start(sdk: &std::path::Path, url: &str) -> Self {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/peers/ts_chaos_client.mjs");
        let mut child = Command::new("node")
            .env("TS_SDK_DIR", sdk)
            .arg(script)
            .args([url, &THEIRS.to_string(), &SUM_MS.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .expect("node runs");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await;
        let ready = ready.expect("the TypeScript client opens its sessions");
        assert_eq!(ready.unwrap().as_deref(), Some("ready"));
        Self { child, lines }
    }

    /// Stops its calls: its report.
    async fn stop(mut self) -> Value {
        let mut stdin = self.child.stdin.take().unwrap();
        stdin.write_all(b"stop\n").await.unwrap();
        drop(stdin);
        let report = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
            .await
            .expect("the TypeScript client reports")
            .unwrap()
            .expect("a report line");
        let status = self.child.wait().await.unwrap();
        assert!(status.success(), "the TypeScript client: {status}");
        serde_json::from_str(&report).unwrap_or_else(|e| panic!("{e}: {report}"))
    }
}

/// The replica (`r1`…) that serves `client`'s session.
async fn home(client: &McpClient) -> String {
    let who = client.call_tool("whoami", json!({})).await.unwrap();
    who.text_content()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_haproxy_no_idempotent_call_fails_across_a_kill_9_and_a_rolling_restart() {
    let test = "through_haproxy_no_idempotent_call_fails_across_a_kill_9_and_a_rolling_restart";
    let (Some(services), Some(sdk)) = (Services::find(test), peers::ts_sdk(test)) else {
        return;
    };
    let started = Instant::now();
    let mut deployment = Deployment::start(&services, Balancer::Haproxy, true).await;
    let url = deployment.url.clone();
    let redis = deployment.redis.as_ref().map(|r| r.0);

    // The session of the calls in flight at the kill, and its replica: the
    // one to be killed.
    let careful = session(&url).await;
    let victim = home(&careful.client).await;
    let index: usize = victim[1..].parse::<usize>().unwrap() - 1;

    let mut ours = Vec::new();
    for _ in 0..OURS {
        ours.push(session(&url).await);
    }
    let ts = TsClient::start(&sdk, &url).await;
    let stop = Arc::new(AtomicBool::new(false));
    let loads: Vec<_> = ours
        .iter()
        .enumerate()
        .map(|(who, s)| tokio::spawn(load(Arc::clone(&s.client), who as u64, Arc::clone(&stop))))
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;

    // kill -9 with `sum` (idempotent) and `tally` (not), 1.5 s of work
    // each, running on the victim: `sum` is sent again and answers;
    // `tally` fails saying it may or may not have run (or completes), is
    // not sent again, and neither hangs.
    let in_flight = |tool: &'static str, arguments: Value| {
        let client = Arc::clone(&careful.client);
        tokio::spawn(async move {
            let call = client.call_tool(tool, arguments);
            tokio::time::timeout(Duration::from_secs(15), call).await
        })
    };
    let sum = in_flight("sum", json!({"a": 40, "b": 2, "ms": 1500}));
    let tally = in_flight("tally", json!({"ms": 1500}));
    tokio::time::sleep(Duration::from_millis(300)).await;
    deployment.replicas[index].take().unwrap().kill().await;
    let killed = Instant::now();
    let sum = sum
        .await
        .unwrap()
        .expect("a call across a kill never hangs");
    assert_eq!(
        sum.unwrap().text_content(),
        "42",
        "sent again, and answered"
    );
    assert!(careful.client.retries() >= 1, "sent again");
    let tally = tally
        .await
        .unwrap()
        .expect("a call across a kill never hangs");
    let tally_outcome = match &tally {
        Ok(result) => format!("completed: {}", result.text_content()),
        Err(e) => {
            assert!(e.is_interrupted(), "the error says it may have run: {e:#}");
            format!("failed, retryable: {e}")
        }
    };
    // Not sent again: the replica that took the session over never ran it.
    let next = careful.client.call_tool("tally", json!({"ms": 0})).await;
    assert_eq!(
        next.unwrap().text_content(),
        "1",
        "tally was not sent again"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;

    // The victim comes back; then a rolling restart: each replica in turn
    // gets SIGTERM, drains, exits on its own, and starts again.
    let ports = deployment.ports;
    deployment.replicas[index] = Some(replica(ports[index], &victim, redis, false).await);
    let restarted_after = killed.elapsed();
    let mut drains = Vec::new();
    for (i, port) in ports.into_iter().enumerate() {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let name = format!("r{}", i + 1);
        let proc = deployment.replicas[i].take().unwrap();
        let (on_its_own, took) = proc.terminate(Duration::from_secs(8)).await;
        assert!(on_its_own, "{name} exits on its own after SIGTERM");
        drains.push(took);
        deployment.replicas[i] = Some(replica(port, &name, redis, false).await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);

    let (mut made, mut failed) = (0, Vec::new());
    for task in loads {
        let load = task.await.unwrap();
        made += load.made;
        failed.extend(load.failed);
    }
    let retried: u64 = ours.iter().map(|s| s.client.retries()).sum();
    let report = ts.stop().await;

    // No session lost: each answers on the id it started with.
    for s in ours.iter().chain([&careful]) {
        let result = s
            .client
            .call_tool("sum", json!({"a": 1, "b": 1, "ms": 0}))
            .await;
        assert_eq!(result.unwrap().text_content(), "2");
        let id = s.http.session_id();
        assert_eq!(id.as_deref(), Some(s.first_id.as_str()), "session kept");
    }
    let theirs = report["sessions"].as_array().unwrap();
    assert_eq!(theirs.len(), THEIRS, "{report}");
    for s in theirs {
        assert!(s["last"].is_null(), "a TypeScript session answers: {s}");
        assert_eq!(s["after"], s["before"], "a TypeScript session kept: {s}");
    }
    let mut why = BTreeMap::<String, usize>::new();
    for e in &failed {
        *why.entry(e.clone()).or_default() += 1;
    }
    eprintln!(
        "no_lost_calls: the load: ours {made} calls, {} failed, {retried} sent again; \
         TypeScript {} calls, {} failed {}, its sessions {}; across the kill: sum sent \
         again {} time(s) and answered, tally {tally_outcome}; victim {victim} back after \
         {restarted_after:?}; drains {drains:?}; {:?} in all",
        failed.len(),
        report["calls"],
        report["failed"],
        report["errors"],
        report["sessions"],
        careful.client.retries(),
        started.elapsed()
    );
    assert!(failed.is_empty(), "idempotent calls failed: {why:#?}");
    assert!(made > (OURS * 20) as u64, "calls went on: {made}");
}
