//! The Tasks extension (SEP-2663): tools that run as tasks, followed with
//! `McpClient` in process and over Streamable HTTP (`call_tool_as_task`,
//! `wait_task`, `get_task`, `cancel_task`, input asked with
//! `ToolContext::ask` and answered through the client's handlers or by
//! hand), on the wire over NDJSON, the server's bounds (count, bytes,
//! TTL), and replicas sharing an event store: a task started on one is
//! followed and cancelled through another, and one whose replica stopped
//! is reported failed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use claude_code_agent_mcp::client::{ClientOptions, HandshakeMode, InProcessTransport, McpClient};
use claude_code_agent_mcp::server::{ClientRequestError, TaskSupport};
use claude_code_agent_mcp::types::{InputRequest, TaskStatus, ToolCallOutcome};
use claude_code_agent_mcp::{Server, ServerBuilder, Tool, ToolContext};
use serde_json::{Value, json};

use crate::support::Unfinished;
use crate::support::wire::Lines;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Work {
    ms: u64,
    #[serde(default)]
    bytes: usize,
}

/// Set when a `work` call is cancelled.
type Flag = Arc<AtomicBool>;

fn builder(cancelled: &Flag) -> ServerBuilder {
    let seen = Arc::clone(cancelled);
    Server::builder("tasks", "1.0.0")
        .tool(
            Tool::new("work", "Works ms milliseconds", move |w: Work| {
                let mut unfinished = Unfinished(Some(Arc::clone(&seen)));
                async move {
                    tokio::time::sleep(Duration::from_millis(w.ms)).await;
                    unfinished.finished();
                    format!("worked {} ms{}", w.ms, "x".repeat(w.bytes))
                }
            })
            .task_support(TaskSupport::Optional),
        )
        .tool(
            Tool::new(
                "ask",
                "Asks the client for a name",
                |_: Value, ctx: ToolContext| async move {
                    let params = json!({"mode":"form","message":"Name?",
                    "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}});
                    let answer = ctx.request("elicitation/create", params).await;
                    match answer {
                        Ok(a) => format!("hello {}", a["content"]["name"].as_str().unwrap_or("?")),
                        Err(e) => format!("no answer: {e}"),
                    }
                },
            )
            .task_support(TaskSupport::Optional),
        )
        .tool(
            Tool::new(
                "greet",
                "Asks the user's name and city (ToolContext::ask), greets",
                |_: Value, ctx: ToolContext| async move {
                    let schema =
                        |p: &str| json!({"type":"object","properties":{p:{"type":"string"}}});
                    let name = ctx
                        .ask("name", InputRequest::elicitation("Name?", schema("name")))
                        .await?;
                    let city = ctx
                        .ask("city", InputRequest::elicitation("City?", schema("city")))
                        .await?;
                    Ok::<_, ClientRequestError>(format!(
                        "hello {} of {}",
                        name["content"]["name"].as_str().unwrap_or("?"),
                        city["content"]["city"].as_str().unwrap_or("?")
                    ))
                },
            )
            .task_support(TaskSupport::Optional),
        )
        .tool(
            Tool::new("boom", "Panics", |_: Value| async {
                if true {
                    panic!("boom");
                }
                "never"
            })
            .task_support(TaskSupport::Optional),
        )
        .tool(
            Tool::new("only_task", "Runs only as a task", |_: Value| async {
                "ok"
            })
            .task_support(TaskSupport::Required),
        )
        .tool(Tool::new("plain", "Never a task", |_: Value| async {
            "plain"
        }))
}

fn options() -> ClientOptions {
    ClientOptions::new("tasks-test", "1")
        .request_timeout(Duration::from_secs(10))
        .on_elicitation(|params| async move {
            Ok(match params["message"].as_str() {
                Some("City?") => json!({"action":"accept","content":{"city":"London"}}),
                _ => json!({"action":"accept","content":{"name":"Ada"}}),
            })
        })
}

fn task(outcome: ToolCallOutcome) -> claude_code_agent_mcp::types::Task {
    match outcome {
        ToolCallOutcome::Task(task) => *task,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// Waits (a while) for the `work` call to be dropped mid-way.
async fn dropped(cancelled: &Flag) {
    let until = tokio::time::Instant::now() + Duration::from_secs(5);
    while !cancelled.load(Ordering::SeqCst) && tokio::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(cancelled.load(Ordering::SeqCst), "the call was dropped");
}

async fn within<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .expect("in time")
}

/// Everything the client does with tasks, on `client` (of a server built
/// by [`builder`] with `cancelled`).
async fn scenario(client: &McpClient, cancelled: &Flag) {
    // A task: answered at once, then followed to its result.
    let started = task(
        client
            .call_tool_as_task("work", json!({"ms": 50}))
            .await
            .unwrap(),
    );
    assert_eq!(started.status, TaskStatus::Working);
    assert_eq!(started.ttl_ms, Some(3_600_000));
    assert_eq!(started.poll_interval_ms, Some(20));
    assert_eq!(started.task_id.len(), 32, "128 random bits");
    let result = within(client.wait_task(&started.task_id)).await.unwrap();
    assert_eq!(result.text_content(), "worked 50 ms");
    let done = client.get_task(&started.task_id).await.unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.result.unwrap().text_content(), "worked 50 ms");

    // A tool that never runs as a task answers at once.
    match client.call_tool_as_task("plain", json!({})).await.unwrap() {
        ToolCallOutcome::Done(r) => assert_eq!(r.text_content(), "plain"),
        other => panic!("{other:?}"),
    }
    // One that runs only as a task refuses a plain call, naming the extension.
    let e = client.call_tool("only_task", json!({})).await.unwrap_err();
    assert_eq!(e.code(), Some(-32021), "{e}");
    let data = e.jsonrpc_error().unwrap().data.clone().unwrap();
    assert!(
        data["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object()
    );

    // Cancelled: acknowledged at once; the call is dropped; waiting says so.
    let long = task(
        client
            .call_tool_as_task("work", json!({"ms": 60_000}))
            .await
            .unwrap(),
    );
    tokio::time::sleep(Duration::from_millis(100)).await; // the call is under way
    client.cancel_task(&long.task_id).await.unwrap();
    let e = within(client.wait_task(&long.task_id)).await.unwrap_err();
    assert!(e.is_cancelled(), "{e:?}");
    dropped(cancelled).await;
    // Cancelling an ended task is no error.
    client.cancel_task(&long.task_id).await.unwrap();

    // A panic fails the task with a JSON-RPC error.
    let boom = task(client.call_tool_as_task("boom", json!({})).await.unwrap());
    let e = within(client.wait_task(&boom.task_id)).await.unwrap_err();
    assert_eq!(e.code(), Some(-32603), "{e}");
    assert!(e.to_string().contains("panicked: boom"), "{e}");
    let failed = client.get_task(&boom.task_id).await.unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    assert!(failed.result.is_none());

    // Input: the task's elicitation is answered by the client's handler.
    let ask = task(client.call_tool_as_task("ask", json!({})).await.unwrap());
    let result = within(client.wait_task(&ask.task_id)).await.unwrap();
    assert_eq!(result.text_content(), "hello Ada");

    // ToolContext::ask in a task: each question makes the task
    // input_required with it, and wait_task answers it with the client's
    // handler (tasks/update)...
    let greet = task(client.call_tool_as_task("greet", json!({})).await.unwrap());
    let result = within(client.wait_task(&greet.task_id)).await.unwrap();
    assert_eq!(result.text_content(), "hello Ada of London");
    // ...or by hand: the question, as the task carries it, then the answer.
    let greet = task(client.call_tool_as_task("greet", json!({})).await.unwrap());
    for (question, answer) in [
        ("Name?", json!({"name": "Grace"})),
        ("City?", json!({"city": "Arlington"})),
    ] {
        let waiting = within(async {
            loop {
                let t = client.get_task(&greet.task_id).await.unwrap();
                if t.status != TaskStatus::Working {
                    break t;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await;
        assert_eq!(waiting.status, TaskStatus::InputRequired, "{waiting:?}");
        let requests = waiting.input_requests.unwrap();
        assert_eq!(requests.len(), 1, "{requests:?}");
        let (key, request) = requests.into_iter().next().unwrap();
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["message"], question);
        let mut responses = serde_json::Map::new();
        responses.insert(key, json!({"action": "accept", "content": answer}));
        client.update_task(&greet.task_id, responses).await.unwrap();
    }
    let result = within(client.wait_task(&greet.task_id)).await.unwrap();
    assert_eq!(result.text_content(), "hello Grace of Arlington");

    // Unknown tasks are -32602.
    let e = client.get_task("no-such-task").await.unwrap_err();
    assert_eq!(e.code(), Some(-32602), "{e}");
    let e = client.cancel_task("no-such-task").await.unwrap_err();
    assert_eq!(e.code(), Some(-32602), "{e}");
}

#[tokio::test]
async fn tasks_in_process() {
    let cancelled = Flag::default();
    let server = builder(&cancelled)
        .task_poll_interval(Duration::from_millis(20))
        .build();
    let client = McpClient::connect(InProcessTransport::new(server), options())
        .await
        .unwrap();
    assert!(client.server_state().stateless);
    scenario(&client, &cancelled).await;
}

#[cfg(all(feature = "http-server", feature = "http-client"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_over_streamable_http() {
    use claude_code_agent_mcp::client::{HttpOptions, HttpTransport};
    use claude_code_agent_mcp::http_server::StreamableHttpConfig;

    let cancelled = Flag::default();
    let server = builder(&cancelled)
        .task_poll_interval(Duration::from_millis(20))
        .build();
    let http = crate::support::wire::Http::serve(server, StreamableHttpConfig::default()).await;
    let transport = HttpTransport::new(HttpOptions::new(&http.url)).unwrap();
    let client = McpClient::connect(transport, options()).await.unwrap();
    assert!(client.server_state().stateless);
    scenario(&client, &cancelled).await;
}

#[tokio::test]
async fn tasks_need_the_stateless_revision_on_the_client() {
    let client = McpClient::connect(
        InProcessTransport::new(builder(&Flag::default()).build()),
        ClientOptions::new("t", "1").handshake(HandshakeMode::Initialize),
    )
    .await
    .unwrap();
    let e = client
        .call_tool_as_task("work", json!({"ms": 1}))
        .await
        .unwrap_err();
    assert!(e.is_refused(), "{e:?}");
    assert!(e.to_string().contains("2026-07-28"), "{e}");
    // The session's plain call of a task tool runs as a plain call.
    let r = client.call_tool("work", json!({"ms": 1})).await.unwrap();
    assert_eq!(r.text_content(), "worked 1 ms");
}

/// A stateless request's `_meta`, declaring the extension or not.
fn meta(tasks: bool) -> Value {
    let extensions = if tasks {
        json!({"io.modelcontextprotocol/tasks": {}})
    } else {
        json!({})
    };
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": {"extensions": extensions}})
}

fn request(id: u64, method: &str, mut params: Value, tasks: bool) -> Value {
    params["_meta"] = meta(tasks);
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
}

#[tokio::test]
async fn tasks_over_ndjson() {
    let mut lines = Lines::serve(builder(&Flag::default()).build());
    let call = json!({"name":"work","arguments":{"ms":20}});
    lines
        .send(&request(1, "tools/call", call.clone(), true))
        .await;
    let created = lines.recv().await["result"].clone();
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "working");
    for key in [
        "result",
        "error",
        "inputRequests",
        "requestState",
        "ttl",
        "pollInterval",
    ] {
        assert!(created.get(key).is_none(), "{key} in {created}");
    }
    let id = created["taskId"].as_str().unwrap().to_owned();
    // Gated on the extension, per request.
    lines
        .send(&request(2, "tasks/get", json!({"taskId": id}), false))
        .await;
    assert_eq!(lines.recv().await["error"]["code"], -32021);
    // Without the extension the same tool runs as a plain call.
    lines.send(&request(3, "tools/call", call, false)).await;
    let plain = lines.recv().await["result"].clone();
    assert_eq!(plain["resultType"], "complete", "{plain}");
    assert_eq!(plain["content"][0]["text"], "worked 20 ms");
    // The removed methods of the 2025-11-25 tasks are not here.
    for method in ["tasks/result", "tasks/list"] {
        lines
            .send(&request(4, method, json!({"taskId": id}), true))
            .await;
        assert_eq!(lines.recv().await["error"]["code"], -32601, "{method}");
    }
    let mut n = 10;
    let got = loop {
        n += 1;
        lines
            .send(&request(n, "tasks/get", json!({"taskId": id}), true))
            .await;
        let got = lines.recv().await["result"].clone();
        if got["status"] != "working" {
            break got;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(got["status"], "completed", "{got}");
    assert_eq!(got["resultType"], "complete");
    assert_eq!(got["result"]["content"][0]["text"], "worked 20 ms");
    lines.end().await;
}

#[tokio::test]
async fn a_listener_hears_a_task_to_its_end() {
    use claude_code_agent_mcp::client::ServerNotification;
    use claude_code_agent_mcp::types::SubscriptionFilter;
    use futures::StreamExt;

    let server = builder(&Flag::default()).build();
    let client = McpClient::connect(InProcessTransport::new(server), options())
        .await
        .unwrap();
    let t = task(
        client
            .call_tool_as_task("work", json!({"ms": 200}))
            .await
            .unwrap(),
    );
    let filter = SubscriptionFilter::new()
        .task(&t.task_id)
        .task("not-running-here");
    let mut heard = client.listen(filter).await.unwrap();
    // Only the task that runs here is agreed to.
    assert_eq!(heard.acknowledged().task_ids, Some(vec![t.task_id.clone()]));
    let note = within(heard.next()).await.unwrap();
    let ServerNotification::Task(told) = note else {
        panic!("{note:?}")
    };
    assert_eq!(told.task_id, t.task_id);
    assert_eq!(told.status, TaskStatus::Completed);
    assert_eq!(told.result.unwrap().text_content(), "worked 200 ms");

    // Asking for task status without declaring the extension is -32021.
    let mut lines = Lines::serve(builder(&Flag::default()).build());
    let listen = json!({"notifications": {"taskIds": ["x"]}});
    lines
        .send(&request(1, "subscriptions/listen", listen, false))
        .await;
    assert_eq!(lines.recv().await["error"]["code"], -32021);
    lines.end().await;
}

#[tokio::test]
async fn a_server_keeps_no_more_tasks_than_its_bounds() {
    let server = builder(&Flag::default())
        .max_tasks(2)
        .max_task_bytes(8 * 1024)
        .task_ttl(Duration::from_millis(300))
        .task_poll_interval(Duration::from_millis(10))
        .build();
    let client = McpClient::connect(InProcessTransport::new(server), options())
        .await
        .unwrap();
    // A result over the byte bound fails its task, saying which bound.
    let big = task(
        client
            .call_tool_as_task("work", json!({"ms": 1, "bytes": 10_000}))
            .await
            .unwrap(),
    );
    let e = within(client.wait_task(&big.task_id)).await.unwrap_err();
    assert_eq!(e.code(), Some(-32603), "{e}");
    assert!(e.to_string().contains("max_task_bytes"), "{e}");

    // Two tasks kept (the failed one and one more); a third is refused.
    let one = task(
        client
            .call_tool_as_task("work", json!({"ms": 5}))
            .await
            .unwrap(),
    );
    let e = client
        .call_tool_as_task("work", json!({"ms": 5}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(-32603), "{e}");
    assert!(e.to_string().contains("max_tasks"), "{e}");
    within(client.wait_task(&one.task_id)).await.unwrap();

    // Past their TTL they go, and make room.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let e = client.get_task(&one.task_id).await.unwrap_err();
    assert_eq!(e.code(), Some(-32602), "{e}");
    let again = task(
        client
            .call_tool_as_task("work", json!({"ms": 1}))
            .await
            .unwrap(),
    );
    within(client.wait_task(&again.task_id)).await.unwrap();
}

#[cfg(all(feature = "http-server", feature = "http-client"))]
mod replicas {
    use super::*;
    use claude_code_agent_mcp::client::{HttpOptions, HttpTransport};
    use claude_code_agent_mcp::http_server::{
        EventStore, MemoryEventStore, StreamableHttpConfig, StreamableHttpService,
    };

    /// A replica of the task server sharing `store`, on a runtime of its
    /// own (so that it can die with its tasks): its URL and what stops it.
    fn replica(
        store: impl EventStore,
        cancelled: &Flag,
    ) -> (
        String,
        std::thread::JoinHandle<()>,
        tokio::sync::oneshot::Sender<()>,
    ) {
        let server = builder(cancelled)
            .task_lease(Duration::from_millis(300))
            .task_poll_interval(Duration::from_millis(20))
            .build();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let config = StreamableHttpConfig::default().event_store(store);
        let service = StreamableHttpService::new(server, config);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let _ = service
                    .serve_with_shutdown(listener, async {
                        let _ = stopped.await;
                    })
                    .await;
            });
            // The runtime goes, and the tasks it ran with it: the replica died.
            runtime.shutdown_background();
        });
        (url, thread, stop)
    }

    async fn client(url: &str) -> McpClient {
        let transport = HttpTransport::new(HttpOptions::new(url)).unwrap();
        McpClient::connect(transport, options()).await.unwrap()
    }

    /// Followed, cancelled and written off through another replica: each
    /// replica with a store made by `store`, all sharing what they keep
    /// (`scale_out.rs` runs it on Redis).
    pub async fn tasks_survive_their_replica<S: EventStore>(store: impl Fn() -> S) {
        let cancelled = Flag::default();
        let (url_a, thread_a, stop_a) = replica(store(), &cancelled);
        let (url_b, thread_b, stop_b) = replica(store(), &cancelled);
        let (a, b) = (client(&url_a).await, client(&url_b).await);

        // Started on A, followed through B to its result.
        let t = task(
            a.call_tool_as_task("work", json!({"ms": 300}))
                .await
                .unwrap(),
        );
        assert_eq!(
            b.get_task(&t.task_id).await.unwrap().status,
            TaskStatus::Working
        );
        let result = within(b.wait_task(&t.task_id)).await.unwrap();
        assert_eq!(result.text_content(), "worked 300 ms");

        // Cancelled through B: A stops the call when it next writes.
        let long = task(
            a.call_tool_as_task("work", json!({"ms": 60_000}))
                .await
                .unwrap(),
        );
        tokio::time::sleep(Duration::from_millis(100)).await; // the call is under way
        b.cancel_task(&long.task_id).await.unwrap();
        let e = within(b.wait_task(&long.task_id)).await.unwrap_err();
        assert!(e.is_cancelled(), "{e:?}");
        dropped(&cancelled).await;
        let on_a = a.get_task(&long.task_id).await.unwrap();
        assert_eq!(on_a.status, TaskStatus::Cancelled);

        // A dies with a task running: B reports it failed once its lease
        // is over, never lost.
        let orphan = task(
            a.call_tool_as_task("work", json!({"ms": 60_000}))
                .await
                .unwrap(),
        );
        drop(a);
        stop_a.send(()).unwrap();
        thread_a.join().unwrap();
        let e = within(b.wait_task(&orphan.task_id)).await.unwrap_err();
        assert_eq!(e.code(), Some(-32603), "{e}");
        assert!(
            e.to_string().contains("replica running this task stopped"),
            "{e}"
        );
        let failed = b.get_task(&orphan.task_id).await.unwrap();
        assert_eq!(failed.status, TaskStatus::Failed);

        stop_b.send(()).unwrap();
        thread_b.join().unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn with_the_memory_store_tasks_survive_their_replica() {
        let shared = MemoryEventStore::new();
        tasks_survive_their_replica(|| shared.clone()).await;
    }
}
#[cfg(all(feature = "http-server", feature = "http-client"))]
pub use replicas::tasks_survive_their_replica;
