//! Faults in what the CLI writes on stdout, against the fake CLI:
//! garbage (skipped), truncated, invalid UTF-8 and undecodable objects
//! (reported as `Message::SkippedLine`, the stream goes on), over-long and
//! huge lines, unknown message types and subtypes. None of them is an
//! error item.

use crate::support::fake_cli::{bounded, collect, errors, fake, final_result};
use claude_code_agent::message::{SkipReason, SkippedLine, SystemMessage};
use claude_code_agent::{Client, ContentBlock, Message, query};
use serde_json::json;

fn assistant_texts(messages: &[claude_code_agent::Result<Message>]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            Ok(Message::Assistant(a)) => Some(a.text()),
            _ => None,
        })
        .collect()
}

/// The lines a `stdout_garbage` turn reports: those that start as a JSON
/// object and do not parse (a message was lost). The rest of the garbage
/// (plain text, a diagnostic, a JSON array, bytes that are not UTF-8, blank
/// lines) is skipped without a word to the user.
const BROKEN_OBJECTS: [&str; 2] = ["\"te", "\"bad\""];

/// The reports of skipped lines in a transcript.
fn skipped(messages: &[claude_code_agent::Result<Message>]) -> Vec<&SkippedLine> {
    messages
        .iter()
        .filter_map(|m| match m {
            Ok(Message::SkippedLine(s)) => Some(s),
            _ => None,
        })
        .collect()
}

/// The excerpts of the reports of lines that did not parse, asserting that
/// every report is one, with serde's error, and that no item is an error.
fn invalid_reports(messages: &[claude_code_agent::Result<Message>]) -> Vec<&str> {
    assert!(errors(messages).is_empty(), "{messages:?}");
    skipped(messages)
        .into_iter()
        .map(|s| match &s.reason {
            SkipReason::Invalid(e) => {
                assert!(e.is_syntax() || e.is_eof(), "{e}");
                s.excerpt.as_str()
            }
            other => panic!("not a report of a line that does not parse: {other:?}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_is_skipped_and_broken_objects_are_reported() {
    let fake = fake("stdout_garbage", json!({}));
    let messages = bounded(30, collect(query("hi", fake.options.clone()))).await;
    let reports = invalid_reports(&messages);
    assert_eq!(reports.len(), BROKEN_OBJECTS.len(), "{reports:?}");
    for (line, part) in reports.iter().zip(BROKEN_OBJECTS) {
        assert!(line.contains(part), "{line:?} does not contain {part:?}");
    }
    assert_eq!(assistant_texts(&messages), ["after the garbage"]);
    assert!(matches!(
        messages.first(),
        Some(Ok(Message::System(SystemMessage::Init(_))))
    ));
    assert_eq!(
        final_result(&messages).result.as_deref(),
        Some("after the garbage")
    );
    fake.assert_gone().await;
}

/// A JSON object serde cannot hold (`1e999`: serde calls a number out of
/// range a syntax error) ends neither `query()` nor `receive_response`, and
/// the user is told: it is one `Message::SkippedLine` with the line, after
/// which both go on to the end of the turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undecodable_line_does_not_end_the_stream() {
    let check = |messages: &[claude_code_agent::Result<Message>]| {
        let reports = invalid_reports(messages);
        // The garbage's broken objects, then the undecodable line.
        assert_eq!(reports.len(), BROKEN_OBJECTS.len() + 1, "{reports:?}");
        assert_eq!(
            reports.last().copied(),
            Some("{\"type\":\"assistant\",\"n\":1e999}")
        );
        let at = messages
            .iter()
            .position(|m| matches!(m, Ok(Message::SkippedLine(s)) if s.excerpt.contains("1e999")))
            .expect("the report");
        // The messages after the report: the turn went on.
        assert!(
            messages[at + 1..]
                .iter()
                .any(|m| matches!(m, Ok(Message::Assistant(a)) if a.text() == "after the garbage")),
            "{messages:?}"
        );
        assert_eq!(
            final_result(messages).result.as_deref(),
            Some("after the garbage")
        );
    };
    let fake = fake("stdout_garbage", json!({"undecodable": true}));
    check(&bounded(30, collect(query("hi", fake.options.clone()))).await);
    fake.assert_gone().await;

    let fake = crate::support::fake_cli::fake("stdout_garbage", json!({"undecodable": true}));
    let client = bounded(20, Client::connect(fake.options.clone()))
        .await
        .expect("connect");
    client.query("hi").await.expect("query");
    check(&bounded(30, collect(client.receive_response())).await);
    bounded(20, client.disconnect()).await.expect("disconnect");
    fake.assert_gone().await;
}

/// A line over the cap is reported as a `Message::SkippedLine` (its
/// length, the cap, its first bytes) and the stream goes on, in `query()`
/// and in `receive_response` alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_over_the_cap_is_reported_and_the_session_goes_on() {
    let check = |messages: &[claude_code_agent::Result<Message>]| {
        assert!(errors(messages).is_empty(), "{messages:?}");
        let reports = skipped(messages);
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert_eq!(reports[0].reason, SkipReason::TooLong { limit: 1 << 20 });
        assert!(reports[0].len > 3 << 20, "{:?}", reports[0].len);
        assert!(
            reports[0]
                .excerpt
                .starts_with(r#"{"type":"assistant","message":{"id":"msg_huge""#),
            "{:?}",
            reports[0].excerpt
        );
        assert_eq!(assistant_texts(messages), ["after the huge line"]);
        assert_eq!(
            final_result(messages).result.as_deref(),
            Some("after the huge line")
        );
    };
    let fake = fake("huge_line", json!({"bytes": 3 << 20}));
    let options = fake.options.clone().max_line_bytes(1 << 20);
    check(&bounded(60, collect(query("hi", options))).await);
    fake.assert_gone().await;

    let fake = crate::support::fake_cli::fake("huge_line", json!({"bytes": 3 << 20}));
    let options = fake.options.clone().max_line_bytes(1 << 20);
    let client = bounded(20, Client::connect(options))
        .await
        .expect("connect");
    client.query("hi").await.expect("query");
    check(&bounded(60, collect(client.receive_response())).await);
    bounded(20, client.disconnect()).await.expect("disconnect");
    fake.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_64_mib_line_is_delivered_whole() {
    let fake = fake("huge_line", json!({"bytes": 64 << 20}));
    let messages = bounded(120, collect(query("hi", fake.options.clone()))).await;
    assert!(errors(&messages).is_empty(), "{:?}", errors(&messages));
    assert!(skipped(&messages).is_empty(), "{:?}", skipped(&messages));
    let texts = assistant_texts(&messages);
    assert_eq!(texts.len(), 2);
    assert_eq!(texts[0].len(), 64 << 20);
    assert!(texts[0].bytes().all(|b| b == b'x'));
    assert_eq!(texts[1], "after the huge line");
    final_result(&messages);
    fake.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_types_subtypes_blocks_and_requests_are_not_errors() {
    let fake = fake("unknown_messages", json!({}));
    let messages = bounded(30, collect(query("hi", fake.options.clone()))).await;
    assert!(errors(&messages).is_empty(), "{messages:?}");
    assert!(skipped(&messages).is_empty(), "{messages:?}");
    let unknown_type = messages.iter().find_map(|m| match m {
        Ok(Message::Unknown(v)) => Some(v.clone()),
        _ => None,
    });
    assert_eq!(
        unknown_type.as_ref().and_then(|v| v["type"].as_str()),
        Some("brand_new_type"),
        "{messages:?}"
    );
    assert_eq!(unknown_type.unwrap()["payload"], json!({"x": 1}));
    assert!(
        messages.iter().any(|m| matches!(m,
            Ok(Message::System(SystemMessage::Unknown(v))) if v["subtype"] == "brand_new_subtype")),
        "{messages:?}"
    );
    let blocks: Vec<ContentBlock> = messages
        .iter()
        .filter_map(|m| match m {
            Ok(Message::Assistant(a)) => Some(a.content().to_vec()),
            _ => None,
        })
        .flatten()
        .collect();
    assert!(
        blocks
            .iter()
            .any(|b| matches!(b, ContentBlock::Unknown(v) if v["type"] == "hologram")),
        "{blocks:?}"
    );
    // The fake checked that its unknown control request got a control error.
    final_result(&messages);
    fake.assert_gone().await;
}
