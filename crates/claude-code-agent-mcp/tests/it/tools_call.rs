//! `tools/call`: validation, handler results, panics, text as strings.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::*;
use claude_code_agent_mcp::{CallToolResult, Content, Json, RawResult, Server, Tool, ToolContext};
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: f64,
    b: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Div {
    a: f64,
    b: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Count {
    n: u32,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Stats {
    count: usize,
    mean: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Values {
    values: Vec<f64>,
}

fn server(calls: Arc<AtomicUsize>) -> Server {
    let counter = Arc::clone(&calls);
    Server::builder("calc", "1")
        .tool(Tool::new("add", "a+b", move |x: Add| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { x.a + x.b }
        }))
        .tool(Tool::new("divide", "a/b", |x: Div| async move {
            if x.b == 0.0 {
                Err("division by zero")
            } else {
                Ok(x.a / x.b)
            }
        }))
        .tool(Tool::new("count", "n", |c: Count| async move { c.n }))
        .tool(
            Tool::new("stats", "mean", |v: Values| async move {
                let count = v.values.len();
                Json(Stats {
                    count,
                    mean: v.values.iter().sum::<f64>() / count.max(1) as f64,
                })
            })
            .output_schema::<Stats>(),
        )
        .tool(Tool::new(
            "stats_plain",
            "mean, no schema",
            |v: Values| async move {
                Json(Stats {
                    count: v.values.len(),
                    mean: 0.0,
                })
            },
        ))
        .tool(Tool::new("nothing", "unit", |_: ()| async {}))
        .tool(
            Tool::new(
                "raw",
                "returns its arguments' \"result\" as the raw result",
                |args: Value| async move { RawResult(args["result"].clone()) },
            )
            .input_schema(json!({"type":"object"})),
        )
        .tool(
            Tool::new("panics", "boom", |_: Value| async move {
                if true {
                    panic!("kaboom {}", 42)
                }
            })
            .input_schema(json!({"type":"object"})),
        )
        .tool(Tool::new(
            "panics_sync",
            "boom before async",
            |_: (), _: ToolContext| {
                panic!("early");
                #[allow(unreachable_code)]
                async {}
            },
        ))
        .tool(Tool::new("blocks", "blocks", |_: ()| async {
            vec![
                Content::text("one"),
                Content::image("AAAA", "image/png"),
                Content::text("two"),
            ]
        }))
        .tool(
            Tool::new(
                "liar",
                "structured output that breaks its schema",
                |_: Value| async {
                    CallToolResult::text("x").with_structured_content(json!({"count":"many"}))
                },
            )
            .input_schema(json!({"type":"object"}))
            .output_schema::<Stats>(),
        )
        .tool(
            Tool::new(
                "forgetful",
                "declares an output schema, returns text",
                |_: Value| async { "no structure" },
            )
            .input_schema(json!({"type":"object"}))
            .output_schema::<Stats>(),
        )
        .build()
}

fn fresh() -> (Server, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    (server(Arc::clone(&calls)), calls)
}

#[tokio::test]
async fn typed_tool_gets_deserialized_arguments() {
    let (server, _) = fresh();
    let reply = ask(&server, call(2, "add", json!({"a":2,"b":3}))).await;
    assert_eq!(
        reply,
        json!({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"5"}],"isError":false}})
    );
}

#[tokio::test]
async fn invalid_arguments_are_an_error_result_naming_the_field_and_skip_the_handler() {
    let (server, calls) = fresh();
    let reply = ask(&server, call(1, "add", json!({"a":"not a number"}))).await;
    let r = result(&reply);
    assert_eq!(r["isError"], true);
    let t = text(r);
    assert!(
        t.contains("/a") && t.contains("not of type \"number\""),
        "{t}"
    );
    assert!(t.contains("\"b\" is a required property"), "{t}");
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the handler must not run");

    let reply = ask(&server, call(1, "count", json!({"n": -1}))).await;
    assert_eq!(result(&reply)["isError"], true);
    assert!(text(result(&reply)).contains("/n"), "{reply}");
}

#[tokio::test]
async fn missing_arguments_mean_an_empty_object() {
    let (server, _) = fresh();
    let reply = ask(&server, req(1, "tools/call", json!({"name":"nothing"}))).await;
    assert_eq!(result(&reply)["isError"], false, "{reply}");
    assert_eq!(result(&reply)["content"], json!([]));
    let reply = ask(
        &server,
        req(2, "tools/call", json!({"name":"nothing","arguments":null})),
    )
    .await;
    assert_eq!(result(&reply)["isError"], false, "{reply}");
    // For a tool with required fields, missing arguments fail validation.
    let reply = ask(&server, req(3, "tools/call", json!({"name":"add"}))).await;
    assert_eq!(result(&reply)["isError"], true);
}

#[tokio::test]
async fn err_result_becomes_is_error_with_its_text() {
    let (server, _) = fresh();
    let reply = ask(&server, call(1, "divide", json!({"a":1,"b":0}))).await;
    assert_eq!(result(&reply)["isError"], true);
    assert_eq!(text(result(&reply)), "division by zero");
    let reply = ask(&server, call(2, "divide", json!({"a":1,"b":4}))).await;
    assert_eq!(result(&reply)["isError"], false);
    assert_eq!(text(result(&reply)), "0.25");
}

#[tokio::test]
async fn json_with_output_schema_sends_structured_content() {
    let (server, _) = fresh();
    let reply = ask(&server, call(1, "stats", json!({"values":[1,2,3,6]}))).await;
    let r = result(&reply);
    assert_eq!(r["isError"], false);
    assert_eq!(r["structuredContent"], json!({"count":4,"mean":3.0}));
    let from_text: Value = serde_json::from_str(&text(r)).unwrap();
    assert_eq!(from_text, r["structuredContent"]);

    let reply = ask(&server, call(2, "stats_plain", json!({"values":[1]}))).await;
    let r = result(&reply);
    assert!(r.get("structuredContent").is_none(), "{r}");
    assert_eq!(text(r), r#"{"count":1,"mean":0.0}"#);
}

#[tokio::test]
async fn structured_content_must_match_the_output_schema() {
    let (server, _) = fresh();
    let reply = ask(&server, call(1, "liar", json!({}))).await;
    assert_eq!(result(&reply)["isError"], true);
    assert!(
        text(result(&reply)).contains("does not match its output schema"),
        "{reply}"
    );
    let reply = ask(&server, call(2, "forgetful", json!({}))).await;
    assert_eq!(result(&reply)["isError"], true);
    assert!(
        text(result(&reply)).contains("no structured content"),
        "{reply}"
    );
}

#[tokio::test]
async fn content_blocks_pass_through_in_order() {
    let (server, _) = fresh();
    let reply = ask(&server, call(1, "blocks", json!({}))).await;
    assert_eq!(
        result(&reply)["content"],
        json!([{"type":"text","text":"one"},{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":"two"}])
    );
}

#[tokio::test]
async fn text_is_always_a_json_string() {
    let (server, _) = fresh();
    let raw = json!({"content":[{"type":"text","text":42},{"type":"text","text":1.5},{"type":"text","text":true}]});
    let reply = ask(&server, call(1, "raw", json!({"result": raw}))).await;
    let r = result(&reply);
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        r["content"],
        json!([{"type":"text","text":"42"},{"type":"text","text":"1.5"},{"type":"text","text":"true"}])
    );
    // Typed handlers returning numbers too.
    let reply = ask(&server, call(2, "count", json!({"n": 7}))).await;
    assert_eq!(result(&reply)["content"][0]["text"], json!("7"));
}

#[tokio::test]
async fn raw_result_without_typed_content_array_is_an_error_result() {
    let (server, _) = fresh();
    for bad in [
        json!({}),
        json!({"content":"plain string"}),
        json!([1]),
        json!({"content":[{"no":"type"}]}),
        json!({"content":[],"isError":"yes"}),
    ] {
        let reply = ask(&server, call(1, "raw", json!({"result": bad.clone()}))).await;
        let r = result(&reply);
        assert_eq!(r["isError"], true, "{bad}");
        assert!(text(r).contains("malformed result"), "{bad}: {r}");
    }
    let good = json!({"content":[{"type":"text","text":"hi"}],"isError":true,"_meta":{"k":1}});
    let reply = ask(&server, call(2, "raw", json!({"result": good}))).await;
    assert_eq!(
        result(&reply),
        &json!({"content":[{"type":"text","text":"hi"}],"isError":true,"_meta":{"k":1}})
    );
}

#[tokio::test]
async fn a_panicking_handler_is_an_error_result_and_the_server_keeps_serving() {
    let (server, _) = fresh();
    let reply = ask(&server, call(1, "panics", json!({}))).await;
    assert_eq!(result(&reply)["isError"], true);
    assert!(text(result(&reply)).contains("kaboom 42"), "{reply}");
    let reply = ask(&server, call(2, "panics_sync", json!({}))).await;
    assert_eq!(result(&reply)["isError"], true);
    assert!(text(result(&reply)).contains("early"), "{reply}");
    let reply = ask(&server, call(3, "add", json!({"a":1,"b":1}))).await;
    assert_eq!(text(result(&reply)), "2");
}

/// A schema the built-in checker cannot honour is never ignored. Without
/// the `jsonschema` feature, building the tool logs an error naming the
/// keyword and where it is (a JSON pointer into the schema), and every call
/// gets that error back without reaching the handler; with the feature,
/// `jsonschema` checks the schema.
#[tokio::test]
async fn a_schema_beyond_the_built_in_checker_is_refused_naming_the_keyword_and_where() {
    let logs = logs::Logs::capture();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let tool = Tool::new("greet", "Greets by name", move |_: Value| {
        counter.fetch_add(1, Ordering::SeqCst);
        async { "hello" }
    })
    .input_schema(json!({"type":"object","properties":{
        "name":{"type":"string","pattern":"^\\p{L}+$"}}}));
    let logged_when_built = logs.text();
    let server = Server::builder("greeter", "1").tool(tool).build();
    let reply = ask(&server, call(1, "greet", json!({"name":"Zoë"}))).await;
    if cfg!(feature = "jsonschema") {
        assert_eq!(result(&reply)["isError"], false, "{reply}");
        let reply = ask(&server, call(2, "greet", json!({"name":"Zoë1"}))).await;
        assert_eq!(result(&reply)["isError"], true, "{reply}");
        assert!(text(result(&reply)).contains("at /name:"), "{reply}");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    } else {
        let refusal = "at /properties/name/pattern: the pattern \"^\\\\p{L}+$\" is beyond \
                       the built-in regular expressions";
        for said in ["ERROR", "needs the `jsonschema` feature", refusal] {
            assert!(
                logged_when_built.contains(said),
                "{said}: {logged_when_built}"
            );
        }
        assert_eq!(result(&reply)["isError"], true, "{reply}");
        let t = text(result(&reply));
        assert!(
            t.contains("needs the `jsonschema` feature") && t.contains(refusal),
            "{t}"
        );
        assert_eq!(calls.load(Ordering::SeqCst), 0, "the handler must not run");
    }
}
