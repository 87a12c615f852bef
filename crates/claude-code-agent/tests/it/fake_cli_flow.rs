//! Flow control against the testkit's fake CLI: a user who does not read
//! never stalls tool calls or control requests; the queue of unread
//! messages is bounded and fails loudly; writes to a CLI that does not read
//! wait instead of queueing; messages go to one stream at a time.

use std::time::{Duration, Instant};

use crate::support::fake_cli::{bounded, calc_server, collect, errors, fake, final_result};
use claude_code_agent::{Client, Error, Message, UserInput};
use futures::StreamExt;
use serde_json::json;

fn texts(messages: &[claude_code_agent::Result<Message>]) -> usize {
    messages
        .iter()
        .filter(|m| matches!(m, Ok(Message::Assistant(_))))
        .count()
}

/// 4 MB of messages nobody reads: the reader keeps reading, so the tool
/// call behind them is answered and `set_model`/`mcp_status` get their
/// answers while the messages wait; then every message is delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_who_does_not_read_stalls_neither_tools_nor_control_requests() {
    let fake = fake(
        "flood",
        json!({"n": 400, "bytes": 10_000, "max_call_ms": 10_000, "hold_ms": 1500}),
    );
    let client = bounded(
        20,
        Client::connect(fake.options.clone().mcp_server(calc_server(None))),
    )
    .await
    .expect("connect");
    client.query("flood me").await.expect("query");
    // Not reading: control requests are answered all the same.
    let model = bounded(20, client.set_model(Some("claude-other")))
        .await
        .expect("set_model while messages wait");
    assert_eq!(model.as_deref(), Some("claude-other"));
    bounded(20, client.mcp_status()).await.expect("mcp_status");

    let messages = bounded(30, collect(client.receive_response())).await;
    assert!(errors(&messages).is_empty(), "{:?}", errors(&messages));
    assert_eq!(texts(&messages), 400);
    let result = final_result(&messages);
    let text = result.result.unwrap_or_default();
    assert!(text.starts_with("flooded 400 call_ms="), "{text}");
    bounded(20, client.disconnect()).await.expect("disconnect");
    fake.assert_gone().await;
}

/// Past `max_buffered_bytes` of unread messages the session ends loudly:
/// what was queued first, then `MessageBufferFull`, then the end; the CLI
/// is gone and later sends fail with the same error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_messages_past_the_budget_end_the_session_with_an_error() {
    let fake = fake("flood", json!({"n": 400, "bytes": 10_000, "hold_ms": 5000}));
    let options = fake.options.clone().max_buffered_bytes(256 << 10);
    let client = bounded(20, Client::connect(options))
        .await
        .expect("connect");
    client.query("flood me").await.expect("query");
    // Give the flood time to pass the budget while nobody reads.
    fake.assert_process_gone().await;

    let messages = bounded(20, collect(client.receive_messages())).await;
    let n = texts(&messages);
    assert!(
        (10..=40).contains(&n),
        "{n} messages of 10 kB fit in 256 KiB?"
    );
    match messages.last() {
        Some(Err(Error::MessageBufferFull { limit })) => assert_eq!(*limit, 256 << 10),
        other => panic!("expected MessageBufferFull last, got {other:?}"),
    }
    assert_eq!(errors(&messages).len(), 1);
    assert!(matches!(
        client.query("again").await,
        Err(Error::MessageBufferFull { .. })
    ));
    bounded(20, client.disconnect()).await.expect("disconnect");
    claude_code_agent_testkit::tasks::assert_none_left(Duration::from_secs(5)).await;
}

/// A CLI that does not read its stdin makes `query` wait (the pipe is
/// full) rather than buffer the prompt; it completes once the CLI reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writing_to_a_cli_that_does_not_read_waits_for_it() {
    let stall = Duration::from_millis(1500);
    let fake = fake("chat", json!({"stall_ms": stall.as_millis() as u64}));
    let client = bounded(20, Client::connect(fake.options.clone()))
        .await
        .expect("connect");
    client.query("one").await.expect("first query");
    // The fake now sleeps without reading; 4 MB cannot fit in the pipe.
    let started = Instant::now();
    let big = UserInput::text("y".repeat(4 << 20));
    bounded(20, client.query(big)).await.expect("second query");
    let waited = started.elapsed();
    assert!(
        waited >= stall / 2,
        "the 4 MB prompt was taken in {waited:?}: it was buffered, not written"
    );
    let first = bounded(20, collect(client.receive_response())).await;
    assert_eq!(
        final_result(&first).result.as_deref(),
        Some("You said: one")
    );
    let second = bounded(20, collect(client.receive_response())).await;
    let text = final_result(&second).result.unwrap_or_default();
    assert_eq!(text.len(), "You said: ".len() + (4 << 20));
    bounded(20, client.disconnect()).await.expect("disconnect");
    fake.assert_gone().await;
}

/// Messages go to one stream at a time; a second one says so, and once the
/// first is dropped the next stream reads on where it stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_stream_at_once_is_refused_and_reading_resumes_after() {
    let fake = fake("chat", json!({}));
    let client = bounded(20, Client::connect(fake.options.clone()))
        .await
        .expect("connect");
    client.query("hello").await.expect("query");
    let mut first = client.receive_response();
    let init = bounded(20, first.next()).await;
    assert!(matches!(init, Some(Ok(Message::System(_)))), "{init:?}");
    let second = bounded(20, collect(client.receive_messages())).await;
    assert!(
        matches!(second.as_slice(), [Err(Error::AlreadyReceiving)]),
        "{second:?}"
    );
    drop(first);
    let rest = bounded(20, collect(client.receive_response())).await;
    assert_eq!(
        final_result(&rest).result.as_deref(),
        Some("You said: hello")
    );
    bounded(20, client.disconnect()).await.expect("disconnect");
    fake.assert_gone().await;
}
