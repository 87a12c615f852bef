//! Hook callbacks: a PreToolUse hook that blocks, typed inputs of
//! UserPromptSubmit, PreToolUse, PostToolUse and Stop, all 35 events
//! registered at once: which ones the CLI fires, typed, and a
//! PermissionRequest hook's decision obeyed; and the Interrupt hook after an
//! interrupt.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::support::*;
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::protocol::{HookFailure, PermissionResult};
use claude_code_agent::{Client, HookEvent, HookInput, HookMatcher, HookOutput, query};
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::json;

fn calc(calls: Arc<AtomicUsize>) -> Server {
    Server::builder("calc", "1.0.0")
        .tool(Tool::new("add", "Add a and b", move |x: Operands| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { x.a + x.b }
        }))
        .build()
}

/// Each hook input with the envelope's `tool_use_id`, in order.
type Inputs = Arc<Mutex<Vec<(HookInput, Option<String>)>>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pre_tool_use_hook_blocks_the_tool() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 1, "b": 2})))
                .turn(echo_results()),
        )
        .await;
        let calls = Arc::new(AtomicUsize::new(0));
        let hooked = Arc::new(AtomicUsize::new(0));
        let counter = hooked.clone();
        let options = h
            .options()
            .mcp_server(calc(calls.clone()))
            .allowed_tools(["mcp__calc"])
            .hook(
                HookEvent::PreToolUse,
                HookMatcher::new(Some("mcp__calc__add")),
                move |input, _ctx| {
                    counter.fetch_add(1, Ordering::SeqCst);
                    assert_eq!(input.tool_name(), Some("mcp__calc__add"));
                    async { HookOutput::deny_tool("hook says no") }
                },
            );

        let (messages, error) = drain(query("add", options)).await;
        assert!(error.is_none(), "{error:?}");

        assert_eq!(hooked.load(Ordering::SeqCst), 1);
        assert_eq!(calls.load(Ordering::SeqCst), 0, "the blocked tool ran");
        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 1);
        assert!(sent[0].is_error);
        assert!(sent[0].text().contains("hook says no"), "{:?}", sent[0]);
        let result = results(&messages).pop().unwrap();
        assert!(!result.is_error, "{result:?}");
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_get_typed_inputs() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 20, "b": 22})))
                .turn(echo_results()),
        )
        .await;
        let calls = Arc::new(AtomicUsize::new(0));
        let inputs: Inputs = Arc::default();
        let record = |inputs: &Inputs, output: HookOutput| {
            let inputs = inputs.clone();
            move |input: HookInput, ctx: claude_code_agent::HookContext| {
                inputs
                    .lock()
                    .unwrap()
                    .push((input, ctx.tool_use_id.clone()));
                let output = output.clone();
                async move { output }
            }
        };
        let options = h
            .options()
            .mcp_server(calc(calls.clone()))
            .allowed_tools(["mcp__calc"])
            .hook(
                HookEvent::UserPromptSubmit,
                HookMatcher::new(None),
                record(
                    &inputs,
                    HookOutput::additional_context(
                        HookEvent::UserPromptSubmit,
                        "context-from-the-hook",
                    ),
                ),
            )
            .hook(
                HookEvent::PreToolUse,
                HookMatcher::new(Some("mcp__calc__.*")),
                record(&inputs, HookOutput::allow_tool()),
            )
            .hook(
                HookEvent::PostToolUse,
                HookMatcher::new(None),
                record(&inputs, HookOutput::default()),
            )
            .hook(
                HookEvent::Stop,
                HookMatcher::new(None),
                record(&inputs, HookOutput::default()),
            );

        let (messages, error) = drain(query("please add 20 and 22", options)).await;
        assert!(error.is_none(), "{error:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        let tool_use_id = tool_uses(&messages)[0].id.clone();

        let inputs = inputs.lock().unwrap().clone();
        let events: Vec<HookEvent> = inputs.iter().map(|(i, _)| i.event()).collect();
        assert_eq!(
            events,
            [
                HookEvent::UserPromptSubmit,
                HookEvent::PreToolUse,
                HookEvent::PostToolUse,
                HookEvent::Stop
            ],
            "{inputs:?}"
        );
        for (input, _) in &inputs {
            assert!(input.session_id().is_some(), "{input:?}");
            assert!(input.cwd().is_some(), "{input:?}");
        }
        let HookInput::UserPromptSubmit(prompt) = &inputs[0].0 else {
            unreachable!()
        };
        assert_eq!(prompt.prompt.as_deref(), Some("please add 20 and 22"));
        let HookInput::PreToolUse(pre) = &inputs[1].0 else {
            unreachable!()
        };
        assert_eq!(pre.tool_name.as_deref(), Some("mcp__calc__add"));
        assert_eq!(pre.tool_input, Some(json!({"a": 20, "b": 22})));
        assert_eq!(pre.tool_use_id.as_deref(), Some(tool_use_id.as_str()));
        assert_eq!(inputs[1].1.as_deref(), Some(tool_use_id.as_str()));
        let HookInput::PostToolUse(post) = &inputs[2].0 else {
            unreachable!()
        };
        assert_eq!(post.tool_name.as_deref(), Some("mcp__calc__add"));
        assert_eq!(post.tool_use_id.as_deref(), Some(tool_use_id.as_str()));
        let response = post.tool_response.clone().expect("tool_response");
        assert!(response.to_string().contains("42"), "{response}");
        let HookInput::Stop(stop) = &inputs[3].0 else {
            unreachable!()
        };
        assert_eq!(stop.stop_hook_active, Some(false));
        assert_eq!(
            stop.last_assistant_message.as_deref(),
            Some("results: 42"),
            "{stop:?}"
        );

        // The UserPromptSubmit hook's context reached the model.
        let first = &h.mock().conversation_requests()[0];
        let body = serde_json::to_string(first.messages()).unwrap();
        assert!(body.contains("context-from-the-hook"), "{body}");
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_events_registered_fire_typed_and_session_hooks_never_do() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 1, "b": 1})))
                .turn(echo_results()),
        )
        .await;
        let calls = Arc::new(AtomicUsize::new(0));
        let inputs: Inputs = Arc::default();
        // calc is not in allowed_tools: the PermissionRequest hook decides.
        let mut options = h.options().mcp_server(calc(calls.clone()));
        for event in HookEvent::ALL {
            let inputs = inputs.clone();
            let output = match event {
                HookEvent::PermissionRequest => HookOutput::permission_request(
                    PermissionResult::allow_with_input(json!({"a": 1, "b": 1})),
                ),
                _ => HookOutput::default(),
            };
            options = options.hook(event, HookMatcher::new(None), move |input, ctx| {
                inputs
                    .lock()
                    .unwrap()
                    .push((input, ctx.tool_use_id.clone()));
                let output = output.clone();
                async move { output }
            });
        }
        let client = Client::connect(options).await.expect("connect");
        client.query("add 1 and 1").await.unwrap();
        let (messages, error) = drain(client.receive_response()).await;
        assert!(error.is_none(), "{error:?}");
        assert!(!results(&messages).pop().unwrap().is_error);
        assert_eq!(
            calls.load(Ordering::SeqCst),
            1,
            "the hook's allow was not obeyed"
        );
        client
            .set_model(Some("claude-sonnet-4-5"))
            .await
            .expect("set_model");
        client.disconnect().await.unwrap();

        let inputs = inputs.lock().unwrap().clone();
        let mut fired: Vec<String> = inputs.iter().map(|(i, _)| i.event().to_string()).collect();
        fired.sort();
        fired.dedup();
        assert_eq!(
            fired,
            [
                "MessageDisplay",
                "PermissionRequest",
                "PostModelSwitch",
                "PostToolBatch",
                "PostToolUse",
                "PreModelSwitch",
                "PreToolUse",
                "Stop",
                "UserPromptSubmit"
            ],
            "CLI 2.1.332 never sends SessionStart, SessionEnd or Setup to SDK callbacks"
        );
        for (input, _) in &inputs {
            assert!(
                !matches!(input, HookInput::Unknown(_)),
                "untyped: {input:?}"
            );
            match input {
                HookInput::PermissionRequest(p) => {
                    assert_eq!(p.tool_name.as_deref(), Some("mcp__calc__add"));
                    assert_eq!(input.mcp_server().unwrap().name.as_deref(), Some("calc"));
                }
                HookInput::PostToolBatch(b) => {
                    let calls = b.tool_calls.as_ref().expect("tool_calls");
                    assert_eq!(calls[0].tool_name.as_deref(), Some("mcp__calc__add"));
                }
                HookInput::MessageDisplay(m) => {
                    assert!(
                        m.delta.as_deref().is_some_and(|d| d.contains("results: 2")),
                        "{m:?}"
                    );
                }
                HookInput::PreModelSwitch(m) => {
                    assert_eq!(m.requested_model.as_deref(), Some("claude-sonnet-4-5"));
                    assert_eq!(m.source.as_deref(), Some("sdk"));
                    assert!(m.to_model.is_some() && m.from_model.is_some(), "{m:?}");
                }
                _ => {}
            }
        }
        h.finish().await;
    })
    .await
}

/// A failing PreToolUse hook (it panics): without `onFailure` the CLI lets
/// the tool run; with `on_failure(Block)` (CLI 2.1.332 says it honours it,
/// so the session starts) the tool does not run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_hook_set_to_block_blocks_the_tool() {
    with_timeout(async {
        for on_failure in [None, Some(HookFailure::Block)] {
            let h = Harness::start(
                MockModel::builder()
                    .turn(Turn::tool_use("mcp__calc__add", json!({"a": 1, "b": 2})))
                    .turn(echo_results()),
            )
            .await;
            let calls = Arc::new(AtomicUsize::new(0));
            let mut matcher = HookMatcher::new(None);
            if let Some(f) = on_failure.clone() {
                matcher = matcher.on_failure(f);
            }
            let options = h
                .options()
                .mcp_server(calc(calls.clone()))
                .allowed_tools(["mcp__calc"])
                .hook(HookEvent::PreToolUse, matcher, |_input, _ctx| async {
                    panic!("the hook fails")
                });
            let (_messages, error) = drain(query("add", options)).await;
            let blocked = on_failure.is_some();
            if let Some(claude_code_agent::Error::InvalidOptions(why)) = &error {
                // A CLI that does not advertise `hook_on_failure_supported`
                // (2.1.302 does not; the pinned 2.1.332 does) cannot be
                // trusted to block: the SDK refuses the session instead of
                // letting the tool run, and nothing was called.
                assert!(
                    blocked && why.contains("hook_on_failure_supported"),
                    "{why}"
                );
                assert_ne!(
                    claude_code_agent_testkit::cli::tested_cli_version(),
                    claude_code_agent_testkit::PINNED_CLI_VERSION,
                    "the pinned CLI advertises hook_on_failure_supported"
                );
                assert_eq!(calls.load(Ordering::SeqCst), 0);
                h.finish().await;
                continue;
            }
            assert!(error.is_none(), "{error:?}");
            assert_eq!(
                calls.load(Ordering::SeqCst),
                usize::from(!blocked),
                "{on_failure:?}"
            );
            let sent = h.mock().tool_results();
            assert_eq!(sent.len(), 1);
            assert_eq!(sent[0].is_error, blocked, "{:?}", sent[0]);
            h.finish().await;
        }
    })
    .await
}

/// The `Interrupt` hook (TypeScript SDK 0.3.337): an `interrupt` control
/// request while the model is still answering (a slow mock reply) ends the
/// turn, and a CLI that has the event (2.1.335 and newer) then calls the
/// hook with `source: "user"`, `reason: "stop"`, `via: "client"`; an older
/// one never does. The session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_mid_turn_fires_the_interrupt_hook() {
    use claude_code_agent_testkit::cli::{CliChange, tested_cli_has};
    use std::time::Duration;
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::text("too late").delay(Duration::from_secs(60)))
                .turn(Turn::text("after the interrupt")),
        )
        .await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let options = h.options().hook(
            HookEvent::Interrupt,
            HookMatcher::new(None),
            move |input, _ctx| {
                let _ = tx.send(input);
                async { HookOutput::default() }
            },
        );
        let client = Client::connect(options).await.expect("connect");
        client.query("take your time").await.unwrap();
        assert!(
            h.mock()
                .wait_for_conversation_requests(1, Duration::from_secs(30))
                .await,
            "the model was never asked"
        );
        client.interrupt().await.expect("interrupt");
        let (messages, error) = drain(client.receive_response()).await;
        assert!(error.is_none(), "{error:?}");
        assert!(results(&messages).pop().unwrap().is_error);

        if tested_cli_has(CliChange::InterruptHook) {
            let input = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await
                .expect("the Interrupt hook was not called")
                .unwrap();
            let HookInput::Interrupt(interrupt) = &input else {
                panic!("not typed as Interrupt: {input:?}")
            };
            assert_eq!(
                (
                    interrupt.source.as_deref(),
                    interrupt.reason.as_deref(),
                    interrupt.via.as_deref()
                ),
                (Some("user"), Some("stop"), Some("client")),
                "{input:?}"
            );
            assert!(input.session_id().is_some(), "{input:?}");
        }

        client.query("still there?").await.unwrap();
        let (messages, error) = drain(client.receive_response()).await;
        assert!(error.is_none(), "{error:?}");
        let result = results(&messages).pop().unwrap();
        assert_eq!(result.result.as_deref(), Some("after the interrupt"));
        client.disconnect().await.unwrap();
        // Once for the interrupt; never on a CLI that predates the event
        // (registering it there is harmless).
        let more: Vec<HookInput> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        assert!(more.is_empty(), "called again: {more:?}");
        h.finish().await;
    })
    .await
}
