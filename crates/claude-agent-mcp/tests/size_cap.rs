//! The cap on a result's text: cut at a char boundary, with a note.
mod common;

use claude_agent_mcp::{RawResult, Server, Tool};
use common::*;
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Len {
    chars: usize,
}

fn big(name: &str) -> Tool {
    // Two-byte characters, so a byte cut would split one.
    Tool::new(name, "returns that many characters", |l: Len| async move {
        "é".repeat(l.chars)
    })
}

#[tokio::test]
async fn default_cap_is_one_mebi_characters() {
    let server = Server::builder("s", "1").tool(big("big")).build();
    let limit = 1 << 20;
    let reply = ask(&server, call(1, "big", json!({"chars": limit}))).await;
    assert_eq!(
        text(result(&reply)).chars().count(),
        limit,
        "at the limit: untouched"
    );

    let reply = ask(&server, call(2, "big", json!({"chars": limit + 10}))).await;
    let t = text(result(&reply));
    assert!(t.starts_with(&"é".repeat(limit)));
    assert!(
        t.contains("10 of 1048586 characters were cut"),
        "{}",
        &t[t.len() - 200..]
    );
    assert_eq!(result(&reply)["isError"], false);
}

#[tokio::test]
async fn server_and_tool_caps_cut_at_char_boundaries_with_a_note() {
    let server = Server::builder("s", "1")
        .max_result_chars(100)
        .tool(big("server_cap"))
        .tool(big("tool_cap").max_result_chars(10))
        .build();
    let reply = ask(&server, call(1, "server_cap", json!({"chars": 150}))).await;
    let t = text(result(&reply));
    let (kept, note) = t.split_once("\n\n").unwrap();
    assert_eq!(kept, "é".repeat(100));
    assert!(
        note.contains("50 of 150 characters were cut") && note.contains("limit of 100"),
        "{note}"
    );

    let reply = ask(&server, call(2, "tool_cap", json!({"chars": 150}))).await;
    let t = text(result(&reply));
    assert!(
        t.starts_with(&format!(
            "{}\n\n[Output truncated: 140 of 150",
            "é".repeat(10)
        )),
        "{t}"
    );

    let reply = ask(&server, call(3, "server_cap", json!({"chars": 99}))).await;
    assert_eq!(text(result(&reply)), "é".repeat(99));
}

#[tokio::test]
async fn cap_applies_to_raw_results_across_blocks() {
    let server = Server::builder("s", "1")
        .max_result_chars(5)
        .tool(Tool::raw("blocks", "", json!({"type":"object"}), |_: Value| async {
            RawResult(json!({"content":[{"type":"text","text":"abc"},{"type":"text","text":"defgh"},{"type":"text","text":"ijk"}]}))
        }))
        .build();
    let reply = ask(&server, call(1, "blocks", json!({}))).await;
    let content = result(&reply)["content"].as_array().unwrap().clone();
    assert_eq!(content.len(), 2, "{content:?}");
    assert_eq!(content[0]["text"], "abc");
    let second = content[1]["text"].as_str().unwrap();
    assert!(
        second.starts_with("de\n\n[Output truncated: 6 of 11"),
        "{second}"
    );
}

#[tokio::test]
async fn invalid_argument_messages_are_capped_too() {
    // Found by fuzzing: the message quotes the model's arguments, escaped
    // (a NUL becomes six characters), so it can outgrow the cap.
    let server = Server::builder("s", "1")
        .max_result_chars(200)
        .tool(big("big"))
        .build();
    let reply = ask(
        &server,
        call(1, "big", json!({"chars": "\u{0}".repeat(500)})),
    )
    .await;
    assert_eq!(result(&reply)["isError"], true);
    let t = text(result(&reply));
    assert!(t.starts_with("Invalid arguments"), "{t}");
    assert!(t.chars().count() < 400, "{} characters", t.chars().count());
}
