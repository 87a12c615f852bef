//! `McpClient::listen`: the client side of `subscriptions/listen` (the
//! stateless 2026-07-28 revision), against our own stateless server in
//! process and over Streamable HTTP: the acknowledgement, the notifications
//! of the stream (and only those), the end of the subscription when it is
//! dropped, refusal on older revisions, a server's error.
use claude_code_agent_testkit::tasks;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use claude_code_agent_mcp::client::{
    ClientOptions, HandshakeMode, HttpOptions, HttpTransport, InProcessTransport, McpClient,
    ServerNotification, Subscription, Transport,
};
use claude_code_agent_mcp::http_server::{StreamableHttpConfig, StreamableHttpService};
use claude_code_agent_mcp::server::Resource;
use claude_code_agent_mcp::types::SubscriptionFilter;
use claude_code_agent_mcp::{Handler, RequestContext, Server, Tool};
use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("listen", "1.0.0")
        .resource(Resource::new("demo://a", "a", |_| async { "a" }))
        .resource(Resource::new("demo://b", "b", |_| async { "b" }))
        .build()
}

fn tool(name: &str) -> Tool {
    Tool::new(name, "a tool", |_: Value| async { "x" }).input_schema(json!({"type":"object"}))
}

async fn next(sub: &mut Subscription) -> ServerNotification {
    tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("a notification in time")
        .expect("the subscription is open")
}

type Seen = Arc<Mutex<Vec<ServerNotification>>>;

async fn connect(transport: impl Transport) -> (McpClient, Seen) {
    let seen = Seen::default();
    let sink = seen.clone();
    let options = ClientOptions::new("listen-test", "1")
        .request_timeout(Duration::from_secs(10))
        .on_notification(move |n| sink.lock().unwrap().push(n));
    let client = McpClient::connect(transport, options).await.unwrap();
    assert!(client.server_state().stateless);
    (client, seen)
}

fn count(seen: &Seen, method: &str) -> usize {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|n| n.method() == method)
        .count()
}

async fn scenario(server: Server, client: McpClient, seen: Seen, baseline: tasks::Baseline) {
    let filter = SubscriptionFilter::new()
        .tools_list_changed()
        .prompts_list_changed()
        .resource("demo://a");
    let mut sub = client.listen(filter).await.unwrap();
    // The server has no prompts: that part is not agreed to.
    let agreed = sub.acknowledged();
    assert!(agreed.tools_list_changed && !agreed.prompts_list_changed);
    assert_eq!(agreed.resource_subscriptions, Some(vec!["demo://a".into()]));

    server.add_tool(tool("first"));
    assert_eq!(next(&mut sub).await, ServerNotification::ToolListChanged);
    // Only the resource asked about.
    server.notify_resource_updated("demo://b");
    server.notify_resource_updated("demo://a");
    assert_eq!(
        next(&mut sub).await,
        ServerNotification::ResourceUpdated {
            uri: "demo://a".into()
        }
    );
    // The callback saw them too, and the acknowledgement.
    assert_eq!(count(&seen, "notifications/tools/list_changed"), 1);
    assert_eq!(count(&seen, "notifications/subscriptions/acknowledged"), 1);

    // A second subscription gets its own notifications, told apart by id.
    let mut second = client
        .listen(SubscriptionFilter::new().tools_list_changed())
        .await
        .unwrap();
    assert_ne!(second.id(), sub.id());
    server.add_tool(tool("second"));
    assert_eq!(next(&mut sub).await, ServerNotification::ToolListChanged);
    assert_eq!(next(&mut second).await, ServerNotification::ToolListChanged);
    assert_eq!(count(&seen, "notifications/tools/list_changed"), 3);

    // Dropping a subscription ends it on the server: no more of its notifications.
    drop(sub);
    tokio::time::sleep(Duration::from_millis(200)).await;
    server.add_tool(tool("third"));
    assert_eq!(next(&mut second).await, ServerNotification::ToolListChanged);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(count(&seen, "notifications/tools/list_changed"), 4);

    // Calls go on beside the open streams.
    assert_eq!(client.list_tools().await.unwrap().len(), 3);
    // Closing the client ends the subscription, saying why.
    client.close().await.unwrap();
    drop(client);
    let end = tokio::time::timeout(Duration::from_secs(5), second.next()).await;
    assert_eq!(end.unwrap(), None);
    let why = second.ended().unwrap();
    assert!(why.is_closed(), "{second:?}");
    assert!(why.to_string().contains("closed"), "{why}");
    // Nothing is left running for it, though it is still held.
    baseline
        .settled("a closed client with a subscription still held")
        .await;
    drop(second);
}

#[tokio::test]
async fn listen_in_process() {
    let baseline = tasks::Baseline::now();
    let server = server();
    let (client, seen) = connect(InProcessTransport::new(server.clone())).await;
    scenario(server, client, seen, baseline).await;
}

#[tokio::test]
async fn listen_over_streamable_http() {
    let server = server();
    // The server runs on a runtime of its own: the tasks counted here are
    // the client's.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let service = StreamableHttpService::new(server.clone(), StreamableHttpConfig::new());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
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
    });
    let baseline = tasks::Baseline::now();
    let (client, seen) = connect(HttpTransport::new(HttpOptions::new(url)).unwrap()).await;
    scenario(server, client, seen, baseline).await;
    stop.send(()).unwrap();
    serving.join().unwrap();
}

#[tokio::test]
async fn a_subscription_outlives_the_request_timeout() {
    let server = server();
    let options =
        ClientOptions::new("listen-test", "1").request_timeout(Duration::from_millis(200));
    let client = McpClient::connect(InProcessTransport::new(server.clone()), options)
        .await
        .unwrap();
    let mut sub = client
        .listen(SubscriptionFilter::new().tools_list_changed())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    server.add_tool(tool("late"));
    assert_eq!(next(&mut sub).await, ServerNotification::ToolListChanged);
    assert!(sub.ended().is_none(), "{sub:?}");
    client.close().await.unwrap();
}

#[tokio::test]
async fn listen_is_refused_on_a_session_revision() {
    let client = McpClient::connect(
        InProcessTransport::new(server()),
        ClientOptions::new("t", "1").handshake(HandshakeMode::Initialize),
    )
    .await
    .unwrap();
    let e = client
        .listen(SubscriptionFilter::new().tools_list_changed())
        .await
        .unwrap_err();
    assert!(e.is_refused(), "{e:?}");
    assert!(e.to_string().contains("2025-11-25"), "{e}");
}

/// A stateless server that refuses `subscriptions/listen`, or answers it at once.
struct Refuses(bool);

impl Handler for Refuses {
    fn handle(&self, message: Value, _ctx: RequestContext) -> BoxFuture<'_, Option<Value>> {
        Box::pin(async move {
            let id = message.get("id").cloned()?;
            let body = match message["method"].as_str() {
                Some("server/discover") => json!({"result":{"supportedVersions":["2026-07-28"],
                    "capabilities":{},"serverInfo":{"name":"refuses","version":"0"}}}),
                Some("subscriptions/listen") if self.0 => {
                    json!({"error":{"code":-32601,"message":"no subscriptions here"}})
                }
                _ => json!({"result":{}}),
            };
            let mut reply = json!({"jsonrpc":"2.0","id":id});
            reply
                .as_object_mut()
                .unwrap()
                .extend(body.as_object().unwrap().clone());
            Some(reply)
        })
    }
}

#[tokio::test]
async fn a_refused_or_unacknowledged_listen_is_an_error() {
    let (client, _) = connect(InProcessTransport::new(Refuses(true))).await;
    let e = client.listen(SubscriptionFilter::new()).await.unwrap_err();
    assert_eq!(e.code(), Some(-32601), "{e:?}");
    let (client, _) = connect(InProcessTransport::new(Refuses(false))).await;
    let e = client.listen(SubscriptionFilter::new()).await.unwrap_err();
    assert!(
        e.to_string().contains("answered subscriptions/listen"),
        "{e}"
    );
}
