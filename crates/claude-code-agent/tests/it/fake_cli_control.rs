//! The control protocol under stress and faults, against the fake
//! CLI: withdrawn permission requests, cancelled tool calls, requests served
//! during a slow tool, panicking callbacks, 1 000 calls with hooks, 1 000
//! calls at once, a tool that hangs and ignores its cancellation; and what
//! the SDK writes for a permission answer's `toolUseID` and
//! `decisionClassification`, an `Interrupt` hook and `reload_plugins`'
//! options.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::support::fake_cli::{bounded, calc_server, collect, errors, fake, final_result};
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::message::SystemMessage;
use claude_code_agent::protocol::{HookInput, PermissionDecisionClassification};
use claude_code_agent::{
    Client, HookEvent, HookMatcher, HookOutput, Message, PermissionResult, Plugin,
    ReloadPluginsOptions, query,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_with_the_handshake_over_two_turns() {
    let fake = fake("chat", json!({}));
    let client = bounded(
        20,
        Client::connect(fake.options.clone().mcp_server(calc_server(None))),
    )
    .await
    .expect("connect");
    for prompt in ["hello", "again"] {
        client.query(prompt).await.expect("query");
        let messages = bounded(20, collect(client.receive_response())).await;
        assert!(errors(&messages).is_empty(), "{messages:?}");
        let Some(Ok(Message::System(SystemMessage::Init(init)))) = messages.first() else {
            panic!("{messages:?}")
        };
        // The fake's system/init lists the tools it found in tools/list.
        let tools = init.to_value()["tools"].clone();
        assert!(
            tools.as_array().unwrap().contains(&json!("mcp__calc__add")),
            "{tools}"
        );
        // The fake checked the MCP handshake answers (else is_error).
        let result = final_result(&messages);
        assert_eq!(
            result.result.as_deref(),
            Some(format!("You said: {prompt}").as_str())
        );
    }
    bounded(20, client.disconnect()).await.expect("disconnect");
    fake.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withdrawn_permission_request_cancels_the_callback_and_is_not_answered() {
    let fake = fake(
        "cancel_permission",
        json!({"tool": "add", "delay_ms": 300, "quiet_ms": 700}),
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<CancellationToken>();
    let options = fake
        .options
        .clone()
        .mcp_server(calc_server(None))
        .can_use_tool(move |_tool, _input, ctx| {
            let _ = tx.send(ctx.cancellation.clone());
            async move {
                ctx.cancellation.cancelled().await;
                PermissionResult::deny("withdrawn")
            }
        });
    let messages = bounded(30, collect(query("hi", options))).await;
    // The fake checked that no answer came after the withdrawal.
    final_result(&messages);
    let token = rx.try_recv().expect("the permission callback ran");
    bounded(5, token.cancelled()).await;
    fake.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_cancelled_fires_the_running_tools_token() {
    let fake = fake("cancel_tool", json!({"tool": "wait", "delay_ms": 300}));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let options = fake.options.clone().mcp_server(calc_server(Some(tx)));
    let messages = bounded(30, collect(query("hi", options))).await;
    // The fake checked the acknowledgement of notifications/cancelled.
    let result = final_result(&messages);
    let token = rx.try_recv().expect("the tool ran");
    bounded(5, token.cancelled()).await;
    eprintln!("{:?}", result.result);
    fake.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_tool_does_not_block_ping_or_tools_list() {
    let fake = fake(
        "ping_during_slow_call",
        json!({"tool": "slow", "args": {"ms": 3000}, "max_ping_ms": 1000}),
    );
    let options = fake.options.clone().mcp_server(calc_server(None));
    let messages = bounded(60, collect(query("hi", options))).await;
    let result = final_result(&messages);
    let text = result.result.clone().unwrap_or_default();
    // "ping_us=… tools/list_us=…", each checked against max_ping_ms by the fake.
    let ping_us: u64 = text
        .split_whitespace()
        .find_map(|w| w.strip_prefix("ping_us="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no ping time in {text:?}"));
    assert!(ping_us < 1_000_000, "{text}");
    eprintln!("during a 3 s tool call: {text}");
    fake.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_permission_callback_and_hook_become_control_errors() {
    let fake = fake(
        "callbacks",
        json!({"permission": ["error", "allow", "error", "deny"], "hooks": ["error", "ok", "ok"]}),
    );
    let options = fake
        .options
        .clone()
        .can_use_tool(|_tool, input: Value, _ctx| async move {
            match input["round"].as_u64() {
                // At once (in its task's first poll) …
                Some(0) => panic!("permission callback exploded"),
                // … and after a wait.
                Some(2) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    panic!("permission callback exploded later")
                }
                Some(3) => PermissionResult::deny("not this one"),
                _ => PermissionResult::allow(),
            }
        })
        .hook(
            HookEvent::PreToolUse,
            HookMatcher::new(None),
            |input, _ctx| async move {
                if input.tool_input().and_then(|i| i["round"].as_u64()) == Some(0) {
                    panic!("hook exploded");
                }
                HookOutput::allow_tool()
            },
        );
    let messages = bounded(30, collect(query("hi", options))).await;
    assert!(errors(&messages).is_empty(), "{messages:?}");
    // The fake checked each answer: error, allow (with updatedInput), error,
    // deny (with a message); hook error, then two object answers.
    assert_eq!(
        final_result(&messages).result.as_deref(),
        Some("callbacks checked")
    );
    fake.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_tool_calls_with_hooks_and_permissions_all_answered() {
    let fake = fake(
        "tool_calls",
        json!({"n": 1000, "in_flight": 16, "hooks": true, "permission": true, "tool": "add",
               "args": {"a": 2, "b": 3}, "timeout_ms": 60000}),
    );
    let calls = Arc::new(AtomicU64::new(0));
    let (pre, post, perms) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let c = calls.clone();
    let add = Tool::new("add", "Add a and b", move |v: Value| {
        c.fetch_add(1, Ordering::Relaxed);
        async move {
            tokio::task::yield_now().await;
            format!(
                "sum={}",
                v["a"].as_f64().unwrap_or(0.0) + v["b"].as_f64().unwrap_or(0.0)
            )
        }
    })
    .input_schema(json!({"type": "object"}));
    let (p1, p2, p3) = (pre.clone(), post.clone(), perms.clone());
    let options = fake
        .options
        .clone()
        .mcp_server(Server::builder("calc", "1.0.0").tool(add).build())
        .can_use_tool(move |_tool, _input, _ctx| {
            p3.fetch_add(1, Ordering::Relaxed);
            async move {
                tokio::time::sleep(Duration::from_micros(200)).await;
                PermissionResult::allow()
            }
        })
        .hook(
            HookEvent::PreToolUse,
            HookMatcher::new(None),
            move |_i, _c| {
                p1.fetch_add(1, Ordering::Relaxed);
                async move { HookOutput::default() }
            },
        )
        .hook(
            HookEvent::PostToolUse,
            HookMatcher::new(None),
            move |_i, _c| {
                p2.fetch_add(1, Ordering::Relaxed);
                async move { HookOutput::default() }
            },
        );
    let messages = bounded(120, collect(query("hi", options))).await;
    assert!(errors(&messages).is_empty(), "{:?}", errors(&messages));
    let result = final_result(&messages);
    assert_eq!(
        result.result.as_deref(),
        Some("calls=1000 tool_errors=0 hooks=2000 permissions=1000 denied=0")
    );
    assert_eq!(calls.load(Ordering::Relaxed), 1000);
    assert_eq!(pre.load(Ordering::Relaxed), 1000);
    assert_eq!(post.load(Ordering::Relaxed), 1000);
    assert_eq!(perms.load(Ordering::Relaxed), 1000);
    let tool_results = messages
        .iter()
        .filter(|m| matches!(m, Ok(Message::User(u)) if u.tool_results().next().is_some()))
        .count();
    assert_eq!(tool_results, 1000);
    fake.assert_gone().await;
}

/// Counts the handler futures dropped before they finished.
struct DropProbe(Arc<AtomicU64>);

impl Drop for DropProbe {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// A tool that never returns and ignores its cancellation token: each call
/// becomes an `isError` result naming the timeout, the handler's future is
/// dropped (nothing keeps running), and the session goes on to its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_hangs_and_ignores_cancellation_times_out_and_is_dropped() {
    let fake = fake(
        "tool_calls",
        json!({"n": 4, "in_flight": 4, "tool": "stuck", "args": {}, "timeout_ms": 20000}),
    );
    let dropped = Arc::new(AtomicU64::new(0));
    let d = dropped.clone();
    let stuck = Tool::new("stuck", "Never returns", move |_: Value| {
        let probe = DropProbe(d.clone());
        async move {
            let _probe = probe;
            std::future::pending::<String>().await
        }
    })
    .input_schema(json!({"type": "object"}));
    let server = Server::builder("calc", "1.0.0")
        .tool(stuck)
        .tool_timeout(Duration::from_millis(300))
        .build();
    let started = std::time::Instant::now();
    let messages = bounded(
        30,
        collect(query("hi", fake.options.clone().mcp_server(server))),
    )
    .await;
    assert!(errors(&messages).is_empty(), "{:?}", errors(&messages));
    assert_eq!(
        final_result(&messages).result.as_deref(),
        Some("calls=4 tool_errors=4 hooks=0 permissions=0 denied=0")
    );
    // Four calls in flight at once: one timeout, not four in a row.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(dropped.load(Ordering::Relaxed), 4);
    let texts: Vec<String> = messages
        .iter()
        .filter_map(|m| match m {
            Ok(Message::User(u)) => Some(
                u.tool_results()
                    .map(|r| r.content.as_ref().map(|c| c.text()).unwrap_or_default())
                    .collect::<String>(),
            ),
            _ => None,
        })
        .collect();
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert!(
        texts
            .iter()
            .all(|t| t.contains("timed out") && t.contains("stuck")),
        "{texts:?}"
    );
    fake.assert_gone().await;
}

/// 1 000 calls in flight at once, each waiting until all 1 000 have
/// started: they can only finish if they all run concurrently (no limit, no
/// queue in the SDK), and every one is answered with its own result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls_run_at_once_and_are_all_answered() {
    const N: usize = 1000;
    let fake = fake(
        "tool_calls",
        json!({"n": N, "in_flight": N, "tool": "meet", "args": {"x": 7}, "timeout_ms": 60000}),
    );
    let all_in = Arc::new(tokio::sync::Barrier::new(N));
    let meet = Tool::new("meet", "Waits for all the others", move |v: Value| {
        let all_in = all_in.clone();
        async move {
            match tokio::time::timeout(Duration::from_secs(30), all_in.wait()).await {
                Ok(_) => format!("x={}", v["x"]),
                Err(_) => "not everyone came".to_owned(),
            }
        }
    })
    .input_schema(json!({"type": "object"}));
    let server = Server::builder("calc", "1.0.0").tool(meet).build();
    let started = std::time::Instant::now();
    let messages = bounded(
        60,
        collect(query("hi", fake.options.clone().mcp_server(server))),
    )
    .await;
    let took = started.elapsed();
    assert!(errors(&messages).is_empty(), "{:?}", errors(&messages));
    assert_eq!(
        final_result(&messages).result.as_deref(),
        Some("calls=1000 tool_errors=0 hooks=0 permissions=0 denied=0")
    );
    eprintln!("1 000 concurrent calls took {took:?}");
    let texts: Vec<String> = messages
        .iter()
        .filter_map(|m| match m {
            Ok(Message::User(u)) => Some(u.tool_results().collect::<Vec<_>>()),
            _ => None,
        })
        .flatten()
        .map(|r| r.content.as_ref().map(|c| c.text()).unwrap_or_default())
        .collect();
    assert_eq!(texts.len(), N);
    assert!(texts.iter().all(|t| t == "x=7"), "{:?}", &texts[..3]);
    fake.assert_gone().await;
}

/// A tool runs in a Tokio task of its own, on a runtime worker:
/// `block_in_place` before its first `.await` hands the worker's other
/// tasks (the session's reader among them) to another thread, and
/// `Handle::current` finds the runtime.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_in_place_and_the_runtime_handle_work_in_a_tools_first_poll() {
    let fake = fake(
        "tool_calls",
        json!({"n": 8, "in_flight": 4, "tool": "blocky", "args": {"a": 2, "b": 3},
               "timeout_ms": 20000}),
    );
    let blocky = Tool::new("blocky", "Add a and b, blocking", |v: Value| async move {
        let sum = tokio::task::block_in_place(|| {
            std::thread::sleep(Duration::from_millis(5));
            v["a"].as_f64().unwrap_or(0.0) + v["b"].as_f64().unwrap_or(0.0)
        });
        let spawned = tokio::runtime::Handle::current()
            .spawn(async move { sum * 2.0 })
            .await
            .unwrap();
        format!("sum={sum} twice={spawned}")
    })
    .input_schema(json!({"type": "object"}));
    let options = fake
        .options
        .clone()
        .mcp_server(Server::builder("calc", "1.0.0").tool(blocky).build());
    let messages = bounded(60, collect(query("hi", options))).await;
    assert!(errors(&messages).is_empty(), "{:?}", errors(&messages));
    let texts: Vec<String> = messages
        .iter()
        .filter_map(|m| match m {
            Ok(Message::User(u)) => Some(format!("{:?}", u.tool_results().collect::<Vec<_>>())),
            _ => None,
        })
        .collect();
    let result = final_result(&messages).result.clone().unwrap_or_default();
    assert!(
        result.starts_with("calls=8 tool_errors=0"),
        "{result}: {texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.contains("sum=5 twice=10")),
        "{texts:?}"
    );
    fake.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_answer_and_interrupt_hook_go_out_as_the_typescript_sdk_writes_them() {
    let interrupt = json!({"session_id": "s", "transcript_path": "/t.jsonl", "cwd": "/w",
        "hook_event_name": "Interrupt", "source": "user", "reason": "stop", "via": "client"});
    let fake = fake(
        "echo_answers",
        json!({"hook_inputs": {"Interrupt": interrupt}}),
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<HookInput>();
    let options = fake
        .options
        .clone()
        .can_use_tool(|_tool, _input, _ctx| async {
            // The session puts the request's own tool_use_id in its place.
            PermissionResult::allow()
                .with_decision_classification(PermissionDecisionClassification::Config)
                .with_tool_use_id("not_this_one")
        })
        .hook(
            HookEvent::Interrupt,
            HookMatcher::new(None),
            move |input, _ctx| {
                let _ = tx.send(input);
                async { HookOutput::default() }
            },
        );
    let messages = bounded(20, collect(query("hi", options))).await;
    assert!(errors(&messages).is_empty(), "{:?}", errors(&messages));
    let result = final_result(&messages);
    let answers: Value = serde_json::from_str(result.result.as_deref().unwrap()).unwrap();
    assert_eq!(
        answers[0]["can_use_tool"],
        json!({"behavior": "allow", "updatedInput": {"a": 1, "b": 2},
            "toolUseID": "toolu_echo", "decisionClassification": "config"}),
        "{answers}"
    );
    assert_eq!(answers[1]["hook"], "Interrupt", "{answers}");
    assert!(answers[1]["answer"].is_object(), "{answers}");
    let Some(HookInput::Interrupt(input)) = rx.recv().await else {
        panic!("no typed Interrupt input")
    };
    assert_eq!(
        (
            input.source.as_deref(),
            input.reason.as_deref(),
            input.via.as_deref()
        ),
        (Some("user"), Some("stop"), Some("client"))
    );
    fake.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_plugins_sends_its_options_as_the_typescript_sdk_does() {
    let fake = fake("chat", json!({}));
    let client = bounded(20, Client::connect(fake.options.clone()))
        .await
        .expect("connect");
    let sent = |r: claude_code_agent::protocol::ReloadPluginsResponse| r.extra["request"].clone();
    // The default, and flags left false: nothing but the subtype.
    let plain = bounded(20, client.reload_plugins(ReloadPluginsOptions::default()))
        .await
        .expect("reload");
    assert_eq!(sent(plain), json!({"subtype": "reload_plugins"}));
    let all = ReloadPluginsOptions::new()
        .hold_on_cache_impact(true)
        .add_plugin(Plugin::local("/opt/plugins/lint"))
        .add_plugin(Plugin::local("/opt/plugins/docs").without_mcp())
        .refuse_if_busy(true);
    let answer = bounded(20, client.reload_plugins(all))
        .await
        .expect("reload");
    assert_eq!(
        sent(answer),
        json!({"subtype": "reload_plugins", "hold_on_cache_impact": true,
            "add_plugins": [{"type": "local", "path": "/opt/plugins/lint"},
                {"type": "local", "path": "/opt/plugins/docs", "skipMcpDiscovery": true}],
            "refuse_if_busy": true})
    );
    let only_busy = ReloadPluginsOptions::new().refuse_if_busy(true);
    let answer = bounded(20, client.reload_plugins(only_busy))
        .await
        .expect("reload");
    assert_eq!(
        sent(answer),
        json!({"subtype": "reload_plugins", "refuse_if_busy": true})
    );
    bounded(20, client.disconnect()).await.expect("disconnect");
    fake.assert_gone().await;
}
