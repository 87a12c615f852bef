//! `mcp_status` and `mcp_toggle` against in-process servers.

use std::time::{Duration, Instant};

use crate::support::*;
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::protocol::McpServerState;
use claude_code_agent::{Client, McpServerConfig};
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::json;

fn tool_names(tools: &Option<Vec<claude_code_agent::protocol::McpToolInfo>>) -> Vec<String> {
    tools
        .iter()
        .flatten()
        .map(|t| t.name.clone())
        .collect::<Vec<_>>()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_and_toggle_off_and_on() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::text("one"))
                .turn(Turn::text("two"))
                .turn(Turn::tool_use("mcp__calc__mul", json!({"a": 6, "b": 7})))
                .turn(Turn::dynamic(|req| {
                    Turn::text(format!("mul: {}", req.tool_results()[0].text()))
                })),
        )
        .await;
        let server = Server::builder("calc", "2.5.0")
            .tool(Tool::new("add", "Add a and b", |x: Operands| async move {
                x.a + x.b
            }))
            .build();
        let handle = server.clone();
        let client = Client::connect(h.options().mcp_server(server).allowed_tools(["mcp__calc"]))
            .await
            .expect("connect");

        // Connected, with its tools and server info.
        let status = wait_for_server(&client, "calc", McpServerState::Connected).await;
        assert_eq!(tool_names(&status.tools), ["add"]);
        let info = status.server_info.expect("serverInfo");
        assert_eq!(info.name.as_deref(), Some("calc"));
        assert_eq!(info.version.as_deref(), Some("2.5.0"));
        client_turn(&client, "one").await;
        let offered = |i: usize| -> Vec<String> {
            h.mock().conversation_requests()[i]
                .tool_names()
                .into_iter()
                .filter(|n| n.starts_with("mcp__"))
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(offered(0), ["mcp__calc__add"]);

        // Off: disabled, and its tools are gone from the next request.
        client
            .toggle_mcp_server("calc", false)
            .await
            .expect("toggle off");
        let status = server_status(&client, "calc").await.expect("calc listed");
        assert_eq!(status.status, McpServerState::Disabled);
        client_turn(&client, "two").await;
        assert!(offered(1).is_empty(), "{:?}", offered(1));

        // A tool added meanwhile appears only through a fresh handshake.
        handle.add_tool(Tool::new("mul", "a times b", |x: Operands| async move {
            x.a * x.b
        }));

        // On: a fresh handshake, and the tools are back.
        client
            .toggle_mcp_server("calc", true)
            .await
            .expect("toggle on");
        let status = wait_for_server(&client, "calc", McpServerState::Connected).await;
        assert_eq!(tool_names(&status.tools), ["add", "mul"]);
        let messages = client_turn(&client, "three").await;
        assert_eq!(offered(2), ["mcp__calc__add", "mcp__calc__mul"]);
        assert_eq!(
            results(&messages)[0].result.as_deref(),
            Some("mul: 42"),
            "{messages:?}"
        );

        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}

/// `set_mcp_servers` adds a server and keeps the one given at start; both
/// serve calls, and a tool the kept server adds afterwards still reaches the
/// CLI through its connection (`notifications/tools/list_changed`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_mcp_servers_adds_a_server_and_keeps_the_first() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__late__hello", json!({})))
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 1, "b": 2})))
                .turn(Turn::text("first done"))
                .turn(Turn::tool_use("mcp__calc__mul", json!({"a": 6, "b": 7})))
                .turn(Turn::dynamic(|req| {
                    Turn::text(format!("mul: {}", req.tool_results()[0].text()))
                })),
        )
        .await;
        let calc = Server::builder("calc", "1.0.0")
            .tool(Tool::new("add", "Add a and b", |x: Operands| async move {
                x.a + x.b
            }))
            .build();
        let late = Server::builder("late", "1.0.0")
            .tool(
                Tool::new("hello", "Say hello", |_: serde_json::Value| async {
                    "hello from late"
                })
                .input_schema(json!({"type": "object"})),
            )
            .build();
        let client = Client::connect(
            h.options()
                .mcp_server(calc.clone())
                .allowed_tools(["mcp__calc", "mcp__late"]),
        )
        .await
        .expect("connect");
        wait_for_server(&client, "calc", McpServerState::Connected).await;

        let changed = client
            .set_mcp_servers([
                ("calc", McpServerConfig::from(calc.clone())),
                ("late", late.into()),
            ])
            .await
            .expect("mcp_set_servers");
        assert_eq!(changed.added, ["late"], "{changed:?}");
        assert!(changed.removed.is_empty(), "{changed:?}");

        let messages = client_turn(&client, "one").await;
        let texts: Vec<String> = h.mock().tool_results().iter().map(|r| r.text()).collect();
        assert_eq!(texts, ["hello from late", "3"], "{messages:?}");

        calc.add_tool(Tool::new("mul", "a times b", |x: Operands| async move {
            x.a * x.b
        }));
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let status = server_status(&client, "calc").await.expect("calc listed");
            if tool_names(&status.tools).contains(&"mul".to_owned()) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the CLI never saw the new tool: {status:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let messages = client_turn(&client, "two").await;
        assert_eq!(results(&messages)[0].result.as_deref(), Some("mul: 42"));

        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}
