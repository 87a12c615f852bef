//! Replicas of one Streamable HTTP service sharing an event store, in one
//! process (`MemoryEventStore`), reached directly (no balancer: the test is
//! the balancer): a session opened on one is served by another; a stream
//! cut on one resumes from another with every event it missed, once; a
//! stream whose replica stopped ends with a retryable error, and that
//! replica's late answer is refused; a store that does not answer fails
//! requests with 503 on time; a session taken over keeps the level and
//! subscriptions its client set; a DELETE on one replica ends the session
//! on every one. `scale_out.rs` does the same through HAProxy
//! and nginx, with Redis and `kill -9`.

use std::future::pending;
use std::time::{Duration, Instant};

use claude_code_agent_mcp::http_server::{
    EventStore, MemoryEventStore, StoreFuture, StoredStream, StreamWrite, StreamableHttpConfig,
};
use claude_code_agent_mcp::server::{StoredTask, TaskStore};
use reqwest::StatusCode;
use serde_json::{Value, json};

use claude_code_agent_mcp::server::{Resource, ResourceRequest};
use claude_code_agent_mcp::{Tool, ToolContext};

use crate::support::calc::{calc_builder, calc_server};
use crate::support::wire::{Event, Events, Http, SseReader};

const V: &str = "2025-11-25";

async fn replica(store: &MemoryEventStore) -> Http {
    Http::serve(
        calc_server(),
        StreamableHttpConfig::default().event_store(store.clone()),
    )
    .await
}

/// `tools/call slow` with a progress token: `steps` steps of `ms` each.
fn slow(id: u64, steps: u32, ms: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "slow", "arguments": {"steps": steps, "ms": ms},
        "_meta": {"progressToken": "p"}}})
}

/// GET on `http` resuming after `last` (`<stream>-<seq>`).
async fn resume(http: &Http, sid: &str, last: &str) -> Events {
    let r = http
        .http
        .get(&http.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", sid)
        .header("mcp-protocol-version", V)
        .header("last-event-id", last)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    Events::new(r)
}

/// `(stream, seq)` of an event id.
fn id_of(event: &Event) -> (u64, u64) {
    let id = event.id.as_deref().expect("an event id");
    let (stream, seq) = id.split_once('-').unwrap();
    (stream.parse().unwrap(), seq.parse().unwrap())
}

fn progress(event: &Event) -> Option<f64> {
    let m = event.message.as_ref()?;
    (m["method"] == "notifications/progress").then(|| m["params"]["progress"].as_f64().unwrap())
}

/// Every event until the response ends.
async fn rest(events: &mut Events) -> Vec<Event> {
    let mut all = Vec::new();
    while let Some(e) = events.next().await {
        all.push(e);
    }
    all
}

/// Reads `events` until the progress notification `n` has come; returns the
/// last event's id.
async fn read_to_progress(events: &mut Events, n: f64) -> String {
    loop {
        let e = events.next().await.expect("the stream goes on");
        if progress(&e) == Some(n) {
            return e.id.unwrap();
        }
    }
}

/// Waits until the store has stream `stream` of `sid` ended.
async fn ended(store: &MemoryEventStore, sid: &str, stream: u64) -> StoredStream {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let kept = store.read(sid, stream).await.unwrap();
        if let Some(kept) = kept.filter(|k| k.ended) {
            return kept;
        }
        assert!(Instant::now() < deadline, "stream {stream} never ended");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_on_one_replica_is_served_by_another_until_deleted() {
    let store = MemoryEventStore::new();
    let a = replica(&store).await;
    let sid = a.initialize(V, json!({})).await;
    drop(a); // gone: its sessions live on in the store
    let b = replica(&store).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 3}}});
    let answer = b.exchange((&sid, V), &call).await;
    let last = answer.last().unwrap();
    assert_eq!(last["result"]["content"][0]["text"], "5", "{answer:?}");
    // The session's handler took over the client's initialize: a list
    // answers as it would have on the first replica.
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let tools = b.exchange((&sid, V), &list).await;
    assert!(tools[0]["result"]["tools"].as_array().unwrap().len() > 3);

    let r = b
        .http
        .delete(&b.url)
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", V)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    // Ended in the store too: a third replica does not find it.
    let c = replica(&store).await;
    let r = c.post(Some((&sid, V)), &call).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    // An id nobody opened is a 404 as well, not a session.
    let r = c.post(Some(("no-such", V)), &call).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);

    // A replica that holds all the sessions it may says so (503), rather
    // than that the session does not exist.
    let full = Http::serve(
        calc_server(),
        StreamableHttpConfig::default()
            .event_store(store.clone())
            .max_sessions(1),
    )
    .await;
    full.initialize(V, json!({})).await;
    let elsewhere = c.initialize(V, json!({})).await;
    let r = full
        .post(Some((&elsewhere, V)), &call)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        body["error"]["message"],
        "Too many sessions; try again later"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_on_one_replica_resumes_on_another_with_every_event_once() {
    let store = MemoryEventStore::new();
    let (a, b) = (replica(&store).await, replica(&store).await);
    let sid = a.initialize(V, json!({})).await;
    let r = a
        .post(Some((&sid, V)), &slow(7, 6, 20))
        .send()
        .await
        .unwrap();
    let mut events = Events::new(r);
    let last = read_to_progress(&mut events, 2.0).await;
    drop(events); // the connection to the first replica breaks
    let (stream, seq) = id_of(&Event {
        id: Some(last.clone()),
        message: None,
    });
    ended(&store, &sid, stream).await; // the call finished there

    let mut resumed = resume(&b, &sid, &last).await;
    let got = rest(&mut resumed).await;
    let seqs: Vec<u64> = got.iter().map(|e| id_of(e).1).collect();
    let want: Vec<u64> = (seq + 1..=seq + seqs.len() as u64).collect();
    assert_eq!(seqs, want, "every event after {last}, once, in order");
    assert!(got.iter().all(|e| id_of(e).0 == stream));
    let steps: Vec<f64> = got.iter().filter_map(progress).collect();
    assert_eq!(steps, [3.0, 4.0, 5.0, 6.0]);
    let answer = got.last().unwrap().message.as_ref().unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(
        answer["result"]["content"][0]["text"], "done after 6 steps",
        "{answer}"
    );

    // Asked again, the same events (nothing was taken over).
    let again = rest(&mut resume(&b, &sid, &last).await).await;
    assert_eq!(again.len(), got.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_whose_replica_stopped_ends_with_a_retryable_error_and_its_late_answer_is_refused()
{
    let store = MemoryEventStore::new();
    let (a, b) = (replica(&store).await, replica(&store).await);
    let sid = a.initialize(V, json!({})).await;
    let r = a
        .post(Some((&sid, V)), &slow(9, 8, 100))
        .send()
        .await
        .unwrap();
    let mut events = Events::new(r);
    let last = read_to_progress(&mut events, 1.0).await;
    drop(events);
    // The first replica stops serving; its call goes on, as on a replica
    // cut off from its clients but not dead.
    drop(a);
    let (stream, seq) = id_of(&Event {
        id: Some(last.clone()),
        message: None,
    });

    let got = rest(&mut resume(&b, &sid, &last).await).await;
    let seqs: Vec<u64> = got.iter().map(|e| id_of(e).1).collect();
    let want: Vec<u64> = (seq + 1..=seq + seqs.len() as u64).collect();
    assert_eq!(seqs, want, "what the store had, then the error: {got:?}");
    let error = got.last().unwrap().message.as_ref().unwrap();
    assert_eq!(error["id"], 9, "{error}");
    assert_eq!(error["error"]["code"], -32603, "{error}");
    assert_eq!(error["error"]["data"]["retryable"], true, "{error}");
    let text = error["error"]["message"].as_str().unwrap();
    assert!(text.contains("retry"), "{text}");
    let steps: Vec<f64> = got.iter().filter_map(progress).collect();
    let want: Vec<f64> = (2..=1 + steps.len()).map(|n| n as f64).collect();
    assert_eq!(steps, want, "the progress the store had, in order");

    // The first replica's call ends meanwhile: nothing of it after the
    // error is kept, and a client asking again gets the same end.
    tokio::time::sleep(Duration::from_millis(900)).await;
    let kept = ended(&store, &sid, stream).await;
    let (last_seq, last_frame) = kept.events.last().unwrap();
    assert_eq!(*last_seq, *seqs.last().unwrap());
    assert!(
        String::from_utf8_lossy(last_frame).contains("retryable"),
        "the store ends with the error"
    );
    assert!(
        !kept
            .events
            .iter()
            .any(|(_, f)| String::from_utf8_lossy(f).contains("done after")),
        "the late answer was refused"
    );
    let again = rest(&mut resume(&b, &sid, &last).await).await;
    assert_eq!(again.len(), got.len(), "replayed as it is, once ended");
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The calculator with two resources to subscribe to; its handle (to tell
/// subscribers of an update) and a replica serving it.
async fn replica_with_resources(store: &MemoryEventStore) -> (claude_code_agent_mcp::Server, Http) {
    let resource = |uri: &str| Resource::new(uri, uri, |_: ResourceRequest| async { "text" });
    let server = calc_builder("calc")
        .resource(resource("test://a"))
        .resource(resource("test://b"))
        .build();
    let config = StreamableHttpConfig::default().event_store(store.clone());
    (server.clone(), Http::serve(server, config).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_taken_over_keeps_its_logging_level_and_subscriptions() {
    let store = MemoryEventStore::new();
    let (_, a) = replica_with_resources(&store).await;
    let sid = a.initialize(V, json!({})).await;
    let level = request(2, "logging/setLevel", json!({"level": "warning"}));
    let subscribe = |id, uri| request(id, "resources/subscribe", json!({"uri": uri}));
    for message in [
        level,
        subscribe(3, "test://a"),
        subscribe(4, "test://b"),
        request(5, "resources/unsubscribe", json!({"uri": "test://b"})),
    ] {
        let answer = a.exchange((&sid, V), &message).await;
        assert_eq!(answer[0]["result"], json!({}), "{message}: {answer:?}");
    }
    drop(a); // gone: the session goes on at another replica

    let (server, b) = replica_with_resources(&store).await;
    // `slow` logs at `info` at each step: below the level the client set.
    let answer = b.exchange((&sid, V), &slow(6, 2, 0)).await;
    let methods: Vec<_> = answer.iter().map(|m| m["method"].clone()).collect();
    assert_eq!(
        answer.last().unwrap()["result"]["content"][0]["text"],
        "done after 2 steps",
        "{answer:?}"
    );
    assert!(
        !methods.contains(&json!("notifications/message")),
        "the level set on the first replica holds on the second: {answer:?}"
    );
    assert!(
        methods.contains(&json!("notifications/progress")),
        "{answer:?}"
    );
    assert_eq!(
        server.notify_resource_updated("test://a"),
        1,
        "still subscribed"
    );
    assert_eq!(
        server.notify_resource_updated("test://b"),
        0,
        "unsubscribed"
    );

    // A change made on the second replica follows the session to a third.
    let info = request(7, "logging/setLevel", json!({"level": "info"}));
    assert_eq!(b.exchange((&sid, V), &info).await[0]["result"], json!({}));
    drop(b);
    let (_, c) = replica_with_resources(&store).await;
    let answer = c.exchange((&sid, V), &slow(8, 2, 0)).await;
    let logged = answer
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .count();
    assert_eq!(logged, 2, "at `info`, each step is logged: {answer:?}");
}

/// A replica whose `ask` tool asks the client for its roots and answers
/// with them, or fails with why it got none.
async fn asker(store: &MemoryEventStore) -> Http {
    let ask = Tool::new(
        "ask",
        "Asks the client for its roots",
        |_: Value, ctx: ToolContext| async move {
            match ctx.request("roots/list", json!({})).await {
                Ok(roots) => Ok(roots.to_string()),
                Err(e) => Err(e.to_string()),
            }
        },
    )
    .input_schema(json!({"type": "object"}));
    let server = calc_builder("calc").tool(ask).build();
    Http::serve(
        server,
        StreamableHttpConfig::default().event_store(store.clone()),
    )
    .await
}

/// `tools/call ask` on `http`: its SSE stream, read until the tool's
/// `roots/list` request, and that request's answer (`{"roots": []}`).
async fn ask(http: &Http, sid: &str, id: u64) -> (SseReader, Value) {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "ask", "arguments": {}}});
    let r = http.post(Some((sid, V)), &call).send().await.unwrap();
    let mut events = SseReader::new(r);
    let asked = events.until(|m| m["method"] == "roots/list").await;
    let question = asked.last().unwrap();
    let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"roots": []}});
    (events, answer)
}

/// The result of call `id`, read off `events`.
async fn result_of(events: &mut SseReader, id: u64) -> Value {
    let read = events.until(|m| m["id"] == id).await;
    read.last().unwrap()["result"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_to_the_client_fails_saying_so_once_its_session_moved_to_another_replica() {
    let store = MemoryEventStore::new();
    let (a, b) = (asker(&store).await, asker(&store).await);
    let sid = a.initialize(V, json!({"roots": {}})).await;
    let moved = |result: &Value| {
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        result["isError"] == true
            && text.contains(&sid)
            && text.contains("moved to another replica")
    };

    // The client's answer lands on B (the balancer moved the session): B
    // takes the session over and accepts the answer, which A's tool cannot
    // get; the tool fails saying why instead of waiting for it.
    let (mut events, answer) = ask(&a, &sid, 2).await;
    let sent = Instant::now();
    let r = b.post(Some((&sid, V)), &answer).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let result = result_of(&mut events, 2).await;
    assert!(moved(&result), "{result}");
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "{:?}",
        sent.elapsed()
    );

    // The client is back on A (its call reached A, which holds the session
    // again), then B takes the session over (a ping of the client reached
    // it) while A's tool waits: the tool fails without an answer.
    let (mut events, _answer) = ask(&a, &sid, 3).await;
    let ping = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
    assert_eq!(b.exchange((&sid, V), &ping).await[0]["result"], json!({}));
    let result = result_of(&mut events, 3).await;
    assert!(moved(&result), "{result}");

    // While A holds the session, its tools get their answers, however long
    // the client takes (past a look at the session's record).
    let (mut events, answer) = ask(&a, &sid, 5).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    let r = a.post(Some((&sid, V)), &answer).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let result = result_of(&mut events, 5).await;
    assert_eq!(result["content"][0]["text"], r#"{"roots":[]}"#, "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_on_one_replica_ends_the_session_on_every_one() {
    let store = MemoryEventStore::new();
    let a = replica(&store).await;
    let b = replica(&store).await;
    let sid = a.initialize(V, json!({})).await;
    let list = request(2, "tools/list", json!({}));
    // Both hold it: b took it over (a balancer moved it, say).
    for replica in [&a, &b] {
        let tools = replica.exchange((&sid, V), &list).await;
        assert!(tools[0]["result"]["tools"].is_array(), "{tools:?}");
    }
    let r = a
        .http
        .delete(&a.url)
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", V)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    // b, which still has its copy, learns it ended from the store.
    for replica in [&b, &a] {
        let r = replica.post(Some((&sid, V)), &list).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::NOT_FOUND);
    }
}

/// A store that never answers (a partitioned database).
#[derive(Debug)]
struct Silent;

impl EventStore for Silent {
    fn save_session<'a>(&'a self, _: &'a str, _: &'a [u8], _: Duration) -> StoreFuture<'a, ()> {
        Box::pin(pending())
    }
    fn load_session<'a>(&'a self, _: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        Box::pin(pending())
    }
    fn touch_session<'a>(&'a self, _: &'a str, _: Duration) -> StoreFuture<'a, ()> {
        Box::pin(pending())
    }
    fn remove_session<'a>(&'a self, _: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(pending())
    }
    fn write<'a>(&'a self, _: &'a str, _: &'a [StreamWrite]) -> StoreFuture<'a, Vec<bool>> {
        Box::pin(pending())
    }
    fn read<'a>(&'a self, _: &'a str, _: u64) -> StoreFuture<'a, Option<StoredStream>> {
        Box::pin(pending())
    }
}

impl TaskStore for Silent {
    fn create_task<'a>(&'a self, _: &'a str, _: &'a [u8], _: Duration) -> StoreFuture<'a, ()> {
        Box::pin(pending())
    }
    fn load_task<'a>(&'a self, _: &'a str) -> StoreFuture<'a, Option<StoredTask>> {
        Box::pin(pending())
    }
    fn update_task<'a>(&'a self, _: &'a str, _: &'a [u8], _: bool) -> StoreFuture<'a, bool> {
        Box::pin(pending())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_does_not_answer_fails_requests_with_503_on_time() {
    let config = StreamableHttpConfig::default()
        .event_store(Silent)
        .store_timeout(Duration::from_millis(200));
    let http = Http::serve(calc_server(), config).await;
    let started = Instant::now();
    let init = crate::support::wire::initialize_request(V, json!({}));
    let r = http.post(None, &init).send().await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = r.json().await.unwrap();
    let text = body["error"]["message"].as_str().unwrap();
    assert_eq!(
        text,
        "Service Unavailable: a new session needs the event store, which failed; try again"
    );
    // A session some other replica opened: taking it over fails the same way.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 3}}});
    let started = Instant::now();
    let r = http
        .post(Some(("elsewhere", V)), &call)
        .send()
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
}

/// The bytes of events a store of the contract test keeps per stream.
pub const CONTRACT_BYTES: usize = 1000;

/// Event `seq` of `stream`, as the service writes it.
pub fn event(stream: u64, seq: u64) -> StreamWrite {
    StreamWrite::Event {
        stream,
        seq,
        frame: format!("id: {stream}-{seq}\nevent: message\ndata: {{}}\n\n").into(),
    }
}

/// What every [`EventStore`] must do, checked on `store`, made to keep 2
/// events per stream, [`CONTRACT_BYTES`] of them, and streams for `ttl`
/// (`scale_out.rs` runs it on Redis); its tasks are made to be kept `ttl`.
pub async fn the_store_contract_holds(store: &dyn EventStore, ttl: Duration) {
    let s = format!("contract-{}", std::process::id());
    let s = s.as_str();
    assert_eq!(store.read(s, 1).await.unwrap(), None, "nothing yet");
    let open = StreamWrite::Open {
        stream: 1,
        request: Some(json!(7)),
    };
    let done = store
        .write(s, &[open, event(1, 1), event(1, 2), event(1, 3)])
        .await
        .unwrap();
    assert_eq!(done, [true; 4]);
    let kept = store.read(s, 1).await.unwrap().unwrap();
    assert_eq!(kept.request, Some(json!(7)));
    assert!(!kept.ended);
    let seqs: Vec<u64> = kept.events.iter().map(|(n, _)| *n).collect();
    assert_eq!(seqs, [2, 3], "2 events kept, the oldest went");

    let take_over = |seq: u64| StreamWrite::TakeOver {
        stream: 1,
        seq,
        frame: format!("id: 1-{seq}\nevent: message\ndata: {{\"error\":1}}\n\n").into(),
    };
    assert_eq!(
        store.write(s, &[take_over(3)]).await.unwrap(),
        [false],
        "a take-over not after the last event is refused"
    );
    assert_eq!(store.write(s, &[take_over(4)]).await.unwrap(), [true]);
    let refused = store
        .write(
            s,
            &[event(1, 5), StreamWrite::End { stream: 1 }, take_over(6)],
        )
        .await
        .unwrap();
    assert_eq!(
        refused,
        [false, false, false],
        "once ended, the owner's late event and end and a second take-over are refused"
    );
    let kept = store.read(s, 1).await.unwrap().unwrap();
    assert!(kept.ended);
    assert_eq!(kept.events.last().unwrap().0, 4);

    // An owner's end; a GET stream (no request); forgetting.
    let done = store
        .write(
            s,
            &[
                StreamWrite::Open {
                    stream: 2,
                    request: None,
                },
                event(2, 1),
                StreamWrite::End { stream: 2 },
            ],
        )
        .await
        .unwrap();
    assert_eq!(done, [true; 3]);
    let kept = store.read(s, 2).await.unwrap().unwrap();
    assert_eq!((kept.request, kept.ended), (None, true));
    store
        .write(s, &[StreamWrite::Forget { stream: 2 }])
        .await
        .unwrap();
    assert_eq!(store.read(s, 2).await.unwrap(), None);

    // Streams interleaved in one batch keep their own events, in order.
    let done = store
        .write(s, &[event(3, 1), event(4, 1), event(3, 2), event(4, 2)])
        .await
        .unwrap();
    assert_eq!(done, [true; 4]);
    for stream in [3, 4] {
        let kept = store.read(s, stream).await.unwrap().unwrap();
        let seqs: Vec<u64> = kept.events.iter().map(|(n, _)| *n).collect();
        assert_eq!(seqs, [1, 2], "stream {stream}");
    }

    // Capped in bytes too: a big event pushes out the older ones, and is
    // kept even alone over the cap.
    let sized = |seq: u64, bytes: usize| {
        let head = format!("id: 5-{seq}\nevent: message\ndata: ");
        let pad = "x".repeat(bytes - head.len() - 2);
        StreamWrite::Event {
            stream: 5,
            seq,
            frame: format!("{head}{pad}\n\n").into(),
        }
    };
    let writes = [sized(1, 60), sized(2, 60), sized(3, CONTRACT_BYTES - 50)];
    assert_eq!(store.write(s, &writes).await.unwrap(), [true; 3]);
    let kept = store.read(s, 5).await.unwrap().unwrap();
    let seqs: Vec<u64> = kept.events.iter().map(|(n, _)| *n).collect();
    assert_eq!(seqs, [3], "the bytes of 2 and 3 are over the cap");
    assert_eq!(kept.events[0].1.len(), CONTRACT_BYTES - 50);
    let writes = [sized(4, 60), sized(5, CONTRACT_BYTES * 2)];
    assert_eq!(store.write(s, &writes).await.unwrap(), [true; 2]);
    let kept = store.read(s, 5).await.unwrap().unwrap();
    let seqs: Vec<u64> = kept.events.iter().map(|(n, _)| *n).collect();
    assert_eq!(seqs, [5], "the newest is kept whatever its size");
    assert_eq!(store.write(s, &[sized(6, 60)]).await.unwrap(), [true]);
    let kept = store.read(s, 5).await.unwrap().unwrap();
    let seqs: Vec<u64> = kept.events.iter().map(|(n, _)| *n).collect();
    assert_eq!(seqs, [6], "its bytes left with it");
    let writes = [sized(7, 60), sized(8, 60)];
    assert_eq!(store.write(s, &writes).await.unwrap(), [true; 2]);
    let kept = store.read(s, 5).await.unwrap().unwrap();
    let seqs: Vec<u64> = kept.events.iter().map(|(n, _)| *n).collect();
    assert_eq!(seqs, [7, 8], "under the cap in bytes, 2 events");

    // Sessions: kept, touched, removed; and expiring. An empty record (an
    // ended session's) is kept as one.
    store.save_session(s, b"", ttl).await.unwrap();
    let record = store.load_session(s).await.unwrap();
    assert_eq!(record.as_deref(), Some(&b""[..]));
    store.save_session(s, b"record", ttl).await.unwrap();
    let record = store.load_session(s).await.unwrap();
    assert_eq!(record.as_deref(), Some(&b"record"[..]));
    store.remove_session(s).await.unwrap();
    assert_eq!(store.load_session(s).await.unwrap(), None);
    store.save_session(s, b"again", ttl).await.unwrap();
    store.touch_session(s, ttl * 4).await.unwrap();
    tokio::time::sleep(ttl * 2).await;
    assert!(
        store.load_session(s).await.unwrap().is_some(),
        "a touched session is kept longer"
    );
    assert_eq!(store.read(s, 1).await.unwrap(), None, "streams expire");
    tokio::time::sleep(ttl * 3).await;
    assert_eq!(
        store.load_session(s).await.unwrap(),
        None,
        "sessions expire"
    );

    // Tasks: created, replaced until final, final once, gone after their TTL.
    let t = format!("task-{}", std::process::id());
    let t = t.as_str();
    assert_eq!(store.load_task(t).await.unwrap(), None);
    assert!(
        !store.update_task(t, b"w", false).await.unwrap(),
        "no task yet"
    );
    store.create_task(t, b"working", ttl).await.unwrap();
    assert_eq!(
        store.load_task(t).await.unwrap(),
        Some(StoredTask::new(b"working".to_vec(), false))
    );
    assert!(store.update_task(t, b"input", false).await.unwrap());
    assert!(store.update_task(t, b"cancelled", true).await.unwrap());
    assert!(
        !store.update_task(t, b"completed", true).await.unwrap(),
        "a final record stays"
    );
    assert!(!store.update_task(t, b"working", false).await.unwrap());
    assert_eq!(
        store.load_task(t).await.unwrap(),
        Some(StoredTask::new(b"cancelled".to_vec(), true))
    );
    tokio::time::sleep(ttl * 3).await;
    assert_eq!(store.load_task(t).await.unwrap(), None, "tasks expire");
}

/// What every [`EventStore`] must do when a resume reads a stream page by
/// page ([`EventStore::read_page`]), checked on `store`, which keeps 16
/// events per stream at least (`scale_out.rs` runs it on Redis).
pub async fn the_store_pages_streams(store: &dyn EventStore) {
    let s = format!("pages-{}", std::process::id());
    let s = s.as_str();
    assert_eq!(store.read_page(s, 1, 0, 8, 1 << 20).await.unwrap(), None);
    // Events 1 to 10 but 4 and 5 (their write failed), 33 or 34 bytes each.
    let open = StreamWrite::Open {
        stream: 1,
        request: Some(json!(7)),
    };
    let events = (1..=10)
        .filter(|n| !(4..=5).contains(n))
        .map(|n| event(1, n));
    let writes: Vec<StreamWrite> = std::iter::once(open).chain(events).collect();
    assert_eq!(store.write(s, &writes).await.unwrap(), [true; 9]);
    let page = |after: u64, events: usize, bytes: usize| async move {
        let page = store.read_page(s, 1, after, events, bytes).await.unwrap();
        let page = page.expect("the stream is kept");
        assert_eq!((page.request, page.ended), (Some(json!(7)), false));
        page.events.iter().map(|(n, _)| *n).collect::<Vec<u64>>()
    };
    assert_eq!(page(0, 3, 1 << 20).await, [1, 2, 3]);
    assert_eq!(page(3, 3, 1 << 20).await, [6, 7, 8], "over the gap");
    assert_eq!(page(4, 3, 1 << 20).await, [6, 7, 8], "in the gap");
    assert_eq!(page(8, 3, 1 << 20).await, [9, 10]);
    assert_eq!(page(10, 3, 1 << 20).await, [0u64; 0], "nothing more");
    assert_eq!(page(0, 8, 33 * 2 + 10).await, [1, 2], "bounded in bytes");
    assert_eq!(page(0, 8, 1).await, [1], "the first whatever its size");
    assert_eq!(page(0, 0, 1 << 20).await, [1], "one at least");
    let all = store.read(s, 1).await.unwrap().unwrap().events;
    let paged = store.read_page(s, 1, 0, 100, 1 << 20).await.unwrap();
    assert_eq!(paged.unwrap().events, all, "the very frames kept");
    store
        .write(s, &[StreamWrite::End { stream: 1 }])
        .await
        .unwrap();
    let ended = store.read_page(s, 1, 10, 3, 100).await.unwrap().unwrap();
    assert!(ended.ended && ended.events.is_empty());
}

/// A store that pages with the trait's default: it reads whole streams.
#[derive(Debug, Default)]
struct Whole(MemoryEventStore);

impl EventStore for Whole {
    fn save_session<'a>(&'a self, id: &'a str, r: &'a [u8], ttl: Duration) -> StoreFuture<'a, ()> {
        self.0.save_session(id, r, ttl)
    }
    fn load_session<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        self.0.load_session(id)
    }
    fn touch_session<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, ()> {
        self.0.touch_session(id, ttl)
    }
    fn remove_session<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        self.0.remove_session(id)
    }
    fn write<'a>(&'a self, s: &'a str, w: &'a [StreamWrite]) -> StoreFuture<'a, Vec<bool>> {
        self.0.write(s, w)
    }
    fn read<'a>(&'a self, s: &'a str, stream: u64) -> StoreFuture<'a, Option<StoredStream>> {
        self.0.read(s, stream)
    }
}

impl TaskStore for Whole {
    fn create_task<'a>(&'a self, id: &'a str, r: &'a [u8], ttl: Duration) -> StoreFuture<'a, ()> {
        self.0.create_task(id, r, ttl)
    }
    fn load_task<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<StoredTask>> {
        self.0.load_task(id)
    }
    fn update_task<'a>(&'a self, id: &'a str, r: &'a [u8], last: bool) -> StoreFuture<'a, bool> {
        self.0.update_task(id, r, last)
    }
}

#[tokio::test]
async fn the_memory_store_and_the_default_page_streams() {
    the_store_pages_streams(&MemoryEventStore::new()).await;
    the_store_pages_streams(&Whole::default()).await;
}

/// A stream larger than the resuming replica's byte budget is replayed
/// page by page as its client reads: every event once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_larger_than_the_budget_resumes_on_another_replica_whole() {
    let store = MemoryEventStore::new();
    let a = replica(&store).await;
    let small = StreamableHttpConfig::default()
        .event_store(store.clone())
        .max_held_bytes(16 * 1024);
    let b = Http::serve(calc_server(), small).await;
    let sid = a.initialize(V, json!({})).await;
    // 400 progress and log events, about 80 KB.
    let r = a
        .post(Some((&sid, V)), &slow(2, 200, 0))
        .send()
        .await
        .unwrap();
    let mut events = Events::new(r);
    let first = read_to_progress(&mut events, 1.0).await;
    drop(events);
    let (stream, seq) = id_of(&Event {
        id: Some(first.clone()),
        message: None,
    });
    let whole = ended(&store, &sid, stream).await;
    let bytes: usize = whole.events.iter().map(|(_, f)| f.len()).sum();
    assert!(bytes > 64 * 1024, "{bytes} bytes");

    let got = rest(&mut resume(&b, &sid, &first).await).await;
    let seqs: Vec<u64> = got.iter().map(|e| id_of(e).1).collect();
    let want: Vec<u64> = whole
        .events
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| *n > seq)
        .collect();
    assert_eq!(seqs, want);
    let answer = got.last().unwrap().message.as_ref().unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "done after 200 steps"
    );
}

#[tokio::test]
async fn the_memory_store_keeps_the_contract() {
    let ttl = Duration::from_millis(100);
    let store = MemoryEventStore::new()
        .events_per_stream(2)
        .bytes_per_stream(CONTRACT_BYTES)
        .ttl(ttl);
    the_store_contract_holds(&store, ttl).await;
}
