//! The in-process client's `tools/call` on our `Server`: the typed call
//! that JSON-RPC dispatch decodes a request into, handed over without
//! JSON-RPC. Every rule of a call holds on it, in both revisions —
//! validation, the timeout, panic capture, the cap, cancellation (also by
//! a cancel that overtakes its request), progress, the stateless
//! revision's `_meta` and result fields, errors — and the client keeps its
//! timeout, close and cancellation.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use crate::support::calc;
use claude_code_agent_mcp::client::{
    ClientOptions, HandshakeMode, InProcessTransport, McpClient, RequestOptions, ServerNotification,
};
use claude_code_agent_mcp::types::{CallToolResult, SERVER_INFO_META};
use claude_code_agent_mcp::{Json, Server, Tool, ToolContext};
use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};

/// What the tools below saw.
#[derive(Default)]
struct Seen {
    /// `waits` saw its cancellation.
    cancelled: AtomicBool,
    /// Runs of `counted`.
    runs: AtomicUsize,
}

/// Server with calc's tools and a few more: a short timeout, a small cap,
/// one that waits for its cancellation, one that says its request's id
/// and `_meta`, one that counts its runs.
fn server(seen: Arc<Seen>) -> Server {
    let server = calc::calc_server();
    let object = || json!({"type":"object"});
    server.add_tool(
        Tool::new("sleepy", "Sleeps", |_: Value| async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            "woke"
        })
        .input_schema(object())
        .timeout(Duration::from_millis(50)),
    );
    server.add_tool(
        Tool::new("long", "A long text", |_: Value| async { "y".repeat(100) })
            .input_schema(object())
            .max_result_chars(10),
    );
    // Finishes on its second poll: the path of a call left running.
    server.add_tool(
        Tool::new("yields", "Yields once", |args: Value| async move {
            tokio::task::yield_now().await;
            Json(args)
        })
        .input_schema(object()),
    );
    // Panics before it has a future to poll.
    server.add_tool(
        Tool::new(
            "panics_early",
            "Panics making its future",
            |_: Value| -> std::future::Ready<&'static str> { panic!("no future for you") },
        )
        .input_schema(object()),
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
        .input_schema(object()),
    );
    // Its token is watched from a task of its own, which outlives the
    // call's future.
    let waits = Arc::clone(&seen);
    server.add_tool(
        Tool::new(
            "waits",
            "Waits for its cancellation",
            move |_: Value, ctx: ToolContext| {
                let token = ctx.cancellation_token().clone();
                let seen = Arc::clone(&waits);
                tokio::spawn(async move {
                    token.cancelled().await;
                    seen.cancelled.store(true, Ordering::SeqCst);
                });
                async move {
                    ctx.cancelled().await;
                    "cancelled"
                }
            },
        )
        .input_schema(object()),
    );
    server.add_tool(
        Tool::new(
            "request",
            "Its request's id and _meta",
            |_: Value, ctx: ToolContext| async move {
                Json(json!({"id": ctx.request_id(), "meta": ctx.meta()}))
            },
        )
        .input_schema(object()),
    );
    server.add_tool(
        Tool::new("counted", "Counts its runs", move |_: Value| {
            seen.runs.fetch_add(1, Ordering::SeqCst);
            async { "ran" }
        })
        .input_schema(object()),
    );
    server
}

/// A client on the direct path (our `Server`, `InProcessTransport::new`).
async fn client(mode: HandshakeMode) -> (McpClient, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let options = ClientOptions::new("t", "1").handshake(mode);
    let transport = InProcessTransport::new(server(Arc::clone(&seen)));
    let client = McpClient::connect(transport, options).await.unwrap();
    assert_eq!(client.server_state().stateless, mode == HandshakeMode::Auto);
    (client, seen)
}

/// The JSON a tool without an output schema answered with, as text.
fn json_of(result: &CallToolResult) -> Value {
    serde_json::from_str(&result.text_content()).unwrap()
}

const MODES: [HandshakeMode; 2] = [HandshakeMode::Auto, HandshakeMode::Initialize];

#[tokio::test]
async fn every_rule_of_a_call_holds_in_process() {
    for mode in MODES {
        let (client, _) = client(mode).await;
        let call = |name: &'static str, args: Value| {
            let client = client.clone();
            async move { client.call_tool(name, args).await }
        };
        let add = call("add", json!({"a": 1, "b": 2})).await.unwrap();
        assert_eq!(add.text_content(), "3", "{mode:?}");
        // Validated against the input schema, the handler not run.
        let invalid = call("add", json!({"a": "x"})).await.unwrap();
        assert!(invalid.is_error && invalid.text_content().contains("Invalid arguments"));
        let missing = call("echo", Value::Null).await.unwrap();
        assert!(missing.is_error && missing.text_content().contains("text"));
        // Arguments that are no object, and an unknown tool: JSON-RPC errors.
        let err = call("add", json!([1, 2])).await.unwrap_err();
        assert_eq!(err.code(), Some(-32602), "{err}");
        let err = call("nope", json!({})).await.unwrap_err();
        assert_eq!(err.code(), Some(-32601), "{err}");
        assert!(err.to_string().contains("Unknown tool: nope"), "{err}");
        // Structured output checked, and a tool's error.
        let quotient = call("divide", json!({"a": 6, "b": 3})).await.unwrap();
        assert_eq!(quotient.structured_content, Some(json!({"quotient": 2.0})));
        let by_zero = call("divide", json!({"a": 6, "b": 0})).await.unwrap();
        assert!(by_zero.is_error && by_zero.text_content().contains("division by zero"));
        // Panics caught, in the future and before it.
        let panicked = call("panic", json!({})).await.unwrap();
        assert!(panicked.is_error && panicked.text_content().contains("panicked"));
        let early = call("panics_early", json!({})).await.unwrap();
        assert!(early.is_error && early.text_content().contains("no future for you"));
        // A call its first poll leaves running.
        let yielded = call("yields", json!({"x": [1, "two"]})).await.unwrap();
        assert_eq!(json_of(&yielded), json!({"x": [1, "two"]}));
        // A cancel that came while the first poll ran reaches the call once
        // it is recorded: no waiting for the tool's timeout.
        let cancelled =
            tokio::time::timeout(Duration::from_secs(5), call("cancelled_early", json!({})))
                .await
                .expect("the early cancel reached the call")
                .unwrap();
        assert!(
            cancelled.is_error && cancelled.text_content().contains("was cancelled"),
            "{cancelled:?}"
        );
        // The tool's timeout, and its cap.
        let slept = call("sleepy", json!({})).await.unwrap();
        assert!(slept.is_error && slept.text_content().contains("timed out after 50ms"));
        let long = call("long", json!({})).await.unwrap();
        assert!(long.text_content().starts_with("yyyyyyyyyy\n"), "{long:?}");
        // A request's own `_meta` reaches the tool.
        let options = RequestOptions::new().meta("x-test", json!("p1"));
        let request = client
            .call_tool_with("request", json!({}), options)
            .await
            .unwrap();
        let meta = &json_of(&request)["meta"];
        assert_eq!(meta["x-test"], "p1", "{mode:?}");
        // With the stateless revision's own, in that revision only.
        let stateless = meta.get("io.modelcontextprotocol/protocolVersion");
        assert_eq!(stateless.is_some(), mode == HandshakeMode::Auto, "{meta}");
    }
}

#[tokio::test]
async fn stateless_results_carry_the_fields_of_the_revision() {
    let (stateless, _) = client(HandshakeMode::Auto).await;
    let (session, _) = client(HandshakeMode::Initialize).await;
    let server_info = json!({"name": "calc", "version": "1.0.0"});
    // The client's own `_meta`, and one of the request's besides.
    let own = stateless.call_tool("add", json!({"a": 1, "b": 2}));
    let options = RequestOptions::new().meta("x-test", json!(1));
    let besides = stateless.call_tool_with("add", json!({"a": 1, "b": 2}), options);
    for result in [own.await.unwrap(), besides.await.unwrap()] {
        assert_eq!(result.extra["resultType"], "complete", "{result:?}");
        assert_eq!(result.meta.unwrap()[SERVER_INFO_META], server_info);
    }
    // Failures too; a call left running too.
    let failed = stateless.call_tool("panic", json!({})).await.unwrap();
    assert_eq!(failed.extra["resultType"], "complete", "{failed:?}");
    let ran = stateless.call_tool("yields", json!({})).await.unwrap();
    assert_eq!(ran.meta.unwrap()[SERVER_INFO_META], server_info);
    // Not in the revisions with sessions.
    let plain = session
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert!(plain.extra.is_empty() && plain.meta.is_none(), "{plain:?}");
}

#[tokio::test]
async fn a_bad_stateless_meta_fails_the_call() {
    let (client, seen) = client(HandshakeMode::Auto).await;
    let options = RequestOptions::new().meta(
        "io.modelcontextprotocol/protocolVersion",
        json!("1999-01-01"),
    );
    let err = client
        .call_tool_with("counted", json!({}), options)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(-32022), "{err}");
    assert_eq!(seen.runs.load(Ordering::SeqCst), 0);
    // The client's own `_meta` still serves.
    let ran = client.call_tool("counted", json!({})).await.unwrap();
    assert_eq!(ran.text_content(), "ran");
}

#[tokio::test]
async fn progress_reaches_the_client_before_the_answer() {
    for mode in MODES {
        let (client, _) = client(mode).await;
        let mut notes = client.notifications();
        let options = RequestOptions::new().progress_token("p");
        let done = client
            .call_tool_with("slow", json!({"steps": 2, "ms": 0}), options)
            .await
            .unwrap();
        assert_eq!(done.text_content(), "done after 2 steps");
        // Delivered already: nothing to wait for.
        let mut progress = Vec::new();
        while let Some(Some(note)) = notes.next().now_or_never() {
            if let ServerNotification::Progress(p) = note {
                assert_eq!(p.progress_token, "p");
                progress.push(p.progress);
            }
        }
        assert_eq!(progress, [1.0, 2.0], "{mode:?}");
    }
}

#[tokio::test]
async fn a_cancel_that_overtakes_its_request_ends_the_call_unrun() {
    for mode in MODES {
        let (client, seen) = client(mode).await;
        // The id of the next call: ours are numbers, one more each request.
        let request = client.call_tool("request", json!({})).await.unwrap();
        let next = json_of(&request)["id"].as_u64().unwrap() + 1;
        let cancel = json!({"requestId": next, "reason": "changed my mind"});
        client
            .send_notification("notifications/cancelled", Some(cancel))
            .await
            .unwrap();
        let cancelled = client.call_tool("counted", json!({})).await.unwrap();
        assert!(
            cancelled.is_error && cancelled.text_content().contains("was cancelled"),
            "{mode:?} {cancelled:?}"
        );
        assert_eq!(seen.runs.load(Ordering::SeqCst), 0, "the handler never ran");
        let ran = client.call_tool("counted", json!({})).await.unwrap();
        assert_eq!(ran.text_content(), "ran");
    }
}

#[tokio::test]
async fn dropping_a_direct_call_cancels_the_tool() {
    let (client, seen) = client(HandshakeMode::Auto).await;
    let call = client.call_tool("waits", json!({}));
    assert!(
        tokio::time::timeout(Duration::from_millis(50), call)
            .await
            .is_err()
    );
    // The call's token fired (its future was dropped with the call).
    let fired = async {
        while !seen.cancelled.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), fired)
        .await
        .expect("dropping the call fires its token");
    let again = client
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(again.text_content(), "3");
}

#[tokio::test]
async fn the_client_timeout_and_close_end_a_direct_call() {
    let (client, _) = client(HandshakeMode::Auto).await;
    let options = RequestOptions::new().timeout(Duration::from_millis(40));
    let err = client
        .call_tool_with("waits", json!({}), options)
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(
        err.to_string().contains("tools/call timed out after 40ms"),
        "{err}"
    );

    let closer = client.clone();
    let pending = tokio::spawn(async move { closer.call_tool("waits", json!({})).await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    client.close().await.unwrap();
    let err = pending.await.unwrap().unwrap_err();
    assert!(err.is_closed(), "{err}");
    let err = client
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap_err();
    assert!(err.is_closed(), "{err}");
}
