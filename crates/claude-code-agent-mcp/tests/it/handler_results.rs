//! What a handler takes and returns.
//!
//! Takes: its arguments as a type (the schema derived from it) or raw, as a
//! `serde_json::Value` or a `Map` (the schema given with `input_schema`),
//! with or without a `ToolContext`, as its signature says.
//!
//! Returns: a `Json` value is JSON-encoded text (and `structuredContent`
//! when the tool declares an output schema), even one that looks like a
//! result; a complete result is only taken as such with `RawResult` (or a
//! `CallToolResult`). A bare `Value` does not compile as a result (the
//! `compile_fail` example at `IntoToolResult`).
use crate::support::*;
use claude_code_agent_mcp::{Json, RawResult, Server, Tool, ToolContext};
use serde_json::{Map, Value, json};

/// A server whose `give` tool returns `Json(value)`, and whose
/// `give_structured` does too and declares an output schema.
fn server(value: Value) -> Server {
    let structured = value.clone();
    Server::builder("results", "1")
        .tool(Tool::new("give", "", move |_: ()| {
            let v = value.clone();
            async move { Json(v) }
        }))
        .tool(
            Tool::new("give_structured", "", move |_: ()| {
                let v = structured.clone();
                async move { Json(v) }
            })
            .output_schema_value(json!({"type":"object"})),
        )
        .build()
}

async fn give(value: Value, tool: &str) -> Value {
    let reply = ask(&server(value), call(1, tool, json!({}))).await;
    result(&reply).clone()
}

#[tokio::test]
async fn json_is_json_text_even_when_it_looks_like_a_result() {
    let r = give(json!({"name":"Alice","id":7}), "give").await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        serde_json::from_str::<Value>(&text(&r)).unwrap(),
        json!({"name":"Alice","id":7})
    );
    assert!(r.get("structuredContent").is_none(), "{r}");

    // Only RawResult says "take it as is".
    let looks_raw = json!({"content":[{"type":"text","text":"hi"}]});
    let r = give(looks_raw.clone(), "give").await;
    assert_eq!(serde_json::from_str::<Value>(&text(&r)).unwrap(), looks_raw);
}

#[tokio::test]
async fn json_from_a_tool_with_an_output_schema_is_also_structured_content() {
    let r = give(json!({"count":3}), "give_structured").await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"], json!({"count":3}));
    assert_eq!(text(&r), r#"{"count":3}"#);
}

#[tokio::test]
async fn json_of_any_value_is_its_json_text() {
    assert_eq!(text(&give(json!([1, 2]), "give").await), "[1,2]");
    assert_eq!(text(&give(json!("plain"), "give").await), r#""plain""#);
    assert_eq!(text(&give(json!(2.5), "give").await), "2.5");
    assert_eq!(text(&give(Value::Null, "give").await), "null");
}

/// A server whose `raw` tool returns `RawResult(value)`.
async fn raw(value: Value) -> Value {
    let server = Server::builder("results", "1")
        .tool(Tool::new("raw", "", move |_: ()| {
            let raw = RawResult(value.clone());
            async move { raw }
        }))
        .build();
    result(&ask(&server, call(1, "raw", json!({}))).await).clone()
}

#[tokio::test]
async fn raw_result_is_the_way_to_return_a_whole_result() {
    let whole =
        json!({"content":[{"type":"text","text":"partial"}],"isError":true,"_meta":{"k":1}});
    assert_eq!(raw(whole.clone()).await, whole);

    let parts = json!({"content": [
        {"type":"text","text":"a chart"},
        {"type":"image","data":"AAAA","mimeType":"image/png"},
        {"type":"text","text":42}
    ]});
    let r = raw(parts).await;
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
async fn a_malformed_raw_result_says_what_is_wrong() {
    let r = raw(json!({"name":"Alice"})).await;
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("malformed result"), "{r}");

    let r = raw(json!({"content":[{"type":"image","data":"AAAA"}]})).await;
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("content[0]"), "{r}");
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Pair {
    a: i64,
    b: i64,
}

async fn add_with_context(p: Pair, ctx: ToolContext) -> String {
    format!("{} from {}", p.a + p.b, ctx.tool_name())
}

fn takers() -> Server {
    let text_schema =
        json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]});
    Server::builder("takers", "1")
        .tool(Tool::new("value", "", |v: Value| async move { Json(v) }))
        .tool(Tool::new("map", "", |m: Map<String, Value>| async move {
            m.len()
        }))
        .tool(
            Tool::new("echo", "", |v: Value, ctx: ToolContext| async move {
                format!(
                    "{} in {}",
                    v["text"].as_str().unwrap_or("?"),
                    ctx.tool_name()
                )
            })
            .input_schema(text_schema),
        )
        .tool(Tool::new("add", "", add_with_context))
        .tool(
            // The schema allows a string `a`; `Pair` does not.
            Tool::new("loose", "", |p: Pair| async move { p.a + p.b })
                .input_schema(json!({"type":"object"})),
        )
        .build()
}

async fn take(tool: &str, arguments: Value) -> Value {
    result(&ask(&takers(), call(1, tool, arguments)).await).clone()
}

#[tokio::test]
async fn raw_arguments_arrive_as_sent_under_an_open_object_schema() {
    let args = json!({"x": [1, {"y": null}], "z": "w"});
    let r = take("value", args.clone()).await;
    assert_eq!(serde_json::from_str::<Value>(&text(&r)).unwrap(), args);
    assert_eq!(text(&take("map", json!({"a":1,"b":2,"c":3})).await), "3");

    let tools = result(&ask(&takers(), req(1, "tools/list", json!({}))).await).clone();
    let schema = |name: &str| {
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()["inputSchema"]
            .clone()
    };
    assert_eq!(schema("value"), json!({"type":"object","properties":{}}));
    assert_eq!(schema("map")["type"], "object");
    assert_eq!(schema("echo")["required"], json!(["text"]));
    assert_eq!(schema("add")["required"], json!(["a", "b"]));
    assert_eq!(schema("loose"), json!({"type":"object"}));
}

#[tokio::test]
async fn the_signature_says_whether_the_handler_gets_a_context() {
    assert_eq!(
        text(&take("echo", json!({"text":"hi"})).await),
        "hi in echo"
    );
    assert_eq!(text(&take("add", json!({"a":2,"b":3})).await), "5 from add");
}

#[tokio::test]
async fn input_schema_replaces_the_schema_arguments_are_checked_against() {
    let r = take("echo", json!({"text": 7})).await;
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        text(&r).starts_with("Invalid arguments for tool \"echo\""),
        "{r}"
    );

    // Allowed by the schema given, refused by the type.
    let r = take("loose", json!({"a":"one","b":2})).await;
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).starts_with("Invalid arguments:"), "{r}");
    assert_eq!(text(&take("loose", json!({"a":1,"b":2})).await), "3");
}
