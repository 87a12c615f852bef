//! Faults in what the CLI writes on stdout, against the fake CLI:
//! garbage, truncated and invalid UTF-8 lines, over-long and huge lines,
//! unknown message types and subtypes.

mod fake_support;

use claude_agent::message::SystemMessage;
use claude_agent::{ContentBlock, Error, Message, query};
use fake_support::{bounded, collect, errors, fake, final_result};
use serde_json::json;

fn assistant_texts(messages: &[claude_agent::Result<Message>]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            Ok(Message::Assistant(a)) => Some(a.text()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_truncated_and_invalid_utf8_lines_are_skipped() {
    let fake = fake("stdout_garbage", json!({}));
    let messages = bounded(30, collect(query("hi", fake.options.clone()))).await;
    assert!(errors(&messages).is_empty(), "{messages:?}");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_over_the_cap_is_reported_and_the_session_goes_on() {
    let fake = fake("huge_line", json!({"bytes": 3 << 20}));
    let options = fake.options.clone().max_line_bytes(1 << 20);
    let messages = bounded(60, collect(query("hi", options))).await;
    let errs = errors(&messages);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        matches!(errs[0], Error::LineTooLong { limit } if *limit == 1 << 20),
        "{errs:?}"
    );
    assert_eq!(assistant_texts(&messages), ["after the huge line"]);
    assert_eq!(
        final_result(&messages).result.as_deref(),
        Some("after the huge line")
    );
    fake.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_64_mib_line_is_delivered_whole() {
    let fake = fake("huge_line", json!({"bytes": 64 << 20}));
    let messages = bounded(120, collect(query("hi", fake.options.clone()))).await;
    assert!(errors(&messages).is_empty(), "{:?}", errors(&messages));
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
