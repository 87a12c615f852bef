//! The Streamable HTTP client against a server that misbehaves after a
//! normal handshake: streams cut mid-event, half events, stalls before and
//! after the headers, an answer followed by a stall, and messages over the
//! cap (and one that stalls in the handshake itself), events that are not
//! JSON. Each fault fails only its own request, clearly and in bounded
//! time; the client works afterwards; and once it is gone no task of its
//! is left on the runtime.

use std::future::Future;
use std::time::{Duration, Instant};

use crate::support::fault_http;
use claude_code_agent_mcp::client::{
    ClientOptions, Error, HandshakeMode, HttpOptions, HttpTransport, McpClient,
};
use claude_code_agent_testkit::tasks::Baseline;
use fault_http::FaultServer;
use serde_json::json;

/// The message cap the tests set (the default is 64 MiB).
const CAP: usize = 64 * 1024;

async fn connect(server: &FaultServer, request_timeout: Duration) -> McpClient {
    let http = HttpOptions::new(&server.url).max_message_bytes(CAP);
    let options = ClientOptions::new("faults", "1")
        .request_timeout(request_timeout)
        .handshake(HandshakeMode::Initialize);
    McpClient::connect(HttpTransport::new(http).unwrap(), options)
        .await
        .unwrap()
}

/// Runs `f`, failing the test if it takes 5 s; returns its output and how long it took.
async fn bounded<T>(f: impl Future<Output = T>) -> (T, Duration) {
    let started = Instant::now();
    let out = tokio::time::timeout(Duration::from_secs(5), f)
        .await
        .expect("the call hung");
    (out, started.elapsed())
}

/// A failing call: its error and how long it took.
async fn fails(client: &McpClient, tool: &str) -> (Error, Duration) {
    let (result, took) = bounded(client.call_tool(tool, json!({}))).await;
    (result.unwrap_err(), took)
}

async fn still_works(client: &McpClient) {
    let (result, _) = bounded(client.call_tool("ok", json!({}))).await;
    assert_eq!(result.unwrap().text_content(), "ok");
}

#[tokio::test]
async fn a_stream_cut_mid_event_fails_the_call_and_the_client_goes_on() {
    let server = FaultServer::start();
    let tasks = Baseline::now();
    let client = connect(&server, Duration::from_secs(10)).await;
    assert!(tasks.exceeded(), "a live client has tasks");
    let (e, _) = fails(&client, "cut").await;
    assert!(e.is_transport(), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("the SSE stream broke") && text.contains("before the response"),
        "{text}"
    );
    still_works(&client).await;
    client.close().await.unwrap();
    drop(client);
    tasks.settled("cut stream").await;
}

#[tokio::test]
async fn half_an_event_then_close_fails_the_call_and_the_client_goes_on() {
    let server = FaultServer::start();
    let tasks = Baseline::now();
    let client = connect(&server, Duration::from_secs(10)).await;
    let (e, _) = fails(&client, "half").await;
    assert!(e.is_transport(), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("the SSE stream ended before the response")
            && text.contains("an unterminated event was discarded"),
        "{text}"
    );
    still_works(&client).await;
    drop(client);
    tasks.settled("half event").await;
}

/// A call to `tool`, which the server never answers, times out after the
/// client's 500 ms; the client goes on, and once closed leaves no task (the
/// cancellation the server never answers must not keep one alive).
async fn stalled_call_times_out_and_the_client_goes_on(tool: &str) {
    let server = FaultServer::start();
    let tasks = Baseline::now();
    let client = connect(&server, Duration::from_millis(500)).await;
    let (e, took) = fails(&client, tool).await;
    assert!(e.is_timeout(), "{e:?}");
    assert_eq!(e.to_string(), "request tools/call timed out after 500ms");
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_secs(2),
        "{took:?}"
    );
    still_works(&client).await;
    client.close().await.unwrap();
    drop(client);
    tasks.settled(tool).await;
}

#[tokio::test]
async fn a_stall_after_the_headers_times_out_and_the_client_goes_on() {
    stalled_call_times_out_and_the_client_goes_on("stall_body").await;
}

#[tokio::test]
async fn no_headers_at_all_times_out_and_the_client_goes_on() {
    stalled_call_times_out_and_the_client_goes_on("stall_head").await;
}

#[tokio::test]
async fn a_stream_kept_open_after_its_response_does_not_hold_the_call() {
    let server = FaultServer::start();
    let tasks = Baseline::now();
    let client = connect(&server, Duration::from_secs(10)).await;
    let (result, took) = bounded(client.call_tool("answer_then_stall", json!({}))).await;
    assert_eq!(result.unwrap().text_content(), "answered");
    assert!(took < Duration::from_secs(2), "{took:?}");
    still_works(&client).await;
    drop(client);
    tasks.settled("answer then stall").await;
}

#[tokio::test]
async fn an_sse_event_over_the_cap_fails_only_its_call() {
    let server = FaultServer::start();
    let tasks = Baseline::now();
    let client = connect(&server, Duration::from_secs(10)).await;
    // The endless event and a good call at the same time.
    let ((big, ok), _) = bounded(async {
        tokio::join!(
            client.call_tool("big_sse", json!({})),
            client.call_tool("ok", json!({}))
        )
    })
    .await;
    assert_eq!(ok.unwrap().text_content(), "ok");
    let e = big.unwrap_err();
    assert!(e.is_invalid_response(), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("an SSE event exceeds the message cap of 65536 bytes")
            && text.contains("bytes seen"),
        "{text}"
    );
    still_works(&client).await;
    client.close().await.unwrap();
    drop(client);
    tasks.settled("big SSE event").await;
}

#[tokio::test]
async fn a_json_body_over_the_cap_fails_only_its_call() {
    let server = FaultServer::start();
    let tasks = Baseline::now();
    let client = connect(&server, Duration::from_secs(10)).await;
    // Refused on its Content-Length, unread.
    let (e, _) = fails(&client, "big_json_declared").await;
    assert!(e.is_invalid_response(), "{e:?}");
    assert!(
        e.to_string().contains(
            "a body of 1073741824 bytes (its Content-Length) exceeds the message cap of 65536 bytes"
        ),
        "{e}"
    );
    still_works(&client).await;
    // No length: refused as soon as it crosses the cap.
    let (e, _) = fails(&client, "big_json_chunked").await;
    assert!(e.is_invalid_response(), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("the body exceeds the message cap of 65536 bytes")
            && text.contains("bytes seen"),
        "{text}"
    );
    still_works(&client).await;
    // An error status's body is capped too.
    let (e, _) = fails(&client, "big_error").await;
    assert!(e.is_transport(), "{e:?}");
    assert_eq!(e.status(), Some(500));
    let text = e.to_string();
    assert!(
        text.contains("HTTP 500 Internal Server Error")
            && text.contains("exceeds the message cap of 65536 bytes"),
        "{text}"
    );
    still_works(&client).await;
    drop(client);
    tasks.settled("big JSON body").await;
}

#[tokio::test]
async fn a_stall_on_notifications_initialized_fails_connect_in_time() {
    let server = FaultServer::stalling_initialized();
    let tasks = Baseline::now();
    let http = HttpOptions::new(&server.url).max_message_bytes(CAP);
    let options = ClientOptions::new("faults", "1")
        .request_timeout(Duration::from_millis(500))
        .handshake(HandshakeMode::Initialize);
    let transport = HttpTransport::new(http).unwrap();
    let (result, took) = bounded(McpClient::connect(transport, options)).await;
    let e = result.unwrap_err();
    assert!(e.is_timeout(), "{e:?}");
    assert_eq!(
        e.to_string(),
        "notification notifications/initialized timed out after 500ms"
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    tasks.settled("stalled handshake").await;
}

#[tokio::test]
async fn an_sse_event_that_is_not_json_fails_its_call_saying_so() {
    let server = FaultServer::start();
    let tasks = Baseline::now();
    let client = connect(&server, Duration::from_secs(10)).await;
    // The response itself (no method): the call fails at once, naming it,
    // though the stream stays open.
    let (e, took) = fails(&client, "bad_event").await;
    assert!(e.is_invalid_response(), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains(": an SSE event is not valid JSON: "),
        "{text}"
    );
    assert!(text.ends_with(r#""result":{"isError":tru}}"#), "{text}");
    // serde's reason is the source, not repeated in the message.
    let serde = std::error::Error::source(&e)
        .and_then(|s| s.downcast_ref::<serde_json::Error>())
        .unwrap_or_else(|| panic!("no serde_json source: {e:?}"));
    assert!(
        serde
            .to_string()
            .starts_with("expected ident at line 1 column "),
        "{serde}"
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    // A notification that is not JSON, then the end: the end is blamed,
    // and the event named.
    let (e, _) = fails(&client, "bad_note").await;
    let text = e.to_string();
    assert!(
        text.contains("the SSE stream ended after an event it could not read before the response, with no event id to resume from"),
        "{text}"
    );
    // The event is the cause: its excerpt, and serde's reason below it.
    let event = std::error::Error::source(&e)
        .and_then(|s| s.downcast_ref::<claude_code_agent_mcp::client::Error>())
        .unwrap_or_else(|| panic!("no source: {e:?}"));
    assert!(event.is_invalid_response(), "{event:?}");
    assert!(
        event.to_string().contains(
            r#"an SSE event is not valid JSON: {"jsonrpc":"2.0","method":"notifications/progress""#
        ),
        "{event}"
    );
    let serde = std::error::Error::source(event)
        .and_then(|s| s.downcast_ref::<serde_json::Error>())
        .unwrap_or_else(|| panic!("no serde_json source: {event:?}"));
    assert!(
        serde
            .to_string()
            .starts_with("expected value at line 1 column "),
        "{serde}"
    );
    still_works(&client).await;
    client.close().await.unwrap();
    drop(client);
    tasks.settled("bad events").await;
}

#[tokio::test]
async fn a_string_cut_mid_emoji_is_read_as_the_replacement_character() {
    let server = FaultServer::start();
    let client = connect(&server, Duration::from_secs(10)).await;
    for tool in ["cut_emoji", "cut_emoji_sse"] {
        let (result, _) = bounded(client.call_tool(tool, json!({}))).await;
        assert_eq!(result.unwrap().text_content(), "ab\u{FFFD}", "{tool}");
    }
    client.close().await.unwrap();
}
