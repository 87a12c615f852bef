//! Our server driven by a client on the official TypeScript MCP SDK
//! (`tests/peers/ts_client.mjs` on @modelcontextprotocol/sdk 1.32.2, which
//! scripts/install-mcp-peers puts in `$PEERS_DIR/ts-sdk`), over stdio and
//! Streamable HTTP. The server is `support/interop_server.rs`. Checked,
//! as the SDK sees them:
//!
//! * only declared capabilities are used: a client without `sampling` is
//!   never sent `sampling/createMessage` (the tool's request fails naming
//!   the capability), and a tool can ask what the client supports;
//! * a tool call cancelled, or timed out, while its sampling request is
//!   outstanding withdraws that request (`notifications/cancelled`: the
//!   SDK aborts its handler's signal);
//! * a tool that reports progress outlives its timeout, up to its cap;
//! * a `Value` map is JSON text (and valid `structuredContent` under an
//!   output schema), a list of content parts is content;
//! * the result cap covers images;
//! * panicking resource, prompt and completion handlers are `-32603`
//!   errors, and the server goes on.
//!
//! Over stdio the SDK's `StdioClientTransport` starts the server itself:
//! the devtools program `interop-server`, which serves the same
//! `interop_server::server()` with `serve_stdio`. The test builds it first
//! (`peers::devtool`), so it is always the code under test, never a stale
//! build.

use std::path::Path;
use std::time::Duration;

use crate::support::{interop_server, peers, wire};
use claude_code_agent_mcp::http_server::StreamableHttpConfig;
use serde_json::{Value, json};
use wire::text;

/// Runs `ts_client.mjs` with `args`; its report.
async fn drive(dir: &Path, args: &[&str]) -> Value {
    peers::ts_script_report(dir, "ts_client.mjs", args, Duration::from_secs(120)).await
}

fn check_error(outcome: &Value, code: i64, mention: &str) {
    assert_eq!(outcome["error"]["code"], code, "{outcome}");
    let message = outcome["error"]["message"].as_str().unwrap();
    assert!(message.contains(mention), "{outcome}");
}

fn check(report: &Value) {
    let bare = &report["bare"];
    assert_eq!(
        serde_json::from_str::<Value>(&text(&bare["caps"])).unwrap(),
        json!({"declared":{},"sampling":false,"elicitation":false,"roots":false}),
        "{bare}"
    );
    let refused = text(&bare["sample"]);
    assert!(
        refused.starts_with("refused: the client did not declare the `sampling` capability"),
        "a client without sampling is not asked: {refused}"
    );

    let full = &report["full"];
    for tool in ["caps", "sample", "work", "map", "parts", "big_image"] {
        assert!(
            full["tools"].as_array().unwrap().contains(&json!(tool)),
            "{}",
            full["tools"]
        );
    }
    let caps: Value = serde_json::from_str(&text(&full["caps"])).unwrap();
    assert_eq!(
        caps,
        json!({"declared":{"sampling":{},"roots":{"listChanged":true}},
               "sampling":true,"elicitation":false,"roots":true})
    );
    assert_eq!(text(&full["sample"]), "answered: echo hi");

    // Withdrawn requests: the SDK aborted both held sampling handlers.
    assert!(full["cancelled_call"]["error"].is_object(), "{full}");
    assert_eq!(full["timed_out_call"]["result"]["isError"], true, "{full}");
    assert!(
        text(&full["timed_out_call"]).contains("timed out"),
        "{full}"
    );
    let held: Vec<&Value> = full["sampled"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["text"] == "hold")
        .collect();
    assert_eq!(held.len(), 2, "{}", full["sampled"]);
    for s in held {
        assert_eq!(s["withdrawn"], true, "never withdrawn: {s}");
        assert!(
            s["reason"].as_str().unwrap().contains("stopped waiting"),
            "{s}"
        );
    }

    // Progress keeps `work` alive past 300 ms, and the 2 s cap still stops it.
    assert_eq!(text(&full["work_long"]), "12 steps", "{full}");
    // Every report arrives, the last one too (see `ticks` below).
    assert_eq!(
        full["work_long_progress"],
        json!((1..=12).collect::<Vec<_>>()),
        "{full}"
    );
    assert!(full["work_long_ms"].as_u64().unwrap() >= 1200, "{full}");
    assert_eq!(full["work_forever"]["result"]["isError"], true, "{full}");
    assert!(text(&full["work_forever"]).contains("cap of 2s"), "{full}");
    let ms = full["work_forever_ms"].as_u64().unwrap();
    assert!((2000..5000).contains(&ms), "{ms} ms");

    // Every call saw all its progress reports: none was read in one chunk
    // with the answer (which the SDK would handle first).
    let ticks = full["ticks"].as_array().unwrap();
    assert_eq!(ticks.len(), 30, "{full}");
    let complete = ticks
        .iter()
        .filter(|t| t["seen"] == json!([1, 2, 3, 4, 5]))
        .count();
    assert_eq!(
        complete, 30,
        "calls with all 5 reports: {complete} of 30: {ticks:?}; the SDK's errors: {}",
        full["ticks_errors"]
    );
    assert!(ticks.iter().all(|t| t["answer"] == "5 steps"), "{ticks:?}");

    // A lone surrogate (an emoji cut in two) decodes to U+FFFD.
    assert_eq!(text(&full["cut_emoji"]), "ab\u{FFFD}", "{full}");

    // What handlers return.
    assert_eq!(
        serde_json::from_str::<Value>(&text(&full["map"])).unwrap(),
        json!({"name":"Alice","id":7})
    );
    assert_eq!(full["map"]["result"]["isError"], false, "{full}");
    assert!(full["map"]["result"].get("structuredContent").is_none());
    assert_eq!(
        full["map_structured"]["result"]["structuredContent"],
        json!({"count":3}),
        "{full}"
    );
    assert_eq!(
        full["parts"]["result"]["content"],
        json!([{"type":"text","text":"a chart"},
               {"type":"image","data":interop_server::IMAGE,"mimeType":"image/png"}])
    );

    // The cap covers the image.
    let big = &full["big_image"]["result"];
    let blocks = big["content"].as_array().unwrap();
    assert!(blocks.iter().all(|b| b["type"] != "image"), "{big}");
    let said = text(&full["big_image"]);
    assert!(said.starts_with("caption"), "{said}");
    assert!(
        said.contains("Output truncated") && said.contains("an image block"),
        "{said}"
    );
    assert!(
        big.to_string().len() < interop_server::BIG_IMAGE_CAP + 500,
        "{big}"
    );

    // Panicking handlers.
    check_error(&full["resource_boom"], -32603, "resource handler blew up");
    check_error(&full["prompt_boom"], -32603, "prompt handler blew up");
    check_error(&full["complete_boom"], -32603, "completion handler blew up");
    assert_eq!(
        full["resource_fine"]["result"]["contents"][0]["text"],
        "fine"
    );
    assert!(full["ping"]["result"].is_object(), "{full}");
}

#[tokio::test]
async fn ts_client_over_stdio() {
    let Some(dir) = peers::ts_sdk("ts_client_over_stdio") else {
        return;
    };
    // The SDK's StdioClientTransport starts the server: the devtools program
    // that serves `interop_server::server()` with `serve_stdio`, built now
    // from the code under test.
    let server = peers::devtool("interop-server");
    let report = drive(&dir, &["stdio", server.to_str().unwrap()]).await;
    check(&report);
}

#[tokio::test]
async fn ts_client_over_streamable_http() {
    let Some(dir) = peers::ts_sdk("ts_client_over_streamable_http") else {
        return;
    };
    let http = wire::Http::serve(interop_server::server(), StreamableHttpConfig::default()).await;
    let report = drive(&dir, &["http", &http.url]).await;
    check(&report);
}
