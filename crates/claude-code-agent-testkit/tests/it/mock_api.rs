//! The mock API on its own, through a minimal HTTP/1.1 client (no CLI needed).

use std::time::{Duration, Instant};

use claude_code_agent_testkit::mock_api::{Answer, Block, MockModel, RequestKind, Turn};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    /// `(event, data)` pairs of an SSE body.
    fn events(&self) -> Vec<(String, Value)> {
        self.body
            .split("\n\n")
            .filter(|f| !f.trim().is_empty())
            .map(|frame| {
                let mut event = String::new();
                let mut data = Value::Null;
                for line in frame.lines() {
                    if let Some(e) = line.strip_prefix("event: ") {
                        event = e.to_owned();
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data = serde_json::from_str(d).unwrap();
                    }
                }
                assert_eq!(data["type"], event.as_str(), "event name matches data.type");
                (event, data)
            })
            .collect()
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n").expect("chunk size line");
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
}

async fn http(mock: &MockModel, method: &str, path: &str, body: &str) -> Reply {
    let mut s = TcpStream::connect(mock.addr()).await.unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-api-key: sk-test\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn conversation(messages: Value) -> String {
    json!({"model": "claude-test", "max_tokens": 1000, "stream": true, "messages": messages,
           "tools": [{"name": "mcp__calc__add", "input_schema": {"type": "object"}}],
           "system": [{"type": "text", "text": "You are a test."}]})
    .to_string()
}

fn user(text: &str) -> Value {
    json!([{"role": "user", "content": text}])
}

/// Reassembles streamed content blocks from SSE events.
fn assemble(events: &[(String, Value)]) -> Vec<Value> {
    let mut blocks: Vec<Value> = Vec::new();
    let mut partial_json: Vec<String> = Vec::new();
    for (name, e) in events {
        match name.as_str() {
            "content_block_start" => {
                blocks.push(e["content_block"].clone());
                partial_json.push(String::new());
            }
            "content_block_delta" => {
                let i = e["index"].as_u64().unwrap() as usize;
                let d = &e["delta"];
                match d["type"].as_str().unwrap() {
                    "text_delta" => {
                        let t = blocks[i]["text"].as_str().unwrap().to_owned()
                            + d["text"].as_str().unwrap();
                        blocks[i]["text"] = t.into();
                    }
                    "thinking_delta" => {
                        let t = blocks[i]["thinking"].as_str().unwrap().to_owned()
                            + d["thinking"].as_str().unwrap();
                        blocks[i]["thinking"] = t.into();
                    }
                    "signature_delta" => blocks[i]["signature"] = d["signature"].clone(),
                    "input_json_delta" => {
                        partial_json[i].push_str(d["partial_json"].as_str().unwrap())
                    }
                    other => panic!("unexpected delta {other}"),
                }
            }
            "content_block_stop" => {
                let i = e["index"].as_u64().unwrap() as usize;
                if blocks[i]["type"] == "tool_use" {
                    blocks[i]["input"] = serde_json::from_str(&partial_json[i]).unwrap();
                }
            }
            _ => {}
        }
    }
    blocks
}

#[tokio::test]
async fn streams_a_full_reply_in_the_api_shape() {
    let mock = MockModel::builder()
        .turn(
            Turn::thinking("hmm, a sum")
                .with_text("Let me add these two numbers for you, one moment.")
                .with_tool_use("mcp__calc__add", json!({"a": 2, "b": 3, "note": "é✓"})),
        )
        .start()
        .await;
    let r = http(
        &mock,
        "POST",
        "/v1/messages?beta=true",
        &conversation(user("2+3?")),
    )
    .await;
    assert_eq!(r.status, 200);
    assert!(
        r.header("content-type")
            .unwrap()
            .starts_with("text/event-stream")
    );
    assert!(r.header("request-id").unwrap().starts_with("req_01"));
    let events = r.events();
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[..2], ["message_start", "ping"]);
    assert_eq!(names[names.len() - 2..], ["message_delta", "message_stop"]);
    let start = &events[0].1["message"];
    assert!(start["id"].as_str().unwrap().starts_with("msg_01"));
    assert_eq!(start["model"], "claude-test");
    assert_eq!(start["role"], "assistant");
    assert!(start["usage"]["input_tokens"].as_u64().unwrap() > 10);
    let delta = &events[events.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert!(delta["usage"]["output_tokens"].as_u64().unwrap() > 0);

    let blocks = assemble(&events);
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[0]["thinking"], "hmm, a sum");
    assert!(blocks[0]["signature"].as_str().unwrap().starts_with("sig_"));
    assert_eq!(
        blocks[1]["text"],
        "Let me add these two numbers for you, one moment."
    );
    assert_eq!(blocks[2]["name"], "mcp__calc__add");
    assert_eq!(blocks[2]["input"], json!({"a": 2, "b": 3, "note": "é✓"}));
    let id = blocks[2]["id"].as_str().unwrap();
    assert!(id.starts_with("toolu_01"));

    // the recording has the request and the full answer
    let rec = &mock.requests()[0];
    assert_eq!(rec.kind, RequestKind::Conversation);
    assert_eq!(rec.answer, Answer::Script(0));
    assert_eq!(rec.query.as_deref(), Some("beta=true"));
    assert_eq!(rec.header("x-api-key"), Some("sk-test"));
    assert_eq!(rec.tool_names(), vec!["mcp__calc__add"]);
    assert_eq!(rec.system_text(), "You are a test.");
    assert_eq!(rec.last_user_text().as_deref(), Some("2+3?"));
    assert_eq!(rec.answered_tool_uses()[0].0, id);
    assert_eq!(rec.response["content"][2]["input"]["b"], 3);
}

#[tokio::test]
async fn non_streaming_reply_is_a_json_message() {
    let mock = MockModel::builder()
        .classify(|_| RequestKind::Conversation)
        .turn(Turn::text("plain"))
        .start()
        .await;
    let body = json!({"model": "m", "max_tokens": 5, "messages": user("x")}).to_string();
    let r = http(&mock, "POST", "/v1/messages", &body).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let m = r.json();
    assert_eq!(m["type"], "message");
    assert_eq!(m["content"], json!([{"type": "text", "text": "plain"}]));
    assert_eq!(m["stop_reason"], "end_turn");
    assert_eq!(mock.remaining_turns(), 0);
}

#[tokio::test]
async fn side_calls_do_not_consume_the_script() {
    let mock = MockModel::builder()
        .turn(Turn::text("scripted"))
        .start()
        .await;
    // the CLI's model probe: non-streaming, max_tokens 1
    let probe =
        json!({"model": "claude-haiku-4-5", "max_tokens": 1, "messages": user("Hi")}).to_string();
    let r = http(&mock, "POST", "/v1/messages?beta=true", &probe).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["content"][0]["text"], "OK");
    // streaming with max_tokens 1 is a side call too
    let probe2 =
        json!({"model": "m", "max_tokens": 1, "stream": true, "messages": user("Hi")}).to_string();
    http(&mock, "POST", "/v1/messages", &probe2).await;
    assert_eq!(mock.side_requests().len(), 2);
    assert_eq!(mock.remaining_turns(), 1);
    let r = http(&mock, "POST", "/v1/messages", &conversation(user("go"))).await;
    assert_eq!(assemble(&r.events())[0]["text"], "scripted");
}

#[tokio::test]
async fn count_tokens_and_unknown_paths() {
    let mock = MockModel::builder().start().await;
    let body = json!({"model": "m", "messages": user(&"a".repeat(4000))}).to_string();
    let r = http(&mock, "POST", "/v1/messages/count_tokens?beta=true", &body).await;
    assert_eq!(r.status, 200);
    let n = r.json()["input_tokens"].as_u64().unwrap();
    assert_eq!(n, (body.len() as u64).div_ceil(4));

    let r = http(&mock, "GET", "/v1/models", "").await;
    assert_eq!(r.status, 404);
    let e = r.json();
    assert_eq!(e["type"], "error");
    assert_eq!(e["error"]["type"], "not_found_error");
    assert!(e["request_id"].as_str().unwrap().starts_with("req_"));

    let r = http(&mock, "GET", "/v1/messages", "").await;
    assert_eq!(r.status, 405);
    let r = http(&mock, "POST", "/v1/messages", "not json").await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["type"], "invalid_request_error");

    let kinds: Vec<RequestKind> = mock.requests().iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [
            RequestKind::CountTokens,
            RequestKind::Other,
            RequestKind::Other,
            RequestKind::Other
        ]
    );
    assert_eq!(mock.unexpected_requests()[0].path, "/v1/models");
}

#[tokio::test]
async fn api_errors_cover_retries_unless_once() {
    let mock = MockModel::builder()
        .turn(Turn::invalid_request("bad"))
        .turn(Turn::overloaded().once())
        .turn(Turn::text("after overload"))
        .start()
        .await;
    let first = conversation(user("one"));
    for _ in 0..3 {
        let r = http(&mock, "POST", "/v1/messages", &first).await;
        assert_eq!(r.status, 400);
        let e = r.json();
        assert_eq!(
            e["error"],
            json!({"type": "invalid_request_error", "message": "bad"})
        );
    }
    // a different request moves on
    let second = conversation(json!([
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "x"},
        {"role": "user", "content": [{"type": "text", "text": "two", "cache_control": {"type": "ephemeral"}}]}
    ]));
    let r = http(&mock, "POST", "/v1/messages", &second).await;
    assert_eq!(r.status, 529);
    assert_eq!(r.json()["error"]["type"], "overloaded_error");
    // the retry (same messages, cache_control moved) gets the next turn
    let retry = second.replace(r#","cache_control":{"type":"ephemeral"}"#, "");
    assert_ne!(retry, second);
    let r = http(&mock, "POST", "/v1/messages", &retry).await;
    assert_eq!(r.status, 200);
    assert_eq!(assemble(&r.events())[0]["text"], "after overload");
    let answers: Vec<Answer> = mock.requests().iter().map(|r| r.answer.clone()).collect();
    assert_eq!(
        answers,
        [
            Answer::Script(0),
            Answer::Retry(0),
            Answer::Retry(0),
            Answer::Script(1),
            Answer::Script(2)
        ]
    );
}

#[tokio::test]
async fn rate_limit_carries_retry_after_and_times_limits_the_error() {
    let mock = MockModel::builder()
        .turn(Turn::rate_limited().times(2))
        .turn(Turn::text("finally"))
        .start()
        .await;
    let body = conversation(user("x"));
    for _ in 0..2 {
        let r = http(&mock, "POST", "/v1/messages", &body).await;
        assert_eq!(r.status, 429);
        assert_eq!(r.header("retry-after"), Some("1"));
    }
    let r = http(&mock, "POST", "/v1/messages", &body).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn dynamic_turns_default_reply_and_fallback() {
    let mock = MockModel::builder()
        .turn(Turn::dynamic(|req| {
            let results = req.tool_results();
            Turn::text(format!(
                "{} result(s): {}",
                results.len(),
                results[0].text()
            ))
        }))
        .fallback(|req| Turn::text(format!("echo {}", req.last_user_text().unwrap_or_default())))
        .start()
        .await;
    let with_result = conversation(json!([
        {"role": "user", "content": "add"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "mcp__calc__add", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
            "content": [{"type": "text", "text": "sum=5"}], "is_error": false}]}
    ]));
    let r = http(&mock, "POST", "/v1/messages", &with_result).await;
    assert_eq!(assemble(&r.events())[0]["text"], "1 result(s): sum=5");
    assert_eq!(mock.tool_results()[0].tool_use_id, "toolu_1");
    assert_eq!(mock.tool_result("toolu_1").unwrap().text(), "sum=5");
    let r = http(&mock, "POST", "/v1/messages", &conversation(user("ping"))).await;
    assert_eq!(assemble(&r.events())[0]["text"], "echo ping");
    assert_eq!(mock.requests()[1].answer, Answer::Default);

    // the built-in default reply
    let plain = MockModel::builder().start().await;
    let r = http(&plain, "POST", "/v1/messages", &conversation(user("x"))).await;
    assert_eq!(assemble(&r.events())[0]["text"], "Done.");
}

/// CLIs before 2.1.314 end the request with a `system` message after the tool
/// results; the results are still those after the last assistant message, and
/// results of earlier rounds are not.
#[tokio::test]
async fn tool_results_are_those_after_the_last_assistant_message() {
    let mock = MockModel::builder()
        .turn(Turn::dynamic(|req| {
            let ids: Vec<String> = req
                .tool_results()
                .into_iter()
                .map(|r| r.tool_use_id)
                .collect();
            Turn::text(ids.join(","))
        }))
        .start()
        .await;
    let result = |id: &str| json!({"type": "tool_result", "tool_use_id": id, "content": [{"type": "text", "text": "ok"}]});
    let body = conversation(json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}]},
        {"role": "user", "content": [result("toolu_1")]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_2", "name": "t", "input": {}}]},
        {"role": "user", "content": [result("toolu_2")]},
        {"role": "system", "content": [{"type": "text", "text": "<total_tokens>14985193 tokens left</total_tokens>"}]}
    ]));
    let r = http(&mock, "POST", "/v1/messages", &body).await;
    assert_eq!(assemble(&r.events())[0]["text"], "toolu_2");
    assert_eq!(mock.requests()[0].all_tool_results().len(), 2);
}

#[tokio::test]
async fn panicking_responder_gives_a_500() {
    let mock = MockModel::builder()
        .turn(Turn::dynamic(|_| panic!("responder bug")))
        .start()
        .await;
    let r = http(&mock, "POST", "/v1/messages", &conversation(user("x"))).await;
    assert_eq!(r.status, 500);
    assert_eq!(r.json()["error"]["type"], "api_error");
}

#[tokio::test]
async fn raw_blocks_stop_reason_and_fixed_ids() {
    let mock = MockModel::builder()
        .turn(
            Turn::blocks([
                Block::raw(json!({"type": "redacted_thinking", "data": "opaque"})),
                Block::tool_use_with_id("toolu_fixed", "Bash", json!({"command": "ls"})),
            ])
            .with_stop_reason("max_tokens"),
        )
        .start()
        .await;
    let r = http(&mock, "POST", "/v1/messages", &conversation(user("x"))).await;
    let events = r.events();
    let blocks = assemble(&events);
    assert_eq!(
        blocks[0],
        json!({"type": "redacted_thinking", "data": "opaque"})
    );
    assert_eq!(blocks[1]["id"], "toolu_fixed");
    assert_eq!(
        events[events.len() - 2].1["delta"]["stop_reason"],
        "max_tokens"
    );
}

#[tokio::test]
async fn delay_event_interval_and_wait_for() {
    let mock = MockModel::builder()
        .turn(Turn::text("slow").delay(Duration::from_millis(300)))
        .turn(Turn::text("a b c d").event_interval(Duration::from_millis(60)))
        .start()
        .await;
    let t0 = Instant::now();
    let r = http(&mock, "POST", "/v1/messages", &conversation(user("x"))).await;
    assert!(t0.elapsed() >= Duration::from_millis(300));
    assert_eq!(assemble(&r.events())[0]["text"], "slow");

    let t0 = Instant::now();
    let r = http(&mock, "POST", "/v1/messages", &conversation(user("y"))).await;
    let n = r.events().len() as u32;
    assert!(
        t0.elapsed() >= Duration::from_millis(60) * (n - 1),
        "{:?}",
        t0.elapsed()
    );
    assert!(
        mock.wait_for_conversation_requests(2, Duration::from_millis(10))
            .await
    );
    assert!(
        !mock
            .wait_for_conversation_requests(3, Duration::from_millis(50))
            .await
    );
}

#[tokio::test]
async fn shutdown_ends_a_pending_delay_and_stops_serving() {
    let mock = MockModel::builder()
        .turn(Turn::text("never").delay(Duration::from_secs(60)))
        .start()
        .await;
    let addr = mock.addr();
    let body = conversation(user("x"));
    let pending = tokio::spawn(async move {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let req = format!(
            "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out).await;
        String::from_utf8_lossy(&out).into_owned()
    });
    assert!(
        mock.wait_for_conversation_requests(1, Duration::from_secs(5))
            .await
    );
    let t0 = Instant::now();
    drop(mock);
    let out = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .expect("pending request ended")
        .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert!(!out.contains("never"), "{out}");
    // the listener is gone
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn push_turn_while_running() {
    let mock = MockModel::builder().start().await;
    mock.push_turn(Turn::text("pushed"));
    assert_eq!(mock.remaining_turns(), 1);
    let r = http(&mock, "POST", "/v1/messages", &conversation(user("x"))).await;
    assert_eq!(assemble(&r.events())[0]["text"], "pushed");
    assert_eq!(
        mock.last_conversation_request().unwrap().answer,
        Answer::Script(0)
    );
}
