//! The bridge rules, checked on a native [`Server`] and on an rmcp
//! `#[tool_router]` server through the same path ([`Bridge::reply`]): ping
//! answered, the protocol version echoed, notifications never answered,
//! JSON-RPC error codes (an unknown method or tool: -32601), ids as sent, panics, timeouts, cancellation and
//! the result size cap.

use std::time::Duration;

use rmcp::handler::server::tool::ToolRouter;
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::{Value, json};

use super::*;
use crate::mcp::rmcp_server::RmcpServer;
use crate::mcp::{Server, Tool};

const TIMEOUT: Duration = Duration::from_millis(300);
const CAP: usize = 100;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

fn native() -> Server {
    Server::builder("native", "1.0.0")
        .tool_timeout(TIMEOUT)
        .max_result_chars(CAP)
        .tool(Tool::new("boom", "Panics", |_: Nothing| async move {
            if true {
                panic!("kaboom");
            }
            "never"
        }))
        .tool(Tool::new("sleep", "Sleeps", |_: Nothing| async move {
            tokio::time::sleep(Duration::from_secs(30)).await;
            "woke"
        }))
        .tool(Tool::new("big", "Big", |_: Nothing| async move {
            "x".repeat(2000)
        }))
        .build()
}

struct Rules {
    #[expect(dead_code, reason = "read by the code #[tool_handler] writes")]
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Rules {
    #[tool(description = "Panics")]
    async fn boom(&self) -> String {
        if true {
            panic!("kaboom");
        }
        "never".into()
    }

    #[tool(description = "Sleeps")]
    async fn sleep(&self) -> String {
        tokio::time::sleep(Duration::from_secs(30)).await;
        "woke".into()
    }

    #[tool(description = "Big")]
    async fn big(&self) -> String {
        "x".repeat(2000)
    }
}

#[tool_handler]
impl ServerHandler for Rules {}

fn rmcp_server() -> InProcessServer {
    let rules = Rules {
        tool_router: Rules::tool_router(),
    };
    let server = RmcpServer::new(rules)
        .tool_timeout(TIMEOUT)
        .max_result_chars(CAP);
    InProcessServer::new("rmcp", server)
}

async fn send(bridge: &Bridge, server: &str, message: Value) -> Value {
    bridge.reply(McpMessageRequest::new(server, message)).await["mcp_response"].clone()
}

fn call(id: Value, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": {}}})
}

fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// Every rule, on the server `name` of `bridge`.
async fn check_rules(bridge: &Bridge, name: &str) {
    let ack = json!({"jsonrpc": "2.0", "result": {}});
    for version in ["2025-06-18", "2025-03-26"] {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "claude-code", "version": "2.1.332"}}});
        let reply = send(bridge, name, init).await;
        assert_eq!(reply["id"], 0, "{name}: {reply}");
        assert_eq!(
            reply["result"]["protocolVersion"], version,
            "{name}: {reply}"
        );
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(send(bridge, name, note).await, ack, "{name}");
    }

    let pong = send(
        bridge,
        name,
        json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}),
    )
    .await;
    assert_eq!(
        pong,
        json!({"jsonrpc": "2.0", "id": "p", "result": {}}),
        "{name}"
    );
    // Ids as sent, whatever they are.
    for id in [json!(1.5), json!(18446744073709551615u64), json!("x-1")] {
        let pong = send(
            bridge,
            name,
            json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
        )
        .await;
        assert_eq!(pong["id"], id, "{name}: {pong}");
        assert_eq!(pong["result"], json!({}), "{name}: {pong}");
    }

    let unknown = json!({"jsonrpc": "2.0", "id": 9, "method": "no/such/method"});
    let reply = send(bridge, name, unknown).await;
    assert_eq!(reply["id"], 9, "{name}: {reply}");
    assert_eq!(reply["error"]["code"], -32601, "{name}: {reply}");
    // An unknown tool is -32601 too (seed 000), whatever rmcp says itself.
    let reply = send(bridge, name, call(json!(8), "no_such_tool")).await;
    assert_eq!(reply["id"], 8, "{name}: {reply}");
    assert_eq!(reply["error"]["code"], -32601, "{name}: {reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no_such_tool")),
        "{name}: {reply}"
    );
    let odd = json!({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}});
    assert_eq!(send(bridge, name, odd).await, ack, "{name}");

    let list = send(
        bridge,
        name,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    let mut tools: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: {list}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    tools.sort_unstable();
    assert_eq!(tools, ["big", "boom", "sleep"], "{name}");

    let panicked = send(bridge, name, call(json!(2), "boom")).await;
    assert_eq!(panicked["result"]["isError"], true, "{name}: {panicked}");
    assert!(
        text(&panicked).contains("panicked: kaboom"),
        "{name}: {panicked}"
    );

    let started = std::time::Instant::now();
    let slow = send(bridge, name, call(json!(3), "sleep")).await;
    assert!(started.elapsed() < Duration::from_secs(5), "{name}");
    assert_eq!(slow["result"]["isError"], true, "{name}: {slow}");
    assert!(
        text(&slow).contains("timed out after 300ms"),
        "{name}: {slow}"
    );

    let big = send(bridge, name, call(json!(4), "big")).await;
    assert_eq!(big["result"]["isError"], false, "{name}: {big}");
    assert!(text(&big).starts_with(&"x".repeat(CAP)), "{name}: {big}");
    assert!(
        text(&big).contains("[Output truncated: 1900 of 2000"),
        "{name}: {big}"
    );

    // A cancelled call is still answered, once, saying so.
    let running = send(bridge, name, call(json!("c"), "sleep"));
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": "c", "reason": "user"}});
        assert_eq!(send(bridge, name, note).await, ack, "{name}");
    };
    let (cancelled, ()) = tokio::join!(running, cancel);
    assert_eq!(cancelled["id"], "c", "{name}: {cancelled}");
    assert_eq!(cancelled["result"]["isError"], true, "{name}: {cancelled}");
    assert!(
        text(&cancelled).contains("cancelled"),
        "{name}: {cancelled}"
    );
}

#[tokio::test]
async fn both_kinds_of_server_keep_the_bridge_rules() {
    let (outbox, _reader) = Outbox::new(1 << 20);
    let bridge = Bridge::new(outbox, None);
    bridge.insert(native());
    bridge.insert(rmcp_server());
    assert_eq!(bridge.names(), ["native", "rmcp"]);
    check_rules(&bridge, "native").await;
    check_rules(&bridge, "rmcp").await;
}

#[tokio::test]
async fn rmcp_progress_and_list_changed_reach_the_outbox() {
    use rmcp::model::{NumberOrString, ProgressNotificationParam, ProgressToken};

    struct Notifier;
    impl ServerHandler for Notifier {
        async fn call_tool(
            &self,
            request: rmcp::model::CallToolRequestParams,
            context: rmcp::service::RequestContext<rmcp::RoleServer>,
        ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
            let token = ProgressToken(NumberOrString::String("t".into()));
            let progress = ProgressNotificationParam::new(token, 1.0).with_total(2.0);
            let _ = context.peer.notify_progress(progress).await;
            let _ = context.peer.notify_tool_list_changed().await;
            let text = rmcp::model::ContentBlock::text(request.name.to_string());
            Ok(rmcp::model::CallToolResult::success(vec![text]).into())
        }
    }

    let (outbox, mut reader) = Outbox::new(1 << 20);
    let bridge = Bridge::new(outbox, None);
    bridge.insert(InProcessServer::new("notes", RmcpServer::new(Notifier)));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "2.1.332"}}});
    send(&bridge, "notes", init).await;
    let reply = send(&bridge, "notes", call(json!(1), "hello")).await;
    assert_eq!(text(&reply), "hello", "{reply}");
    let mut methods = Vec::new();
    for _ in 0..2 {
        let (server, message, size) = reader.rx.recv().await.unwrap();
        reader.budget.release(size);
        assert_eq!(server, "notes");
        methods.push(message["method"].as_str().unwrap_or_default().to_owned());
    }
    assert_eq!(
        methods,
        ["notifications/progress", "notifications/tools/list_changed"]
    );
}
