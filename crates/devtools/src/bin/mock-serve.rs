//! Serves the testkit's `MockModel` scripted from a JSON file: the model side of the
//! transcript replay (`scripts/replay/replay.py`, run by `scripts/test-cli-range
//! --replay`).
//!
//! ```text
//! mock-serve TURNS.json
//! ```
//!
//! Prints the mock's URL on stdout, serves until its stdin closes, then prints every
//! request it got, one JSON line each (path, kind, model, the last message, …).
//!
//! TURNS.json: `[{"blocks": [<content block>…], "stop_reason": "end_turn"?,
//! "delay_ms": n?} | {"error": {"status": 529, "once": true?, "message": "…"?}} …]`.
//! `text`, `thinking` and `tool_use` blocks are streamed as such (tool-use ids kept);
//! any other block is sent raw.

use std::io::{BufRead, Write};
use std::time::Duration;

use claude_code_agent_testkit::mock_api::{Block, MockModel, Turn};
use serde_json::{Value, json};

fn turn_of(v: &Value) -> Turn {
    if let Some(err) = v.get("error") {
        let turn = match err["status"].as_u64().unwrap_or(500) {
            529 => Turn::overloaded(),
            400 => Turn::invalid_request(err["message"].as_str().unwrap_or("bad request")),
            429 => Turn::rate_limited(),
            _ => Turn::internal_error(),
        };
        return if err["once"].as_bool().unwrap_or(false) {
            turn.once()
        } else {
            turn
        };
    }
    let blocks = v["blocks"].as_array().cloned().unwrap_or_default();
    let mut turn = Turn::blocks(blocks.iter().map(|b| match b["type"].as_str() {
        Some("text") => Block::text(b["text"].as_str().unwrap_or("")),
        Some("tool_use") => Block::tool_use_with_id(
            b["id"].as_str().unwrap_or("toolu_x"),
            b["name"].as_str().unwrap_or(""),
            b["input"].clone(),
        ),
        Some("thinking") => Block::thinking(b["thinking"].as_str().unwrap_or("")),
        _ => Block::raw(b.clone()),
    }));
    if let Some(reason) = v["stop_reason"].as_str() {
        turn = turn.with_stop_reason(reason);
    }
    if let Some(ms) = v["delay_ms"].as_u64() {
        turn = turn.delay(Duration::from_millis(ms));
    }
    turn
}

/// At most `max` characters of `v`'s JSON text (kept as JSON when short enough).
fn abbreviated(v: &Value, max: usize) -> Value {
    let text = v.to_string();
    if text.len() > max {
        Value::String(text.chars().take(max).collect())
    } else {
        v.clone()
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: mock-serve TURNS.json");
        std::process::exit(2);
    };
    let turns: Vec<Value> = match std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(t) => t,
        Err(e) => {
            eprintln!("mock-serve: {path}: {e}");
            std::process::exit(2);
        }
    };
    let mock = MockModel::builder()
        .turns(turns.iter().map(turn_of))
        .start()
        .await;
    println!("{}", mock.url());
    let _ = std::io::stdout().flush();
    let _ = tokio::task::spawn_blocking(|| std::io::stdin().lock().lines().count()).await;
    for r in mock.requests() {
        let messages = r.body.get("messages").and_then(Value::as_array);
        let line = json!({
            "path": r.path, "query": r.query, "kind": format!("{:?}", r.kind),
            "answer": format!("{:?}", r.answer), "status": r.status,
            "stream": r.body.get("stream"), "max_tokens": r.body.get("max_tokens"),
            "model": r.body.get("model"),
            "n_messages": messages.map(Vec::len),
            "last_message": messages.and_then(|m| m.last()).map(|m| abbreviated(m, 1500)),
        });
        println!("{line}");
    }
    mock.shutdown();
}
