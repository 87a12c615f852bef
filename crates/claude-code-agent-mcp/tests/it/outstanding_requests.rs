//! A request the server sent the client (sampling, elicitation) that is
//! still unanswered when the tool call waiting on it ends — cancelled by
//! the client, timed out, or the request's own wait timed out — is
//! withdrawn with `notifications/cancelled`, so the client stops paying
//! for an LLM call or closes its prompt. An answered request is not.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::wire;
use crate::support::*;
use claude_code_agent_mcp::{RequestContext, Server, Session, Tool, ToolContext};
use serde_json::{Value, json};

fn server(tool_timeout: Duration) -> Server {
    Server::builder("outstanding", "1")
        .tool_timeout(tool_timeout)
        .tool(
            Tool::new(
                "sample",
                "asks the client for a completion",
                |_: Value, ctx: ToolContext| async move {
                    let params = json!({"messages":[],"maxTokens":1});
                    match ctx.request("sampling/createMessage", params).await {
                        Ok(r) => format!("answered: {r}"),
                        Err(e) => format!("failed: {e}"),
                    }
                },
            )
            .input_schema(json!({"type":"object"})),
        )
        .build()
}

/// A session whose outbox the test reads, initialized as a client that
/// declared sampling.
async fn session(server: &Server) -> (Session, Arc<Mutex<Vec<Value>>>) {
    let (session, outbox) = recording_session();
    session.set_client_requests(true);
    let init = req(
        0,
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},
               "clientInfo":{"name":"t","version":"1"}}),
    );
    server
        .handle(init, RequestContext::with_session(session.clone()))
        .await
        .unwrap();
    (session, outbox)
}

/// Waits until the outbox holds a message `pick` accepts, and returns it.
async fn sent(outbox: &Arc<Mutex<Vec<Value>>>, pick: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..1000 {
        if let Some(m) = outbox.lock().unwrap().iter().find(|m| pick(m)) {
            return m.clone();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("never sent; outbox: {:?}", outbox.lock().unwrap());
}

fn cancellations(outbox: &Arc<Mutex<Vec<Value>>>) -> Vec<Value> {
    outbox
        .lock()
        .unwrap()
        .iter()
        .filter(|m| m["method"] == "notifications/cancelled")
        .cloned()
        .collect()
}

fn is_sampling(m: &Value) -> bool {
    m["method"] == "sampling/createMessage"
}

#[tokio::test]
async fn a_cancelled_call_withdraws_its_request_to_the_client() {
    let server = server(Duration::from_secs(60));
    let (session, outbox) = session(&server).await;
    let ctx = RequestContext::with_session(session.clone());
    let call = tokio::spawn({
        let (server, ctx) = (server.clone(), ctx.clone());
        async move { server.handle(call(7, "sample", json!({})), ctx).await }
    });
    let request = sent(&outbox, is_sampling).await;
    assert!(cancellations(&outbox).is_empty());

    let cancel = json!({"jsonrpc":"2.0","method":"notifications/cancelled",
                        "params":{"requestId":7,"reason":"user stopped"}});
    assert_eq!(server.handle(cancel, ctx).await, None);
    let reply = call.await.unwrap().unwrap();
    assert!(text(result(&reply)).contains("cancelled"), "{reply}");
    let withdrawn = cancellations(&outbox);
    assert_eq!(withdrawn.len(), 1, "{withdrawn:?}");
    assert_eq!(withdrawn[0]["params"]["requestId"], request["id"]);
    assert!(withdrawn[0]["params"]["reason"].is_string());
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_withdraws_its_request_to_the_client() {
    let server = server(Duration::from_secs(2));
    let (session, outbox) = session(&server).await;
    let reply = server
        .handle(
            call(8, "sample", json!({})),
            RequestContext::with_session(session),
        )
        .await
        .unwrap();
    assert!(text(result(&reply)).contains("timed out"), "{reply}");
    let request = sent(&outbox, is_sampling).await;
    let withdrawn = cancellations(&outbox);
    assert_eq!(withdrawn.len(), 1, "{withdrawn:?}");
    assert_eq!(withdrawn[0]["params"]["requestId"], request["id"]);
}

#[tokio::test(start_paused = true)]
async fn a_request_whose_own_wait_times_out_is_withdrawn() {
    // The tool may run longer than a request to the client may wait (300 s).
    let server = server(Duration::from_secs(1000));
    let (session, outbox) = session(&server).await;
    let reply = server
        .handle(
            call(9, "sample", json!({})),
            RequestContext::with_session(session),
        )
        .await
        .unwrap();
    let said = text(result(&reply));
    assert!(
        said.starts_with("failed: the client did not answer"),
        "{said}"
    );
    let request = sent(&outbox, is_sampling).await;
    let withdrawn = cancellations(&outbox);
    assert_eq!(withdrawn.len(), 1, "{withdrawn:?}");
    assert_eq!(withdrawn[0]["params"]["requestId"], request["id"]);
}

#[tokio::test]
async fn an_answered_request_is_not_withdrawn() {
    let server = server(Duration::from_secs(60));
    let (session, outbox) = session(&server).await;
    let ctx = RequestContext::with_session(session.clone());
    let call = tokio::spawn({
        let (server, ctx) = (server.clone(), ctx.clone());
        async move { server.handle(call(10, "sample", json!({})), ctx).await }
    });
    let request = sent(&outbox, is_sampling).await;
    let answer = json!({"jsonrpc":"2.0","id":request["id"],"result":{"model":"m"}});
    assert_eq!(server.handle(answer, ctx).await, None);
    let reply = call.await.unwrap().unwrap();
    assert!(text(result(&reply)).starts_with("answered"), "{reply}");
    assert!(cancellations(&outbox).is_empty(), "{:?}", outbox.lock());
}

#[tokio::test]
async fn over_ndjson_the_withdrawal_reaches_the_client_before_the_reply() {
    let mut lines = wire::Lines::serve(server(Duration::from_secs(60)));
    lines.initialize("2025-11-25", json!({"sampling":{}})).await;
    lines.send(&wire::call(1, "sample", json!({}))).await;
    let request = lines.recv().await;
    assert!(is_sampling(&request), "{request}");
    lines
        .send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}))
        .await;
    let rest = lines.until(|m| m["id"] == 1).await;
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert_eq!(rest[0]["method"], "notifications/cancelled");
    assert_eq!(rest[0]["params"]["requestId"], request["id"]);
    lines.end().await;
}
