//! `notifications/cancelled` ends the matching call of the same session.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::support::*;
use claude_code_agent_mcp::{RequestContext, Server, Session, Tool, ToolContext};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// Sets a flag when dropped: tells whether the handler future was dropped.
struct DropFlag(Arc<AtomicBool>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

struct Probe {
    started: Arc<Notify>,
    dropped: Arc<AtomicBool>,
    token_fired: Arc<AtomicBool>,
}

fn server() -> (Server, Probe) {
    let probe = Probe {
        started: Arc::new(Notify::new()),
        dropped: Arc::new(AtomicBool::new(false)),
        token_fired: Arc::new(AtomicBool::new(false)),
    };
    let (started, dropped, fired) = (
        probe.started.clone(),
        probe.dropped.clone(),
        probe.token_fired.clone(),
    );
    let tool = Tool::new(
        "wait",
        "waits forever",
        move |_: Value, ctx: ToolContext| {
            let (started, dropped, fired) = (started.clone(), dropped.clone(), fired.clone());
            // Watches the token from outside the handler future.
            let token = ctx.cancellation_token().clone();
            tokio::spawn(async move {
                token.cancelled().await;
                fired.store(true, Ordering::SeqCst);
            });
            async move {
                let _flag = DropFlag(dropped);
                started.notify_one();
                std::future::pending::<()>().await;
                "never"
            }
        },
    )
    .input_schema(json!({"type":"object"}));
    let server = Server::builder("s", "1")
        .tool(tool)
        .tool_timeout(Duration::from_secs(300))
        .build();
    (server, probe)
}

fn cancelled(id: Value) -> Value {
    json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id,"reason":"AbortError: remote-cancel"}})
}

#[tokio::test]
async fn cancelled_notification_ends_the_call_with_an_error_result() {
    let (server, probe) = server();
    let session = Session::new();
    let ctx = RequestContext::with_session(session.clone());
    let pending = tokio::spawn({
        let server = server.clone();
        let ctx = ctx.clone();
        async move { server.handle(call(2, "wait", json!({})), ctx).await }
    });
    probe.started.notified().await;
    assert_eq!(session.in_flight(), 1);

    assert_eq!(server.handle(cancelled(json!(2)), ctx).await, None);
    let reply = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(reply["id"], 2);
    assert_eq!(result(&reply)["isError"], true);
    assert!(text(result(&reply)).contains("cancelled"), "{reply}");
    assert!(
        probe.dropped.load(Ordering::SeqCst),
        "handler future dropped"
    );
    tokio::task::yield_now().await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(probe.token_fired.load(Ordering::SeqCst), "token cancelled");
    assert_eq!(session.in_flight(), 0);
}

#[tokio::test]
async fn cancellation_matches_string_ids_and_only_its_own_session() {
    let (server, probe) = server();
    let mine = Session::new();
    let other = Session::new();
    let pending = tokio::spawn({
        let server = server.clone();
        let ctx = RequestContext::with_session(mine.clone());
        async move { server.handle(call("abc", "wait", json!({})), ctx).await }
    });
    probe.started.notified().await;

    // Another session, or another id, cancels nothing.
    server
        .handle(cancelled(json!("abc")), RequestContext::with_session(other))
        .await;
    server
        .handle(
            cancelled(json!("abd")),
            RequestContext::with_session(mine.clone()),
        )
        .await;
    server
        .handle(cancelled(json!("abc")), RequestContext::new())
        .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!pending.is_finished());
    assert_eq!(mine.in_flight(), 1);

    server
        .handle(
            cancelled(json!("abc")),
            RequestContext::with_session(mine.clone()),
        )
        .await;
    let reply = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(reply["id"], "abc");
    assert_eq!(result(&reply)["isError"], true);
}

#[tokio::test]
async fn dropping_the_handle_future_cancels_the_token() {
    let (server, probe) = server();
    let fut = server.handle(call(1, "wait", json!({})), RequestContext::new());
    let _ = tokio::time::timeout(Duration::from_millis(50), fut).await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(probe.dropped.load(Ordering::SeqCst));
    assert!(probe.token_fired.load(Ordering::SeqCst));
}

#[tokio::test]
async fn session_cancel_reports_whether_a_call_was_running() {
    let (server, probe) = server();
    let session = Session::new();
    assert!(!session.cancel(&json!(9)));
    let pending = tokio::spawn({
        let server = server.clone();
        let ctx = RequestContext::with_session(session.clone());
        async move { server.handle(call(9, "wait", json!({})), ctx).await }
    });
    probe.started.notified().await;
    assert!(session.cancel(&json!(9)));
    let reply = pending.await.unwrap().unwrap();
    assert_eq!(result(&reply)["isError"], true);
}
