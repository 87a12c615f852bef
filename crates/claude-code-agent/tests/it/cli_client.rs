//! The multi-turn `Client`: several turns, interrupt, and control requests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::support::*;
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::message::ResultSubtype;
use claude_code_agent::protocol::SdkRequest;
use claude_code_agent::{Client, Error, Message, PermissionMode, PermissionResult};
use claude_code_agent_testkit::cli::{CliChange, tested_cli_has};
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::{Map, json};

fn calc() -> Server {
    Server::builder("calc", "1.0.0")
        .tool(Tool::new("add", "Add a and b", |x: Operands| async move {
            x.a + x.b
        }))
        .build()
}

/// One `receive_response`: every message up to and including the result.
async fn turn(client: &Client) -> Vec<Message> {
    let (messages, error) = drain(client.receive_response()).await;
    assert!(error.is_none(), "{error:?}");
    assert!(
        matches!(messages.last(), Some(Message::Result(_))),
        "a response ends with its result: {messages:?}"
    );
    assert_eq!(results(&messages).len(), 1);
    messages
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_turn_still_has_the_tools() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 1, "b": 2})))
                .turn(echo_results())
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 30, "b": 12})))
                .turn(echo_results()),
        )
        .await;
        let client = Client::connect(h.options().mcp_server(calc()).allowed_tools(["mcp__calc"]))
            .await
            .expect("connect");

        client.query("first").await.unwrap();
        let first = turn(&client).await;
        assert_eq!(
            results(&first)[0].result.as_deref(),
            Some("results: 3"),
            "{first:?}"
        );

        client.query("second").await.unwrap();
        let second = turn(&client).await;
        assert_eq!(results(&second)[0].result.as_deref(), Some("results: 42"));
        assert_eq!(tool_uses(&second).len(), 1);
        assert_eq!(tool_results(&second).len(), 1);

        let requests = h.mock().conversation_requests();
        assert_eq!(requests.len(), 4);
        for r in &requests {
            assert!(
                r.tool_names().contains(&"mcp__calc__add"),
                "{:?}",
                r.tool_names()
            );
        }
        assert!(
            requests[2]
                .last_user_text()
                .is_some_and(|t| t.ends_with("second"))
        );

        client.disconnect().await.unwrap();
        // After a disconnect nothing more can be sent.
        assert!(matches!(client.query("third").await, Err(Error::Closed)));
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_cancels_a_running_tool_and_the_session_goes_on() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__slow__wait", json!({})))
                .turn(Turn::text("after the interrupt")),
        )
        .await;
        let (tool, probe) = slow_tool("wait", Duration::from_secs(60));
        let server = Server::builder("slow", "1.0.0").tool(tool).build();
        let client = Client::connect(h.options().mcp_server(server).allowed_tools(["mcp__slow"]))
            .await
            .expect("connect");

        client.query("start something slow").await.unwrap();
        probe.wait_started(1).await;
        let interrupted = client.interrupt().await.expect("interrupt");
        assert!(interrupted.still_queued.is_empty(), "{interrupted:?}");
        assert!(
            probe.wait_cancelled(1, Duration::from_secs(10)).await,
            "the tool's cancellation token did not fire"
        );

        let first = turn(&client).await;
        let result = results(&first).pop().unwrap();
        assert!(result.is_error);
        assert_eq!(
            result.subtype,
            ResultSubtype::ErrorDuringExecution,
            "{result:?}"
        );
        assert_eq!(probe.finished(), 0);

        client.query("and now?").await.unwrap();
        let second = turn(&client).await;
        let result = results(&second).pop().unwrap();
        assert!(!result.is_error, "{result:?}");
        assert_eq!(result.result.as_deref(), Some("after the interrupt"));

        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_requests_get_typed_answers_and_errors_carry_the_code() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 1, "b": 2})))
                .turn(echo_results()),
        )
        .await;
        let asked = Arc::new(AtomicUsize::new(0));
        let counter = asked.clone();
        let options = h
            .options()
            .mcp_server(calc())
            .can_use_tool(move |_tool, _input, _ctx| {
                counter.fetch_add(1, Ordering::SeqCst);
                async { PermissionResult::allow() }
            });
        let client = Client::connect(options).await.expect("connect");

        // set_model answers with the model now in use (CLIs before 2.1.307
        // answer without it); the next turn uses it.
        let model = client.set_model(Some("claude-haiku-4-5")).await.unwrap();
        let expected =
            tested_cli_has(CliChange::SetModelAnswersModel).then_some("claude-haiku-4-5");
        assert_eq!(model.as_deref(), expected);

        // set_permission_mode answers with the mode now in effect; in
        // `dontAsk` the CLI denies instead of asking the callback.
        let mode = client
            .set_permission_mode(PermissionMode::DontAsk)
            .await
            .unwrap();
        assert_eq!(mode, Some(PermissionMode::DontAsk));

        // A mode the CLI does not know, and a subtype it does not know.
        let mut bogus = Map::new();
        bogus.insert("mode".into(), json!("bogusMode"));
        match client
            .control_request(SdkRequest::new("set_permission_mode", bogus))
            .await
        {
            Err(Error::ControlError { subtype, code, .. }) => {
                assert_eq!(subtype, "set_permission_mode");
                assert_eq!(code.as_deref(), Some("invalid_mode"));
            }
            other => panic!("expected a control error, got {other:?}"),
        }
        match client
            .control_request(SdkRequest::new("nope", Map::new()))
            .await
        {
            Err(Error::ControlError {
                subtype,
                message,
                code,
            }) => {
                assert_eq!(subtype, "nope");
                // CLIs before 2.1.323 send no code with this error.
                let expected = tested_cli_has(CliChange::UnsupportedRequestErrorCode)
                    .then_some("unsupported_request");
                assert_eq!(code.as_deref(), expected);
                assert!(message.contains("nope"), "{message}");
            }
            other => panic!("expected a control error, got {other:?}"),
        }

        client.query("add").await.unwrap();
        let messages = turn(&client).await;
        let conversation = h.mock().conversation_requests();
        assert_eq!(conversation[0].model(), Some("claude-haiku-4-5"));
        assert_eq!(asked.load(Ordering::SeqCst), 0, "dontAsk asked anyway");
        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 1);
        assert!(sent[0].is_error, "{:?}", sent[0]);
        let result = results(&messages).pop().unwrap();
        let denials = result.permission_denials.clone().unwrap_or_default();
        assert_eq!(denials.len(), 1, "{result:?}");
        assert_eq!(denials[0].tool_name, "mcp__calc__add");

        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}
