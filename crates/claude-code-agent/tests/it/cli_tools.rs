//! In-process tools through the real CLI: results, errors, panics, several servers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::*;
use claude_code_agent::mcp::{Server, Tool};
use claude_code_agent::{HookEvent, HookMatcher, HookOutput, Message, ResultMessage, query};
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::{Value, json};

fn calc() -> Server {
    Server::builder("calc", "1.0.0")
        .tool(Tool::new("add", "Add a and b", |x: Operands| async move {
            x.a + x.b
        }))
        .tool(Tool::new(
            "divide",
            "Divide a by b",
            |x: Operands| async move {
                if x.b == 0.0 {
                    Err("division by zero")
                } else {
                    Ok(x.a / x.b)
                }
            },
        ))
        .build()
}

/// Replies with the text of every tool result of the request, one per line.
fn success(messages: &[Message]) -> ResultMessage {
    let results = results(messages);
    assert_eq!(results.len(), 1, "one result expected: {results:?}");
    let result = results.into_iter().next().unwrap();
    assert!(!result.is_error, "the turn failed: {result:?}");
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_round_trip_reaches_the_model() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 2, "b": 3})))
                .turn(echo_results()),
        )
        .await;
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = calls.clone();
        let server = Server::builder("calc", "1.0.0")
            .tool(Tool::new("add", "Add a and b", move |x: Operands| {
                counter.fetch_add(1, Ordering::SeqCst);
                async move { x.a + x.b }
            }))
            .build();
        let options = h
            .options()
            .mcp_server(server)
            .allowed_tools(["mcp__calc__add"]);

        let (messages, error) = drain(query("What is 2 + 3?", options)).await;
        assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());

        // The stream: the tool_use, its tool_result, then a successful result.
        let uses = tool_uses(&messages);
        assert_eq!(uses.len(), 1, "{uses:?}");
        assert_eq!(uses[0].name, "mcp__calc__add");
        assert_eq!(uses[0].input, json!({"a": 2, "b": 3}));
        let results_seen = tool_results(&messages);
        assert_eq!(results_seen.len(), 1);
        assert_eq!(results_seen[0].tool_use_id, uses[0].id);
        assert_eq!(result_text(&results_seen[0]), "5");
        assert_ne!(results_seen[0].is_error, Some(true));
        let result = success(&messages);
        assert_eq!(result.result.as_deref(), Some("results: 5"));
        assert!(matches!(messages.last(), Some(Message::Result(_))));

        // The model's next request carried the tool's result.
        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 1, "{sent:?}");
        assert_eq!(sent[0].tool_use_id, uses[0].id);
        assert_eq!(sent[0].text(), "5");
        assert!(!sent[0].is_error);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_result_reaches_the_model_as_is_error() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use(
                    "mcp__calc__divide",
                    json!({"a": 10, "b": 0}),
                ))
                .turn(echo_results()),
        )
        .await;
        let options = h.options().mcp_server(calc()).allowed_tools(["mcp__calc"]);

        let (messages, error) = drain(query("10 / 0?", options)).await;
        assert!(error.is_none(), "{error:?}");

        let seen = tool_results(&messages);
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].is_error, Some(true));
        assert_eq!(result_text(&seen[0]), "division by zero");
        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 1);
        assert!(sent[0].is_error);
        assert_eq!(sent[0].text(), "division by zero");
        assert_eq!(
            success(&messages).result.as_deref(),
            Some("results: division by zero")
        );
        h.finish().await;
    })
    .await
}

/// A tool the server stops knowing between `tools/list` and `tools/call`
/// (removed by a PreToolUse hook): the server answers the call with a
/// JSON-RPC error, and the model sees its message as error text. A tool
/// name no server has is refused by the CLI itself, also as error text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonrpc_error_and_unknown_tool_reach_the_model_as_error_text() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__calc__vanishing", json!({})))
                .turn(Turn::tool_use("mcp__calc__nope", json!({"a": 1})))
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 1, "b": 1})))
                .turn(echo_results()),
        )
        .await;
        let vanishing_ran = Arc::new(AtomicUsize::new(0));
        let ran = vanishing_ran.clone();
        let server = Server::builder("calc", "1.0.0")
            .tool(Tool::new("add", "Add a and b", |x: Operands| async move {
                x.a + x.b
            }))
            .tool(
                Tool::new(
                    "vanishing",
                    "Gone before it is called",
                    move |_: serde_json::Value| {
                        ran.fetch_add(1, Ordering::SeqCst);
                        async { "should not run" }
                    },
                )
                .input_schema(json!({"type": "object"})),
            )
            .build();
        let handle = server.clone();
        let options = h
            .options()
            .mcp_server(server)
            .allowed_tools(["mcp__calc"])
            .hook(
                HookEvent::PreToolUse,
                HookMatcher::new(Some("mcp__calc__vanishing")),
                move |_input, _ctx| {
                    let removed = handle.remove_tool("vanishing");
                    async move {
                        assert!(removed);
                        HookOutput::default()
                    }
                },
            );

        let (messages, error) = drain(query("go", options)).await;
        assert!(error.is_none(), "{error:?}");

        let uses = tool_uses(&messages);
        assert_eq!(uses.len(), 3, "{uses:?}");
        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 3, "{sent:?}");
        // The server's JSON-RPC error (-32601, "Unknown tool: vanishing").
        assert_eq!(sent[0].tool_use_id, uses[0].id);
        assert!(sent[0].is_error, "{:?}", sent[0]);
        assert!(
            sent[0].text().contains("Unknown tool: vanishing"),
            "{:?}",
            sent[0]
        );
        // The CLI's own refusal of a name it does not know.
        assert!(sent[1].is_error, "{:?}", sent[1]);
        assert!(sent[1].text().contains("mcp__calc__nope"), "{:?}", sent[1]);
        // The session goes on.
        assert!(!sent[2].is_error);
        assert_eq!(sent[2].text(), "2");
        assert_eq!(vanishing_ran.load(Ordering::SeqCst), 0);
        success(&messages);
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_tool_is_an_error_result_and_the_session_goes_on() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__calc__boom", json!({"a": 1, "b": 2})))
                .turn(Turn::tool_use("mcp__calc__add", json!({"a": 1, "b": 2})))
                .turn(echo_results()),
        )
        .await;
        let server = Server::builder("calc", "1.0.0")
            .tool(Tool::new("add", "Add a and b", |x: Operands| async move {
                x.a + x.b
            }))
            .tool(Tool::new(
                "boom",
                "Always panics",
                |x: Operands| async move {
                    if x.a > 0.0 {
                        panic!("kaboom at {}", x.a);
                    }
                    x.b
                },
            ))
            .build();
        let options = h.options().mcp_server(server).allowed_tools(["mcp__calc"]);

        let (messages, error) = drain(query("go", options)).await;
        assert!(error.is_none(), "{error:?}");

        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 2, "{sent:?}");
        assert!(sent[0].is_error);
        assert!(sent[0].text().contains("panicked"), "{:?}", sent[0]);
        assert!(sent[0].text().contains("kaboom at 1"), "{:?}", sent[0]);
        assert!(!sent[1].is_error);
        assert_eq!(sent[1].text(), "3");
        let seen = tool_results(&messages);
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].is_error, Some(true));
        success(&messages);
        h.finish().await;
    })
    .await
}

tokio::task_local! {
    static CALLER: &'static str;
}

/// An in-process tool runs in a Tokio task of its own, as any handler does:
/// `tokio::task::id()` answers, the same after an `.await`, and a
/// task-local the tool sets is there inside its scope. The model sees what
/// the tool found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_process_tool_runs_in_a_tokio_task_of_its_own() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__task__whoami", json!({})))
                .turn(Turn::tool_use("mcp__task__whoami", json!({})))
                .turn(echo_results()),
        )
        .await;
        let ids = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = ids.clone();
        let whoami = Tool::new("whoami", "Where the tool runs", move |_: Value| {
            let seen = seen.clone();
            async move {
                let id = tokio::task::id();
                let local = CALLER
                    .scope("the tool", async {
                        tokio::task::yield_now().await;
                        CALLER.get()
                    })
                    .await;
                let same = tokio::task::id() == id;
                seen.lock().unwrap().push(id);
                format!("same task after an await: {same}; task-local: {local}")
            }
        })
        .input_schema(json!({"type": "object"}));
        let server = Server::builder("task", "1.0.0").tool(whoami).build();
        let options = h.options().mcp_server(server).allowed_tools(["mcp__task"]);

        let (messages, error) = drain(query("go", options)).await;
        assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());
        let sent = h.mock().tool_results();
        assert_eq!(sent.len(), 2, "{sent:?}");
        for result in &sent {
            assert!(!result.is_error, "{result:?}");
            assert_eq!(
                result.text(),
                "same task after an await: true; task-local: the tool"
            );
        }
        let ids = ids.lock().unwrap().clone();
        assert_ne!(ids[0], ids[1], "each call has a task of its own");
        success(&messages);
        h.finish().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_are_both_called_under_normalised_names() {
    with_timeout(async {
        let h = Harness::start(
            MockModel::builder()
                .turn(Turn::tool_use("mcp__a__x", json!({"a": 1, "b": 2})))
                .turn(Turn::tool_use("mcp__b__y", json!({"a": 5, "b": 7})))
                .turn(Turn::tool_use(
                    "mcp__my_srv__do_it",
                    json!({"a": 2, "b": 10}),
                ))
                .turn(echo_results()),
        )
        .await;
        let a = Server::builder("a", "1.0.0")
            .tool(Tool::new("x", "a plus b", |o: Operands| async move {
                format!("a.x={}", o.a + o.b)
            }))
            .build();
        let b = Server::builder("b", "1.0.0")
            .tool(Tool::new("y", "a times b", |o: Operands| async move {
                format!("b.y={}", o.a * o.b)
            }))
            .build();
        // Characters outside [A-Za-z0-9_-] become `_` in the name the model sees.
        let odd = Server::builder("my.srv", "1.0.0")
            .tool(Tool::new("do it", "b minus a", |o: Operands| async move {
                format!("odd={}", o.b - o.a)
            }))
            .build();
        let options = h.options().mcp_servers([a, b, odd]).allowed_tools([
            "mcp__a__x",
            "mcp__b__y",
            "mcp__my_srv__do_it",
        ]);

        let (messages, error) = drain(query("go", options)).await;
        assert!(error.is_none(), "{error:?}");

        let first = &h.mock().conversation_requests()[0];
        let names = first.tool_names();
        for want in ["mcp__a__x", "mcp__b__y", "mcp__my_srv__do_it"] {
            assert!(names.contains(&want), "{want} not offered: {names:?}");
        }
        let texts: Vec<String> = h.mock().tool_results().iter().map(|r| r.text()).collect();
        assert_eq!(texts, ["a.x=3", "b.y=35", "odd=8"]);
        assert!(h.mock().tool_results().iter().all(|r| !r.is_error));
        success(&messages);
        h.finish().await;
    })
    .await
}
