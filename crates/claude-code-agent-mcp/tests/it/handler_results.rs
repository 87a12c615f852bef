//! What a handler returns as a `serde_json::Value`: a map is JSON-encoded
//! text (and `structuredContent` when the tool declares an output schema),
//! a list of content parts is sent as content, a string or number as its
//! text. A complete result is only taken as such when it says so, with the
//! explicit `RawResult` (or a `CallToolResult`).

use crate::support::*;
use claude_code_agent_mcp::{RawResult, Server, Tool};
use serde_json::{Value, json};

/// A server whose `give` tool returns `value`, and whose `give_structured`
/// declares an output schema.
fn server(value: Value) -> Server {
    let structured = value.clone();
    Server::builder("results", "1")
        .tool(Tool::raw(
            "give",
            "",
            json!({"type":"object"}),
            move |_: Value| {
                let v = value.clone();
                async move { v }
            },
        ))
        .tool(
            Tool::raw(
                "give_structured",
                "",
                json!({"type":"object"}),
                move |_: Value| {
                    let v = structured.clone();
                    async move { v }
                },
            )
            .output_schema_value(json!({"type":"object"})),
        )
        .build()
}

async fn give(value: Value, tool: &str) -> Value {
    let reply = ask(&server(value), call(1, tool, json!({}))).await;
    result(&reply).clone()
}

#[tokio::test]
async fn a_map_is_json_text_not_a_malformed_result() {
    let r = give(json!({"name":"Alice","id":7}), "give").await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        serde_json::from_str::<Value>(&text(&r)).unwrap(),
        json!({"name":"Alice","id":7})
    );
    assert!(r.get("structuredContent").is_none(), "{r}");

    // Even one that looks like a result: only RawResult says "take it as is".
    let looks_raw = json!({"content":[{"type":"text","text":"hi"}]});
    let r = give(looks_raw.clone(), "give").await;
    assert_eq!(serde_json::from_str::<Value>(&text(&r)).unwrap(), looks_raw);
}

#[tokio::test]
async fn a_map_from_a_tool_with_an_output_schema_is_also_structured_content() {
    let r = give(json!({"count":3}), "give_structured").await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"], json!({"count":3}));
    assert_eq!(text(&r), r#"{"count":3}"#);
}

#[tokio::test]
async fn a_list_of_content_parts_is_sent_as_content() {
    let parts = json!([
        {"type":"text","text":"a chart"},
        {"type":"image","data":"AAAA","mimeType":"image/png"},
        {"type":"text","text":42}
    ]);
    let r = give(parts, "give").await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        r["content"],
        json!([
            {"type":"text","text":"a chart"},
            {"type":"image","data":"AAAA","mimeType":"image/png"},
            {"type":"text","text":"42"}
        ])
    );
}

#[tokio::test]
async fn other_values_are_text() {
    assert_eq!(text(&give(json!([1, 2]), "give").await), "[1,2]");
    assert_eq!(text(&give(json!("plain"), "give").await), "plain");
    assert_eq!(text(&give(json!(2.5), "give").await), "2.5");
    assert_eq!(text(&give(json!(true), "give").await), "true");
    assert_eq!(give(Value::Null, "give").await["content"], json!([]));
    // A list that is not all content parts is a value like any other.
    let mixed = json!([{"type":"text","text":"x"}, 3]);
    assert_eq!(
        text(&give(mixed, "give").await),
        r#"[{"type":"text","text":"x"},3]"#
    );
}

#[tokio::test]
async fn a_list_with_a_malformed_part_says_what_is_wrong() {
    let r = give(json!([{"type":"image","data":"AAAA"}]), "give").await;
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("content[0]"), "{r}");
}

#[tokio::test]
async fn raw_result_is_the_explicit_way_to_return_a_whole_result() {
    let raw = json!({"content":[{"type":"text","text":"partial"}],"isError":true,"_meta":{"k":1}});
    let server = Server::builder("results", "1")
        .tool(Tool::raw(
            "raw",
            "",
            json!({"type":"object"}),
            move |_: Value| {
                let raw = RawResult(raw.clone());
                async move { raw }
            },
        ))
        .tool(Tool::raw(
            "bad",
            "",
            json!({"type":"object"}),
            |_: Value| async { RawResult(json!({"name":"Alice"})) },
        ))
        .build();
    let reply = ask(&server, call(1, "raw", json!({}))).await;
    assert_eq!(
        result(&reply),
        &json!({"content":[{"type":"text","text":"partial"}],"isError":true,"_meta":{"k":1}})
    );
    let reply = ask(&server, call(2, "bad", json!({}))).await;
    assert_eq!(result(&reply)["isError"], true);
    assert!(text(result(&reply)).contains("malformed result"), "{reply}");
}
