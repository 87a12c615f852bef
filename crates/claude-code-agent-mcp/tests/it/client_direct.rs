//! The in-process client's direct `tools/call` (connected to our `Server`,
//! the call skips JSON-RPC): it answers exactly what the JSON-RPC path
//! answers — validation, the timeout, panic capture, the result cap, the
//! stateless revision's fields, errors — and keeps the client's timeout,
//! close and cancellation.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::support::calc;
use claude_code_agent_mcp::client::{
    ClientOptions, Error, HandshakeMode, InProcessTransport, McpClient, RequestOptions,
};
use claude_code_agent_mcp::{Handler, Json, Server, Tool, ToolContext};
use serde_json::{Value, json};

/// Server with calc's tools and a few more: a short timeout, a small cap,
/// one that waits for its cancellation.
fn server(dropped: Arc<AtomicBool>) -> Server {
    let server = calc::calc_server();
    server.add_tool(
        Tool::new("sleepy", "Sleeps", |_: Value| async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            "woke"
        })
        .input_schema(json!({"type":"object"}))
        .timeout(Duration::from_millis(50)),
    );
    server.add_tool(
        Tool::new("long", "A long text", |_: Value| async { "y".repeat(100) })
            .input_schema(json!({"type":"object"}))
            .max_result_chars(10),
    );
    // Finishes on its second poll: the path of a call left running.
    server.add_tool(
        Tool::new("yields", "Yields once", |args: Value| async move {
            tokio::task::yield_now().await;
            Json(args)
        })
        .input_schema(json!({"type":"object"})),
    );
    // Panics before it has a future to poll.
    server.add_tool(
        Tool::new(
            "panics_early",
            "Panics making its future",
            |_: Value| -> std::future::Ready<&'static str> { panic!("no future for you") },
        )
        .input_schema(json!({"type":"object"})),
    );
    // Is cancelled while its first poll runs (as a `notifications/cancelled`
    // handled on another thread would), before the call is recorded.
    server.add_tool(
        Tool::new(
            "cancelled_early",
            "Cancelled during its first poll",
            |_: Value, ctx: ToolContext| {
                let found = ctx.session().unwrap().cancel(ctx.request_id());
                async move {
                    assert!(!found, "the call is not recorded during its first poll");
                    ctx.cancelled().await;
                    "saw the cancel"
                }
            },
        )
        .input_schema(json!({"type":"object"})),
    );
    server.add_tool(
        Tool::new(
            "waits",
            "Waits for its cancellation",
            move |_: Value, ctx: ToolContext| {
                let dropped = Arc::clone(&dropped);
                async move {
                    ctx.cancelled().await;
                    dropped.store(true, Ordering::SeqCst);
                    "cancelled"
                }
            },
        )
        .input_schema(json!({"type":"object"})),
    );
    server
}

/// A client over the direct path (our `Server`, `InProcessTransport::new`)
/// and one over JSON-RPC (the same server behind `from_arc`, which only
/// sees a `Handler`).
async fn pair(mode: HandshakeMode) -> (McpClient, McpClient, Arc<AtomicBool>) {
    let dropped = Arc::new(AtomicBool::new(false));
    let s = server(Arc::clone(&dropped));
    let options = || ClientOptions::new("t", "1").handshake(mode);
    let direct = McpClient::connect(InProcessTransport::new(s.clone()), options())
        .await
        .unwrap();
    let handler: Arc<dyn Handler> = Arc::new(s);
    let json = McpClient::connect(InProcessTransport::from_arc(handler), options())
        .await
        .unwrap();
    (direct, json, dropped)
}

fn outcome(r: Result<claude_code_agent_mcp::types::CallToolResult, Error>) -> String {
    match r {
        Ok(result) => format!("ok {}", serde_json::to_string(&result).unwrap()),
        Err(e) => match e.jsonrpc_error() {
            Some(e) => format!("json-rpc {} {}", e.code, e.message),
            None => format!("err {e}"),
        },
    }
}

#[tokio::test]
async fn the_direct_path_answers_what_json_rpc_answers() {
    for mode in [HandshakeMode::Auto, HandshakeMode::Initialize] {
        let (direct, json, _) = pair(mode).await;
        assert_eq!(direct.server_state().stateless, mode == HandshakeMode::Auto);
        let calls = [
            ("add", json!({"a": 1, "b": 2})),
            // validated against the input schema
            ("add", json!({"a": "x"})),
            ("add", json!({})),
            // arguments that are no object, or none
            ("add", json!([1, 2])),
            ("echo", Value::Null),
            ("echo", json!({"text": "hi"})),
            // structured output, and a tool error
            ("divide", json!({"a": 6, "b": 3})),
            ("divide", json!({"a": 6, "b": 0})),
            // panic capture, the tool timeout, the cap
            ("panic", json!({})),
            ("panics_early", json!({})),
            ("yields", json!({"x": [1, "two"]})),
            ("cancelled_early", json!({})),
            ("sleepy", json!({})),
            ("long", json!({})),
            ("big", json!({"n": 5})),
            // an unknown tool is a JSON-RPC error
            ("nope", json!({})),
        ];
        for (name, args) in calls {
            let a = outcome(direct.call_tool(name, args.clone()).await);
            let b = outcome(json.call_tool(name, args.clone()).await);
            assert_eq!(a, b, "{mode:?} {name} {args}");
        }
        // Sanity: what the checks above compared.
        let add = direct
            .call_tool("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert_eq!(add.text_content(), "3");
        let invalid = direct.call_tool("add", json!({"a": "x"})).await.unwrap();
        assert!(invalid.is_error && invalid.text_content().contains("Invalid arguments"));
        let panicked = direct.call_tool("panic", json!({})).await.unwrap();
        assert!(panicked.is_error && panicked.text_content().contains("panicked"));
        let early = direct.call_tool("panics_early", json!({})).await.unwrap();
        assert!(early.is_error && early.text_content().contains("no future for you"));
        let yielded = direct.call_tool("yields", json!({"x": 1})).await.unwrap();
        assert!(!yielded.is_error, "{yielded:?}");
        // A cancel that came while the first poll ran reaches the call once
        // it is recorded: no waiting for the tool's timeout.
        let cancelled = tokio::time::timeout(
            Duration::from_secs(5),
            direct.call_tool("cancelled_early", json!({})),
        )
        .await
        .expect("the early cancel reached the call")
        .unwrap();
        assert!(
            cancelled.is_error && cancelled.text_content().contains("was cancelled"),
            "{cancelled:?}"
        );
        let slept = direct.call_tool("sleepy", json!({})).await.unwrap();
        assert!(slept.is_error && slept.text_content().contains("timed out"));
        let long = direct.call_tool("long", json!({})).await.unwrap();
        assert!(long.text_content().starts_with("yyyyyyyyyy\n"), "{long:?}");
        let err = direct.call_tool("nope", json!({})).await.unwrap_err();
        assert_eq!(err.code(), Some(-32601));
        // A request's own `_meta` reaches the tool, as over JSON-RPC.
        let with = || RequestOptions::new().meta("x-test", json!("p1"));
        let a = direct.call_tool_with("add", json!({"a": 1, "b": 1}), with());
        let b = json.call_tool_with("add", json!({"a": 1, "b": 1}), with());
        assert_eq!(outcome(a.await), outcome(b.await));
    }
}

#[tokio::test]
async fn a_bad_stateless_meta_fails_the_call_as_over_json_rpc() {
    let (direct, json, _) = pair(HandshakeMode::Auto).await;
    let options = || {
        RequestOptions::new().meta(
            "io.modelcontextprotocol/protocolVersion",
            json!("1999-01-01"),
        )
    };
    let a = direct
        .call_tool_with("add", json!({"a": 1, "b": 2}), options())
        .await;
    let b = json
        .call_tool_with("add", json!({"a": 1, "b": 2}), options())
        .await;
    assert_eq!(outcome(a), outcome(b));
    assert!(outcome(b_again(&direct).await).starts_with("ok"));
}

/// A call with the client's own `_meta` after one with a bad one.
async fn b_again(
    client: &McpClient,
) -> Result<claude_code_agent_mcp::types::CallToolResult, Error> {
    client.call_tool("add", json!({"a": 1, "b": 2})).await
}

#[tokio::test]
async fn dropping_a_direct_call_cancels_the_tool() {
    let (direct, _, dropped) = pair(HandshakeMode::Auto).await;
    let call = direct.call_tool("waits", json!({}));
    assert!(
        tokio::time::timeout(Duration::from_millis(50), call)
            .await
            .is_err()
    );
    // The tool saw its token fire (and its future was dropped with the call).
    for _ in 0..100 {
        if dropped.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // The token fired: the handler's `cancelled()` completed, or its
    // future was dropped first; either way the call is gone.
    let again = direct
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(again.text_content(), "3");
}

#[tokio::test]
async fn the_client_timeout_and_close_end_a_direct_call() {
    let (direct, _, _) = pair(HandshakeMode::Auto).await;
    let options = RequestOptions::new().timeout(Duration::from_millis(40));
    let err = direct
        .call_tool_with("waits", json!({}), options)
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(
        err.to_string().contains("tools/call timed out after 40ms"),
        "{err}"
    );

    let closer = direct.clone();
    let pending = tokio::spawn(async move { closer.call_tool("waits", json!({})).await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    direct.close().await.unwrap();
    let err = pending.await.unwrap().unwrap_err();
    assert!(err.is_closed(), "{err}");
    let err = direct
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap_err();
    assert!(err.is_closed(), "{err}");
}
