//! The permission callback (`can_use_tool`): deny, allow with a new input,
//! deny and interrupt.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::*;
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::message::{ResultSubtype, TerminalReason};
use claude_code_agent::{Client, PermissionResult, query};
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::{Value, json};

/// `calc` with an `add` that counts its calls and reports its arguments.
fn calc(calls: Arc<AtomicUsize>) -> Server {
    Server::builder("calc", "1.0.0")
        .tool(Tool::new("add", "Add a and b", move |x: Operands| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { format!("{} + {} = {}", x.a, x.b, x.a + x.b) }
        }))
        .build()
}

type Asked = Arc<Mutex<Vec<(String, Value, Option<String>)>>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_tool_is_not_run_and_the_model_sees_why() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 1, "b": 2})))
                .turn(echo_results()),
        )
        .await;
        let calls = Arc::new(AtomicUsize::new(0));
        let asked: Asked = Arc::default();
        let log = asked.clone();
        let options =
            h.options()
                .mcp_server(calc(calls.clone()))
                .can_use_tool(move |tool, input, ctx| {
                    log.lock()
                        .unwrap()
                        .push((tool, input, ctx.tool_use_id.clone()));
                    async { PermissionResult::deny("no adding today") }
                });

        let (messages, error) = drain(query("add", options)).await;
        assert!(error.is_none(), "{error:?}");

        let uses = tool_uses(&messages);
        assert_eq!(uses.len(), 1);
        let asked = asked.lock().unwrap().clone();
        assert_eq!(
            asked,
            [(
                "mcp__calc__add".to_owned(),
                json!({"a": 1, "b": 2}),
                Some(uses[0].id.clone())
            )]
        );
        assert_eq!(calls.load(Ordering::SeqCst), 0, "a denied tool ran");
        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 1);
        assert!(sent[0].is_error);
        assert!(sent[0].text().contains("no adding today"), "{:?}", sent[0]);
        let result = results(&messages).pop().unwrap();
        assert!(!result.is_error, "{result:?}");
        let denials = result.permission_denials.clone().unwrap_or_default();
        assert_eq!(denials.len(), 1, "{result:?}");
        assert_eq!(denials[0].tool_name, "mcp__calc__add");
        assert_eq!(denials[0].tool_use_id.as_deref(), Some(uses[0].id.as_str()));
        assert_eq!(denials[0].tool_input, Some(json!({"a": 1, "b": 2})));
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_with_updated_input_runs_the_tool_with_it() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 1, "b": 2})))
                .turn(echo_results()),
        )
        .await;
        let calls = Arc::new(AtomicUsize::new(0));
        let asked = Arc::new(AtomicUsize::new(0));
        let counter = asked.clone();
        let options = h.options().mcp_server(calc(calls.clone())).can_use_tool(
            move |tool, input, _ctx| {
                counter.fetch_add(1, Ordering::SeqCst);
                assert_eq!(tool, "mcp__calc__add");
                let a = input["a"].as_f64().unwrap();
                async move { PermissionResult::allow_with_input(json!({"a": a * 10.0, "b": 20})) }
            },
        );

        let (messages, error) = drain(query("add", options)).await;
        assert!(error.is_none(), "{error:?}");

        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 1);
        assert!(!sent[0].is_error, "{:?}", sent[0]);
        assert_eq!(sent[0].text(), "10 + 20 = 30");
        let result = results(&messages).pop().unwrap();
        assert!(!result.is_error);
        assert!(result.permission_denials.unwrap_or_default().is_empty());
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_with_interrupt_ends_the_turn() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 1, "b": 2})))
                .turn(echo_results()),
        )
        .await;
        let calls = Arc::new(AtomicUsize::new(0));
        let options =
            h.options()
                .mcp_server(calc(calls.clone()))
                .can_use_tool(|_tool, _input, _ctx| async {
                    PermissionResult::deny_and_interrupt("stop everything")
                });

        let (messages, error) = drain(query("add", options)).await;
        assert!(error.is_none(), "{error:?}");

        assert_eq!(calls.load(Ordering::SeqCst), 0);
        // The model is not asked again in this turn.
        assert_eq!(h.mock().conversation_requests().len(), 1);
        let seen = tool_results(&messages);
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].is_error, Some(true));
        let result = results(&messages).pop().unwrap();
        assert!(result.is_error);
        assert_eq!(result.subtype, ResultSubtype::ErrorDuringExecution);
        assert_eq!(result.terminal_reason, Some(TerminalReason::AbortedTools));
        assert_eq!(
            result.permission_denials.unwrap_or_default().len(),
            1,
            "the denial is reported"
        );
        h.finish().await;
    })
    .await
}

/// An interrupt while the callback is still deciding: the CLI withdraws the
/// question (`control_cancel_request`), the callback's cancellation token
/// fires, and the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_withdraws_a_pending_permission_question() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 1, "b": 2})))
                .turn(Turn::text("next turn")),
        )
        .await;
        let calls = Arc::new(AtomicUsize::new(0));
        let (asked_tx, mut asked_rx) = tokio::sync::mpsc::unbounded_channel();
        let (withdrawn_tx, mut withdrawn_rx) = tokio::sync::mpsc::unbounded_channel();
        let options =
            h.options()
                .mcp_server(calc(calls.clone()))
                .can_use_tool(move |_tool, _input, ctx| {
                    // The SDK drops the callback's future when the question is
                    // withdrawn; a task of its own sees the token fire.
                    let withdrawn = withdrawn_tx.clone();
                    let token = ctx.cancellation.clone();
                    tokio::spawn(async move {
                        token.cancelled().await;
                        let _ = withdrawn.send(());
                    });
                    let _ = asked_tx.send(());
                    async move {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        PermissionResult::allow()
                    }
                });
        let client = Client::connect(options).await.expect("connect");
        client.query("add").await.unwrap();
        asked_rx.recv().await.expect("the callback was asked");
        client.interrupt().await.expect("interrupt");
        tokio::time::timeout(Duration::from_secs(10), withdrawn_rx.recv())
            .await
            .expect("the question was not withdrawn")
            .unwrap();

        let (messages, error) = drain(client.receive_response()).await;
        assert!(error.is_none(), "{error:?}");
        let result = results(&messages).pop().expect("a result");
        assert!(result.is_error, "{result:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 0);

        client.query("still there?").await.unwrap();
        let (messages, error) = drain(client.receive_response()).await;
        assert!(error.is_none(), "{error:?}");
        let result = results(&messages).pop().expect("a result");
        assert_eq!(result.result.as_deref(), Some("next turn"), "{result:?}");
        client.disconnect().await.unwrap();
        h.finish().await;
    })
    .await
}

/// `permissionDecision.source` of the transcript entry that carries the
/// result of tool use `id` (the CLI's record of who decided).
fn recorded_decision_source(config_dir: &std::path::Path, id: &str) -> Option<String> {
    let projects = std::fs::read_dir(config_dir.join("projects")).ok()?;
    for project in projects.flatten() {
        for file in std::fs::read_dir(project.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let text = std::fs::read_to_string(file.path()).unwrap_or_default();
            for line in text.lines() {
                let Ok(entry) = serde_json::from_str::<Value>(line) else {
                    continue;
                };
                let answers_it = entry["message"]["content"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|b| b["tool_use_id"] == id));
                if answers_it && entry.get("toolUseResult").is_some() {
                    return entry["permissionDecision"]["source"]
                        .as_str()
                        .map(str::to_owned);
                }
            }
        }
    }
    None
}

/// The TypeScript SDK 0.3.337's `decisionClassification` and `toolUseID` in
/// `can_use_tool` answers, sent to the real CLI in one session (six calls,
/// one answer each): every classification of an allow lets the tool run (a
/// value the CLI does not know too), a deny classified `user_reject` still
/// denies, and the CLI records the classification as who decided (the
/// transcript's `permissionDecision.source`; CLIs before 2.1.336 do not know
/// `config` and record such an allow as `user_temporary`). Each answer
/// names the request's own tool use whatever the callback wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_takes_a_classified_answer() {
    use claude_code_agent::protocol::PermissionDecisionClassification as C;
    use claude_code_agent_testkit::cli::{CliChange, tested_cli_has};
    let config = if tested_cli_has(CliChange::ConfigDecisionClassification) {
        "config"
    } else {
        "user_temporary"
    };
    let answers = [
        (
            PermissionResult::allow()
                .with_decision_classification(C::UserPermanent)
                .with_tool_use_id("toolu_not_this_one"),
            "user_permanent",
        ),
        (
            PermissionResult::allow().with_decision_classification(C::UserTemporary),
            "user_temporary",
        ),
        (
            PermissionResult::allow().with_decision_classification(C::Config),
            config,
        ),
        (
            PermissionResult::allow().with_decision_classification(C::Other("a_new_kind".into())),
            "user_temporary",
        ),
        (
            PermissionResult::deny("no adding today").with_decision_classification(C::UserReject),
            "user_reject",
        ),
        (PermissionResult::deny("no adding today"), "user_reject"),
    ];
    with_timeout(async {
        let mut model = MockModel::builder();
        for _ in &answers {
            model = model.turn(Turn::tool_use("mcp__calc__add", json!({"a": 1, "b": 2})));
        }
        let h = Harness::start(model.turn(Turn::text("done"))).await;
        let calls = Arc::new(AtomicUsize::new(0));
        let queue = Arc::new(Mutex::new(
            answers.iter().map(|(a, _)| a.clone()).collect::<Vec<_>>(),
        ));
        let options =
            h.options()
                .mcp_server(calc(calls.clone()))
                .can_use_tool(move |_tool, _input, _ctx| {
                    let reply = queue.lock().unwrap().remove(0);
                    async move { reply }
                });
        let (messages, error) = drain(query("add, six times", options)).await;
        assert!(error.is_none(), "{error:?}");
        let result = results(&messages).pop().unwrap();
        assert!(!result.is_error, "{result:?}");
        let uses = tool_uses(&messages);
        let sent = h.mock().tool_results();
        assert_eq!(uses.len(), answers.len(), "{messages:?}");
        assert_eq!(sent.len(), answers.len(), "{sent:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 4, "the four allows ran");
        for (((answer, source), used), sent) in answers.iter().zip(&uses).zip(&sent) {
            assert_eq!(sent.tool_use_id, used.id, "{answer:?}");
            if matches!(answer, PermissionResult::Allow { .. }) {
                assert!(!sent.is_error, "{answer:?}: {sent:?}");
                assert_eq!(sent.text(), "1 + 2 = 3", "{answer:?}");
            } else {
                assert!(sent.is_error, "{answer:?}: {sent:?}");
                assert!(sent.text().contains("no adding today"), "{sent:?}");
            }
            assert_eq!(
                recorded_decision_source(h.env().config_dir(), &used.id).as_deref(),
                Some(*source),
                "{answer:?}"
            );
        }
        h.finish().await;
    })
    .await
}
