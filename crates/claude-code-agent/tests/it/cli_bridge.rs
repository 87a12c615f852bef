//! What the SDK adds on top of the CLI for its in-process servers, on the
//! real CLI: a tool's progress delivered first-hand to the message stream,
//! and reconnecting an in-process server (which CLI 2.1.332 refuses as
//! `mcp_reconnect`), also as the guide's example does it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::*;
use claude_code_agent::mcp::{Server, Tool, ToolContext};
use claude_code_agent::protocol::McpServerState;
use claude_code_agent::{Client, Error, Message, query};
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::{Value, json};

/// A tool reporting three steps of progress before it answers.
fn stepper() -> Server {
    Server::builder("work", "1.0.0")
        .tool(
            Tool::new(
                "steps",
                "Works in three steps",
                |_args: Value, ctx: ToolContext| async move {
                    for step in 1..=3 {
                        assert!(
                            ctx.progress(f64::from(step), Some(3.0), Some(&format!("step {step}"))),
                            "the CLI sent no progress token"
                        );
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    "all done"
                },
            )
            .input_schema(json!({"type": "object"})),
        )
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_progress_reaches_the_stream_first_hand() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__work__steps", json!({})))
                .turn(echo_results()),
        )
        .await;
        let options = h
            .options()
            .mcp_server(stepper())
            .allowed_tools(["mcp__work"]);
        let (messages, error) = drain(query("work", options)).await;
        assert!(error.is_none(), "{error:?}");
        let tool_use_id = tool_uses(&messages)[0].id.clone();

        let progress: Vec<_> = messages
            .iter()
            .filter_map(|m| match m {
                Message::McpProgress(p) => Some(p.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(progress.len(), 3, "{progress:?}");
        for (i, p) in progress.iter().enumerate() {
            assert_eq!(p.server_name.as_deref(), Some("work"));
            assert_eq!(p.tool_name.as_deref(), Some("steps"));
            assert_eq!(p.tool_use_id.as_deref(), Some(tool_use_id.as_str()));
            assert_eq!(p.progress, Some((i + 1) as f64));
            assert_eq!(p.total, Some(3.0));
            assert_eq!(
                p.message.as_deref(),
                Some(format!("step {}", i + 1).as_str())
            );
        }
        // Delivered while the tool ran: before the tool's result.
        let at = |pred: &dyn Fn(&Message) -> bool| messages.iter().position(pred).unwrap();
        let last_progress = messages
            .iter()
            .rposition(|m| matches!(m, Message::McpProgress(_)))
            .unwrap();
        let result = at(&|m| match m {
            Message::User(u) => u.tool_results().next().is_some(),
            _ => false,
        });
        assert!(last_progress < result, "progress after the tool result");
        assert_eq!(h.mock().tool_results()[0].text(), "all done");
        h.finish().await;
    })
    .await
}

/// The seed guide's example, on the real CLI: check the status, reconnect
/// the in-process server `my-app`, toggle it off and on, and call its tool
/// after each step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_an_in_process_server_then_call_it() {
    with_timeout(async {
        let call = || Turn::tool_use("mcp__my-app__add", json!({"a": 20, "b": 22}));
        let h = Harness::start(
            MockModel::builder()
                .turn(call())
                .turn(echo_results())
                .turn(call())
                .turn(echo_results())
                .turn(call())
                .turn(echo_results()),
        )
        .await;
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = calls.clone();
        let server = Server::builder("my-app", "1.0.0")
            .tool(Tool::new("add", "Add a and b", move |x: Operands| {
                counter.fetch_add(1, Ordering::SeqCst);
                async move { x.a + x.b }
            }))
            .build();
        let client = Client::connect(
            h.options()
                .mcp_server(server)
                .allowed_tools(["mcp__my-app"]),
        )
        .await
        .expect("connect");
        wait_for_server(&client, "my-app", McpServerState::Connected).await;
        client_turn(&client, "add").await;
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        // `mcp_reconnect` itself is refused by the CLI for an in-process
        // server; the Client reconnects it anyway.
        let refused = client
            .control_request(claude_code_agent::protocol::SdkRequest::mcp_reconnect(
                "my-app",
            ))
            .await
            .expect_err("CLI 2.1.332 refuses mcp_reconnect for SDK servers");
        assert!(
            refused
                .to_string()
                .contains("SDK servers should be handled in print.ts"),
            "{refused}"
        );
        client
            .reconnect_mcp_server("my-app")
            .await
            .expect("reconnect");
        wait_for_server(&client, "my-app", McpServerState::Connected).await;
        let messages = client_turn(&client, "add again").await;
        assert_eq!(calls.load(Ordering::SeqCst), 2, "{messages:?}");
        assert_eq!(h.mock().tool_results()[1].text(), "42");
        // The reconnect left nothing disabled behind in the CLI's config
        // (the CLI writes the file a little later).
        let config_path = h.env().config_dir().join(".claude.json");
        let disabled = || {
            let config = std::fs::read_to_string(&config_path).unwrap_or_default();
            let config: Value = serde_json::from_str(&config).unwrap_or(Value::Null);
            config["projects"]
                .as_object()
                .into_iter()
                .flat_map(|p| p.values())
                .filter_map(|p| p["disabledMcpServers"].as_array())
                .flatten()
                .any(|name| name == "my-app")
        };
        let since = Instant::now();
        while disabled() && since.elapsed() < Duration::from_secs(10) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            !disabled(),
            "{}",
            std::fs::read_to_string(&config_path).unwrap_or_default()
        );

        // Toggle off and on, as in the guide.
        client
            .toggle_mcp_server("my-app", false)
            .await
            .expect("off");
        client.toggle_mcp_server("my-app", true).await.expect("on");
        wait_for_server(&client, "my-app", McpServerState::Connected).await;
        client_turn(&client, "and once more").await;
        assert_eq!(calls.load(Ordering::SeqCst), 3);

        // An unknown name is the CLI's error, whichever way it goes.
        let err = client.reconnect_mcp_server("nope").await.unwrap_err();
        let Error::ControlError {
            subtype, message, ..
        } = &err
        else {
            panic!("{err}");
        };
        assert_eq!(subtype, "mcp_reconnect");
        assert!(message.contains("nope"), "{err}");
        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}

/// The guide's example (`examples/mcp_control.rs`, docs/mcp-servers.md
/// "Status, reconnect, toggle") runs as it is on the pinned CLI, offline:
/// a tool call, then reconnect and a tool call, then toggle and a tool call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guides_reconnect_example_runs() {
    with_timeout(async {
        let out = tokio::process::Command::new(example("mcp_control"))
            .env_remove("ANTHROPIC_API_KEY")
            .kill_on_drop(true)
            .output()
            .await
            .expect("run the example");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}\n{stdout}\n{stderr}", out.status);
        let answers = stdout
            .matches("[result] The tool said: found the answer")
            .count();
        assert_eq!(answers, 3, "{stdout}");
        assert!(stdout.contains("my-app: Connected"), "{stdout}");
    })
    .await
}
