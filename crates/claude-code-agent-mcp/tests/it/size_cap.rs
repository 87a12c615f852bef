//! The cap on a result: its text cut at a char boundary, its other parts
//! (images, audio, embedded resources, unknown blocks, structuredContent,
//! `_meta`) kept whole or removed, and a note saying what was cut.

use crate::support::*;
use claude_code_agent_mcp::{CallToolResult, Content, RawResult, Server, Tool};
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
        .tool(Tool::new("blocks", "", |_: Value| async {
            RawResult(json!({"content":[{"type":"text","text":"abc"},{"type":"text","text":"defgh"},{"type":"text","text":"ijk"}]}))
        }).input_schema(json!({"type":"object"})))
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

// ------------------------------------------- the cap covers the whole result

/// A server capped at `cap` whose `parts` tool returns whatever `make` builds.
fn parts_server(cap: usize, make: fn() -> CallToolResult) -> Server {
    Server::builder("s", "1")
        .max_result_chars(cap)
        .tool(
            Tool::new("parts", "", move |_: Value| async move { make() })
                .input_schema(json!({"type":"object"})),
        )
        .build()
}

/// The serialized size of a result in characters, the note excluded.
fn size_without_note(result: &Value) -> usize {
    let mut r = result.clone();
    if let Some(blocks) = r["content"].as_array_mut() {
        for b in blocks.iter_mut() {
            if let Some(t) = b["text"].as_str()
                && let Some(at) = t.find("[Output truncated")
            {
                b["text"] = Value::from(t[..at].trim_end());
            }
        }
        blocks.retain(|b| b["text"] != "");
    }
    r.to_string().chars().count()
}

/// The note of a capped result.
fn note(result: &Value) -> String {
    let t = text(result);
    let at = t
        .find("[Output truncated")
        .unwrap_or_else(|| panic!("no note in {result}"));
    t[at..].to_owned()
}

const CAP: usize = 1000;

/// (what, the result a tool returns, what the note must name)
type Case = (&'static str, fn() -> CallToolResult, &'static str);

fn filler(n: usize) -> String {
    "A".repeat(n)
}

fn check_capped(result: &Value) {
    // The envelope of a result ({"content":[],"isError":false} and block
    // keys) is not part of the count; allow for it.
    assert!(
        size_without_note(result) <= CAP + 120,
        "{} characters: {}",
        size_without_note(result),
        &result.to_string()[..300.min(result.to_string().len())]
    );
    assert!(note(result).len() < 400, "{}", note(result));
}

#[tokio::test]
async fn no_part_of_a_result_escapes_the_cap() {
    use claude_code_agent_mcp::types::ResourceContents;
    let cases: Vec<Case> = vec![
        (
            "image",
            || CallToolResult::success(vec![Content::image(filler(5000), "image/png")]),
            "image",
        ),
        (
            "audio",
            || CallToolResult::success(vec![Content::audio(filler(5000), "audio/wav")]),
            "audio",
        ),
        (
            "embedded blob",
            || {
                CallToolResult::success(vec![Content::resource(ResourceContents::blob(
                    "file:///x",
                    filler(5000),
                ))])
            },
            "resource",
        ),
        (
            "embedded text",
            || {
                CallToolResult::success(vec![Content::resource(ResourceContents::text(
                    "file:///x",
                    filler(5000),
                ))])
            },
            "resource",
        ),
        (
            "unknown block",
            || {
                CallToolResult::success(vec![
                    Content::from_value(json!({"type":"x-future","data":filler(5000)})).unwrap(),
                ])
            },
            "x-future",
        ),
        (
            "structured content",
            || CallToolResult::text("small").with_structured_content(json!({"rows": filler(5000)})),
            "structuredContent",
        ),
        (
            "_meta",
            || {
                let mut meta = serde_json::Map::new();
                meta.insert("blob".into(), filler(5000).into());
                CallToolResult::text("small").with_meta(meta)
            },
            "_meta",
        ),
    ];
    for (what, make, named) in cases {
        let server = parts_server(CAP, make);
        let reply = ask(&server, call(1, "parts", json!({}))).await;
        let r = result(&reply);
        check_capped(r);
        let note = note(r);
        assert!(note.contains(named), "{what}: {note}");
        assert!(note.contains(&CAP.to_string()), "{what}: {note}");
    }
}

#[tokio::test]
async fn structured_content_is_kept_whole_and_text_cut_around_it() {
    // Json(v) of a tool with an output schema: text and structured content
    // both hold the value. Structured content is what the CLI shows the
    // model, so it is kept and the text is cut.
    let server = parts_server(CAP, || {
        let value = json!({"rows": filler(600)});
        CallToolResult::text(value.to_string()).with_structured_content(value)
    });
    let reply = ask(&server, call(1, "parts", json!({}))).await;
    let r = result(&reply);
    check_capped(r);
    assert_eq!(r["structuredContent"]["rows"], filler(600));
    assert_eq!(r["isError"], false);
    assert!(note(r).contains("characters"), "{}", note(r));
}

#[tokio::test]
async fn a_tool_whose_structured_content_cannot_fit_reports_an_error() {
    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Rows {
        rows: String,
    }
    let server = Server::builder("s", "1")
        .max_result_chars(CAP)
        .tool(
            Tool::new("rows", "", |_: Value| async {
                claude_code_agent_mcp::Json(Rows { rows: filler(5000) })
            })
            .input_schema(json!({"type":"object"}))
            .output_schema::<Rows>(),
        )
        .build();
    let reply = ask(&server, call(1, "rows", json!({}))).await;
    let r = result(&reply);
    check_capped(r);
    assert!(r.get("structuredContent").is_none(), "{r}");
    // Its declared output could not be delivered: an error result, not a
    // success that breaks the tool's output schema.
    assert_eq!(r["isError"], true);
    assert!(note(r).contains("structuredContent"), "{}", note(r));
}

#[tokio::test]
async fn small_parts_before_a_big_one_are_kept() {
    let server = parts_server(CAP, || {
        CallToolResult::success(vec![
            Content::text("caption"),
            Content::image("AAAA", "image/png"),
            Content::image(filler(5000), "image/png"),
            Content::text("after"),
        ])
    });
    let reply = ask(&server, call(1, "parts", json!({}))).await;
    let r = result(&reply);
    check_capped(r);
    let blocks = r["content"].as_array().unwrap();
    assert_eq!(blocks[0]["text"], "caption");
    assert_eq!(blocks[1]["data"], "AAAA");
    assert!(blocks.iter().all(|b| b["data"] != filler(5000)), "{r}");
    assert!(note(r).contains("image"), "{}", note(r));
}
