//! `tools/list`: every tool, declaration order, cursor pagination, the
//! derived schema's shape.

use crate::support::*;
use claude_code_agent_mcp::types::ToolAnnotations;
use claude_code_agent_mcp::{Server, Tool};
use serde_json::{Value, json};

fn numbered(n: usize) -> Vec<Tool> {
    (0..n)
        .map(|i| {
            Tool::new(format!("t{i}"), format!("tool {i}"), |_: Value| async {})
                .input_schema(json!({"type":"object"}))
        })
        .collect()
}

fn names(result: &Value) -> Vec<String> {
    result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn tools_are_listed_in_declaration_order() {
    // Names chosen so that neither alphabetical nor hash order matches.
    let order = ["zeta", "alpha", "mid", "beta", "omega"];
    let tools = order
        .iter()
        .map(|n| Tool::new(*n, "d", |_: Value| async {}).input_schema(json!({"type":"object"})));
    let server = Server::builder("s", "1").tools(tools).build();
    let reply = ask(&server, req(1, "tools/list", json!({}))).await;
    assert_eq!(names(result(&reply)), order);
    assert!(result(&reply).get("nextCursor").is_none());
    // Also without params at all.
    let reply = ask(
        &server,
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
    )
    .await;
    assert_eq!(names(result(&reply)), order);
}

#[tokio::test]
async fn default_page_holds_a_thousand_tools() {
    let server = Server::builder("s", "1").tools(numbered(1000)).build();
    let reply = ask(&server, req(1, "tools/list", json!({}))).await;
    assert_eq!(result(&reply)["tools"].as_array().unwrap().len(), 1000);
    assert!(result(&reply).get("nextCursor").is_none());
}

#[tokio::test]
async fn pagination_walks_every_tool_once_in_order() {
    let server = Server::builder("s", "1")
        .tools(numbered(7))
        .page_size(3)
        .build();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let reply = ask(&server, req(pages, "tools/list", params)).await;
        let r = result(&reply);
        let page = names(r);
        assert!(page.len() <= 3);
        seen.extend(page);
        pages += 1;
        match r.get("nextCursor") {
            Some(Value::String(next)) => cursor = Some(next.clone()),
            None => break,
            Some(other) => panic!("bad cursor {other}"),
        }
    }
    assert_eq!(pages, 3);
    let expected: Vec<String> = (0..7).map(|i| format!("t{i}")).collect();
    assert_eq!(seen, expected);
}

#[tokio::test]
async fn listing_carries_title_annotations_meta_and_output_schema() {
    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Out {
        n: i64,
    }
    let tool = Tool::new("big", "Big output", |_: Value| async {})
        .input_schema(json!({"type":"object","properties":{}}))
        .title("Big")
        .annotations(ToolAnnotations::new().read_only(true).open_world(false))
        .max_result_size_chars(500_000)
        .meta("x/y", "z")
        .output_schema::<Out>();
    let server = Server::builder("s", "1").tool(tool).build();
    let reply = ask(&server, req(1, "tools/list", json!({}))).await;
    let t = &result(&reply)["tools"][0];
    assert_eq!(t["title"], "Big");
    assert_eq!(t["description"], "Big output");
    assert_eq!(t["inputSchema"], json!({"type":"object","properties":{}}));
    assert_eq!(
        t["annotations"],
        json!({"readOnlyHint":true,"openWorldHint":false})
    );
    assert_eq!(
        t["_meta"],
        json!({"anthropic/maxResultSizeChars":500000,"x/y":"z"})
    );
    assert_eq!(t["outputSchema"]["type"], "object");
    assert_eq!(t["outputSchema"]["required"], json!(["n"]));
}

/// Arguments for the derived-schema test.
#[allow(dead_code)]
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Search {
    /// What to look for.
    query: String,
    /// Where to look.
    scope: Option<Scope>,
}

#[allow(dead_code)]
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Scope {
    /// Directories to search.
    dirs: Vec<String>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs;

#[tokio::test]
async fn derived_input_schema_is_inlined_object_without_noise() {
    let server = Server::builder("s", "1")
        .tool(Tool::new("search", "Search", |_: Search| async {}))
        .tool(Tool::new("now", "Time", |_: NoArgs| async { "12:00" }))
        .build();
    let reply = ask(&server, req(1, "tools/list", json!({}))).await;
    let tools = &result(&reply)["tools"];
    let schema = &tools[0]["inputSchema"];
    let text = schema.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$defs") && !text.contains("$schema"),
        "{text}"
    );
    assert_eq!(schema["type"], "object");
    assert!(schema.get("title").is_none(), "{schema}");
    assert_eq!(
        schema["properties"]["query"]["description"],
        "What to look for."
    );
    assert_eq!(schema["required"], json!(["query"]));
    assert!(text.contains("Directories to search."), "{text}");
    assert_eq!(
        tools[1]["inputSchema"],
        json!({"type":"object","properties":{}})
    );
}
